/*
 * book.c: what lm-experiment (main.c) prints and writes for the book
 * from its networks: the tables it prints (print_tables(), table.txt),
 * the run beside a reference (compare_reference(), compare.txt), the
 * heads' mean heaviest weights (row_max.csv), and with --data DIR the
 * values and plot data the chapter reads (write_book_data()). It writes
 * no Markdown and no gnuplot script: chapter 8's tables and settings
 * are made from these files and the run's CSV files at book-build time
 * by tools/runs/plotdata/ch8_tables.c, so that a heading changes there
 * without a run.
 *
 * Its four entry points are declared in lm.h; the rest is its own.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the token ids of gen as words: "the jury said ..." */
void print_words(FILE *f, const struct corpus_data *d, const int *ids, int n)
{
    for (int t = 0; t < n; t++)
        fprintf(f, "%s%s", t ? " " : "", d->vocab[ids[t]]);
}

/* ---------------------------------------------------------------------
 * The tables
 * ------------------------------------------------------------------- */

/* table.txt, the protocol and the head-count table, with the n-gram
 * models */
static void print_heads_table(FILE *f, const struct lm *lm, const char *impl,
                              const struct result *tune,
                              const struct result *fin, int best_hc)
{
    const int S = lm->sz.seeds, H = lm->n_cfg, n_lr = lm->sz.n_lr;
    fprintf(f,
            "Chapter 8 (%s, size %s): V %d, d_model %d, %d blocks, context "
            "%d, batch %d x %d tokens; %d parameters for every head count.\n"
            "Each network saw %d tokens (%d steps). Learning rate chosen per "
            "head count by the validation loss of seed %llu (%d windows of %d "
            "tokens)\nfrom the grid {",
            impl, lm->sz.name, lm->d->V, lm->sz.C, lm->sz.L, lm->sz.T, lm->sz.B,
            lm->sz.T, fin[0].n_params, fin[0].tokens, fin[0].steps,
            RUN_FIRST_SEED, lm->val.n, lm->sz.T);
    for (int i = lm->sz.lr_lo; i <= lm->sz.lr_hi; i++)
        fprintf(f, "%s%g", i > lm->sz.lr_lo ? ", " : "", (double)lm->sz.lr[i]);
    fprintf(f, "}, then one rate further along {");
    for (int i = 0; i < n_lr; i++)
        fprintf(f, "%s%g", i ? ", " : "", (double)lm->sz.lr[i]);
    fprintf(f,
            "} while the best was the lowest or highest tried (- : not "
            "tried);\nthe chosen rate then trained on %d seeds and scored "
            "once on the test set (%d windows, %d tokens).\n\n",
            S, lm->test.n, lm->test.n * lm->sz.T);
    fprintf(f, "%-8s %8s", "heads", "d_head");
    for (int i = 0; i < n_lr; i++)
        if (rate_used(lm, tune, i))
            fprintf(f, "  val@%-8g", (double)lm->sz.lr[i]);
    fprintf(f, " %9s %20s %18s %8s\n", "chosen", "test loss (nats)",
            "perplexity", "params");
    for (int hc = 0; hc < H; hc++) {
        if (lm->cfg_g[hc] != lm->cfg_h[hc])
            continue; /* the K/V table's */
        fprintf(f, "%-8d %8d", lm->cfg_h[hc], lm->sz.C / lm->cfg_h[hc]);
        for (int i = 0; i < n_lr; i++) {
            const struct result *t = &tune[hc * n_lr + i];
            if (t->trained)
                fprintf(f, "  %12.3f", (double)t->val_loss);
            else if (rate_used(lm, tune, i))
                fprintf(f, "  %12s", "-");
        }
        struct run_sum loss = {0}, ppl = {0};
        for (int s = 0; s < S; s++) {
            run_sum_add(&loss, fin[hc * S + s].test_loss);
            run_sum_add(&ppl, exp(fin[hc * S + s].test_loss));
        }
        struct run_stats a = run_sum_stats(&loss), b = run_sum_stats(&ppl);
        fprintf(f, " %9g %11.3f +- %5.3f %10.1f +- %5.1f %8d\n",
                (double)lm->sz.lr[lm->chosen[hc]], a.mean, a.sd, b.mean, b.sd,
                fin[hc * S].n_params);
    }
    fprintf(f,
            "(test loss and perplexity: mean +- sd over seeds %llu..%llu; "
            "the best many-head count by mean validation loss: %d)\n",
            RUN_FIRST_SEED, RUN_FIRST_SEED + S - 1,
            best_hc >= 0 ? lm->cfg_h[best_hc] : 0);
    fprintf(f,
            "\nThe n-gram baselines (interpolated modified Kneser-Ney, "
            "estimated on all %ld training tokens,\nscored on the same "
            "windows):\n%-8s %12s %20s %18s\n",
            lm->base[0].train_tokens, "model", "validation", "test loss (nats)",
            "perplexity");
    for (int k = 0; k < NGRAM_MAX_ORDER; k++)
        fprintf(f, "%-8s %12.3f %20.3f %18.1f\n", ngram_name[k],
                lm->base[k].val, lm->base[k].test, exp(lm->base[k].test));
}

/* table.txt: K/V sharing, sz.gqa_h query heads, its own row among the
 * head counts included */
static void print_kv_table(FILE *f, const struct lm *lm,
                           const struct result *fin)
{
    const int S = lm->sz.seeds, H = lm->n_cfg;
    if (lm->sz.n_kv > 0) {
        fprintf(f,
                "\nK/V sharing (chapter 6's grouped-query attention): %d "
                "query heads reading g K/V heads, tuned and scored the "
                "same way:\n",
                lm->sz.gqa_h);
        fprintf(f, "%-8s %9s %20s %18s %8s %16s\n", "K/V", "chosen",
                "test loss (nats)", "perplexity", "params",
                "cache bytes/token");
        for (int hc = 0; hc < H; hc++) {
            if (lm->cfg_h[hc] != lm->sz.gqa_h)
                continue;
            struct run_sum loss = {0}, ppl = {0};
            for (int s = 0; s < S; s++) {
                run_sum_add(&loss, fin[hc * S + s].test_loss);
                run_sum_add(&ppl, exp(fin[hc * S + s].test_loss));
            }
            struct run_stats a = run_sum_stats(&loss), b = run_sum_stats(&ppl);
            /* K and V, g heads of d_head floats, in every block */
            const int bytes = 2 * lm->sz.L * lm->cfg_g[hc] *
                              (lm->sz.C / lm->sz.gqa_h) * (int)sizeof(float);
            fprintf(f, "%-8d %9g %11.3f +- %5.3f %10.1f +- %5.1f %8d %16d\n",
                    lm->cfg_g[hc], (double)lm->sz.lr[lm->chosen[hc]], a.mean,
                    a.sd, b.mean, b.sd, fin[hc * S].n_params, bytes);
        }
        fprintf(f,
                "(mean +- sd over the same seeds; cache bytes per token: "
                "K and V, g heads of d_head floats, %d blocks)\n",
                lm->sz.L);
    }
}

/* table.txt: the relations, each head count's best head */
static void print_relations_table(FILE *f, const struct lm *lm,
                                  const struct result *const *meas, int n_meas)
{
    fprintf(f,
            "\nRelations (Clark et al.): share of cases whose heaviest weight "
            "is on the related word, seed %llu's networks,\n%d validation "
            "windows; the best head of each head count beside the best "
            "fixed offset (margin = head - baseline):\n",
            RUN_FIRST_SEED, lm->meas.n);
    fprintf(f, "%-27s %5s %12s", "relation", "cases", "baseline");
    for (int q = 0; q < n_meas; q++)
        fprintf(f, " %10dh %6s", meas[q]->heads, "margin");
    fprintf(f, "\n");
    for (int rel = 0; rel < R; rel++) {
        if (n_meas == 0)
            break;
        char base[32];
        snprintf(base, sizeof base, "%.3f (k=%d)",
                 (double)meas[0]->rel_base[rel], meas[0]->rel_k[rel]);
        fprintf(f, "%-27s %5d %12s", heads_relation_name(rel), lm->n_cases[rel],
                base);
        for (int q = 0; q < n_meas; q++) {
            const struct result *r = meas[q];
            int best = 0;
            for (int k = 1; k < r->L * r->heads; k++)
                if (r->rel_score[k][rel] > r->rel_score[best][rel])
                    best = k;
            char who[24];
            snprintf(who, sizeof who, "%.3f (%d.%d)",
                     (double)r->rel_score[best][rel], best / r->heads,
                     best % r->heads);
            fprintf(f, " %11s %+6.3f", who,
                    (double)(r->rel_score[best][rel] - r->rel_base[rel]));
        }
        fprintf(f, "\n");
    }
    fprintf(f, "(each head count's best head, named (block.head); "
               "baseline: the share of cases whose related word is k "
               "back)\n");
}

/* table.txt: positional heads and ablation, and the generated lines */
static void print_heads_use(FILE *f, const struct lm *lm,
                            const struct result *const *meas, int n_meas,
                            int best_hc)
{
    fprintf(f,
            "\nPositional heads (Voita et al.: one offset 0..%d takes the "
            "heaviest weight in >= %.0f%% of rows) and mean ablation (%d "
            "windows):\n",
            LM_K, 100 * HEADS_POSITIONAL, lm->sz.n_abl);
    fprintf(f, "%-6s %-34s %-12s %s\n", "heads",
            "positional (block.head@offset)", "first-token",
            "ablation: the largest loss increase (nats)");
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        char pos[256] = "", first[64] = "";
        int n_pos = 0, n_first = 0;
        size_t used = 0;
        for (int k = 0; k < r->L * r->heads; k++) {
            float share;
            int off = best_offset(r, k, &share);
            if (share >= HEADS_POSITIONAL) {
                n_pos++;
                if (used < sizeof pos - 16)
                    used += (size_t)snprintf(pos + used, sizeof pos - used,
                                             "%s%d.%d@%d", used ? " " : "",
                                             k / r->heads, k % r->heads, off);
            }
            n_first += r->top_share[k][LM_K + 1] >= HEADS_POSITIONAL;
        }
        snprintf(first, sizeof first, "%d", n_first);
        int worst = 0;
        double base = overall(r->abl_base, r->abl_count), top = -1e9;
        for (int k = 0; k < r->L * r->heads; k++) {
            double inc = overall(r->abl_loss[k], r->abl_count) - base;
            if (inc > top)
                top = inc, worst = k;
        }
        int cls = 0;
        for (int c = 1; c < NC; c++)
            if (r->abl_loss[worst][c] - r->abl_base[c] >
                r->abl_loss[worst][cls] - r->abl_base[cls])
                cls = c;
        char head_pos[300];
        snprintf(head_pos, sizeof head_pos, "%d of %d%s%s", n_pos,
                 r->L * r->heads, n_pos ? ": " : "", pos);
        fprintf(f, "%-6d %-34s %-12s %d.%d: %+.3f overall, %+.3f on %s\n",
                r->heads, head_pos, first, worst / r->heads, worst % r->heads,
                top, (double)(r->abl_loss[worst][cls] - r->abl_base[cls]),
                corpus_tag_class_name(cls));
    }

    /* generated lines */
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        if (r->heads != 1 && (best_hc < 0 || r->heads != lm->cfg_h[best_hc]))
            continue;
        fprintf(f,
                "\nGenerated, %d head%s (temperature %.1f, top-%d, seed "
                "%llu):\n",
                r->heads, r->heads > 1 ? "s" : "", (double)LM_TEMP, LM_TOP_K,
                LM_GEN_SEED);
        for (int g = 0; g < N_GEN; g++) {
            fprintf(f, "  ");
            print_words(f, lm->d, r->gen[g], lm->n_prompt[g] + LM_GEN_NEW);
            fprintf(f, "\n");
        }
    }
}

/* The tables a run prints (and writes to table.txt) */
void print_tables(FILE *f, const struct lm *lm, const char *impl,
                  const struct result *tune, const struct result *fin,
                  const struct result *const *meas, int n_meas, int best_hc)
{
    print_heads_table(f, lm, impl, tune, fin, best_hc);
    print_kv_table(f, lm, fin);
    print_relations_table(f, lm, meas, n_meas);
    print_heads_use(f, lm, meas, n_meas, best_hc);
}

/* ---------------------------------------------------------------------
 * The student's run beside the reference's: --reference DIR
 * ------------------------------------------------------------------- */

/* Print, for every configuration, this run's mean test loss beside the
 * one in REF/results.csv (the reference solutions' run of the same size),
 * and flag a difference larger than the larger of the two standard
 * deviations over seeds. Returns how many were flagged, or -1 when the
 * reference cannot be read. */
int compare_reference(FILE *out, const struct lm *lm, const struct result *fin,
                      const char *ref)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/results.csv", ref);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(out,
                "\n(no reference run in %s: make lm-experiment "
                "IMPL=solutions%s writes it)\n",
                ref, strcmp(lm->sz.name, "book") ? " LM_SIZE=..." : "");
        return -1;
    }
    const int S = lm->sz.seeds;
    struct run_sum sums[MAX_CFG];
    memset(sums, 0, sizeof sums);
    char line[512], why[128];
    for (int row = 0; fgets(line, sizeof line, f); row++) {
        int h, g;
        long tokens;
        double test;
        if (row == 0)
            continue; /* the header */
        if (!run_read_row(why, sizeof why, line, "*ii***l*f+", &h, &g, &tokens,
                          &test)) {
            fprintf(out, "\n(the reference run's %s, line %d: %s)\n", path,
                    row + 1, why);
            fclose(f);
            return -1;
        }
        for (int hc = 0; hc < lm->n_cfg; hc++)
            if (lm->cfg_h[hc] == h && lm->cfg_g[hc] == g &&
                tokens == fin[0].tokens)
                run_sum_add(&sums[hc], test);
    }
    fclose(f);
    fprintf(out,
            "\nYour run beside the reference's (%s), test loss in nats, mean "
            "+- sd over seeds:\n%-16s %20s %20s %9s\n",
            path, "configuration", "yours", "reference", "flag");
    int flagged = 0;
    for (int hc = 0; hc < lm->n_cfg; hc++) {
        struct run_sum mine = {0};
        for (int s = 0; s < S; s++)
            run_sum_add(&mine, fin[hc * S + s].test_loss);
        struct run_stats a = run_sum_stats(&mine), b = run_sum_stats(&sums[hc]);
        char name[40];
        if (lm->cfg_g[hc] == lm->cfg_h[hc])
            snprintf(name, sizeof name, "%d head%s", lm->cfg_h[hc],
                     lm->cfg_h[hc] > 1 ? "s" : "");
        else
            snprintf(name, sizeof name, "%d q, %d K/V", lm->cfg_h[hc],
                     lm->cfg_g[hc]);
        if (sums[hc].n == 0) {
            fprintf(out, "%-16s %11.3f +- %5.3f %20s\n", name, a.mean, a.sd,
                    "(not in the reference)");
            continue;
        }
        const double tol = a.sd > b.sd ? a.sd : b.sd;
        const int bad = fabs(a.mean - b.mean) > tol;
        flagged += bad;
        fprintf(out, "%-16s %11.3f +- %5.3f %11.3f +- %5.3f %9s\n", name,
                a.mean, a.sd, b.mean, b.sd, bad ? "DIFFERS" : "ok");
    }
    fprintf(out,
            "(flagged: a difference larger than the larger sd. The same "
            "build gives the same numbers on every run, but correct code "
            "built differently can differ in its last bits, and so by a few "
            "hundredths of a nat after training: a flag says your code most "
            "likely computes something else than the reference; make test "
            "CH=N shows where.)\n");
    return flagged;
}

/* ---------------------------------------------------------------------
 * The book's data: --data DIR
 * ------------------------------------------------------------------- */

/* mean and sd over seeds of configuration hc's test losses (perplexity
 * too when ppl is not NULL) */
static struct run_stats test_stats(const struct lm *lm,
                                   const struct result *fin, int hc,
                                   struct run_stats *ppl)
{
    struct run_sum loss = {0}, p = {0};
    for (int s = 0; s < lm->sz.seeds; s++) {
        run_sum_add(&loss, fin[hc * lm->sz.seeds + s].test_loss);
        run_sum_add(&p, exp(fin[hc * lm->sz.seeds + s].test_loss));
    }
    if (ppl)
        *ppl = run_sum_stats(&p);
    return run_sum_stats(&loss);
}

/* The best head (l*h + i) of r on relation rel, by its score. */
static int best_head(const struct result *r, int rel)
{
    int best = 0;
    for (int k = 1; k < r->L * r->heads; k++)
        if (r->rel_score[k][rel] > r->rel_score[best][rel])
            best = k;
    return best;
}

/* A head's tag-profile margin (tag_profile()): over the pairs of classes
 * whose query class has at least TAG_MIN_QUERIES queries, the largest
 * excess of its mass over the best fixed offset's for the same pair;
 * *pair gets that pair (from * NC + to) and *k the offset. */
#define TAG_MIN_QUERIES 100
#define TAG_MARGIN      0.05 /* a head that beats every offset by this */
static float tag_margin(const struct lm *lm, const struct result *r, int head,
                        int *pair, int *k)
{
    float best = -1;
    for (int c = 0; c < NC * NC; c++) {
        if (lm->tag_q[c / NC] < TAG_MIN_QUERIES)
            continue;
        int kb = 0;
        for (int j = 1; j <= LM_K; j++)
            kb = lm->tag_off[j][c] > lm->tag_off[kb][c] ? j : kb;
        const float m = r->tag_mass[head][c] - lm->tag_off[kb][c];
        if (m > best)
            best = m, *pair = c, *k = kb;
    }
    return best;
}

/* The book's data on the tag profiles and on what each head does to the
 * sentence, as values in ch8tags.values: per measured head count, how
 * many of its heads beat every fixed offset on some pair of classes by
 * TAG_MARGIN, the largest such margin, and which head's mean ablation
 * costs the sentence most (block * heads + head) and how much (plotdata/ch8_tables.c makes the
 * tables ch8_tags.md and ch8_sent_ablation.md from the CSV files). */
static void write_book_tags(const struct lm *lm, const char *dir,
                            const struct result *const *meas, int n_meas)
{
    struct out ov;
    FILE *v = out_open(&ov, dir, "ch8tags.values");
    fprintf(v, "ch8tags.min_queries=%d\nch8tags.margin=%.2f\n", TAG_MIN_QUERIES,
            TAG_MARGIN);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        int n_beat = 0;
        float top_m = -1;
        for (int k = 0; k < r->L * r->heads; k++) {
            int pair = 0, kb = 0;
            const float m = tag_margin(lm, r, k, &pair, &kb);
            n_beat += m >= TAG_MARGIN;
            top_m = m > top_m ? m : top_m;
        }
        fprintf(v, "ch8tags.n_beat_h%d=%d\nch8tags.top_margin_h%d=%.3f\n",
                r->heads, n_beat, r->heads, (double)top_m);
        /* the sentence: the head whose ablation costs it most in all */
        double worst_sum = -1e9;
        int worst = 0;
        for (int k = 0; k < r->L * r->heads; k++) {
            double sum = 0;
            for (int t = 0; t + 1 < r->n_sent; t++)
                sum += r->sent_abl[k][t] - r->sent_base[t];
            if (sum > worst_sum)
                worst_sum = sum, worst = k;
        }
        fprintf(v, "ch8tags.sent_cost_h%d=%.3f\n", r->heads, worst_sum);
        /* which head: block * heads + head, the sum's rounding aside */
        fprintf(v, "ch8tags.sent_head_h%d=%d\n", r->heads, worst);
    }
    out_close(&ov);
}

/* Each measured head's mean heaviest weight in a row (row_max):
 * DIR/row_max.csv, which plotdata/ch8_tables.c makes ch8_sharp.md of. */
void write_row_max(const struct run *run, const char *dir,
                   const struct result *const *meas, int n_meas)
{
    static const struct run_col col[] = {
        {"heads", 0}, {"block", 0}, {"head", 0}, {"row_max", 4}};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "row_max.csv", NULL, col, 4);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int k = 0; k < r->L * r->heads; k++) {
            const double v[4] = {r->heads, k / r->heads, k % r->heads,
                                 r->row_max[k]};
            run_csv_row(&csv, NULL, v);
        }
    }
    run_csv_close(&csv);
}

/* ch8run.values, first part: the run's sizes, its protocol and the
 * n-gram models */
static void write_run_values(FILE *f, const char *impl, const struct lm *lm,
                             const struct result *tune,
                             const struct result *fin)
{
    const int S = lm->sz.seeds, H = lm->n_cfg, n_lr = lm->sz.n_lr;
    fprintf(f, "ch8run.size=%s\nch8run.impl=%s\n", lm->sz.name, impl);
    fprintf(f, "ch8run.tokens=%d\nch8run.steps=%d\nch8run.batch=%d\n",
            fin[0].tokens, fin[0].steps, lm->sz.B);
    fprintf(f, "ch8run.d_model=%d\nch8run.layers=%d\nch8run.context=%d\n",
            lm->sz.C, lm->sz.L, lm->sz.T);
    fprintf(f,
            "ch8run.seeds=%d\nch8run.seed_first=%llu\nch8run.seed_last=%llu\n",
            S, RUN_FIRST_SEED, RUN_FIRST_SEED + S - 1);
    fprintf(f, "ch8run.grid=");
    for (int i = lm->sz.lr_lo; i <= lm->sz.lr_hi; i++)
        fprintf(f, "%s%g", i > lm->sz.lr_lo ? ", " : "", (double)lm->sz.lr[i]);
    fprintf(f, "\nch8run.ladder=");
    for (int i = 0; i < n_lr; i++)
        fprintf(f, "%s%g", i ? ", " : "", (double)lm->sz.lr[i]);
    fprintf(f, "\nch8run.n_lr=%d\nch8run.n_tuned=%d\n", n_lr,
            n_tuned(lm, tune));
    /* the configurations whose choice is the ladder's end: a rate beyond
     * it was never tried */
    int n_end = 0;
    for (int hc = 0; hc < H; hc++)
        n_end += lm->chosen[hc] == 0 || lm->chosen[hc] == n_lr - 1;
    fprintf(f, "ch8run.n_edge=%d\nch8run.edge_list=", n_end);
    if (n_end == 0)
        fprintf(f, "none");
    for (int hc = 0, q = 0; hc < H; hc++) {
        if (lm->chosen[hc] != 0 && lm->chosen[hc] != n_lr - 1)
            continue;
        char label[64];
        cfg_label(lm, hc, label, sizeof label);
        q++;
        fprintf(f, "%s%s (%g)",
                q == 1       ? ""
                : q == n_end ? " and "
                             : ", ",
                label, (double)lm->sz.lr[lm->chosen[hc]]);
    }
    fprintf(f, "\n");
    fprintf(f, "ch8run.heads=");
    for (int hc = 0, n = 0; hc < H; hc++)
        if (lm->cfg_g[hc] == lm->cfg_h[hc])
            fprintf(f, "%s%d", n++ ? ", " : "", lm->cfg_h[hc]);
    fprintf(f, "\nch8run.networks=%d\n", n_tuned(lm, tune) + H * (S - 1));
    fprintf(f, "ch8run.val_windows=%d\nch8run.val_tokens=%d\n", lm->val.n,
            lm->val.n * lm->sz.T);
    fprintf(f, "ch8run.test_windows=%d\nch8run.test_tokens=%d\n", lm->test.n,
            lm->test.n * lm->sz.T);
    fprintf(f, "ch8run.meas_windows=%d\nch8run.abl_windows=%d\n", lm->meas.n,
            lm->sz.n_abl < lm->meas.n ? lm->sz.n_abl : lm->meas.n);
    fprintf(f, "ch8run.params=%d\n", fin[0].n_params);
    /* how close each choice was: the chosen rate's lead over the next
     * best rate tried, against the sd over seeds of the validation loss
     * at the chosen rate */
    int n_close = 0;
    for (int hc = 0; hc < H; hc++) {
        double second = INFINITY;
        for (int i = 0; i < n_lr; i++)
            if (i != lm->chosen[hc] && tune[hc * n_lr + i].trained &&
                tune[hc * n_lr + i].val_loss < second)
                second = tune[hc * n_lr + i].val_loss;
        struct run_sum v = {0};
        for (int s = 0; s < S; s++)
            run_sum_add(&v, fin[hc * S + s].val_loss);
        n_close += second - tune[hc * n_lr + lm->chosen[hc]].val_loss <
                   run_sum_stats(&v).sd;
    }
    fprintf(f, "ch8run.n_close=%d\nch8run.n_cfg=%d\n", n_close, H);
    const long train_n = lm->d->split_n[SPLIT_TRAIN];
    fprintf(f, "ch8run.train_tokens=%ld\nch8run.pass_pct=%.0f\n", train_n,
            100.0 * fin[0].tokens / (double)train_n);
    for (int k = 0; k < NGRAM_MAX_ORDER; k++)
        fprintf(f, "ch8run.%s_val=%.3f\nch8run.%s_test=%.3f\n", ngram_name[k],
                lm->base[k].val, ngram_name[k], lm->base[k].test);
}

/* ch8run.values: one head against the best many-head count, paired by
 * seed and along the curves */
static void write_gap_values(FILE *f, const struct lm *lm,
                             const struct result *fin, int one, int best_hc)
{
    const int S = lm->sz.seeds;
    struct run_stats a = test_stats(lm, fin, one, NULL);
    struct run_stats b = test_stats(lm, fin, best_hc, NULL);
    const double gap = a.mean - b.mean, spread = a.sd + b.sd;
    fprintf(f, "ch8run.best_heads=%d\n", lm->cfg_h[best_hc]);
    fprintf(f, "ch8run.loss_one=%.3f\nch8run.sd_one=%.3f\n", a.mean, a.sd);
    fprintf(f, "ch8run.loss_best=%.3f\nch8run.sd_best=%.3f\n", b.mean, b.sd);
    fprintf(f, "ch8run.gap=%.3f\nch8run.gap_spread=%.3f\n", gap, spread);
    fprintf(f, "ch8run.ppl_ratio=%.3f\n", exp(gap));
    /* paired by seed: a seed trains every configuration on the same
     * batches from the same starting numbers, so the difference of
     * one seed's two networks is free of what the seed itself adds */
    struct run_sum d = {0};
    double lo = 1e9, hi = -1e9;
    int n_pos = 0;
    for (int s = 0; s < S; s++) {
        const double g =
            fin[one * S + s].test_loss - fin[best_hc * S + s].test_loss;
        run_sum_add(&d, g);
        lo = fmin(lo, g), hi = fmax(hi, g), n_pos += g > 0;
    }
    const struct run_stats ds = run_sum_stats(&d);
    fprintf(f, "ch8run.paired_sd=%.3f\nch8run.paired_min=%.3f\n", ds.sd, lo);
    fprintf(f, "ch8run.paired_max=%.3f\nch8run.paired_n_pos=%d\n", hi, n_pos);
    /* what the difference's sd would be if the two networks of a
     * seed were independent draws: the yardstick for the pairing */
    fprintf(f, "ch8run.unpaired_sd=%.3f\n", sqrt(a.sd * a.sd + b.sd * b.sd));
    /* the curves: the point where the two are furthest apart */
    int at = 1;
    double widest = -1e9;
    for (int p = 1; p < fin[0].n_points; p++) {
        double dp = 0;
        for (int s = 0; s < S; s++)
            dp += (fin[one * S + s].val_curve[p] -
                   fin[best_hc * S + s].val_curve[p]) /
                  S;
        if (dp > widest)
            widest = dp, at = p;
    }
    fprintf(f, "ch8run.widest_tokens=%d\nch8run.widest_gap=%.3f\n",
            fin[0].curve_tokens[at], widest);
    fprintf(f, "ch8run.widest_at_end=%d\n", at == fin[0].n_points - 1);
}

/* ch8run.values: every head count's test loss, and 16 narrow heads
 * against 4 */
static void write_loss_values(FILE *f, const struct lm *lm,
                              const struct result *fin)
{
    const int H = lm->n_cfg;
    int h4 = -1, h16 = -1;
    for (int hc = 0; hc < H; hc++) {
        if (lm->cfg_g[hc] != lm->cfg_h[hc])
            continue;
        struct run_stats a = test_stats(lm, fin, hc, NULL);
        fprintf(f, "ch8run.loss_h%d=%.3f\nch8run.sd_h%d=%.3f\n", lm->cfg_h[hc],
                a.mean, lm->cfg_h[hc], a.sd);
        h4 = lm->cfg_h[hc] == 4 ? hc : h4;
        h16 = lm->cfg_h[hc] == 16 ? hc : h16;
    }
    if (h4 >= 0 && h16 >= 0) {
        struct run_stats a = test_stats(lm, fin, h4, NULL);
        struct run_stats b = test_stats(lm, fin, h16, NULL);
        const double d = b.mean - a.mean, spread = a.sd + b.sd;
        fprintf(f,
                "ch8run.h16_minus_h4=%.3f\nch8run.h4_minus_h16=%.3f\n"
                "ch8run.h16_h4_spread=%.3f\n",
                d, -d, spread);
    }
}

/* ch8run.values, K/V sharing: the fewest K/V heads against the query
 * heads' own */
static void write_kv_values(FILE *f, const struct lm *lm,
                            const struct result *fin)
{
    int own = -1, fewest = -1;
    for (int hc = 0; hc < lm->n_cfg; hc++) {
        if (lm->cfg_h[hc] != lm->sz.gqa_h || lm->sz.n_kv == 0)
            continue;
        if (lm->cfg_g[hc] == lm->cfg_h[hc])
            own = hc;
        else if (fewest < 0 || lm->cfg_g[hc] < lm->cfg_g[fewest])
            fewest = hc;
    }
    if (own < 0 || fewest < 0)
        return;
    struct run_stats a = test_stats(lm, fin, own, NULL);
    struct run_stats b = test_stats(lm, fin, fewest, NULL);
    const double cost = b.mean - a.mean, spread = a.sd + b.sd;
    fprintf(f, "ch8run.kv_query=%d\nch8run.kv_fewest=%d\n", lm->sz.gqa_h,
            lm->cfg_g[fewest]);
    fprintf(f, "ch8run.kv_cost=%+.3f\nch8run.kv_spread=%.3f\n", cost, spread);
    fprintf(f, "ch8run.kv_cost_abs=%.3f\n", fabs(cost));
    fprintf(f, "ch8run.kv_saving=%d\n", lm->sz.gqa_h / lm->cfg_g[fewest]);
}

/* ch8run.values: the relations' best margin, and where the heads look:
 * positional heads, the mean weight by offset, how sharp the rows are,
 * the strongest pull of one offset */
static void write_head_values(FILE *f, const struct lm *lm,
                              const struct result *const *meas, int n_meas)
{
    double top = -1e9;
    int top_rel = 0, top_q = 0, n_pos_rel = 0;
    for (int rel = 0; rel < R; rel++) {
        int found = 0;
        for (int q = 0; q < n_meas; q++) {
            const int k = best_head(meas[q], rel);
            const double m =
                meas[q]->rel_score[k][rel] - meas[q]->rel_base[rel];
            found |= m > 0;
            if (m > top)
                top = m, top_rel = rel, top_q = q;
        }
        n_pos_rel += found;
    }
    if (n_meas > 0) {
        const int k = best_head(meas[top_q], top_rel);
        fprintf(f, "ch8run.rel_positive=%d\nch8run.rel_n=%d\n", n_pos_rel, R);
        fprintf(f, "ch8run.rel_top_margin=%+.3f\nch8run.rel_top_name=%s\n", top,
                heads_relation_name(top_rel));
        fprintf(f, "ch8run.rel_top_heads=%d\nch8run.rel_top_head=%d.%d\n",
                meas[top_q]->heads, k / meas[top_q]->heads,
                k % meas[top_q]->heads);
    }
    int n_heads = 0, n_positional = 0, top_off = 0, top_k = 0, top_m = 0;
    float top_share = -1;
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < meas[q]->L * meas[q]->heads; k++) {
            float share;
            const int off = best_offset(meas[q], k, &share);
            n_heads++, n_positional += share >= HEADS_POSITIONAL;
            if (share > top_share)
                top_share = share, top_off = off, top_k = k, top_m = q;
        }
    fprintf(f, "ch8run.heads_measured=%d\nch8run.positional=%d\n", n_heads,
            n_positional);
    /* the mean weight by offset, over every measured head */
    double w[LM_K + 2] = {0};
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < meas[q]->L * meas[q]->heads; k++)
            for (int j = 0; j < LM_K + 2; j++)
                w[j] += meas[q]->mean_w[k][j] / (n_heads ? n_heads : 1);
    fprintf(f,
            "ch8run.w_self=%.3f\nch8run.w_prev=%.3f\nch8run.w_far=%.3f\n"
            "ch8run.w_first=%.3f\nch8run.w_far_k=%d\n",
            w[0], w[1], w[LM_K], w[LM_K + 1], LM_K);
    /* how sharp the rows are: a row's heaviest weight, averaged */
    double sharp_sum = 0, even = 0; /* even: the same for uniform rows */
    int n_sharp = 0;
    for (int i = LM_K; i < lm->sz.T; i++)
        even += 1.0 / (i + 1);
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < meas[q]->L * meas[q]->heads; k++)
            sharp_sum += meas[q]->row_max[k],
                n_sharp += meas[q]->row_max[k] > 0.5f;
    fprintf(f,
            "ch8run.row_max_mean=%.2f\nch8run.row_max_sharp=%d\n"
            "ch8run.row_max_from=%d\nch8run.row_max_even=%.3f\n",
            n_heads ? sharp_sum / n_heads : 0.0, n_sharp, LM_K + 1,
            even / (lm->sz.T - LM_K));
    if (n_meas > 0)
        fprintf(f,
                "ch8run.top_share=%.2f\nch8run.top_offset=%d\n"
                "ch8run.top_share_heads=%d\nch8run.top_share_head=%d.%d\n",
                top_share, top_off, meas[top_m]->heads,
                top_k / meas[top_m]->heads, top_k % meas[top_m]->heads);
}

/* ch8run.values: the costliest head of each head count when mean-
 * ablated, and of the best many-head count; and the sentence: the most
 * that any measured head gives "blocked" and "narrow" from the row of
 * "street" */
static void write_sentence_values(FILE *f, const struct lm *lm,
                                  const struct result *const *meas, int n_meas,
                                  int best_hc)
{
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        const double base = overall(r->abl_base, r->abl_count);
        double worst = -1e9;
        for (int k = 0; k < r->L * r->heads; k++) {
            const double inc = overall(r->abl_loss[k], r->abl_count) - base;
            worst = inc > worst ? inc : worst;
        }
        fprintf(f, "ch8run.abl_max_h%d=%.3f\n", r->heads, worst);
        if (best_hc >= 0 && r->heads == lm->cfg_h[best_hc])
            fprintf(f, "ch8run.abl_max_best=%.3f\n", worst);
    }
    int at_street = -1, at_blocked = -1, at_narrow = -1;
    for (int t = 0; t < lm->n_sent; t++) {
        const char *wd = lm->d->vocab[lm->sent[t]];
        at_street = strcmp(wd, "street") ? at_street : t;
        at_blocked = strcmp(wd, "blocked") ? at_blocked : t;
        at_narrow = strcmp(wd, "narrow") ? at_narrow : t;
    }
    if (at_street < 0 || at_blocked < 0 || at_narrow < 0)
        return;
    float to_blocked = 0, to_narrow = 0;
    int one_word = 0; /* heads that give one word more than 0.9 */
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int k = 0; k < r->L * r->heads; k++) {
            const float *row = r->sent_w[k] + at_street * lm->n_sent;
            float top = 0;
            for (int j = 0; j <= at_street; j++)
                top = row[j] > top ? row[j] : top;
            one_word += top > 0.9f;
            to_blocked =
                row[at_blocked] > to_blocked ? row[at_blocked] : to_blocked;
            to_narrow = row[at_narrow] > to_narrow ? row[at_narrow] : to_narrow;
        }
    }
    fprintf(f,
            "ch8run.street_blocked=%.2f\nch8run.street_narrow=%.2f\n"
            "ch8run.street_even=%.3f\nch8run.street_words=%d\n"
            "ch8run.street_one_word=%d\n",
            to_blocked, to_narrow, 1.0 / (at_street + 1), at_street + 1,
            one_word);
}

/* a map of the sentence, a row per query word: DIR/NAME */
static void write_sent_map(const struct lm *lm, const char *dir,
                           const char *name, const float *w)
{
    const int S = lm->n_sent;
    struct out o;
    FILE *f = out_open(&o, dir, name);
    fprintf(f, "query\\key");
    for (int j = 0; j < S; j++)
        fprintf(f, " %s", lm->d->vocab[lm->sent[j]]);
    fprintf(f, "\n");
    for (int t = 0; t < S; t++) {
        fprintf(f, "%s", lm->d->vocab[lm->sent[t]]);
        for (int j = 0; j < S; j++)
            fprintf(f, " %.4f", (double)w[t * S + j]);
        fprintf(f, "\n");
    }
    out_close(&o);
}

/* The sentence's plot data: the maps of the 1-head network and of the
 * one with as many heads as chapter 3 built by hand (SENT_HEADS), else
 * the best many-head one (ch8_sent.values names it); and the row of
 * "street" of every measured head (ch8_street.dat) */
static void write_sentence_data(const struct lm *lm, const char *dir,
                                const struct result *const *meas, int n_meas,
                                int best_hc)
{
    int many = -1;
    for (int q = 0; q < n_meas; q++)
        if (meas[q]->heads == SENT_HEADS)
            many = q;
    for (int q = 0; q < n_meas && many < 0; q++)
        if (best_hc >= 0 && meas[q]->heads == lm->cfg_h[best_hc])
            many = q;
    struct out o;
    FILE *f = out_open(&o, dir, "ch8_sent.values");
    fprintf(f, "ch8run.sent_heads=%d\n", many >= 0 ? meas[many]->heads : 0);
    out_close(&o);
    const int Sn = lm->n_sent;
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        if (r->heads != 1 && q != many)
            continue;
        for (int k = 0; k < r->L * r->heads; k++) {
            char name[64];
            snprintf(name, sizeof name, "ch8_sent_%s_l%d_i%d.dat",
                     r->heads == 1 ? "one" : "many", k / r->heads,
                     k % r->heads);
            write_sent_map(lm, dir, name, r->sent_w[k]);
        }
    }
    int street = -1;
    for (int t = 0; t < Sn; t++)
        street = strcmp(lm->d->vocab[lm->sent[t]], "street") ? street : t;
    if (street < 0)
        return;
    f = out_open(&o, dir, "ch8_street.dat");
    fprintf(f, "head\\key");
    for (int j = 0; j <= street; j++)
        fprintf(f, " %s", lm->d->vocab[lm->sent[j]]);
    fprintf(f, "\n");
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < meas[q]->L * meas[q]->heads; k++) {
            fprintf(f, "%dh:%d.%d", meas[q]->heads, k / meas[q]->heads,
                    k % meas[q]->heads);
            for (int j = 0; j <= street; j++)
                fprintf(f, " %.4f",
                        (double)meas[q]->sent_w[k][street * Sn + j]);
            fprintf(f, "\n");
        }
    out_close(&o);
}

/* The plot data of the curves, the relations, the offsets and the
 * ablation: ch8_curves.dat, ch8_relations.dat, ch8_offsets.dat and
 * ch8_ablation.dat (the best many-head network's head x class table) */
static void write_plot_data(const struct lm *lm, const char *dir,
                            const struct result *fin,
                            const struct result *const *meas, int n_meas,
                            int best_hc)
{
    const int S = lm->sz.seeds;
    struct out o;
    FILE *f = out_open(&o, dir, "ch8_curves.dat");
    fprintf(f, "# tokens, then mean and sd of the validation loss per head "
               "count\n");
    for (int p = 0; p < fin[0].n_points; p++) {
        fprintf(f, "%d", fin[0].curve_tokens[p]);
        for (int hc = 0; hc < lm->n_cfg; hc++) {
            if (lm->cfg_g[hc] != lm->cfg_h[hc])
                continue;
            struct run_sum sum = {0};
            for (int s = 0; s < S; s++)
                run_sum_add(&sum, fin[hc * S + s].val_curve[p]);
            struct run_stats st = run_sum_stats(&sum);
            fprintf(f, " %.4f %.4f", st.mean, st.sd);
        }
        fprintf(f, "\n");
    }
    out_close(&o);
    f = out_open(&o, dir, "ch8_relations.dat");
    fprintf(f, "# relation, baseline share, then each measured head count's "
               "best head's share:");
    for (int q = 0; q < n_meas; q++)
        fprintf(f, " %d", meas[q]->heads);
    fprintf(f, "\n");
    for (int rel = 0; rel < R && n_meas > 0; rel++) {
        fprintf(f, "\"%s\" %.4f", heads_relation_name(rel),
                (double)meas[0]->rel_base[rel]);
        for (int q = 0; q < n_meas; q++)
            fprintf(f, " %.4f",
                    (double)meas[q]->rel_score[best_head(meas[q], rel)][rel]);
        fprintf(f, "\n");
    }
    out_close(&o);
    /* every head's mean weight by offset, for `matrix rowheaders
     * columnheaders` */
    f = out_open(&o, dir, "ch8_offsets.dat");
    fprintf(f, "head\\offset");
    for (int j = 0; j <= LM_K; j++)
        fprintf(f, " %d", j);
    fprintf(f, " first\n");
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < meas[q]->L * meas[q]->heads; k++) {
            fprintf(f, "%dh:%d.%d", meas[q]->heads, k / meas[q]->heads,
                    k % meas[q]->heads);
            for (int j = 0; j < LM_K + 2; j++)
                fprintf(f, " %.4f", (double)meas[q]->mean_w[k][j]);
            fprintf(f, "\n");
        }
    out_close(&o);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        if (best_hc < 0 || r->heads != lm->cfg_h[best_hc])
            continue;
        write_ablation_table(dir, "ch8_ablation.dat", r);
    }
}

/* The values and plot data the chapter reads from this run, into DIR;
 * its tables and gnuplot settings are made from these and the run's CSV
 * files by tools/runs/plotdata/ch8_tables.c:
 *   ch8run.values         every number the prose quotes (key=value)
 *   ch8run_measured.values the wall time and peak memory ('# measured':
 *                         machine-dependent, never compared between runs)
 *   ch8tags.values        the tag profiles' and the sentence's ablation's
 *   ch8_sent.values       how many heads the sentence's maps show
 *   ch8_curves.dat        validation loss against tokens, per head count
 *   ch8_offsets.dat       every head's mean weight by offset (a matrix)
 *   ch8_relations.dat     each relation's baseline and best scores
 *   ch8_ablation.dat      the best many-head count's head x class table
 *   ch8_sent_{one,many}_lL_iI.dat  the sentence's maps: 1 head, and
 *                         SENT_HEADS heads (or the best)
 *   ch8_street.dat        the row of "street" of every measured head */
void write_book_data(const char *impl, const struct lm *lm, const char *dir,
                     const struct result *tune, const struct result *fin,
                     const struct result *const *meas, int n_meas, int best_hc,
                     double wall, long peak_kb)
{
    struct out o;
    FILE *f = out_open(&o, dir, "ch8run.values");
    write_run_values(f, impl, lm, tune, fin);
    int one = -1;
    for (int hc = 0; hc < lm->n_cfg; hc++)
        if (lm->cfg_h[hc] == 1)
            one = hc;
    if (one >= 0 && best_hc >= 0)
        write_gap_values(f, lm, fin, one, best_hc);
    write_loss_values(f, lm, fin);
    write_head_values(f, lm, meas, n_meas);
    write_sentence_values(f, lm, meas, n_meas, best_hc);
    write_kv_values(f, lm, fin);
    out_close(&o);
    /* the run's wall time and memory: machine-dependent, so marked as a
     * benchmark's (tools/checks/76-reproducible.sh does not compare them) */
    f = out_open(&o, dir, "ch8run_measured.values");
    fprintf(f, "# measured: this machine's wall time and peak memory\n");
    fprintf(f, "ch8run.wall_min=%.1f\nch8run.peak_mb=%.0f\n", wall / 60,
            peak_kb / 1024.0);
    out_close(&o);
    write_plot_data(lm, dir, fin, meas, n_meas, best_hc);
    write_sentence_data(lm, dir, meas, n_meas, best_hc);
    write_book_tags(lm, dir, meas, n_meas);
}
