/*
 * remeasure.c: the final networks of a finished run (lm.h), read again.
 *
 * --remeasure RUN_DIR measures the heads of every final network of a
 * finished run (every configuration, every seed, at the rates its
 * tuning.csv chose): seed 1's networks are reloaded from RUN_DIR/models,
 * the other seeds' too where a run kept them, and trained again
 * otherwise (the same batches, so the same networks: their test losses
 * must match RUN_DIR/results.csv within 0.002 nats, or it fails). It
 * writes seed_heads.csv and seed_heads.values, nothing else.
 *
 * --remeasure RUN_DIR --weights DIR reads every one of those networks
 * from DIR's 16-bit files instead (weights16.c: hH_gG_sSEED.f16), trains
 * none, and measures seed 1's network of every head count as the run
 * did: besides seed_heads.csv, it writes offsets.csv, relations.csv,
 * ablation.csv (and ablation_hH.dat), tag_profiles.csv, row_max.csv and
 * sentence/, for make lm-weights-check to set beside the run's own.
 * Every file of DIR is checked before anything is measured: a missing
 * or damaged one ends the program with one line.
 *
 * --pack RUN_DIR writes those 16-bit files: every final network of the
 * run, from RUN_DIR/models (the rates its tuning.csv chose), into
 * RESULTS_DIR/hH_gG_sSEED.f16, names that do not depend on the rate's
 * place on the ladder, and a line for each into RESULTS_DIR/manifest.md.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The chosen rate of every configuration, from FROM's tuning.csv, into
 * lm->chosen (an index of the size's ladder); a configuration without
 * one ends the program. opt: the option that asked, for the messages. */
void read_chosen(const struct run *run, struct lm *lm, const char *from,
                 const char *opt)
{
    for (int hc = 0; hc < lm->n_cfg; hc++)
        lm->chosen[hc] = -1;
    char path[1100], line[512];
    snprintf(path, sizeof path, "%s/tuning.csv", from);
    FILE *f = fopen(path, "r");
    if (!f)
        run_fail(run, 1, "%s: cannot read %s (a finished run's)", opt, path);
    char why[128];
    for (int row = 0; fgets(line, sizeof line, f); row++) {
        int h, g, chosen;
        long tokens;
        double lr;
        if (row == 0)
            continue; /* the header */
        if (!run_read_row(why, sizeof why, line, "*iif**l*i", &h, &g, &lr,
                          &tokens, &chosen))
            run_fail(run, 1, "%s: %s, line %d: %s", opt, path, row + 1, why);
        if (!chosen)
            continue; /* a rate not chosen */
        if (tokens != lm->sz.tokens)
            run_fail(run, 1,
                     "%s: %s trained %d tokens a network, this "
                     "size %d: give the run's --size",
                     opt, path, (int)tokens, lm->sz.tokens);
        for (int hc = 0; hc < lm->n_cfg; hc++)
            for (int i = 0; i < lm->sz.n_lr; i++)
                if (lm->cfg_h[hc] == h && lm->cfg_g[hc] == g &&
                    fabs(lm->sz.lr[i] - lr) < 1e-3 * lr)
                    lm->chosen[hc] = i;
    }
    fclose(f);
    char name[64];
    for (int hc = 0; hc < lm->n_cfg; hc++)
        if (lm->chosen[hc] < 0) {
            cfg_label(lm, hc, name, sizeof name);
            run_fail(run, 1,
                     "%s: %s chose no rate of this size's ladder "
                     "for %s",
                     opt, path, name);
        }
}

/* --remeasure RUN: the chosen rates (read_chosen()); and each final
 * network's test loss, from RUN's results.csv, into want (H x S); a
 * missing one ends the program */
static void remeasure_read(const struct run *run, struct lm *lm,
                           const char *from, float *want)
{
    const int S = lm->sz.seeds;
    for (int k = 0; k < lm->n_cfg * S; k++)
        want[k] = -1;
    read_chosen(run, lm, from, "--remeasure");
    char path[1100], line[512], why[128], name[64];
    FILE *f;
    snprintf(path, sizeof path, "%s/results.csv", from);
    if (!(f = fopen(path, "r")))
        run_fail(run, 1, "--remeasure: cannot read %s", path);
    for (int row = 0; fgets(line, sizeof line, f); row++) {
        int h, g;
        long seed;
        double test;
        if (row == 0)
            continue; /* the header */
        if (!run_read_row(why, sizeof why, line, "*ii*l***f+", &h, &g, &seed,
                          &test))
            run_fail(run, 1, "--remeasure: %s, line %d: %s", path, row + 1,
                     why);
        const long s = seed - (long)RUN_FIRST_SEED;
        for (int hc = 0; hc < lm->n_cfg; hc++)
            if (lm->cfg_h[hc] == h && lm->cfg_g[hc] == g && s >= 0 && s < S)
                want[hc * S + s] = (float)test;
    }
    fclose(f);
    for (int k = 0; k < lm->n_cfg * S; k++)
        if (want[k] < 0) {
            cfg_label(lm, k / S, name, sizeof name);
            run_fail(run, 1,
                     "--remeasure: %s has no test loss for %s, seed %llu: "
                     "give the run's --seeds",
                     path, name, RUN_FIRST_SEED + (unsigned long long)(k % S));
        }
}

static double remeasure_cost(int k, void *ctx)
{
    const struct lm *lm = ctx;
    int hc, li, s;
    job_of(lm, k, &hc, &li, &s);
    /* seed 1's network is reloaded; the others are trained unless kept
     * (--weights: all read, seed 1's of a head count measured) */
    if (lm->weights_dir)
        return (s == 0 ? 1.0 : 0.2) * (8 + lm->cfg_h[hc]);
    return (s == 0 ? 0.05 : 1.0) * (8 + lm->cfg_h[hc]);
}

/* the rate of configuration hc (lm->chosen), and seed s's number */
static float chosen_lr(const struct lm *lm, int hc)
{
    return lm->sz.lr[lm->chosen[hc]];
}

static unsigned long long seed_of(int s)
{
    return RUN_FIRST_SEED + (unsigned long long)s;
}

/* configuration hc's network of seed s, as gpt_init() draws it, into m,
 * ready to read its parameters into; opt names the option that asked */
static void final_init(const struct run *run, const struct lm *lm, int hc,
                       int s, struct gpt_model *m, const char *opt)
{
    const struct gpt_config cfg = model_config(lm, lm->cfg_h[hc]);
    if (gpt_init(m, &cfg, seed_of(s)) != KIT_OK)
        run_fail(run, 1, "%s: out of memory", opt);
}

/* --weights DIR: every final network's 16-bit file there, read whole
 * and checked against the network it must be (its sizes, K/V heads,
 * seed and rate); the first that is not ends the program with one line */
static void weights_check(const struct run *run, const struct lm *lm)
{
    char path[1100], why[1400];
    for (int hc = 0; hc < lm->n_cfg; hc++)
        for (int s = 0; s < lm->sz.seeds; s++) {
            const int h = lm->cfg_h[hc], g = lm->cfg_g[hc];
            struct gpt_model m;
            final_init(run, lm, hc, s, &m, "--weights");
            weights16_path(lm->weights_dir, h, g, seed_of(s), path,
                           sizeof path);
            struct params16_head hd;
            int rc = read_params16(path, &hd, NULL, 0, why, sizeof why);
            if (rc == KIT_OK && (hd.kv_heads != g || hd.seed != seed_of(s) ||
                                 hd.lr != chosen_lr(lm, hc)))
                rc = KIT_E_INPUT,
                snprintf(why, sizeof why,
                         "%s: its header names %d K/V heads, seed %llu, lr "
                         "%g, not %d, %llu, %g",
                         path, hd.kv_heads, hd.seed, (double)hd.lr, g,
                         seed_of(s), (double)chosen_lr(lm, hc));
            if (rc == KIT_OK)
                rc = load_params(&m, path, why, sizeof why);
            gpt_free(&m);
            if (rc != KIT_OK)
                run_fail(run, 1, "--weights: %s", why);
        }
}

/* --remeasure FROM: want (the run's test losses, H x S), from FROM's
 * results.csv, and lm->chosen from its tuning.csv; with --weights, its
 * files checked (weights_check()) */
float *remeasure_want(const struct run *run, struct lm *lm, const char *from)
{
    float *want = run_calloc(run, lm->n_cfg * lm->sz.seeds, sizeof *want);
    remeasure_read(run, lm, from, want);
    if (lm->weights_dir)
        weights_check(run, lm);
    return want;
}

/* --remeasure FROM: every final network of FROM measured again, checked
 * against want; seed_heads.csv and seed_heads.values into dir */
void remeasure_main(struct run *run, struct lm *lm, const char *dir,
                    const char *from, float *want, int argc, char **argv,
                    long cores)
{
    const int H = lm->n_cfg, S = lm->sz.seeds;
    char models[512];
    snprintf(models, sizeof models, "%s/models", from);
    lm->models_dir = models;
    make_dir(run, dir);
    const int busy = run->workers < H * S ? run->workers : H * S;
    lm->threads = (int)(cores / busy) > 1 ? (int)(cores / busy) : 1;
    lm->phase = 3;
    run->seeds = S;
    struct result *fin = run_calloc(run, H * S, sizeof *fin);
    struct run_jobs rj = {sizeof *fin,   network_run, network_name,
                          network_score, lm,          remeasure_cost};
    const double t0 = run_now();
    run_jobs(run, H, &rj, fin);
    const double wall = run_now() - t0;
    double worst = 0;
    printf("Remeasured: %s's %d final networks (the rates its tuning "
           "chose)%s%s, test loss then and now:\n",
           from, H * S, lm->weights_dir ? ", from the 16-bit files of " : "",
           lm->weights_dir ? lm->weights_dir : "");
    for (int k = 0; k < H * S; k++) {
        char name[64];
        cfg_label(lm, k / S, name, sizeof name);
        const double d = fabs(fin[k].test_loss - want[k]);
        worst = d > worst ? d : worst;
        printf("  %-30s seed %llu: %.5f, now %.5f\n", name,
               RUN_FIRST_SEED + (unsigned long long)(k % S), (double)want[k],
               (double)fin[k].test_loss);
    }
    write_seed_heads(run, lm, dir, fin);
    if (lm->weights_dir) { /* seed 1's networks of each head count */
        const struct result *meas[MAX_CFG];
        write_measured(run, lm, dir, fin, meas);
    }
    struct out o;
    FILE *v = out_open(&o, dir, "seed_heads.values");
    fprintf(v, "# lm-experiment --remeasure: what produced seed_heads.csv\n"
               "ch8seeds.command=lm-experiment");
    for (int i = 1; i < argc; i++)
        fprintf(v, " %s", argv[i]);
    fprintf(v,
            "\nch8seeds.wall_min=%.1f\nch8seeds.workers=%d\n"
            "ch8seeds.max_test_diff=%.5f\n",
            wall / 60, busy, worst);
    out_close(&o);
    printf("Wall time %.1f min; the largest test-loss difference from "
           "the run's is %.5f nats.\n(written: %s/seed_heads.csv, "
           "seed_heads.values%s)\n",
           wall / 60, worst, dir,
           lm->weights_dir ? ", offsets.csv, relations.csv, ablation.csv, "
                             "tag_profiles.csv, row_max.csv, sentence/"
                           : "");
    if (worst > 0.002)
        run_fail(run, 1,
                 "the networks %s differ from %s's by %.4f "
                 "nats in test loss (more than 0.002): they are not the "
                 "run's networks, and their heads are not its heads",
                 lm->weights_dir ? "read from --weights" : "trained again",
                 from, worst);
    free(fin), free(want);
}

/* --pack FROM: every final network of FROM (lm->chosen from its
 * tuning.csv; seed 1's is the tuning network, the others' its
 * models/hH_gG_lrK_sS.bin) in 16-bit floats, DIR/hH_gG_sSEED.f16, read
 * back and checked; DIR/manifest.md, a line for each */
void pack_main(struct run *run, struct lm *lm, const char *dir,
               const char *from)
{
    static char models[1100];
    snprintf(models, sizeof models, "%s/models", from);
    lm->models_dir = models;
    read_chosen(run, lm, from, "--pack");
    make_dir(run, dir);
    struct out o;
    FILE *mf = out_open(&o, dir, "manifest.md");
    fprintf(mf, "| file | heads | K/V heads | lr | seed | parameters | "
                "bytes | largest rounding |\n"
                "|---|---|---|---|---|---|---|---|\n");
    char src[1100], out[1100], why[1400];
    double worst_rel = 0;
    for (int hc = 0; hc < lm->n_cfg; hc++)
        for (int s = 0; s < lm->sz.seeds; s++) {
            const int h = lm->cfg_h[hc], g = lm->cfg_g[hc];
            struct gpt_model m;
            final_init(run, lm, hc, s, &m, "--pack");
            if (s == 0)
                model_path(lm, h, g, lm->chosen[hc], src, sizeof src);
            else
                seed_path(lm, h, g, lm->chosen[hc], s, src, sizeof src);
            weights16_path(dir, h, g, seed_of(s), out, sizeof out);
            if (load_params(&m, src, why, sizeof why) != KIT_OK)
                run_fail(run, 1, "--pack: %s", why);
            if (!kv_copies_equal(&m, g))
                run_fail(run, 1,
                         "--pack: %s: %d heads on %d K/V heads, but its "
                         "K/V columns are not their group's copies",
                         src, h, g);
            /* whole (half = 0): with 16-bit embeddings, single relation
             * cases moved (weights16.c) */
            if (save_params16(&m, g, seed_of(s), chosen_lr(lm, hc), 0, out, why,
                              sizeof why) != KIT_OK)
                run_fail(run, 1, "--pack: %s", why);
            /* read back: every parameter its nearest 16-bit value */
            struct params16_head hd;
            float *back = run_calloc(run, m.n_params, sizeof *back);
            if (read_params16(out, &hd, back, m.n_params, why, sizeof why) !=
                KIT_OK)
                run_fail(run, 1, "--pack: reading it back: %s", why);
            double worst = 0, big = 0;
            for (int i = 0; i < m.n_params; i++) {
                uint16_t b;
                f16_from_float(m.params[i], &b);
                const float kept =
                    i < hd.n_half ? f16_to_float(b) : m.params[i];
                if (kept != back[i])
                    run_fail(run, 1,
                             "--pack: %s: parameter %d read back as %g, not "
                             "%g",
                             out, i, (double)back[i], (double)kept);
                const double d = fabs((double)m.params[i] - back[i]);
                worst = d > worst ? d : worst;
                big = fabs(m.params[i]) > big ? fabs(m.params[i]) : big;
                if (fabs(m.params[i]) >= 0x1p-14)
                    worst_rel = fmax(worst_rel, d / fabs(m.params[i]));
            }
            free(back);
            struct stat st;
            const long bytes = stat(out, &st) == 0 ? (long)st.st_size : -1;
            const char *name = strrchr(out, '/') + 1;
            fprintf(mf, "| %s | %d | %d | %g | %llu | %d | %ld | %.2g |\n",
                    name, h, g, (double)chosen_lr(lm, hc), seed_of(s),
                    m.n_params, bytes, worst);
            printf("%s: %s, %d parameters, %ld bytes; the largest "
                   "rounding %.2g (the largest weight %.3g)\n",
                   out, src, m.n_params, bytes, worst, big);
            gpt_free(&m);
        }
    out_close(&o);
    printf("Packed %d networks of %s into %s (manifest.md); the largest "
           "relative rounding of a normal value %.2g (2^-11 = %.2g at "
           "most).\n",
           lm->n_cfg * lm->sz.seeds, from, dir, worst_rel, 0x1p-11);
}
