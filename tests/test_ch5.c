/*
 * test_ch5.c: chapter 5 tests, the experiment (experiment.h).
 *
 * Chapter 5 has no exercise: its code (tools/lib/experiment.c) is given.
 * These tests check that it trains, on top of the student's chapters 1
 * to 4: the loss falls, the same seed gives the same numbers, the three
 * networks compared have the same number of parameters, and the whole
 * network's gradient agrees with finite differences. On the starter
 * stubs every test fails at its first status check, with KIT_E_TODO.
 *
 * Dimension letters (see experiment.h): T = tokens, S = symbols,
 * R = relations, d_model = embedding width, h = heads, N = sequences,
 * P = parameters.
 */
#include "experiment.h"
#include "kit_test.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
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
         "experiment: 1, 2 and 4 heads have the same number of parameters")
{
    static const int heads[3] = {1, 2, 4};
    struct exp_config c = exp_default_config(1);
    /* counted here independently: E_tok, E_pos, W_q W_k W_v W_o, W_r, b_r */
    const int d = c.d_model, S = c.n_symbols, RS = EXP_R * S;
    const int want = S * d + c.T * d + 4 * d * d + d * RS + RS;
    for (int k = 0; k < 3; k++) {
        struct exp_model m;
        c = exp_default_config(heads[k]);
        char call[64];
        snprintf(call, sizeof call, "exp_model_init(n_heads = %d)", heads[k]);
        if (!ready(call, exp_model_init(&m, &c)))
            return;
        int got = m.n_params;
        exp_model_free(&m);
        if (!KIT_CHECK(got == want,
                       "%d heads: %d parameters, expected %d. Splitting "
                       "d_model into heads must not change the size of "
                       "W_q, W_k, W_v, W_o (d_model x d_model each).",
                       heads[k], got, want))
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

KIT_TEST(exp_gradient_matches_finite_differences,
         "experiment: the whole network's gradient matches finite "
         "differences")
{
    enum { PER = 3, KINDS = 8, N = PER * KINDS };
    struct exp_config c = exp_default_config(2);
    c.T = 5;
    c.d_model = 8;
    c.qk_init = c.vo_init = 1.0f; /* a gentle network: small h is exact */
    struct exp_model m;
    if (!ready("exp_model_init(2 heads, d_model 8)", exp_model_init(&m, &c)))
        return;
    int x[5];
    struct rng r;
    rng_seed(&r, 5);
    exp_make_batch(&r, x, 1, c.T, c.n_symbols);
    /* PER parameters of every kind; E_tok only in rows the sequence uses */
    const float *start[KINDS] = {m.E_tok + x[2] * c.d_model,
                                 m.E_pos,
                                 m.attn.W_q,
                                 m.attn.W_k,
                                 m.attn.W_v,
                                 m.attn.W_o,
                                 m.W_r,
                                 m.b_r};
    int at[N];
    for (int k = 0; k < KINDS; k++)
        for (int j = 0; j < PER; j++)
            at[k * PER + j] = (int)(start[k] - m.params) + 3 * j + 1;

    /* the analytic gradient of the summed loss */
    double loss;
    memset(m.grads, 0, (size_t)m.n_params * sizeof(float));
    int status = loss_of(&m, x, &loss);
    if (status == KIT_OK)
        status = exp_backward(&m, x, 1.0f);
    if (!ready("exp_forward() then exp_backward()", status)) {
        exp_model_free(&m);
        return;
    }
    float got[N];
    double want[N];
    for (int i = 0; i < N; i++) {
        got[i] = m.grads[at[i]];
        /* (L(p + h) - L(p - h)) / 2h */
        float *p = &m.params[at[i]], keep = *p;
        double up, down;
        *p = keep + 1e-2f;
        float hi = *p;
        loss_of(&m, x, &up);
        *p = keep - 1e-2f;
        float lo = *p;
        loss_of(&m, x, &down);
        *p = keep;
        want[i] = (up - down) / ((double)hi - (double)lo);
    }
    exp_model_free(&m);
    KIT_EXPECT_TENSOR("d loss / d (E_tok, E_pos, W_q, W_k, W_v, W_o, W_r, "
                      "b_r), 3 entries each",
                      got, want, KINDS, PER, 1e-3, NULL, 0);
}

static const struct kit_test *const ch5_tests[] = {
    &exp_params_equal,
    &exp_rejects_bad_heads,
    &exp_loss_falls,
    &exp_same_seed_same_numbers,
    &exp_gradient_matches_finite_differences,
    NULL};
/* No exercise of its own: a failure here points back at chapter 4's file,
 * the last the experiment depends on. */
KIT_CHAPTER(5, "The experiment: one head against many", "ch4_grad.c", ch5_tests)
