/*
 * sizes.c: the sizes of chapter 8's experiment, what --size picks (lm.h):
 * a size's width, depth, context, batch and token budget are its row of
 * sizes.tsv (LM_SIZES, or --sizes FILE), read when the run starts and
 * checked against the driver's maxima (MAX_L, MAX_T); its protocol (the
 * seeds, head counts, rates and evaluation sets) is its entry here.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"
#include "sizes_tsv.h"

#include <stdlib.h>
#include <string.h>

static const struct size sizes[] = {
    {.name = "smoke",
     .seeds = 2,
     .n_heads = 2,
     .heads = {1, 4},
     .n_lr = 4,
     .lr = {1e-3f, 3e-3f, 1e-2f, 3e-2f},
     .lr_lo = 1,
     .lr_hi = 2,
     .gqa_h = 4,
     .n_kv = 1,
     .kv = {1},
     .points = 2,
     .n_val = 8,
     .n_test = 8,
     .n_meas = 8,
     .n_abl = 4},
    {.name = "book",
     .seeds = 3,
     .n_heads = 3,
     .heads = {1, 4, 16},
     .n_lr = 6,
     .lr = {1.75e-3f, 3.5e-3f, 7e-3f, 1.4e-2f, 2.8e-2f, 5.6e-2f},
     .lr_lo = 2,
     .lr_hi = 3,
     .gqa_h = 4,
     .n_kv = 1,
     .kv = {1},
     .points = 8,
     .n_val = 64,
     .n_test = 128,
     .n_meas = 64,
     .n_abl = 24},
    {.name = "long", /* the reference run the book prints */
     .seeds = 3,
     .n_heads = 3,
     .heads = {1, 4, 16},
     .n_lr = 6,
     .lr = {1.75e-3f, 3.5e-3f, 7e-3f, 1.4e-2f, 2.8e-2f, 5.6e-2f},
     .lr_lo = 1,
     .lr_hi = 2,
     .gqa_h = 4,
     .n_kv = 1,
     .kv = {1},
     .points = 16,
     .n_val = 128,
     .n_test = 512,
     .n_meas = 128,
     .n_abl = 48},
    {.name = "full", /* the long run's budget, every head count */
     .seeds = 3,
     .n_heads = 5,
     .heads = {1, 2, 4, 8, 16},
     .n_lr = 6,
     .lr = {1.75e-3f, 3.5e-3f, 7e-3f, 1.4e-2f, 2.8e-2f, 5.6e-2f},
     .lr_lo = 1,
     .lr_hi = 2,
     .gqa_h = 8,
     .n_kv = 3,
     .kv = {4, 2, 1},
     .points = 16,
     .n_val = 128,
     .n_test = 512,
     .n_meas = 128,
     .n_abl = 48},
};

const struct size *size_find(const char *name)
{
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        if (strcmp(sizes[z].name, name) == 0)
            return &sizes[z];
    return NULL;
}

/* The table of sizes (path): every row within the driver's maxima and
 * with its protocol here; the one named name into lm->sz. */
static void size_row(struct run *run, const char *path, const char *name,
                     struct lm *lm)
{
    static struct size_row rows[SIZES_TSV_MAX];
    char why[600], names[400] = "";
    const int n = sizes_tsv_read(path, rows, why, sizeof why);
    if (n == 0)
        run_fail(run, 1, "the table of sizes: %s", why);
    for (int k = 0; k < n; k++) {
        const struct size_row *z = &rows[k];
        if (z->L > MAX_L || z->T > MAX_T)
            run_fail(run, 1,
                     "%s: size %s has %d blocks and a context of %d tokens; "
                     "the driver holds at most %d blocks (MAX_L) and %d "
                     "tokens (MAX_T): raise them in tools/runs/lm/lm.h",
                     path, z->name, z->L, z->T, MAX_L, MAX_T);
        if (z->T <= LM_K || z->tokens < z->B * z->T)
            run_fail(run, 1,
                     "%s: size %s: its context must be over %d tokens (the "
                     "offsets measured) and its budget at least one batch, "
                     "%d x %d tokens",
                     path, z->name, LM_K, z->B, z->T);
        if (!size_find(z->name))
            run_fail(run, 1,
                     "%s: size %s has no protocol (seeds, heads, rates) in "
                     "tools/runs/lm/sizes.c",
                     path, z->name);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%.31s",
                 k == 0       ? ""
                 : k == n - 1 ? " or "
                              : ", ",
                 z->name);
    }
    const struct size_row *z = sizes_tsv_find(rows, n, name);
    const struct size *p = size_find(name);
    if (!z || !p)
        run_fail(run, 2, "SIZE must be %s (%s), not '%s'", names, path, name);
    lm->sz = *p;
    lm->sz.C = z->C, lm->sz.L = z->L, lm->sz.T = z->T, lm->sz.B = z->B;
    lm->sz.tokens = z->tokens;
}

/* The size, then the options over it, into lm. */
void size_options(struct run *run, const struct lm_opts *o, struct lm *lm)
{
    size_row(run, o->sizes ? o->sizes : LM_SIZES, o->size, lm);
    const struct size *z = &lm->sz;
    if (o->tokens && o->tokens < z->B * z->T)
        run_fail(run, 2, "--tokens %d is under one batch, %d x %d tokens",
                 o->tokens, z->B, z->T);
    if (o->stop && o->stop < z->B * z->T)
        run_fail(run, 2, "--stop %d is under one batch, %d x %d tokens",
                 o->stop, z->B, z->T);
    if (run->seeds)
        lm->sz.seeds = run->seeds;
    run->seeds = lm->sz.seeds;
    if (o->heads)
        lm->sz.n_heads = run_parse_ints(run, "HEADS", o->heads, lm->sz.heads,
                                        MAX_HC, 1, MAX_H);
    if (o->lrs) { /* every rate listed is tried: no further ones */
        lm->sz.n_lr = parse_lrs(run, o->lrs, lm->sz.lr);
        lm->sz.lr_lo = 0, lm->sz.lr_hi = lm->sz.n_lr - 1;
    }
    if (o->tokens)
        lm->sz.tokens = o->tokens;
    if (o->roles && (lm->sz.n_lr != 1 || !o->lrs))
        run_fail(run, 2, "--roles trains at one rate: give it as --lrs");
    if (o->stop && !o->roles && !o->lrs)
        run_fail(run, 2,
                 "--stop trains the rates it is given and no others: give "
                 "them as --lrs");
    if (o->weights && !o->remeasure && !o->parsed && !o->find_head)
        run_fail(run, 2,
                 "--weights DIR reads the networks of the run --remeasure "
                 "or --parsed RUN_DIR names, or the one --find-head REL "
                 "measures: give both");
    if (o->pack && (o->remeasure || o->roles || o->resume))
        run_fail(run, 2,
                 "--pack is alone: not with --remeasure, --roles "
                 "or --resume");
    if (o->explore &&
        (o->remeasure || o->roles || o->stop || o->lrs || o->data || o->ref ||
         o->pack || o->weights || o->parsed || o->resume))
        run_fail(run, 2,
                 "--explore-dump WEIGHTS_FILE OUT.json is alone: give it the "
                 "network's --size and --corpus only");
    if (o->pack || o->weights || o->explore) { /* the 16-bit conversion */
        char why[200];
        const int rc = f16_selftest(why, sizeof why);
        if (rc != KIT_OK)
            run_fail(run, 1, "%s", why);
        if (!o->find_head) /* its output is its own lines alone */
            fprintf(stderr, PROG ": %s\n", why);
    }
    lm->weights_dir = o->weights;
    if (o->parsed && (o->remeasure || o->roles || o->stop || o->lrs ||
                      o->data || o->ref || o->pack))
        run_fail(run, 2,
                 "--parsed reads a finished run's networks: give it the "
                 "run's --size, --heads, --kv, --seeds and --corpus only "
                 "(and --weights DIR to read them from their kept files)");
    if (o->remeasure && (o->roles || o->stop || o->lrs || o->data || o->ref))
        run_fail(run, 2,
                 "--remeasure reads a finished run's rates and networks: "
                 "give it the run's --size, --heads, --kv, --seeds and "
                 "--corpus only");
    if (o->remeasure && strlen(o->remeasure) > 400)
        run_fail(run, 2, "RUN_DIR is too long (%zu characters)",
                 strlen(o->remeasure));
    if (o->stop && o->stop > lm->sz.tokens)
        run_fail(run, 2, "--stop %d is past the run's %d tokens", o->stop,
                 lm->sz.tokens);
    lm->stop = o->stop;
    lm->resume = o->resume;
    for (int i = 0; i < lm->sz.n_heads; i++)
        if (lm->sz.C % lm->sz.heads[i] != 0)
            run_fail(run, 2,
                     "%d heads cannot split d_model = %d: a head count must "
                     "divide %d (HEADS=%s)",
                     lm->sz.heads[i], lm->sz.C, lm->sz.C, o->heads);
    if (o->find_head) { /* its relation and its file, before the corpus */
        if (o->remeasure || o->roles || o->stop || o->lrs || o->data ||
            o->ref || o->pack || o->parsed || o->resume || !o->weights)
            run_fail(run, 2,
                     "--find-head REL reads one network from --weights DIR "
                     "and trains none: give it --weights and the weights' "
                     "--size, --heads and --corpus only");
        findhead_relation(run, o->find_head);
        char path[1100];
        findhead_path(run, lm, path, sizeof path);
    }
}
