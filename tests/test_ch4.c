/*
 * test_ch4.c: chapter 4 tests, gradients through attention.
 *
 * A gradient is checked three independent ways:
 *   1. central finite differences: a double-precision forward pass,
 *      written here and not shared with the kit, is nudged one input at
 *      a time, (L(x + h) - L(x - h)) / 2h, over random shapes and seeds;
 *   2. PyTorch autograd on the same forward pass (tests/golden);
 *   3. the API's promise: a backward pass ADDS into its d_ buffers.
 * The loss is always L = sum(out * G): its gradient with respect to out
 * is G, the fixed upstream gradient d_out handed to the backward pass.
 *
 * Dimension letters (see grad.h): T = tokens, d_k = query/key width,
 * d_v = value width, d_model = embedding width, h = heads,
 * d_head = d_model / h, m, n, p = sizes of a product (m,n) x (n,p).
 */
#include "attention.h"
#include "grad.h"
#include "kit_test.h"
#include "mha.h"
#include "rng.h"

#include "golden/ch4_golden.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the float backward passes land within ~3e-7 of the reference, which is
 * exact to ~1e-10; every classic mistake is off by far more */
#define GRAD_TOL 1e-5
/* the known value the accumulate tests pre-fill every d_ buffer with */
#define PREFILL 0.5f

/* ---------------------------------------------------------------------
 * A double-precision forward pass, independent of the kit's code
 * ------------------------------------------------------------------- */

/* C = A B.  A (m, n), B (n, p), C (m, p). */
static void ref_matmul(const double *A, const double *B, double *C, int m,
                       int n, int p)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < p; j++) {
            double s = 0;
            for (int k = 0; k < n; k++)
                s += A[i * n + k] * B[k * p + j];
            C[i * p + j] = s;
        }
}

/* Row softmax in place.  X (rows, cols). -INFINITY becomes 0. */
static void ref_softmax(double *X, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        double *x = X + r * cols, max = -INFINITY, sum = 0;
        for (int c = 0; c < cols; c++)
            max = x[c] > max ? x[c] : max;
        for (int c = 0; c < cols; c++)
            sum += (x[c] = exp(x[c] - max));
        for (int c = 0; c < cols; c++)
            x[c] /= sum;
    }
}

/* out = softmax(mask(Q K^T / sqrt(d_k))) V.  Q, K (T, d_k), V (T, d_v),
 * out (T, d_v), P (T, T) the weights. Q and K have row stride ld_qk,
 * V and out ld_v, so a head can be a column block of a wider matrix. */
static void ref_attention(const double *Q, const double *K, const double *V,
                          double *out, double *P, int T, int d_k, int d_v,
                          int ld_qk, int ld_v, int causal)
{
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            double s = 0;
            for (int c = 0; c < d_k; c++)
                s += Q[i * ld_qk + c] * K[j * ld_qk + c];
            P[i * T + j] = causal && j > i ? -INFINITY : s / sqrt(d_k);
        }
    ref_softmax(P, T, T);
    for (int i = 0; i < T; i++)
        for (int c = 0; c < d_v; c++) {
            double s = 0;
            for (int j = 0; j < T; j++)
                s += P[i * T + j] * V[j * ld_v + c];
            out[i * ld_v + c] = s;
        }
}

/* sum(x * g) over n entries */
static double dot(const double *x, const double *g, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] * g[i];
    return s;
}

/* ---------------------------------------------------------------------
 * Central finite differences
 * ------------------------------------------------------------------- */

/* The loss, as a function of inputs held in ctx. */
typedef double (*loss_fn)(void *ctx);

/* @listing fd_grad */
/* g[k] = (L(x + h e_k) - L(x - h e_k)) / 2h for k < n, where x is one of
 * the inputs loss() reads. The error is about h^2 (truncation) plus
 * 1e-16 / h (rounding): some 1e-10 with h = 1e-5. */
static void fd_grad(loss_fn loss, void *ctx, double *x, double *g, int n)
{
    const double h = 1e-5;
    for (int k = 0; k < n; k++) {
        double x0 = x[k];
        x[k] = x0 + h;
        double up = loss(ctx);
        x[k] = x0 - h;
        double down = loss(ctx);
        x[k] = x0;
        g[k] = (up - down) / (2 * h);
    }
}
/* @end fd_grad */

/* A float copy of n doubles, in a guarded buffer (kit_guarded()) named
 * name, of size size ("T*d_k"): a loop that reads one entry past the end
 * gets a guard's NaN, which the tensor check names ("a read past the end
 * of Q"). Free with kit_output_free(). Also random inputs with both
 * copies. */
static float *to_float(const double *x, int n, const char *name,
                       const char *size)
{
    float *f = kit_guarded((size_t)n, name, size);
    kit_to_float(x, f, (size_t)n);
    return f;
}

static double *random_double(struct rng *r, int n, float lo, float hi)
{
    double *x = kit_alloc((size_t)n * sizeof *x);
    for (int i = 0; i < n; i++)
        x[i] = rng_range(r, lo, hi); /* a float, held exactly */
    return x;
}

/* A zeroed d_ buffer, or one pre-filled with PREFILL, with guard zones
 * on both sides (kit_guarded(), named name, of size size) so that
 * KIT_EXPECT_IN_BOUNDS can tell whether the backward pass wrote outside
 * it, and where. Free with kit_output_free. */
static float *grad_buffer(int n, float fill, const char *name, const char *size)
{
    float *d = kit_guarded((size_t)n, name, size);
    for (int i = 0; i < n; i++)
        d[i] = fill;
    return d;
}

/* 1 when got (n) equals want as KIT_EXPECT_TENSOR means it (NaN only
 * NaN, within GRAD_TOL + GRAD_TOL * |want|): a diagnosis of one gradient
 * that speaks of another looks at that one's output first. */
static int grad_near(const float *got, const double *want, int n)
{
    for (int i = 0; i < n; i++) {
        const double g = got[i], w = want[i];
        if (isnan(w) ? !isnan(g)
                     : !(fabs(g - w) <= GRAD_TOL + GRAD_TOL * fabs(w)))
            return 0;
    }
    return 1;
}

/* y = a * x + b, entrywise, in a new buffer (for mistakes' values). */
static double *affine(const double *x, int n, double a, double b)
{
    double *y = kit_alloc((size_t)n * sizeof *y);
    for (int i = 0; i < n; i++)
        y[i] = a * x[i] + b;
    return y;
}

/* ---------------------------------------------------------------------
 * The words each classic mistake is named with
 * ------------------------------------------------------------------- */

static const char OVERWRITE[] =
    "the gradient was overwritten instead of accumulated";
static const char OVERWRITE_FIX[] =
    "A backward pass adds into its d_ buffer (d_X[i] += ...), because a "
    "tensor used twice must receive both contributions; the caller zeroes "
    "it first. Write '+=', not '='.";
static const char NO_SCALE[] =
    "the 1/sqrt(d_k) scale left out of the backward pass";
static const char NO_SCALE_FIX[] =
    "The forward pass multiplied the scores by 1/sqrt(d_k), so the "
    "backward pass must multiply d_scores by the same factor before "
    "step 1.";

/* Gradients added twice, each named only when the gradients the message
 * speaks of show it (attention_backward: d_Q, d_K, d_V). At d_k = 4 the
 * missing scale's factor sqrt(d_k) is 2 too: then both are named. */
static const char TWICE[] = "every gradient doubled (d_Q, d_K and d_V are "
                            "each twice what they should be), as when a "
                            "contribution is added twice";
static const char TWICE_FIX[] =
    "Each product goes into its sum once: look for a '+=' line run twice, "
    "or a backward call made twice.";
static const char DS_TWICE[] =
    "d_scores added twice (softmax_rows_backward(), or the "
    "matmul_backward() that gives d_weights, run twice): d_Q and d_K are "
    "each twice what they should be, d_V is right";
static const char Q_TWICE[] = "d_Q's terms added twice: d_Q is twice what it "
                              "should be, d_K is right";
static const char K_TWICE[] = "d_K's terms added twice: d_K is twice what it "
                              "should be, d_Q is right";

static const char SOFTMAX_SKIPPED[] =
    "the softmax's backward pass skipped (d_scores = d_weights)";
static const char SOFTMAX_SKIPPED_FIX[] =
    "Between d_weights and d_scores lies the softmax: call "
    "softmax_rows_backward(weights, d_weights, d_scores, T, T).";
static const char SCALE_DK[] =
    "d_scores scaled by 1/d_k instead of 1/sqrt(d_k) in the backward pass";
static const char SCALE_DK_FIX[] =
    "The forward pass multiplied by 1/sqrt(d_k); the backward pass "
    "multiplies d_scores by that same factor: 1.0f / sqrtf((float)d_k).";

/* ---------------------------------------------------------------------
 * matmul_backward
 * ------------------------------------------------------------------- */

struct mm_case {
    int m, n, p;
    double *A, *B, *G, *d_A, *d_B; /* G = d_C; d_A, d_B by differences */
};

static double mm_loss(void *ctx)
{
    struct mm_case *c = ctx;
    double *C = kit_alloc((size_t)c->m * c->p * sizeof *C);
    ref_matmul(c->A, c->B, C, c->m, c->n, c->p);
    double L = dot(C, c->G, c->m * c->p);
    free(C);
    return L;
}

/* The hidden cases (kit_test.h): while one runs, the cases' seeds come
 * from kit_hidden_seed() instead of the fixed ones. */
static unsigned long long hidden_base;
/* The smallest size a case draws: 1 in the published cases, 2 in the
 * hidden ones, where a size of 1 could hide a mistake. */
static int hidden_min(void)
{
    return hidden_base ? 2 : 1;
}

/* Case c's numbers (its sizes set), drawn from r, and its gradients
 * by differences. */
static struct mm_case mm_draw(struct rng *r, struct mm_case c)
{
    c.A = random_double(r, c.m * c.n, -1, 1);
    c.B = random_double(r, c.n * c.p, -1, 1);
    c.G = random_double(r, c.m * c.p, -1, 1);
    c.d_A = kit_alloc((size_t)c.m * c.n * sizeof(double));
    c.d_B = kit_alloc((size_t)c.n * c.p * sizeof(double));
    fd_grad(mm_loss, &c, c.A, c.d_A, c.m * c.n);
    fd_grad(mm_loss, &c, c.B, c.d_B, c.n * c.p);
    return c;
}

/* Case k: the first is square (m = n = p), the rest random, from seed. */
static struct mm_case mm_make(int k)
{
    struct rng r;
    rng_seed(&r, (hidden_base ? hidden_base : 4100) + (unsigned long long)k);
    struct mm_case c = {4, 4, 4, 0, 0, 0, 0, 0};
    if (k > 0) { /* hidden cases: every size at least 2 */
        c.m = hidden_min() + rng_int(&r, 6 - hidden_min());
        c.n = hidden_min() + rng_int(&r, 6 - hidden_min());
        c.p = hidden_min() + rng_int(&r, 6 - hidden_min());
    }
    return mm_draw(&r, c);
}

static void mm_free(struct mm_case *c)
{
    free(c->A), free(c->B), free(c->G), free(c->d_A), free(c->d_B);
}

/* Runs matmul_backward on case c with buffers pre-filled with fill, and
 * checks d_A and d_B. Returns 1 when both are right. */
static int mm_check(struct mm_case *c, float fill, const char *call)
{
    int m = c->m, n = c->n, p = c->p, ok = 0;
    float *A = to_float(c->A, m * n, "A", "m*n"),
          *B = to_float(c->B, n * p, "B", "n*p");
    float *G = to_float(c->G, m * p, "d_C", "m*p");
    float *d_A = grad_buffer(m * n, fill, "d_A", "m*n"),
          *d_B = grad_buffer(n * p, fill, "d_B", "n*p");
    double *want_A = affine(c->d_A, m * n, 1, fill);
    double *want_B = affine(c->d_B, n * p, 1, fill);
    /* d_A = d_C B, forgetting the transpose (only shaped right if n = p) */
    double *no_t = kit_alloc((size_t)m * n * sizeof *no_t);
    if (n == p)
        for (int i = 0; i < m; i++)
            for (int k = 0; k < n; k++) {
                double s = fill;
                for (int j = 0; j < p; j++)
                    s += c->G[i * p + j] * c->B[j * p + k];
                no_t[i * n + k] = s;
            }
    /* d_A right, but stored transposed: entry [i][k] at k * m + i */
    double *tr_A = kit_alloc((size_t)m * n * sizeof *tr_A);
    for (int i = 0; i < m; i++)
        for (int k = 0; k < n; k++)
            tr_A[k * m + i] = c->d_A[i * n + k] + fill;
    const struct kit_mistake mA[] = {
        {"d_A written transposed (d_A[k * m + i] instead of d_A[i * n + k])",
         "d_A has A's shape (m, n), stored by rows: the gradient of A[i][k] "
         "goes to d_A[i * n + k].",
         m > 1 && n > 1 ? tr_A : NULL},
        {OVERWRITE, OVERWRITE_FIX, fill != 0 ? c->d_A : NULL},
        {"B used where B^T belongs (d_A = d_C B)",
         "d_A[i][k] sums d_C[i][j] * B[k][j] over j: B is read along its row "
         "k, which is column k of B^T.",
         n == p ? no_t : NULL}};
    /* d_B = A d_C, forgetting the transpose (only shaped right if m = n) */
    double *no_tB = kit_alloc((size_t)n * p * sizeof *no_tB);
    if (m == n)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < p; j++) {
                double s = fill;
                for (int i = 0; i < m; i++)
                    s += c->A[k * n + i] * c->G[i * p + j];
                no_tB[k * p + j] = s;
            }
    /* d_B assigned inside the loop over i: the last row i is left */
    double *last_B = kit_alloc((size_t)n * p * sizeof *last_B);
    for (int k = 0; k < n; k++)
        for (int j = 0; j < p; j++)
            last_B[k * p + j] = c->A[(m - 1) * n + k] * c->G[(m - 1) * p + j];
    const struct kit_mistake mB[] = {
        {OVERWRITE, OVERWRITE_FIX, fill != 0 ? c->d_B : NULL},
        {"A used where A^T belongs (d_B = A d_C)",
         "d_B[k][j] sums A[i][k] * d_C[i][j] over i: A is read down its "
         "column k, which is row k of A^T.",
         m == n ? no_tB : NULL},
        {"d_B overwritten instead of accumulated inside its loop "
         "(d_B[k * p + j] = ... instead of +=): each row i of A and d_C "
         "overwrites the one before, so d_B holds only the last row's "
         "A[m-1][k] * d_C[m-1][j]",
         "d_B[k][j] is a sum over every row i: add each term into it "
         "(d_B[k * p + j] += A[i][k] * d_C[i][j]), as the backward passes "
         "always add.",
         m > 1 ? last_B : NULL}};
    char what[320];
    snprintf(what, sizeof what, "%s, (%d,%d) x (%d,%d): d_A", call, m, n, n, p);
    if (KIT_EXPECT_STATUS(call, matmul_backward(A, B, G, d_A, d_B, m, n, p),
                          KIT_OK) &&
        KIT_EXPECT_IN_BOUNDS(call, "d_A", d_A, (size_t)m * n) &&
        KIT_EXPECT_IN_BOUNDS(call, "d_B", d_B, (size_t)n * p) &&
        KIT_EXPECT_GUARDS(call) &&
        KIT_EXPECT_TENSOR(what, d_A, want_A, m, n, GRAD_TOL, mA, 3)) {
        what[strlen(what) - 1] = 'B';
        ok = KIT_EXPECT_TENSOR(what, d_B, want_B, n, p, GRAD_TOL, mB, 3);
    }
    kit_output_free(A), kit_output_free(B), kit_output_free(G);
    kit_output_free(d_A), kit_output_free(d_B);
    free(want_A), free(want_B), free(no_t), free(no_tB), free(tr_A);
    free(last_B);
    return ok;
}

/* After a finite-difference test's own cases pass: KIT_HIDDEN_CASES more,
 * with random shapes (case numbers 1 and up) and values from the hidden
 * seed, checked the same way. label gets the seed, for the message. */
static void hidden_label(char *label, size_t size, const char *call, int c)
{
    snprintf(label, size,
             "%s, hidden case %d of seed %llu (the published cases pass; "
             "KIT_HIDDEN_SEED=%llu make test CH=4 runs it again)",
             call, c + 1, kit_hidden_seed(), kit_hidden_seed());
}
#define HIDDEN_BASE(c)                                                         \
    (1000003ULL * (kit_hidden_seed() % 4000037ULL) + 7919ULL * (c) + 1)

/* A golden case is published, so code that recognises its inputs and
 * returns PyTorch's answer could pass it. Once the golden cases pass,
 * each golden test runs its shapes again on hidden numbers (drawn from
 * kit_hidden_seed() xor stream), judged by finite differences as in the
 * _fd tests. This seeds r for the twin of case k and labels it. */
static void golden_twin(struct rng *r, char *label, size_t size,
                        const char *call, unsigned long long stream, int k)
{
    rng_seed(r, (kit_hidden_seed() ^ stream) + 7919ULL * (unsigned)k);
    snprintf(label, size,
             "%s, the golden shape on hidden numbers (seed %llu; "
             "KIT_HIDDEN_SEED=%llu make test CH=4 runs it again)",
             call, kit_hidden_seed(), kit_hidden_seed());
}

KIT_TEST(matmul_backward_fd,
         "matmul_backward: d_A, d_B match finite differences, 6 shapes")
{
    const char *call = "matmul_backward(A, B, d_C, d_A, d_B)";
    for (int k = 0; k < 6; k++) {
        struct mm_case c = mm_make(k);
        int ok = mm_check(&c, 0.0f, call);
        mm_free(&c);
        if (!ok)
            return;
    }
    for (int h = 0; h < KIT_HIDDEN_CASES; h++) {
        char label[300];
        hidden_label(label, sizeof label, call, h);
        hidden_base = HIDDEN_BASE(h);
        struct mm_case c = mm_make(1);
        hidden_base = 0;
        int ok = mm_check(&c, 0.0f, label);
        mm_free(&c);
        if (!ok)
            return;
    }
}

KIT_TEST(matmul_backward_accumulates,
         "matmul_backward: adds into d_A and d_B, does not overwrite")
{
    struct mm_case c = mm_make(1);
    mm_check(&c, PREFILL,
             "matmul_backward(...) with d_A, d_B pre-filled with 0.5");
    mm_free(&c);
}

KIT_TEST(matmul_backward_null_grad,
         "matmul_backward: d_A or d_B NULL skips that gradient only")
{
    struct mm_case c = mm_make(2);
    int m = c.m, n = c.n, p = c.p;
    float *A = to_float(c.A, m * n, "A", "m*n"),
          *B = to_float(c.B, n * p, "B", "n*p");
    float *G = to_float(c.G, m * p, "d_C", "m*p");
    float *d_A = grad_buffer(m * n, 0, "d_A", "m*n"),
          *d_B = grad_buffer(n * p, 0, "d_B", "n*p");
    if (KIT_EXPECT_STATUS("matmul_backward(A, B, d_C, NULL, d_B)",
                          matmul_backward(A, B, G, NULL, d_B, m, n, p),
                          KIT_OK) &&
        KIT_EXPECT_IN_BOUNDS("matmul_backward(A, B, d_C, NULL, d_B)", "d_B",
                             d_B, (size_t)n * p) &&
        KIT_EXPECT_TENSOR("matmul_backward(A, B, d_C, NULL, d_B): d_B", d_B,
                          c.d_B, n, p, GRAD_TOL, NULL, 0) &&
        KIT_EXPECT_STATUS("matmul_backward(A, B, d_C, d_A, NULL)",
                          matmul_backward(A, B, G, d_A, NULL, m, n, p),
                          KIT_OK) &&
        KIT_EXPECT_IN_BOUNDS("matmul_backward(A, B, d_C, d_A, NULL)", "d_A",
                             d_A, (size_t)m * n))
        KIT_EXPECT_TENSOR("matmul_backward(A, B, d_C, d_A, NULL): d_A", d_A,
                          c.d_A, m, n, GRAD_TOL, NULL, 0);
    kit_output_free(A), kit_output_free(B), kit_output_free(G);
    kit_output_free(d_A), kit_output_free(d_B);
    mm_free(&c);
}

KIT_TEST(matmul_backward_golden,
         "matmul_backward: d_A, d_B equal PyTorch autograd's")
{
    static const char call[] = "matmul_backward(A, B, d_C, d_A, d_B, 3, 5, 4)";
    float *A = to_float(ch4_mm_A, 15, "A", "m*n");
    float *B = to_float(ch4_mm_B, 20, "B", "n*p");
    float *G = to_float(ch4_mm_dC, 12, "d_C", "m*p");
    float *d_A = grad_buffer(15, 0, "d_A", "m*n"),
          *d_B = grad_buffer(20, 0, "d_B", "n*p");
    if (KIT_EXPECT_STATUS(call, matmul_backward(A, B, G, d_A, d_B, 3, 5, 4),
                          KIT_OK) &&
        KIT_EXPECT_GUARDS(call) &&
        KIT_EXPECT_TENSOR("matmul_backward(...) d_A vs PyTorch", d_A, ch4_mm_dA,
                          3, 5, GRAD_TOL, NULL, 0))
        KIT_EXPECT_TENSOR("matmul_backward(...) d_B vs PyTorch", d_B, ch4_mm_dB,
                          5, 4, GRAD_TOL, NULL, 0);
    kit_output_free(A), kit_output_free(B), kit_output_free(G);
    kit_output_free(d_A), kit_output_free(d_B);
    if (kit_current_failed())
        return;
    struct rng r;
    char label[300];
    golden_twin(&r, label, sizeof label, call, 0x6d6231ULL, 0);
    struct mm_case c = mm_draw(&r, (struct mm_case){3, 5, 4, 0, 0, 0, 0, 0});
    mm_check(&c, 0.0f, label);
    mm_free(&c);
}

/* ---------------------------------------------------------------------
 * softmax_rows_backward
 * ------------------------------------------------------------------- */

struct sm_case {
    int rows, cols;
    double *X, *Y, *G, *d_X; /* Y = softmax(X), G = d_Y */
};

static double sm_loss(void *ctx)
{
    struct sm_case *c = ctx;
    int n = c->rows * c->cols;
    double *Y = kit_alloc((size_t)n * sizeof *Y);
    memcpy(Y, c->X, (size_t)n * sizeof *Y);
    ref_softmax(Y, c->rows, c->cols);
    double L = dot(Y, c->G, n);
    free(Y);
    return L;
}

/* Case c's numbers (its sizes set), drawn from r, and d_X by
 * differences. */
static struct sm_case sm_draw(struct rng *r, struct sm_case c)
{
    int n = c.rows * c.cols;
    c.X = random_double(r, n, -3, 3);
    c.G = random_double(r, n, -1, 1);
    c.Y = kit_alloc((size_t)n * sizeof *c.Y);
    memcpy(c.Y, c.X, (size_t)n * sizeof *c.Y);
    ref_softmax(c.Y, c.rows, c.cols);
    c.d_X = kit_alloc((size_t)n * sizeof *c.d_X);
    fd_grad(sm_loss, &c, c.X, c.d_X, n);
    return c;
}

static struct sm_case sm_make(int k)
{
    struct rng r;
    rng_seed(&r, 4200 + (unsigned long long)k);
    struct sm_case c = {3, 5, 0, 0, 0, 0};
    if (k > 0) {
        c.rows = 1 + rng_int(&r, 5);
        c.cols = 1 + rng_int(&r, 7);
    }
    return sm_draw(&r, c);
}

static void sm_free(struct sm_case *c)
{
    free(c->X), free(c->Y), free(c->G), free(c->d_X);
}

/* Runs softmax_rows_backward on c with d_X pre-filled with fill. */
static int sm_check(struct sm_case *c, float fill, const char *call)
{
    int R = c->rows, C = c->cols, n = R * C;
    float *Y = to_float(c->Y, n, "Y", "rows*cols"),
          *G = to_float(c->G, n, "d_Y", "rows*cols");
    float *d_X = grad_buffer(n, fill, "d_X", "rows*cols");
    double *want = affine(c->d_X, n, 1, fill);
    /* the classic mistakes, from Y and d_Y in double */
    double *no_diag = kit_alloc((size_t)n * sizeof *no_diag);
    double *no_off = kit_alloc((size_t)n * sizeof *no_off);
    double *no_y = kit_alloc((size_t)n * sizeof *no_y);
    for (int r = 0; r < R; r++) {
        const double *y = c->Y + r * C, *g = c->G + r * C;
        double s = dot(y, g, C), sum_g = 0;
        for (int j = 0; j < C; j++)
            sum_g += g[j];
        for (int j = 0; j < C; j++) {
            no_diag[r * C + j] = fill - y[j] * s;
            no_off[r * C + j] = fill + y[j] * g[j];
            no_y[r * C + j] = fill + y[j] * (g[j] - sum_g);
        }
    }
    const struct kit_mistake mistakes[] = {
        {OVERWRITE, OVERWRITE_FIX, fill != 0 ? c->d_X : NULL},
        {"the softmax Jacobian's diagonal term forgotten",
         "dY_j/dX_i = Y_j (delta_ij - Y_i): with only -Y_i Y_j you get "
         "-Y_i * sum_j d_Y_j Y_j. Add the diagonal term Y_i * d_Y_i.",
         no_diag},
        {"the softmax Jacobian's off-diagonal terms forgotten (softmax "
         "treated as if each output depended on one input)",
         "Every output of a row shares the row's sum, so subtract "
         "dot = sum_j d_Y_j Y_j: d_X_i = Y_i (d_Y_i - dot).",
         no_off},
        {"the dot product summing d_Y alone (dot = sum_j d_Y_j, with no "
         "weight Y_j)",
         "dot is the sum over the row of d_Y_j * Y_j: weight each d_Y_j by "
         "its Y_j (dot += d_y_r[c] * y_r[c]).",
         C > 1 ? no_y : NULL}};
    char what[320];
    snprintf(what, sizeof what, "%s, (%d, %d): d_X", call, R, C);
    int ok = KIT_EXPECT_STATUS(call, softmax_rows_backward(Y, G, d_X, R, C),
                               KIT_OK) &&
             KIT_EXPECT_IN_BOUNDS(call, "d_X", d_X, (size_t)n) &&
             KIT_EXPECT_GUARDS(call) &&
             KIT_EXPECT_TENSOR(what, d_X, want, R, C, GRAD_TOL, mistakes, 4);
    kit_output_free(Y), kit_output_free(G), kit_output_free(d_X);
    free(want), free(no_diag), free(no_off), free(no_y);
    return ok;
}

KIT_TEST(softmax_backward_fd,
         "softmax_rows_backward: d_X matches finite differences, 6 shapes")
{
    for (int k = 0; k < 6; k++) {
        struct sm_case c = sm_make(k);
        int ok = sm_check(&c, 0.0f, "softmax_rows_backward(Y, d_Y, d_X)");
        sm_free(&c);
        if (!ok)
            return;
    }
}

KIT_TEST(softmax_backward_accumulates,
         "softmax_rows_backward: adds into d_X, does not overwrite")
{
    struct sm_case c = sm_make(0);
    sm_check(&c, PREFILL,
             "softmax_rows_backward(Y, d_Y, d_X) with d_X pre-filled with "
             "0.5");
    sm_free(&c);
}

KIT_TEST(softmax_backward_golden,
         "softmax_rows_backward: d_X equals PyTorch autograd's")
{
    static const char call[] = "softmax_rows_backward(Y, d_Y, d_X, 4, 6)";
    float *Y = to_float(ch4_sm_Y, 24, "Y", "rows*cols");
    float *G = to_float(ch4_sm_dY, 24, "d_Y", "rows*cols");
    float *d_X = grad_buffer(24, 0, "d_X", "rows*cols");
    if (KIT_EXPECT_STATUS(call, softmax_rows_backward(Y, G, d_X, 4, 6),
                          KIT_OK) &&
        KIT_EXPECT_GUARDS(call))
        KIT_EXPECT_TENSOR("softmax_rows_backward(...) d_X vs PyTorch", d_X,
                          ch4_sm_dX, 4, 6, GRAD_TOL, NULL, 0);
    kit_output_free(Y), kit_output_free(G), kit_output_free(d_X);
    if (kit_current_failed())
        return;
    struct rng r;
    char label[300];
    golden_twin(&r, label, sizeof label, call, 0x736d31ULL, 0);
    struct sm_case c = sm_draw(&r, (struct sm_case){4, 6, 0, 0, 0, 0});
    sm_check(&c, 0.0f, label);
    sm_free(&c);
}

/* ---------------------------------------------------------------------
 * causal_mask_backward
 * ------------------------------------------------------------------- */

/* The classic mistakes of causal_mask_backward(), each as the values it
 * leaves in d_scores (T, T) from d_in (T, T); m[k] (T * T each). */
#define N_MASK_MISTAKES 7
static void mask_backward_models(const double *d_in, int T, double *want,
                                 double *const m[N_MASK_MISTAKES])
{
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            const int k = i * T + j;
            const double d = d_in[k];
            want[k] = j > i ? 0 : d;
            m[0][k] = d;                          /* not zeroed      */
            m[1][k] = j >= i ? 0 : d;             /* diagonal too    */
            m[2][k] = j < i ? 0 : d;              /* lower triangle  */
            m[3][k] = j > i ? -INFINITY : d;      /* -INFINITY       */
            m[4][k] = j > i && i > 0 ? 0 : d;     /* row 0 left      */
            m[5][k] = j > i && j < T - 1 ? 0 : d; /* last column left */
            m[6][k] = j > i + 1 ? 0 : d;          /* j = i+1 left    */
        }
}

/* 1 when got (n) is want exactly, as the check with tolerance 0 means it
 * (an infinity only itself). */
static int mask_grad_equal(const float *got, const double *want, int n)
{
    for (int i = 0; i < n; i++)
        if (!(isinf(want[i]) ? got[i] == want[i]
                             : fabs((double)got[i] - want[i]) <= 0))
            return 0;
    return 1;
}

/* d_scores (T, T) drawn for T as causal_mask_backward_zeroes draws it. */
static double *mask_backward_input(int T)
{
    struct rng r;
    rng_seed(&r, 4300 + (unsigned long long)T);
    return random_double(&r, T * T, -1, 1);
}

KIT_TEST(causal_mask_backward_zeroes,
         "causal_mask_backward: zero above the diagonal, the rest kept")
{
    /* At T = 2 or 3 several mistakes leave the same numbers (at T = 2,
     * row 0 left alone, j = i+1 left and nothing zeroed all keep the one
     * entry [0][1]): a mistake is named at a small T only when the same
     * code's output at T = 6 is that mistake's too. */
    enum { BIG = 6 };
    double *big_in = mask_backward_input(BIG);
    double *big_m[N_MASK_MISTAKES], big_want[BIG * BIG];
    for (int k = 0; k < N_MASK_MISTAKES; k++)
        big_m[k] = kit_alloc(BIG * BIG * sizeof(double));
    mask_backward_models(big_in, BIG, big_want, big_m);
    float *big = kit_guarded(BIG * BIG, "d_scores", "T*T");
    kit_to_float(big_in, big, BIG * BIG);
    static const struct {
        const char *name, *advice;
    } known[N_MASK_MISTAKES] = {
        {"the causal mask's gradient not zeroed",
         "A masked score was replaced by -INFINITY, so it no longer "
         "reaches the loss: set d_scores[i][j] = 0 for every j > i."},
        {"the diagonal zeroed too (j >= i instead of j > i)",
         "Query i may see key i itself; only j > i is the future."},
        {"the wrong triangle zeroed (j < i)",
         "Row i is the query, column j the key: zero j > i."},
        {"-INFINITY written into the gradient, as the forward pass does",
         "The backward pass writes 0: a hidden score has no influence."},
        {"the row loop starting at 1, so row 0's future is not zeroed",
         "Every row i but the last has a future: loop over i = 0 .. T-1."},
        {"the column loop stopping one short, so the last column is not "
         "zeroed",
         "Zero every j > i up to j = T-1: loop while j < T."},
        {"the mask's gradient off by one, leaving j = i+1 not zeroed",
         "Zero every j > i: start the inner loop at j = i + 1."}};
    for (int T = 1; T <= BIG; T++) {
        int n = T * T;
        double *d_in = mask_backward_input(T);
        double *want = kit_alloc((size_t)n * sizeof *want);
        double *m[N_MASK_MISTAKES];
        for (int k = 0; k < N_MASK_MISTAKES; k++)
            m[k] = kit_alloc((size_t)n * sizeof(double));
        mask_backward_models(d_in, T, want, m);
        float *d = kit_guarded((size_t)n, "d_scores", "T*T");
        kit_to_float(d_in, d, (size_t)n);
        char call[64];
        snprintf(call, sizeof call, "causal_mask_backward(d_scores, %d)", T);
        int ok = KIT_EXPECT_STATUS(call, causal_mask_backward(d, T), KIT_OK) &&
                 KIT_EXPECT_IN_BOUNDS(call, "d_scores", d, (size_t)n);
        struct kit_mistake mistakes[N_MASK_MISTAKES];
        for (int k = 0; k < N_MASK_MISTAKES; k++)
            mistakes[k] =
                (struct kit_mistake){known[k].name, known[k].advice, m[k]};
        if (ok && T < BIG && !mask_grad_equal(d, want, n)) {
            /* wrong at a small T: keep the mistakes the T = 6 output
             * shows too (none, when that call fails) */
            static const char big_call[] = "causal_mask_backward(d_scores, 6)";
            const int big_ran =
                KIT_EXPECT_STATUS(big_call, causal_mask_backward(big, BIG),
                                  KIT_OK) &&
                KIT_EXPECT_IN_BOUNDS(big_call, "d_scores", big, BIG * BIG);
            for (int k = 0; k < N_MASK_MISTAKES; k++)
                if (!big_ran || !mask_grad_equal(big, big_m[k], BIG * BIG))
                    mistakes[k].value = NULL;
        }
        ok = ok && KIT_EXPECT_TENSOR(call, d, want, T, T, 0, mistakes,
                                     N_MASK_MISTAKES);
        free(d_in), free(want), kit_output_free(d);
        for (int k = 0; k < N_MASK_MISTAKES; k++)
            free(m[k]);
        if (!ok)
            break;
    }
    free(big_in), kit_output_free(big);
    for (int k = 0; k < N_MASK_MISTAKES; k++)
        free(big_m[k]);
}

/* ---------------------------------------------------------------------
 * attention_backward
 * ------------------------------------------------------------------- */

struct att_case {
    int T, d_k, d_v, causal;
    double *Q, *K, *V, *G, *P; /* G = d_out, P = weights */
    double *d_Q, *d_K, *d_V;
};

static double att_loss(void *ctx)
{
    struct att_case *c = ctx;
    double *out = kit_alloc((size_t)c->T * c->d_v * sizeof *out);
    double *P = kit_alloc((size_t)c->T * c->T * sizeof *P);
    ref_attention(c->Q, c->K, c->V, out, P, c->T, c->d_k, c->d_v, c->d_k,
                  c->d_v, c->causal);
    double L = dot(out, c->G, c->T * c->d_v);
    free(out), free(P);
    return L;
}

/* Case c's numbers (its sizes and mask set), drawn from r, and its
 * gradients by differences. */
static struct att_case att_draw(struct rng *r, struct att_case c)
{
    int T = c.T;
    c.Q = random_double(r, T * c.d_k, -2, 2);
    c.K = random_double(r, T * c.d_k, -2, 2);
    c.V = random_double(r, T * c.d_v, -1, 1);
    c.G = random_double(r, T * c.d_v, -1, 1);
    c.P = kit_alloc((size_t)T * T * sizeof *c.P);
    double *out = kit_alloc((size_t)T * c.d_v * sizeof *out);
    ref_attention(c.Q, c.K, c.V, out, c.P, T, c.d_k, c.d_v, c.d_k, c.d_v,
                  c.causal);
    free(out);
    c.d_Q = kit_alloc((size_t)T * c.d_k * sizeof(double));
    c.d_K = kit_alloc((size_t)T * c.d_k * sizeof(double));
    c.d_V = kit_alloc((size_t)T * c.d_v * sizeof(double));
    fd_grad(att_loss, &c, c.Q, c.d_Q, T * c.d_k);
    fd_grad(att_loss, &c, c.K, c.d_K, T * c.d_k);
    fd_grad(att_loss, &c, c.V, c.d_V, T * c.d_v);
    return c;
}

/* Case k: the first has a fixed shape with T, d_k > 1, the rest random. */
static struct att_case att_make(int k, int causal)
{
    struct rng r;
    rng_seed(&r, (hidden_base ? hidden_base : 4400) +
                     100 * (unsigned long long)causal + k);
    struct att_case c = {4, 4, 3, causal, 0, 0, 0, 0, 0, 0, 0, 0};
    if (k > 0) {
        c.T = hidden_min() + rng_int(&r, 7 - hidden_min());
        c.d_k = hidden_min() + rng_int(&r, 9 - hidden_min());
        c.d_v = hidden_min() + rng_int(&r, 6 - hidden_min());
    }
    return att_draw(&r, c);
}

static void att_free(struct att_case *c)
{
    free(c->Q), free(c->K), free(c->V), free(c->G), free(c->P);
    free(c->d_Q), free(c->d_K), free(c->d_V);
}

/* Runs attention_backward on c with d_ buffers pre-filled with fill, and
 * checks d_Q, d_K, d_V against want_* (or c's own gradients). */
static int att_check(const struct att_case *c, float fill, const char *call)
{
    int T = c->T, dk = c->d_k, dv = c->d_v, ok = 0;
    float *Q = to_float(c->Q, T * dk, "Q", "T*d_k"),
          *K = to_float(c->K, T * dk, "K", "T*d_k");
    float *V = to_float(c->V, T * dv, "V", "T*d_v"),
          *G = to_float(c->G, T * dv, "d_out", "T*d_v");
    float *P = to_float(c->P, T * T, "weights", "T*T");
    float *d_Q = grad_buffer(T * dk, fill, "d_Q", "T*d_k"),
          *d_K = grad_buffer(T * dk, fill, "d_K", "T*d_k");
    float *d_V = grad_buffer(T * dv, fill, "d_V", "T*d_v");
    double *want_Q = affine(c->d_Q, T * dk, 1, fill);
    double *want_K = affine(c->d_K, T * dk, 1, fill);
    double *want_V = affine(c->d_V, T * dv, 1, fill);
    /* no scale: d_scores, hence d_Q and d_K, come out sqrt(d_k) too big */
    double *ns_Q = affine(c->d_Q, T * dk, sqrt(dk), fill);
    double *ns_K = affine(c->d_K, T * dk, sqrt(dk), fill);
    /* the mistakes of steps 3 to 1, worked analytically in double:
     * d_weights = d_out V^T; the softmax backward; the scale; d_Q = dS K,
     * d_K = dS^T Q */
    const double s = 1 / sqrt(dk);
    double *dS = kit_alloc((size_t)T * T * sizeof *dS);    /* right    */
    double *dS_sk = kit_alloc((size_t)T * T * sizeof *dS); /* skipped  */
    double *dW = kit_alloc((size_t)T * sizeof *dW); /* row i of d_weights */
    for (int i = 0; i < T; i++) {
        double rowdot = 0;
        for (int j = 0; j < T; j++) {
            dW[j] = 0;
            for (int k = 0; k < dv; k++)
                dW[j] += c->G[i * dv + k] * c->V[j * dv + k];
            rowdot += dW[j] * c->P[i * T + j];
        }
        for (int j = 0; j < T; j++) {
            int hidden = c->causal && j > i;
            dS[i * T + j] = hidden ? 0 : c->P[i * T + j] * (dW[j] - rowdot) * s;
            dS_sk[i * T + j] = hidden ? 0 : dW[j] * s;
        }
    }
    double *sk_Q = kit_alloc((size_t)T * dk * sizeof *sk_Q);
    double *sk_K = kit_alloc((size_t)T * dk * sizeof *sk_K);
    double *nt_K = kit_alloc((size_t)T * dk * sizeof *nt_K);
    for (int i = 0; i < T; i++)
        for (int k = 0; k < dk; k++) {
            double q = fill, kk = fill, nt = fill;
            for (int j = 0; j < T; j++) {
                q += dS_sk[i * T + j] * c->K[j * dk + k];
                kk += dS_sk[j * T + i] * c->Q[j * dk + k];
                nt += dS[i * T + j] * c->Q[j * dk + k];
            }
            sk_Q[i * dk + k] = q, sk_K[i * dk + k] = kk, nt_K[i * dk + k] = nt;
        }
    /* scaled by 1/d_k instead of 1/sqrt(d_k): sqrt(d_k) times too small */
    double *dk_Q = affine(c->d_Q, T * dk, s, fill);
    double *dk_K = affine(c->d_K, T * dk, s, fill);
    /* d_V = weights d_out, with the weights not transposed */
    double *wt_V = kit_alloc((size_t)T * dv * sizeof *wt_V);
    ref_matmul(c->P, c->G, wt_V, T, T, dv);
    for (int i = 0; i < T * dv; i++)
        wt_V[i] += fill;
    /* d_K assigned inside its loop over queries: the last query's
     * contribution d_scores[T-1][j] q_{T-1} is left */
    double *last_K = kit_alloc((size_t)T * dk * sizeof *last_K);
    for (int j = 0; j < T; j++)
        for (int k = 0; k < dk; k++)
            last_K[j * dk + k] = dS[(T - 1) * T + j] * c->Q[(T - 1) * dk + k];
    /* gradients doubled: twice each, plus what was there */
    double *tw_Q = affine(c->d_Q, T * dk, 2, fill);
    double *tw_K = affine(c->d_K, T * dk, 2, fill);
    double *tw_V = affine(c->d_V, T * dv, 2, fill);
    const struct kit_shape shape = {0, 0, NULL, {{"d_k", dk}, {"T", T}}};
    char what[320];
    int len = snprintf(what, sizeof what, "%s, T=%d d_k=%d d_v=%d%s: d_Q", call,
                       T, dk, dv, c->causal ? " causal" : "");
    if (!KIT_EXPECT_STATUS(call,
                           attention_backward(Q, K, V, P, G, d_Q, d_K, d_V, T,
                                              dk, dv, c->causal),
                           KIT_OK) ||
        !KIT_EXPECT_IN_BOUNDS(call, "d_Q", d_Q, (size_t)T * dk) ||
        !KIT_EXPECT_IN_BOUNDS(call, "d_K", d_K, (size_t)T * dk) ||
        !KIT_EXPECT_IN_BOUNDS(call, "d_V", d_V, (size_t)T * dv) ||
        !KIT_EXPECT_GUARDS(call))
        goto done;
    /* d_Q is checked first; a diagnosis of d_Q that speaks of d_K and d_V
     * too must be what their outputs show */
    const int K_right = grad_near(d_K, want_K, T * dk);
    const int K_unscaled = grad_near(d_K, ns_K, T * dk);
    const int K_doubled = grad_near(d_K, tw_K, T * dk);
    const int V_right = grad_near(d_V, want_V, T * dv);
    const int V_doubled = grad_near(d_V, tw_V, T * dv);
    char q_only[200], k_only[200];
    snprintf(q_only, sizeof q_only,
             "the 1/sqrt(d_k) scale reaching d_K but not d_Q: d_Q is sqrt(d_k) "
             "= %g times what it should be, d_K is right",
             sqrt(dk));
    snprintf(k_only, sizeof k_only,
             "the 1/sqrt(d_k) scale reaching d_Q but not d_K: d_K is sqrt(d_k) "
             "= %g times what it should be, d_Q is right",
             sqrt(dk));
    static const char ONE_PATH_FIX[] =
        "d_Q and d_K both come from the same d_scores: multiply d_scores by "
        "1/sqrt(d_k) once, before step 1, and compute both from it.";
    const struct kit_mistake mQ[] = {
        {NO_SCALE, NO_SCALE_FIX, K_unscaled && V_right ? ns_Q : NULL},
        {OVERWRITE, OVERWRITE_FIX, fill != 0 ? c->d_Q : NULL},
        {SOFTMAX_SKIPPED, SOFTMAX_SKIPPED_FIX, sk_Q},
        {SCALE_DK, SCALE_DK_FIX, dk > 1 ? dk_Q : NULL},
        {TWICE, TWICE_FIX, K_doubled && V_doubled ? tw_Q : NULL},
        {DS_TWICE, TWICE_FIX, K_doubled && V_right ? tw_Q : NULL},
        {q_only, ONE_PATH_FIX, dk > 1 && K_right ? ns_Q : NULL},
        {Q_TWICE, TWICE_FIX, K_right ? tw_Q : NULL}};
    /* d_K is checked once d_Q is right: the scale reached d_Q */
    const struct kit_mistake mK[] = {
        {k_only, ONE_PATH_FIX, dk > 1 ? ns_K : NULL},
        {K_TWICE, TWICE_FIX, tw_K},
        {OVERWRITE, OVERWRITE_FIX, fill != 0 ? c->d_K : NULL},
        {SOFTMAX_SKIPPED, SOFTMAX_SKIPPED_FIX, sk_K},
        {SCALE_DK, SCALE_DK_FIX, dk > 1 ? dk_K : NULL},
        {"d_scores used where d_scores^T belongs (d_K = d_scores Q)",
         "score[i][j] = q_i . k_j, so key j collects from every query i: "
         "d_K[j] = sum over i of d_scores[i][j] q_i, which is d_scores^T Q.",
         nt_K},
        {"d_K overwritten instead of accumulated inside its loop over queries "
         "(d_K[j * d_k + c] = ... instead of +=): each query i overwrites "
         "the one before, so d_K holds only the last query's "
         "d_scores[T-1][j] * Q[T-1][c]",
         "Key j collects from every query i: add each term into d_K "
         "(d_K[j * d_k + c] += d_scores[i][j] * Q[i][c]).",
         T > 1 ? last_K : NULL}};
    const struct kit_mistake mV[] = {
        {"weights used where weights^T belongs (d_V = weights d_out)",
         "out = weights V, so d_V = weights^T d_out: value j collects "
         "from every query i that looked at it, weights[i][j] d_out[i].",
         wt_V},
        {OVERWRITE, OVERWRITE_FIX, fill != 0 ? c->d_V : NULL}};
    if (KIT_EXPECT_TENSOR_SHAPED(what, d_Q, want_Q, T, dk, &shape, GRAD_TOL, mQ,
                                 8)) {
        what[len - 1] = 'K';
        if (KIT_EXPECT_TENSOR_SHAPED(what, d_K, want_K, T, dk, &shape, GRAD_TOL,
                                     mK, 7)) {
            what[len - 1] = 'V';
            ok = KIT_EXPECT_TENSOR(what, d_V, want_V, T, dv, GRAD_TOL, mV, 2);
        }
    }
done:
    kit_output_free(Q), kit_output_free(K), kit_output_free(V);
    kit_output_free(G), kit_output_free(P);
    kit_output_free(d_Q), kit_output_free(d_K), kit_output_free(d_V);
    free(want_Q), free(want_K), free(want_V), free(ns_Q);
    free(ns_K), free(wt_V);
    free(dW), free(dS), free(dS_sk), free(sk_Q), free(sk_K), free(nt_K),
        free(dk_Q);
    free(dk_K), free(last_K), free(tw_Q), free(tw_K), free(tw_V);
    return ok;
}

/* The six published cases with one mask, then the hidden ones (random
 * shapes and values from the hidden seed), against finite differences. */
static void att_fd(int causal)
{
    char call[64], label[300];
    snprintf(call, sizeof call, "attention_backward(..., causal=%d)", causal);
    for (int k = 0; k < 6 + KIT_HIDDEN_CASES; k++) {
        const int h = k - 6;
        if (h >= 0) {
            hidden_label(label, sizeof label, call, h);
            hidden_base = HIDDEN_BASE(h);
        }
        struct att_case c = att_make(h >= 0 ? 1 : k, causal);
        hidden_base = 0;
        int ok = att_check(&c, 0.0f, h >= 0 ? label : call);
        att_free(&c);
        if (!ok)
            return;
    }
}

KIT_TEST(attention_backward_fd,
         "attention_backward: d_Q, d_K, d_V match finite differences")
{
    att_fd(0);
}

KIT_TEST(attention_backward_causal_fd,
         "attention_backward, causal: gradients match finite differences")
{
    att_fd(1);
}

KIT_TEST(attention_backward_accumulates,
         "attention_backward: adds into d_Q, d_K, d_V, does not overwrite")
{
    struct att_case c = att_make(0, 0);
    att_check(&c, PREFILL,
              "attention_backward(...) with d_Q, d_K, d_V pre-filled with "
              "0.5");
    att_free(&c);
}

KIT_TEST(attention_backward_golden,
         "attention_backward: gradients equal PyTorch autograd's")
{
    int n_cases = (int)(sizeof ch4_att_cases / sizeof ch4_att_cases[0]);
    for (int k = 0; k < n_cases; k++) {
        const struct ch4_att_case *g = &ch4_att_cases[k];
        /* the golden case, in the layout att_check() reads */
        struct att_case c = {g->T,
                             g->d_k,
                             g->d_v,
                             g->causal,
                             (double *)g->Q,
                             (double *)g->K,
                             (double *)g->V,
                             (double *)g->d_out,
                             (double *)g->weights,
                             (double *)g->d_Q,
                             (double *)g->d_K,
                             (double *)g->d_V};
        char call[96];
        snprintf(call, sizeof call, "attention_backward(golden case \"%s\")",
                 g->name);
        if (!att_check(&c, 0.0f, call))
            return;
    }
    for (int k = 0; k < n_cases; k++) {
        const struct ch4_att_case *g = &ch4_att_cases[k];
        char call[96], label[300];
        snprintf(call, sizeof call, "attention_backward(\"%s\")", g->name);
        struct rng r;
        golden_twin(&r, label, sizeof label, call, 0x617431ULL, k);
        struct att_case c = {g->T, g->d_k, g->d_v, g->causal, 0, 0,
                             0,    0,      0,      0,         0, 0};
        c = att_draw(&r, c);
        int ok = att_check(&c, 0.0f, label);
        att_free(&c);
        if (!ok)
            return;
    }
}

/* ---------------------------------------------------------------------
 * mha_backward
 * ------------------------------------------------------------------- */

struct mha_case {
    int T, D, h, causal;
    double *X, *W[4], *G; /* W: q, k, v, o; G = d_out     */
    double *d_X, *d_W[4]; /* by differences               */
    double *X_alt;        /* see mha_loss()               */
    int alt;              /* projection 3*i + x reads X_alt */
    int no_wo;            /* the loss of concat, W_o skipped */
};

/* The layer in double: for head i, Q_i = X W_q^i, ..., head_i =
 * attention(Q_i, K_i, V_i), out = concat(heads) W_o. Projection
 * 3 * i + x (x = 0, 1, 2 for q, k, v) reads X_alt instead of X when
 * alt says so, so one use of X can be differentiated on its own. */
static double mha_loss(void *ctx)
{
    struct mha_case *c = ctx;
    int T = c->T, D = c->D, dh = D / c->h;
    double *QKV = kit_alloc(3 * (size_t)T * D * sizeof *QKV);
    double *cat = kit_alloc((size_t)T * D * sizeof *cat);
    double *out = kit_alloc((size_t)T * D * sizeof *out);
    double *P = kit_alloc((size_t)T * T * sizeof *P);
    for (int x = 0; x < 3; x++)
        for (int t = 0; t < T; t++)
            for (int col = 0; col < D; col++) {
                int use = 3 * (col / dh) + x;
                const double *X = use == c->alt ? c->X_alt : c->X;
                double s = 0;
                for (int k = 0; k < D; k++)
                    s += X[t * D + k] * c->W[x][k * D + col];
                QKV[(size_t)x * T * D + t * D + col] = s;
            }
    for (int i = 0; i < c->h; i++)
        ref_attention(QKV + i * dh, QKV + T * D + i * dh,
                      QKV + 2 * T * D + i * dh, cat + i * dh, P, T, dh, dh, D,
                      D, c->causal);
    ref_matmul(cat, c->W[3], out, T, D, D);
    /* no_wo: d_out handed to concat as it is, which is the gradient of
     * sum(concat * G) */
    double L = dot(c->no_wo ? cat : out, c->G, T * D);
    free(QKV), free(cat), free(out), free(P);
    return L;
}

/* Case c's numbers (its sizes and mask set, alt = -1), drawn from r,
 * and its gradients by differences. */
static struct mha_case mha_draw(struct rng *r, struct mha_case c)
{
    int TD = c.T * c.D, DD = c.D * c.D;
    float a = 1.0f / sqrtf((float)c.D);
    c.X = random_double(r, TD, -1, 1);
    for (int x = 0; x < 4; x++)
        c.W[x] = random_double(r, DD, -a, a);
    c.G = random_double(r, TD, -1, 1);
    c.d_X = kit_alloc((size_t)TD * sizeof(double));
    fd_grad(mha_loss, &c, c.X, c.d_X, TD);
    for (int x = 0; x < 4; x++) {
        c.d_W[x] = kit_alloc((size_t)DD * sizeof(double));
        fd_grad(mha_loss, &c, c.W[x], c.d_W[x], DD);
    }
    return c;
}

/* Case k: a fixed list of shapes, both causal and not. */
static struct mha_case mha_make(int k)
{
    static const int shapes[][4] = {/* T, d_model, heads, causal */
                                    {4, 8, 2, 0},
                                    {5, 6, 3, 1},
                                    {3, 4, 1, 0},
                                    {1, 4, 4, 1},
                                    {6, 6, 2, 1}};
    struct rng r;
    rng_seed(&r, (hidden_base ? hidden_base : 4500) + (unsigned long long)k);
    struct mha_case c;
    memset(&c, 0, sizeof c);
    c.T = shapes[k][0], c.D = shapes[k][1], c.h = shapes[k][2];
    c.causal = shapes[k][3];
    c.alt = -1;
    return mha_draw(&r, c);
}

static void mha_free(struct mha_case *c)
{
    free(c->X), free(c->G), free(c->d_X);
    for (int x = 0; x < 4; x++)
        free(c->W[x]), free(c->d_W[x]);
}

/* The gradient of X through the last projection only (v of the last
 * head): what d_X holds when every use overwrites the one before. */
static double *mha_last_use_only(struct mha_case *c)
{
    int TD = c->T * c->D;
    double *g = kit_alloc((size_t)TD * sizeof *g);
    c->X_alt = affine(c->X, TD, 1, 0);
    c->alt = 3 * (c->h - 1) + 2;
    fd_grad(mha_loss, c, c->X_alt, g, TD);
    free(c->X_alt);
    c->X_alt = NULL, c->alt = -1;
    return g;
}

/* The gradients of W_q, W_k, W_v (g[0..2], each (D, D)) when d_out is
 * handed to the concatenation as it is (d_concat = d_out, W_o skipped):
 * those of the loss sum(concat * G). */
static void mha_without_wo(struct mha_case *c, double *g[3])
{
    int DD = c->D * c->D;
    c->no_wo = 1;
    for (int x = 0; x < 3; x++) {
        /* nudged in a copy: a golden case's W is the header's const data */
        double *W = c->W[x], *nudged = affine(W, DD, 1, 0);
        g[x] = kit_alloc((size_t)DD * sizeof *g[x]);
        c->W[x] = nudged;
        fd_grad(mha_loss, c, nudged, g[x], DD);
        c->W[x] = W;
        free(nudged);
    }
    c->no_wo = 0;
}

static const char *const W_NAME[4] = {"d_w.W_q", "d_w.W_k", "d_w.W_v",
                                      "d_w.W_o"};
static const char *const IN_W_NAME[4] = {"w.W_q", "w.W_k", "w.W_v", "w.W_o"};

/* Runs mha_backward on c with d_ buffers pre-filled with fill. */
static int mha_check(struct mha_case *c, float fill, const char *call)
{
    int T = c->T, D = c->D, TD = T * D, DD = D * D, ok = 0;
    struct mha_config cfg = {D, c->h, c->causal};
    struct mha_weights w, d_w;
    float *X = to_float(c->X, TD, "X", "T*d_model"),
          *G = to_float(c->G, TD, "d_out", "T*d_model");
    float *d_X = grad_buffer(TD, fill, "d_X", "T*d_model");
    float *Wf[4], *dWf[4];
    for (int x = 0; x < 4; x++) {
        Wf[x] = to_float(c->W[x], DD, IN_W_NAME[x], "d_model*d_model");
        dWf[x] = grad_buffer(DD, fill, W_NAME[x], "d_model*d_model");
    }
    w.W_q = Wf[0], w.W_k = Wf[1], w.W_v = Wf[2], w.W_o = Wf[3];
    d_w.W_q = dWf[0], d_w.W_k = dWf[1], d_w.W_v = dWf[2], d_w.W_o = dWf[3];
    char what[320];
    int len =
        snprintf(what, sizeof what, "%s, T=%d d_model=%d heads=%d%s: ", call, T,
                 D, c->h, c->causal ? " causal" : "");
    if (!KIT_EXPECT_STATUS(call, mha_backward(&cfg, &w, X, G, d_X, &d_w, T),
                           KIT_OK) ||
        !KIT_EXPECT_IN_BOUNDS(call, "d_X", d_X, (size_t)TD))
        goto done;
    for (int x = 0; x < 4; x++)
        if (!KIT_EXPECT_IN_BOUNDS(call, W_NAME[x], dWf[x], (size_t)DD))
            goto done;
    if (!KIT_EXPECT_GUARDS(call)) /* X, d_out and w too */
        goto done;
    /* the weights in the order the backward pass reaches them: W_o, W_v,
     * then W_q and W_k, which the 1/sqrt(d_head) scale touches */
    static const int order[4] = {3, 2, 0, 1};
    const int dh = D / c->h;
    double *no_wo[3];
    mha_without_wo(c, no_wo);
    /* W_q is checked before W_k: a missing scale is named as such only
     * when d_w.W_k shows it too, and as reaching one path only when
     * d_w.W_k is right */
    double *ns_k = affine(c->d_W[1], DD, sqrt(dh), fill);
    double *want_k = affine(c->d_W[1], DD, 1, fill);
    const int k_unscaled = grad_near(dWf[1], ns_k, DD);
    const int k_right = grad_near(dWf[1], want_k, DD);
    free(ns_k), free(want_k);
    char q_only[200], k_only[200];
    snprintf(q_only, sizeof q_only,
             "the 1/sqrt(d_head) scale reaching d_K but not d_Q: d_w.W_q is "
             "sqrt(d_head) = %g times what it should be, d_w.W_k is right",
             sqrt(dh));
    snprintf(k_only, sizeof k_only,
             "the 1/sqrt(d_head) scale reaching d_Q but not d_K: d_w.W_k is "
             "sqrt(d_head) = %g times what it should be, d_w.W_q is right",
             sqrt(dh));
    static const char ONE_PATH_FIX[] =
        "d_Q and d_K both come from the same d_scores in attention_backward(): "
        "multiply d_scores by 1/sqrt(d_head) once, before step 1, and compute "
        "both from it.";
    for (int o = 0; o < 4; o++) {
        int x = order[o];
        double *want = affine(c->d_W[x], DD, 1, fill);
        double *ns = affine(c->d_W[x], DD, sqrt(dh), fill);
        double *none = affine(c->d_W[x], DD, 0, fill);
        double *skip_wo = x < 3 ? affine(no_wo[x], DD, 1, fill) : NULL;
        double *twice = affine(c->d_W[x], DD, 2, fill);
        char twice_name[160];
        snprintf(twice_name, sizeof twice_name,
                 "%s's gradient added twice: %s is twice what it should be",
                 W_NAME[x], W_NAME[x]);
        /* from the right gradient's column blocks (one per head): all of
         * them added into block 0; block i carrying blocks 0..i */
        double *block0 = affine(c->d_W[x], DD, 0, fill);
        double *carried = affine(c->d_W[x], DD, 0, fill);
        for (int r = 0; r < D; r++)
            for (int col = 0; col < D; col++) {
                double g = c->d_W[x][r * D + col];
                block0[r * D + col % dh] += g;
                for (int b = col / dh; b < c->h; b++)
                    carried[r * D + b * dh + col % dh] += g;
            }
        const struct kit_mistake mW[] = {
            {OVERWRITE, OVERWRITE_FIX, fill != 0 ? c->d_W[x] : NULL},
            {"the 1/sqrt(d_head) scale left out of the backward pass",
             NO_SCALE_FIX, x == 0 && k_unscaled ? ns : NULL},
            {x == 0 ? q_only : k_only, ONE_PATH_FIX,
             dh > 1 && (x == 1 || (x == 0 && k_right)) ? ns : NULL},
            {"d_w.W_o left as it was (zero): d_W_o was never computed (no d_B "
             "passed to matmul_backward() for out = concat W_o), or computed "
             "from a concatenation of head outputs that is all zeros",
             "Step 5 gives two gradients: d_concat and d_w->W_o. Pass both "
             "to matmul_backward(), after steps 1-4 have rebuilt concat, "
             "every head's output in its own columns.",
             x == 3 ? none : NULL},
            {"every head's gradient sent to block 0 of the weight's gradient",
             "Head i's slice came from column block i, so its gradient goes "
             "back to column block i: pass i, not 0.",
             x < 3 && c->h > 1 ? block0 : NULL},
            {"per-head gradients not zeroed between heads, so head i's "
             "gradient also carries heads 0..i-1",
             "Set d_Q_i, d_K_i, d_V_i and the d_W_?i to zero at the start of "
             "every head: the backward passes add into them.",
             x < 3 && c->h > 1 ? carried : NULL},
            {"d_out passed straight to the concatenation (d_concat = d_out), "
             "skipping W_o: d_w.W_o is right, but every gradient before step "
             "5 misses the factor W_o^T",
             "Step 5 is out = concat W_o, so d_concat = d_out W_o^T: take "
             "d_concat from matmul_backward(concat, w->W_o, d_out, d_concat, "
             "d_w->W_o, ...), not from d_out itself.",
             skip_wo},
            {twice_name, TWICE_FIX, x < 3 ? twice : NULL}};
        const struct kit_shape shape = {
            0, x < 3 ? dh : 0, "head", {{"d_head", dh}, {"d_model", D}}};
        snprintf(what + len, sizeof what - (size_t)len, "%s", W_NAME[x]);
        int good = KIT_EXPECT_TENSOR_SHAPED(what, dWf[x], want, D, D, &shape,
                                            GRAD_TOL, mW, 8);
        free(want), free(ns), free(none), free(block0), free(carried);
        free(skip_wo), free(twice);
        if (!good) {
            free(no_wo[0]), free(no_wo[1]), free(no_wo[2]);
            goto done;
        }
    }
    free(no_wo[0]), free(no_wo[1]), free(no_wo[2]);
    /* d_X last: X feeds all 3h projections */
    double *want_X = affine(c->d_X, TD, 1, fill);
    double *last = mha_last_use_only(c);
    const struct kit_mistake mX[] = {
        {OVERWRITE, OVERWRITE_FIX, fill != 0 ? c->d_X : NULL},
        {"d_X overwritten by each use of X, so only the last projection "
         "(V of the last head) is left",
         "X feeds 3h projections; each matmul_backward must add its d_X to "
         "what the others left there.",
         last}};
    snprintf(what + len, sizeof what - (size_t)len, "d_X");
    ok = KIT_EXPECT_TENSOR(what, d_X, want_X, T, D, GRAD_TOL, mX, 2);
    free(want_X), free(last);
done:
    kit_output_free(X), kit_output_free(G), kit_output_free(d_X);
    for (int x = 0; x < 4; x++)
        kit_output_free(Wf[x]), kit_output_free(dWf[x]);
    return ok;
}

KIT_TEST(mha_backward_fd,
         "mha_backward: d_X and d_w match finite differences, 5 layers")
{
    for (int k = 0; k < 5; k++) {
        struct mha_case c = mha_make(k);
        int ok = mha_check(&c, 0.0f, "mha_backward(cfg, w, X, d_out)");
        mha_free(&c);
        if (!ok)
            return;
    }
    /* the same five shapes, with the hidden seed's values */
    for (int h = 0; h < KIT_HIDDEN_CASES; h++) {
        char label[300];
        hidden_label(label, sizeof label, "mha_backward(cfg, w, X, d_out)", h);
        hidden_base = HIDDEN_BASE(h);
        struct mha_case c = mha_make(h % 5);
        hidden_base = 0;
        int ok = mha_check(&c, 0.0f, label);
        mha_free(&c);
        if (!ok)
            return;
    }
}

KIT_TEST(mha_backward_accumulates,
         "mha_backward: adds into d_X and d_w, does not overwrite")
{
    struct mha_case c = mha_make(0);
    mha_check(&c, PREFILL,
              "mha_backward(...) with d_X and d_w pre-filled with 0.5");
    mha_free(&c);
}

KIT_TEST(mha_backward_golden,
         "mha_backward: gradients equal torch.nn.MultiheadAttention's")
{
    int n_cases = (int)(sizeof ch4_mha_cases / sizeof ch4_mha_cases[0]);
    for (int k = 0; k < n_cases; k++) {
        const struct ch4_mha_case *g = &ch4_mha_cases[k];
        struct mha_case c;
        memset(&c, 0, sizeof c);
        c.T = g->T, c.D = g->d_model, c.h = g->n_heads, c.causal = g->causal;
        c.alt = -1;
        c.X = (double *)g->X, c.G = (double *)g->d_out;
        c.d_X = (double *)g->d_X;
        for (int x = 0; x < 4; x++)
            c.W[x] = (double *)g->W[x], c.d_W[x] = (double *)g->d_W[x];
        char call[96];
        snprintf(call, sizeof call, "mha_backward(golden case \"%s\")",
                 g->name);
        if (!mha_check(&c, 0.0f, call))
            return;
    }
    for (int k = 0; k < n_cases; k++) {
        const struct ch4_mha_case *g = &ch4_mha_cases[k];
        char call[96], label[300];
        snprintf(call, sizeof call, "mha_backward(\"%s\")", g->name);
        struct rng r;
        golden_twin(&r, label, sizeof label, call, 0x6d6831ULL, k);
        struct mha_case c;
        memset(&c, 0, sizeof c);
        c.T = g->T, c.D = g->d_model, c.h = g->n_heads, c.causal = g->causal;
        c.alt = -1;
        c = mha_draw(&r, c);
        int ok = mha_check(&c, 0.0f, label);
        mha_free(&c);
        if (!ok)
            return;
    }
}

/* ---------------------------------------------------------------------
 * Errors: the documented status, and nothing written
 * ------------------------------------------------------------------- */

/* 1 when all n entries of x still equal v. */
static int untouched(const float *x, int n, float v)
{
    for (int i = 0; i < n; i++)
        if (x[i] != v)
            return 0;
    return 1;
}

/* 1 when mha_backward_errors' d_X (T=2, d_model=4) and its four d_w
 * matrices (4, 4) still hold 7 everywhere. */
static int mha_clean(const float *d_X, const struct mha_weights *d_w)
{
    return untouched(d_X, 8, 7) && untouched(d_w->W_q, 16, 7) &&
           untouched(d_w->W_k, 16, 7) && untouched(d_w->W_v, 16, 7) &&
           untouched(d_w->W_o, 16, 7);
}

/* The error tests' outputs, each a named kit_guarded() buffer of n
 * sevens: when grading, the worker receives the whole buffer even when
 * the call's sizes are 0, so a write on an error path is seen there as
 * in make test's process. Freed by the test's done: label. */
static float *sevens(int n, const char *name, const char *size)
{
    float *x = kit_guarded((size_t)n, name, size);
    for (int i = 0; i < n; i++)
        x[i] = 7;
    return x;
}

/* One impossible call: the documented status, and then, checked right
 * after this call so that the message can name it, nothing written into
 * the outputs. Each test defines CLEAN (an expression: the outputs still
 * hold 7) and OUTPUTS (their names) before using it. */
#define EXPECT_ERR(call, want)                                                 \
    if (!KIT_EXPECT_STATUS(#call, call, want) ||                               \
        !KIT_CHECK(CLEAN,                                                      \
                   "%s returned an error but wrote into %s; on error write "   \
                   "nothing: check every argument before the first write.",    \
                   #call, OUTPUTS))                                            \
    goto done

KIT_TEST(matmul_backward_errors,
         "matmul_backward: NULL -> KIT_E_NULL, size <= 0 -> KIT_E_SIZE, "
         "d_A and d_B both NULL -> KIT_OK")
{
    float A[4] = {1, 2, 3, 4}, B[4] = {1, 0, 0, 1}, G[4] = {1, 1, 1, 1};
    float *d_A = sevens(4, "d_A", "m*n"), *d_B = sevens(4, "d_B", "n*p");
#define CLEAN   (untouched(d_A, 4, 7) && untouched(d_B, 4, 7))
#define OUTPUTS "d_A or d_B"
    EXPECT_ERR(matmul_backward(NULL, B, G, d_A, d_B, 2, 2, 2), KIT_E_NULL);
    EXPECT_ERR(matmul_backward(A, NULL, G, d_A, d_B, 2, 2, 2), KIT_E_NULL);
    EXPECT_ERR(matmul_backward(A, B, NULL, d_A, d_B, 2, 2, 2), KIT_E_NULL);
    EXPECT_ERR(matmul_backward(A, B, G, d_A, d_B, 0, 2, 2), KIT_E_SIZE);
    EXPECT_ERR(matmul_backward(A, B, G, d_A, d_B, 2, -1, 2), KIT_E_SIZE);
    EXPECT_ERR(matmul_backward(A, B, G, d_A, d_B, 2, 2, 0), KIT_E_SIZE);
    /* grad.h: both gradients NULL is no error, and nothing is computed */
    EXPECT_ERR(matmul_backward(A, B, G, NULL, NULL, 2, 2, 2), KIT_OK);
done:
    kit_output_free(d_A), kit_output_free(d_B);
#undef CLEAN
#undef OUTPUTS
}

KIT_TEST(softmax_backward_errors,
         "softmax_rows_backward: NULL -> KIT_E_NULL, size -> KIT_E_SIZE")
{
    float Y[4] = {0.5f, 0.5f, 0.25f, 0.75f}, G[4] = {1, 2, 3, 4};
    float *d_X = sevens(4, "d_X", "rows*cols");
#define CLEAN   untouched(d_X, 4, 7)
#define OUTPUTS "d_X"
    EXPECT_ERR(softmax_rows_backward(NULL, G, d_X, 2, 2), KIT_E_NULL);
    EXPECT_ERR(softmax_rows_backward(Y, NULL, d_X, 2, 2), KIT_E_NULL);
    EXPECT_ERR(softmax_rows_backward(Y, G, NULL, 2, 2), KIT_E_NULL);
    EXPECT_ERR(softmax_rows_backward(Y, G, d_X, 0, 2), KIT_E_SIZE);
    EXPECT_ERR(softmax_rows_backward(Y, G, d_X, 2, -3), KIT_E_SIZE);
done:
    kit_output_free(d_X);
#undef CLEAN
#undef OUTPUTS
}

KIT_TEST(causal_mask_backward_errors,
         "causal_mask_backward: NULL -> KIT_E_NULL, T <= 0 -> KIT_E_SIZE")
{
    float *d = sevens(4, "d_scores", "T*T");
#define CLEAN   untouched(d, 4, 7)
#define OUTPUTS "d_scores"
    EXPECT_ERR(causal_mask_backward(NULL, 2), KIT_E_NULL);
    EXPECT_ERR(causal_mask_backward(d, 0), KIT_E_SIZE);
    EXPECT_ERR(causal_mask_backward(d, -2), KIT_E_SIZE);
done:
    kit_output_free(d);
#undef CLEAN
#undef OUTPUTS
}

KIT_TEST(attention_backward_errors,
         "attention_backward: NULL -> KIT_E_NULL, size -> KIT_E_SIZE")
{
    float Q[4] = {1, 0, 0, 1}, K[4] = {1, 1, 0, 1}, V[4] = {1, 2, 3, 4};
    float P[4] = {1, 0, 0.5f, 0.5f}, G[4] = {1, 1, 1, 1};
    float *d_Q = sevens(4, "d_Q", "T*d_k"), *d_K = sevens(4, "d_K", "T*d_k");
    float *d_V = sevens(4, "d_V", "T*d_v");
#define CLEAN                                                                  \
    (untouched(d_Q, 4, 7) && untouched(d_K, 4, 7) && untouched(d_V, 4, 7))
#define OUTPUTS "d_Q, d_K or d_V"
    EXPECT_ERR(attention_backward(NULL, K, V, P, G, d_Q, d_K, d_V, 2, 2, 2, 0),
               KIT_E_NULL);
    EXPECT_ERR(attention_backward(Q, K, V, NULL, G, d_Q, d_K, d_V, 2, 2, 2, 0),
               KIT_E_NULL);
    EXPECT_ERR(attention_backward(Q, K, V, P, NULL, d_Q, d_K, d_V, 2, 2, 2, 1),
               KIT_E_NULL);
    EXPECT_ERR(attention_backward(Q, K, V, P, G, NULL, d_K, d_V, 2, 2, 2, 0),
               KIT_E_NULL);
    EXPECT_ERR(attention_backward(Q, K, V, P, G, d_Q, NULL, d_V, 2, 2, 2, 0),
               KIT_E_NULL);
    EXPECT_ERR(attention_backward(Q, K, V, P, G, d_Q, d_K, NULL, 2, 2, 2, 1),
               KIT_E_NULL);
    EXPECT_ERR(attention_backward(Q, K, V, P, G, d_Q, d_K, d_V, 0, 2, 2, 0),
               KIT_E_SIZE);
    EXPECT_ERR(attention_backward(Q, K, V, P, G, d_Q, d_K, d_V, 2, 0, 2, 1),
               KIT_E_SIZE);
    EXPECT_ERR(attention_backward(Q, K, V, P, G, d_Q, d_K, d_V, 2, 2, -1, 0),
               KIT_E_SIZE);
done:
    kit_output_free(d_Q), kit_output_free(d_K), kit_output_free(d_V);
#undef CLEAN
#undef OUTPUTS
}

KIT_TEST(mha_backward_errors,
         "mha_backward: KIT_E_NULL, KIT_E_SIZE, KIT_E_HEADS as documented")
{
    enum { D = 4, T = 2 };
    float Wm[4][D * D], X[T * D], G[T * D];
    for (int i = 0; i < D * D; i++)
        for (int x = 0; x < 4; x++)
            Wm[x][i] = 0.1f * (float)((i + x) % 5);
    for (int i = 0; i < T * D; i++)
        X[i] = 0.5f, G[i] = 1;
    float *d_X = sevens(T * D, "d_X", "T*d_model");
    struct mha_weights w = {Wm[0], Wm[1], Wm[2], Wm[3]};
    struct mha_weights d_w = {sevens(D * D, "d_w.W_q", "d_model*d_model"),
                              sevens(D * D, "d_w.W_k", "d_model*d_model"),
                              sevens(D * D, "d_w.W_v", "d_model*d_model"),
                              sevens(D * D, "d_w.W_o", "d_model*d_model")};
    struct mha_weights no_o = {d_w.W_q, d_w.W_k, d_w.W_v, NULL};
    struct mha_config cfg = {D, 2, 0}, odd = {D, 3, 0}, zero = {D, 0, 0};
#define CLEAN   mha_clean(d_X, &d_w)
#define OUTPUTS "d_X or d_w"
    EXPECT_ERR(mha_backward(NULL, &w, X, G, d_X, &d_w, T), KIT_E_NULL);
    EXPECT_ERR(mha_backward(&cfg, NULL, X, G, d_X, &d_w, T), KIT_E_NULL);
    EXPECT_ERR(mha_backward(&cfg, &w, NULL, G, d_X, &d_w, T), KIT_E_NULL);
    EXPECT_ERR(mha_backward(&cfg, &w, X, NULL, d_X, &d_w, T), KIT_E_NULL);
    EXPECT_ERR(mha_backward(&cfg, &w, X, G, d_X, NULL, T), KIT_E_NULL);
    EXPECT_ERR(mha_backward(&cfg, &w, X, G, d_X, &no_o, T), KIT_E_NULL);
    EXPECT_ERR(mha_backward(&cfg, &w, X, G, d_X, &d_w, 0), KIT_E_SIZE);
    EXPECT_ERR(mha_backward(&zero, &w, X, G, d_X, &d_w, T), KIT_E_SIZE);
    EXPECT_ERR(mha_backward(&odd, &w, X, G, d_X, &d_w, T), KIT_E_HEADS);
done:
    kit_output_free(d_X), kit_output_free(d_w.W_q), kit_output_free(d_w.W_k);
    kit_output_free(d_w.W_v), kit_output_free(d_w.W_o);
#undef CLEAN
#undef OUTPUTS
}

/* ---------------------------------------------------------------------
 * Out of memory: every allocation failing in turn
 * ------------------------------------------------------------------- */

struct oom4 {
    int mha, causal, T;
    const float *Q, *K, *V, *att, *d_out; /* attention_backward's inputs */
    float *d_Q, *d_K, *d_V;               /* guarded, (T, 3), (T, 3), (T, 2) */
    struct mha_config cfg;
    struct mha_weights w, d_w;
    const float *X;
    float *d_X;
};

enum { OOM_T = 4, OOM_DK = 3, OOM_DV = 2, OOM_D = 8, OOM_H = 2 };

static void oom4_prepare(void *ctx)
{
    struct oom4 *o = ctx;
    for (int k = 0; k < OOM_T * OOM_DK; k++)
        o->d_Q[k] = 0.5f, o->d_K[k] = 0.5f;
    for (int k = 0; k < OOM_T * OOM_DV; k++)
        o->d_V[k] = 0.5f;
}

static int oom4_run(void *ctx)
{
    struct oom4 *o = ctx;
    if (o->mha)
        return mha_backward(&o->cfg, &o->w, o->X, o->d_out, o->d_X, &o->d_w,
                            o->T);
    return attention_backward(o->Q, o->K, o->V, o->att, o->d_out, o->d_Q,
                              o->d_K, o->d_V, o->T, OOM_DK, OOM_DV, o->causal);
}

static int oom4_unchanged(void *ctx, char *why, size_t n_why)
{
    struct oom4 *o = ctx;
    for (int k = 0; k < OOM_T * OOM_DK; k++)
        if (o->d_Q[k] != 0.5f || o->d_K[k] != 0.5f)
            return snprintf(why, n_why, "it changed d_Q or d_K"), 0;
    for (int k = 0; k < OOM_T * OOM_DV; k++)
        if (o->d_V[k] != 0.5f)
            return snprintf(why, n_why, "it changed d_V"), 0;
    return 1;
}

KIT_TEST(backward_out_of_memory,
         "attention_backward and mha_backward: each allocation failing in "
         "turn gives KIT_E_NOMEM and frees what was taken")
{
    enum { T = OOM_T, N = OOM_T * OOM_D };
    struct rng r;
    rng_seed(&r, 441);
    float in[3 * T * OOM_DK + T * T + N + N];
    rng_fill(&r, in, (int)(sizeof in / sizeof in[0]), -1.0f, 1.0f);
    float *att = in + 3 * T * OOM_DK; /* rows of weights: 1/T each */
    for (int k = 0; k < T * T; k++)
        att[k] = 1.0f / T;
    struct oom4 o = {0};
    o.T = T, o.Q = in, o.K = in + T * OOM_DK, o.V = in + 2 * T * OOM_DK;
    o.att = att, o.d_out = att + T * T, o.X = att + T * T + N;
    o.d_Q = kit_guarded(T * OOM_DK, "d_Q", "T*d_k");
    o.d_K = kit_guarded(T * OOM_DK, "d_K", "T*d_k");
    o.d_V = kit_guarded(T * OOM_DV, "d_V", "T*d_v");
    o.d_X = kit_guarded(N, "d_X", "T*d_model");
    o.cfg = (struct mha_config){OOM_D, OOM_H, 1};
    int ok = KIT_CHECK(mha_weights_alloc(&o.w, &o.cfg) == KIT_OK &&
                           mha_weights_randomize(&o.w, &o.cfg, 442) == KIT_OK &&
                           mha_weights_alloc(&o.d_w, &o.cfg) == KIT_OK,
                       "could not allocate the layer's weights");
    for (int causal = 0; ok && causal <= 1; causal++) {
        o.causal = causal;
        const struct kit_nomem t = {
            causal ? "attention_backward(T 4, d_k 3, d_v 2, causal)"
                   : "attention_backward(T 4, d_k 3, d_v 2)",
            oom4_prepare, oom4_run, oom4_unchanged, &o};
        ok = KIT_EXPECT_NOMEM(&t);
    }
    if (ok) {
        /* grad.h: on KIT_E_NOMEM, d_X and d_w may hold part of the sums */
        o.mha = 1;
        const struct kit_nomem t = {
            "mha_backward(T 4, d_model 8, 2 heads, causal)", oom4_prepare,
            oom4_run, NULL, &o};
        KIT_EXPECT_NOMEM(&t);
    }
    mha_weights_free(&o.w), mha_weights_free(&o.d_w);
    kit_output_free(o.d_Q), kit_output_free(o.d_K);
    kit_output_free(o.d_V), kit_output_free(o.d_X);
}

static const struct kit_test *const ch4_tests[] = {
    &matmul_backward_fd,
    &matmul_backward_accumulates,
    &matmul_backward_null_grad,
    &matmul_backward_golden,
    &matmul_backward_errors,
    &softmax_backward_fd,
    &softmax_backward_accumulates,
    &softmax_backward_golden,
    &softmax_backward_errors,
    &causal_mask_backward_zeroes,
    &causal_mask_backward_errors,
    &attention_backward_fd,
    &attention_backward_causal_fd,
    &attention_backward_accumulates,
    &attention_backward_golden,
    &attention_backward_errors,
    &mha_backward_fd,
    &mha_backward_accumulates,
    &mha_backward_golden,
    &mha_backward_errors,
    &backward_out_of_memory,
    NULL};
KIT_CHAPTER(ch4_tests)
