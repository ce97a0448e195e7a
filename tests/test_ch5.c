/*
 * test_ch5.c: chapter 5 tests, the experiment (experiment.h).
 *
 * Chapter 5 has no exercise: its code (given/experiment.c) is given.
 * These tests check that it trains, on top of the student's chapters 1
 * to 4: the loss falls, the same seed gives the same numbers whatever the
 * number of worker processes, every network compared has the same number
 * of parameters, the whole network's gradient agrees with finite
 * differences (also with the score scale changed and a head knocked
 * out), the content task's targets are right, and the ablation of a
 * hand-built network gives the heatmap it must. On the starter stubs
 * every test fails at its first status check, with KIT_E_TODO.
 *
 * Dimension letters (see experiment.h): T = tokens, S = symbols,
 * R = relations, d_model = embedding width, h = heads, N = sequences,
 * P = parameters.
 */
#include "experiment.h"
#include "kit_test.h"
#include "rng.h"

#include "../given/test_hooks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A small run, a fraction of a second: short sequences, small batches. */
static struct exp_config small_config(int n_heads, int steps)
{
    struct exp_config c = exp_default_config(n_heads);
    c.T = 6;
    c.batch = 8;
    c.steps = steps;
    return c;
}

/* The status check every test starts with. The experiment's code is
 * given, so a KIT_E_TODO here comes from a starter stub it calls. */
static int ready(const char *call, int got)
{
    if (got == KIT_E_TODO)
        return KIT_CHECK(0,
                         "%s returned KIT_E_TODO: the experiment runs on "
                         "your code from chapters 1 to 4, and a function "
                         "there is still a starter stub. Finish those "
                         "chapters first (make test CH=4).",
                         call);
    return KIT_EXPECT_STATUS(call, got, KIT_OK);
}

/* Mean of x[from .. from+n-1]. */
static double mean(const float *x, int from, int n)
{
    double s = 0;
    for (int i = from; i < from + n; i++)
        s += x[i];
    return s / n;
}

KIT_TEST(exp_params_equal,
         "experiment: 1, 2, 4, 8 and 16 heads, the scale control and the "
         "content task's networks: equal parameter counts")
{
    enum { N = 9 };
    static const int heads[N] = {1, 2, 4, 8, 16, 1, 1, 2, 2};
    static const int task[N] = {0, 0, 0, 0, 0, 0, 1, 1, 1};
    static const float scale[N] = {1, 1, 1, 1, 1, 2, 1, 1, 2};
    for (int k = 0; k < N; k++) {
        struct exp_model m;
        struct exp_config c = task[k] ? exp_content_config(heads[k])
                                      : exp_default_config(heads[k]);
        c.score_scale = scale[k];
        /* counted here independently: E_tok, E_pos, W_q W_k W_v W_o,
         * W_r, b_r; the readout has R blocks of S */
        const int d = c.d_model, S = c.n_symbols, RS = (task[k] ? 2 : 4) * S;
        const int want = S * d + c.T * d + 4 * d * d + d * RS + RS;
        char call[96];
        snprintf(call, sizeof call,
                 "exp_model_init(%s task, n_heads = %d, score_scale = %g)",
                 task[k] ? "content" : "position", heads[k], scale[k]);
        if (!ready(call, exp_model_init(&m, &c)))
            return;
        int got = m.n_params;
        exp_model_free(&m);
        if (!KIT_CHECK(got == want,
                       "%s: %d parameters, expected %d. Splitting d_model "
                       "into heads, or scaling the scores, must not change "
                       "the size of W_q, W_k, W_v, W_o (d_model x d_model "
                       "each).",
                       call, got, want))
            return;
    }
}

KIT_TEST(exp_rejects_bad_heads,
         "experiment: 3 heads cannot split d_model = 32: KIT_E_HEADS")
{
    struct exp_model m;
    struct exp_config c = exp_default_config(3);
    int status = exp_model_init(&m, &c);
    if (status == KIT_OK)
        exp_model_free(&m);
    if (status == KIT_E_TODO) /* the stub's message, not a wrong code */
        ready("exp_model_init(3 heads, d_model 32)", status);
    else
        KIT_EXPECT_STATUS("exp_model_init(3 heads, d_model 32)", status,
                          KIT_E_HEADS);
}

KIT_TEST(exp_loss_falls, "experiment: 300 steps of Adam cut the loss by "
                         "more than 30%")
{
    enum { STEPS = 300, AVG = 20 };
    struct exp_config c = small_config(2, STEPS);
    struct exp_model m;
    float losses[STEPS];
    if (!ready("exp_model_init(2 heads)", exp_model_init(&m, &c)))
        return;
    kit_poison(losses, STEPS);
    kit_about_to_call("exp_train(300 steps)");
    int status = exp_train(&m, losses);
    exp_model_free(&m);
    if (!ready("exp_train(300 steps)", status))
        return;
    double first = mean(losses, 0, AVG), last = mean(losses, STEPS - AVG, AVG);
    KIT_CHECK(isfinite(last) && last < 0.7 * first,
              "the loss went from %.4f (mean of the first %d steps) to %.4f "
              "(the last %d): it should fall by more than 30%%. A wrong "
              "sign or a missing term in mha_backward() stops the "
              "training; run the chapter 4 tests (make test CH=4).",
              first, AVG, last, AVG);
}

KIT_TEST(exp_same_seed_same_numbers,
         "experiment: two runs with the same seed give bit-identical losses")
{
    enum { STEPS = 40 };
    struct exp_config c = small_config(4, STEPS);
    float losses[2][STEPS];
    float check[2] = {0, 0};
    for (int run = 0; run < 2; run++) {
        struct exp_model m;
        if (!ready("exp_model_init(4 heads)", exp_model_init(&m, &c)))
            return;
        kit_poison(losses[run], STEPS);
        kit_about_to_call("exp_train(40 steps)");
        int status = exp_train(&m, losses[run]);
        check[run] = m.params[m.n_params - 1];
        exp_model_free(&m);
        if (!ready("exp_train(40 steps)", status))
            return;
    }
    int bad = -1;
    for (int s = 0; s < STEPS && bad < 0; s++)
        if (memcmp(&losses[0][s], &losses[1][s], sizeof(float)) != 0)
            bad = s;
    if (!KIT_CHECK(bad < 0,
                   "step %d: the loss was %.9g in the first run and %.9g "
                   "in the second, with the same seed. Something reads "
                   "memory it never wrote (run with SAN=1), or uses "
                   "rand() or the clock.",
                   bad, bad < 0 ? 0.0 : losses[0][bad],
                   bad < 0 ? 0.0 : losses[1][bad]))
        return;
    KIT_CHECK(memcmp(&check[0], &check[1], sizeof(float)) == 0,
              "the trained weights differ between two runs with the same "
              "seed (%.9g against %.9g)",
              check[0], check[1]);
}

/* Summed loss of m on one sequence x (T). */
static int loss_of(struct exp_model *m, const int *x, double *loss)
{
    *loss = 0;
    return exp_forward(m, x, loss, NULL, NULL);
}

/* Where parameter number p sits: "W_q[3][5] (head 1's columns)". */
static void describe(const struct exp_model *m, int p, char *buf, size_t n)
{
    const int d = m->cfg.d_model, d_head = d / m->cfg.n_heads;
    const int S = m->cfg.n_symbols;
    const int kv = (int)(m->attn.W_v - m->attn.W_k) / d; /* d_model or less */
    const struct {
        const char *name;
        const float *at;
        int cols, head_by; /* 0: no head, 1: by column, 2: by row */
    } block[8] = {{"E_tok", m->E_tok, d, 0},
                  {"E_pos", m->E_pos, d, 0},
                  {"W_q", m->attn.W_q, d, 1},
                  {"W_k", m->attn.W_k, kv, 1},
                  {"W_v", m->attn.W_v, kv, 1},
                  {"W_o", m->attn.W_o, d, 2},
                  {"W_r", m->W_r, m->n_relations * S, 0},
                  {"b_r", m->b_r, m->n_relations * S, 0}};
    int k = 7;
    while (k > 0 && m->params + p < block[k].at)
        k--;
    int i = (int)(m->params + p - block[k].at);
    int row = i / block[k].cols, col = i % block[k].cols;
    if (block[k].head_by == 1 && block[k].cols < d) /* shared K/V heads */
        snprintf(buf, n, "%s[%d][%d] (in K/V head %d's columns)", block[k].name,
                 row, col, col / d_head);
    else if (block[k].head_by == 1)
        snprintf(buf, n, "%s[%d][%d] (in head %d's columns)", block[k].name,
                 row, col, col / d_head);
    else if (block[k].head_by == 2)
        snprintf(buf, n, "%s[%d][%d] (in the rows head %d's output meets)",
                 block[k].name, row, col, row / d_head);
    else if (k == 7)
        snprintf(buf, n, "%s[%d]", block[k].name, col);
    else
        snprintf(buf, n, "%s[%d][%d]", block[k].name, row, col);
}

/* The whole network's gradient against central differences, PER entries
 * of each of the 8 parameter blocks, spread over the heads. */
static void gradient_check(struct exp_config c, unsigned long long heads_off,
                           const char *what)
{
    enum { PER = 4, KINDS = 8, N = PER * KINDS };
    struct exp_model m;
    char call[128];
    snprintf(call, sizeof call, "exp_model_init(%s)", what);
    if (!ready(call, exp_model_init(&m, &c)))
        return;
    m.heads_off = heads_off;
    int x[8];
    struct rng r;
    rng_seed(&r, 5);
    exp_make_batch(&r, x, 1, c.T, c.n_symbols);
    const int d = c.d_model, RS = m.n_relations * c.n_symbols;
    const int L = c.n_layers > 1 ? c.n_layers : 1; /* stacked layers */
    const int kv = (int)(m.attn.W_v - m.attn.W_k) / (L * d); /* W_k's width */
    const float *start[KINDS] = {
        m.E_tok + x[2] * d, m.E_pos,    m.attn.W_q, m.attn.W_k,
        m.attn.W_v,         m.attn.W_o, m.W_r,      m.b_r};
    const int size[KINDS] = {d,          c.T * d,   L * d * d, L * d * kv,
                             L * d * kv, L * d * d, d * RS,    RS};
    int at[N];
    for (int k = 0; k < KINDS; k++)
        for (int j = 0; j < PER; j++) /* scattered: rows and heads differ */
            at[k * PER + j] = (int)(start[k] - m.params) +
                              (j * size[k] / PER + 3 * j + 1) % size[k];

    /* the analytic gradient of the summed loss */
    double loss;
    memset(m.grads, 0, (size_t)m.n_params * sizeof(float));
    kit_about_to_call("exp_forward() then exp_backward()");
    int status = loss_of(&m, x, &loss);
    if (status == KIT_OK)
        status = exp_backward(&m, x, 1.0f);
    if (!ready("exp_forward() then exp_backward()", status)) {
        exp_model_free(&m);
        return;
    }
    float got[N];
    double want[N];
    /* (L(p + h) - L(p - h)) / 2h, every loss at once */
    int index[2 * N];
    float value[2 * N];
    double loss2[2 * N];
    for (int i = 0; i < N; i++) {
        got[i] = m.grads[at[i]];
        index[2 * i] = index[2 * i + 1] = at[i];
        value[2 * i] = m.params[at[i]] + 1e-2f;
        value[2 * i + 1] = m.params[at[i]] - 1e-2f;
    }
    exp_loss_probe(&m, x, 2 * N, index, value, loss2);
    for (int i = 0; i < N; i++)
        want[i] = (loss2[2 * i] - loss2[2 * i + 1]) /
                  ((double)value[2 * i] - (double)value[2 * i + 1]);
    int bad = -1;
    for (int i = 0; i < N && bad < 0; i++)
        if (!(fabs(got[i] - want[i]) <= 1e-3 + 1e-3 * fabs(want[i])))
            bad = i;
    char where[96] = "";
    int in_layer = 0; /* W_q, W_k, W_v or W_o */
    if (bad >= 0) {
        describe(&m, at[bad], where, sizeof where);
        in_layer = at[bad] >= (int)(m.attn.W_q - m.params) &&
                   at[bad] < (int)(m.W_r - m.params);
    }
    exp_model_free(&m);
    KIT_CHECK(bad < 0,
              "%s: d loss / d %s is %.6g, but finite differences give "
              "%.6g. The experiment's own code is given, so the gradient "
              "of %s comes from your mha_backward() or matmul_backward(): "
              "%s",
              what, where, bad < 0 ? 0.0 : (double)got[bad],
              bad < 0 ? 0.0 : want[bad], where,
              in_layer ? "look at how that head's block of the weight receives "
                         "its gradient (make test CH=4)."
                       : "run the chapter 4 tests (make test CH=4).");
}

KIT_TEST(exp_gradient_matches_finite_differences,
         "experiment: the whole network's gradient matches finite "
         "differences")
{
    struct exp_config c = exp_default_config(2);
    c.T = 5;
    c.d_model = 8;
    c.qk_init = c.vo_init = 1.0f; /* a gentle network: small h is exact */
    gradient_check(c, 0, "2 heads, d_model 8");
}

KIT_TEST(exp_gradient_scaled_and_ablated,
         "experiment: the gradient is right with the score scale changed "
         "and a head knocked out")
{
    struct exp_config c = exp_default_config(4);
    c.T = 5;
    c.d_model = 8;
    c.qk_init = c.vo_init = 1.0f;
    c.score_scale = 2.0f;
    gradient_check(c, 1ULL << 2,
                   "4 heads, d_model 8, score_scale 2, head 2 off");
}

KIT_TEST(exp_stack_gradient_matches_finite_differences,
         "experiment: with 2 and 3 stacked layers (the depth control) the "
         "gradient matches finite differences")
{
    struct exp_config c = exp_default_config(1);
    c.T = 5;
    c.d_model = 8;
    c.qk_init = c.vo_init = 1.0f;
    c.n_layers = 2;
    gradient_check(c, 0, "1 head in 2 layers, d_model 8");
    c = exp_default_config(2);
    c.T = 5;
    c.d_model = 8;
    c.qk_init = c.vo_init = 1.0f;
    c.n_layers = 3;
    gradient_check(c, 0, "2 heads in 3 layers, d_model 8");
}

KIT_TEST(exp_stack_params_and_one_layer,
         "experiment: a stack of L layers has L times the attention "
         "parameters, and n_layers 1 is the one-layer network, bit for bit")
{
    struct exp_config c = exp_default_config(1);
    c.T = 5;
    c.d_model = 8;
    struct exp_model one, also, four;
    c.n_layers = 0;
    if (!ready("exp_model_init(n_layers 0)", exp_model_init(&one, &c)))
        return;
    c.n_layers = 1;
    if (!ready("exp_model_init(n_layers 1)", exp_model_init(&also, &c))) {
        exp_model_free(&one);
        return;
    }
    c.n_layers = 4;
    if (!ready("exp_model_init(n_layers 4)", exp_model_init(&four, &c))) {
        exp_model_free(&one);
        exp_model_free(&also);
        return;
    }
    const int d = 8;
    int x[5] = {1, 4, 2, 9, 3};
    double a = 0, b = 0;
    kit_about_to_call("exp_forward(one layer)");
    int status = exp_forward(&one, x, &a, NULL, NULL);
    if (status == KIT_OK)
        status = exp_forward(&also, x, &b, NULL, NULL);
    KIT_EXPECT_STATUS("exp_forward(one layer)", status, KIT_OK);
    KIT_CHECK(a == b,
              "n_layers 0 and 1 should be the same network, but "
              "their losses are %.9g and %.9g",
              a, b);
    KIT_CHECK(four.n_params == one.n_params + 3 * 4 * d * d,
              "4 layers should add 3 x 4 d_model^2 = %d parameters to the "
              "one layer's %d, but the count is %d",
              3 * 4 * d * d, one.n_params, four.n_params);
    four.heads_off = 1;
    KIT_EXPECT_STATUS("exp_forward(4 layers, a head knocked out)",
                      exp_forward(&four, x, NULL, NULL, NULL), KIT_E_SIZE);
    exp_model_free(&one);
    exp_model_free(&also);
    exp_model_free(&four);
    c.score_scale = 2.0f;
    KIT_EXPECT_STATUS("exp_model_init(4 layers, score_scale 2)",
                      exp_model_init(&four, &c), KIT_E_SIZE);
}

KIT_TEST(exp_gqa_gradient_matches_finite_differences,
         "experiment: with chapter 6's grouped-query layer (4 query heads, "
         "1 and 2 K/V heads) the gradient matches finite differences")
{
    struct exp_config c = exp_default_config(4);
    c.T = 5;
    c.d_model = 8;
    c.qk_init = c.vo_init = 1.0f;
    c.layer = &exp_gqa_layer;
    c.n_kv_heads = 2;
    gradient_check(c, 0, "4 query heads sharing 2 K/V heads, d_model 8");
    c.n_kv_heads = 1;
    gradient_check(c, 1ULL << 1,
                   "4 query heads sharing 1 K/V head, d_model 8, head 1 off");
}

/* Two backward passes on one input, the gradients zeroed before each,
 * must give the same gradient, bit for bit. The finite-difference check
 * above makes one pass on a fresh model, whose buffers start at zero, so
 * a backward pass that adds into a buffer it never resets (d_X, if the
 * copy of d_H into it is dropped, as Question 5.2 invites) passes there
 * and fails here: the second pass adds to what the first left behind. */
KIT_TEST(exp_backward_twice_agrees,
         "experiment: two backward passes on one input give the same "
         "gradient (every buffer a pass adds into is reset first)")
{
    struct exp_config c = exp_default_config(4);
    c.T = 6;
    struct exp_model m;
    if (!ready("exp_model_init(4 heads)", exp_model_init(&m, &c)))
        return;
    int x[6];
    struct rng r;
    rng_seed(&r, 11);
    exp_make_batch(&r, x, 1, c.T, c.n_symbols);
    const size_t bytes = (size_t)m.n_params * sizeof(float);
    float *first = malloc(bytes);
    if (!KIT_CHECK(first != NULL, "out of memory")) {
        exp_model_free(&m);
        return;
    }
    int bad = -1, status = KIT_OK;
    kit_about_to_call("exp_forward() then exp_backward(), twice");
    for (int pass = 0; pass < 2 && status == KIT_OK; pass++) {
        double loss = 0;
        memset(m.grads, 0, bytes);
        status = exp_forward(&m, x, &loss, NULL, NULL);
        if (status == KIT_OK)
            status = exp_backward(&m, x, 1.0f);
        if (status == KIT_OK && pass == 0)
            memcpy(first, m.grads, bytes);
    }
    if (ready("exp_forward() then exp_backward(), twice", status))
        for (int i = 0; i < m.n_params && bad < 0; i++)
            if (!(first[i] == m.grads[i]))
                bad = i;
    char where[96] = "";
    if (bad >= 0)
        describe(&m, bad, where, sizeof where);
    KIT_CHECK(bad < 0,
              "the second backward pass on the same input gives d loss / "
              "d %s = %.6g, the first %.6g. Something the backward pass "
              "adds into is not reset at its start, so the second pass "
              "adds to what the first left there (the given exp_backward() "
              "copies d_H into d_X before the layer adds into it; without "
              "the residual, d_X must be zeroed instead).",
              where, bad < 0 ? 0.0 : (double)m.grads[bad],
              bad < 0 ? 0.0 : (double)first[bad]);
    free(first);
    exp_model_free(&m);
}

/* The gradient of the whole network on one sequence, from zero. */
static int grads_of(struct exp_config c, const int *x, float *g, int P)
{
    struct exp_model m;
    int status = exp_model_init(&m, &c);
    if (status != KIT_OK)
        return status;
    if (m.n_params != P) {
        exp_model_free(&m);
        return KIT_E_SIZE;
    }
    double loss = 0;
    kit_about_to_call("exp_forward() then exp_backward()");
    status = exp_forward(&m, x, &loss, NULL, NULL);
    if (status == KIT_OK)
        status = exp_backward(&m, x, 1.0f);
    if (status == KIT_OK)
        memcpy(g, m.grads, (size_t)P * sizeof(float));
    exp_model_free(&m);
    return status;
}

KIT_TEST(exp_gqa_equals_mha,
         "experiment: the grouped-query layer with as many K/V heads as "
         "heads has the multi-head layer's parameters and gradient")
{
    struct exp_config mha = exp_default_config(4);
    mha.T = 6;
    struct exp_config gqa = mha;
    gqa.layer = &exp_gqa_layer;
    gqa.n_kv_heads = 4;
    struct exp_model m;
    if (!ready("exp_model_init(4 heads)", exp_model_init(&m, &mha)))
        return;
    const int P = m.n_params;
    exp_model_free(&m);
    int x[6];
    struct rng r;
    rng_seed(&r, 9);
    exp_make_batch(&r, x, 1, mha.T, mha.n_symbols);
    float *want = calloc((size_t)P, sizeof(float));
    float *got = calloc((size_t)P, sizeof(float));
    if (!KIT_CHECK(want && got, "out of memory")) {
        free(want), free(got);
        return;
    }
    int ok =
        ready("the multi-head network's gradient", grads_of(mha, x, want, P));
    if (ok)
        ok = ready("the grouped-query network's gradient (4 K/V heads)",
                   grads_of(gqa, x, got, P));
    int bad = -1;
    for (int i = 0; ok && i < P && bad < 0; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i])))
            bad = i;
    if (ok)
        KIT_CHECK(bad < 0,
                  "with 4 K/V heads for 4 query heads, grouped-query "
                  "attention is multi-head attention, but parameter %d's "
                  "gradient is %.8g, not the multi-head layer's %.8g. Each "
                  "K/V head's columns are copied to exactly one query head, "
                  "so the fold must add each copy's gradient once.",
                  bad, bad < 0 ? 0.0 : (double)got[bad],
                  bad < 0 ? 0.0 : (double)want[bad]);
    free(want), free(got);
}

KIT_TEST(exp_content_targets,
         "experiment: the content task's targets on hand-made sequences")
{
    struct exp_config c = exp_content_config(1);
    c.T = 6;
    /* classes of 4: A-D 0, E-H 1, I-L 2, M-P 3 */
    static const struct {
        const char *seq;
        int same[6]; /* the same-class source before t-1, -1 for none */
    } cases[] = {
        {"AEBFCG", {-1, -1, 0, 1, 2, 3}},   /* A B C / E F G interleaved */
        {"AAAAAA", {-1, -1, 0, 1, 2, 3}},   /* never the previous token */
        {"AEIMBP", {-1, -1, -1, -1, 0, 3}}, /* far back; P is M's class */
        {"PONMLK", {-1, -1, 0, 1, -1, -1}}, /* L starts class 2; K's only
                                               match is the previous */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int x[6], valid = 0;
        for (int t = 0; t < 6; t++)
            x[t] = cases[k].seq[t] - 'A';
        for (int t = 0; t < 6; t++) {
            int got = exp_source_in(&c, x, EXP_SAME_CLASS, t);
            if (!KIT_CHECK(got == cases[k].same[t],
                           "%s, t = %d: the latest token of %c's class "
                           "before the previous one is at %d, but "
                           "exp_source_in() says %d",
                           cases[k].seq, t, cases[k].seq[t], cases[k].same[t],
                           got))
                return;
            int prev = exp_source_in(&c, x, EXP_PREV, t);
            if (!KIT_CHECK(prev == t - 1 || (t == 0 && prev == -1),
                           "%s, t = %d: the previous token is at %d, not %d",
                           cases[k].seq, t, t - 1, prev))
                return;
            valid += (cases[k].same[t] >= 0) + (t > 0);
        }
        /* the network scores exactly those (t, relation) pairs */
        struct exp_model m;
        if (!ready("exp_model_init(content task, 1 head)",
                   exp_model_init(&m, &c)))
            return;
        long correct[EXP_R] = {0}, counted[EXP_R] = {0};
        kit_about_to_call("exp_forward(content task)");
        int status = exp_forward(&m, x, NULL, correct, counted);
        exp_model_free(&m);
        if (!ready("exp_forward(content task)", status))
            return;
        if (!KIT_CHECK(counted[0] + counted[1] == valid && counted[2] == 0,
                       "%s: exp_forward() scored %ld + %ld (t, relation) "
                       "pairs, expected %d",
                       cases[k].seq, counted[0], counted[1], valid))
            return;
    }
}

/* A network built by hand for the position task, S = 4 symbols, T = 6,
 * d_model 32, 4 heads of 8: head r attends to the token relation r reads
 * and copies its symbol, one-hot, into dims 10 + 4r .. 13 + 4r, where the
 * readout reads relation r. Embeddings: dims 0-3 the symbol, 4-9 the
 * position, one-hot. */
static void build_owner_network(struct exp_model *m)
{
    const int d = 32, dh = 8, S = 4, RS = EXP_R * S;
    const float beta = 60.0f; /* sharp: scores differ by beta/sqrt(8) */
    memset(m->params, 0, (size_t)m->n_params * sizeof(float));
    for (int s = 0; s < S; s++)
        m->E_tok[s * d + s] = 1;
    for (int t = 0; t < 6; t++)
        m->E_pos[t * d + 4 + t] = 1;
    for (int r = 0; r < EXP_R; r++) {
        for (int t = 0; t < 6; t++) {
            const int row = 4 + t; /* position t's one-hot */
            /* queries: position t asks for key slot t (previous, two
             * back) or slot 0 (first, second) */
            int q_slot = r < 2 ? t : 0;
            /* keys: position j answers slot j+1, j+2, (j == 0: 0),
             * (j == 1: 0) */
            int k_slot = r == 0   ? t + 1
                         : r == 1 ? t + 2
                                  : (t == r - 2 ? 0 : -1);
            m->attn.W_q[row * d + r * dh + q_slot] = beta;
            if (k_slot >= 0 && k_slot < dh)
                m->attn.W_k[row * d + r * dh + k_slot] = 1;
        }
        for (int s = 0; s < S; s++) {
            m->attn.W_v[s * d + r * dh + s] = 1;                /* copy */
            m->attn.W_o[(r * dh + s) * d + 10 + 4 * r + s] = 1; /* place */
            m->W_r[(10 + 4 * r + s) * RS + r * S + s] = 10;     /* read */
        }
    }
}

KIT_TEST(exp_ablation_known_heatmap,
         "experiment: knocking out each head of a hand-built network gives "
         "the known head x relation heatmap")
{
    struct exp_config c = exp_default_config(4);
    c.n_symbols = 4;
    c.T = 6;
    struct exp_model m;
    if (!ready("exp_model_init(4 heads, 4 symbols)", exp_model_init(&m, &c)))
        return;
    build_owner_network(&m);
    struct exp_eval_set e;
    if (!KIT_EXPECT_STATUS("exp_eval_set_init",
                           exp_eval_set_init(&e, 6, 4, 200, 50, 100, 7),
                           KIT_OK)) {
        exp_model_free(&m);
        return;
    }
    static struct exp_result res;
    kit_about_to_call("exp_measure(hand-built network)");
    int status = exp_measure(&m, &e, &res);
    exp_model_free(&m);
    if (!ready("exp_measure(hand-built network)", status)) {
        exp_eval_set_free(&e);
        return;
    }
    /* knocked out, head r's relation reads all-zero logits: the argmax is
     * symbol 0, right exactly when the target is symbol 0 */
    double zero_share[EXP_R] = {0}, counted[EXP_R] = {0};
    for (int n = 0; n < e.n_abl; n++)
        for (int t = 0; t < 6; t++)
            for (int r = 0; r < EXP_R; r++) {
                int src = exp_source(r, t);
                if (src < 0)
                    continue;
                counted[r]++;
                zero_share[r] += e.eval[n * 6 + src] == 0;
            }
    exp_eval_set_free(&e);
    if (!KIT_CHECK(res.score.mean_accuracy == 1.0,
                   "the hand-built network should name every token, but "
                   "its accuracy is %.4f: the layer does not attend as "
                   "built (check mha_forward with make test CH=3)",
                   res.score.mean_accuracy))
        return;
    for (int i = 0; i < EXP_R; i++)
        for (int r = 0; r < EXP_R; r++) {
            double want = i == r ? 1.0 - zero_share[r] / counted[r] : 0.0;
            if (!KIT_CHECK(fabs(res.lost[i][r] - want) < 1e-9,
                           "knocking out head %d costs relation '%s' %.4f "
                           "of its accuracy; expected %.4f (head %d alone "
                           "carries that relation)",
                           i, exp_relation_name(EXP_TASK_POSITION, r),
                           res.lost[i][r], want, r))
                return;
        }
    /* mean-ablation: head i's output replaced by its mean touches no
     * other relation's logits (exactly nothing lost), and leaves its own
     * relation one guess per position (well over half of it lost) */
    for (int i = 0; i < EXP_R; i++)
        for (int r = 0; r < EXP_R; r++)
            if (!KIT_CHECK(i == r ? res.lost_mean[i][r] > 0.5
                                  : res.lost_mean[i][r] == 0.0,
                           "mean-ablating head %d costs relation '%s' %.4f "
                           "of its accuracy; expected %s (head %d alone "
                           "carries that relation)",
                           i, exp_relation_name(EXP_TASK_POSITION, r),
                           res.lost_mean[i][r],
                           i == r ? "more than 0.5" : "exactly 0", r))
                return;
    /* pruning: the least important head first, the one whose relation
     * loses least, that is whose target is most often symbol 0 */
    int order[EXP_R] = {0, 1, 2, 3}, off[EXP_R] = {0};
    for (int i = 1; i < EXP_R; i++)
        for (int j = i;
             j > 0 && zero_share[order[j]] / counted[order[j]] >
                          zero_share[order[j - 1]] / counted[order[j - 1]];
             j--) {
            int tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    for (int k = 0; k <= EXP_R; k++) {
        double want = 0;
        if (k > 0)
            off[order[k - 1]] = 1;
        for (int r = 0; r < EXP_R; r++)
            want += (off[r] ? zero_share[r] / counted[r] : 1.0) / EXP_R;
        if (!KIT_CHECK(fabs(res.prune[k] - want) < 1e-9,
                       "with the %d least important heads knocked out the "
                       "mean accuracy should be %.4f, not %.4f",
                       k, want, res.prune[k]))
            return;
    }
}

KIT_TEST(exp_workers_same_numbers,
         "experiment: 1 worker process or 3, bit-identical results")
{
    enum { N = 3 };
    struct exp_config c[N];
    for (int k = 0; k < N; k++) {
        c[k] = small_config(k + 1 == 3 ? 4 : k + 1, 20);
        c[k].seed = 100 + (unsigned long long)k;
    }
    c[2].task = EXP_TASK_CONTENT;
    struct exp_eval_set e;
    if (!KIT_EXPECT_STATUS(
            "exp_eval_set_init",
            exp_eval_set_init(&e, c[0].T, c[0].n_symbols, 40, 40, 20, 3),
            KIT_OK))
        return;
    static struct exp_result one[N], many[N];
    int s1 = exp_run_many(c, N, &e, 1, one, NULL);
    int s3 = s1 == KIT_OK ? exp_run_many(c, N, &e, 3, many, NULL) : s1;
    exp_eval_set_free(&e);
    if (!ready("exp_run_many(3 networks, 1 worker)", s1) ||
        !ready("exp_run_many(3 networks, 3 workers)", s3))
        return;
    for (int k = 0; k < N; k++)
        if (!KIT_CHECK(
                memcmp(&one[k].score, &many[k].score, sizeof one[k].score) ==
                        0 &&
                    memcmp(one[k].maps, many[k].maps, sizeof one[k].maps) ==
                        0 &&
                    memcmp(one[k].lost, many[k].lost, sizeof one[k].lost) == 0,
                "network %d: the results differ between 1 and 3 "
                "worker processes (accuracy %.9g against %.9g). "
                "Something reads memory it never wrote (run with "
                "SAN=1), or keeps state between calls in a static "
                "variable.",
                k, one[k].score.mean_accuracy, many[k].score.mean_accuracy))
            return;
}

static const struct kit_test *const ch5_tests[] = {
    &exp_params_equal,
    &exp_rejects_bad_heads,
    &exp_loss_falls,
    &exp_same_seed_same_numbers,
    &exp_gradient_matches_finite_differences,
    &exp_gradient_scaled_and_ablated,
    &exp_backward_twice_agrees,
    &exp_stack_gradient_matches_finite_differences,
    &exp_stack_params_and_one_layer,
    &exp_gqa_gradient_matches_finite_differences,
    &exp_gqa_equals_mha,
    &exp_content_targets,
    &exp_ablation_known_heatmap,
    &exp_workers_same_numbers,
    NULL};
/* No exercise of its own: a failure here points back at chapter 4's file,
 * the last the experiment depends on. */
KIT_CHAPTER(ch5_tests)
