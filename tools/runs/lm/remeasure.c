/*
 * remeasure.c: --remeasure RUN_DIR (lm.h) measures the heads of every
 * final network of a finished run (every configuration, every seed, at
 * the rates its tuning.csv chose): seed 1's networks are reloaded from RUN_DIR/models, the other seeds' too
 * where a run kept them, and trained again otherwise (the same batches,
 * so the same networks: their test losses must match
 * RUN_DIR/results.csv within 0.002 nats, or it fails). It writes
 * seed_heads.csv and seed_heads.values, nothing else.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <math.h>
#include <stdlib.h>

/* --remeasure RUN: the chosen rate of every configuration, from RUN's
 * tuning.csv, into lm->chosen; and each final network's test loss, from
 * RUN's results.csv, into want (H x S); a missing one ends the program */
static void remeasure_read(const struct run *run, struct lm *lm,
                           const char *from, float *want)
{
    const int S = lm->sz.seeds;
    for (int k = 0; k < lm->n_cfg * S; k++)
        want[k] = -1;
    for (int hc = 0; hc < lm->n_cfg; hc++)
        lm->chosen[hc] = -1;
    char path[1100], line[512];
    snprintf(path, sizeof path, "%s/tuning.csv", from);
    FILE *f = fopen(path, "r");
    if (!f)
        run_fail(run, 1, "--remeasure: cannot read %s (a finished run's)",
                 path);
    char why[128];
    for (int row = 0; fgets(line, sizeof line, f); row++) {
        int h, g, chosen;
        long tokens;
        double lr;
        if (row == 0)
            continue; /* the header */
        if (!run_read_row(why, sizeof why, line, "*iif**l*i", &h, &g, &lr,
                          &tokens, &chosen))
            run_fail(run, 1, "--remeasure: %s, line %d: %s", path, row + 1,
                     why);
        if (!chosen)
            continue; /* a rate not chosen */
        if (tokens != lm->sz.tokens)
            run_fail(run, 1,
                     "--remeasure: %s trained %d tokens a network, this "
                     "size %d: give the run's --size",
                     path, (int)tokens, lm->sz.tokens);
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
                     "--remeasure: %s chose no rate of this size's ladder "
                     "for %s",
                     path, name);
        }
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
    /* seed 1's network is reloaded; the others are trained unless kept */
    return (s == 0 ? 0.05 : 1.0) * (8 + lm->cfg_h[hc]);
}

/* --remeasure FROM: want (the run's test losses, H x S), from FROM's
 * results.csv, and lm->chosen from its tuning.csv */
float *remeasure_want(const struct run *run, struct lm *lm, const char *from)
{
    float *want = run_calloc(run, lm->n_cfg * lm->sz.seeds, sizeof *want);
    remeasure_read(run, lm, from, want);
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
           "chose), test loss then and now:\n",
           from, H * S);
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
           "seed_heads.values)\n",
           wall / 60, worst, dir);
    if (worst > 0.002)
        run_fail(run, 1,
                 "the networks trained again differ from %s's by %.4f "
                 "nats in test loss (more than 0.002): they are not the "
                 "run's networks, and their heads are not its heads",
                 from, worst);
    free(fin), free(want);
}
