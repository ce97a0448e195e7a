/*
 * main.c: chapter 8's experiment, `make lm-experiment`: the small GPT
 * (gpt.h) trained on the Brown corpus (corpus.h) with 1 to 16 heads at
 * the same size, and with query heads sharing fewer K/V heads (chapter
 * 6's grouped-query attention), each configuration tuned the same way,
 * and what its heads do (heads_lm.h).
 *
 *   lm-experiment [--size smoke|book|long|full] [--seeds N] [--workers W]
 *                 [--heads 1,2,4,8,16] [--lrs 7e-3,1.4e-2] [--kv 4,2,1|none]
 *                 [--tokens N] [--corpus FILE] [--impl NAME] [--sizes FILE]
 *                 [--data DIR] [--reference DIR] [--stop TOKENS]
 *                 RESULTS_DIR
 *   lm-experiment --roles CHECKPOINTS --lrs LR [...] RESULTS_DIR
 *   lm-experiment --remeasure RUN_DIR [--weights DIR] [--size ...] RESULTS_DIR
 *   lm-experiment --pack RUN_DIR [--size ...] OUT_DIR
 *   lm-experiment --resume [...] RESULTS_DIR
 *   lm-experiment --parsed RUN_DIR [--links FILE] [--size ...] RESULTS_DIR
 *   lm-experiment --explore-dump WEIGHTS_FILE [--size ...] OUT.json
 *   lm-experiment --find-head REL --weights DIR [--heads N] [--links FILE]
 *                 [--size ...]
 *
 * --resume keeps the networks an earlier run into the same RESULTS_DIR
 * finished with the same settings, and trains only the others
 * (resume.c); --remeasure RUN_DIR measures the heads of every final
 * network of a finished run (remeasure.c), with --weights DIR from its
 * networks in 16-bit floats (weights16.c), which --pack RUN_DIR writes
 * into OUT_DIR; --roles, roles as they appear (roles.c); --parsed
 * RUN_DIR scores the heads of a finished run's seed-1 networks on the
 * parser's relations (parsed.c: links from --links FILE, default
 * build/ch8/links.tsv), writing parsed.csv; --explore-dump runs one
 * kept network on the head explorer's inputs (explore.c); --find-head REL measures
 * one network of --weights DIR on relation REL with the code it was
 * built with, the student's under make find-head (findhead.c).
 *
 * --stop TOKENS (with --lrs) trains the tuning networks of the rates
 * given on their whole run's schedule but stops each after TOKENS
 * tokens, and writes their validation curves so far (curves_tuning.dat)
 * and baselines.csv, nothing else: the first points of a long run,
 * which tools/runs/lm/curves_compare.sh sets beside a reference's.
 *
 * The configurations: every head count of the size (its own K/V per
 * head), then sz.gqa_h query heads reading each K/V head count of
 * sz.kv (gpt_kv_share()). The protocol, the same for every configuration:
 *   1. tuning: seed 1 (RUN_FIRST_SEED) is trained at every learning rate
 *      of the grid (sz.lr[sz.lr_lo .. sz.lr_hi]), with the same token
 *      budget and the same batches; then, while the best rate so far is
 *      the lowest or the highest the configuration has tried, at the
 *      next rate beyond it on the ladder sz.lr (half or twice the rate),
 *      until the best has a worse rate on each side or is the ladder's
 *      end; the rate with the lowest validation loss (on seed 1 alone) is
 *      chosen;
 *   2. the chosen rate is trained on seeds 2 .. N as well (seed 1's
 *      network is the tuning run's own, saved and reloaded, not trained
 *      again), and every one of those networks is scored once on the
 *      test set;
 *   3. every final network's heads are summed up (seed_heads.csv), and
 *      seed 1's network of every head count is measured on validation
 *      text: each head's offset profile, its relation scores beside the
 *      best fixed offset, mean ablation per tag class, its weights on
 *      the lesson's sentence, and a few generated lines.
 * Seed s draws the same batches for every configuration, so networks
 * of one seed differ only in their heads and learning rate.
 *
 * Written into RESULTS_DIR (every file through a temporary file and a
 * rename, so an interrupted run leaves the previous ones whole):
 *   tuning.csv        one row per tuning network: its validation loss
 *   results.csv       one row per final network: validation and test loss
 *   table.txt         the tables printed
 *   curves.dat        validation loss against tokens seen, mean and sd
 *                     over seeds, one column pair per configuration
 *   curves_tuning.dat the same for every (configuration, rate), seed 1
 *   offsets.csv       every head's offset profile and Voita's criterion
 *   relations.csv     every head's relation scores, baseline, margin
 *   ablation.csv      every head's loss increase per tag class
 *   ablation_hH.dat   the same as a head x class table, for gnuplot
 *   sentence/sentence_hH_lL_iI.dat  each head's weights on the sentence
 *   sentence/ablation_hH.dat  the sentence's loss at each predicted word,
 *                     and its increase with each head mean-ablated
 *   tag_profiles.csv  every head's weight from each tag class to each
 *   tag_baselines.csv the same for a uniform head and fixed offsets
 *   row_max.csv       every measured head's mean heaviest weight
 *   generated.txt     the generated lines
 *   compare.txt       with --reference: this run beside REF's results
 *   seed_heads.csv    every final network's heads summed up (all seeds)
 *   models/hH_gG_lrK.bin the tuning networks' parameters, and
 *   models/hH_gG_lrK_sS.bin the other seeds' final networks'
 * With --data DIR, also the book's values and plot data (book.c,
 * write_book_data()): no Markdown and no gnuplot script, which
 * tools/runs/plotdata/ch8_tables.c makes from these files when the book
 * is built. Tables go to stdout; progress, wall times and
 * peak memory to stderr.
 *
 * The protocol itself is the course's (lm_protocol.h: lm_train(),
 * lm_eval_loss(), lm_best_rate()), and so are the heads' measures
 * (heads_lm.h); this file keeps the options, the loop over
 * configurations, rates and seeds, and the files out. Its parts
 * (lm.h): one network (network.c), the corpus's windows and the
 * baselines (setup.c), the heads' files (write.c), the tables and the
 * book's values (book.c), saving and resuming
 * (resume.c), --roles (roles.c), --remeasure (remeasure.c), the sizes
 * (sizes.c, and their widths, depths, contexts, batches and budgets in
 * sizes.tsv, or --sizes FILE). Dimension letters: as lm.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------
 * main: the options, the configurations, the loop over rates and seeds
 * ------------------------------------------------------------------- */

/* The options; returns RESULTS_DIR (NULL with --find-head alone). */
static const char *parse_options(struct run *run, int argc, char **argv,
                                 struct lm_opts *o)
{
    const struct run_opt opt[] = {
        {"--roles", "CHECKPOINTS", NULL, &o->roles, 1, MAX_CKPT},
        {"--stop", "STOP", NULL, &o->stop, 1, 100000000},
        {"--size", "SIZE", &o->size, NULL, 0, 0},
        {"--heads", "HEADS", &o->heads, NULL, 0, 0},
        {"--lrs", "LRS", &o->lrs, NULL, 0, 0},
        {"--kv", "KV", &o->kv, NULL, 0, 0},
        {"--data", "DATA_DIR", &o->data, NULL, 0, 0},
        {"--reference", "REF_DIR", &o->ref, NULL, 0, 0},
        {"--tokens", "TOKENS", NULL, &o->tokens, 1, 100000000},
        {"--sizes", "SIZES", &o->sizes, NULL, 0, 0},
        {"--corpus", "CORPUS", &o->corpus, NULL, 0, 0},
        {"--impl", "IMPL", &o->impl, NULL, 0, 0},
        {"--remeasure", "RUN_DIR", &o->remeasure, NULL, 0, 0},
        {"--weights", "WEIGHTS_DIR", &o->weights, NULL, 0, 0},
        {"--pack", "RUN_DIR", &o->pack, NULL, 0, 0},
        {"--resume", NULL, NULL, &o->resume, 0, 0},
        {"--parsed", "RUN_DIR", &o->parsed, NULL, 0, 0},
        {"--links", "LINKS", &o->links, NULL, 0, 0},
        {"--explore-dump", "WEIGHTS_FILE", &o->explore, NULL, 0, 0},
        {"--find-head", "REL", &o->find_head, NULL, 0, 0}};
    const char *dir = argv[run_args(run, argc, argv, opt, 20, 0, 1)];
    if (!dir && !o->find_head) /* --find-head alone writes nothing */
        run_usage(run);
    return dir;
}

/* 1. tuning on seed 1: the grid, then, for every configuration whose
 *    best rate is the lowest or the highest it has tried, the next rate
 *    of the ladder beyond it (lm_next_rate()), until its best rate has
 *    a tried rate on each side or is the ladder's end; tune (H x n_lr),
 *    and the rates chosen into lm->chosen */
static void tune_rates(struct run *run, struct lm *lm, struct result *tune,
                       const struct run_jobs *jobs)
{
    const int H = lm->n_cfg, n_lr = lm->sz.n_lr;
    struct result *batch = run_calloc(run, H * n_lr, sizeof *batch);
    lm->phase = 1;
    run->seeds = 1;
    int n_jobs = 0, lo, hi;
    for (int hc = 0; hc < H; hc++)
        for (int i = lm->sz.lr_lo; i <= lm->sz.lr_hi; i++)
            lm->job_hc[n_jobs] = hc, lm->job_lr[n_jobs++] = i;
    fprintf(stderr, PROG ": tuning (the learning rate, on seed %llu)\n",
            RUN_FIRST_SEED);
    for (int round = 0; n_jobs > 0; round++) {
        if (round > 0)
            fprintf(stderr,
                    PROG ": %d configuration%s chose the lowest or highest "
                         "rate tried: one rate further\n",
                    n_jobs, n_jobs > 1 ? "s" : "");
        memset(batch, 0, (size_t)n_jobs * sizeof *batch);
        run_jobs(run, n_jobs, jobs, batch);
        for (int k = 0; k < n_jobs; k++)
            tune[lm->job_hc[k] * n_lr + lm->job_lr[k]] = batch[k];
        n_jobs = 0;
        for (int hc = 0; hc < H; hc++) {
            const int next =
                lm_next_rate(best_rate(lm, tune, hc, &lo, &hi), lo, hi, n_lr);
            if (next >= 0)
                lm->job_hc[n_jobs] = hc, lm->job_lr[n_jobs++] = next;
        }
    }
    free(batch);
    for (int hc = 0; hc < H; hc++)
        lm->chosen[hc] = best_rate(lm, tune, hc, &lo, &hi);
}

/* 2. the chosen rates over seeds, scored once on the test set: fin
 *    (H x S); seed 1's curve is its tuning run's */
static void final_networks(struct run *run, struct lm *lm,
                           const struct result *tune, struct result *fin,
                           const struct run_jobs *jobs)
{
    const int H = lm->n_cfg, S = lm->sz.seeds, n_lr = lm->sz.n_lr;
    lm->phase = 2;
    run->seeds = S;
    fprintf(stderr,
            PROG ": the chosen rates over %d seeds, then the test set\n", S);
    run_jobs(run, H, jobs, fin);
    for (int hc = 0; hc < H; hc++) {
        struct result *f = &fin[hc * S];
        const struct result *t = &tune[hc * n_lr + lm->chosen[hc]];
        f->n_points = t->n_points, f->val_loss = t->val_loss;
        f->train_s = t->train_s;
        memcpy(f->curve_tokens, t->curve_tokens, sizeof f->curve_tokens);
        memcpy(f->val_curve, t->val_curve, sizeof f->val_curve);
    }
}

/* tuning.csv and results.csv */
static void write_runs(const struct run *run, const struct lm *lm,
                       const char *dir, const char *impl,
                       const struct result *tune, const struct result *fin)
{
    const int n_lr = lm->sz.n_lr;
    static const struct run_col tcol[] = {
        {"heads", 0},  {"kv_heads", 0}, {"lr", 6},       {"seed", 0},
        {"params", 0}, {"tokens", 0},   {"val_loss", 5}, {"chosen", 0}};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "tuning.csv", "impl", tcol, 8);
    for (int k = 0; k < lm->n_cfg * n_lr; k++) {
        const struct result *r = &tune[k];
        if (!r->trained)
            continue;
        const double v[8] = {r->heads,    r->kv_heads,
                             r->lr,       (double)RUN_FIRST_SEED,
                             r->n_params, r->tokens,
                             r->val_loss, lm->chosen[k / n_lr] == k % n_lr};
        run_csv_row(&csv, impl, v);
    }
    run_csv_close(&csv);
    static const struct run_col rcol[] = {
        {"heads", 0},    {"kv_heads", 0}, {"lr", 6},       {"seed", 0},
        {"params", 0},   {"tokens", 0},   {"val_loss", 5}, {"test_loss", 5},
        {"test_ppl", 3}, {"train_s", 1},  {"peak_mb", 1}};
    run_csv_open(&csv, run, dir, "results.csv", "impl", rcol, 11);
    for (int k = 0; k < lm->n_cfg * lm->sz.seeds; k++) {
        const struct result *r = &fin[k];
        const double v[11] = {r->heads,
                              r->kv_heads,
                              r->lr,
                              (double)(RUN_FIRST_SEED + r->seed_index),
                              r->n_params,
                              r->tokens,
                              r->val_loss,
                              r->test_loss,
                              exp(r->test_loss),
                              r->train_s,
                              r->peak_kb / 1024.0};
        run_csv_row(&csv, impl, v);
    }
    run_csv_close(&csv);
}

/* every file of the run's networks but the tables; meas: the measured
 * ones (seed 1 of each head count); returns their number */
static int write_files(const struct run *run, const struct lm *lm,
                       const char *dir, const char *impl,
                       const struct result *tune, const struct result *fin,
                       const struct result **meas)
{
    write_runs(run, lm, dir, impl, tune, fin);
    write_baselines(run, lm, dir);
    write_curves(lm, dir, fin);
    write_tuning_curves(lm, dir, tune);
    write_seed_heads(run, lm, dir, fin);
    return write_measured(run, lm, dir, fin, meas);
}

int main(int argc, char **argv)
{
    struct run run = {
        .prog = PROG,
        .usage =
            "[--size smoke|book|long|full] [--seeds N] [--workers W] "
            "[--heads 1,2,4,8,16] [--lrs 1.5e-3,3e-3,6e-3] [--kv 4,2,1|none] "
            "[--data DIR] [--reference DIR] "
            "[--tokens N] [--corpus FILE] [--impl NAME] [--sizes FILE] "
            "[--stop TOKENS] [--remeasure RUN_DIR [--weights DIR]] "
            "[--pack RUN_DIR] [--resume] [--parsed RUN_DIR] [--links FILE] "
            "[--explore-dump WEIGHTS_FILE] RESULTS_DIR|OUT.json | "
            "--find-head REL --weights DIR [--heads N]",
        .hint = "make test CH=8 shows where",
        .seeds = 0};
    struct lm_opts opt = {
        .size = "book", .corpus = "build/ch8/brown.bin", .impl = "solutions"};
    const char *dir = parse_options(&run, argc, argv, &opt);
    const char *impl = opt.impl, *ref_arg = opt.ref, *data_arg = opt.data;
    const char *links = opt.links ? opt.links : "build/ch8/links.tsv";
    struct lm lm = {0};
    size_options(&run, &opt, &lm);
    struct corpus_data d; /* the corpus */
    char err[CORPUS_ERR_LEN];
    if (corpus_load(&d, opt.corpus, err) != KIT_OK)
        run_fail(&run, 1, "cannot read the corpus: %s%s", err,
                 strstr(err, "make corpus")
                     ? ""
                     : "; run make corpus again (make deps installs the "
                       "Brown corpus it reads)");
    lm.d = &d;
    configurations(&run, opt.kv, &lm);
    if (opt.pack) { /* a finished run's final networks in 16 bits */
        pack_main(&run, &lm, dir, opt.pack);
        lm_free(&lm, &d);
        return 0;
    }
    float *want = opt.remeasure ? remeasure_want(&run, &lm, opt.remeasure)
                                : NULL; /* the run's test losses */
    lm_setup(&run, &lm, &d);
    if (opt.explore) { /* one kept network on the explorer's inputs */
        explore_main(&run, &lm, opt.explore, dir);
        lm_free(&lm, &d);
        return 0;
    }
    if (opt.find_head) /* one network's heads on one relation */
        findhead_main(&run, &lm, opt.find_head, impl, links);
    else if (opt.parsed) /* a finished run's heads on the parser's relations */
        parsed_main(&run, &lm, dir, opt.parsed, links);
    if (opt.find_head || opt.parsed) {
        lm_free(&lm, &d);
        return 0;
    }
    baselines_run(&run, &lm);
    long cores = sysconf(_SC_NPROCESSORS_ONLN); /* workers x threads */
    if (cores < 1)
        cores = 1;
    if (opt.roles) /* --roles P: the long networks, measured as they train */
        roles_main(&run, &lm, dir, opt.roles, argc, argv, cores);
    else if (opt.remeasure) /* every final network of a finished run */
        remeasure_main(&run, &lm, dir, opt.remeasure, want, argc, argv, cores);
    if (opt.roles || opt.remeasure) {
        lm_free(&lm, &d);
        return 0;
    }
    const int H = lm.n_cfg, S = lm.sz.seeds, n_lr = lm.sz.n_lr;
    run_start(&run, &lm, dir, cores);
    const double t0 = run_now();
    struct result *tune = run_calloc(&run, H * n_lr, sizeof *tune);
    struct run_jobs jobs = {sizeof(struct result), network_run, network_name,
                            network_score,         &lm,         NULL};
    tune_rates(&run, &lm, tune, &jobs);
    if (lm.stop) {
        write_stopped(&run, &lm, dir, tune, t0);
        free(tune);
        lm_free(&lm, &d);
        return 0;
    }
    struct result *fin = run_calloc(&run, H * S, sizeof *fin);
    final_networks(&run, &lm, tune, fin, &jobs);
    const double wall = run_now() - t0;
    const int best_hc = best_many(&lm, fin);
    const struct result *meas[MAX_HC];
    const int n_meas = write_files(&run, &lm, dir, impl, tune, fin, meas);
    struct out o;
    FILE *g = out_open(&o, dir, "generated.txt");
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < N_GEN; k++) {
            fprintf(g, "%d heads: ", meas[q]->heads);
            print_words(g, &d, meas[q]->gen[k], lm.n_prompt[k] + LM_GEN_NEW);
            fprintf(g, "\n");
        }
    for (int k = 0; k < N_GEN; k++) { /* the same prompts, the trigram */
        fprintf(g, "trigram: ");
        print_words(g, &d, lm.base_gen[k], lm.n_prompt[k] + LM_GEN_NEW);
        fprintf(g, "\n");
    }
    out_close(&o);
    FILE *tab = out_open(&o, dir, "table.txt");
    print_tables(tab, &lm, impl, tune, fin, meas, n_meas, best_hc);
    out_close(&o);
    print_tables(stdout, &lm, impl, tune, fin, meas, n_meas, best_hc);
    if (ref_arg) {
        FILE *cmp = out_open(&o, dir, "compare.txt");
        compare_reference(cmp, &lm, fin, ref_arg);
        out_close(&o);
        compare_reference(stdout, &lm, fin, ref_arg);
    }

    long peak = 0;
    for (int k = 0; k < H * S; k++)
        peak = fin[k].peak_kb > peak ? fin[k].peak_kb : peak;
    for (int k = 0; k < H * n_lr; k++)
        peak = tune[k].peak_kb > peak ? tune[k].peak_kb : peak;
    if (data_arg) {
        make_dir(&run, data_arg);
        write_book_data(impl, &lm, data_arg, tune, fin, meas, n_meas, best_hc,
                        wall, peak);
    }
    summary(&lm, dir, tune, fin, wall, peak);
    free(tune), free(fin);
    lm_free(&lm, &d);
    return 0;
}
