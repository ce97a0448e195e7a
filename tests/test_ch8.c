/*
 * test_ch8.c: chapter 8, many heads on real English.
 *
 * The exercises: LayerNorm, forward and backward (ch8_lm.c, gpt.h), and
 * the measurements of what a head does (heads_lm.h): the offset profile,
 * the relation score against its fixed-offset baseline, mean ablation.
 * The rest of the model is given code built on the student's chapters 1
 * to 4 and 7 (given/gpt.c); these tests check it too:
 *   - LayerNorm, the MLP (with GELU) and cross-entropy, forward and
 *     backward, against PyTorch (tests/golden/ch8_golden.h);
 *   - the whole model against a GPT written in PyTorch: the loss, every
 *     parameter's gradient, and two training steps (clipping, AdamW with
 *     decoupled weight decay, warm-up);
 *   - the whole model's gradient against finite differences, for every
 *     parameter tensor, and that a second backward pass adds to it;
 *   - that the model learns one small batch by heart;
 *   - bad configurations, and sampling from a fixed seed;
 *   - the measurements on small hand-made weights whose answers are
 *     exact, the relation cases from tags, the model's ablation hook and
 *     the ablation driver.
 * On the starter stubs every test fails at its first status check.
 * The corpus reader's own tests are tests/given/corpus.c (make check).
 *
 * Dimension letters (see gpt.h): B = sequences, T = tokens, C = d_model,
 * F = 4C, V = vocabulary, L = blocks, h = heads, d_head = C / h,
 * N = rows or sequences, K = the largest offset, P = parameters.
 */
#include "corpus.h"
#include "gpt.h"
#include "heads_lm.h"
#include "kit_test.h"
#include "rng.h"

#include "../given/test_hooks.h"

#include "golden/ch8_golden.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* float passes against a double reference: ~1e-6 for the pieces */
#define TOL 1e-5
/* the whole model, two layers deep, in float */
#define MODEL_TOL 1e-4

/* The status check of a call into the model. The model's code is given,
 * so a KIT_E_TODO comes from a stub it calls: this chapter's LayerNorm,
 * or an earlier chapter's function. */
static int ready(const char *call, int got)
{
    if (got == KIT_E_TODO)
        return KIT_CHECK(0,
                         "%s returned KIT_E_TODO: the model runs on your "
                         "layernorm_forward() and layernorm_backward() and on "
                         "your code from chapters 1 to 4 and 7 (matmul_fast, "
                         "mha_forward_flash), and one of them is still a "
                         "starter stub.",
                         call);
    return KIT_EXPECT_STATUS(call, got, KIT_OK);
}

/* The given pieces are tested once the student's LayerNorm runs: the
 * chapter's tests all wait for its exercise. */
static int layernorm_ready(void)
{
    float x[2] = {1, 2}, g[2] = {1, 1}, b[2] = {0, 0}, y[2], mean, rstd;
    return ready("layernorm_forward() on one row of 2",
                 layernorm_forward(x, g, b, y, &mean, &rstd, 1, 2));
}

/* A guarded float copy of n doubles, named (kit_guarded: a write or a
 * read past either end is named with name and size); free with
 * kit_output_free. */
static float *from_double(const double *x, int n, const char *name,
                          const char *size)
{
    float *f = kit_guarded((size_t)n, name, size);
    kit_to_float(x, f, (size_t)n);
    return f;
}

static float *filled(int n, float v, const char *name, const char *size)
{
    float *f = kit_guarded((size_t)n, name, size);
    for (int i = 0; i < n; i++)
        f[i] = v;
    return f;
}

/* ---------------------------------------------------------------------
 * LayerNorm, the exercise
 * ------------------------------------------------------------------- */

enum { LN_N = 5, LN_C = 7 };

/* LayerNorm in double, right or with a classic mistake, for the hidden
 * cases (kit_test.h): variance divided by C (or C - 1 when unbiased),
 * eps inside the square root (or after it when eps_out). */
static void ref_layernorm(const float *x, const float *g, const float *b,
                          double *y, double *mean, double *rstd, int n, int C,
                          int unbiased, int eps_out)
{
    for (int i = 0; i < n; i++) {
        double m = 0, v = 0;
        for (int c = 0; c < C; c++)
            m += x[i * C + c];
        m /= C;
        for (int c = 0; c < C; c++)
            v += (x[i * C + c] - m) * (x[i * C + c] - m);
        v /= unbiased ? C - 1 : C;
        const double r = eps_out ? 1 / (sqrt(v) + 1e-5) : 1 / sqrt(v + 1e-5);
        for (int c = 0; c < C; c++)
            y[i * C + c] = (x[i * C + c] - m) * r * g[c] + b[c];
        if (mean)
            mean[i] = m, rstd[i] = r;
    }
}

/* The two classic forward mistakes on x, g, b (n, C): the variance
 * divided by C - 1, and eps outside the square root, as
 * ref_layernorm() computes them into unbiased and eps_out (n*C each). */
static void ln_mistakes(const float *x, const float *g, const float *b, int n,
                        int C, double *unbiased, double *eps_out,
                        struct kit_mistake m[2])
{
    ref_layernorm(x, g, b, unbiased, NULL, NULL, n, C, 1, 0);
    ref_layernorm(x, g, b, eps_out, NULL, NULL, n, C, 0, 1);
    m[0] = (struct kit_mistake){
        "the variance divided by C - 1 instead of C",
        "LayerNorm's variance is the plain mean of (x - mean)^2 over the "
        "row: divide by C, as torch.nn.LayerNorm does.",
        unbiased};
    m[1] = (struct kit_mistake){
        "eps added after the square root",
        "rstd = 1 / sqrt(var + eps): eps goes inside the square root.",
        eps_out};
}

/* Hidden case k of the seed (and stream): n rows of C (both at least 2)
 * and their inputs, each row with its own offset and spread and a
 * variance of at least 0.05. */
struct ln_case {
    int n, C;
    float *x, *g, *b, *d_y;
    char name[200];
};

static void ln_hidden(struct ln_case *L, int k, unsigned long long seed,
                      unsigned long long stream)
{
    struct rng r;
    /* stream: a test's own constant, so that two tests on the same seed
     * draw different cases (0 for the first tests, which drew these) */
    rng_seed(&r, (seed ^ stream) + 31337ULL * (unsigned long long)(k + 1));
    L->n = 2 + rng_int(&r, 7), L->C = 2 + rng_int(&r, 15);
    const int nc = L->n * L->C;
    L->x = kit_guarded((size_t)nc, "x", "N*C");
    L->d_y = kit_guarded((size_t)nc, "d_y", "N*C");
    L->g = kit_guarded((size_t)L->C, "g", "C");
    L->b = kit_guarded((size_t)L->C, "b", "C");
    for (int i = 0; i < L->n; i++) {
        /* a row whose variance is well above eps: float's rounding in a
         * nearly constant row is ln_small_variance's business */
        float *row = L->x + i * L->C, shift, spread;
        double var = 0;
        do {
            rng_fill(&r, row, L->C, -2.0f, 2.0f);
            rng_fill(&r, &shift, 1, -3.0f, 3.0f);
            rng_fill(&r, &spread, 1, 0.2f, 3.0f);
            double m = 0;
            for (int c = 0; c < L->C; c++)
                m += (row[c] = row[c] * spread + shift);
            m /= L->C, var = 0;
            for (int c = 0; c < L->C; c++)
                var += (row[c] - m) * (row[c] - m) / L->C;
        } while (var < 0.05);
    }
    rng_fill(&r, L->g, L->C, 0.5f, 1.5f);
    rng_fill(&r, L->b, L->C, -0.5f, 0.5f);
    rng_fill(&r, L->d_y, nc, -1.0f, 1.0f);
    snprintf(L->name, sizeof L->name,
             "hidden case %d of seed %llu (%d rows of %d; the published case "
             "passes; KIT_HIDDEN_SEED=%llu make test CH=8 runs it again)",
             k + 1, seed, L->n, L->C, seed);
}

static void ln_hidden_free(struct ln_case *L)
{
    kit_output_free(L->x), kit_output_free(L->g), kit_output_free(L->b);
    kit_output_free(L->d_y);
}

/* Two more outputs of a LayerNorm call, (1, len) each: "mean", "rstd";
 * "d_g", "d_b". */
struct ln_side {
    const char *what;
    const float *got;
    const double *want;
    int len;
};

/* What a LayerNorm call on a hidden case must give: status KIT_OK (rc,
 * returned by the call made after kit_about_to_call(call)), nothing
 * written outside a guarded buffer, out (n, C) equal to want (the
 * mistakes named), and side[0], side[1] equal to theirs. */
static int ln_expect(const char *call, int rc, const float *out,
                     const double *want, int n, int C,
                     const struct kit_mistake *mistakes, int n_mistakes,
                     const struct ln_side side[2])
{
    int ok =
        KIT_EXPECT_STATUS(call, rc, KIT_OK) && KIT_EXPECT_GUARDS(call) &&
        KIT_EXPECT_TENSOR(call, out, want, n, C, TOL, mistakes, n_mistakes);
    for (int k = 0; k < 2 && ok; k++)
        ok = KIT_EXPECT_TENSOR(side[k].what, side[k].got, side[k].want, 1,
                               side[k].len, TOL, NULL, 0);
    return ok;
}

/* layernorm_forward on hidden case L against ref_layernorm; 1 when right. */
static int ln_forward_hidden(const struct ln_case *L)
{
    const int n = L->n, C = L->C, nc = n * C;
    float *y = kit_guarded((size_t)nc, "y", "N*C");
    float *mean = kit_guarded((size_t)n, "mean", "N");
    float *rstd = kit_guarded((size_t)n, "rstd", "N");
    double *want = kit_alloc(sizeof(double) * (size_t)(3 * nc + 2 * n));
    double *unbiased = want + nc, *eps_out = unbiased + nc;
    double *wmean = eps_out + nc, *wrstd = wmean + n;
    ref_layernorm(L->x, L->g, L->b, want, wmean, wrstd, n, C, 0, 0);
    struct kit_mistake mistakes[2];
    ln_mistakes(L->x, L->g, L->b, n, C, unbiased, eps_out, mistakes);
    char call[300];
    snprintf(call, sizeof call, "layernorm_forward(%s)", L->name);
    kit_about_to_call(call);
    const int rc = layernorm_forward(L->x, L->g, L->b, y, mean, rstd, n, C);
    const struct ln_side side[2] = {{"... mean", mean, wmean, n},
                                    {"... rstd", rstd, wrstd, n}};
    int ok = ln_expect(call, rc, y, want, n, C, mistakes, 2, side);
    free(want);
    kit_output_free(y), kit_output_free(mean), kit_output_free(rstd);
    return ok;
}

/* layernorm_backward on hidden case L, its d_ buffers pre-filled with
 * fill (0: fresh gradients; not 0: the call must add to them), against
 * the double formulas; 1 when right. */
static int ln_backward_hidden_filled(const struct ln_case *L, float fill)
{
    const int n = L->n, C = L->C, nc = n * C;
    double *y = kit_alloc(sizeof(double) * (size_t)(5 * nc + 2 * n + 2 * C));
    double *want_x = y + nc, *direct = want_x + nc, *xhat = direct + nc;
    double *over = xhat + nc, *m = over + nc, *r = m + n, *want_g = r + n;
    double *want_b = want_g + C;
    ref_layernorm(L->x, L->g, L->b, y, m, r, n, C, 0, 0);
    float *mean = kit_guarded((size_t)n, "mean", "N");
    float *rstd = kit_guarded((size_t)n, "rstd", "N");
    kit_to_float(m, mean, (size_t)n);
    kit_to_float(r, rstd, (size_t)n);
    for (int c = 0; c < C; c++)
        want_g[c] = want_b[c] = fill;
    for (int i = 0; i < n; i++) {
        /* with the float mean and rstd the student's code is given */
        double a = 0, bsum = 0;
        for (int c = 0; c < C; c++) {
            const int k = i * C + c;
            xhat[k] = ((double)L->x[k] - mean[i]) * rstd[i];
            const double dxh = (double)L->d_y[k] * L->g[c];
            a += dxh, bsum += dxh * xhat[k];
            want_g[c] += (double)L->d_y[k] * xhat[k];
            want_b[c] += L->d_y[k];
        }
        a /= C, bsum /= C;
        for (int c = 0; c < C; c++) {
            const int k = i * C + c;
            const double dxh = (double)L->d_y[k] * L->g[c];
            over[k] = rstd[i] * (dxh - a - xhat[k] * bsum);
            want_x[k] = fill + over[k];
            direct[k] = fill + rstd[i] * dxh;
        }
    }
    /* the same words as ln_backward_check(), so that a mistake is named
     * alike on the published case and on the hidden ones */
    const struct kit_mistake mistakes[] = {
        {"only the direct path through xhat (d_x = rstd * g * d_y)",
         "Every x[i][c] also moves the row's mean and its rstd, and so every "
         "output of the row: subtract mean(dxh) and xhat * mean(dxh * xhat) "
         "before multiplying by rstd.",
         direct},
        {"the gradient was overwritten instead of accumulated",
         "A backward pass adds into d_x (d_x[i] += ...): the model's "
         "residual stream already holds a gradient there.",
         fill != 0 ? over : NULL}};
    float *d_x = filled(nc, fill, "d_x", "N*C");
    float *d_g = filled(C, fill, "d_g", "C"),
          *d_b = filled(C, fill, "d_b", "C");
    char call[300];
    if (fill != 0)
        snprintf(call, sizeof call,
                 "layernorm_backward(%s) with every d_ buffer pre-filled "
                 "with %g",
                 L->name, (double)fill);
    else
        snprintf(call, sizeof call, "layernorm_backward(%s)", L->name);
    kit_about_to_call(call);
    const int rc =
        layernorm_backward(L->x, L->g, mean, rstd, L->d_y, d_x, d_g, d_b, n, C);
    const struct ln_side side[2] = {{"... d_g", d_g, want_g, C},
                                    {"... d_b", d_b, want_b, C}};
    int ok = ln_expect(call, rc, d_x, want_x, n, C, mistakes, 2, side);
    free(y);
    kit_output_free(mean), kit_output_free(rstd);
    kit_output_free(d_x), kit_output_free(d_g), kit_output_free(d_b);
    return ok;
}

/* layernorm_backward on hidden case L with fresh zero gradients. */
static int ln_backward_hidden(const struct ln_case *L)
{
    return ln_backward_hidden_filled(L, 0.0f);
}

/* layernorm_backward on hidden case L with every d_ buffer pre-filled
 * with 0.5, as ln_backward_accumulates' published case is. */
static int ln_backward_hidden_added(const struct ln_case *L)
{
    return ln_backward_hidden_filled(L, 0.5f);
}

/* The hidden cases of one LayerNorm test, once its published case
 * passed; stream as ln_hidden() takes it. */
static void ln_hidden_cases(int (*check)(const struct ln_case *),
                            unsigned long long stream)
{
    if (kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    for (int k = 0; k < KIT_HIDDEN_CASES; k++) {
        struct ln_case L;
        ln_hidden(&L, k, seed, stream);
        int ok = check(&L);
        ln_hidden_free(&L);
        if (!ok)
            return;
    }
}

KIT_TEST(ln_forward_golden,
         "layernorm_forward: y, mean and rstd equal PyTorch's layer_norm")
{
    static const char call[] =
        "layernorm_forward(x, g, b, y, mean, rstd, 5, 7)";
    float *x = from_double(ch8_ln_x, LN_N * LN_C, "x", "N*C"),
          *g = from_double(ch8_ln_g, LN_C, "g", "C");
    float *b = from_double(ch8_ln_b, LN_C, "b", "C"),
          *y = kit_guarded(LN_N * LN_C, "y", "N*C");
    float *mean = kit_guarded(LN_N, "mean", "N"),
          *rstd = kit_guarded(LN_N, "rstd", "N");
    /* the classic mistakes, on the same inputs in double; the first two
     * change rstd and y, the last two y only */
    double unbiased[LN_N * LN_C], eps_out[LN_N * LN_C];
    double un_r[LN_N], out_r[LN_N], no_g[LN_N * LN_C], no_b[LN_N * LN_C];
    struct kit_mistake mistakes[4];
    ln_mistakes(x, g, b, LN_N, LN_C, unbiased, eps_out, mistakes);
    for (int i = 0; i < LN_N; i++) {
        double var = 0;
        for (int c = 0; c < LN_C; c++) {
            const int k = i * LN_C + c;
            const double xhat = (ch8_ln_x[k] - ch8_ln_mean[i]) * ch8_ln_rstd[i];
            no_g[k] = xhat + ch8_ln_b[c];
            no_b[k] = xhat * ch8_ln_g[c];
            var += (ch8_ln_x[k] - ch8_ln_mean[i]) *
                   (ch8_ln_x[k] - ch8_ln_mean[i]) / LN_C;
        }
        un_r[i] = 1 / sqrt(var * LN_C / (LN_C - 1) + GPT_LN_EPS);
        out_r[i] = 1 / (sqrt(var) + GPT_LN_EPS);
    }
    const struct kit_mistake r_mistakes[2] = {
        {mistakes[0].name, mistakes[0].advice, un_r},
        {mistakes[1].name, mistakes[1].advice, out_r}};
    mistakes[2] = (struct kit_mistake){
        "the gain g not applied (y = xhat + b)",
        "Each column has its own gain: y[c] = xhat[c] * g[c] + b[c].", no_g};
    mistakes[3] = (struct kit_mistake){
        "the bias b not added (y = xhat * g)",
        "Each column has its own bias: y[c] = xhat[c] * g[c] + b[c].", no_b};
    /* mean and rstd first: a y that is wrong everywhere says little, a
     * wrong mean or rstd says which step of the row is wrong */
    if (KIT_EXPECT_STATUS(call,
                          layernorm_forward(x, g, b, y, mean, rstd, LN_N, LN_C),
                          KIT_OK) &&
        KIT_EXPECT_GUARDS(call) &&
        KIT_EXPECT_IN_BOUNDS(call, "y", y, LN_N * LN_C) &&
        KIT_EXPECT_IN_BOUNDS(call, "mean", mean, LN_N) &&
        KIT_EXPECT_IN_BOUNDS(call, "rstd", rstd, LN_N) &&
        KIT_EXPECT_TENSOR("layernorm_forward(...) mean, the mean of each row "
                          "of x over its C columns",
                          mean, ch8_ln_mean, 1, LN_N, TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("layernorm_forward(...) rstd = 1/sqrt(var + eps), "
                          "one per row",
                          rstd, ch8_ln_rstd, 1, LN_N, TOL, r_mistakes, 2))
        KIT_EXPECT_TENSOR("layernorm_forward(...) y vs PyTorch (mean and "
                          "rstd are right)",
                          y, ch8_ln_y, LN_N, LN_C, TOL, mistakes, 4);
    kit_output_free(x), kit_output_free(g), kit_output_free(b);
    kit_output_free(y), kit_output_free(mean), kit_output_free(rstd);
    ln_hidden_cases(ln_forward_hidden, 0);
}

/* Whether got (n) equals want within tol, as KIT_EXPECT_TENSOR judges. */
static int close_to(const float *got, const double *want, int n, double tol)
{
    for (int k = 0; k < n; k++)
        if (!(fabs((double)got[k] - want[k]) <= tol + tol * fabs(want[k])))
            return 0;
    return 1;
}

/* d_x (N, C) of layernorm_backward, its buffer pre-filled with fill,
 * against want; xhat (N, C) the rows' normalised x. When d_x is neither
 * right nor one of the mistakes, the two facts every right d_x obeys
 * are checked first, and the one that fails is named: each row of
 * d_x - fill sums to 0 (a shift of the row changes no xhat), and is
 * orthogonal to the row's xhat (up to eps / (var + eps): a scaling of
 * the centred row changes xhat only through eps). */
static int ln_expect_dx(const char *call, const float *d_x, const double *want,
                        float fill, const double *xhat, int N, int C,
                        const struct kit_mistake *mistakes, int n_mistakes)
{
    int known = close_to(d_x, want, N * C, TOL);
    for (int k = 0; k < n_mistakes && !known; k++)
        known =
            mistakes[k].value && close_to(d_x, mistakes[k].value, N * C, TOL);
    for (int i = 0; i < N && !known; i++) {
        double sum = 0, dot = 0, size = 0, size_x = 0;
        for (int c = 0; c < C; c++) {
            const double d = (double)d_x[i * C + c] - fill;
            sum += d, dot += d * xhat[i * C + c];
            size += fabs(d), size_x += fabs(d) * fabs(xhat[i * C + c]);
        }
        if (!isfinite(sum))
            break; /* NaN or infinity: the comparison below describes it */
        if (!KIT_CHECK(fabs(sum) <= 1e-4 * size + 1e-5,
                       "%s: row %d of d_x sums to %.6g, not 0%s. Shifting "
                       "a row of x by a constant changes none of its xhat, "
                       "so the right d_x of every row sums to 0: look at "
                       "the term that subtracts mean(dxh), the mean over "
                       "the row's C columns of dxh = d_y * g.",
                       call, i, sum,
                       fill != 0 ? " (after the 0.5 it held before)" : ""))
            return 0;
        if (!KIT_CHECK(fabs(dot) <= 1e-4 * size_x + 1e-5,
                       "%s: row %d of d_x has a component %.6g along the "
                       "row's xhat, where the right d_x has almost none "
                       "(its rows sum to 0, as they should). Scaling the "
                       "centred row changes xhat only through eps, so "
                       "look at the term that subtracts xhat * "
                       "mean(dxh * xhat), the mean over the row's C "
                       "columns.",
                       call, i, dot))
            return 0;
    }
    return KIT_EXPECT_TENSOR(call, d_x, want, N, C, TOL, mistakes, n_mistakes);
}

/* Runs layernorm_backward on the golden case with every d_ buffer
 * pre-filled with fill; 1 when d_x, d_g and d_b are right. */
static int ln_backward_check(float fill, const char *call)
{
    const int n = LN_N * LN_C;
    float *x = from_double(ch8_ln_x, n, "x", "N*C"),
          *g = from_double(ch8_ln_g, LN_C, "g", "C");
    float *mean = from_double(ch8_ln_mean, LN_N, "mean", "N");
    float *rstd = from_double(ch8_ln_rstd, LN_N, "rstd", "N");
    float *d_y = from_double(ch8_ln_d_y, n, "d_y", "N*C"),
          *d_x = filled(n, fill, "d_x", "N*C");
    float *d_g = filled(LN_C, fill, "d_g", "C"),
          *d_b = filled(LN_C, fill, "d_b", "C");
    double want_x[LN_N * LN_C], want_g[LN_C], want_b[LN_C];
    double direct[LN_N * LN_C], over[LN_N * LN_C], xhat[LN_N * LN_C];
    double no_xhat_term[LN_N * LN_C], no_mean_term[LN_N * LN_C];
    double no_g[LN_N * LN_C];
    for (int i = 0; i < LN_N; i++) {
        /* the row's two means, with g (dxh = d_y * g) and without */
        double m1 = 0, m2 = 0, m1_ng = 0, m2_ng = 0;
        for (int c = 0; c < LN_C; c++) {
            const int k = i * LN_C + c;
            xhat[k] = (ch8_ln_x[k] - ch8_ln_mean[i]) * ch8_ln_rstd[i];
            const double dxh = ch8_ln_d_y[k] * ch8_ln_g[c];
            m1 += dxh / LN_C, m2 += dxh * xhat[k] / LN_C;
            m1_ng += ch8_ln_d_y[k] / LN_C;
            m2_ng += ch8_ln_d_y[k] * xhat[k] / LN_C;
        }
        for (int c = 0; c < LN_C; c++) {
            const int k = i * LN_C + c;
            const double r = ch8_ln_rstd[i], dxh = ch8_ln_d_y[k] * ch8_ln_g[c];
            want_x[k] = ch8_ln_d_x[k] + fill;
            over[k] = ch8_ln_d_x[k];
            /* only the direct path: d_x = rstd * g * d_y */
            direct[k] = fill + r * dxh;
            no_xhat_term[k] = fill + r * (dxh - m1);
            no_mean_term[k] = fill + r * (dxh - xhat[k] * m2);
            no_g[k] = fill + r * (ch8_ln_d_y[k] - m1_ng - xhat[k] * m2_ng);
        }
    }
    for (int c = 0; c < LN_C; c++)
        want_g[c] = ch8_ln_d_g[c] + fill, want_b[c] = ch8_ln_d_b[c] + fill;
    const struct kit_mistake mistakes[] = {
        {"only the direct path through xhat (d_x = rstd * g * d_y)",
         "Every x[i][c] also moves the row's mean and its rstd, and so every "
         "output of the row: subtract mean(dxh) and xhat * mean(dxh * xhat) "
         "before multiplying by rstd.",
         direct},
        {"the gradient was overwritten instead of accumulated",
         "A backward pass adds into d_x (d_x[i] += ...): the model's "
         "residual stream already holds a gradient there.",
         fill != 0 ? over : NULL},
        {"the term xhat * mean(dxh * xhat) left out (d_x = rstd * (dxh - "
         "mean(dxh)))",
         "x also reaches xhat through rstd: subtract xhat[c] times the "
         "row's mean of dxh * xhat too.",
         no_xhat_term},
        {"the term mean(dxh) left out (d_x = rstd * (dxh - xhat * "
         "mean(dxh * xhat)))",
         "x also reaches xhat through the row's mean: subtract the row's "
         "mean of dxh too.",
         no_mean_term},
        {"d_x computed without the gain (dxh = d_y instead of d_y * g)",
         "y = xhat * g + b, so the gradient reaching xhat is dxh = d_y * g, "
         "and both means are of that dxh.",
         no_g}};
    int ok = KIT_EXPECT_STATUS(call,
                               layernorm_backward(x, g, mean, rstd, d_y, d_x,
                                                  d_g, d_b, LN_N, LN_C),
                               KIT_OK) &&
             KIT_EXPECT_GUARDS(call) &&
             KIT_EXPECT_IN_BOUNDS(call, "d_x", d_x, n) &&
             KIT_EXPECT_IN_BOUNDS(call, "d_g", d_g, LN_C) &&
             KIT_EXPECT_IN_BOUNDS(call, "d_b", d_b, LN_C) &&
             ln_expect_dx("layernorm_backward(...) d_x vs PyTorch", d_x, want_x,
                          fill, xhat, LN_N, LN_C, mistakes, 5) &&
             KIT_EXPECT_TENSOR("layernorm_backward(...) d_g vs PyTorch", d_g,
                               want_g, 1, LN_C, TOL, NULL, 0) &&
             KIT_EXPECT_TENSOR("layernorm_backward(...) d_b vs PyTorch", d_b,
                               want_b, 1, LN_C, TOL, NULL, 0);
    kit_output_free(x), kit_output_free(g), kit_output_free(mean);
    kit_output_free(rstd), kit_output_free(d_y), kit_output_free(d_x);
    kit_output_free(d_g), kit_output_free(d_b);
    return ok;
}

KIT_TEST(ln_backward_golden,
         "layernorm_backward: d_x, d_g, d_b equal PyTorch autograd's")
{
    if (ln_backward_check(0.0f,
                          "layernorm_backward(x, g, mean, rstd, d_y, ...)"))
        ln_hidden_cases(ln_backward_hidden, 0);
}

KIT_TEST(ln_backward_accumulates,
         "layernorm_backward: adds into d_x, d_g and d_b, does not overwrite")
{
    /* The published case can be recognised and its answer plus 0.5
     * returned: once it passes, hidden cases as ln_backward_golden's
     * (kit_test.h), with the same 0.5 in every d_ buffer, judged by the
     * double formulas of ln_backward_hidden_filled(). Their own stream,
     * so that they are not ln_backward_golden's cases again. */
    if (ln_backward_check(0.5f, "layernorm_backward(...) with every d_ buffer "
                                "pre-filled with 0.5"))
        ln_hidden_cases(ln_backward_hidden_added, 0x616363ULL);
}

/* The label of a hidden twin (kit_test.h): what the call was, and the
 * seed, the number KIT_HIDDEN_SEED takes to draw the same case again. */
static void hidden_label(char *label, size_t size, const char *what)
{
    snprintf(label, size,
             "%s, on hidden numbers (seed %llu; KIT_HIDDEN_SEED=%llu make "
             "test CH=8 runs it again)",
             what, kit_hidden_seed(), kit_hidden_seed());
}

/* layernorm_forward on 2 rows of C, xs, whose variances are var: rstd
 * must be 1/sqrt(var + eps), within 1e-4 of row 0's (a row of equal
 * values). call names the call, what the check. 1 when right. */
static int small_variance_case(int C, const double *xs, const double var[2],
                               const char *call, const char *what)
{
    const int N = 2;
    const double eps = GPT_LN_EPS;
    double want_r[2], eps_out_r[2];
    for (int i = 0; i < N; i++) {
        want_r[i] = 1 / sqrt(var[i] + eps);
        eps_out_r[i] = 1 / (sqrt(var[i]) + eps);
    }
    float *x = from_double(xs, N * C, "x", "N*C"), *g = filled(C, 1, "g", "C"),
          *b = filled(C, 0, "b", "C");
    float *y = kit_guarded((size_t)N * C, "y", "N*C"),
          *mean = kit_guarded(N, "mean", "N"),
          *rstd = kit_guarded(N, "rstd", "N");
    const struct kit_mistake mistakes[] = {
        {"eps added after the square root",
         "rstd = 1 / sqrt(var + eps): eps goes inside the square root. On "
         "a row of equal values the variance is 0 and eps alone sets rstd.",
         eps_out_r}};
    int ok =
        KIT_EXPECT_STATUS(call, layernorm_forward(x, g, b, y, mean, rstd, N, C),
                          KIT_OK) &&
        KIT_EXPECT_IN_BOUNDS(call, "rstd", rstd, N) &&
        KIT_EXPECT_TENSOR(what, rstd, want_r, 1, N, 1e-4 * want_r[0], mistakes,
                          1);
    kit_output_free(x), kit_output_free(g), kit_output_free(b);
    kit_output_free(y), kit_output_free(mean), kit_output_free(rstd);
    return ok;
}

KIT_TEST(ln_small_variance,
         "layernorm_forward: a row of equal values and a row of tiny "
         "variance, where eps decides rstd")
{
    /* row 0: var = 0, so rstd = 1/sqrt(eps); row 1: var = d^2, near eps */
    const double d = 0.003;
    const double xs[8] = {2, 2, 2, 2, 1 - d, 1 + d, 1 - d, 1 + d};
    const double var[2] = {0, d * d};
    if (!small_variance_case(4, xs, var,
                             "layernorm_forward(x, g = 1, b = 0, y, mean, "
                             "rstd, 2, 4)",
                             "layernorm_forward(...) rstd = 1/sqrt(var + eps) "
                             "on rows of variance 0 and 9e-6"))
        return;
    /* The published rows can be recognised: once they pass, rows of the
     * same kind drawn from the hidden seed (kit_test.h): C even, row 0
     * equal values v, row 1 m - d and m + d in turn, d from 0.001 to
     * 0.006, so that its variance d^2 (1e-6 to 3.6e-5) stays near eps.
     * The variances are those of the floats the call gets, in double. */
    struct rng r;
    rng_seed(&r, kit_hidden_seed() ^ 0x6c6e73ULL);
    for (int h = 0; h < KIT_HIDDEN_CASES; h++) {
        const int C = 2 * (1 + rng_int(&r, 8));
        const float v = rng_range(&r, -4.0f, 4.0f),
                    m = rng_range(&r, -2.0f, 2.0f),
                    dh = rng_range(&r, 0.001f, 0.006f);
        double xh[32], varh[2] = {0, 0}, mh = 0;
        for (int c = 0; c < C; c++) {
            xh[c] = v;
            xh[C + c] = (double)(c % 2 ? m + dh : m - dh);
            mh += xh[C + c] / C;
        }
        for (int c = 0; c < C; c++)
            varh[1] += (xh[C + c] - mh) * (xh[C + c] - mh) / C;
        char call[300], what[300], hand[200];
        snprintf(hand, sizeof hand,
                 "layernorm_forward(x, g = 1, b = 0, y, mean, rstd, 2, %d)", C);
        hidden_label(call, sizeof call, hand);
        snprintf(hand, sizeof hand,
                 "layernorm_forward(...) rstd = 1/sqrt(var + eps) on rows of "
                 "variance 0 and %.2g",
                 varh[1]);
        hidden_label(what, sizeof what, hand);
        if (!small_variance_case(C, xh, varh, call, what))
            return;
    }
}

KIT_TEST(ln_errors, "layernorm_forward: NULL is KIT_E_NULL, a size <= 0 is "
                    "KIT_E_SIZE, and nothing is written")
{
    float x[4] = {1, 2, 3, 4}, g[2] = {1, 1}, b[2] = {0, 0};
    float *mean = filled(2, 7, "mean", "N"), *rstd = filled(2, 7, "rstd", "N");
    float *y = filled(4, 7, "y", "N*C");
    if (!KIT_EXPECT_STATUS("layernorm_forward(NULL x, ...)",
                           layernorm_forward(NULL, g, b, y, mean, rstd, 2, 2),
                           KIT_E_NULL) ||
        !KIT_EXPECT_STATUS("layernorm_forward(..., rstd = NULL, ...)",
                           layernorm_forward(x, g, b, y, mean, NULL, 2, 2),
                           KIT_E_NULL) ||
        !KIT_EXPECT_STATUS("layernorm_forward(..., N = 0, C = 2)",
                           layernorm_forward(x, g, b, y, mean, rstd, 0, 2),
                           KIT_E_SIZE) ||
        !KIT_EXPECT_STATUS("layernorm_forward(..., N = 2, C = -1)",
                           layernorm_forward(x, g, b, y, mean, rstd, 2, -1),
                           KIT_E_SIZE))
        goto done;
    int untouched = mean[0] == 7 && rstd[0] == 7;
    for (int i = 0; i < 4; i++)
        untouched &= y[i] == 7;
    if (KIT_CHECK(untouched, "layernorm_forward returned an error but wrote "
                             "into y, mean or rstd: check the arguments "
                             "before the first write"))
        KIT_EXPECT_GUARDS("layernorm_forward with bad arguments");
done:
    kit_output_free(mean), kit_output_free(rstd), kit_output_free(y);
}

KIT_TEST(ln_backward_errors, "layernorm_backward: NULL is KIT_E_NULL, a size "
                             "<= 0 is KIT_E_SIZE, and nothing is written")
{
    float x[4] = {1, 2, 3, 4}, g[2] = {1, 1};
    float mean[2] = {1.5f, 3.5f}, rstd[2] = {2, 2};
    float *d_x = filled(4, 7, "d_x", "N*C");
    float *d_g = filled(2, 7, "d_g", "C"), *d_b = filled(2, 7, "d_b", "C");
    if (!KIT_EXPECT_STATUS(
            "layernorm_backward(..., d_g = NULL, ...)",
            layernorm_backward(x, g, mean, rstd, x, d_x, NULL, d_b, 2, 2),
            KIT_E_NULL) ||
        !KIT_EXPECT_STATUS(
            "layernorm_backward(NULL x, ...)",
            layernorm_backward(NULL, g, mean, rstd, x, d_x, d_g, d_b, 2, 2),
            KIT_E_NULL) ||
        !KIT_EXPECT_STATUS(
            "layernorm_backward(..., N = 2, C = 0)",
            layernorm_backward(x, g, mean, rstd, x, d_x, d_g, d_b, 2, 0),
            KIT_E_SIZE) ||
        !KIT_EXPECT_STATUS(
            "layernorm_backward(..., N = -1, C = 2)",
            layernorm_backward(x, g, mean, rstd, x, d_x, d_g, d_b, -1, 2),
            KIT_E_SIZE))
        goto done;
    int untouched = d_g[0] == 7 && d_g[1] == 7 && d_b[0] == 7 && d_b[1] == 7;
    for (int i = 0; i < 4; i++)
        untouched &= d_x[i] == 7;
    if (KIT_CHECK(untouched, "layernorm_backward returned an error but wrote "
                             "into d_x, d_g or d_b: check the arguments "
                             "before the first write"))
        KIT_EXPECT_GUARDS("layernorm_backward with bad arguments");
done:
    kit_output_free(d_x), kit_output_free(d_g), kit_output_free(d_b);
}

/* ---------------------------------------------------------------------
 * The given pieces: the MLP (and GELU), cross-entropy
 * ------------------------------------------------------------------- */

enum { MLP_N = 3, MLP_C = 4, MLP_F = 16 };

KIT_TEST(mlp_golden, "the MLP: fc, GELU (tanh), out and every gradient equal "
                     "PyTorch's")
{
    if (!layernorm_ready())
        return;
    const int NC = MLP_N * MLP_C, NF = MLP_N * MLP_F, CF = MLP_C * MLP_F;
    float *x = from_double(ch8_mlp_x, NC, "x", "N*C"),
          *W_fc = from_double(ch8_mlp_W_fc, CF, "W_fc", "C*F");
    float *b_fc = from_double(ch8_mlp_b_fc, MLP_F, "b_fc", "F");
    float *W_proj = from_double(ch8_mlp_W_proj, CF, "W_proj", "F*C");
    float *b_proj = from_double(ch8_mlp_b_proj, MLP_C, "b_proj", "C");
    float *d_out = from_double(ch8_mlp_d_out, NC, "d_out", "N*C");
    float *fc = kit_guarded(NF, "fc", "N*F"),
          *gl = kit_guarded(NF, "gl", "N*F");
    float *out = kit_guarded(NC, "out", "N*C");
    float *scratch = kit_guarded(2 * NF, "scratch", "2*N*F"),
          *d_x = filled(NC, 0, "d_x", "N*C");
    float *d_W_fc = filled(CF, 0, "d_W_fc", "C*F"),
          *d_b_fc = filled(MLP_F, 0, "d_b_fc", "F");
    float *d_W_proj = filled(CF, 0, "d_W_proj", "F*C"),
          *d_b_proj = filled(MLP_C, 0, "d_b_proj", "C");
    if (ready("mlp_forward() (it calls your matmul_fast())",
              mlp_forward(x, W_fc, b_fc, W_proj, b_proj, fc, gl, out, MLP_N,
                          MLP_C)) &&
        KIT_EXPECT_TENSOR("mlp_forward: fc = x W_fc + b_fc", fc, ch8_mlp_fc,
                          MLP_N, MLP_F, TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_forward: GELU(fc)", gl, ch8_mlp_gelu, MLP_N,
                          MLP_F, TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_forward: out", out, ch8_mlp_out, MLP_N, MLP_C,
                          TOL, NULL, 0) &&
        ready("mlp_backward() (it calls your matmul_fast())",
              mlp_backward(x, W_fc, W_proj, fc, gl, d_out, scratch, d_x, d_W_fc,
                           d_b_fc, d_W_proj, d_b_proj, MLP_N, MLP_C)) &&
        KIT_EXPECT_TENSOR("mlp_backward: d_x", d_x, ch8_mlp_d_x, MLP_N, MLP_C,
                          TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_backward: d_W_fc", d_W_fc, ch8_mlp_d_W_fc, MLP_C,
                          MLP_F, TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_backward: d_b_fc (through GELU')", d_b_fc,
                          ch8_mlp_d_b_fc, 1, MLP_F, TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_backward: d_W_proj", d_W_proj, ch8_mlp_d_W_proj,
                          MLP_F, MLP_C, TOL, NULL, 0))
        KIT_EXPECT_TENSOR("mlp_backward: d_b_proj", d_b_proj, ch8_mlp_d_b_proj,
                          1, MLP_C, TOL, NULL, 0);
    float *all[] = {x,   W_fc,    b_fc, W_proj, b_proj, d_out,    fc,      gl,
                    out, scratch, d_x,  d_W_fc, d_b_fc, d_W_proj, d_b_proj};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        kit_output_free(all[i]);
}

enum { CE_N = 4, CE_V = 9 };

KIT_TEST(crossentropy_golden, "cross-entropy: probabilities, the mean loss "
                              "and d_logits equal PyTorch's")
{
    if (!layernorm_ready())
        return;
    const int n = CE_N * CE_V;
    float *logits = from_double(ch8_ce_logits, n, "logits", "N*V"),
          *probs = kit_guarded(n, "probs", "N*V");
    float *losses = kit_guarded(CE_N, "losses", "N"),
          *d_logits = filled(n, 0, "d_logits", "N*V");
    if (KIT_EXPECT_STATUS("crossentropy_forward()",
                          crossentropy_forward(logits, ch8_ce_targets, probs,
                                               losses, CE_N, CE_V),
                          KIT_OK) &&
        KIT_EXPECT_TENSOR("crossentropy_forward: probs", probs, ch8_ce_probs,
                          CE_N, CE_V, TOL, NULL, 0)) {
        double mean = 0;
        for (int i = 0; i < CE_N; i++)
            mean += losses[i] / (double)CE_N;
        if (KIT_CHECK(fabs(mean - ch8_ce_loss) < TOL,
                      "crossentropy_forward: the mean loss is %.7f, PyTorch "
                      "gives %.7f",
                      mean, ch8_ce_loss) &&
            KIT_EXPECT_STATUS("crossentropy_backward(scale = 1/N)",
                              crossentropy_backward(probs, ch8_ce_targets,
                                                    d_logits, 1.0f / CE_N, CE_N,
                                                    CE_V),
                              KIT_OK))
            KIT_EXPECT_TENSOR("crossentropy_backward: d_logits", d_logits,
                              ch8_ce_d_logits, CE_N, CE_V, TOL, NULL, 0);
    }
    int bad[CE_N] = {0, 1, CE_V, 2};
    KIT_EXPECT_STATUS(
        "crossentropy_forward() with a target of V",
        crossentropy_forward(logits, bad, probs, losses, CE_N, CE_V),
        KIT_E_SIZE);
    kit_output_free(logits), kit_output_free(probs);
    kit_output_free(losses), kit_output_free(d_logits);
}

/* ---------------------------------------------------------------------
 * The whole model against PyTorch
 * ------------------------------------------------------------------- */

static struct gpt_config golden_config(void)
{
    struct gpt_config c = {CH8_V, CH8_T, CH8_C, CH8_L, CH8_H, CH8_B};
    return c;
}

static struct gpt_train_config golden_train(void)
{
    struct gpt_train_config tc = gpt_default_train((int)ch8_train[2]);
    tc.lr = (float)ch8_train[0];
    tc.lr_min = 1e-4f;
    tc.warmup = (int)ch8_train[1];
    tc.beta1 = (float)ch8_train[3], tc.beta2 = (float)ch8_train[4];
    tc.eps = (float)ch8_train[5], tc.weight_decay = (float)ch8_train[6];
    tc.clip = (float)ch8_train[7];
    return tc;
}

/* gpt_init() on the golden case, then PyTorch's parameters loaded. */
static int golden_model(struct gpt_model *m)
{
    struct gpt_config c = golden_config();
    if (!ready("gpt_init(V 11, T 5, C 8, L 2, 2 heads)", gpt_init(m, &c, 1)))
        return 0;
    if (!KIT_CHECK(m->n_params == CH8_P,
                   "the model has %d parameters, PyTorch's %d", m->n_params,
                   CH8_P)) {
        gpt_free(m);
        return 0;
    }
    kit_to_float(ch8_gpt_params0, m->params, CH8_P);
    return 1;
}

/* Compare a (P) block tensor by tensor; the message names the tensor.
 * offset: where each tensor starts in the PyTorch arrays (the same). */
static int expect_tensors(const struct gpt_model *m, const float *got,
                          const double *want, const char *what, double tol)
{
    for (int k = 0; k < GPT_N_TENSORS; k++) {
        const int at = (int)(m->p.t[k] - m->params);
        const int n = gpt_tensor_size(&m->cfg, k), C = m->cfg.C;
        char call[128];
        snprintf(call, sizeof call, "%s of %s (as a (%d, %d) matrix)", what,
                 gpt_tensor_name(k), n / C, C);
        if (!KIT_EXPECT_TENSOR(call, got + at, want + at, n / C, C, tol, NULL,
                               0))
            return 0;
    }
    return 1;
}

KIT_TEST(gpt_golden_grads, "the model: loss and every parameter's gradient "
                           "equal a PyTorch GPT's")
{
    struct gpt_model m;
    if (!golden_model(&m))
        return;
    if (ready("gpt_forward(x, targets, B 2, T 5)",
              gpt_forward(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T)) &&
        KIT_CHECK(fabs(m.loss - ch8_gpt_losses[0]) < MODEL_TOL,
                  "the model's loss is %.7f, PyTorch's %.7f: the forward "
                  "pass differs (LayerNorm, attention or the MLP)",
                  m.loss, ch8_gpt_losses[0])) {
        gpt_zero_grad(&m);
        if (ready("gpt_backward()", gpt_backward(&m)))
            expect_tensors(&m, m.grads, ch8_gpt_grads0,
                           "gpt_backward(): the gradient", MODEL_TOL);
    }
    gpt_free(&m);
}

KIT_TEST(gpt_golden_adamw, "the model: two steps of clipping and AdamW "
                           "(decay, warm-up) equal torch.optim.AdamW's")
{
    struct gpt_model m;
    if (!golden_model(&m))
        return;
    const struct gpt_train_config tc = golden_train();
    for (int step = 0; step < 2; step++) {
        float loss = 0, norm = 0;
        char call[64];
        snprintf(call, sizeof call, "gpt_train_step(step %d)", step);
        if (!ready(call, gpt_train_step(&m, &tc, step, ch8_gpt_x, ch8_gpt_y,
                                        CH8_B, CH8_T, &loss, &norm)) ||
            !KIT_CHECK(fabs(loss - ch8_gpt_losses[step]) < MODEL_TOL &&
                           fabs(norm - ch8_gpt_norms[step]) < MODEL_TOL,
                       "step %d: loss %.7f and gradient norm %.7f, PyTorch "
                       "gives %.7f and %.7f",
                       step, loss, norm, ch8_gpt_losses[step],
                       ch8_gpt_norms[step])) {
            gpt_free(&m);
            return;
        }
    }
    expect_tensors(&m, m.params, ch8_gpt_params2,
                   "after two AdamW steps: the parameters", MODEL_TOL);
    gpt_free(&m);
}

/* ---------------------------------------------------------------------
 * The whole model against finite differences
 * ------------------------------------------------------------------- */

KIT_TEST(gpt_fd_every_tensor,
         "the model: d loss / d (every parameter tensor) matches finite "
         "differences, and a second backward pass adds to it")
{
    enum { PER = 5 };
    struct gpt_model m;
    if (!golden_model(&m))
        return;
    const int N = CH8_B * CH8_T;
    if (!ready("gpt_forward()",
               gpt_forward(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T)))
        goto done;
    gpt_zero_grad(&m);
    if (!ready("gpt_backward()", gpt_backward(&m)))
        goto done;
    float *once = kit_alloc((size_t)m.n_params * sizeof *once);
    memcpy(once, m.grads, (size_t)m.n_params * sizeof *once);
    /* every parameter moved up and down, all the losses at once */
    enum { PROBES = 2 * PER * GPT_N_TENSORS };
    int index[PROBES];
    float value[PROBES], loss[PROBES];
    for (int k = 0, q = 0; k < GPT_N_TENSORS; k++) {
        const int at = (int)(m.p.t[k] - m.params);
        const int n = gpt_tensor_size(&m.cfg, k);
        for (int j = 0; j < PER; j++, q += 2) {
            const int i = at + (j * n / PER + 7 * j + 3) % n; /* scattered */
            index[q] = index[q + 1] = i;
            value[q] = m.params[i] + 1e-2f, value[q + 1] = m.params[i] - 1e-2f;
        }
    }
    gpt_loss_probe(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T, 0, PROBES, index,
                   value, loss);
    for (int k = 0, q = 0; k < GPT_N_TENSORS; k++) {
        const int at = (int)(m.p.t[k] - m.params);
        for (int j = 0; j < PER; j++, q += 2) {
            const int i = index[q];
            const float hi = value[q], lo = value[q + 1];
            const double up = loss[q], down = loss[q + 1];
            double want = (up - down) / ((double)hi - (double)lo);
            if (!KIT_CHECK(fabs(once[i] - want) <= 2e-3 + 2e-3 * fabs(want),
                           "d loss / d %s[%d] is %.6g, finite differences "
                           "give %.6g (loss averaged over %d positions)",
                           gpt_tensor_name(k), i - at, (double)once[i], want,
                           N)) {
                free(once);
                goto done;
            }
        }
    }
    /* a second forward and backward without zeroing: twice the gradient */
    gpt_forward(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T);
    if (ready("gpt_backward() a second time", gpt_backward(&m))) {
        int bad = -1;
        for (int i = 0; i < m.n_params && bad < 0; i++)
            if (fabsf(m.grads[i] - 2 * once[i]) >
                1e-6f + 1e-5f * fabsf(once[i]))
                bad = i;
        KIT_CHECK(bad < 0,
                  "after two backward passes gradient %d is %.7g, not twice "
                  "%.7g: a backward pass must add into the gradients",
                  bad, bad < 0 ? 0.0 : m.grads[bad], bad < 0 ? 0.0 : once[bad]);
    }
    free(once);
done:
    gpt_free(&m);
}

/* Grouped-query sharing (gpt_kv_share): with 4 heads in 2 or 1 K/V
 * groups, the gathered gradient of a shared number is d loss / d that
 * number when every head's copy moves with it; the other copies hold no
 * gradient and, after GPT_KV_COPY, equal their group's first head. */
static int kv_share_case(int g)
{
    struct gpt_config c = golden_config();
    c.n_heads = 4; /* C 8: 2 columns per head */
    struct gpt_model m;
    if (!ready("gpt_init(V 11, T 5, C 8, L 2, 4 heads)", gpt_init(&m, &c, 5)))
        return 0;
    int ok =
        ready("gpt_kv_share(GPT_KV_COPY)", gpt_kv_share(&m, g, GPT_KV_COPY)) &&
        ready("gpt_forward()",
              gpt_forward(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T));
    if (ok) {
        gpt_zero_grad(&m);
        ok = ready("gpt_backward()", gpt_backward(&m)) &&
             ready("gpt_kv_share(GPT_KV_GATHER)",
                   gpt_kv_share(&m, g, GPT_KV_GATHER));
    }
    const int C = c.C, d = C / c.n_heads, group = c.n_heads / g;
    const int tensors[2] = {GPT_W_K, GPT_W_V};
    /* a third of the shared numbers, each moved up and down with its
     * copies (gpt_loss_probe), all the losses at once */
    enum { MOST = 2 * CH8_L * CH8_C * CH8_C * 2 };
    int index[MOST], n_probe = 0;
    float value[MOST], loss[MOST];
    for (int k = 0; ok && k < 2; k++)
        for (int l = 0; l < c.L; l++)
            for (int r = 0; r < C; r++)
                for (int col = 0; col < C; col++) {
                    const int at = l * C * C + r * C + col;
                    if ((col / d) % group != 0 || (r + col + l + k) % 3 != 0)
                        continue;
                    const int i = (int)(m.p.t[tensors[k]] + at - m.params);
                    index[n_probe] = index[n_probe + 1] = i;
                    value[n_probe] = m.params[i] + 1e-2f;
                    value[n_probe + 1] = m.params[i] - 1e-2f;
                    n_probe += 2;
                }
    if (ok)
        gpt_loss_probe(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T, g, n_probe,
                       index, value, loss);
    for (int k = 0, q = 0; ok && k < 2; k++)
        for (int l = 0; ok && l < c.L; l++)
            for (int r = 0; ok && r < C; r++)
                for (int col = 0; ok && col < C; col++) {
                    const int head = col / d, at = l * C * C + r * C + col;
                    const float grad = m.g.t[tensors[k]][at];
                    if (head % group != 0) { /* a copy */
                        ok = KIT_CHECK(grad == 0.0f,
                                       "g = %d: %s[%d][%d] (head %d, a copy "
                                       "of head %d's column) keeps the "
                                       "gradient %.6g after the gather, "
                                       "not 0",
                                       g, gpt_tensor_name(tensors[k]),
                                       l * C + r, col, head,
                                       head - head % group, (double)grad);
                        continue;
                    }
                    if ((r + col + l + k) % 3 != 0)
                        continue; /* a third of the shared numbers */
                    const double want =
                        ((double)loss[q] - (double)loss[q + 1]) / 2e-2;
                    q += 2;
                    ok = KIT_CHECK(
                        fabs(grad - want) <= 2e-3 + 2e-3 * fabs(want),
                        "g = %d: the gathered gradient of %s[%d][%d] "
                        "(head %d's column, read by heads %d-%d) is "
                        "%.6g; finite differences moving every "
                        "copy give %.6g",
                        g, gpt_tensor_name(tensors[k]), l * C + r, col, head,
                        head, head + group - 1, (double)grad, want);
                }
    gpt_free(&m);
    return ok;
}

KIT_TEST(gpt_kv_share_gradient,
         "gpt_kv_share: 4 heads sharing 2 or 1 K/V heads: each shared "
         "number's gathered gradient matches finite differences; bad group "
         "counts are refused")
{
    if (!kv_share_case(2) || !kv_share_case(1))
        return;
    struct gpt_config c = golden_config();
    c.n_heads = 4;
    struct gpt_model m;
    if (!ready("gpt_init(4 heads)", gpt_init(&m, &c, 5)))
        return;
    KIT_EXPECT_STATUS("gpt_kv_share(g = 3 of 4 heads)",
                      gpt_kv_share(&m, 3, GPT_KV_COPY), KIT_E_HEADS);
    KIT_EXPECT_STATUS("gpt_kv_share(g = 0)", gpt_kv_share(&m, 0, GPT_KV_COPY),
                      KIT_E_HEADS);
    KIT_EXPECT_STATUS("gpt_kv_share(mode 7)", gpt_kv_share(&m, 2, 7),
                      KIT_E_SIZE);
    KIT_EXPECT_STATUS("gpt_kv_share(NULL)", gpt_kv_share(NULL, 2, GPT_KV_COPY),
                      KIT_E_NULL);
    gpt_free(&m);
}

/* ---------------------------------------------------------------------
 * Training, configurations, sampling
 * ------------------------------------------------------------------- */

KIT_TEST(gpt_overfits_one_batch,
         "training: 60 AdamW steps on one batch of 4 x 16 random tokens take "
         "the loss from log V below 0.1; the schedule warms up and decays")
{
    enum { STEPS = 60 };
    const float GOAL = 0.1f;
    struct gpt_config c = {32, 16, 32, 2, 4, 4};
    struct gpt_model m;
    if (!ready("gpt_init(V 32, T 16, C 32, L 2, 4 heads, B 4)",
               gpt_init(&m, &c, 7)))
        return;
    int x[4 * 16], y[4 * 16];
    struct rng r;
    rng_seed(&r, 88);
    for (int i = 0; i < 4 * 16; i++)
        x[i] = rng_int(&r, c.V), y[i] = rng_int(&r, c.V);
    struct gpt_train_config tc = gpt_default_train(STEPS);
    tc.lr = 1e-2f, tc.weight_decay = 0;
    float losses[STEPS];
    if (!ready("gpt_train_steps(steps 0 .. 59)",
               gpt_train_steps(&m, &tc, 0, STEPS, x, y, 4, 16, losses, NULL))) {
        gpt_free(&m);
        return;
    }
    const float first = losses[0], loss = losses[STEPS - 1];
    gpt_free(&m);
    if (!KIT_CHECK(fabsf(first - logf((float)c.V)) < 0.2f && loss < GOAL,
                   "the loss went from %.4f (log V = %.4f) to %.4f in %d "
                   "steps; it should fall below %.2f. The pieces tested "
                   "above pass, so look at how they are chained.",
                   first, logf((float)c.V), loss, STEPS, GOAL))
        return;
    /* the schedule: warm-up from lr/warmup, peak, cosine down to lr_min */
    float l0 = gpt_lr_at(&tc, 0), lw = gpt_lr_at(&tc, tc.warmup);
    float lmid = gpt_lr_at(&tc, (tc.warmup + STEPS - 1) / 2);
    float lend = gpt_lr_at(&tc, STEPS - 1);
    KIT_CHECK(fabsf(l0 - tc.lr / tc.warmup) < 1e-7f &&
                  fabsf(lw - tc.lr) < 1e-7f &&
                  fabsf(lmid - (tc.lr + tc.lr_min) / 2) < 2e-4f &&
                  fabsf(lend - tc.lr_min) < 1e-7f,
              "gpt_lr_at: %g at step 0, %g at the warm-up's end, %g half-way, "
              "%g at the end; expected %g, %g, about %g, %g",
              l0, lw, lmid, lend, tc.lr / tc.warmup, tc.lr,
              (tc.lr + tc.lr_min) / 2, tc.lr_min);
}

KIT_TEST(gpt_threads_identical,
         "training: two steps on 1 thread and on 2 give bit for bit the same "
         "loss, gradient norm and parameters")
{
#ifdef _OPENMP
    /* large enough that gpt.c shares the work among the threads (a pass
     * of fewer than GPT_THREAD_WORK = 16e6 multiply-adds, about N C (V +
     * 12 C L), runs on one): here about 21.6e6. B = 15, odd, so that the
     * threads get unequal shares of the sequences. V is small, so that
     * the products have few blocks: each is a wait for both threads,
     * long on a busy machine */
    enum { V = 1024, T = 32, C = 32, L = 1, H = 4, B = 15, N = B * T };
    const struct gpt_config c = {V, T, C, L, H, B};
    static int x[N], y[N];
    struct rng r;
    rng_seed(&r, 21);
    for (int i = 0; i < N; i++)
        x[i] = rng_int(&r, V), y[i] = rng_int(&r, V);
    const struct gpt_train_config tc = gpt_default_train(10);
    struct gpt_model m[2];
    float loss[2][2], norm[2][2];
    int made = 0, ok = 1;
    for (int run = 0; run < 2 && ok; run++) {
        char call[96];
        snprintf(call, sizeof call,
                 "gpt_init(V %d, T %d, C %d, L %d, %d "
                 "heads, B %d)",
                 V, T, C, L, H, B);
        ok = ready(call, gpt_init(&m[run], &c, 3));
        made += ok;
        omp_set_num_threads(run + 1);
        for (int step = 0; step < 2 && ok; step++) {
            snprintf(call, sizeof call,
                     "gpt_train_step(step %d) on %d "
                     "thread%s",
                     step, run + 1, run ? "s" : "");
            ok =
                ready(call, gpt_train_step(&m[run], &tc, step, x, y, B, T,
                                           &loss[run][step], &norm[run][step]));
        }
    }
    if (ok) {
        int bad = -1;
        for (int i = 0; i < m[0].n_params && bad < 0; i++)
            if (memcmp(&m[0].params[i], &m[1].params[i], sizeof(float)))
                bad = i;
        KIT_CHECK(bad < 0 && memcmp(loss[0], loss[1], sizeof loss[0]) == 0 &&
                      memcmp(norm[0], norm[1], sizeof norm[0]) == 0,
                  "after two steps on 1 thread and on 2: losses %.9g, %.9g "
                  "and %.9g, %.9g, norms %.9g, %.9g and %.9g, %.9g, first "
                  "parameter that differs %d (%.9g and %.9g): a sum in the "
                  "training step depends on how the work is shared among the "
                  "threads",
                  loss[0][0], loss[0][1], loss[1][0], loss[1][1], norm[0][0],
                  norm[0][1], norm[1][0], norm[1][1], bad,
                  bad < 0 ? 0.0 : m[0].params[bad],
                  bad < 0 ? 0.0 : m[1].params[bad]);
    }
    for (int run = 0; run < made; run++)
        gpt_free(&m[run]);
#else
    KIT_CHECK(1, "built without OpenMP: one thread only");
#endif
}

KIT_TEST(gpt_config_errors,
         "gpt_init: heads that do not divide C give KIT_E_HEADS, sizes <= 0 "
         "KIT_E_SIZE, each named in one line")
{
    static const struct {
        struct gpt_config c;
        int want;
        const char *word; /* the message names the problem */
    } cases[] = {
        {{16, 8, 8, 2, 3, 1}, KIT_E_HEADS, "n_heads = 3"},
        {{0, 8, 8, 2, 2, 1}, KIT_E_SIZE, "V = 0"},
        {{16, 8, 8, 0, 2, 1}, KIT_E_SIZE, "L = 0"},
        {{16, -1, 8, 2, 2, 1}, KIT_E_SIZE, "T = -1"},
        {{16, 8, 8, 2, 2, 0}, KIT_E_SIZE, "B = 0"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct gpt_model m;
        const struct gpt_config *c = &cases[k].c;
        char call[128], why[160];
        snprintf(call, sizeof call,
                 "gpt_init(V %d, T %d, C %d, L %d, %d heads, B %d)", c->V, c->T,
                 c->C, c->L, c->n_heads, c->B);
        int got = gpt_init(&m, c, 1);
        if (got == KIT_OK)
            gpt_free(&m);
        if (got == KIT_E_TODO) {
            ready(call, got);
            return;
        }
        if (!KIT_EXPECT_STATUS(call, got, cases[k].want))
            return;
        int again = gpt_check_config(c, why, sizeof why);
        if (!KIT_CHECK(again == cases[k].want && strstr(why, cases[k].word) &&
                           !strchr(why, '\n'),
                       "gpt_check_config(%s) said \"%s\" (%s); the line "
                       "should name \"%s\"",
                       call, why, kit_status_name(again), cases[k].word))
            return;
    }
}

KIT_TEST(gpt_generate_seeded,
         "sampling: the same seed gives the same tokens; temperature 0 and "
         "top_k 1 pick the argmax; top_k keeps the k best")
{
    enum { PROMPT = 3, NEW = 20 };
    struct gpt_config c = {16, 8, 16, 2, 2, 1};
    struct gpt_model m;
    if (!ready("gpt_init(V 16, T 8, C 16, L 2, 2 heads)", gpt_init(&m, &c, 3)))
        return;
    for (int i = 0; i < m.n_params; i++) /* sharper logits than at init */
        m.params[i] *= 10;
    int a[PROMPT + NEW] = {1, 2, 3}, b[PROMPT + NEW] = {1, 2, 3};
    int greedy[PROMPT + NEW] = {1, 2, 3}, k1[PROMPT + NEW] = {1, 2, 3};
    if (!ready("gpt_generate(seed 5)",
               gpt_generate(&m, a, PROMPT, NEW, 1.0f, 0, 5)) ||
        !ready("gpt_generate(seed 5) again",
               gpt_generate(&m, b, PROMPT, NEW, 1.0f, 0, 5)) ||
        !ready("gpt_generate(temperature 0)",
               gpt_generate(&m, greedy, PROMPT, NEW, 0.0f, 0, 5)) ||
        !ready("gpt_generate(top_k 1)",
               gpt_generate(&m, k1, PROMPT, NEW, 1.0f, 1, 9))) {
        gpt_free(&m);
        return;
    }
    int in_range = 1;
    for (int i = 0; i < PROMPT + NEW; i++)
        in_range &= a[i] >= 0 && a[i] < c.V;
    if (!KIT_CHECK(in_range && !memcmp(a, b, sizeof a),
                   "two runs with seed 5 gave different tokens, or a token "
                   "out of 0..V-1") ||
        !KIT_CHECK(!memcmp(greedy, k1, sizeof a),
                   "top_k = 1 and temperature 0 should both pick the argmax "
                   "at every step")) {
        gpt_free(&m);
        return;
    }
    /* the last row of logits: top_k 3 draws only among its 3 best */
    const float *z = m.a.logits + (size_t)(m.T - 1) * c.V;
    float probs[16];
    struct rng r;
    rng_seed(&r, 1);
    int outside = -1;
    for (int draw = 0; draw < 200 && outside < 0; draw++) {
        int t = gpt_sample_token(z, probs, c.V, 2.0f, 3, &r), above = 0;
        for (int j = 0; j < c.V; j++)
            above += z[j] > z[t];
        if (above >= 3)
            outside = t;
    }
    gpt_free(&m);
    KIT_CHECK(outside < 0,
              "gpt_sample_token(top_k 3) drew token %d, which is "
              "not among the 3 largest logits",
              outside);
}

/* ---------------------------------------------------------------------
 * What the heads do: the offset profile (exercise 8.3)
 * ------------------------------------------------------------------- */

/* The classic mistakes of the two measurements, as flags of the test's
 * own reference (in double), which gives what each mistake outputs. */
enum {
    M_WRONG_END = 1,       /* offset read as j, not i - j              */
    M_MEAN_ALL_ROWS = 2,   /* mean_w divided by all N*T rows           */
    M_SHARE_ALL_ROWS = 4,  /* top_share divided by all N*T rows        */
    M_TIES_LAST = 8,       /* argmax ties broken to the last j         */
    M_OFFSET_1 = 16,       /* baseline: offset 1 only, not the best k  */
    M_ROW_OF_RELATED = 32, /* score read from the related word's row  */
    M_BEST_K_LAST = 64,    /* baseline ties broken to the largest k    */
    M_ARGMAX_STAYS = 128,  /* argmax's best never moved off j = 0      */
    M_FLAT_RELATED = 256,  /* argmax compared with related's flat index */
    M_ROW_SEQ_0 = 512,     /* the word's row taken from sequence 0     */
    M_SCORE_INT = 1024,    /* score = hits / n_cases in int            */
    M_NO_HITS = 2048,      /* hits never counted                       */
    M_BEST_NEVER = 4096    /* the best offset never recorded           */
};

static const char *const advice_wrong_end =
    "The offset of weight A[i][j] is i - j, how far back key j is from "
    "query i: column k of row i is A[i][i - k], not A[i][k].";
static const char *const advice_all_rows =
    "A row i < k has no token k back. Leave such rows out of column k "
    "altogether: divide by the N * (T - k) rows that have the offset, "
    "not by all N * T rows.";
static const char *const advice_ties_last =
    "When two weights of a row tie, the heaviest is the one with the "
    "lowest j: update the best only when a weight is strictly larger (>, "
    "not >=).";

/* The heaviest weight of row A_i (T) among j = 0 .. i. */
static int ref_argmax(const float *A_i, int i, int flags)
{
    int best = 0;
    for (int j = 1; j <= i && !(flags & M_ARGMAX_STAYS); j++)
        if ((flags & M_TIES_LAST) ? A_i[j] >= A_i[best] : A_i[j] > A_i[best])
            best = j;
    return best;
}

/* The offset profile with the mistakes in flags: out (2, K + 2),
 * mean_w then top_share. */
static void ref_offset_profile(const float *A, int N, int T, int K, int flags,
                               double *out)
{
    for (int k = 0; k <= K + 1; k++) {
        const int first = k <= K ? k : 0;
        double sum = 0, top = 0;
        for (int n = 0; n < N; n++)
            for (int i = first; i < T; i++) {
                const float *A_i = A + ((size_t)n * T + i) * T;
                int j = k > K ? 0 : (flags & M_WRONG_END) ? k : i - k;
                sum += A_i[j];
                top += ref_argmax(A_i, i, flags) == j;
            }
        double rows = (double)N * (T - first);
        out[k] = sum / ((flags & M_MEAN_ALL_ROWS) ? (double)N * T : rows);
        out[K + 2 + k] =
            top / ((flags & M_SHARE_ALL_ROWS) ? (double)N * T : rows);
    }
}

/* Two sequences of T = 4 tokens: one head's causal weights, in eighths
 * so that every mean is exact. Row 1 of sequence 0 and row 3 of
 * sequence 1 are ties. */
enum { HN = 2, HT = 4 };
static const float hand_A[HN * HT * HT] = {
    1,   0,   0, 0, /* sequence 0 */
    .5,  .5,  0, 0, .25, .5,  .25, 0, .125, .25,  .5,   .125,
    1,   0,   0, 0, /* sequence 1 */
    .25, .75, 0, 0, .5,  .25, .25, 0, .375, .125, .125, .375};

/* Run head_offset_profile(A, N, T, K) and compare both outputs, as one
 * tensor (2, K + 2), with want and the mistakes. */
static int expect_profile(const char *call, const float *A, int N, int T, int K,
                          const double *want)
{
    const int n = K + 2;
    float *mean_w = kit_guarded((size_t)n, "mean_w", "K+2"),
          *top = kit_guarded((size_t)n, "top_share", "K+2");
    float *got = kit_alloc(2 * (size_t)n * sizeof *got);
    double *mis = kit_alloc(5 * 2 * (size_t)n * sizeof *mis);
    const int flags[5] = {M_WRONG_END, M_MEAN_ALL_ROWS, M_SHARE_ALL_ROWS,
                          M_MEAN_ALL_ROWS | M_SHARE_ALL_ROWS, M_TIES_LAST};
    for (int v = 0; v < 5; v++)
        ref_offset_profile(A, N, T, K, flags[v], mis + (size_t)v * 2 * n);
    const struct kit_mistake m[] = {
        {"the offset counted from the wrong end (A[i][k] read for offset k, "
         "not A[i][i - k])",
         advice_wrong_end, mis},
        {"rows without the offset counted as zeros in mean_w (divided by "
         "all rows)",
         advice_all_rows, mis + 2 * n},
        {"rows without the offset counted as zeros in top_share (divided "
         "by all rows)",
         advice_all_rows, mis + 4 * n},
        {"rows without the offset counted as zeros (mean_w and top_share "
         "divided by all rows)",
         advice_all_rows, mis + 6 * n},
        {"argmax ties broken to the last j instead of the first",
         advice_ties_last, mis + 8 * n}};
    float *Ag = kit_guarded_copy(A, (size_t)N * T * T, "A", "N*T*T");
    int ok = KIT_EXPECT_STATUS(
                 call, head_offset_profile(Ag, N, T, K, mean_w, top), KIT_OK) &&
             KIT_EXPECT_IN_BOUNDS(call, "mean_w", mean_w, (size_t)n) &&
             KIT_EXPECT_IN_BOUNDS(call, "top_share", top, (size_t)n) &&
             KIT_EXPECT_GUARDS(call);
    if (ok) {
        memcpy(got, mean_w, (size_t)n * sizeof *got);
        memcpy(got + n, top, (size_t)n * sizeof *got);
        char what[320];
        snprintf(what, sizeof what,
                 "%s: row 0 mean_w[0..K] then mean_w[K+1] (first token), "
                 "row 1 top_share",
                 call);
        ok = KIT_EXPECT_TENSOR(what, got, want, 2, n, 1e-6, m, 5);
    }
    kit_output_free(mean_w), kit_output_free(top), kit_output_free(Ag);
    free(got), free(mis);
    return ok;
}

/* Weights of hand_A's shape, N 2 and T 4, drawn from the hidden seed
 * (kit_test.h) xor stream: each row i of a sequence has weights 1 to 4
 * on j = 0 .. i over their sum, and 0 after i, so that ties stay
 * frequent and exact, as in hand_A. */
static void hidden_hand_A(float *A, unsigned long long stream)
{
    struct rng r;
    rng_seed(&r, kit_hidden_seed() ^ stream);
    for (int n = 0; n < HN; n++)
        for (int i = 0; i < HT; i++) {
            float *A_i = A + ((size_t)n * HT + i) * HT;
            int count[HT], sum = 0;
            for (int j = 0; j <= i; j++)
                count[j] = 1 + rng_int(&r, 4), sum += count[j];
            for (int j = 0; j < HT; j++)
                A_i[j] = j <= i ? (float)count[j] / (float)sum : 0.0f;
        }
}

/* The call's label for a hidden twin of a hand-made case. */
static void hidden_hand_label(char *label, size_t size, const char *call)
{
    snprintf(label, size,
             "%s, hand_A's shape on hidden numbers (seed %llu; "
             "KIT_HIDDEN_SEED=%llu make test CH=8 runs it again)",
             call, kit_hidden_seed(), kit_hidden_seed());
}

KIT_TEST(offset_profile_hand, "head_offset_profile: the mean weight and the "
                              "heaviest-weight share per offset, on two "
                              "hand-made sequences with ties")
{
    /* offsets 0, 1, 2 over 8, 6 and 4 rows, the first token over 8:
     * mean_w    = 4.25/8, 2.125/6, 1.125/4, 4/8
     * top_share = 3/8,    3/6,     1/4,     5/8  (ties: the lowest j) */
    const double want[2 * 4] = {4.25 / 8, 2.125 / 6, 1.125 / 4, 4.0 / 8,
                                3.0 / 8,  3.0 / 6,   1.0 / 4,   5.0 / 8};
    if (!expect_profile("head_offset_profile(A, N 2, T 4, K 2)", hand_A, HN, HT,
                        2, want))
        return;
    /* The hand-made case is published: once it passes, the same shape on
     * hidden numbers, judged by ref_offset_profile(), so that code which
     * recognises hand_A and returns its answer gains nothing. */
    float A[HN * HT * HT];
    double want_h[2 * 4];
    hidden_hand_A(A, 0x6f6670ULL);
    ref_offset_profile(A, HN, HT, 2, 0, want_h);
    char call[200];
    hidden_hand_label(call, sizeof call, "head_offset_profile(A, 2, 4, K 2)");
    expect_profile(call, A, HN, HT, 2, want_h);
}

/* A previous-token head of N sequences of T drawn from r: row 0 all on
 * itself, and every row i >= 1 weights of 1 to 3 on j = 0 .. i over
 * their sum, but 4 to 7 on j = i - 1, so that i - 1 is always the one
 * heaviest weight. */
static void hidden_previous_token(float *A, int N, int T, struct rng *r)
{
    for (int n = 0; n < N; n++)
        for (int i = 0; i < T; i++) {
            float *A_i = A + ((size_t)n * T + i) * T;
            int count[16], sum = 0;
            for (int j = 0; j <= i; j++) {
                count[j] =
                    i && j == i - 1 ? 4 + rng_int(r, 4) : 1 + rng_int(r, 3);
                count[j] = i ? count[j] : 1, sum += count[j];
            }
            for (int j = 0; j < T; j++)
                A_i[j] = j <= i ? (float)count[j] / (float)sum : 0.0f;
        }
}

/* head_offset_profile on a previous-token head A: want, and top_share[1]
 * at least HEADS_POSITIONAL. hidden: the label of a hidden twin, added to
 * the second check, or NULL. 1 when right. */
static int previous_token_case(const char *call, const float *A, int N, int T,
                               int K, const double *want, const char *hidden)
{
    if (!expect_profile(call, A, N, T, K, want))
        return 0;
    float mean_w[16], top[16];
    head_offset_profile(A, N, T, K, mean_w, top);
    return KIT_CHECK(top[1] >= HEADS_POSITIONAL,
                     "a head that always looks one back must count as "
                     "positional (top_share[1] = %g >= %g)%s%s",
                     (double)top[1], (double)HEADS_POSITIONAL,
                     hidden ? ", " : "", hidden ? hidden : "");
}

KIT_TEST(offset_profile_previous_token,
         "head_offset_profile: a perfect previous-token head has share 1 at "
         "offset 1, positional by Voita et al.'s 90 %")
{
    /* every row i >= 1 puts all its weight on i - 1; row 0 on itself */
    enum { N = 2, T = 5, K = 3 };
    float A[N * T * T] = {0};
    for (int n = 0; n < N; n++)
        for (int i = 0; i < T; i++)
            A[(n * T + i) * T + (i ? i - 1 : 0)] = 1;
    /* offset 0: only row 0 (2 of 10 rows); offset 1: all 8 rows that
     * have one; first token: rows 0 and 1 (4 of 10) */
    const double want[2 * (K + 2)] = {0.2, 1, 0, 0, 0.4, 0.2, 1, 0, 0, 0.4};
    if (!previous_token_case("head_offset_profile(previous-token head, N 2, "
                             "T 5, K 3)",
                             A, N, T, K, want, NULL))
        return;
    /* The published head can be recognised: once it passes, previous-
     * token heads of shapes and weights drawn from the hidden seed
     * (kit_test.h), judged by ref_offset_profile(). */
    struct rng r;
    rng_seed(&r, kit_hidden_seed() ^ 0x707274ULL);
    for (int h = 0; h < KIT_HIDDEN_CASES; h++) {
        const int Nh = 1 + rng_int(&r, 3), Th = 2 + rng_int(&r, 5),
                  Kh = 1 + rng_int(&r, Th - 1);
        float Ah[3 * 6 * 6];
        double want_h[2 * 8];
        hidden_previous_token(Ah, Nh, Th, &r);
        ref_offset_profile(Ah, Nh, Th, Kh, 0, want_h);
        char what[120], label[300], call[300];
        snprintf(what, sizeof what,
                 "head_offset_profile(previous-token head, N %d, T %d, K %d)",
                 Nh, Th, Kh);
        hidden_label(call, sizeof call, what);
        hidden_label(label, sizeof label, "on a previous-token head");
        if (!previous_token_case(call, Ah, Nh, Th, Kh, want_h, label))
            return;
    }
}

KIT_TEST(offset_profile_one_token, "head_offset_profile: T = 1, where the one "
                                   "row is offset 0 and the first token")
{
    enum { N = 3 };
    const float A[N] = {1, 1, 1};
    const double want[4] = {1, 1, 1, 1};
    expect_profile("head_offset_profile(A, N 3, T 1, K 0)", A, N, 1, 0, want);
    float mean_w[3], top[3];
    KIT_EXPECT_STATUS("head_offset_profile(A, N 3, T 1, K 1): no row has "
                      "offset 1",
                      head_offset_profile(A, N, 1, 1, mean_w, top), KIT_E_SIZE);
    if (kit_current_failed())
        return;
    /* The published case can be recognised by its N: once it passes, a
     * number of one-token sequences drawn from the hidden seed
     * (kit_test.h), each row the weight 1 on itself. */
    struct rng r;
    rng_seed(&r, kit_hidden_seed() ^ 0x6f7431ULL);
    const int Nh = 1 + rng_int(&r, 40);
    float Ah[40];
    for (int n = 0; n < Nh; n++)
        Ah[n] = 1;
    char what[120], call[300];
    snprintf(what, sizeof what, "head_offset_profile(A, N %d, T 1, K 0)", Nh);
    hidden_label(call, sizeof call, what);
    if (!expect_profile(call, Ah, Nh, 1, 0, want))
        return;
    snprintf(what, sizeof what,
             "head_offset_profile(A, N %d, T 1, K 1): no row has offset 1", Nh);
    hidden_label(call, sizeof call, what);
    KIT_EXPECT_STATUS(call, head_offset_profile(Ah, Nh, 1, 1, mean_w, top),
                      KIT_E_SIZE);
}

/* One bad call: its status, and nothing written into either output. */
static void profile_error(const char *call, const float *A, int N, int T, int K,
                          int null_out, int want)
{
    float mean_w[8], top[8];
    kit_poison(mean_w, 8), kit_poison(top, 8);
    if (!KIT_EXPECT_STATUS(call,
                           head_offset_profile(A, N, T, K,
                                               null_out == 1 ? NULL : mean_w,
                                               null_out == 2 ? NULL : top),
                           want))
        return;
    int clean = 1;
    for (int k = 0; k < 8; k++)
        clean &= isnan(mean_w[k]) && isnan(top[k]);
    KIT_CHECK(clean,
              "%s returned the error but wrote into mean_w or "
              "top_share; on error write nothing",
              call);
}

KIT_TEST(offset_profile_errors, "head_offset_profile: NULL, sizes <= 0, K < 0 "
                                "or K >= T are errors, and write nothing")
{
    profile_error("head_offset_profile(NULL, 2, 4, 2, ...)", NULL, 2, 4, 2, 0,
                  KIT_E_NULL);
    profile_error("head_offset_profile(A, 2, 4, 2, NULL, top_share)", hand_A, 2,
                  4, 2, 1, KIT_E_NULL);
    profile_error("head_offset_profile(A, 2, 4, 2, mean_w, NULL)", hand_A, 2, 4,
                  2, 2, KIT_E_NULL);
    profile_error("head_offset_profile(A, N 0, 4, 2)", hand_A, 0, 4, 2, 0,
                  KIT_E_SIZE);
    profile_error("head_offset_profile(A, 2, T 0, 2)", hand_A, 2, 0, 0, 0,
                  KIT_E_SIZE);
    profile_error("head_offset_profile(A, 2, 4, K -1)", hand_A, 2, 4, -1, 0,
                  KIT_E_SIZE);
    profile_error("head_offset_profile(A, 2, T 4, K 4): offset 4 needs T >= 5",
                  hand_A, 2, 4, 4, 0, KIT_E_SIZE);
}

/* ---------------------------------------------------------------------
 * What the heads do: a relation against its baseline (exercise 8.4)
 * ------------------------------------------------------------------- */

/* relation_score with the mistakes in flags: out = {score, baseline,
 * best_k}. */
static void ref_relation(const float *A, int T, const int *word,
                         const int *related, int n_cases, int flags,
                         double *out)
{
    int hits = 0, best_k = 0, n_best = -1;
    for (int c = 0; c < n_cases && !(flags & M_NO_HITS); c++) {
        int row = (flags & M_ROW_OF_RELATED) ? related[c] : word[c];
        const float *A_row =
            A + (size_t)((flags & M_ROW_SEQ_0) ? row % T : row) * T;
        hits += ref_argmax(A_row, row % T, flags) ==
                ((flags & M_FLAT_RELATED) ? related[c] : related[c] % T);
    }
    for (int k = 0; k < T; k++) {
        int n_k = 0;
        for (int c = 0; c < n_cases; c++)
            n_k += word[c] - related[c] == k;
        int better = (flags & M_BEST_K_LAST) ? n_k >= n_best : n_k > n_best;
        if ((flags & M_BEST_NEVER) ? 0 : (flags & M_OFFSET_1) ? k == 1 : better)
            best_k = k, n_best = n_k;
    }
    out[0] = (flags & M_SCORE_INT) ? (double)(hits / n_cases)
                                   : (double)hits / n_cases;
    out[1] = (double)n_best / n_cases;
    out[2] = best_k;
}

static int expect_relation(const char *call, const float *A, int N, int T,
                           const int *word, const int *related, int n_cases,
                           const double *want)
{
    const int flags[10] = {M_TIES_LAST,   M_OFFSET_1,     M_ROW_OF_RELATED,
                           M_BEST_K_LAST, M_ARGMAX_STAYS, M_FLAT_RELATED,
                           M_ROW_SEQ_0,   M_SCORE_INT,    M_NO_HITS,
                           M_BEST_NEVER};
    double mis[10][3];
    for (int v = 0; v < 10; v++)
        ref_relation(A, T, word, related, n_cases, flags[v], mis[v]);
    const struct kit_mistake m[] = {
        {"argmax ties broken to the last j instead of the first",
         advice_ties_last, mis[0]},
        {"the baseline not maximised over k (offset 1 only)",
         "The baseline is the best fixed offset: count the cases at every "
         "offset k = 0 .. T-1 and keep the largest count, not only k = 1.",
         mis[1]},
        {"the related word's row read instead of the word's",
         "The word is the query: its row, A + word[c]*T, says where it "
         "looks; see whether its heaviest weight is at column related[c] % "
         "T.",
         mis[2]},
        {"baseline ties broken to the largest k instead of the smallest",
         "When two offsets have as many cases, keep the first (the "
         "smallest k): replace the best only on a strictly larger count.",
         mis[3]},
        {"the row's argmax never moved off j = 0 (best never updated)",
         "Scan j = 1 .. i and set best = j whenever A_i[j] > A_i[best].",
         mis[4]},
        {"the argmax compared with the related word's flat position "
         "related[c], not its position in the row related[c] % T",
         "The heaviest weight's j is a position in the row, 0 .. T-1: "
         "compare it with related[c] % T.",
         mis[5]},
        {"every word's row read from sequence 0 (word[c] % T rows in)",
         "word[c] is a flat position n*T + i: its row is A + word[c] * T, "
         "not A + (word[c] % T) * T.",
         mis[6]},
        {"the score divided in int (hits / n_cases is 0 unless every case "
         "hits)",
         "Divide in float: (float)hits / (float)n_cases.", mis[7]},
        {"the hits never counted",
         "Add 1 to hits for every case whose row's argmax is the related "
         "word.",
         mis[8]},
        {"the best offset never recorded (best_k and its count never set)",
         "When an offset's count beats the best so far, keep both: best_k = "
         "k and its count.",
         mis[9]}};
    float score = NAN, baseline = NAN;
    int best_k = -77;
    float *Ag = kit_guarded_copy(A, (size_t)N * T * T, "A", "N*T*T");
    /* word and related copied with one entry more, -1, a position no
     * case may hold: code that reads a case past n_cases meets it every
     * time, whatever the caller's memory holds beyond its arrays */
    int *wg = kit_alloc(2 * ((size_t)n_cases + 1) * sizeof *wg);
    int *rg = wg + n_cases + 1;
    memcpy(wg, word, (size_t)n_cases * sizeof *wg);
    memcpy(rg, related, (size_t)n_cases * sizeof *rg);
    wg[n_cases] = rg[n_cases] = -1;
    int ok = KIT_EXPECT_STATUS(call,
                               relation_score(Ag, N, T, wg, rg, n_cases, &score,
                                              &baseline, &best_k),
                               KIT_OK) &&
             KIT_EXPECT_GUARDS(call);
    kit_output_free(Ag);
    free(wg);
    if (!ok)
        return 0;
    const float got[3] = {score, baseline, (float)best_k};
    char what[320];
    snprintf(what, sizeof what, "%s: {score, baseline, best_k}", call);
    return KIT_EXPECT_TENSOR(what, got, want, 1, 3, 1e-6, m, 10);
}

KIT_TEST(relation_score_hand, "relation_score: the head's share and the best "
                              "fixed offset's, on hand-made cases with ties")
{
    /* flat positions: sequence 1's token i is 4 + i. The word's row's
     * heaviest weight (ties: lowest j) is on the related word in cases
     * 2, 3, 4 and 5; the offsets are 2, 2, 1, 3, 2, 1: offset 2 holds
     * 3 of 6 */
    const int word[6] = {3, 2, 1, 7, 6, 3}, related[6] = {1, 0, 0, 4, 4, 2};
    const double want[3] = {4.0 / 6, 3.0 / 6, 2};
    if (!expect_relation("relation_score(A, 2, 4, 6 cases)", hand_A, HN, HT,
                         word, related, 6, want))
        return;
    /* offsets 2, 3, 2, 3, 1: a tie between k = 2 and k = 3; only case
     * 1 (a tie in its row, won by j = 0) is found */
    const int w2[5] = {3, 7, 2, 3, 5}, r2[5] = {1, 4, 0, 0, 4};
    const double want2[3] = {1.0 / 5, 2.0 / 5, 2};
    if (!expect_relation("relation_score(A, 2, 4, 5 cases, offsets 2 and 3 "
                         "tie)",
                         hand_A, HN, HT, w2, r2, 5, want2))
        return;
    /* The hand-made cases are published: once they pass, hidden weights
     * of the same shape and 6 hidden cases, each a word and a related
     * word at or before it in the same sequence, judged by
     * ref_relation(). */
    float A[HN * HT * HT];
    hidden_hand_A(A, 0x72656cULL);
    struct rng r;
    rng_seed(&r, kit_hidden_seed() ^ 0x72656dULL);
    int wh[6], rh[6];
    for (int c = 0; c < 6; c++) {
        const int n = rng_int(&r, HN), i = rng_int(&r, HT);
        wh[c] = n * HT + i, rh[c] = n * HT + rng_int(&r, i + 1);
    }
    double want_h[3];
    ref_relation(A, HT, wh, rh, 6, 0, want_h);
    char call[200];
    hidden_hand_label(call, sizeof call, "relation_score(A, 2, 4, 6 cases)");
    expect_relation(call, A, HN, HT, wh, rh, 6, want_h);
}

KIT_TEST(relation_score_one_token, "relation_score: T = 1, every case a word "
                                   "related to itself")
{
    const float A[2] = {1, 1};
    const int word[2] = {0, 1}, related[2] = {0, 1};
    const double want[3] = {1, 1, 0};
    if (!expect_relation("relation_score(A, N 2, T 1, 2 cases)", A, 2, 1, word,
                         related, 2, want))
        return;
    /* The published case can be recognised: once it passes, one-token
     * sequences, their number and the cases (each a word related to
     * itself) drawn from the hidden seed (kit_test.h), judged by
     * ref_relation(). */
    struct rng r;
    rng_seed(&r, kit_hidden_seed() ^ 0x726f74ULL);
    const int Nh = 1 + rng_int(&r, 20), nh = 1 + rng_int(&r, 8);
    float Ah[20];
    int wh[8];
    for (int n = 0; n < Nh; n++)
        Ah[n] = 1;
    for (int c = 0; c < nh; c++)
        wh[c] = rng_int(&r, Nh);
    double want_h[3];
    ref_relation(Ah, 1, wh, wh, nh, 0, want_h);
    char what[120], call[300];
    snprintf(what, sizeof what, "relation_score(A, N %d, T 1, %d cases)", Nh,
             nh);
    hidden_label(call, sizeof call, what);
    expect_relation(call, Ah, Nh, 1, wh, wh, nh, want_h);
}

/* One bad call: its status, and nothing written. */
static void relation_error(const char *call, const float *A, int N, int T,
                           const int *word, const int *related, int n_cases,
                           int null_out, int want)
{
    float score = NAN, baseline = NAN;
    int best_k = -77;
    if (!KIT_EXPECT_STATUS(call,
                           relation_score(A, N, T, word, related, n_cases,
                                          null_out == 1 ? NULL : &score,
                                          null_out == 2 ? NULL : &baseline,
                                          null_out == 3 ? NULL : &best_k),
                           want))
        return;
    KIT_CHECK(isnan(score) && isnan(baseline) && best_k == -77,
              "%s returned the error but wrote into score, baseline or "
              "best_k; on error write nothing (check every case before you "
              "count)",
              call);
}

KIT_TEST(relation_score_errors,
         "relation_score: NULL, sizes <= 0, and a case out of range, related "
         "after the word, or across sequences are errors that write nothing")
{
    const int w[2] = {3, 6}, r[2] = {1, 4};
    relation_error("relation_score(NULL, ...)", NULL, 2, 4, w, r, 2, 0,
                   KIT_E_NULL);
    relation_error("relation_score(A, 2, 4, NULL, related, ...)", hand_A, 2, 4,
                   NULL, r, 2, 0, KIT_E_NULL);
    relation_error("relation_score(A, 2, 4, word, NULL, ...)", hand_A, 2, 4, w,
                   NULL, 2, 0, KIT_E_NULL);
    for (int k = 1; k <= 3; k++)
        relation_error("relation_score(..., an output NULL)", hand_A, 2, 4, w,
                       r, 2, k, KIT_E_NULL);
    relation_error("relation_score(A, N 0, 4, ...)", hand_A, 0, 4, w, r, 2, 0,
                   KIT_E_SIZE);
    relation_error("relation_score(A, 2, T 0, ...)", hand_A, 2, 0, w, r, 2, 0,
                   KIT_E_SIZE);
    relation_error("relation_score(A, 2, 4, ..., 0 cases)", hand_A, 2, 4, w, r,
                   0, 0, KIT_E_SIZE);
    /* the second case of each pair is the bad one, but in the first */
    const struct {
        int w[2], r[2];
        const char *call;
    } bad[] = {
        {{1, 3},
         {2, 1},
         "relation_score: case 0's related word (2) after "
         "its word (1)"},
        {{3, 1},
         {1, 2},
         "relation_score: case 1's related word (2) after "
         "its word (1)"},
        {{3, 8},
         {1, 7},
         "relation_score: case 1's word 8 is past N*T - 1 = "
         "7"},
        {{3, -1}, {1, -2}, "relation_score: case 1 at position -1"},
        {{3, 2}, {1, -1}, "relation_score: case 1's related word at -1"},
        {{3, 4},
         {1, 3},
         "relation_score: case 1's word in sequence 1 (4), "
         "its related word in sequence 0 (3)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        relation_error(bad[k].call, hand_A, 2, 4, bad[k].w, bad[k].r, 2, 0,
                       KIT_E_SIZE);
    if (kit_current_failed())
        return;
    /* the bound itself: a case at N*T = 8, one past the last position
     * 7, whose related word is there too, so that only the range check
     * can refuse it; 9 as well tells a bound off by one (8 passes, 9
     * does not) from none at all */
    const int w8[2] = {3, 8}, r8[2] = {1, 8}, w9[2] = {3, 9}, r9[2] = {1, 9};
    static const char call8[] = "relation_score(A, N 2, T 4, cases (3, 1) and "
                                "(8, 8)): position 8 is N*T, one past the "
                                "last, N*T - 1 = 7";
    float *Ag = kit_guarded_copy(hand_A, (size_t)HN * HT * HT, "A", "N*T*T");
    float score = NAN, baseline = NAN;
    int best_k = -77;
    kit_about_to_call(call8);
    const int rc8 =
        relation_score(Ag, 2, 4, w8, r8, 2, &score, &baseline, &best_k);
    int rc9 = KIT_E_SIZE;
    if (rc8 == KIT_OK) {
        kit_about_to_call("relation_score(A, N 2, T 4, cases (3, 1) and (9, "
                          "9))");
        rc9 = relation_score(Ag, 2, 4, w9, r9, 2, &score, &baseline, &best_k);
    }
    if (rc8 == KIT_OK && rc9 == KIT_E_SIZE)
        KIT_CHECK(0,
                  "%s returned KIT_OK, and position 9 returned KIT_E_SIZE. "
                  "" KIT_NAMING_MARK ": the range check off by one (word[c] "
                  "> N*T instead of word[c] >= N*T). Positions run from 0 "
                  "to N*T - 1, so N*T itself is out of range.",
                  call8);
    else
        KIT_EXPECT_STATUS(call8, rc8, KIT_E_SIZE);
    kit_output_free(Ag);
}

/* A sentence of Brown tags with one case or more of every relation:
 * "The big dog in his old car seat he has not seen to him . Kennedy" */
static const char *const brown_tags[16] = {
    "AT",  "JJ",  "NN", "IN",  "PP$", "JJ",  "NN", "NN",
    "pps", "HVZ", "*",  "VBN", "IN",  "PPO", ".",  "NP-TL"};

KIT_TEST(relation_cases_brown,
         "relation cases from Brown tags (given code), then relation_score: "
         "a previous-token head scores as high as its baseline on adjectives")
{
    const int want_n[HEADS_N_RELATIONS] = {1, 3, 2, 2, 1};
    const int want_w[HEADS_N_RELATIONS][3] = {
        {2}, {2, 6, 7}, {7, 13}, {9, 11}, {6}};
    const int want_r[HEADS_N_RELATIONS][3] = {
        {0}, {1, 5, 5}, {3, 12}, {8, 8}, {4}};
    int word[8], related[8];
    for (int rel = 0; rel < HEADS_N_RELATIONS; rel++) {
        int n = heads_relation_cases(brown_tags, 16, rel, 16, word, related, 8);
        if (!KIT_CHECK(n == want_n[rel],
                       "heads_relation_cases(%s) found %d cases, not %d",
                       heads_relation_name(rel), n, want_n[rel]))
            continue;
        for (int c = 0; c < n; c++)
            KIT_CHECK(word[c] == 16 + want_w[rel][c] &&
                          related[c] == 16 + want_r[rel][c],
                      "heads_relation_cases(%s), case %d: (%d, %d), not "
                      "(%d, %d) (positions + offset 16)",
                      heads_relation_name(rel), c, word[c], related[c],
                      16 + want_w[rel][c], 16 + want_r[rel][c]);
    }
    KIT_CHECK(heads_relation_cases(brown_tags, 16, HEADS_REL_NOUN_ADJ, 0, word,
                                   related, 1) == 3 &&
                  word[0] == 2 && related[0] == 1,
              "heads_relation_cases with room for 1 case: counts all 3, "
              "writes the first");
    KIT_CHECK(heads_relation_cases(NULL, 16, 0, 0, word, related, 8) ==
                      KIT_E_NULL &&
                  heads_relation_cases(brown_tags, 0, 0, 0, word, related, 8) ==
                      KIT_E_SIZE &&
                  heads_relation_cases(brown_tags, 16, HEADS_N_RELATIONS, 0,
                                       word, related, 8) == KIT_E_SIZE,
              "heads_relation_cases: NULL tags, T 0 or a relation out of "
              "range must be errors");

    /* a previous-token head on the adjective cases (2,1), (6,5), (7,5):
     * it finds 2 of 3, and so does the baseline, offset 1 */
    enum { T = 16 };
    static float A[T * T];
    for (int i = 0; i < T; i++)
        A[i * T + (i ? i - 1 : 0)] = 1;
    int n = heads_relation_cases(brown_tags, T, HEADS_REL_NOUN_ADJ, 0, word,
                                 related, 8);
    const double want[3] = {2.0 / 3, 2.0 / 3, 1};
    if (!expect_relation("relation_score(previous-token head, noun -> "
                         "adjective)",
                         A, 1, T, word, related, n, want) ||
        kit_current_failed())
        return;
    /* The published head can be recognised: once it passes, a previous-
     * token head of weights drawn from the hidden seed (kit_test.h), and
     * the same cases in a drawn order, judged by ref_relation(). */
    struct rng r;
    rng_seed(&r, kit_hidden_seed() ^ 0x62726eULL);
    static float Ah[T * T];
    hidden_previous_token(Ah, 1, T, &r);
    for (int c = n - 1; c > 0; c--) {
        const int o = rng_int(&r, c + 1), w = word[c], rl = related[c];
        word[c] = word[o], related[c] = related[o];
        word[o] = w, related[o] = rl;
    }
    double want_h[3];
    ref_relation(Ah, T, word, related, n, 0, want_h);
    char call[300];
    hidden_label(call, sizeof call,
                 "relation_score(previous-token head, noun -> adjective)");
    expect_relation(call, Ah, 1, T, word, related, n, want_h);
}

/* ---------------------------------------------------------------------
 * What the heads do: mean ablation (exercise 8.5)
 * ------------------------------------------------------------------- */

/* concat (N, C) with entry [t][c] = 10 t + c, or drawn from r when r
 * is not NULL; the answer and the mistakes' outputs for head `head` and
 * mean (d_head). */
static void ablate_cases(int N, int C, int h, int head, const float *mean,
                         struct rng *r, float *concat, double *want,
                         double *mis)
{
    const int dh = C / h, n = N * C;
    for (int t = 0; t < N; t++)
        for (int c = 0; c < C; c++) {
            const int k = t * C + c, in = c / dh == head,
                      next = c / dh == head + 1;
            concat[k] = (float)(10 * t + c);
            if (r)
                rng_fill(r, concat + k, 1, -3.0f, 3.0f);
            want[k] = in ? mean[c % dh] : concat[k];
            mis[k] = in ? 0 : concat[k];                          /* zeros */
            mis[n + k] = next ? mean[c % dh] : concat[k];         /* i + 1 */
            mis[2 * n + k] = concat[k] + (in ? mean[c % dh] : 0); /* added */
            mis[3 * n + k] = in && t == 0 ? mean[c % dh] : concat[k];
        }
}

/* mean_ablate_head() on the hand-made numbers, or, when hidden, on
 * numbers of the same shape drawn from the hidden seed (kit_test.h) xor
 * stream, the test's own. */
static int expect_ablate(int N, int C, int h, int head, int hidden,
                         unsigned long long stream)
{
    const int n = N * C, dh = C / h;
    /* mean guarded too: a read past its d_head floats brings a NaN that
     * names it, where a stack array would give whatever lies beyond */
    float *concat = kit_guarded((size_t)n, "concat", "N*C");
    float *mean = kit_guarded((size_t)dh, "mean", "d_head");
    double *want = kit_alloc((size_t)n * sizeof *want);
    double *mis = kit_alloc(4 * (size_t)n * sizeof *mis);
    struct rng r;
    rng_seed(&r, kit_hidden_seed() ^ stream);
    for (int c = 0; c < dh; c++)
        mean[c] = -1.5f - (float)c;
    if (hidden)
        rng_fill(&r, mean, dh, -2.0f, 2.0f);
    ablate_cases(N, C, h, head, mean, hidden ? &r : NULL, concat, want, mis);
    const struct kit_mistake m[] = {
        {"ablating with zero instead of the mean",
         "Mean ablation writes the head's mean output, mean[c], into its "
         "block: a head set to 0 is a head saying something it never says, "
         "and the loss it costs is not what the head carries.",
         mis},
        {"ablating the wrong block (head i + 1's columns)",
         "Head i's block starts at column i * d_head: head 0 is columns 0 .. "
         "d_head - 1.",
         mis + n},
        {"the mean added to the head's output instead of replacing it",
         "Assign (=), do not add (+=): the head's own output is what the "
         "ablation removes.",
         mis + 2 * n},
        {"only the first row ablated",
         "Every row t of concat gets the mean: loop over the N rows, with "
         "row t at concat + t * C.",
         mis + 3 * n}};
    char call[200];
    snprintf(call, sizeof call,
             "mean_ablate_head(concat, mean, N %d, C %d, %d "
             "heads, head %d)",
             N, C, h, head);
    if (hidden) {
        char hand[100];
        snprintf(hand, sizeof hand,
                 "mean_ablate_head(N %d, C %d, %d heads, "
                 "head %d)",
                 N, C, h, head);
        snprintf(call, sizeof call,
                 "%s on hidden numbers (seed %llu; KIT_HIDDEN_SEED=%llu "
                 "make test CH=8 runs it again)",
                 hand, kit_hidden_seed(), kit_hidden_seed());
    }
    struct kit_shape shape = {0, dh, "head", {{"d_head", dh}}};
    int ok =
        KIT_EXPECT_STATUS(call, mean_ablate_head(concat, mean, N, C, h, head),
                          KIT_OK) &&
        KIT_EXPECT_IN_BOUNDS(call, "concat", concat, (size_t)n) &&
        KIT_EXPECT_TENSOR_SHAPED(call, concat, want, N, C, &shape, 0, m, 4);
    kit_output_free(concat), kit_output_free(mean);
    free(want), free(mis);
    return ok;
}

KIT_TEST(mean_ablate_hand, "mean_ablate_head: head 1 of 3 becomes its mean in "
                           "every row, every other entry stays")
{
    /* The hand-made numbers are published: once they pass, the same
     * shape on hidden numbers, so that code which recognises them and
     * returns the answer gains nothing. */
    if (expect_ablate(3, 6, 3, 1, 0, 0))
        expect_ablate(3, 6, 3, 1, 1, 0x61626cULL);
}

KIT_TEST(mean_ablate_every_head, "mean_ablate_head: every head of 2, the last "
                                 "one included, and one head as wide as C")
{
    for (int head = 0; head < 2; head++)
        if (!expect_ablate(2, 8, 2, head, 0, 0))
            return;
    if (!expect_ablate(2, 4, 1, 0, 0, 0))
        return;
    /* The published shapes can be recognised: once they pass, a shape of
     * 2 to 4 heads and one of a single head as wide as C, both drawn
     * from the hidden seed (kit_test.h), every head of each on hidden
     * numbers. */
    struct rng r;
    rng_seed(&r, kit_hidden_seed() ^ 0x616265ULL);
    for (int one = 0; one < 2; one++) {
        const int h = one ? 1 : 2 + rng_int(&r, 3), dh = 1 + rng_int(&r, 4),
                  N = 1 + rng_int(&r, 4);
        for (int head = 0; head < h; head++)
            if (!expect_ablate(N, h * dh, h, head, 1, 0x616266ULL))
                return;
    }
}

/* One bad call: its status, and concat untouched. */
static void ablate_error(const char *call, float *concat, const float *mean,
                         int N, int C, int h, int head, int want)
{
    float copy[12];
    if (concat)
        memcpy(copy, concat, sizeof copy);
    if (!KIT_EXPECT_STATUS(call, mean_ablate_head(concat, mean, N, C, h, head),
                           want))
        return;
    KIT_CHECK(!concat || memcmp(copy, concat, sizeof copy) == 0,
              "%s returned the error but changed concat; on error write "
              "nothing",
              call);
}

KIT_TEST(mean_ablate_errors, "mean_ablate_head: NULL, sizes <= 0, heads that "
                             "do not divide C, or no such head are errors "
                             "that write nothing")
{
    float concat[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, mean[2] = {0};
    ablate_error("mean_ablate_head(NULL, ...)", NULL, mean, 2, 6, 3, 0,
                 KIT_E_NULL);
    ablate_error("mean_ablate_head(concat, NULL, ...)", concat, NULL, 2, 6, 3,
                 0, KIT_E_NULL);
    ablate_error("mean_ablate_head(concat, mean, N 0, ...)", concat, mean, 0, 6,
                 3, 0, KIT_E_SIZE);
    ablate_error("mean_ablate_head(concat, mean, 2, C 0, ...)", concat, mean, 2,
                 0, 3, 0, KIT_E_SIZE);
    ablate_error("mean_ablate_head(concat, mean, 2, 6, 0 heads, 0)", concat,
                 mean, 2, 6, 0, 0, KIT_E_SIZE);
    ablate_error("mean_ablate_head(concat, mean, 2, 6, 4 heads, 0): 4 does "
                 "not divide 6",
                 concat, mean, 2, 6, 4, 0, KIT_E_HEADS);
    ablate_error("mean_ablate_head(concat, mean, 2, 6, 3 heads, head 3)",
                 concat, mean, 2, 6, 3, 3, KIT_E_HEADS);
    ablate_error("mean_ablate_head(concat, mean, 2, 6, 3 heads, head -1)",
                 concat, mean, 2, 6, 3, -1, KIT_E_HEADS);
}

/* ---------------------------------------------------------------------
 * Mean ablation in the model: the hook and the driver (given code)
 * ------------------------------------------------------------------- */

/* The status of a given call that runs the student's mean_ablate_head()
 * through the ablation hook: a KIT_E_TODO names that stub when it is
 * one, and otherwise the model's other stubs, as ready() does. */
static int ablation_ready(const char *call, int got)
{
    if (got != KIT_E_TODO)
        return KIT_EXPECT_STATUS(call, got, KIT_OK);
    float *concat = filled(2, 0, "concat", "N*C"),
          *mean = filled(1, 1, "mean", "d_head");
    const int stub = mean_ablate_head(concat, mean, 1, 2, 2, 0) == KIT_E_TODO;
    kit_output_free(concat), kit_output_free(mean);
    if (stub)
        return KIT_CHECK(0,
                         "%s returned KIT_E_TODO: the ablation hook calls "
                         "your mean_ablate_head(), which is still the starter "
                         "stub. Write it (make test CH=8 "
                         "TEST=mean_ablate_hand), then run this test again.",
                         call);
    return ready(call, got);
}

enum { MV = 11, MT = 5, MC = 8, ML = 2, MH = 2, MB = 2, MDH = MC / MH };

/* A small model whose attention is sharp enough to tell heads apart:
 * GPT-2's start, with W_q, W_k, W_v, W_o scaled by 20. */
static int small_model(struct gpt_model *m)
{
    const struct gpt_config c = {MV, MT, MC, ML, MH, MB};
    if (!KIT_EXPECT_STATUS("gpt_init(V 11, T 5, C 8, L 2, 2 heads, B 2)",
                           gpt_init(m, &c, 3), KIT_OK))
        return 0;
    for (int k = GPT_W_Q; k <= GPT_W_O; k++)
        for (int i = 0; i < gpt_tensor_size(&c, k); i++)
            m->p.t[k][i] *= 20;
    return 1;
}

/* Block l's heads for sequence b of m's last forward pass, in double,
 * from the LN1 output it kept: concat (T, C), head i's block
 * softmax(causal(Q_i K_i^T / sqrt(d_head))) V_i. */
static void ref_concat(const struct gpt_model *m, int l, int b, double *concat)
{
    const int T = m->T, C = MC, N = m->B * m->T;
    const float *X = m->a.ln1 + ((size_t)l * N + (size_t)b * T) * C;
    struct mha_weights w = gpt_block_attn(&m->p, &m->cfg, l);
    double Q[MT * MC], K[MT * MC], V[MT * MC];
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) {
            double q = 0, k = 0, v = 0;
            for (int e = 0; e < C; e++) {
                q += (double)X[t * C + e] * w.W_q[e * C + c];
                k += (double)X[t * C + e] * w.W_k[e * C + c];
                v += (double)X[t * C + e] * w.W_v[e * C + c];
            }
            Q[t * C + c] = q, K[t * C + c] = k, V[t * C + c] = v;
        }
    for (int i = 0; i < MH; i++)
        for (int t = 0; t < T; t++) {
            double s[MT], max = -INFINITY, sum = 0;
            for (int j = 0; j <= t; j++) {
                s[j] = 0;
                for (int c = i * MDH; c < (i + 1) * MDH; c++)
                    s[j] += Q[t * C + c] * K[j * C + c];
                s[j] /= sqrt((double)MDH);
                max = fmax(max, s[j]);
            }
            for (int j = 0; j <= t; j++)
                sum += s[j] = exp(s[j] - max);
            for (int c = i * MDH; c < (i + 1) * MDH; c++) {
                double o = 0;
                for (int j = 0; j <= t; j++)
                    o += s[j] / sum * V[j * C + c];
                concat[t * C + c] = o;
            }
        }
}

/* out (T, C) += (new_i - head_i) W_o[rows of head i], in double:
 * new_i (d_head) the same at every row, or NULL for 0. */
static void ref_replace(const struct gpt_model *m, int l, const double *concat,
                        int i, const float *new_i, double *out)
{
    struct mha_weights w = gpt_block_attn(&m->p, &m->cfg, l);
    for (int t = 0; t < m->T; t++)
        for (int c = 0; c < MC; c++)
            for (int e = 0; e < MDH; e++) {
                double d =
                    (new_i ? new_i[e] : 0) - concat[t * MC + i * MDH + e];
                out[t * MC + c] += d * w.W_o[(i * MDH + e) * MC + c];
            }
}

KIT_TEST(ablation_hook_model,
         "gpt_forward with the ablation hook set: block 1's attention output "
         "becomes "
         "concat' W_o with head 0 replaced by the given mean, exactly")
{
    struct gpt_model m;
    if (!small_model(&m))
        return;
    const int x[MB * MT] = {1, 5, 2, 9, 3, 4, 4, 10, 0, 7};
    const int y[MB * MT] = {5, 2, 9, 3, 6, 4, 10, 0, 7, 8};
    const size_t NC = (size_t)MB * MT * MC;
    float *attn0 = kit_alloc(2 * NC * sizeof *attn0), *attn1 = attn0 + NC;
    double *want = kit_alloc(4 * NC * sizeof *want);
    double *zero = want + NC, *next = zero + NC, *added = next + NC;
    double concat[MT * MC];
    const float mean[MDH] = {0.5f, -0.75f, 0.25f, 1.0f};
    if (!ready("gpt_forward(x, y, B 2, T 5)", gpt_forward(&m, x, y, MB, MT)))
        goto done;
    const float loss = m.loss;
    memcpy(attn0, m.a.attn, NC * sizeof *attn0);
    memcpy(attn1, m.a.attn + NC, NC * sizeof *attn1);
    /* what block 1's output becomes: with the mean, and the mistakes */
    for (int b = 0; b < MB; b++) {
        ref_concat(&m, 1, b, concat);
        for (size_t k = 0; k < (size_t)MT * MC; k++) {
            size_t at = (size_t)b * MT * MC + k;
            want[at] = zero[at] = next[at] = attn1[at];
            added[at] = attn1[at];
        }
        ref_replace(&m, 1, concat, 0, mean, want + b * MT * MC);
        ref_replace(&m, 1, concat, 0, NULL, zero + b * MT * MC);
        ref_replace(&m, 1, concat, 1, mean, next + b * MT * MC);
        for (int t = 0; t < MT; t++) { /* + mean W_o[rows of head 0] */
            struct mha_weights w = gpt_block_attn(&m.p, &m.cfg, 1);
            for (int c = 0; c < MC; c++)
                for (int e = 0; e < MDH; e++)
                    added[b * MT * MC + t * MC + c] +=
                        (double)mean[e] * w.W_o[e * MC + c];
        }
    }
    const struct gpt_ablation ab = {1, 0, mean};
    heads_set_ablation(&m, &ab);
    if (!ablation_ready("gpt_forward(x, y) with block 1's head 0 ablated",
                        gpt_forward(&m, x, y, MB, MT)))
        goto done;
    const struct kit_mistake mis[] = {
        {"ablating with zero instead of the mean",
         "mean_ablate_head() must write mean[c], not 0, into the head's "
         "block.",
         zero},
        {"ablating the wrong block (head i + 1's columns)",
         "Head i's block of concat starts at column i * d_head.", next},
        {"the mean added to the head's output instead of replacing it",
         "mean_ablate_head() assigns the mean; it does not add it.", added}};
    KIT_CHECK(memcmp(attn0, m.a.attn, NC * sizeof *attn0) == 0,
              "gpt_forward with block 1 ablated changed block 0's attention "
              "output; only block 1 may change");
    KIT_EXPECT_TENSOR("block 1's attention output with head 0 mean-ablated",
                      m.a.attn + NC, want, MB * MT, MC, 1e-5, mis, 3);
    KIT_CHECK(m.loss != loss, "ablating a head left the loss at %g exactly",
              (double)loss);
    KIT_EXPECT_STATUS("gpt_backward() after an ablated forward pass",
                      gpt_backward(&m), KIT_E_SIZE);
    const struct gpt_ablation bad = {2, 0, mean};
    heads_set_ablation(&m, &bad);
    KIT_EXPECT_STATUS("gpt_forward with an ablation of block 2 of 2",
                      gpt_forward(&m, x, y, MB, MT), KIT_E_SIZE);
    heads_set_ablation(&m, NULL);
    if (KIT_EXPECT_STATUS("gpt_forward(x, y) without the ablation again",
                          gpt_forward(&m, x, y, MB, MT), KIT_OK))
        KIT_CHECK(m.loss == loss,
                  "without the ablation the loss must come back exactly: "
                  "%.9g, not %.9g",
                  (double)loss, (double)m.loss);
done:
    free(attn0), free(want);
    gpt_free(&m);
}

KIT_TEST(ablation_scan_driver,
         "heads_means and heads_ablation_scan (given code): every head's "
         "mean output, and the loss per class of the predicted word without "
         "each head")
{
    struct gpt_model m;
    if (!small_model(&m))
        return;
    enum { S = 3 }; /* 3 sequences: batches of 2 and 1 */
    const int x[S * MT] = {1, 5, 2, 9, 3, 4, 4, 10, 0, 7, 6, 6, 1, 2, 8};
    const int y[S * MT] = {5, 2, 9, 3, 6, 4, 10, 0, 7, 8, 6, 1, 2, 8, 3};
    unsigned char cls[S * MT];
    for (int k = 0; k < S * MT; k++)
        cls[k] = (unsigned char)(y[k] % 3 == 0 ? TAG_NOUN
                                 : k % 2       ? TAG_DET
                                               : TAG_VERB);
    float means[ML * MC], loss[ML * MH * TAG_N_CLASSES], base[TAG_N_CLASSES];
    int count[TAG_N_CLASSES];
    if (!ready("heads_means(m, x, 3 sequences, T 5)",
               heads_means(&m, x, S, MT, means)))
        goto done;
    /* the means, in double, one sequence at a time */
    double want[ML * MC] = {0}, concat[MT * MC];
    for (int s = 0; s < S; s++) {
        if (!KIT_EXPECT_STATUS("gpt_forward(one sequence)",
                               gpt_forward(&m, x + s * MT, NULL, 1, MT),
                               KIT_OK))
            goto done;
        for (int l = 0; l < ML; l++) {
            ref_concat(&m, l, 0, concat);
            for (int k = 0; k < MT * MC; k++)
                want[l * MC + k % MC] += concat[k] / (S * MT);
        }
    }
    KIT_EXPECT_TENSOR("heads_means: (L, h * d_head)", means, want, ML, MC, 1e-5,
                      NULL, 0);
    if (!ablation_ready("heads_ablation_scan(m, x, y, classes, 3, 5)",
                        heads_ablation_scan(&m, x, y, cls, S, MT, means, loss,
                                            base, count)))
        goto done;
    /* each number against a forward pass of its own */
    for (int l = -1; l < ML; l++)
        for (int i = 0; i < MH; i++) {
            if (l < 0 && i > 0)
                continue;
            struct gpt_ablation ab = {l, i, means + (l * MH + i) * MDH};
            double sum[TAG_N_CLASSES] = {0}, want_l[TAG_N_CLASSES];
            int n[TAG_N_CLASSES] = {0};
            for (int s = 0; s < S; s++) {
                heads_set_ablation(&m, l < 0 ? NULL : &ab);
                gpt_forward(&m, x + s * MT, y + s * MT, 1, MT);
                for (int t = 0; t < MT; t++)
                    sum[cls[s * MT + t]] += m.a.losses[t], n[cls[s * MT + t]]++;
            }
            heads_set_ablation(&m, NULL);
            for (int c = 0; c < TAG_N_CLASSES; c++)
                want_l[c] = n[c] ? sum[c] / n[c] : 0;
            if (l < 0) {
                KIT_EXPECT_TENSOR("heads_ablation_scan: base", base, want_l, 1,
                                  TAG_N_CLASSES, 1e-5, NULL, 0);
                for (int c = 0; c < TAG_N_CLASSES; c++)
                    KIT_CHECK(count[c] == n[c], "count[%s] = %d, not %d",
                              corpus_tag_class_name(c), count[c], n[c]);
            } else {
                char what[80];
                snprintf(what, sizeof what,
                         "heads_ablation_scan: block %d head %d", l, i);
                KIT_EXPECT_TENSOR(what, loss + (l * MH + i) * TAG_N_CLASSES,
                                  want_l, 1, TAG_N_CLASSES, 1e-5, NULL, 0);
            }
        }
    cls[4] = TAG_N_CLASSES;
    KIT_EXPECT_STATUS(
        "heads_ablation_scan with a class out of range",
        heads_ablation_scan(&m, x, y, cls, S, MT, means, loss, base, count),
        KIT_E_SIZE);
    KIT_CHECK(m.after_attention == NULL,
              "heads_ablation_scan left the model's hook set");
done:
    gpt_free(&m);
}
static const struct kit_test *const ch8_tests[] = {
    &ln_forward_golden,
    &ln_backward_golden,
    &ln_backward_accumulates,
    &ln_small_variance,
    &ln_errors,
    &ln_backward_errors,
    &mlp_golden,
    &crossentropy_golden,
    &gpt_golden_grads,
    &gpt_golden_adamw,
    &gpt_fd_every_tensor,
    &gpt_kv_share_gradient,
    &gpt_overfits_one_batch,
    &gpt_threads_identical,
    &gpt_config_errors,
    &gpt_generate_seeded,
    &offset_profile_hand,
    &offset_profile_previous_token,
    &offset_profile_one_token,
    &offset_profile_errors,
    &relation_score_hand,
    &relation_score_one_token,
    &relation_score_errors,
    &relation_cases_brown,
    &mean_ablate_hand,
    &mean_ablate_every_head,
    &mean_ablate_errors,
    &ablation_hook_model,
    &ablation_scan_driver,
    NULL, /* keep one test per line */
};
KIT_CHAPTER(ch8_tests)
