/*
 * test_ch1.c: chapter 1, scaled dot-product attention for one head.
 *
 * Three kinds of test:
 *   - worked examples small enough to check by hand;
 *   - golden values computed by PyTorch (tests/golden/ch1_golden.h);
 *   - properties every correct answer has (rows sum to 1, shift
 *     invariance, finite results for huge logits, uniform weights for
 *     equal keys).
 * When an answer is wrong, the message compares it with the answers the
 * classic mistakes give (computed below in double precision) and names
 * the mistake that fits.
 *
 * Dimension letters: T = tokens, d_k = query/key width, d_v = value width.
 */
#include "attention.h"
#include "golden/ch1_golden.h"
#include "kit_test.h"
#include "rng.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-5

/* ---------------------------------------------------------------------
 * Reference pieces in double precision, including the classic mistakes
 * ------------------------------------------------------------------- */

enum variant {
    RIGHT,      /* softmax(Q K^T / sqrt(d_k)) V                    */
    NO_SCALE,   /* the 1/sqrt(d_k) forgotten                       */
    SCALE_DK,   /* divided by d_k instead of sqrt(d_k)             */
    INT_DIV,    /* 1 / d_k in integer arithmetic: the scale is 0   */
    WRONG_AXIS, /* softmax down the columns instead of the rows    */
    K_QT,       /* K Q^T instead of Q K^T                          */
    SCALE_LATE, /* the scale applied after the softmax             */
    SCALE_DV,   /* divided by sqrt(d_v) instead of sqrt(d_k)       */
    WT_V,       /* out = weights^T V instead of weights V          */
    NO_SCORES,  /* every score 0: the dot products never summed    */
    SCALE_MUL,  /* multiplied by sqrt(d_k) instead of divided      */
    N_VARIANTS
};

static const char *const variant_name[N_VARIANTS] = {
    "",
    "a missing 1/sqrt(d_k) scale",
    "scaling by d_k instead of sqrt(d_k)",
    "integer division in the scale",
    "softmax over the wrong axis",
    "K Q^T in place of Q K^T",
    "the scale applied after the softmax",
    "scaling by sqrt(d_v) instead of sqrt(d_k)",
    "out computed as weights^T V instead of weights V",
    "every score 0, as when matmul_bt() never adds up its products",
    "the scores multiplied by sqrt(d_k) instead of divided by it",
};

static const char *const variant_advice[N_VARIANTS] = {
    "",
    "Divide every score q_i . k_j by sqrt(d_k) before the softmax.",
    "The scale is 1/sqrt(d_k): use sqrtf((float)d_k), not d_k.",
    "In C, 1 / d_k with two ints is 0 when d_k > 1, which makes every "
    "score 0 and every weight 1/T. Write 1.0f / sqrtf((float)d_k).",
    "Each ROW of the score matrix (one query) must sum to 1: softmax "
    "along j for a fixed i, not along i for a fixed j.",
    "weights[i][j] is query i against key j: compute Q K^T, i.e. "
    "matmul_bt(Q, K, ...), not matmul_bt(K, Q, ...).",
    "Scale the scores before softmax_rows(): scaled afterwards, the rows "
    "no longer sum to 1.",
    "The scores are dot products of length d_k (queries with keys), so "
    "their scale is 1/sqrt(d_k); d_v, the width of the values, plays no "
    "part in it.",
    "Row i of out is the average of the value rows weighted by row i of "
    "the weights: out[i][c] = sum over j of weights[i][j] * V[j][c], that "
    "is matmul(weights, V, out, T, T, d_v).",
    "Every weight is 1/T, which is what scores that are all 0 give: check "
    "that matmul_bt() adds each product into its sum (sum += a_i[k] * "
    "b_j[k]) and writes the sum to C.",
    "The weights are what scores d_k times too large give: the scale is "
    "1/sqrt(d_k). Multiply by 1.0f / sqrtf((float)d_k), or divide by "
    "sqrtf((float)d_k).",
};

/* weights (T, T) and out (T, d_v) as the given variant computes them. */
static void ref_attention(enum variant v, const double *Q, const double *K,
                          const double *V, int T, int d_k, int d_v,
                          double *weights, double *out)
{
    double scale = 1.0 / sqrt((double)d_k);
    if (v == NO_SCALE || v == SCALE_LATE)
        scale = 1.0;
    if (v == SCALE_DK)
        scale = 1.0 / d_k;
    if (v == INT_DIV)
        scale = (double)(1 / d_k); /* the mistake itself */
    if (v == SCALE_DV)
        scale = 1.0 / sqrt((double)d_v);
    if (v == SCALE_MUL)
        scale = sqrt((double)d_k);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            const double *a = v == K_QT ? K + i * d_k : Q + i * d_k;
            const double *b = v == K_QT ? Q + j * d_k : K + j * d_k;
            double s = 0;
            for (int k = 0; k < d_k; k++)
                s += a[k] * b[k];
            weights[i * T + j] = v == NO_SCORES ? 0.0 : s * scale;
        }
    /* softmax along rows, or along columns for WRONG_AXIS */
    for (int line = 0; line < T; line++) {
        int stride = v == WRONG_AXIS ? T : 1;
        double *x = weights + (v == WRONG_AXIS ? line : line * T);
        double max = x[0], sum = 0;
        for (int j = 1; j < T; j++)
            max = fmax(max, x[j * stride]);
        for (int j = 0; j < T; j++)
            sum += x[j * stride] = exp(x[j * stride] - max);
        for (int j = 0; j < T; j++)
            x[j * stride] /= sum;
    }
    if (v == SCALE_LATE)
        for (int i = 0; i < T * T; i++)
            weights[i] /= sqrt((double)d_k);
    for (int i = 0; i < T; i++)
        for (int c = 0; c < d_v; c++) {
            double s = 0;
            for (int j = 0; j < T; j++)
                s +=
                    weights[v == WT_V ? j * T + i : i * T + j] * V[j * d_v + c];
            out[i * d_v + c] = s;
        }
}

/* Run attention() and compare weights and out against the right answer,
 * naming any classic mistake the output matches. */
static void expect_attention(const char *label, const float *Qf,
                             const float *Kf, const float *Vf, int T, int d_k,
                             int d_v, const double *want_w,
                             const double *want_out)
{
    size_t nq = (size_t)T * d_k, nv = (size_t)T * d_v, nw = (size_t)T * T;
    double *Q = kit_alloc(nq * sizeof *Q), *K = kit_alloc(nq * sizeof *K);
    double *V = kit_alloc(nv * sizeof *V);
    kit_to_double(Qf, Q, nq);
    kit_to_double(Kf, K, nq);
    kit_to_double(Vf, V, nv);

    struct kit_mistake mw[N_VARIANTS - 1], mo[N_VARIANTS - 1];
    double *wbuf[N_VARIANTS - 1], *obuf[N_VARIANTS - 1];
    for (int v = 1; v < N_VARIANTS; v++) {
        double *w = wbuf[v - 1] = kit_alloc(nw * sizeof *w);
        double *o = obuf[v - 1] = kit_alloc(nv * sizeof *o);
        ref_attention((enum variant)v, Q, K, V, T, d_k, d_v, w, o);
        mw[v - 1] = (struct kit_mistake){variant_name[v], variant_advice[v], w};
        mo[v - 1] = (struct kit_mistake){variant_name[v], variant_advice[v], o};
    }
    /* A variant that agrees with the right answer on these inputs (for
     * example K Q^T when Q = K) would be a false accusation: drop it. */
    for (int v = 0; v < N_VARIANTS - 1; v++) {
        int same_w = 1, same_o = 1;
        for (size_t i = 0; i < nw && same_w; i++)
            same_w = fabs(mw[v].value[i] - want_w[i]) <= TOL;
        for (size_t i = 0; i < nv && same_o; i++)
            same_o = fabs(mo[v].value[i] - want_out[i]) <= TOL;
        /* out is checked only when the weights are right, so only a
         * mistake whose weights are right can explain a wrong out */
        if (same_w)
            mw[v].value = NULL;
        if (!same_w || same_o)
            mo[v].value = NULL;
    }

    /* every buffer guarded: a write or a read outside is named */
    float *Qg = kit_guarded_copy(Qf, nq, "Q", "T*d_k");
    float *Kg = kit_guarded_copy(Kf, nq, "K", "T*d_k");
    float *Vg = kit_guarded_copy(Vf, nv, "V", "T*d_v");
    float *w = kit_guarded(nw, "weights", "T*T");
    float *out = kit_guarded(nv, "out", "T*d_v");
    char call[160];
    snprintf(call, sizeof call, "attention() on %s (T=%d, d_k=%d, d_v=%d)",
             label, T, d_k, d_v);
    if (KIT_EXPECT_STATUS(call, attention(Qg, Kg, Vg, out, w, T, d_k, d_v),
                          KIT_OK) &&
        KIT_EXPECT_GUARDS(call)) {
        char what[200];
        const struct kit_shape shape = {
            0, 0, NULL, {{"d_k", d_k}, {"d_v", d_v}, {"T", T}}};
        snprintf(what, sizeof what, "%s: weights", call);
        if (KIT_EXPECT_TENSOR_SHAPED(what, w, want_w, T, T, &shape, TOL, mw,
                                     N_VARIANTS - 1)) {
            snprintf(what, sizeof what, "%s: out", call);
            KIT_EXPECT_TENSOR_SHAPED(what, out, want_out, T, d_v, &shape, TOL,
                                     mo, N_VARIANTS - 1);
        }
    }
    for (int v = 0; v < N_VARIANTS - 1; v++)
        free(wbuf[v]), free(obuf[v]);
    free(Q), free(K), free(V);
    kit_output_free(Qg), kit_output_free(Kg), kit_output_free(Vg);
    kit_output_free(w), kit_output_free(out);
}

/* ---------------------------------------------------------------------
 * The student's calls, on guarded buffers
 * ------------------------------------------------------------------- */

/* softmax_rows() on a kit_guarded() copy of X (rows, cols), copied back:
 * a write or a read outside X is named. Returns 1 when it returned
 * KIT_OK and wrote inside X. */
static int guarded_softmax(const char *call, float *X, int rows, int cols)
{
    const size_t n = (size_t)rows * cols;
    float *x = kit_guarded_copy(X, n, "X", "rows*cols");
    int ok = KIT_EXPECT_STATUS(call, softmax_rows(x, rows, cols), KIT_OK) &&
             KIT_EXPECT_GUARDS(call);
    memcpy(X, x, n * sizeof *X);
    kit_output_free(x);
    return ok;
}

/* attention() on kit_guarded() copies of Q, K and V, into guarded out and
 * weights (NaN on entry) that are then copied into out and w. Returns 1
 * when it returned KIT_OK and wrote inside its outputs. */
static int guarded_attention(const char *call, const float *Q, const float *K,
                             const float *V, float *out, float *w, int T,
                             int d_k, int d_v)
{
    const size_t nq = (size_t)T * d_k, nv = (size_t)T * d_v;
    const size_t nw = (size_t)T * T;
    float *q = kit_guarded_copy(Q, nq, "Q", "T*d_k");
    float *k = kit_guarded_copy(K, nq, "K", "T*d_k");
    float *v = kit_guarded_copy(V, nv, "V", "T*d_v");
    float *o = kit_guarded(nv, "out", "T*d_v");
    float *g = kit_guarded(nw, "weights", "T*T");
    int ok = KIT_EXPECT_STATUS(call, attention(q, k, v, o, g, T, d_k, d_v),
                               KIT_OK) &&
             KIT_EXPECT_GUARDS(call);
    memcpy(out, o, nv * sizeof *out), memcpy(w, g, nw * sizeof *w);
    kit_output_free(q), kit_output_free(k), kit_output_free(v);
    kit_output_free(o), kit_output_free(g);
    return ok;
}

/* ---------------------------------------------------------------------
 * Exercise 1.1 and 1.2: matmul and matmul_bt
 * ------------------------------------------------------------------- */

/* The classic mistakes of a matrix product, each with the C it gives.
 * A (m, n); B (n, p) for matmul, (p, n) for matmul_bt; C (m, p) was
 * prefill before the call. Entries a mistake never writes keep prefill. */
enum mm_variant {
    MM_RIGHT,
    MM_ADDED,    /* C += A B: the accumulator starts at C's old value */
    MM_RUNNING,  /* one sum for every entry, never reset             */
    MM_K_SHORT,  /* k < n - 1: the last product left out             */
    MM_K_LATE,   /* k from 1: the first product left out             */
    MM_ROW_LAST, /* i < m - 1: the last row never written            */
    MM_COL_LAST, /* j < p - 1: the last column never written         */
    MM_B_OTHER,  /* B read in the other layout ((p, n) for matmul)    */
    MM_A_T,      /* A read column by column: A[k * m + i]             */
    MM_N
};

static const char *const mm_name[MM_N] = {
    "",
    "an accumulator never set to zero",
    "a sum that is not reset for each entry",
    "the loop over k stopping one short (k < n - 1)",
    "the loop over k starting at 1 instead of 0",
    "the loop over rows stopping one short, so the last row of C is never "
    "written",
    "the loop over columns stopping one short, so the last column of C is "
    "never written",
    "", /* set per function */
    "A read as if it were stored column by column (A[k * m + i])",
};

static const char *const mm_advice[MM_N] = {
    "",
    "C held other numbers when your function was called, and you added "
    "to them (C[i][j] += ...). Start each sum at 0.",
    "Each C[i][j] carries the sums of the entries before it. Set the "
    "sum to 0 inside the loops, just before the loop over k.",
    "Every C[i][j] sums n products, k = 0 .. n-1: loop while k < n.",
    "Every C[i][j] sums n products, k = 0 .. n-1: start k at 0.",
    "Loop while i < m: C has m rows.",
    "Loop while j < p: C has p columns.",
    "",
    "A is (m, n), stored by rows: A[i][k] is A[i * n + k].",
};

/* C (m, p) as variant v computes it, in double. */
static void mm_variant(enum mm_variant v, const double *A, const double *B,
                       const float *prefill, int bt, int m, int n, int p,
                       double *C)
{
    double run = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < p; j++) {
            double sum = 0;
            for (int k = 0; k < n; k++) {
                if ((v == MM_K_SHORT && k == n - 1) || (v == MM_K_LATE && !k))
                    continue;
                double a = v == MM_A_T ? A[k * m + i] : A[i * n + k];
                int other = v == MM_B_OTHER ? !bt : bt;
                sum += a * (other ? B[j * n + k] : B[k * p + j]);
            }
            run += sum;
            double c = v == MM_RUNNING ? run : sum;
            if (v == MM_ADDED)
                c += prefill[i * p + j];
            if ((v == MM_ROW_LAST && i == m - 1) ||
                (v == MM_COL_LAST && j == p - 1))
                c = prefill[i * p + j];
            C[i * p + j] = c;
        }
}

/* Check C (m, p) against want, after checking that nothing was written
 * outside C or the inputs (kit_guarded() buffers), naming the classic mistakes of a product. A, B in double;
 * bt: the call was matmul_bt, so B is (p, n). */
static void expect_product(const char *call, const float *C, const double *want,
                           const double *A, const double *B,
                           const float *prefill, int bt, int m, int n, int p)
{
    if (!KIT_EXPECT_GUARDS(call))
        return;
    double values[MM_N][64];
    struct kit_mistake mistakes[MM_N - 1];
    for (int v = 1; v < MM_N; v++) {
        mm_variant((enum mm_variant)v, A, B, prefill, bt, m, n, p, values[v]);
        mistakes[v - 1] =
            (struct kit_mistake){mm_name[v], mm_advice[v], values[v]};
    }
    mistakes[MM_B_OTHER - 1].name =
        bt ? "B read as (n, p) instead of (p, n)"
           : "B read as if it were stored (p, n), as matmul_bt() reads it";
    mistakes[MM_B_OTHER - 1].advice =
        bt ? "In matmul_bt() the second matrix is stored by rows of length "
             "n: C[i][j] = sum over k of A[i][k] * B[j][k], B[j * n + k]."
           : "In matmul() B is (n, p), stored by rows of length p: B[k][j] "
             "is B[k * p + j].";
    KIT_EXPECT_TENSOR(call, C, want, m, p, TOL, mistakes, MM_N - 1);
}

/* A fixed, published case can be passed by code that recognises its
 * inputs and returns the known answer. So once it passes, the same call
 * runs on hidden numbers of the same shape (kit_test.h: drawn from
 * kit_hidden_seed(), which grading draws anew), judged in double by
 * mm_variant(MM_RIGHT, ...). bt: matmul_bt(), B given as (p, n). */
static void matmul_hidden_twin(const char *what, int bt, int m, int n, int p,
                               unsigned long long stream)
{
    if (kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ stream);
    float a[64], b[64], prefill[64];
    double Ad[64], Bd[64], want[64];
    rng_fill(&r, a, m * n, -3, 3);
    rng_fill(&r, b, n * p, -3, 3);
    rng_fill(&r, prefill, m * p, -1, 1);
    kit_to_double(a, Ad, (size_t)m * n);
    kit_to_double(b, Bd, (size_t)n * p);
    float *A = kit_guarded_copy(a, (size_t)m * n, "A", "m*n");
    float *B =
        kit_guarded_copy(b, (size_t)n * p, bt ? "Bt" : "B", bt ? "p*n" : "n*p");
    float *C = kit_guarded((size_t)m * p, "C", "m*p");
    for (int i = 0; i < m * p; i++)
        C[i] = prefill[i];
    mm_variant(MM_RIGHT, Ad, Bd, prefill, bt, m, n, p, want);
    char call[200];
    snprintf(call, sizeof call,
             "%s(A, B, C, %d, %d, %d), the %s's shape on hidden numbers "
             "(seed %llu; KIT_HIDDEN_SEED=%llu make test CH=1 runs it again)",
             bt ? "matmul_bt" : "matmul", m, n, p, what, seed, seed);
    const int status =
        bt ? matmul_bt(A, B, C, m, n, p) : matmul(A, B, C, m, n, p);
    if (KIT_EXPECT_STATUS(call, status, KIT_OK))
        expect_product(call, C, want, Ad, Bd, prefill, bt, m, n, p);
    kit_output_free(A), kit_output_free(B), kit_output_free(C);
}

KIT_TEST(matmul_by_hand, "matmul: a 2x3 times 3x2 product worked by hand")
{
    const float a[6] = {1, 2, 3, 4, 5, 6};    /* (2, 3) */
    const float b[6] = {7, 8, 9, 10, 11, 12}; /* (3, 2) */
    float *A = kit_guarded_copy(a, 6, "A", "m*n");
    float *B = kit_guarded_copy(b, 6, "B", "n*p");
    const double want[4] = {58, 64, 139, 154};
    const double Ad[6] = {1, 2, 3, 4, 5, 6}, Bd[6] = {7, 8, 9, 10, 11, 12};
    const float prefill[4] = {7, 7, 7, 7};
    float *C = kit_guarded(4, "C", "m*p");
    for (int i = 0; i < 4; i++)
        C[i] = prefill[i]; /* not zero, as a caller's buffer may be */
    if (KIT_EXPECT_STATUS("matmul(A, B, C, 2, 3, 2)", matmul(A, B, C, 2, 3, 2),
                          KIT_OK))
        expect_product("matmul(A, B, C, 2, 3, 2)", C, want, Ad, Bd, prefill, 0,
                       2, 3, 2);
    kit_output_free(A), kit_output_free(B), kit_output_free(C);
    matmul_hidden_twin("worked example", 0, 2, 3, 2, 0x6d6d31ULL);
}

KIT_TEST(matmul_golden, "matmul: a (3,5) x (5,4) product against PyTorch")
{
    float prefill[12], *C = kit_guarded(12, "C", "m*p");
    float *A = kit_guarded(15, "A", "m*n"), *B = kit_guarded(20, "B", "n*p");
    kit_to_float(ch1_mm_A, A, 15);
    kit_to_float(ch1_mm_B, B, 20);
    for (int i = 0; i < 12; i++)
        C[i] = prefill[i] = 0.5f * (float)i - 2.0f;
    if (KIT_EXPECT_STATUS("matmul(A, B, C, 3, 5, 4)", matmul(A, B, C, 3, 5, 4),
                          KIT_OK))
        expect_product("matmul(A, B, C, 3, 5, 4)", C, ch1_mm_C, ch1_mm_A,
                       ch1_mm_B, prefill, 0, 3, 5, 4);
    kit_output_free(A), kit_output_free(B), kit_output_free(C);
    matmul_hidden_twin("PyTorch case", 0, 3, 5, 4, 0x6d6d32ULL);
}

KIT_TEST(matmul_bt_golden,
         "matmul_bt: A Bt^T, with Bt = B^T given, against PyTorch's A @ B")
{
    float prefill[12], *C = kit_guarded(12, "C", "m*p");
    float *A = kit_guarded(15, "A", "m*n"), *Bt = kit_guarded(20, "Bt", "p*n");
    kit_to_float(ch1_mm_A, A, 15);
    kit_to_float(ch1_mm_Bt, Bt, 20); /* (4, 5): B transposed */
    for (int i = 0; i < 12; i++)
        C[i] = prefill[i] = 3.0f;
    if (KIT_EXPECT_STATUS("matmul_bt(A, Bt, C, 3, 5, 4)",
                          matmul_bt(A, Bt, C, 3, 5, 4), KIT_OK))
        expect_product("matmul_bt(A, Bt, C, 3, 5, 4)", C, ch1_mm_C, ch1_mm_A,
                       ch1_mm_Bt, prefill, 1, 3, 5, 4);
    kit_output_free(A), kit_output_free(Bt), kit_output_free(C);
    matmul_hidden_twin("PyTorch case", 1, 3, 5, 4, 0x6d6d33ULL);
}

KIT_TEST(matmul_bad_input, "matmul, matmul_bt: bad sizes and NULL are errors")
{
    float A[4] = {1, 2, 3, 4}, B[4] = {1, 0, 0, 1};
    /* C a named kit_guarded() buffer: when grading, the worker receives
     * all of it even when a size is 0, so a write is seen there too */
    float *C = kit_guarded_copy((const float[]){9, 9, 9, 9}, 4, "C", "m*p");
    int sizes[][3] = {{0, 2, 2}, {2, 0, 2}, {2, 2, 0}, {-1, 2, 2}, {2, 2, -3}};
    for (int s = 0; s < 5; s++) {
        char call[96];
        int m = sizes[s][0], n = sizes[s][1], p = sizes[s][2];
        snprintf(call, sizeof call, "matmul(A, B, C, %d, %d, %d)", m, n, p);
        if (!KIT_EXPECT_STATUS(call, matmul(A, B, C, m, n, p), KIT_E_SIZE))
            break;
        snprintf(call, sizeof call, "matmul_bt(A, B, C, %d, %d, %d)", m, n, p);
        if (!KIT_EXPECT_STATUS(call, matmul_bt(A, B, C, m, n, p), KIT_E_SIZE))
            break;
    }
    if (kit_current_failed()) {
        kit_output_free(C);
        return;
    }
    KIT_EXPECT_STATUS("matmul(NULL, B, C, 2, 2, 2)",
                      matmul(NULL, B, C, 2, 2, 2), KIT_E_NULL);
    KIT_EXPECT_STATUS("matmul(A, B, NULL, 2, 2, 2)",
                      matmul(A, B, NULL, 2, 2, 2), KIT_E_NULL);
    KIT_EXPECT_STATUS("matmul_bt(A, NULL, C, 2, 2, 2)",
                      matmul_bt(A, NULL, C, 2, 2, 2), KIT_E_NULL);
    int untouched = 1;
    for (int i = 0; i < 4; i++)
        untouched &= C[i] == 9.0f;
    KIT_CHECK(untouched, "after an error, C must be left as it was, but "
                         "it was changed: check the input before writing");
    KIT_EXPECT_GUARDS("matmul and matmul_bt with bad sizes and NULL");
    kit_output_free(C);
}

/* ---------------------------------------------------------------------
 * Exercise 1.3: softmax_rows
 * ------------------------------------------------------------------- */

/* The answers of a softmax along the columns, of one that never
 * divides by the sum (exp(x - max) left as it is), and of one whose sum
 * is not reset between rows. X (rows, cols). */
static void softmax_mistakes(const double *X, int rows, int cols,
                             double *by_column, double *unnormalised,
                             double *carried, double *last_undivided,
                             double *exp_short, double *first_undivided,
                             double *exp_late)
{
    for (int c = 0; c < cols; c++) {
        double max = X[c], sum = 0;
        for (int r = 1; r < rows; r++)
            max = fmax(max, X[r * cols + c]);
        for (int r = 0; r < rows; r++)
            sum += exp(X[r * cols + c] - max);
        for (int r = 0; r < rows; r++)
            by_column[r * cols + c] = exp(X[r * cols + c] - max) / sum;
    }
    for (int r = 0; r < rows; r++) {
        double max = X[r * cols];
        for (int c = 1; c < cols; c++)
            max = fmax(max, X[r * cols + c]);
        for (int c = 0; c < cols; c++)
            unnormalised[r * cols + c] = exp(X[r * cols + c] - max);
    }
    for (int r = 0; r < rows; r++) {
        const double *x = X + r * cols;
        double max = x[0], all = 0, short_sum = 0, late_sum = 0;
        for (int c = 1; c < cols; c++)
            max = fmax(max, x[c]);
        for (int c = 0; c < cols; c++) {
            all += exp(x[c] - max);
            short_sum += c < cols - 1 ? exp(x[c] - max) : 0;
            late_sum += c > 0 ? exp(x[c] - max) : 0;
        }
        for (int c = 0; c < cols; c++) {
            /* the division loop stops one short */
            last_undivided[r * cols + c] =
                exp(x[c] - max) / (c < cols - 1 ? all : 1);
            /* the exponential loop stops one short: the last entry is
             * divided as it is, and left out of the sum */
            exp_short[r * cols + c] =
                (c < cols - 1 ? exp(x[c] - max) : x[c]) / short_sum;
            /* the same two loops starting at c = 1 */
            first_undivided[r * cols + c] = exp(x[c] - max) / (c ? all : 1);
            exp_late[r * cols + c] = (c ? exp(x[c] - max) : x[c]) / late_sum;
        }
    }
    double sum = 0; /* the mistake: one sum for all rows */
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++)
            sum += unnormalised[r * cols + c];
        for (int c = 0; c < cols; c++)
            carried[r * cols + c] = unnormalised[r * cols + c] / sum;
    }
}

/* softmax_rows(X, rows, cols) in place on a kit_guarded() copy of Xd
 * (rows, cols; float values held as double) against want, naming the
 * classic mistakes, which are worked out from Xd. call names the call in
 * every message. Returns 1 when the status, the guards and X are right.
 * The published case and its hidden twin both come here, so a mistake
 * is named the same way in both. */
static int expect_softmax(const char *call, const double *Xd,
                          const double *want, int rows, int cols)
{
    const size_t n = (size_t)rows * cols;
    float *X = kit_guarded(n, "X", "rows*cols");
    double *buf = kit_alloc(7 * n * sizeof *buf);
    double *by_column = buf, *unnormalised = buf + n, *carried = buf + 2 * n;
    double *undivided = buf + 3 * n, *exp_short = buf + 4 * n;
    double *first_undivided = buf + 5 * n, *exp_late = buf + 6 * n;
    kit_to_float(Xd, X, n);
    softmax_mistakes(Xd, rows, cols, by_column, unnormalised, carried,
                     undivided, exp_short, first_undivided, exp_late);
    const struct kit_mistake mistakes[] = {
        {"softmax over the wrong axis",
         "Each row must sum to 1: take the max and the sum along the row.",
         by_column},
        {"the division by the row's sum forgotten",
         "After the exponentials, divide each entry by the row's sum.",
         unnormalised},
        {"a sum that is not reset for each row",
         "Row 0 is right and the later rows are too small: each row adds "
         "to the sums of the rows before it. Set the sum to 0 at the start "
         "of every row.",
         carried},
        {"the division loop stopping one short, so the last entry of each "
         "row is never divided by the sum",
         "Divide every entry, c = 0 .. cols-1: loop while c < cols.",
         undivided},
        {"the exponential loop stopping one short, so the last entry of each "
         "row is neither exponentiated nor counted in the sum",
         "Take exp(x - max) of every entry and add every one to the sum: "
         "loop while c < cols.",
         exp_short},
        {"the division loop starting at 1, so the first entry of each row "
         "is never divided by the sum",
         "Divide every entry, c = 0 .. cols-1: start at c = 0.",
         first_undivided},
        {"the exponential loop starting at 1, so the first entry of each "
         "row is neither exponentiated nor counted in the sum",
         "Take exp(x - max) of every entry, c = 0 .. cols-1: start at "
         "c = 0.",
         exp_late},
    };
    const int ok =
        KIT_EXPECT_STATUS(call, softmax_rows(X, rows, cols), KIT_OK) &&
        KIT_EXPECT_GUARDS(call) &&
        KIT_EXPECT_TENSOR(call, X, want, rows, cols, TOL, mistakes, 7);
    free(buf);
    kit_output_free(X);
    return ok;
}

KIT_TEST(softmax_golden, "softmax_rows: a (4,6) matrix against PyTorch")
{
    if (!expect_softmax("softmax_rows(X, 4, 6)", ch1_sm_X, ch1_sm_Y, 4, 6))
        return;
    /* The published matrix can be recognised and its answer returned, so
     * once it passes the same call runs on a hidden (4, 6) matrix
     * (kit_test.h: drawn from kit_hidden_seed(), which grading draws
     * anew), in the range ch1_sm_X was drawn from (tools/golden/ch1.py:
     * [-6, 6)), judged by kit_softmax_double(). */
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x736f66ULL);
    float xh[24];
    double Xh[24], Yh[24];
    rng_fill(&r, xh, 24, -6.0f, 6.0f);
    kit_to_double(xh, Xh, 24);
    kit_softmax_double(Xh, Yh, 4, 6);
    char call[200];
    snprintf(call, sizeof call,
             "softmax_rows(X, 4, 6), the PyTorch case's shape on hidden "
             "numbers (seed %llu; KIT_HIDDEN_SEED=%llu make test CH=1 runs it "
             "again)",
             seed, seed);
    expect_softmax(call, Xh, Yh, 4, 6);
}

KIT_TEST(softmax_rows_sum_to_one,
         "softmax_rows: every row is non-negative and sums to 1")
{
    struct rng r;
    rng_seed(&r, 11);
    for (int trial = 0; trial < 20; trial++) {
        int rows = 1 + rng_int(&r, 6), cols = 1 + rng_int(&r, 9);
        float X[54];
        rng_fill(&r, X, rows * cols, -8, 8);
        if (!guarded_softmax("softmax_rows(X, rows, cols)", X, rows, cols))
            return;
        for (int i = 0; i < rows; i++) {
            double sum = 0;
            for (int j = 0; j < cols; j++) {
                float x = X[i * cols + j];
                if (!KIT_CHECK(x >= 0 && x <= 1,
                               "softmax_rows on a (%d,%d) matrix: entry "
                               "[%d][%d] is %g; a weight must lie in [0, 1]",
                               rows, cols, i, j, x))
                    return;
                sum += x;
            }
            if (!KIT_CHECK(fabs(sum - 1) < 1e-5,
                           "softmax_rows on a (%d,%d) matrix: row %d sums to "
                           "%.7g, not 1. Each row's entries must be divided "
                           "by the sum of that same row's exponentials, "
                           "summed before any division; and row r starts "
                           "at X + r * cols.",
                           rows, cols, i, sum))
                return;
        }
    }
}

KIT_TEST(softmax_shift_invariant,
         "softmax_rows: adding a constant to a row changes nothing")
{
    float X[6] = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -0.25f};
    float Y[6];
    for (int i = 0; i < 6; i++)
        Y[i] = X[i] + 100.0f; /* e^100 overflows a float: exp(x) alone fails */
    if (!guarded_softmax("softmax_rows(X, 1, 6)", X, 1, 6) ||
        !guarded_softmax("softmax_rows(X + 100, 1, 6)", Y, 1, 6))
        return;
    double want[6], naive[6];
    kit_to_double(X, want, 6);
    for (int i = 0; i < 6; i++)
        naive[i] = NAN; /* expf(x + 100) is inf in float, inf/inf is NaN */
    const struct kit_mistake mistakes[] = {
        {"no max subtraction, which overflows to inf or NaN",
         "expf(100.5) is infinite in float. Subtract the row's maximum "
         "before expf(): the softmax does not change, and nothing "
         "overflows.",
         naive},
    };
    KIT_EXPECT_TENSOR("softmax_rows(X + 100, 1, 6), which must equal "
                      "softmax_rows(X, 1, 6),",
                      Y, want, 1, 6, TOL, mistakes, 1);
    /* The published row and its shift can be recognised, so once they
     * pass the same check runs on a hidden row (kit_test.h: drawn from
     * kit_hidden_seed(), which grading draws anew): X in [-3, 3] in steps
     * of 1/16 and a whole shift c in [93, 122], so that X + c is exact in
     * float (the shifted row is the unshifted one, shifted) and expf(x + c)
     * overflows for every entry. The unshifted row is judged by
     * kit_softmax_double() as softmax_golden judges it, then the
     * shifted row against the same reference. */
    if (kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x736869ULL);
    float xh[6], yh[6];
    double Xh[6], Wh[6];
    const int c = 93 + rng_int(&r, 30);
    for (int i = 0; i < 6; i++) {
        xh[i] = (float)(rng_int(&r, 97) - 48) / 16.0f;
        yh[i] = xh[i] + (float)c;
    }
    kit_to_double(xh, Xh, 6);
    kit_softmax_double(Xh, Wh, 1, 6);
    char call[240];
    snprintf(call, sizeof call,
             "softmax_rows(X, 1, 6), the published row's shape on hidden "
             "numbers (seed %llu; KIT_HIDDEN_SEED=%llu make test CH=1 runs it "
             "again)",
             seed, seed);
    if (!expect_softmax(call, Xh, Wh, 1, 6))
        return;
    snprintf(call, sizeof call,
             "softmax_rows(X + %d, 1, 6) on hidden numbers (seed %llu; "
             "KIT_HIDDEN_SEED=%llu make test CH=1 runs it again)",
             c, seed, seed);
    if (!guarded_softmax(call, yh, 1, 6))
        return;
    snprintf(call, sizeof call,
             "softmax_rows(X + %d, 1, 6), which must equal softmax_rows(X, 1, "
             "6), on hidden numbers (seed %llu; KIT_HIDDEN_SEED=%llu make "
             "test CH=1 runs it again),",
             c, seed, seed);
    KIT_EXPECT_TENSOR(call, yh, Wh, 1, 6, TOL, mistakes, 1);
}

/* How a softmax's max can go wrong (softmax_overflowing). */
enum max_mistake {
    MAX_NONE,      /* no max subtracted: shifted by 0                   */
    MAX_SHORT,     /* the max loop stopping one short                   */
    MAX_FROM_ZERO, /* the running max started at 0, not at x_r[0]       */
    MAX_GLOBAL,    /* one max over the whole matrix, not one per row    */
};

/* softmax in double of X (rows, cols) as float code with a max gone
 * wrong computes it (enum max_mistake): each exponential is rounded to
 * float as expf() makes it (above FLT_MAX inf; far below 1, 0), and
 * inf / inf or 0 / 0 is NaN. Y (rows, cols). */
static void softmax_overflowing(const double *X, double *Y, int rows, int cols,
                                enum max_mistake how)
{
    double global = X[0];
    for (int k = 1; k < rows * cols; k++)
        global = fmax(global, X[k]);
    for (int r = 0; r < rows; r++) {
        const double *x = X + r * cols;
        double max = how == MAX_SHORT ? x[0] : 0.0, sum = 0;
        if (how == MAX_GLOBAL)
            max = global;
        /* the short loop stops at cols - 2; the one from 0 is the right
         * loop, c = 1 .. cols-1, after the wrong start */
        const int end = how == MAX_SHORT       ? cols - 1
                        : how == MAX_FROM_ZERO ? cols
                                               : 1;
        for (int c = 1; c < end; c++)
            max = fmax(max, x[c]);
        for (int c = 0; c < cols; c++) {
            const double e = exp(x[c] - max);
            sum += Y[r * cols + c] = e > FLT_MAX ? INFINITY : (double)(float)e;
        }
        for (int c = 0; c < cols; c++)
            Y[r * cols + c] /= sum;
    }
}

static const char MAX_FROM_ZERO_NAME[] =
    "a running maximum starting at 0 instead of at the row's first entry: "
    "in a row whose entries are all large and negative, max stays 0, every "
    "exp(x - 0) underflows to 0 and the row is 0/0 = NaN";
static const char MAX_FROM_ZERO_FIX[] =
    "Start each row's maximum at its first entry (max = x_r[0]), then "
    "compare the others against it: the largest exponent is then exactly "
    "exp(0) = 1 and the sum is at least 1.";
static const char MAX_GLOBAL_NAME[] =
    "one maximum over the whole matrix instead of one per row: a row far "
    "below the matrix's largest entry has every exp(x - max) underflow to "
    "0, and is 0/0 = NaN";
static const char MAX_GLOBAL_FIX[] =
    "Find the maximum of each row inside the loop over rows, from that "
    "row's own entries, and subtract it from that row only.";

/* softmax_rows(X, 3, 4) on huge logits (call names the call, what the
 * check), against want, naming the mistakes of the max by what they give
 * (softmax_overflowing() on X); the max loop stopping one short only when
 * short_max says X's rows are softmax_huge_logits' kind (row 2's largest
 * entry last). The published cases and their hidden twins of
 * softmax_huge_logits and softmax_rows_far_apart come here. Returns 1
 * when right. */
static int expect_huge_softmax(const char *call, const char *what, float *X,
                               const double *want, int short_max_known)
{
    double Xd[12], naive[12], short_max[12], from_zero[12], global[12];
    kit_to_double(X, Xd, 12);
    softmax_overflowing(Xd, naive, 3, 4, MAX_NONE);
    softmax_overflowing(Xd, short_max, 3, 4, MAX_SHORT);
    softmax_overflowing(Xd, from_zero, 3, 4, MAX_FROM_ZERO);
    softmax_overflowing(Xd, global, 3, 4, MAX_GLOBAL);
    /* softmax_huge_logits' row 1, all near -1e4, is 0/0 under a max
     * started at 0 and under one max for the matrix, and also under a max
     * loop that runs one past the row and meets row 2's 0: those two are
     * named by softmax_rows_far_apart's rows only (short_max_known 0),
     * which tell all three apart */
    const struct kit_mistake mistakes[] = {
        {"no max subtraction, which overflows to inf or NaN",
         "expf(10000) is infinite and expf(-10000) is 0. Subtract the "
         "row's maximum first: every exponent is then <= 0, the largest "
         "is exactly exp(0) = 1, and the answer does not change.",
         naive},
        {"a maximum that misses the row's last entry (the max loop stopping "
         "one short, or max never updated): row 2's largest entry is its "
         "last, and exp(1e4 - max) overflows",
         "Compare every entry c = 1 .. cols-1 of the row against max "
         "(loop while c < cols), and set max = x_r[c] whenever one is "
         "larger.",
         short_max_known ? short_max : NULL},
        {MAX_FROM_ZERO_NAME, MAX_FROM_ZERO_FIX,
         short_max_known ? NULL : from_zero},
        {MAX_GLOBAL_NAME, MAX_GLOBAL_FIX, short_max_known ? NULL : global},
    };
    return guarded_softmax(call, X, 3, 4) &&
           KIT_EXPECT_TENSOR(what, X, want, 3, 4, TOL, mistakes, 4);
}

/* n entries of x in a random order. */
static void shuffle_floats(struct rng *r, float *x, int n)
{
    for (int i = n - 1; i > 0; i--) {
        const int j = rng_int(r, i + 1);
        const float t = x[i];
        x[i] = x[j], x[j] = t;
    }
}

/* A huge logit: a whole number in [5000, 20000], exact in float with
 * room for steps of 1/4 on either side. */
static float huge_logit(struct rng *r)
{
    return (float)(5000 + rng_int(r, 15001));
}

KIT_TEST(softmax_huge_logits, "softmax_rows: logits of +-1e4 give finite "
                              "weights")
{
    /* row 2 holds its largest entry last: a max loop that stops one
     * short never sees it, and exp(1e4 - 0) overflows */
    float X[12] = {1e4f,  -1e4f, 0.0f, 1e4f - 1.0f, -1e4f, -1e4f + 2.0f,
                   -1e4f, -1e4f, 0.0f, -1e4f,       -1e4f, 1e4f};
    double want[12] = {0};
    want[0] = 1.0 / (1.0 + exp(-1.0));
    want[3] = exp(-1.0) / (1.0 + exp(-1.0));
    want[5] = 1.0 / (1.0 + 3.0 * exp(-2.0));
    want[4] = want[6] = want[7] = exp(-2.0) / (1.0 + 3.0 * exp(-2.0));
    want[11] = 1.0;
    expect_huge_softmax("softmax_rows(X, 3, 4)",
                        "softmax_rows(X, 3, 4) with logits of +-1e4", X, want,
                        1);
    /* The published rows can be recognised and their answer returned, so
     * once they pass the same check runs on hidden rows of the same kind
     * (kit_test.h: drawn from kit_hidden_seed(), which grading draws
     * anew), judged by kit_softmax_double(): row 0 a huge logit H, H
     * less a step of 1/4 .. 4, a huge negative one and a small one, in a
     * drawn order; row 1 four huge negative logits within 4 of each
     * other; row 2 a huge negative logit twice and a small one, in a
     * drawn order, then a huge logit last. Every logit is exact in float,
     * and every huge one overflows expf() as +-1e4 does. */
    if (kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x736875ULL);
    float xh[12];
    const float top = huge_logit(&r);
    xh[0] = top;
    xh[1] = top - (float)(1 + rng_int(&r, 16)) / 4.0f;
    xh[2] = -huge_logit(&r);
    xh[3] = (float)(rng_int(&r, 25) - 12) / 4.0f;
    shuffle_floats(&r, xh, 4);
    const float low = huge_logit(&r);
    for (int c = 4; c < 8; c++)
        xh[c] = -low + (float)rng_int(&r, 17) / 4.0f;
    xh[8] = -huge_logit(&r);
    xh[9] = -huge_logit(&r);
    xh[10] = (float)(rng_int(&r, 25) - 12) / 4.0f;
    shuffle_floats(&r, xh + 8, 3);
    xh[11] = huge_logit(&r);
    double Xh[12], wh[12];
    kit_to_double(xh, Xh, 12);
    kit_softmax_double(Xh, wh, 3, 4);
    char call[200], what[240];
    snprintf(call, sizeof call,
             "softmax_rows(X, 3, 4), the published rows' kind on hidden "
             "numbers (seed %llu; KIT_HIDDEN_SEED=%llu make test CH=1 runs it "
             "again)",
             seed, seed);
    snprintf(what, sizeof what,
             "softmax_rows(X, 3, 4) with logits of +-5000 .. +-20000 on "
             "hidden numbers (seed %llu; KIT_HIDDEN_SEED=%llu make test CH=1 "
             "runs it again)",
             seed, seed);
    expect_huge_softmax(call, what, xh, wh, 1);
}

/* softmax_rows(X, 3, 4) of rows far apart in size against
 * kit_softmax_double(), naming the mistakes of the max
 * (expect_huge_softmax()). Returns 1 when right. */
static int expect_far_softmax(const char *call, float *X)
{
    double Xd[12], want[12];
    kit_to_double(X, Xd, 12);
    kit_softmax_double(Xd, want, 3, 4);
    return expect_huge_softmax(call, call, X, want, 0);
}

KIT_TEST(softmax_rows_far_apart,
         "softmax_rows: rows near +1e4, near 0 and near -1e4, each shifted "
         "by its own maximum")
{
    /* row 0 near +1e4, row 1 near 0, row 2 near -1e4: one max for the
     * whole matrix makes rows 1 and 2 underflow to 0/0, a max started at
     * 0 row 2 only, no max at all rows 0 and 2 */
    float X[12] = {1e4f,  1e4f - 1.0f,  1e4f - 0.5f,   1e4f - 2.0f,
                   0.5f,  -1.0f,        2.0f,          0.0f,
                   -1e4f, -1e4f + 1.5f, -1e4f + 0.25f, -1e4f - 1.0f};
    if (!expect_far_softmax("softmax_rows(X, 3, 4) with rows near +1e4, 0 "
                            "and -1e4",
                            X))
        return;
    /* The published rows can be recognised and their answer returned, so
     * once they pass the same check runs on hidden rows of the same kind
     * (kit_test.h: drawn from kit_hidden_seed(), which grading draws
     * anew): row 0 a huge logit H and three within 4 below it, row 1 four
     * in [-3, 3], row 2 four within 4 above a huge negative -L, each in
     * steps of 1/4 and in a drawn order. Every logit is exact in float,
     * and e^(+-H) overflows or underflows as e^(+-1e4) does. */
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x666172ULL);
    float xh[12];
    const float top = huge_logit(&r), low = huge_logit(&r);
    xh[0] = top;
    for (int c = 1; c < 4; c++)
        xh[c] = top - (float)rng_int(&r, 17) / 4.0f;
    for (int c = 4; c < 8; c++)
        xh[c] = (float)(rng_int(&r, 25) - 12) / 4.0f;
    for (int c = 8; c < 12; c++)
        xh[c] = -low + (float)rng_int(&r, 17) / 4.0f;
    for (int row = 0; row < 3; row++)
        shuffle_floats(&r, xh + 4 * row, 4);
    char call[240];
    snprintf(call, sizeof call,
             "softmax_rows(X, 3, 4) with rows near +%.0f, 0 and -%.0f, "
             "hidden numbers (seed %llu; KIT_HIDDEN_SEED=%llu make test CH=1 "
             "runs it again)",
             (double)top, (double)low, seed, seed);
    expect_far_softmax(call, xh);
}

/* "[x_0, x_1, ...]" of x (n), each as %g prints it, into buf (size). */
static void format_row(char *buf, size_t size, const double *x, int n)
{
    size_t at = 0;
    for (int i = 0; i < n && at < size; i++)
        at +=
            (size_t)snprintf(buf + at, size - at, "%s%g", i ? ", " : "[", x[i]);
    if (at < size)
        snprintf(buf + at, size - at, "]");
}

/* X (1, cols) after softmax_rows() of in, against want: each -INFINITY
 * of in exactly 0, the rest within tol. after follows the message. */
static int expect_masked_row(const float *in, const float *X,
                             const double *want, int cols, double tol,
                             const char *after)
{
    int ok = 1;
    for (int c = 0; c < cols; c++)
        ok &= in[c] == -INFINITY ? X[c] == 0.0f
                                 : fabs((double)X[c] - want[c]) < tol;
    double ind[8], got[8];
    kit_to_double(in, ind, (size_t)cols);
    kit_to_double(X, got, (size_t)cols);
    char in_s[160], got_s[160], want_s[160];
    format_row(in_s, sizeof in_s, ind, cols);
    format_row(got_s, sizeof got_s, got, cols);
    format_row(want_s, sizeof want_s, want, cols);
    return KIT_CHECK(ok,
                     "softmax_rows(%s) gave %s; expected %s. Chapter 2's "
                     "mask relies on exp(-inf - max) being exactly 0.%s",
                     in_s, got_s, want_s, after);
}

KIT_TEST(softmax_minus_infinity,
         "softmax_rows: -INFINITY becomes exactly 0; a row of only -INFINITY, "
         "or one holding +INFINITY, becomes NaN (attention.h)")
{
    const float X0[4] = {1.0f, -INFINITY, 1.0f, -INFINITY};
    float X[4] = {1.0f, -INFINITY, 1.0f, -INFINITY};
    if (!guarded_softmax("softmax_rows(X, 1, 4)", X, 1, 4))
        return;
    expect_masked_row(X0, X, (const double[]){0.5, 0, 0.5, 0}, 4, 1e-6, "");
    /* the two exceptions attention.h documents: the formula itself gives
     * NaN there (-inf - -inf, +inf - +inf), and no row is special-cased */
    float Y[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY,
                  1.0f,      INFINITY,  0.0f,      -INFINITY};
    const double nan_rows[8] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    if (!guarded_softmax("softmax_rows(Y, 2, 4)", Y, 2, 4))
        return;
    KIT_EXPECT_TENSOR("softmax_rows() on the rows [-inf, -inf, -inf, -inf] "
                      "and [1, +inf, 0, -inf], which attention.h says become "
                      "NaN (max - max is NaN when max is infinite; follow "
                      "the formula, with no special case)",
                      Y, nan_rows, 2, 4, 0.0, NULL, 0);
    /* The published rows can be recognised, so once they pass the same
     * checks run on hidden rows (kit_test.h: drawn from kit_hidden_seed(),
     * which grading draws anew): a row of 4 whose entries are -INFINITY
     * at drawn places (one or two, the first in about half the seeds)
     * and drawn in [-3, 3) elsewhere (two at least, as in the published
     * row, so that the weights are not all 1), judged by
     * kit_softmax_double(); then a row of -INFINITY and a row holding
     * +INFINITY at a drawn place among entries drawn as the first row's,
     * both NaN. */
    if (kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x736d69ULL);
    float xh[4], xin[4];
    double Xh[4], wh[4];
    int n_inf;
    do {
        n_inf = 0;
        for (int c = 0; c < 4; c++) {
            const int masked = rng_int(&r, 2);
            const float x = rng_range(&r, -3.0f, 3.0f);
            xh[c] = masked ? -INFINITY : x;
            n_inf += masked;
        }
    } while (n_inf == 0 || n_inf > 2);
    memcpy(xin, xh, sizeof xin);
    kit_to_double(xh, Xh, 4);
    kit_softmax_double(Xh, wh, 1, 4);
    char after[160], call[240];
    snprintf(after, sizeof after,
             " (hidden numbers, seed %llu; KIT_HIDDEN_SEED=%llu make test "
             "CH=1 runs it again)",
             seed, seed);
    snprintf(call, sizeof call, "softmax_rows(X, 1, 4) on hidden numbers%s",
             after);
    if (!guarded_softmax(call, xh, 1, 4) ||
        !expect_masked_row(xin, xh, wh, 4, TOL, after))
        return;
    float yh[8];
    for (int c = 0; c < 4; c++) {
        yh[c] = -INFINITY;
        yh[4 + c] = rng_int(&r, 2) ? -INFINITY : rng_range(&r, -3.0f, 3.0f);
    }
    yh[4 + rng_int(&r, 4)] = INFINITY;
    double yd[8];
    kit_to_double(yh, yd, 8);
    char row0[160], row1[160], what[800];
    format_row(row0, sizeof row0, yd, 4);
    format_row(row1, sizeof row1, yd + 4, 4);
    snprintf(call, sizeof call, "softmax_rows(Y, 2, 4) on hidden numbers%s",
             after);
    if (!guarded_softmax(call, yh, 2, 4))
        return;
    snprintf(what, sizeof what,
             "softmax_rows() on the rows %s and %s, which attention.h says "
             "become NaN (max - max is NaN when max is infinite; follow the "
             "formula, with no special case),%s",
             row0, row1, after);
    KIT_EXPECT_TENSOR(what, yh, nan_rows, 2, 4, 0.0, NULL, 0);
}

KIT_TEST(softmax_bad_input, "softmax_rows: bad sizes and NULL are errors")
{
    float X[2] = {1, 2};
    KIT_EXPECT_STATUS("softmax_rows(X, 0, 2)", softmax_rows(X, 0, 2),
                      KIT_E_SIZE);
    KIT_EXPECT_STATUS("softmax_rows(X, 2, -1)", softmax_rows(X, 2, -1),
                      KIT_E_SIZE);
    KIT_EXPECT_STATUS("softmax_rows(NULL, 1, 2)", softmax_rows(NULL, 1, 2),
                      KIT_E_NULL);
    KIT_CHECK(X[0] == 1 && X[1] == 2,
              "after an error, X must be left as it was");
}

/* ---------------------------------------------------------------------
 * Exercise 1.4: attention
 * ------------------------------------------------------------------- */

/* The worked example of chapter 1 (tools/runs/plotdata/ch1.c prints the same
 * numbers for the book). T = 2, d_k = 4, d_v = 2:
 *   Q K^T = [[2, 0], [0, 2]], / sqrt(4) = [[1, 0], [0, 1]]
 *   weights = [[e/(e+1), 1/(e+1)], [1/(e+1), e/(e+1)]],  out = weights V. */
KIT_TEST(attention_by_hand, "attention: chapter 1's worked example")
{
    const float Q[8] = {1, 1, 0, 0, 0, 0, 1, 1};
    const float K[8] = {1, 1, 0, 0, 0, 0, 1, 1};
    const float V[4] = {1, 0, 0, 1};
    const double e = exp(1.0), a = e / (e + 1), b = 1 / (e + 1);
    const double want[4] = {a, b, b, a};
    float w[4], out[4];
    kit_poison(w, 4);
    kit_poison(out, 4);
    if (!guarded_attention("attention(Q, K, V, out, weights, 2, 4, 2)", Q, K, V,
                           out, w, 2, 4, 2))
        return;
    /* the scale mistakes, worked by hand on these scores */
    const double e2 = exp(2.0), h = exp(0.5);
    const double no_scale[4] = {e2 / (e2 + 1), 1 / (e2 + 1), 1 / (e2 + 1),
                                e2 / (e2 + 1)};
    const double by_dk[4] = {h / (h + 1), 1 / (h + 1), 1 / (h + 1),
                             h / (h + 1)};
    /* (uniform weights, which integer division gives, are not listed:
     * on two tokens too many mistakes give 0.5 everywhere) */
    const struct kit_mistake mistakes[] = {
        {variant_name[NO_SCALE], variant_advice[NO_SCALE], no_scale},
        {variant_name[SCALE_DK], variant_advice[SCALE_DK], by_dk},
    };
    if (KIT_EXPECT_TENSOR("the worked example's weights", w, want, 2, 2, TOL,
                          mistakes, 2))
        KIT_EXPECT_TENSOR("the worked example's out (V is the identity, so "
                          "out = weights)",
                          out, want, 2, 2, TOL, NULL, 0);
    /* The worked example is published: once it passes, the same shape on
     * hidden numbers (as matmul_hidden_twin()), so that code which
     * recognises the example's inputs and returns its answer gains
     * nothing. */
    if (kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x617431ULL);
    float Qh[8], Kh[8], Vh[4];
    double q[8], k[8], v[4], wh[4], oh[4];
    rng_fill(&r, Qh, 8, -1.5f, 1.5f);
    rng_fill(&r, Kh, 8, -1.5f, 1.5f);
    rng_fill(&r, Vh, 4, -1.0f, 1.0f);
    kit_to_double(Qh, q, 8);
    kit_to_double(Kh, k, 8);
    kit_to_double(Vh, v, 4);
    ref_attention(RIGHT, q, k, v, 2, 4, 2, wh, oh);
    char label[200];
    snprintf(label, sizeof label,
             "the worked example's shape on hidden numbers (seed %llu; "
             "KIT_HIDDEN_SEED=%llu make test CH=1 runs it again)",
             seed, seed);
    expect_attention(label, Qh, Kh, Vh, 2, 4, 2, wh, oh);
}

KIT_TEST(attention_golden, "attention: four shapes against PyTorch, "
                           "including d_k != d_v and T = 1")
{
    size_t n = sizeof ch1_golden_cases / sizeof ch1_golden_cases[0];
    for (size_t c = 0; c < n; c++) {
        const struct ch1_golden_case *g = &ch1_golden_cases[c];
        size_t nq = (size_t)g->T * g->d_k, nv = (size_t)g->T * g->d_v;
        float *Q = kit_alloc(nq * sizeof *Q), *K = kit_alloc(nq * sizeof *K);
        float *V = kit_alloc(nv * sizeof *V);
        kit_to_float(g->Q, Q, nq);
        kit_to_float(g->K, K, nq);
        kit_to_float(g->V, V, nv);
        expect_attention(g->name, Q, K, V, g->T, g->d_k, g->d_v, g->weights,
                         g->out);
        free(Q), free(K), free(V);
    }
    /* Hidden cases (kit_test.h): drawn from the seed, judged by
     * ref_attention(RIGHT, ...), only once the published ones pass. */
    if (kit_current_failed())
        return;
    struct rng r;
    unsigned long long seed = kit_hidden_seed();
    rng_seed(&r, seed);
    for (int c = 0; c < KIT_HIDDEN_CASES && !kit_current_failed(); c++) {
        /* Every size at least 2: a case with one
         * position or d_k = 1 cannot tell a missing scale from a right
         * one, and a hidden case must catch what a published one does. */
        int T = 2 + rng_int(&r, 8), d_k = 2 + rng_int(&r, 15),
            d_v = 2 + rng_int(&r, 7);
        size_t nq = (size_t)T * d_k, nv = (size_t)T * d_v;
        float *Q = kit_alloc(nq * sizeof *Q), *K = kit_alloc(nq * sizeof *K);
        float *V = kit_alloc(nv * sizeof *V);
        double *q = kit_alloc((2 * nq + nv) * sizeof *q), *k = q + nq,
               *v = k + nq;
        double *w = kit_alloc((size_t)T * T * sizeof *w),
               *o = kit_alloc(nv * sizeof *o);
        rng_fill(&r, Q, (int)nq, -1.5f, 1.5f);
        rng_fill(&r, K, (int)nq, -1.5f, 1.5f);
        rng_fill(&r, V, (int)nv, -1.0f, 1.0f);
        kit_to_double(Q, q, nq);
        kit_to_double(K, k, nq);
        kit_to_double(V, v, nv);
        ref_attention(RIGHT, q, k, v, T, d_k, d_v, w, o);
        char label[160];
        snprintf(label, sizeof label,
                 "hidden case %d of seed %llu (the published cases pass; "
                 "KIT_HIDDEN_SEED=%llu make test CH=1 runs it again)",
                 c + 1, seed, seed);
        expect_attention(label, Q, K, V, T, d_k, d_v, w, o);
        free(Q), free(K), free(V), free(q), free(w), free(o);
    }
}

KIT_TEST(attention_rows_are_distributions,
         "attention: every weight row is non-negative and sums to 1")
{
    struct rng r;
    rng_seed(&r, 7);
    for (int trial = 0; trial < 10; trial++) {
        int T = 1 + rng_int(&r, 8), d_k = 1 + rng_int(&r, 8), d_v = 3;
        float Q[64], K[64], V[24], w[64], out[24];
        rng_fill(&r, Q, T * d_k, -3, 3);
        rng_fill(&r, K, T * d_k, -3, 3);
        rng_fill(&r, V, T * d_v, -1, 1);
        if (!guarded_attention("attention()", Q, K, V, out, w, T, d_k, d_v))
            return;
        for (int i = 0; i < T; i++) {
            double sum = 0, min = 1;
            for (int j = 0; j < T; j++) {
                sum += w[i * T + j];
                min = fmin(min, w[i * T + j]);
            }
            if (!KIT_CHECK(fabs(sum - 1) < 1e-5 && min >= 0,
                           "attention (T=%d, d_k=%d): weight row %d sums to "
                           "%.7g with smallest entry %g; each row must be a "
                           "probability distribution (>= 0, sum 1). Is the "
                           "softmax along the rows?",
                           T, d_k, i, sum, min))
                return;
        }
    }
}

/* attention() on T = 4 queries against 4 equal keys (Q, K (4, 3), V
 * (4, 2)): uniform weights want_w, out want_out (the mean of V). call,
 * and the two checks after "attention() with 4 equal keys: ", are
 * followed by after. The published case and its hidden twin both come
 * here. */
static void expect_equal_keys(const float *Q, const float *K, const float *V,
                              const double *want_w, const double *want_out,
                              const char *after)
{
    enum { T = 4, d_k = 3, d_v = 2 };
    float w[T * T], out[T * d_v];
    kit_poison(w, T * T);
    kit_poison(out, T * d_v);
    char call[240], what[240];
    snprintf(call, sizeof call, "attention() with equal keys%s", after);
    if (!guarded_attention(call, Q, K, V, out, w, T, d_k, d_v))
        return;
    snprintf(what, sizeof what, "attention() with 4 equal keys: weights%s",
             after);
    KIT_EXPECT_TENSOR(what, w, want_w, T, T, TOL, NULL, 0);
    snprintf(what, sizeof what,
             "attention() with 4 equal keys: out (the mean of V)%s", after);
    KIT_EXPECT_TENSOR(what, out, want_out, T, d_v, TOL, NULL, 0);
}

KIT_TEST(attention_equal_keys_uniform,
         "attention: equal keys give uniform weights and the mean value")
{
    enum { T = 4, d_k = 3, d_v = 2 };
    const float Q[T * d_k] = {1, 2, 3, -1, 0, 4, 2, 2, 2, 0, 0, 9};
    float K[T * d_k];
    for (int j = 0; j < T; j++) {
        K[j * d_k + 0] = 0.5f;
        K[j * d_k + 1] = -1.0f;
        K[j * d_k + 2] = 2.0f;
    }
    const float V[T * d_v] = {1, 0, 3, 2, -1, 4, 5, 6};
    double want_w[T * T], want_out[T * d_v];
    for (int i = 0; i < T * T; i++)
        want_w[i] = 1.0 / T;
    for (int i = 0; i < T; i++) {
        want_out[i * d_v] = (1 + 3 - 1 + 5) / 4.0;
        want_out[i * d_v + 1] = (0 + 2 + 4 + 6) / 4.0;
    }
    expect_equal_keys(Q, K, V, want_w, want_out, "");
    /* The published case can be recognised, so once it passes the same
     * check runs on hidden numbers (kit_test.h: drawn from
     * kit_hidden_seed(), which grading draws anew): Q in [-4, 4), one key
     * in [-2, 2) given to all four positions, V in [-6, 6); the weights
     * are 1/4 and out the mean of V, worked in double. */
    if (kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x61656bULL);
    float Qh[T * d_k], Kh[T * d_k], Vh[T * d_v], key[d_k];
    rng_fill(&r, Qh, T * d_k, -4.0f, 4.0f);
    rng_fill(&r, key, d_k, -2.0f, 2.0f);
    rng_fill(&r, Vh, T * d_v, -6.0f, 6.0f);
    for (int j = 0; j < T; j++)
        memcpy(Kh + j * d_k, key, sizeof key);
    double mean[d_v] = {0};
    for (int j = 0; j < T; j++)
        for (int c = 0; c < d_v; c++)
            mean[c] += (double)Vh[j * d_v + c] / T;
    for (int i = 0; i < T; i++)
        for (int c = 0; c < d_v; c++)
            want_out[i * d_v + c] = mean[c];
    char after[160];
    snprintf(after, sizeof after,
             ", on hidden numbers (seed %llu; KIT_HIDDEN_SEED=%llu make test "
             "CH=1 runs it again)",
             seed, seed);
    expect_equal_keys(Qh, Kh, Vh, want_w, want_out, after);
}

/* attention() on T = 3 positions with huge scores (Q, K (3, 2), V (3,
 * 2)), against ref_attention(RIGHT, ...) in double, naming the softmax
 * without the max by the weights it gives in float. call names the
 * call, w_what and out_what the two checks. The published case and its
 * hidden twin both come here. */
static void expect_huge_attention(const float *Q, const float *K,
                                  const float *V, const char *call,
                                  const char *w_what, const char *out_what)
{
    enum { T = 3, d_k = 2, d_v = 2 };
    float w[T * T], out[T * d_v];
    kit_poison(out, T * d_v);
    kit_poison(w, T * T);
    if (!guarded_attention(call, Q, K, V, out, w, T, d_k, d_v))
        return;
    /* the right answer, and the one a softmax without the max subtraction
     * gives in float: expf() above FLT_MAX is inf, inf / inf is NaN */
    double Qd[T * d_k], Kd[T * d_k], Vd[T * d_v];
    double want_w[T * T], want_out[T * d_v], naive_w[T * T];
    kit_to_double(Q, Qd, T * d_k);
    kit_to_double(K, Kd, T * d_k);
    kit_to_double(V, Vd, T * d_v);
    ref_attention(RIGHT, Qd, Kd, Vd, T, d_k, d_v, want_w, want_out);
    for (int i = 0; i < T; i++) {
        double sum = 0;
        for (int j = 0; j < T; j++) {
            double s = 0;
            for (int k = 0; k < d_k; k++)
                s += Qd[i * d_k + k] * Kd[j * d_k + k];
            double e = exp(s / sqrt((double)d_k));
            sum += naive_w[i * T + j] = e > FLT_MAX ? INFINITY : e;
        }
        for (int j = 0; j < T; j++)
            naive_w[i * T + j] /= sum;
    }
    const char *name = "no max subtraction in softmax_rows(), which "
                       "overflows to inf or NaN";
    const char *advice = "expf(7000) is infinite in float. Subtract each "
                         "row's maximum before expf(): every exponent is "
                         "then <= 0, and the answer does not change.";
    const struct kit_mistake mw[] = {{name, advice, naive_w}};
    /* out is checked only once the weights are right, and then the
     * softmax is not what went wrong: no mistake is named for it */
    if (KIT_EXPECT_TENSOR(w_what, w, want_w, T, T, TOL, mw, 1))
        KIT_EXPECT_TENSOR(out_what, out, want_out, T, d_v, TOL, NULL, 0);
}

/* Whether every row i of the scores q_i . k_j (Q, K (3, 2); before the
 * scale) reaches 1000 * sqrt(2) or more, so that expf() of its largest
 * scaled score overflows, and leads each other score by 0 (an exact
 * tie: the dot products are of whole numbers, exact in float) or by 20
 * * sqrt(2) or more. Scores in the thousands carry float rounding of
 * about 1e-3, which moves the weights of two keys whose scaled scores
 * are that close by more than the tolerance; 20 apart, the lesser
 * weight is below exp(-20). */
static int huge_scores_apart(const float *Q, const float *K)
{
    for (int i = 0; i < 3; i++) {
        double s[3], top = -INFINITY;
        for (int j = 0; j < 3; j++) {
            s[j] = (double)Q[2 * i] * K[2 * j] +
                   (double)Q[2 * i + 1] * K[2 * j + 1];
            top = fmax(top, s[j]);
        }
        if (top < 1000 * sqrt(2.0))
            return 0;
        for (int j = 0; j < 3; j++)
            if (s[j] != top && top - s[j] < 20 * sqrt(2.0))
                return 0;
    }
    return 1;
}

KIT_TEST(attention_huge_logits, "attention: huge scores stay finite")
{
    enum { T = 3, d_k = 2, d_v = 2 };
    /* scores of about 1e4 / sqrt(2): exp() alone would overflow */
    const float Q[T * d_k] = {100, 100, -100, 50, 0, 100};
    const float K[T * d_k] = {100, 0, 0, 100, -100, -100};
    const float V[T * d_v] = {1, 2, 3, 4, 5, 6};
    expect_huge_attention(Q, K, V, "attention() with huge scores",
                          "attention() with scores near 7000: weights",
                          "attention() with scores near 7000: out (the "
                          "weights are right)");
    /* The published case can be recognised, so once it passes the same
     * check runs on hidden numbers (kit_test.h: drawn from
     * kit_hidden_seed(), which grading draws anew): Q and K whole numbers
     * in [-100, 100], the published range, so that the scores reach the
     * thousands as theirs do, drawn again until huge_scores_apart(); V in
     * [-6, 6). */
    if (kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x616875ULL);
    float Qh[T * d_k], Kh[T * d_k], Vh[T * d_v];
    do {
        for (int k = 0; k < T * d_k; k++) {
            Qh[k] = (float)(rng_int(&r, 201) - 100);
            Kh[k] = (float)(rng_int(&r, 201) - 100);
        }
    } while (!huge_scores_apart(Qh, Kh));
    rng_fill(&r, Vh, T * d_v, -6.0f, 6.0f);
    char call[200], w_what[240], out_what[240];
    char seed_s[120];
    snprintf(seed_s, sizeof seed_s,
             "(seed %llu; KIT_HIDDEN_SEED=%llu make test CH=1 runs it again)",
             seed, seed);
    snprintf(call, sizeof call,
             "attention() with huge scores, on hidden numbers %s", seed_s);
    snprintf(w_what, sizeof w_what,
             "attention() with scores in the thousands, on hidden numbers "
             "%s: weights",
             seed_s);
    snprintf(out_what, sizeof out_what,
             "attention() with scores in the thousands, on hidden numbers "
             "%s: out (the weights are right)",
             seed_s);
    expect_huge_attention(Qh, Kh, Vh, call, w_what, out_what);
}

KIT_TEST(attention_bad_input, "attention: bad sizes and NULL are errors")
{
    float Q[4] = {1, 2, 3, 4}, K[4] = {1, 0, 0, 1}, V[4] = {1, 1, 1, 1};
    float *out =
              kit_guarded_copy((const float[]){9, 9, 9, 9}, 4, "out", "T*d_v"),
          *w = kit_guarded_copy((const float[]){9, 9, 9, 9}, 4, "weights",
                                "T*T");
    KIT_EXPECT_STATUS("attention(..., T=0, d_k=2, d_v=2)",
                      attention(Q, K, V, out, w, 0, 2, 2), KIT_E_SIZE);
    KIT_EXPECT_STATUS("attention(..., T=2, d_k=-2, d_v=2)",
                      attention(Q, K, V, out, w, 2, -2, 2), KIT_E_SIZE);
    KIT_EXPECT_STATUS("attention(..., T=2, d_k=2, d_v=0)",
                      attention(Q, K, V, out, w, 2, 2, 0), KIT_E_SIZE);
    KIT_EXPECT_STATUS("attention(Q, K, NULL, ...)",
                      attention(Q, K, NULL, out, w, 2, 2, 2), KIT_E_NULL);
    KIT_EXPECT_STATUS("attention(Q, K, V, out, NULL, ...)",
                      attention(Q, K, V, out, NULL, 2, 2, 2), KIT_E_NULL);
    int untouched = 1;
    for (int i = 0; i < 4; i++)
        untouched &= out[i] == 9.0f && w[i] == 9.0f;
    KIT_CHECK(untouched, "after an error, out and weights must be left as "
                         "they were: check the input before writing");
    KIT_EXPECT_GUARDS("attention with bad sizes and NULL");
    kit_output_free(out), kit_output_free(w);
}

static const struct kit_test *const ch1_tests[] = {
    &matmul_by_hand,
    &matmul_golden,
    &matmul_bt_golden,
    &matmul_bad_input,
    &softmax_golden,
    &softmax_rows_sum_to_one,
    &softmax_shift_invariant,
    &softmax_huge_logits,
    &softmax_rows_far_apart,
    &softmax_minus_infinity,
    &softmax_bad_input,
    &attention_by_hand,
    &attention_golden,
    &attention_rows_are_distributions,
    &attention_equal_keys_uniform,
    &attention_huge_logits,
    &attention_bad_input,
    NULL,
};
KIT_CHAPTER(ch1_tests)
