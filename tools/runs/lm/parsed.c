/*
 * parsed.c: --parsed RUN_DIR (lm.h): the heads of a finished run's
 * networks scored on the parser's relations (links_lm.h) instead of the
 * tag rules. For every configuration, seed 1's network at the rate the
 * run's tuning chose (RUN_DIR/tuning.csv, read as --remeasure reads it;
 * its parameters from RUN_DIR/models, or with --weights DIR from the
 * kept file DIR/hH_gG_s2017.f16, load_params()) is reloaded, not
 * trained; then, for each relation:
 *   1. every head is scored on the measurement windows (lm->meas, the
 *      validation text): its score is the share of the relation's cases
 *      whose row puts its heaviest weight on the related word (the rule
 *      of heads_lm.h: among j = 0 .. i, the lowest j on a tie), its
 *      margin that minus the best fixed offset's share on the same cases
 *      (links_baselines());
 *   2. the head with the largest margin there (the first on a tie) is
 *      chosen, and scored once on the test windows (lm->test), beside
 *      the test cases' own offset and class baselines; and on the test
 *      cases that are hard (neither at the best offset nor the nearest
 *      word of their class);
 *   3. the chosen head is mean-ablated on the test windows (heads_lm.h:
 *      its output at every position replaced by its mean over every
 *      position of the measurement windows, heads_means(); the forward
 *      pass with heads_set_ablation(), as the run's own ablation scan,
 *      heads_ablation_scan(), does) and the loss compared with the
 *      network's own, position by position. A head's output at position
 *      i feeds the prediction made at i, which is of token i + 1 (and
 *      those after i only through a later block's attention): the cost
 *      of a relation's case is read there, at the position i of its later
 *      word (the word that looks back), on the prediction of the token
 *      after that word ("word_next" in the columns' names).
 *      word_positions counts the distinct positions of the test cases'
 *      later words (a word with two cases counts once); loss_word_next
 *      is the network's mean loss there, abl_inc_word_next what
 *      mean-ablating the chosen head adds to it; loss_all and abl_inc_all
 *      the same over every position of the test windows. A head whose
 *      cost at its relation's words is no larger than its cost over all
 *      positions is not shown to serve the relation.
 * Choosing the best of L*h heads on the measurement windows inflates its
 * margin there; the test score is the honest one, and meas_null_p95 is
 * the 95th percentile of the best margin that L*h heads with no skill
 * beyond the offset would show on the measurement cases
 * (links_best_of_null(): PARSED_DRAWS draws, seed PARSED_SEED).
 *
 * Written into RESULTS_DIR: parsed.csv, one row per configuration and
 * relation; the same printed. The links are --links FILE (default
 * build/ch8/links.tsv: make build/ch8/links.tsv decompresses the
 * committed ones).
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"
#include "links_lm.h"

#include <stdlib.h>
#include <string.h>

#define LR LINKS_N_RELATIONS

void cases_on(const struct run *run, const struct links *lk, int rel,
              const struct windows *w, int T, struct rcases *c)
{
    c->n = links_relation_cases(lk, rel, w->first, w->n, T, NULL, NULL, 0);
    if (c->n < 0)
        run_fail(run, 1, "the cases of %s: %s", links_relation_key(rel),
                 kit_strerror(c->n));
    c->word = run_calloc(run, c->n > 0 ? c->n : 1, sizeof *c->word);
    c->related = run_calloc(run, c->n > 0 ? c->n : 1, sizeof *c->related);
    c->hard = run_calloc(run, c->n > 0 ? c->n : 1, sizeof *c->hard);
    links_relation_cases(lk, rel, w->first, w->n, T, c->word, c->related, c->n);
    const int rc = links_baselines(c->word, c->related, c->n, w->x_class, w->n,
                                   T, c->hard, &c->b);
    if (rc != KIT_OK)
        run_fail(run, 1, "the baselines of %s: %s", links_relation_key(rel),
                 kit_strerror(rc));
}

void rcases_free(struct rcases *c)
{
    free(c->word), free(c->related), free(c->hard);
    c->word = c->related = NULL, c->hard = NULL;
}

void links_cases(const struct run *run, const struct lm *lm,
                 const char *links_path, const char *opt, int q0, int n,
                 struct rcases *meas, struct rcases *test)
{
    struct links lk;
    char err[LINKS_ERR_LEN];
    if (links_read(&lk, links_path, lm->d, err) != KIT_OK)
        run_fail(run, 1, "%s: %s", opt, err);
    for (int q = 0; q < n; q++) {
        cases_on(run, &lk, q0 + q, &lm->meas, lm->sz.T, &meas[q]);
        cases_on(run, &lk, q0 + q, &lm->test, lm->sz.T, &test[q]);
    }
    links_free(&lk);
}

int null_p95(const struct rcases *c, int n_heads, float *p95)
{
    float mean, all_mean, all_p95;
    return links_best_of_null(&c->n, &c->b.offset_base, 1, n_heads,
                              PARSED_DRAWS, PARSED_SEED, &mean, p95, &all_mean,
                              &all_p95);
}

/* The cases c0 .. c1 - 1 (flat positions from window w0 on) whose row in
 * A (windows w0 .., T, T; one head) has its heaviest weight on the
 * related word, those that are hard too into *hard_hits. */
static long hits(const float *A, int T, int w0, const struct rcases *c, int c0,
                 int c1, long *hard_hits)
{
    long n = 0;
    for (int k = c0; k < c1; k++) {
        const int p = c->word[k] - w0 * T, i = p % T;
        const float *row = A + (size_t)p * T;
        int best = 0;
        for (int j = 1; j <= i; j++)
            if (row[j] > row[best])
                best = j;
        const int hit = best == c->related[k] - w0 * T - (p - i);
        n += hit;
        if (hard_hits)
            *hard_hits += hit && c->hard[k];
    }
    return n;
}

/* The first case at or after window w. */
static int case_at(const struct rcases *c, int T, int w)
{
    int k = 0;
    while (k < c->n && c->word[k] / T < w)
        k++;
    return k;
}

/* The map of one network: each head's own best relation on meas (the
 * largest margin over the best offset, among all LR relations; the
 * first on a tie), that pair scored once on test. */
struct head_map {
    int rel;
    float meas_margin, test_score, test_margin;
};

/* The loss of every prediction of windows w (w->n, T), with m's hook as
 * it is: loss (w->n, T), the one made at position i of window n (of its
 * token i + 1) at n*T + i. */
static int window_losses(struct gpt_model *m, const struct windows *w, int T,
                         float *loss)
{
    for (int s = 0; s < w->n; s += m->cfg.B) {
        const int B = w->n - s < m->cfg.B ? w->n - s : m->cfg.B;
        const size_t at = (size_t)s * T;
        const int rc = gpt_forward(m, w->x + at, w->y + at, B, T);
        if (rc != KIT_OK)
            return rc;
        memcpy(loss + at, m->a.losses, (size_t)B * T * sizeof *loss);
    }
    return KIT_OK;
}

/* Step 3: each chosen head (out[q].head, q < n_rows) mean-ablated on
 * the test windows, its means from the measurement windows; once per
 * head, for every row that chose it (test[q]: row q's cases). */
int ablate_chosen(const struct lm *lm, struct gpt_model *m,
                  const struct rcases *test, struct parsed_row *out, int n_rows)
{
    const int T = lm->sz.T, h = m->cfg.n_heads, d_head = m->cfg.C / h;
    const int H = m->cfg.L * h;
    const size_t n = (size_t)lm->test.n * T;
    float *means = malloc((size_t)H * d_head * sizeof *means);
    float *base = malloc(n * sizeof *base), *abl = malloc(n * sizeof *abl);
    int rc = means && base && abl ? KIT_OK : KIT_E_NOMEM;
    if (rc == KIT_OK)
        rc = heads_means(m, lm->meas.x, lm->meas.n, T, means);
    heads_set_ablation(m, NULL);
    if (rc == KIT_OK)
        rc = window_losses(m, &lm->test, T, base);
    double base_all = 0;
    for (size_t p = 0; p < n && rc == KIT_OK; p++)
        base_all += base[p];
    base_all /= (double)n;
    for (int k = 0; k < H && rc == KIT_OK; k++) {
        int used = 0;
        for (int q = 0; q < n_rows; q++)
            used |= out[q].head == k;
        if (!used)
            continue;
        const struct gpt_ablation ab = {k / h, k % h,
                                        means + (size_t)k * d_head};
        heads_set_ablation(m, &ab);
        rc = window_losses(m, &lm->test, T, abl);
        heads_set_ablation(m, NULL);
        double inc_all = 0;
        for (size_t p = 0; p < n && rc == KIT_OK; p++)
            inc_all += (double)abl[p] - base[p];
        for (int q = 0; q < n_rows && rc == KIT_OK; q++) {
            if (out[q].head != k)
                continue;
            /* the cases are in the order of window, then word: a word
             * with two cases comes twice in a row */
            double sb = 0, si = 0;
            int np = 0;
            for (int c = 0; c < test[q].n; c++) {
                const int p = test[q].word[c];
                if (c > 0 && p == test[q].word[c - 1])
                    continue;
                sb += base[p], si += (double)abl[p] - base[p], np++;
            }
            out[q].word_positions = np;
            out[q].loss_word_next = np ? sb / np : 0;
            out[q].abl_inc_word_next = np ? si / np : 0;
            out[q].loss_all = base_all;
            out[q].abl_inc_all = inc_all / (double)n;
        }
    }
    free(means), free(base), free(abl);
    return rc;
}

static int parsed_network(const struct lm *lm, struct gpt_model *m,
                          const struct rcases *meas, const struct rcases *test,
                          struct parsed_row *out, struct head_map *map,
                          float *map_null)
{
    const int T = lm->sz.T, H = m->cfg.L * m->cfg.n_heads;
    const int Nm = lm->meas.n, Nt = lm->test.n;
    const int chunk = PARSED_CHUNK < Nm ? PARSED_CHUNK : Nm;
    const size_t TT = (size_t)T * T;
    const int most = Nm > chunk ? Nm : chunk;
    float *A = malloc((size_t)H * most * TT * sizeof *A);
    float *margin = malloc((size_t)H * LR * sizeof *margin); /* (H, LR) */
    if (!A || !margin) {
        free(A), free(margin);
        return KIT_E_NOMEM;
    }
    int rc = heads_weights(m, lm->meas.x, Nm, T, A);
    for (int q = 0; q < LR && rc == KIT_OK; q++) {
        out[q].head = 0;
        float best = -2;
        for (int k = 0; k < H; k++) {
            const long n = hits(A + (size_t)k * Nm * TT, T, 0, &meas[q], 0,
                                meas[q].n, NULL);
            const float s = meas[q].n ? (float)n / (float)meas[q].n : 0.0f;
            margin[k * LR + q] = s - meas[q].b.offset_base;
            if (s - meas[q].b.offset_base > best) {
                best = s - meas[q].b.offset_base;
                out[q].head = k, out[q].meas_score = s,
                out[q].meas_margin = best;
            }
        }
        rc = null_p95(&meas[q], H, &out[q].null_p95);
    }
    /* the map: each head's best relation, and the best of H heads over
     * LR relations by chance */
    int n_cases[LR];
    float base[LR], mean[LR], p95[LR], all_mean; /* mean, p95: each r's */
    for (int q = 0; q < LR; q++)
        n_cases[q] = meas[q].n, base[q] = meas[q].b.offset_base;
    for (int k = 0; k < H && rc == KIT_OK; k++) {
        map[k].rel = 0;
        for (int q = 1; q < LR; q++)
            if (margin[k * LR + q] > margin[k * LR + map[k].rel])
                map[k].rel = q;
        map[k].meas_margin = margin[k * LR + map[k].rel];
    }
    free(margin);
    if (rc == KIT_OK)
        rc = links_best_of_null(n_cases, base, LR, H, PARSED_DRAWS, PARSED_SEED,
                                mean, p95, &all_mean, map_null);
    /* the test windows, a chunk at a time */
    long th[LR] = {0}, hh[LR] = {0}, tm[MAX_HL] = {0};
    for (int w0 = 0; w0 < Nt && rc == KIT_OK; w0 += chunk) {
        const int nw = Nt - w0 < chunk ? Nt - w0 : chunk;
        rc = heads_weights(m, lm->test.x + (size_t)w0 * T, nw, T, A);
        for (int q = 0; q < LR && rc == KIT_OK; q++)
            th[q] += hits(A + (size_t)out[q].head * nw * TT, T, w0, &test[q],
                          case_at(&test[q], T, w0),
                          case_at(&test[q], T, w0 + nw), &hh[q]);
        for (int k = 0; k < H && rc == KIT_OK; k++) {
            const struct rcases *c = &test[map[k].rel];
            tm[k] += hits(A + (size_t)k * nw * TT, T, w0, c, case_at(c, T, w0),
                          case_at(c, T, w0 + nw), NULL);
        }
    }
    for (int k = 0; k < H && rc == KIT_OK; k++) {
        const struct rcases *c = &test[map[k].rel];
        map[k].test_score = c->n ? (float)tm[k] / (float)c->n : 0;
        map[k].test_margin = map[k].test_score - c->b.offset_base;
    }
    for (int q = 0; q < LR && rc == KIT_OK; q++) {
        const int n_hard = test[q].b.n_hard;
        out[q].test_score = test[q].n ? (float)th[q] / (float)test[q].n : 0;
        out[q].test_margin = out[q].test_score - test[q].b.offset_base;
        out[q].hard_score = n_hard ? (float)hh[q] / (float)n_hard : 0;
    }
    free(A);
    if (rc == KIT_OK)
        rc = ablate_chosen(lm, m, test, out, LR);
    return rc;
}

/* The map of one network: a row per head into csv, and printed */
static void write_map(struct run_csv *csv, const struct gpt_config *cfg,
                      const struct head_map *map, float map_null,
                      const struct rcases *meas, const struct rcases *test)
{
    const int h = cfg->n_heads, H = cfg->L * h;
    printf("  the map: each head's own best relation on the measurement "
           "windows (best of %d heads over %d relations by chance, p95 "
           "%+.3f), scored once on test:\n",
           H, LR, (double)map_null);
    for (int k = 0; k < H; k++) {
        const struct head_map *x = &map[k];
        const struct rcases *cm = &meas[x->rel], *ct = &test[x->rel];
        const double v[] = {h,
                            k / h,
                            k % h,
                            cm->n,
                            x->meas_margin,
                            map_null,
                            ct->n,
                            x->test_score,
                            ct->b.offset_base,
                            x->test_margin,
                            ct->b.class_base};
        run_csv_row(csv, links_relation_key(x->rel), v);
        printf("    %d.%-2d %-4s %+.3f   test %.3f (offset %.3f, %+.3f; "
               "class %.3f)\n",
               k / h, k % h, links_relation_key(x->rel), (double)x->meas_margin,
               (double)x->test_score, (double)ct->b.offset_base,
               (double)x->test_margin, (double)ct->b.class_base);
    }
}

void parsed_main(struct run *run, struct lm *lm, const char *dir,
                 const char *from, const char *links_path)
{
    for (int k = 0; k < 2; k++) { /* what a finished run wrote */
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", from,
                 k ? "results.csv" : "tuning.csv");
        FILE *f = fopen(path, "r");
        if (!f)
            run_fail(run, 1, "--parsed: cannot read %s (a finished run's)",
                     path);
        fclose(f);
    }
    free(remeasure_want(run, lm, from)); /* lm->chosen from its tuning.csv */
    static struct rcases meas[LR], test[LR];
    links_cases(run, lm, links_path, "--parsed", 0, LR, meas, test);
    char models[512];
    snprintf(models, sizeof models, "%s/models", from);
    lm->models_dir = models;
    make_dir(run, dir);
    struct run_col col[] = {{"heads", 0},
                            {"kv_heads", 0},
                            {"lr", 6},
                            {"block", 0},
                            {"head", 0},
                            {"meas_cases", 0},
                            {"meas_score", 4},
                            {"meas_base", 4},
                            {"meas_margin", 4},
                            {"meas_null_p95", 4},
                            {"test_cases", 0},
                            {"test_score", 4},
                            {"test_base", 4},
                            {"test_margin", 4},
                            {"test_class_base", 4},
                            {"test_hard", 0},
                            {"test_hard_score", 4},
                            {"word_positions", 0},
                            {"loss_word_next", 4},
                            {"abl_inc_word_next", 5},
                            {"loss_all", 4},
                            {"abl_inc_all", 5}};
    const int nc = (int)(sizeof col / sizeof col[0]);
    struct run_csv csv, mcsv;
    run_csv_open(&csv, run, dir, "parsed.csv", "relation", col, nc);
    struct run_col mcol[] = {
        {"heads", 0},       {"block", 0},          {"head", 0},
        {"meas_cases", 0},  {"meas_margin", 4},    {"meas_null_p95", 4},
        {"test_cases", 0},  {"test_score", 4},     {"test_base", 4},
        {"test_margin", 4}, {"test_class_base", 4}};
    run_csv_open(&mcsv, run, dir, "parsed_heads.csv", "relation", mcol,
                 (int)(sizeof mcol / sizeof mcol[0]));
    printf("The parser's relations: each network's best head on the %d "
           "measurement windows (its margin over the best offset), scored "
           "once on the %d test windows\n",
           lm->meas.n, lm->test.n);
    for (int hc = 0; hc < lm->n_cfg; hc++) {
        const struct gpt_config cfg = model_config(lm, lm->cfg_h[hc]);
        const int g = lm->cfg_g[hc], li = lm->chosen[hc];
        struct gpt_model m;
        char path[600], name[64];
        cfg_label(lm, hc, name, sizeof name);
        if (lm->weights_dir) /* the kept files (weights16.c) */
            weights16_path(lm->weights_dir, cfg.n_heads, g, RUN_FIRST_SEED,
                           path, sizeof path);
        else
            model_path(lm, cfg.n_heads, g, li, path, sizeof path);
        int rc = gpt_init(&m, &cfg, RUN_FIRST_SEED);
        if (rc != KIT_OK)
            run_fail(run, 1, "%s: %s", name, kit_strerror(rc));
        if (g < cfg.n_heads)
            gpt_kv_share(&m, g, GPT_KV_COPY);
        char why[300];
        if (load_params(&m, path, why, sizeof why) != KIT_OK)
            run_fail(run, 1, "--parsed: %s (%s, seed %llu)", why, name,
                     RUN_FIRST_SEED);
        struct parsed_row row[LR];
        struct head_map map[MAX_HL];
        float map_null = 0;
        rc = parsed_network(lm, &m, meas, test, row, map, &map_null);
        gpt_free(&m);
        if (rc != KIT_OK)
            run_fail(run, 1, "%s: %s", name, kit_strerror(rc));
        printf("\n%s (lr %g): relation, block.head, meas score/base/margin "
               "(null p95), test score/base/margin, class rule, hard score; "
               "the head mean-ablated: the loss's increase at the "
               "relation's words (predicting the next token) and at every "
               "position\n",
               name, (double)lm->sz.lr[li]);
        for (int q = 0; q < LR; q++) {
            const struct parsed_row *r = &row[q];
            const int l = r->head / cfg.n_heads, i = r->head % cfg.n_heads;
            const double v[] = {cfg.n_heads,
                                g,
                                lm->sz.lr[li],
                                l,
                                i,
                                meas[q].n,
                                r->meas_score,
                                meas[q].b.offset_base,
                                r->meas_margin,
                                r->null_p95,
                                test[q].n,
                                r->test_score,
                                test[q].b.offset_base,
                                r->test_margin,
                                test[q].b.class_base,
                                test[q].b.n_hard,
                                r->hard_score,
                                r->word_positions,
                                r->loss_word_next,
                                r->abl_inc_word_next,
                                r->loss_all,
                                r->abl_inc_all};
            run_csv_row(&csv, links_relation_key(q), v);
            printf("  %-4s %d.%-2d  %.3f %.3f %+.3f (%.3f)  %.3f %.3f %+.3f  "
                   "%.3f  %.3f  %+.4f %+.4f\n",
                   links_relation_key(q), l, i, (double)r->meas_score,
                   (double)meas[q].b.offset_base, (double)r->meas_margin,
                   (double)r->null_p95, (double)r->test_score,
                   (double)test[q].b.offset_base, (double)r->test_margin,
                   (double)test[q].b.class_base, (double)r->hard_score,
                   r->abl_inc_word_next, r->abl_inc_all);
        }
        write_map(&mcsv, &cfg, map, map_null, meas, test);
    }
    run_csv_close(&csv);
    run_csv_close(&mcsv);
    printf("(written: %s/parsed.csv, parsed_heads.csv)\n", dir);
    for (int q = 0; q < LR; q++)
        rcases_free(&meas[q]), rcases_free(&test[q]);
}
