/*
 * sizes.c: the sizes of chapter 8's experiment, what --size picks (lm.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

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
     .tokens = 2048,
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
     .tokens = 131072,
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
     .tokens = 8388608,
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
     .tokens = 8388608,
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

/* The size, then the options over it, into lm. */
void size_options(struct run *run, const struct lm_opts *o, struct lm *lm)
{
    const struct size *z = size_find(o->size);
    if (!z)
        run_fail(run, 2, "SIZE must be smoke, book, long or full, not '%s'",
                 o->size);
    lm->sz = *z;
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
        if (LM_C % lm->sz.heads[i] != 0)
            run_fail(run, 2,
                     "%d heads cannot split d_model = %d: a head count must "
                     "divide %d (HEADS=%s)",
                     lm->sz.heads[i], LM_C, LM_C, o->heads);
}
