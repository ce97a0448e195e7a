/*
 * findhead.c: --find-head REL --weights DIR (lm.h), chapter 8's exercise
 * "find the head": one trained network, read from its 16-bit weights
 * (weights16.c: DIR/hH_gH_sSEED.f16, the size's largest head count, or
 * --heads N, and seed 1, RUN_FIRST_SEED), never trained; its heads
 * measured on one of the parser's relations (links_lm.h) through the
 * code this program was built with (make find-head builds it on the
 * student's, IMPL=starter): the forward pass runs the student's
 * attention and LayerNorm, and every measure is the student's own
 * chapter 8 function. In turn:
 *   1. every head's weights on the measurement windows (lm->meas, the
 *      validation text; heads_weights()), each head scored on REL's
 *      cases there with relation_score(), whose baseline is the best
 *      fixed offset of those cases; beside it, the offset the head
 *      itself looks back most often (head_offset_profile(): the largest
 *      top_share of offsets 0 .. LM_K), which says whether a head is a
 *      fixed-offset head; a line per head;
 *   2. the head with the largest margin over the offset (the first on a
 *      tie) is chosen, as parsed.c chooses, beside the best-of-N null it
 *      must beat: the 95th percentile of the best margin that as many
 *      heads with no skill beyond the offset reach there by chance
 *      (null_p95());
 *   3. that head alone scored once on the test windows (lm->test) with
 *      relation_score(), beside the test cases' offset, one head's null
 *      on them, the class rule (links_baselines()), and on the hard
 *      cases (neither at the offset nor the nearest word of the class);
 *   4. the head mean-ablated on the test windows (ablate_chosen(), whose
 *      hook calls the student's mean_ablate_head()): what it costs at the
 *      relation's later words and at every position;
 *   5. a verdict in one line: the head follows REL (it beats the null on
 *      the measurement windows, one head's null on the test windows, and
 *      the class rule on them), beats distance only (the two nulls, not
 *      the class rule), or neither.
 * Printed on stdout; nothing written.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int findhead_relation(const struct run *run, const char *key)
{
    char keys[400] = "";
    for (int q = 0; q < LINKS_N_RELATIONS; q++) {
        if (strcmp(links_relation_key(q), key) == 0)
            return q;
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s",
                 q ? " " : "", links_relation_key(q));
    }
    run_fail(run, 2,
             "--find-head %.40s: no such relation; REL is one of %s "
             "(include/links_lm.h says what each joins: J object -> "
             "preposition, A noun -> adjective, ...)",
             key, keys);
    return -1;
}

/* the largest head count of the size (or of --heads) */
static int largest_heads(const struct lm *lm)
{
    int H = 0;
    for (int i = 0; i < lm->sz.n_heads; i++)
        H = lm->sz.heads[i] > H ? lm->sz.heads[i] : H;
    return H;
}

void findhead_path(const struct run *run, const struct lm *lm, char *path,
                   size_t n)
{
    const int H = largest_heads(lm);
    weights16_path(lm->weights_dir, H, H, RUN_FIRST_SEED, path, n);
    FILE *f = fopen(path, "rb");
    if (!f)
        run_fail(run, 1,
                 "--find-head: no weights file %s (the %d-head network of "
                 "seed %llu, size %s): the long run's are committed in "
                 "tools/runs/lm/reference/long/weights/, and lm-experiment "
                 "--size %s --pack RUN_DIR DIR writes a finished run's",
                 path, H, RUN_FIRST_SEED, lm->sz.name, lm->sz.name);
    fclose(f);
}

/* The student's relation_score() of one head's weights A (N, T, T) on
 * cases c (or on its hard ones, hard_only), its baseline and offset into
 * *base and *k if not NULL; a failure ends the program with one line. */
static float score_of(const struct run *run, const float *A, int N, int T,
                      const struct rcases *c, int hard_only, float *base,
                      int *k)
{
    int *w = run_calloc(run, c->n, sizeof *w);
    int *r = run_calloc(run, c->n, sizeof *r);
    int n = 0;
    for (int i = 0; i < c->n; i++)
        if (!hard_only || c->hard[i])
            w[n] = c->word[i], r[n++] = c->related[i];
    float s = 0, b = 0;
    int bk = 0;
    const int rc = relation_score(A, N, T, w, r, n, &s, &b, &bk);
    free(w), free(r);
    if (rc != KIT_OK)
        run_fail(run, 1,
                 "--find-head: your relation_score() returned %s on %d "
                 "cases (make test CH=8)",
                 kit_strerror(rc), n);
    if (base)
        *base = b;
    if (k)
        *k = bk;
    return s;
}

/* Step 1: every head on the measurement windows, a line each; returns
 * the chosen head (l*h + i), its score and margin into row */
static void score_heads(const struct run *run, const struct lm *lm,
                        const float *A, int n_heads, int h,
                        const struct rcases *c, struct parsed_row *row)
{
    const int T = lm->sz.T, N = lm->meas.n;
    const size_t per = (size_t)N * T * T;
    printf("block.head  score  margin  where the head itself looks most "
           "often (your head_offset_profile())\n");
    float best = -2;
    for (int k = 0; k < n_heads; k++) {
        const float *Ak = A + k * per;
        float base;
        int bk;
        const float s = score_of(run, Ak, N, T, c, 0, &base, &bk);
        if (fabsf(base - c->b.offset_base) > 1e-6f || bk != c->b.offset_k)
            run_fail(run, 1,
                     "--find-head: your relation_score() gives the best "
                     "fixed offset as %d back (%.4f of the cases), the "
                     "cases' own is %d back (%.4f): make test CH=8",
                     bk, (double)base, c->b.offset_k, (double)c->b.offset_base);
        float mean_w[LM_K + 2], top[LM_K + 2];
        const int rc = head_offset_profile(Ak, N, T, LM_K, mean_w, top);
        if (rc != KIT_OK)
            run_fail(run, 1,
                     "--find-head: your head_offset_profile() returned %s "
                     "(make test CH=8)",
                     kit_strerror(rc));
        int own = 0;
        for (int j = 1; j <= LM_K; j++)
            own = top[j] > top[own] ? j : own;
        printf("  %d.%-2d      %.3f  %+.3f  %d back in %.2f of its rows%s\n",
               k / h, k % h, (double)s, (double)(s - base), own,
               (double)top[own],
               own == c->b.offset_k ? " (the relation's best offset)" : "");
        if (s - base > best) {
            best = s - base;
            row->head = k, row->meas_score = s, row->meas_margin = best;
        }
    }
}

/* Step 3: the chosen head's weights on every test window, held whole
 * (a chunk of windows at a time through A, which holds every head's
 * weights on that many windows at least: PARSED_CHUNK, or the
 * measurement windows when they are fewer) */
static float *test_weights(const struct run *run, const struct lm *lm,
                           struct gpt_model *m, float *A, int head)
{
    const int T = lm->sz.T, Nt = lm->test.n;
    const int chunk = PARSED_CHUNK < lm->meas.n ? PARSED_CHUNK : lm->meas.n;
    const size_t TT = (size_t)T * T;
    float *At = run_calloc(run, (size_t)Nt * TT, sizeof *At);
    for (int w0 = 0; w0 < Nt; w0 += chunk) {
        const int nw = Nt - w0 < chunk ? Nt - w0 : chunk;
        const int rc = heads_weights(m, lm->test.x + (size_t)w0 * T, nw, T, A);
        if (rc != KIT_OK)
            run_fail(run, 1, "--find-head: the test windows: %s",
                     kit_strerror(rc));
        memcpy(At + (size_t)w0 * TT, A + (size_t)head * nw * TT,
               (size_t)nw * TT * sizeof *At);
    }
    return At;
}

void findhead_main(struct run *run, struct lm *lm, const char *key,
                   const char *impl, const char *links_path)
{
    const int rel = findhead_relation(run, key);
    char path[1100], why[1400];
    findhead_path(run, lm, path, sizeof path);
    const int h = largest_heads(lm);
    const struct gpt_config cfg = model_config(lm, h);
    const int n_heads = cfg.L * h, T = lm->sz.T;
    struct gpt_model m;
    if (gpt_init(&m, &cfg, RUN_FIRST_SEED) != KIT_OK)
        run_fail(run, 1, "--find-head: out of memory");
    if (load_params(&m, path, why, sizeof why) != KIT_OK)
        run_fail(run, 1, "--find-head: %s", why);
    struct rcases meas, test;
    links_cases(run, lm, links_path, "--find-head", rel, 1, &meas, &test);
    if (meas.n == 0 || test.n == 0)
        run_fail(run, 1,
                 "--find-head %s: %d cases on the measurement windows and "
                 "%d on the test windows: none to choose a head on or to "
                 "score it on",
                 key, meas.n, test.n);
    const char *name = links_relation_name(rel);
    printf("Relation %s (%s, the later word looking back) in the %d-head "
           "network of seed %llu (%d blocks of %d head%s), %s, on the code "
           "of %s/\n",
           key, name, h, RUN_FIRST_SEED, cfg.L, h, h > 1 ? "s" : "", path,
           impl);
    printf("The %d measurement windows (validation text): %d cases; the "
           "best fixed offset, %d back, finds %.3f of them\n",
           lm->meas.n, meas.n, meas.b.offset_k, (double)meas.b.offset_base);

    /* 1. every head on the measurement windows */
    const size_t TT = (size_t)T * T;
    float *A = run_calloc(run, (size_t)n_heads * lm->meas.n * TT, sizeof *A);
    int rc = heads_weights(&m, lm->meas.x, lm->meas.n, T, A);
    if (rc != KIT_OK)
        run_fail(run, 1, "--find-head: the measurement windows: %s",
                 kit_strerror(rc));
    struct parsed_row row = {0};
    score_heads(run, lm, A, n_heads, h, &meas, &row);
    const int cl = row.head / h, ci = row.head % h;

    /* 2. the chosen head, and the null it must beat */
    if ((rc = null_p95(&meas, n_heads, &row.null_p95)) != KIT_OK)
        run_fail(run, 1, "--find-head: the null: %s", kit_strerror(rc));
    printf("chosen: head %d.%d, the largest margin over the offset on the "
           "measurement windows: %.3f against %.3f, %+.3f\n",
           cl, ci, (double)row.meas_score, (double)meas.b.offset_base,
           (double)row.meas_margin);
    printf("null: the best of %d heads with no skill beyond the offset "
           "reaches %+.3f there by chance (95th percentile of %d draws); "
           "head %d.%d's %+.3f is %s it\n",
           n_heads, (double)row.null_p95, PARSED_DRAWS, cl, ci,
           (double)row.meas_margin,
           row.meas_margin > row.null_p95 ? "above" : "not above");

    /* 3. that head, once, on the test windows */
    float *At = test_weights(run, lm, &m, A, row.head);
    free(A);
    float test_base, one_p95;
    int test_k;
    row.test_score =
        score_of(run, At, lm->test.n, T, &test, 0, &test_base, &test_k);
    row.test_margin = row.test_score - test_base;
    if ((rc = null_p95(&test, 1, &one_p95)) != KIT_OK)
        run_fail(run, 1, "--find-head: the null: %s", kit_strerror(rc));
    printf("test: head %d.%d scores %.3f on the %d cases of the %d test "
           "windows; the best fixed offset (%d back) %.3f, a margin of "
           "%+.3f (one head with no skill beyond it: %+.3f, 95th "
           "percentile); the class rule (the nearest earlier word of the "
           "related word's class) %.3f\n",
           cl, ci, (double)row.test_score, test.n, lm->test.n, test_k,
           (double)test_base, (double)row.test_margin, (double)one_p95,
           (double)test.b.class_base);
    if (test.b.n_hard > 0) {
        row.hard_score = score_of(run, At, lm->test.n, T, &test, 1, NULL, NULL);
        printf("hard: %d test case%s neither at the offset nor the "
               "nearest word of %s class; head %d.%d finds %.3f of %s\n",
               test.b.n_hard, test.b.n_hard > 1 ? "s are" : " is",
               test.b.n_hard > 1 ? "their" : "its", cl, ci,
               (double)row.hard_score, test.b.n_hard > 1 ? "them" : "it");
    } else
        printf("hard: no test case is hard (each is at the offset or the "
               "nearest word of its class)\n");
    free(At);

    /* 4. the head mean-ablated on the test windows */
    if ((rc = ablate_chosen(lm, &m, &test, &row, 1)) != KIT_OK)
        run_fail(run, 1, "--find-head: the ablation: %s", kit_strerror(rc));
    printf("ablated: head %d.%d's output replaced by its mean (your "
           "mean_ablate_head()): the loss rises by %+.4f at the relation's "
           "%d later words (predicting the token after each; %.3f "
           "there) and by %+.4f over every position (%.3f)\n",
           cl, ci, row.abl_inc_word_next, row.word_positions,
           row.loss_word_next, row.abl_inc_all, row.loss_all);

    /* 5. the verdict */
    const int val_ok = row.meas_margin > row.null_p95;
    const int test_ok = row.test_margin > one_p95;
    const int class_ok = row.test_score > test.b.class_base;
    if (val_ok && test_ok && class_ok)
        printf("verdict: head %d.%d follows %s (%s): it beats the null on "
               "the measurement windows, one head's null on the test "
               "windows, and the class rule (%.3f against %.3f)\n",
               cl, ci, key, name, (double)row.test_score,
               (double)test.b.class_base);
    else if (val_ok && test_ok)
        printf("verdict: head %d.%d beats distance only: past the offset by "
               "more than chance on both texts, but the class rule finds "
               "more of %s's cases (%.3f against %.3f)\n",
               cl, ci, key, (double)test.b.class_base, (double)row.test_score);
    else
        printf("verdict: neither: head %d.%d, the best of %d heads on %s, "
               "is not shown to beat distance: its margin %s\n",
               cl, ci, n_heads, key,
               !val_ok ? "on the measurement windows is within the null"
                       : "on the test windows is within one head's null");
    rcases_free(&meas), rcases_free(&test);
    gpt_free(&m);
}
