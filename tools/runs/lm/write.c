/*
 * write.c: the files chapter 8's experiment writes of its measured heads
 * and curves (lm.h), every one through a temporary file and a rename.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

FILE *out_open(struct out *o, const char *dir, const char *name)
{
    char tmp[80];
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    snprintf(o->tmp, sizeof o->tmp, "%s/%s", dir, tmp);
    snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
    return o->f = data_open(PROG, dir, tmp);
}

void out_close(struct out *o)
{
    data_close(PROG, o->f);
    if (rename(o->tmp, o->path) != 0) {
        fprintf(stderr, PROG ": cannot rename %s to %s\n", o->tmp, o->path);
        exit(1);
    }
}

void make_dir(const struct run *run, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        run_fail(run, 1, "cannot create the folder %s", dir);
}

double overall(const float *loss, const int *count)
{
    double s = 0;
    long n = 0;
    for (int c = 0; c < NC; c++)
        s += (double)loss[c] * count[c], n += count[c];
    return n ? s / n : 0;
}

/* One network's head x class table of the loss increases (every head's
 * overall increase, then one per tag class), for gnuplot's `matrix
 * rowheaders columnheaders`: ablation_hH.dat here, and the book's
 * ch8_ablation.dat (book.c) */
void write_ablation_table(const char *dir, const char *name,
                          const struct result *r)
{
    struct out o;
    FILE *f = out_open(&o, dir, name);
    fprintf(f, "head\\class all");
    for (int c = 0; c < NC; c++)
        fprintf(f, " %s", corpus_tag_class_name(c));
    fprintf(f, "\n");
    for (int k = 0; k < r->L * r->heads; k++) {
        fprintf(f, "%d.%d %.4f", k / r->heads, k % r->heads,
                overall(r->abl_loss[k], r->abl_count) -
                    overall(r->abl_base, r->abl_count));
        for (int c = 0; c < NC; c++)
            fprintf(f, " %.4f", (double)(r->abl_loss[k][c] - r->abl_base[c]));
        fprintf(f, "\n");
    }
    out_close(&o);
}

/* the heaviest-weight offset of head k and its share (0 .. K) */
int best_offset(const struct result *r, int k, float *share)
{
    int best = 0;
    for (int j = 1; j <= LM_K; j++)
        if (r->top_share[k][j] > r->top_share[k][best])
            best = j;
    *share = r->top_share[k][best];
    return best;
}

void write_offsets(const struct run *run, const char *dir,
                   const struct result *const *meas, int n_meas)
{
    struct run_col col[3 + 2 * (LM_K + 2) + 3];
    char names[2 * (LM_K + 2)][24];
    int nc = 0;
    col[nc++] = (struct run_col){"heads", 0};
    col[nc++] = (struct run_col){"block", 0};
    col[nc++] = (struct run_col){"head", 0};
    for (int j = 0; j < 2 * (LM_K + 2); j++) {
        const int k = j % (LM_K + 2);
        if (k == LM_K + 1)
            snprintf(names[j], sizeof names[j], "%s_first",
                     j < LM_K + 2 ? "mean_w" : "top");
        else
            snprintf(names[j], sizeof names[j], "%s_%d",
                     j < LM_K + 2 ? "mean_w" : "top", k);
        col[nc++] = (struct run_col){names[j], 4};
    }
    col[nc++] = (struct run_col){"best_offset", 0};
    col[nc++] = (struct run_col){"best_share", 4};
    col[nc++] = (struct run_col){"positional", 0};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "offsets.csv", NULL, col, nc);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int k = 0; k < r->L * r->heads; k++) {
            double v[3 + 2 * (LM_K + 2) + 3];
            int j = 0;
            v[j++] = r->heads, v[j++] = k / r->heads, v[j++] = k % r->heads;
            for (int c = 0; c < LM_K + 2; c++)
                v[j++] = r->mean_w[k][c];
            for (int c = 0; c < LM_K + 2; c++)
                v[j++] = r->top_share[k][c];
            float share;
            v[j++] = best_offset(r, k, &share);
            v[j++] = share;
            v[j++] = share >= HEADS_POSITIONAL;
            run_csv_row(&csv, NULL, v);
        }
    }
    run_csv_close(&csv);
}

void write_relations(const struct run *run, const struct lm *lm,
                     const char *dir, const struct result *const *meas,
                     int n_meas)
{
    static const struct run_col col[] = {
        {"heads", 0},      {"block", 0},         {"head", 0},
        {"cases", 0},      {"score", 4},         {"baseline", 4},
        {"best_k", 0},     {"margin", 4},        {"hard_cases", 0},
        {"hard_score", 4}, {"hard_baseline", 4}, {"hard_margin", 4}};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "relations.csv", "relation", col, 12);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int rel = 0; rel < R; rel++)
            for (int k = 0; k < r->L * r->heads; k++) {
                const double v[12] = {r->heads,
                                      k / r->heads,
                                      k % r->heads,
                                      lm->n_cases[rel],
                                      r->rel_score[k][rel],
                                      r->rel_base[rel],
                                      r->rel_k[rel],
                                      r->rel_score[k][rel] - r->rel_base[rel],
                                      lm->n_hard[rel],
                                      r->hard_score[k][rel],
                                      r->hard_base[rel],
                                      r->hard_score[k][rel] -
                                          r->hard_base[rel]};
                run_csv_row(&csv, rel_key[rel], v);
            }
    }
    run_csv_close(&csv);
}

void write_ablation(const struct run *run, const char *dir,
                    const struct result *const *meas, int n_meas)
{
    static const struct run_col col[] = {
        {"heads", 0}, {"block", 0},   {"head", 0},    {"targets", 0},
        {"base", 4},  {"ablated", 4}, {"increase", 4}};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "ablation.csv", "class", col, 7);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int k = 0; k < r->L * r->heads; k++) {
            const double all = overall(r->abl_loss[k], r->abl_count);
            const double base = overall(r->abl_base, r->abl_count);
            int n_all = 0;
            for (int c = 0; c < NC; c++)
                n_all += r->abl_count[c];
            const double v[7] = {r->heads, k / r->heads, k % r->heads, n_all,
                                 base,     all,          all - base};
            run_csv_row(&csv, "all", v);
            for (int c = 0; c < NC; c++) {
                const double w[7] = {r->heads,
                                     k / r->heads,
                                     k % r->heads,
                                     r->abl_count[c],
                                     r->abl_base[c],
                                     r->abl_loss[k][c],
                                     r->abl_loss[k][c] - r->abl_base[c]};
                run_csv_row(&csv, corpus_tag_class_name(c), w);
            }
        }
        char name[64];
        snprintf(name, sizeof name, "ablation_h%d.dat", r->heads);
        write_ablation_table(dir, name, r);
    }
    run_csv_close(&csv);
}

void write_sentence(const struct run *run, const struct lm *lm, const char *dir,
                    const struct result *const *meas, int n_meas)
{
    char sdir[512];
    snprintf(sdir, sizeof sdir, "%s/sentence", dir);
    make_dir(run, sdir);
    const int S = lm->n_sent;
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int k = 0; k < r->L * r->heads; k++) {
            char name[64];
            snprintf(name, sizeof name, "sentence_h%d_l%d_i%d.dat", r->heads,
                     k / r->heads, k % r->heads);
            struct out o;
            FILE *f = out_open(&o, sdir, name);
            fprintf(f, "query\\key");
            for (int j = 0; j < S; j++)
                fprintf(f, " %s", lm->d->vocab[lm->sent[j]]);
            fprintf(f, "\n");
            for (int t = 0; t < S; t++) {
                fprintf(f, "%s", lm->d->vocab[lm->sent[t]]);
                for (int j = 0; j < S; j++)
                    fprintf(f, " %.4f", (double)r->sent_w[k][t * S + j]);
                fprintf(f, "\n");
            }
            out_close(&o);
        }
        /* the loss at each predicted word, and its increase when each
         * head is mean-ablated: a row per word, a column per head */
        char name[64];
        snprintf(name, sizeof name, "ablation_h%d.dat", r->heads);
        struct out o;
        FILE *f = out_open(&o, sdir, name);
        fprintf(f, "word loss");
        for (int k = 0; k < r->L * r->heads; k++)
            fprintf(f, " %d.%d", k / r->heads, k % r->heads);
        fprintf(f, "\n");
        for (int t = 0; t + 1 < S; t++) {
            fprintf(f, "%s %.4f", lm->d->vocab[lm->sent[t + 1]],
                    (double)r->sent_base[t]);
            for (int k = 0; k < r->L * r->heads; k++)
                fprintf(f, " %.4f",
                        (double)(r->sent_abl[k][t] - r->sent_base[t]));
            fprintf(f, "\n");
        }
        out_close(&o);
    }
}

/* curves.dat: tokens, then mean and sd over seeds per head count */
void write_curves(const struct lm *lm, const char *dir,
                  const struct result *fin)
{
    const int S = lm->sz.seeds, H = lm->n_cfg;
    struct out o;
    FILE *f = out_open(&o, dir, "curves.dat");
    fprintf(f,
            "# validation loss (nats per token) against tokens seen, at "
            "the chosen rate; mean and sd over %d seeds for:",
            S);
    for (int hc = 0; hc < H; hc++)
        fprintf(f, " [%d heads, %d K/V, lr %g]", lm->cfg_h[hc], lm->cfg_g[hc],
                (double)lm->sz.lr[lm->chosen[hc]]);
    fprintf(f, "\n");
    for (int p = 0; p < fin[0].n_points; p++) {
        fprintf(f, "%d", fin[0].curve_tokens[p]);
        for (int hc = 0; hc < H; hc++) {
            struct run_sum sum = {0};
            for (int s = 0; s < S; s++)
                run_sum_add(&sum, fin[hc * S + s].val_curve[p]);
            struct run_stats st = run_sum_stats(&sum);
            fprintf(f, " %.4f %.4f", st.mean, st.sd);
        }
        fprintf(f, "\n");
    }
    out_close(&o);
}

/* The tuning networks' validation curves (seed 1), each column headed
 * by its configuration and rate: DIR/curves_tuning.dat. */
void write_tuning_curves(const struct lm *lm, const char *dir,
                         const struct result *tune)
{
    const int H = lm->n_cfg, n_lr = lm->sz.n_lr;
    struct out o;
    FILE *f = out_open(&o, dir, "curves_tuning.dat");
    fprintf(f, "# validation loss against tokens seen, seed %llu, for:",
            RUN_FIRST_SEED);
    for (int k = 0; k < H * n_lr; k++)
        if (tune[k].trained)
            fprintf(f, " [%d heads, %d K/V, lr %g]", tune[k].heads,
                    tune[k].kv_heads, (double)tune[k].lr);
    fprintf(f, "\n");
    const struct result *t0 = &tune[lm->chosen[0]]; /* a trained one */
    for (int p = 0; p < t0->n_points; p++) {
        fprintf(f, "%d", t0->curve_tokens[p]);
        for (int k = 0; k < H * n_lr; k++)
            if (tune[k].trained)
                fprintf(f, " %.4f", (double)tune[k].val_curve[p]);
        fprintf(f, "\n");
    }
    out_close(&o);
}

/* Every measured head's tag profile (tag_profile()), one row per head
 * and pair of classes: tag_profiles.csv; and the baselines, one row per
 * pair: the queries of the class, the uniform head's mass and each
 * fixed offset's: tag_baselines.csv. */
void write_tag_profiles(const struct lm *lm, const char *dir,
                        const struct result *const *meas, int n_meas)
{
    struct out o;
    FILE *f = out_open(&o, dir, "tag_baselines.csv");
    fprintf(f, "from,to,queries,uniform");
    for (int k = 0; k <= LM_K; k++)
        fprintf(f, ",offset_%d", k);
    fprintf(f, "\n");
    for (int c = 0; c < NC * NC; c++) {
        fprintf(f, "%s,%s,%ld,%.4f", corpus_tag_class_name(c / NC),
                corpus_tag_class_name(c % NC), lm->tag_q[c / NC],
                (double)lm->tag_uni[c]);
        for (int k = 0; k <= LM_K; k++)
            fprintf(f, ",%.4f", (double)lm->tag_off[k][c]);
        fprintf(f, "\n");
    }
    out_close(&o);
    f = out_open(&o, dir, "tag_profiles.csv");
    fprintf(f, "heads,block,head,from,to,mass\n");
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < meas[q]->L * meas[q]->heads; k++)
            for (int c = 0; c < NC * NC; c++)
                fprintf(f, "%d,%d,%d,%s,%s,%.4f\n", meas[q]->heads,
                        k / meas[q]->heads, k % meas[q]->heads,
                        corpus_tag_class_name(c / NC),
                        corpus_tag_class_name(c % NC),
                        (double)meas[q]->tag_mass[k][c]);
    out_close(&o);
}

void write_baselines(const struct run *run, const struct lm *lm,
                     const char *dir)
{
    static const struct run_col col[] = {{"order", 0},
                                         {"train_tokens", 0},
                                         {"val_loss", 5},
                                         {"test_loss", 5},
                                         {"test_ppl", 3}};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "baselines.csv", "model", col, 5);
    for (int k = 0; k < NGRAM_MAX_ORDER; k++) {
        const struct baseline *b = &lm->base[k];
        const double v[5] = {b->order, (double)b->train_tokens, b->val, b->test,
                             exp(b->test)};
        run_csv_row(&csv, ngram_name[k], v);
    }
    run_csv_close(&csv);
}

/* R columns, PREFIX + each relation's key ("margin_noun_det", ...),
 * appended to col at *nc; names holds their R names */
void relation_cols(struct run_col *col, int *nc, char (*names)[24],
                   const char *prefix)
{
    for (int q = 0; q < R; q++) {
        snprintf(names[q], sizeof names[q], "%s%s", prefix, rel_key[q]);
        col[(*nc)++] = (struct run_col){names[q], 4};
    }
}

/* seed_heads.csv: one row per final network (every configuration, every
 * seed): its test loss and its heads summed up as roles.csv sums up a
 * checkpoint: the positional heads by each rule, the largest share of
 * one offset, and each relation's best head's margin over the best
 * fixed offset, on all cases and on the hard ones */
void write_seed_heads(const struct run *run, const struct lm *lm,
                      const char *dir, const struct result *fin)
{
    struct run_col col[8 + 2 * R];
    char names[2 * R][24];
    int nc = 0;
    col[nc++] = (struct run_col){"heads", 0};
    col[nc++] = (struct run_col){"kv_heads", 0};
    col[nc++] = (struct run_col){"lr", 6};
    col[nc++] = (struct run_col){"seed", 0};
    col[nc++] = (struct run_col){"test_loss", 5};
    col[nc++] = (struct run_col){"positional_voita", 0};
    col[nc++] = (struct run_col){"positional_weak", 0};
    col[nc++] = (struct run_col){"top_share", 4};
    relation_cols(col, &nc, names, "margin_");
    relation_cols(col, &nc, names + R, "hard_margin_");
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "seed_heads.csv", NULL, col, nc);
    for (int k = 0; k < lm->n_cfg * lm->sz.seeds; k++) {
        const struct result *r = &fin[k];
        const struct roles_point *p = &r->heads_sum;
        double v[8 + 2 * R];
        int j = 0;
        v[j++] = r->heads, v[j++] = r->kv_heads, v[j++] = r->lr;
        v[j++] = (double)(RUN_FIRST_SEED + r->seed_index);
        v[j++] = r->test_loss, v[j++] = p->n_voita, v[j++] = p->n_weak;
        v[j++] = p->top_share;
        for (int q = 0; q < R; q++)
            v[j++] = p->margin[q];
        for (int q = 0; q < R; q++)
            v[j++] = p->hard_margin[q];
        run_csv_row(&csv, NULL, v);
    }
    run_csv_close(&csv);
}

/* --stop: the tuning networks' first points only */
void write_stopped(const struct run *run, const struct lm *lm, const char *dir,
                   const struct result *tune, double t0)
{
    write_baselines(run, lm, dir);
    write_tuning_curves(lm, dir, tune);
    printf("Stopped run: %d network%s, each stopped after %d of its %d "
           "tokens; wall time %.1f min.\n(written: "
           "%s/curves_tuning.dat, baselines.csv)\n",
           n_tuned(lm, tune), n_tuned(lm, tune) > 1 ? "s" : "", lm->stop,
           lm->sz.tokens, (run_now() - t0) / 60, dir);
}

/* the wall time, the networks trained and kept, the files */
void summary(const struct lm *lm, const char *dir, const struct result *tune,
             const struct result *fin, double wall, long peak)
{
    const int H = lm->n_cfg, S = lm->sz.seeds, n_lr = lm->sz.n_lr;
    printf("\nWall time %.1f s (%.1f min) for %d networks trained (%d "
           "tuning + %d more seeds), %d tokens each; peak memory of a "
           "training process %.0f MB.\n",
           wall, wall / 60, n_tuned(lm, tune) + H * (S - 1), n_tuned(lm, tune),
           H * (S - 1), fin[0].tokens, peak / 1024.0);
    int kept = 0;
    double train_sum = 0;
    for (int k = 0; k < H * n_lr; k++) {
        kept += tune[k].kept;
        train_sum += tune[k].trained ? tune[k].train_s : 0;
    }
    for (int k = 0; k < H * S; k++) { /* seed 1's are the tuning's */
        kept += k % S > 0 && fin[k].kept;
        train_sum += k % S > 0 ? fin[k].train_s : 0;
    }
    if (kept)
        printf("Resumed: %d of those networks were kept from an earlier run "
               "(--resume), so the wall time above is this run's part only. "
               "Every network's training, summed: %.1f s (%.1f min) of one "
               "core.\n",
               kept, train_sum, train_sum / 60);
    printf("(written: %s/table.txt, tuning.csv, results.csv, curves.dat, "
           "offsets.csv, relations.csv, ablation.csv, seed_heads.csv, "
           "row_max.csv, sentence/, generated.txt)\n",
           dir);
}

/* The measured networks of fin (H x S: seed 1's of each configuration
 * that was measured) into meas, and their measures' files into dir:
 * offsets, relations, ablation, the sentence, the tag profiles and each
 * head's heaviest weight. Returns how many networks meas holds. */
int write_measured(const struct run *run, const struct lm *lm, const char *dir,
                   const struct result *fin, const struct result **meas)
{
    int n_meas = 0;
    for (int hc = 0; hc < lm->n_cfg; hc++)
        if (fin[hc * lm->sz.seeds].measured)
            meas[n_meas++] = &fin[hc * lm->sz.seeds];
    write_offsets(run, dir, meas, n_meas);
    write_relations(run, lm, dir, meas, n_meas);
    write_ablation(run, dir, meas, n_meas);
    write_sentence(run, lm, dir, meas, n_meas);
    write_tag_profiles(lm, dir, meas, n_meas);
    write_row_max(run, dir, meas, n_meas);
    return n_meas;
}
