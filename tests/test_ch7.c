/*
 * test_ch7.c: chapter 7 tests, attention at CPU speed.
 *
 * Every fast function must give what chapters 1 to 3 give, within float
 * rounding, on shapes chosen to break tiling code: T = 1, prime T, tile
 * sizes that do not divide T, and widths d that are not a multiple of
 * the vector width (8 floats). Outputs, inputs and the flash scratch are
 * guarded on both sides. A double-precision copy of the tiled algorithm
 * below computes what each classic mistake of tiled attention gives, so
 * that a failure can name it. No test measures time: make bench does.
 *
 * Dimension letters: m, n, p = a product (m,n) x (n,p); T = tokens;
 * d = one head's width; Bq, Bk = tile sizes; d_model, h as in mha.h.
 */
#include "attention.h"
#include "fast.h"
#include "kit_test.h"
#include "mha.h"
#include "rng.h"

#include "golden/ch1_golden.h"
#include "golden/ch3_golden.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-5

static int imin(int a, int b)
{
    return a < b ? a : b;
}

/* n random floats in [lo, hi), from seed. */
static float *random_floats(size_t n, float lo, float hi,
                            unsigned long long seed)
{
    struct rng r;
    rng_seed(&r, seed);
    float *x = kit_alloc(n * sizeof *x);
    rng_fill(&r, x, (int)n, lo, hi);
    return x;
}

static double *to_double(const float *x, size_t n)
{
    double *y = kit_alloc(n * sizeof *y);
    kit_to_double(x, y, n);
    return y;
}

/* ---------------------------------------------------------------------
 * Exercises 7.1 to 7.4: the matrix product in four steps
 * ------------------------------------------------------------------- */

typedef int (*product_fn)(const float *, const float *, float *, int, int, int);

/* Shapes that fill no tile evenly: 1 x 1, fewer rows than a register
 * tile, n just past a cache block (MM_KB = 128), p past MM_NB = 256,
 * m past a thread's block (MM_MB) and not a multiple of MM_TR.
 * They run in this order and a test stops at the first that fails, so
 * the small ones fail first: the hints of matmul_tiled_ragged and
 * matmul_fast_ragged (tests/hints/ch7.txt) name them all, not only the
 * large ones. */
static const int product_shapes[][3] = {
    {1, 1, 1},      {3, 7, 5},    {5, 13, 17},    {7, 129, 33},
    {37, 130, 263}, {66, 20, 19}, {50, 300, 263},
};

/* The same name for the same mistake in every step. */
static const char past_row_name[] =
    "a j loop that runs one past the end of the row (j <= p)";
static const char past_row_advice[] =
    "Along row i of C and row k of B the columns are j = 0 .. p-1: write "
    "j < p. One step further reads the first float of the next row of B "
    "and writes into the next row of C; on the last row, past the end.";

/* Run one step on (m, n) x (n, p) and compare with the product in
 * double. A, B and C are kit_guarded() buffers, so that a read past A or
 * B brings that guard's NaN into C, and a write past C is seen; C holds
 * 0.5 on entry. Returns 1 when the step is right. */
static int expect_step(product_fn f, const char *fname, int m, int n, int p,
                       unsigned long long seed)
{
    const size_t na = (size_t)m * n, nb = (size_t)n * p, nc = (size_t)m * p;
    float *Asrc = random_floats(na, -1, 1, seed);
    float *Bsrc = random_floats(nb, -1, 1, seed + 1);
    float *A = kit_guarded_copy(Asrc, na, "A", "m*n");
    float *B = kit_guarded_copy(Bsrc, nb, "B", "n*p");
    float *C = kit_guarded(nc, "C", "m*p");
    for (size_t i = 0; i < nc; i++)
        C[i] = 0.5f; /* not zero, as a caller's buffer may be */
    double *want = kit_alloc(nc * sizeof *want);
    double *added = kit_alloc(nc * sizeof *added);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < p; j++) {
            double s = 0;
            for (int k = 0; k < n; k++)
                s += (double)A[i * n + k] * B[k * p + j];
            want[i * p + j] = s;
            added[i * p + j] = s + 0.5;
        }
    char call[120];
    snprintf(call, sizeof call, "%s(A, B, C, %d, %d, %d)", fname, m, n, p);
    int ok = KIT_EXPECT_STATUS(call, f(A, B, C, m, n, p), KIT_OK);
    /* What the j <= p loop leaves one past the end of C: the last row of
     * A against column p of B, whose last term is B[n*p], the NaN of
     * B's first guard (column p of B is each next row's first float). */
    if (ok && kit_guard_nan_from(C[nc], B) == (long)nb)
        ok = KIT_CHECK(0,
                       "%s wrote one float past the end of C, and what it "
                       "wrote is the last row of A times column p of B, "
                       "which is not in B: its last term is the NaN the "
                       "test keeps in B[%zu], one past the end of B. Likely "
                       "mistake: %s. %s",
                       call, nb, past_row_name, past_row_advice);
    ok = ok && KIT_EXPECT_GUARDS(call);
    if (ok) {
        const struct kit_mistake mistakes[] = {
            {"an accumulator never set to zero",
             "C held 0.5 everywhere when your function was called, and you "
             "added to it. Set C (or each row of it) to 0 before adding.",
             added},
        };
        ok = KIT_EXPECT_TENSOR(call, C, want, m, p, TOL, mistakes, 1);
    }
    free(Asrc), free(Bsrc), free(want), free(added);
    kit_output_free(A), kit_output_free(B), kit_output_free(C);
    return ok;
}

static void product_shapes_test(product_fn f, const char *fname)
{
    size_t n = sizeof product_shapes / sizeof product_shapes[0];
    for (size_t s = 0; s < n; s++)
        if (!expect_step(f, fname, product_shapes[s][0], product_shapes[s][1],
                         product_shapes[s][2], 100 + 10 * s))
            return;
}

KIT_TEST(matmul_ikj_ragged,
         "matmul_ikj: equals chapter 1's product on shapes that fill no "
         "tile (1x1x1 to 50x300x263), C overwritten, nothing past a row")
{
    product_shapes_test(matmul_ikj, "matmul_ikj");
}

KIT_TEST(matmul_blocked_ragged,
         "matmul_blocked: equals the product with n, p just past a cache "
         "block (ragged last block)")
{
    product_shapes_test(matmul_blocked, "matmul_blocked");
}

KIT_TEST(matmul_tiled_ragged,
         "matmul_tiled: equals the product when m, p are not multiples of "
         "the register tile")
{
    product_shapes_test(matmul_tiled, "matmul_tiled");
}

KIT_TEST(matmul_fast_ragged,
         "matmul_fast: equals the product with row blocks shared among "
         "threads")
{
    product_shapes_test(matmul_fast, "matmul_fast");
}

KIT_TEST(matmul_steps_bad_input,
         "matmul_ikj .. matmul_fast: bad sizes and NULL are errors, C left "
         "alone")
{
    const struct {
        product_fn f;
        const char *name;
    } steps[] = {{matmul_ikj, "matmul_ikj"},
                 {matmul_blocked, "matmul_blocked"},
                 {matmul_tiled, "matmul_tiled"},
                 {matmul_fast, "matmul_fast"}};
    /* guarded: when grading, the worker receives their guards, and a
     * write made with a size of 0 is seen there too */
    float *A = kit_guarded_copy((const float[]){1, 2, 3, 4}, 4, "A", "m*n");
    float *B = kit_guarded_copy((const float[]){1, 0, 0, 1}, 4, "B", "n*p");
    float *C = kit_guarded_copy((const float[]){9, 9, 9, 9}, 4, "C", "m*p");
    const int sizes[][3] = {{0, 2, 2}, {2, 0, 2}, {2, 2, 0}, {-1, 2, 2}};
    for (int s = 0; s < 4; s++) {
        char call[96];
        for (int k = 0; k < 4; k++) {
            const int m = sizes[k][0], n = sizes[k][1], p = sizes[k][2];
            snprintf(call, sizeof call, "%s(A, B, C, %d, %d, %d)",
                     steps[s].name, m, n, p);
            if (!KIT_EXPECT_STATUS(call, steps[s].f(A, B, C, m, n, p),
                                   KIT_E_SIZE))
                goto done;
        }
        snprintf(call, sizeof call, "%s(NULL, B, C, 2, 2, 2)", steps[s].name);
        if (!KIT_EXPECT_STATUS(call, steps[s].f(NULL, B, C, 2, 2, 2),
                               KIT_E_NULL))
            goto done;
        snprintf(call, sizeof call, "%s(A, B, NULL, 2, 2, 2)", steps[s].name);
        if (!KIT_EXPECT_STATUS(call, steps[s].f(A, B, NULL, 2, 2, 2),
                               KIT_E_NULL))
            goto done;
        int untouched = 1;
        for (int i = 0; i < 4; i++)
            untouched &= C[i] == 9.0f;
        if (!KIT_CHECK(untouched,
                       "after an error, %s changed C: check the "
                       "input before writing",
                       steps[s].name) ||
            !KIT_EXPECT_GUARDS(call))
            goto done;
    }
done:
    kit_output_free(A), kit_output_free(B), kit_output_free(C);
}

/* ---------------------------------------------------------------------
 * Exercise 7.5: the online softmax
 * ------------------------------------------------------------------- */

static const char sum_not_rescaled[] =
    "the running sum not rescaled when the maximum grows";
static const char sum_not_rescaled_advice[] =
    "The sum so far holds exp(x - m_old) terms. When a larger maximum "
    "m_new arrives, multiply it by exp(m_old - m_new) first, so that "
    "every term is exp(x - m_new).";

/* softmax_online() with the running sum never rescaled. X (rows, cols). */
static void softmax_no_rescale(const double *X, double *Y, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        const double *x = X + r * cols;
        double m = -INFINITY, l = 0;
        for (int c = 0; c < cols; c++) {
            if (x[c] == -INFINITY)
                continue;
            m = fmax(m, x[c]);
            l += exp(x[c] - m);
        }
        for (int c = 0; c < cols; c++)
            Y[r * cols + c] = exp(x[c] - m) / l;
    }
}

/* softmax_online() on X (a copy), against want; name the mistake. */
static int expect_online(const char *call, const float *X, const double *want,
                         int rows, int cols)
{
    const size_t n = (size_t)rows * cols;
    float *Y = kit_guarded_copy(X, n, "X", "rows*cols");
    double *Xd = to_double(X, n), *no_rescale = kit_alloc(n * sizeof(double));
    softmax_no_rescale(Xd, no_rescale, rows, cols);
    const struct kit_mistake mistakes[] = {
        {sum_not_rescaled, sum_not_rescaled_advice, no_rescale}};
    int ok = KIT_EXPECT_STATUS(call, softmax_online(Y, rows, cols), KIT_OK) &&
             KIT_EXPECT_GUARDS(call) &&
             KIT_EXPECT_TENSOR(call, Y, want, rows, cols, TOL, mistakes, 1);
    free(Xd), free(no_rescale);
    kit_output_free(Y);
    return ok;
}

KIT_TEST(softmax_online_equals_rows,
         "softmax_online: equals chapter 1's softmax_rows (and PyTorch) on "
         "rows whose maximum comes late")
{
    /* PyTorch's softmax of chapter 1's (4, 6) matrix */
    float X[24];
    kit_to_float(ch1_sm_X, X, 24);
    if (!expect_online("softmax_online(X, 4, 6) against PyTorch", X, ch1_sm_Y,
                       4, 6))
        return;
    /* random rows, rising so that the maximum keeps growing, against
     * softmax_rows(); drawn from the hidden seed (kit_test.h), so that
     * replaying the published matrix's answer gains nothing */
    const unsigned long long seed = kit_hidden_seed();
    const int shapes[][2] = {{1, 1}, {3, 7}, {5, 40}, {2, 129}};
    for (int s = 0; s < 4; s++) {
        const int rows = shapes[s][0], cols = shapes[s][1];
        const size_t n = (size_t)rows * cols;
        float *R = random_floats(n, -4, 4, (seed ^ 0x6f6e6cULL) + 3 * s);
        for (size_t i = 0; i < n; i++)
            R[i] += 0.1f * (float)(i % (size_t)cols);
        float *Y = kit_alloc(n * sizeof *Y);
        memcpy(Y, R, n * sizeof *Y);
        char call[240];
        snprintf(call, sizeof call, "softmax_rows(X, %d, %d) (chapter 1)", rows,
                 cols);
        int ok = KIT_EXPECT_STATUS(call, softmax_rows(Y, rows, cols), KIT_OK);
        double *want = to_double(Y, n);
        snprintf(call, sizeof call,
                 "softmax_online(X, %d, %d) against softmax_rows, on rows of "
                 "hidden seed %llu (KIT_HIDDEN_SEED=%llu make test CH=7 runs "
                 "it again)",
                 rows, cols, seed, seed);
        ok = ok && expect_online(call, R, want, rows, cols);
        free(R), free(Y), free(want);
        if (!ok)
            return;
    }
}

KIT_TEST(softmax_online_huge_logits,
         "softmax_online: logits of +-1e4 stay finite; -INFINITY, even "
         "first in a row, becomes exactly 0")
{
    /* chapter 1's huge-logit rows */
    const float X[8] = {1e4f,  -1e4f,        0.0f,  1e4f - 1.0f,
                        -1e4f, -1e4f + 2.0f, -1e4f, -1e4f};
    double want[8] = {0};
    want[0] = 1.0 / (1.0 + exp(-1.0));
    want[3] = exp(-1.0) / (1.0 + exp(-1.0));
    want[5] = 1.0 / (1.0 + 3.0 * exp(-2.0));
    want[4] = want[6] = want[7] = exp(-2.0) / (1.0 + 3.0 * exp(-2.0));
    if (!expect_online("softmax_online(X, 2, 4) with logits of +-1e4", X, want,
                       2, 4))
        return;
    const float M[4] = {-INFINITY, 2.0f, -INFINITY, 2.0f};
    const double want_m[4] = {0, 0.5, 0, 0.5};
    expect_online("softmax_online([-inf, 2, -inf, 2], 1, 4): a masked "
                  "entry first in the row must not make exp(-inf - -inf) = "
                  "NaN (while the running max is still -inf, skip the "
                  "rescaling)",
                  M, want_m, 1, 4);
    /* The published rows can be recognised, so once they pass the same
     * checks run on hidden rows of the same kind (kit_test.h: drawn from
     * kit_hidden_seed(), which grading draws anew), judged by
     * kit_softmax_double(): row 0 a huge logit H (a whole number in [5000,
     * 20000]), H less a step of 1/4 .. 4, a huge negative logit and a
     * small one, in a drawn order; row 1 four huge negative logits within
     * 4 of each other (every one exact in float, every huge one beyond
     * expf()); then a row of 4 whose first entry is -INFINITY, as in the
     * published one, with -INFINITY at drawn places after it and entries
     * drawn in [-3, 3) at the others (one at least). */
    if (kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x6f6875ULL);
    float Xh[8], Mh[4];
    const float top = (float)(5000 + rng_int(&r, 15001));
    Xh[0] = top;
    Xh[1] = top - (float)(1 + rng_int(&r, 16)) / 4.0f;
    Xh[2] = -(float)(5000 + rng_int(&r, 15001));
    Xh[3] = (float)(rng_int(&r, 25) - 12) / 4.0f;
    for (int i = 3; i > 0; i--) {
        const int j = rng_int(&r, i + 1);
        const float t = Xh[i];
        Xh[i] = Xh[j], Xh[j] = t;
    }
    const float low = (float)(5000 + rng_int(&r, 15001));
    for (int c = 4; c < 8; c++)
        Xh[c] = -low + (float)rng_int(&r, 17) / 4.0f;
    int n_finite;
    do {
        Mh[0] = -INFINITY;
        n_finite = 0;
        for (int c = 1; c < 4; c++) {
            const int masked = rng_int(&r, 2);
            const float x = rng_range(&r, -3.0f, 3.0f);
            Mh[c] = masked ? -INFINITY : x;
            n_finite += !masked;
        }
    } while (n_finite == 0);
    double *Xd = to_double(Xh, 8), *Md = to_double(Mh, 4);
    double *wh = kit_alloc(8 * sizeof *wh), *mh = kit_alloc(4 * sizeof *mh);
    kit_softmax_double(Xd, wh, 2, 4);
    kit_softmax_double(Md, mh, 1, 4);
    char after[160], call[640];
    snprintf(after, sizeof after,
             ", on hidden numbers (seed %llu; KIT_HIDDEN_SEED=%llu make test "
             "CH=7 runs it again)",
             seed, seed);
    snprintf(call, sizeof call,
             "softmax_online(X, 2, 4) with logits of +-5000 .. +-20000%s",
             after);
    if (expect_online(call, Xh, wh, 2, 4)) {
        char row[160];
        size_t at = 0;
        for (int c = 0; c < 4; c++)
            at += (size_t)snprintf(row + at, sizeof row - at, "%s%g",
                                   c ? ", " : "[", (double)Mh[c]);
        snprintf(call, sizeof call,
                 "softmax_online(%s], 1, 4): a masked entry first in the row "
                 "must not make exp(-inf - -inf) = NaN (while the running max "
                 "is still -inf, skip the rescaling)%s",
                 row, after);
        expect_online(call, Mh, mh, 1, 4);
    }
    free(Xd), free(Md), free(wh), free(mh);
}

KIT_TEST(softmax_online_bad_input,
         "softmax_online: bad sizes and NULL are errors")
{
    float X[2] = {1, 2};
    KIT_EXPECT_STATUS("softmax_online(X, 0, 2)", softmax_online(X, 0, 2),
                      KIT_E_SIZE);
    KIT_EXPECT_STATUS("softmax_online(X, 2, -1)", softmax_online(X, 2, -1),
                      KIT_E_SIZE);
    KIT_EXPECT_STATUS("softmax_online(NULL, 1, 2)", softmax_online(NULL, 1, 2),
                      KIT_E_NULL);
    KIT_CHECK(X[0] == 1 && X[1] == 2,
              "after an error, X must be left as it was");
}

/* ---------------------------------------------------------------------
 * Exercise 7.6: flash attention, and its classic mistakes in double
 * ------------------------------------------------------------------- */

enum flash_variant {
    F_RIGHT,
    F_ACC_NOT_RESCALED, /* acc not multiplied by exp(m_old - m_new)    */
    F_SUM_NOT_RESCALED, /* l not multiplied by exp(m_old - m_new)      */
    F_DIVIDE_INSIDE,    /* p_j / l inside the loop, no final division  */
    F_SKIP_DIAGONAL,    /* causal: stops at the tile on the diagonal   */
    F_RAGGED_SHORT,     /* the last key tile one key short            */
    F_MAX_FROM_ZERO,    /* m_i started at 0, not -inf (fast_expf's    */
                        /* clamp at -87 then flattens the row)        */
    F_NO_SCALE,         /* scores not scaled by 1/sqrt(d)             */
    F_SCALE_D,          /* scores scaled by 1/d                       */
    F_NOT_NORMALISED,   /* acc never divided by l                     */
    F_SUM_OVERWRITTEN,  /* l = the tile's sum, not l * alpha + sum    */
    N_FLASH
};

/* The names are what tests/mutants/ch7.tsv looks for in the messages. */
static const char *const flash_name[N_FLASH] = {
    "",
    "the accumulator not rescaled when the maximum grows",
    "the running sum not rescaled when the maximum grows",
    "dividing inside the loop instead of once at the end",
    "the diagonal tile skipped",
    "the ragged last tile off by one (its last key left out)",
    "the running maximum started at 0 instead of -infinity",
    "scores not scaled by 1/sqrt(d)",
    "scores scaled by 1/d instead of 1/sqrt(d)",
    "the output never divided by the running sum l",
    "the running sum overwritten by each tile's sum (l = sum)",
};
static const char *const flash_advice[N_FLASH] = {
    "",
    "acc_i holds sum_j exp(s_j - m_old) v_j. When the maximum grows to "
    "m_new, multiply acc_i by alpha = exp(m_old - m_new) before adding "
    "the new tile, as you do for l_i.",
    "l_i holds sum_j exp(s_j - m_old). When the maximum grows, multiply "
    "it by alpha = exp(m_old - m_new) before adding the tile's sum.",
    "Inside the loop the running sum is not yet the whole sum: keep "
    "acc_i = sum_j p_j v_j unnormalised, and divide by l_i once, after "
    "the last key tile.",
    "With the causal flag, a key tile is hidden only when it starts AFTER "
    "the tile's last query: skip it when j0 > i0 + nq - 1. The tile on "
    "the diagonal holds each query's own key and those before it.",
    "The last key tile holds T - j0 keys when that is fewer than Bk: "
    "nk = min(Bk, T - j0), not T - j0 - 1.",
    "Every score of this row is below -87, so with m_i = 0 every "
    "exp(s - m_i) is below fast_expf()'s clamp at -87: all come out "
    "equal, and the row's weights are uniform. Start m_i at -INFINITY, so "
    "that the first tile's maximum replaces it.",
    "Scale every score by 1/sqrtf((float)d): once per query, as it goes "
    "into Qt, is enough.",
    "The scale is 1/sqrt(d), not 1/d: 1.0f / sqrtf((float)d).",
    "acc holds sum_j exp(s_j - m) v_j, not yet normalised: after the last "
    "key tile, divide each query's acc by its l.",
    "l must hold the sum over every key seen so far: l = l * alpha + sum, "
    "the old sum rescaled to the new maximum plus this tile's.",
};

/* The tiled algorithm in double, as variant v computes it.
 * Q, K, V, out (T, d). */
static void flash_model(enum flash_variant v, const double *Q, const double *K,
                        const double *V, double *out, int T, int d, int Bq,
                        int Bk, int causal)
{
    const int bq = imin(Bq, T), bk = imin(Bk, T);
    const double scale = v == F_NO_SCALE  ? 1.0
                         : v == F_SCALE_D ? 1.0 / d
                                          : 1.0 / sqrt((double)d);
    double *acc = kit_alloc(sizeof(double) * (size_t)d);
    double *p = kit_alloc(sizeof(double) * (size_t)bk);
    for (int t = 0; t < T; t++) {
        const int i0 = t / bq * bq, nq = imin(bq, T - i0);
        double m = v == F_MAX_FROM_ZERO ? 0 : -INFINITY, l = 0;
        for (int c = 0; c < d; c++)
            acc[c] = 0;
        for (int j0 = 0; j0 < T; j0 += bk) {
            if (causal && (v == F_SKIP_DIAGONAL ? j0 >= i0 : j0 > i0 + nq - 1))
                break;
            const int nk = imin(bk, v == F_RAGGED_SHORT ? T - j0 - 1 : T - j0);
            const int end = causal ? imin(nk, t - j0 + 1) : nk;
            if (end <= 0)
                continue;
            double m_new = m, sum = 0;
            for (int j = 0; j < end; j++) {
                double s = 0;
                for (int c = 0; c < d; c++)
                    s += Q[t * d + c] * K[(j0 + j) * d + c];
                p[j] = s * scale;
                m_new = fmax(m_new, p[j]);
            }
            for (int j = 0; j < end; j++) /* fast_expf() clamps at -87 */
                sum += p[j] = exp(v == F_MAX_FROM_ZERO ? fmax(p[j] - m_new, -87)
                                                       : p[j] - m_new);
            const double alpha = exp(m - m_new);
            l = v == F_SUM_NOT_RESCALED  ? l + sum
                : v == F_SUM_OVERWRITTEN ? sum
                                         : l * alpha + sum;
            for (int c = 0; c < d; c++)
                acc[c] *= v == F_ACC_NOT_RESCALED ? 1.0 : alpha;
            for (int j = 0; j < end; j++) {
                const double pj = v == F_DIVIDE_INSIDE ? p[j] / l : p[j];
                for (int c = 0; c < d; c++)
                    acc[c] += pj * V[(j0 + j) * d + c];
            }
            m = m_new;
        }
        for (int c = 0; c < d; c++)
            out[t * d + c] = v == F_DIVIDE_INSIDE || v == F_NOT_NORMALISED
                                 ? acc[c]
                                 : acc[c] / l;
    }
    free(acc), free(p);
}

/* Every variant's output, and the mistake table; variants that agree
 * with the right answer on these inputs are left out (they would be a
 * false accusation). */
struct flash_mistakes {
    double *out[N_FLASH];
    struct kit_mistake m[N_FLASH - 1];
};

static void flash_mistakes_build(struct flash_mistakes *M, const float *Qf,
                                 const float *Kf, const float *Vf, int T, int d,
                                 int Bq, int Bk, int causal)
{
    const size_t n = (size_t)T * d;
    double *Q = to_double(Qf, n), *K = to_double(Kf, n), *V = to_double(Vf, n);
    for (int v = 0; v < N_FLASH; v++) {
        M->out[v] = kit_alloc(n * sizeof(double));
        flash_model((enum flash_variant)v, Q, K, V, M->out[v], T, d, Bq, Bk,
                    causal);
    }
    for (int v = 1; v < N_FLASH; v++) {
        int same = 1;
        for (size_t i = 0; i < n && same; i++)
            same = fabs(M->out[v][i] - M->out[F_RIGHT][i]) <= TOL;
        M->m[v - 1] = (struct kit_mistake){flash_name[v], flash_advice[v],
                                           same ? NULL : M->out[v]};
    }
    free(Q), free(K), free(V);
}

static void flash_mistakes_free(struct flash_mistakes *M)
{
    for (int v = 0; v < N_FLASH; v++)
        free(M->out[v]);
}

/* One flash_attention() call on kit_guarded() copies of Q, K and V,
 * with guarded out and exactly flash_scratch_size() floats of guarded
 * scratch, against want (T, d); mistakes named, and a read or a write
 * outside any of them. Returns 1 when right. */
static int expect_flash(const float *Qsrc, const float *Ksrc, const float *Vsrc,
                        const double *want, int T, int d, int Bq, int Bk,
                        int causal, const char *against)
{
    const size_t n = (size_t)T * d, ns = flash_scratch_size(T, d, Bq, Bk);
    float *Q = kit_guarded_copy(Qsrc, n, "Q", "T*d");
    float *K = kit_guarded_copy(Ksrc, n, "K", "T*d");
    float *V = kit_guarded_copy(Vsrc, n, "V", "T*d");
    float *out = kit_guarded(n, "out", "T*d");
    float *scratch =
        kit_guarded(ns, "scratch", "flash_scratch_size(T, d, Bq, Bk)");
    struct flash_mistakes M;
    flash_mistakes_build(&M, Q, K, V, T, d, Bq, Bk, causal);
    char call[200];
    snprintf(call, sizeof call,
             "flash_attention(T %d, d %d, Bq %d, Bk %d, causal %d)", T, d, Bq,
             Bk, causal);
    int ok =
        KIT_EXPECT_STATUS(
            call, flash_attention(Q, K, V, out, T, d, Bq, Bk, causal, scratch),
            KIT_OK) &&
        KIT_EXPECT_GUARDS(call);
    if (ok) {
        char what[300];
        snprintf(what, sizeof what, "%s out, against %s", call, against);
        ok = KIT_EXPECT_TENSOR(what, out, want, T, d, TOL, M.m, N_FLASH - 1);
    }
    flash_mistakes_free(&M);
    kit_output_free(Q), kit_output_free(K), kit_output_free(V);
    kit_output_free(out), kit_output_free(scratch);
    return ok;
}

/* A prime T in tiles that do not divide it; Bq != Bk; d not a multiple
 * of 8; one case where T is a multiple of the tiles; one where the last
 * tile of 64 holds 3 keys; T = 1 last, where several mistakes give the
 * same NaN and the message could not tell them apart. */
static const int flash_shapes[][4] = {/* T, d, Bq, Bk */
                                      {13, 5, 4, 4},   {13, 5, 3, 5},
                                      {31, 13, 8, 6},  {32, 16, 16, 8},
                                      {67, 8, 64, 64}, {1, 4, 4, 4}};

/* flash_attention() against chapter 1's attention() or chapter 2's
 * causal_attention() on every shape. */
static void flash_against_chapters(int causal)
{
    size_t n_shapes = sizeof flash_shapes / sizeof flash_shapes[0];
    for (size_t s = 0; s < n_shapes; s++) {
        const int T = flash_shapes[s][0], d = flash_shapes[s][1];
        const int Bq = flash_shapes[s][2], Bk = flash_shapes[s][3];
        const size_t n = (size_t)T * d;
        float *Q = random_floats(n, -2, 2, 900 + 3 * s);
        float *K = random_floats(n, -2, 2, 901 + 3 * s);
        float *V = random_floats(n, -1, 1, 902 + 3 * s);
        float *ref = kit_alloc(n * sizeof *ref);
        float *w = kit_alloc((size_t)T * T * sizeof *w);
        const char *chapter = causal ? "causal_attention() (chapter 2)"
                                     : "attention() (chapter 1)";
        int ok = KIT_EXPECT_STATUS(
            chapter,
            (causal ? causal_attention : attention)(Q, K, V, ref, w, T, d, d),
            KIT_OK);
        double *want = to_double(ref, n);
        ok = ok && expect_flash(Q, K, V, want, T, d, Bq, Bk, causal, chapter);
        free(Q), free(K), free(V), free(ref), free(w), free(want);
        if (!ok)
            return;
    }
    /* Hidden cases (kit_test.h): shapes and tiles drawn from the seed,
     * judged by flash_model(F_RIGHT, ...) in double. */
    struct rng r;
    const unsigned long long seed = kit_hidden_seed();
    rng_seed(&r, seed + 7 * (unsigned long long)causal);
    for (int h = 0; h < KIT_HIDDEN_CASES; h++) {
        /* At least 2 positions and 2 columns, as in chapter 1. */
        const int T = 2 + rng_int(&r, 39), d = 2 + rng_int(&r, 15);
        const int Bq = 1 + rng_int(&r, 16), Bk = 1 + rng_int(&r, 16);
        const size_t n = (size_t)T * d;
        const unsigned long long s0 = (unsigned long long)rng_int(&r, 1 << 30);
        float *Q = random_floats(n, -2, 2, s0);
        float *K = random_floats(n, -2, 2, s0 + 1);
        float *V = random_floats(n, -1, 1, s0 + 2);
        double *Qd = to_double(Q, n), *Kd = to_double(K, n);
        double *Vd = to_double(V, n), *want = kit_alloc(n * sizeof *want);
        flash_model(F_RIGHT, Qd, Kd, Vd, want, T, d, T, T, causal);
        char against[200];
        snprintf(against, sizeof against,
                 "softmax in double, hidden case %d of seed %llu (the "
                 "published cases pass; KIT_HIDDEN_SEED=%llu make test CH=7 "
                 "runs it again)",
                 h + 1, seed, seed);
        int ok = expect_flash(Q, K, V, want, T, d, Bq, Bk, causal, against);
        free(Q), free(K), free(V), free(Qd), free(Kd), free(Vd), free(want);
        if (!ok)
            return;
    }
}

KIT_TEST(flash_equals_attention,
         "flash_attention: equals chapter 1's attention() for T = 1, prime "
         "T, tiles that do not divide T, d not a multiple of 8")
{
    flash_against_chapters(0);
}

KIT_TEST(flash_equals_causal_attention,
         "flash_attention, causal: equals chapter 2's causal_attention() on "
         "the same shapes")
{
    flash_against_chapters(1);
}

/* flash_attention() in tiles of 4, unmasked then causal, against the
 * double model with one tile (exact where the scores are). */
static void flash_both_masks(const float *Q, const float *K, const float *V,
                             int T, int d)
{
    const size_t n = (size_t)T * d;
    double *Qd = to_double(Q, n), *Kd = to_double(K, n), *Vd = to_double(V, n);
    double *want = kit_alloc(n * sizeof *want);
    for (int causal = 0; causal <= 1; causal++) {
        flash_model(F_RIGHT, Qd, Kd, Vd, want, T, d, T, T, causal);
        if (!expect_flash(Q, K, V, want, T, d, 4, 4, causal,
                          "softmax(Q K^T / 2) V in double"))
            break;
    }
    free(Qd), free(Kd), free(Vd), free(want);
}

KIT_TEST(flash_huge_logits,
         "flash_attention: scores near 1e4, the largest in a later tile, "
         "stay finite and right")
{
    enum { T = 13, d = 4 };
    /* Only column 0 is used, and every score q . k / 2 is a float
     * computed exactly: q = 2c, k = (1024 + r) / 1024, so the answer in
     * double is exact, and exp(score) alone would overflow. */
    const float c[4] = {10240.0f, -10000.0f, 5000.0f, 10000.0f};
    const int r[T] = {0, -8, 3, 1, 5, -2, 7, 2, 8, -5, 6, 4, -1};
    float Q[T * d] = {0}, K[T * d] = {0}, V[T * d];
    for (int t = 0; t < T; t++) {
        Q[t * d] = 2.0f * c[t % 4];
        K[t * d] = (float)(1024 + r[t]) / 1024.0f;
        for (int k = 0; k < d; k++)
            V[t * d + k] = (float)(t + 1) * (k % 2 ? -1.0f : 0.5f);
    }
    flash_both_masks(Q, K, V, T, d);
}

KIT_TEST(flash_very_negative_scores,
         "flash_attention: a row whose scores are all far below 0 (-200 "
         "and less) keeps its shape")
{
    enum { T = 11, d = 4 };
    /* Only column 0 is used: every score q . k / 2 = -200 - 12.5 j is a
     * float computed exactly, so key 0 takes almost all the weight. */
    float Q[T * d] = {0}, K[T * d] = {0}, V[T * d];
    for (int t = 0; t < T; t++) {
        Q[t * d] = -400.0f;
        K[t * d] = 1.0f + (float)t / 16.0f;
        for (int k = 0; k < d; k++)
            V[t * d + k] = (float)(t + 1) * (k % 2 ? -0.25f : 0.5f);
    }
    flash_both_masks(Q, K, V, T, d);
}

KIT_TEST(flash_hidden_key_far_above,
         "flash_attention, causal: a hidden key whose score is 200 above "
         "every visible one, in tiles that do not line up, changes nothing")
{
    enum { T = 8, d = 4, Bq = 3, Bk = 5 };
    /* Query tile 3-5 meets key tile 5-7: key 5, the key tile's first,
     * is hidden from queries 3 and 4, and its score q . k / 2 = 200 is
     * far above every visible one (|score| <= 1.5). The softmax does not
     * depend on the maximum subtracted, but a maximum taken over the
     * hidden key too leaves every visible exponential below
     * fast_expf()'s clamp at -87, where their differences are lost. */
    float *Q = random_floats((size_t)T * d, -0.5f, 0.5f, 980);
    float *K = random_floats((size_t)T * d, -0.5f, 0.5f, 981);
    float *V = random_floats((size_t)T * d, -1.0f, 1.0f, 982);
    for (int t = 0; t < T; t++)
        Q[t * d] = 1.0f;
    K[5 * d] = 400.0f;
    const size_t n = (size_t)T * d;
    double *Qd = to_double(Q, n), *Kd = to_double(K, n), *Vd = to_double(V, n);
    double *want = kit_alloc(n * sizeof *want);
    flash_model(F_RIGHT, Qd, Kd, Vd, want, T, d, T, T, 1);
    expect_flash(Q, K, V, want, T, d, Bq, Bk, 1,
                 "softmax(Q K^T / 2) V in double, key 5 hidden from queries "
                 "3 and 4");
    free(Q), free(K), free(V), free(Qd), free(Kd), free(Vd), free(want);
}

KIT_TEST(flash_scratch_guarded,
         "flash_attention: uses exactly flash_scratch_size() floats of "
         "scratch, which does not grow with T")
{
    const size_t small = flash_scratch_size(1000, 16, 32, 32);
    const size_t large = flash_scratch_size(100000, 16, 32, 32);
    if (!KIT_CHECK(small == large && small > 0,
                   "flash_scratch_size(T, 16, 32, 32) is %zu floats at T = "
                   "1000 and %zu at T = 100000: it must not grow with T",
                   small, large))
        return;
    /* tiles larger than T (clamped), and tiles that do not divide T */
    const int shapes[][4] = {{3, 5, 8, 8}, {10, 3, 4, 3}, {9, 9, 2, 7}};
    for (int s = 0; s < 3; s++)
        for (int causal = 0; causal <= 1; causal++) {
            const int T = shapes[s][0], d = shapes[s][1];
            const int Bq = shapes[s][2], Bk = shapes[s][3];
            const size_t n = (size_t)T * d;
            float *Q = random_floats(n, -1, 1, 40 + s);
            float *K = random_floats(n, -1, 1, 50 + s);
            float *V = random_floats(n, -1, 1, 60 + s);
            double *Qd = to_double(Q, n), *Kd = to_double(K, n);
            double *Vd = to_double(V, n);
            double *want = kit_alloc(n * sizeof *want);
            flash_model(F_RIGHT, Qd, Kd, Vd, want, T, d, T, T, causal);
            int ok = expect_flash(Q, K, V, want, T, d, Bq, Bk, causal,
                                  "softmax(Q K^T / sqrt(d)) V in double");
            free(Q), free(K), free(V), free(Qd), free(Kd), free(Vd);
            free(want);
            if (!ok)
                return;
        }
}

KIT_TEST(flash_bad_input,
         "flash_attention: bad sizes and NULL are errors, out left alone")
{
    /* guarded, so that a write made with a bad size is seen, in the
     * grader's worker too */
    float *Q = kit_guarded_copy((const float[]){1, 2, 3, 4}, 4, "Q", "T*d");
    float *K = kit_guarded_copy((const float[]){1, 0, 0, 1}, 4, "K", "T*d");
    float *V = kit_guarded_copy((const float[]){1, 1, 1, 1}, 4, "V", "T*d");
    float *out = kit_guarded(4, "out", "T*d");
    float *scratch = kit_guarded(64, "scratch", NULL);
    const struct {
        int T, d, Bq, Bk, want;
        const char *what;
    } bad[] = {
        {0, 2, 2, 2, KIT_E_SIZE, "T 0"},   {2, 0, 2, 2, KIT_E_SIZE, "d 0"},
        {2, 2, 0, 2, KIT_E_SIZE, "Bq 0"},  {2, 2, 2, -1, KIT_E_SIZE, "Bk -1"},
        {-2, 2, 2, 2, KIT_E_SIZE, "T -2"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char call[96];
        snprintf(call, sizeof call, "flash_attention(Q, K, V, out, %s)",
                 bad[k].what);
        if (!KIT_EXPECT_STATUS(call,
                               flash_attention(Q, K, V, out, bad[k].T, bad[k].d,
                                               bad[k].Bq, bad[k].Bk, 0,
                                               scratch),
                               bad[k].want))
            goto done;
    }
    KIT_EXPECT_STATUS("flash_attention(NULL, K, V, ...)",
                      flash_attention(NULL, K, V, out, 2, 2, 2, 2, 0, scratch),
                      KIT_E_NULL);
    KIT_EXPECT_STATUS("flash_attention(Q, K, V, out, ..., scratch NULL)",
                      flash_attention(Q, K, V, out, 2, 2, 2, 2, 1, NULL),
                      KIT_E_NULL);
    KIT_EXPECT_STATUS("flash_attention(Q, K, V, NULL, ...)",
                      flash_attention(Q, K, V, NULL, 2, 2, 2, 2, 0, scratch),
                      KIT_E_NULL);
    int untouched = 1;
    for (int i = 0; i < 4; i++)
        untouched &= isnan(out[i]) != 0;
    if (KIT_CHECK(untouched, "after an error, flash_attention changed out: "
                             "check the input before writing"))
        KIT_EXPECT_GUARDS("flash_attention(...) with a bad size or a NULL");
done:
    kit_output_free(Q), kit_output_free(K), kit_output_free(V);
    kit_output_free(out), kit_output_free(scratch);
}

/* ---------------------------------------------------------------------
 * Exercise 7.7: the multi-head layer
 * ------------------------------------------------------------------- */

struct layer7 { /* a layer in float, its buffers kit_guarded() */
    struct mha_config cfg;
    struct mha_weights w;
    float *X; /* (T, d_model) */
    int T;
};

/* A layer of T tokens whose input and weights are guarded copies of X
 * and W[0..3] (W_q, W_k, W_v, W_o), so that a read or a write outside
 * any of them is named. */
static void layer7_guarded(struct layer7 *L, int T, int d_model, int h,
                           int causal, const float *X, const float *const W[4])
{
    const size_t nw = (size_t)d_model * d_model;
    L->cfg = (struct mha_config){d_model, h, causal};
    L->T = T;
    L->X = kit_guarded_copy(X, (size_t)T * d_model, "X", "T*d_model");
    L->w.W_q = kit_guarded_copy(W[0], nw, "w.W_q", "d_model*d_model");
    L->w.W_k = kit_guarded_copy(W[1], nw, "w.W_k", "d_model*d_model");
    L->w.W_v = kit_guarded_copy(W[2], nw, "w.W_v", "d_model*d_model");
    L->w.W_o = kit_guarded_copy(W[3], nw, "w.W_o", "d_model*d_model");
}

static void layer7_random(struct layer7 *L, int T, int d_model, int h,
                          int causal, unsigned long long seed)
{
    const size_t nw = (size_t)d_model * d_model;
    float *X = random_floats((size_t)T * d_model, -1, 1, seed);
    float *W[4];
    for (int k = 0; k < 4; k++)
        W[k] = random_floats(nw, -0.3f, 0.3f, seed + 1 + (unsigned)k);
    layer7_guarded(L, T, d_model, h, causal, X, (const float *const *)W);
    free(X);
    for (int k = 0; k < 4; k++)
        free(W[k]);
}

static void layer7_free(struct layer7 *L)
{
    kit_output_free(L->X), kit_output_free(L->w.W_q);
    kit_output_free(L->w.W_k), kit_output_free(L->w.W_v);
    kit_output_free(L->w.W_o);
}

/* mha_forward_flash() on L, guarded, against want (T, d_model). */
static int expect_mha_flash(const struct layer7 *L, const double *want,
                            const char *label, const char *against)
{
    const size_t n = (size_t)L->T * L->cfg.d_model;
    float *out = kit_guarded(n, "out", "T*d_model");
    char call[320];
    snprintf(call, sizeof call,
             "mha_forward_flash(%s: T %d, d_model %d, %d heads, causal %d)",
             label, L->T, L->cfg.d_model, L->cfg.n_heads, L->cfg.causal);
    int ok =
        KIT_EXPECT_STATUS(
            call, mha_forward_flash(&L->cfg, &L->w, L->X, out, L->T), KIT_OK) &&
        KIT_EXPECT_GUARDS(call);
    if (ok) {
        char what[420];
        snprintf(what, sizeof what, "%s out, against %s", call, against);
        ok = KIT_EXPECT_TENSOR(what, out, want, L->T, L->cfg.d_model, TOL, NULL,
                               0);
    }
    kit_output_free(out);
    return ok;
}

/* The layer in double, as mha.h defines it: Q = X W_q, K, V likewise;
 * head i takes column block i of each and goes through
 * flash_model(F_RIGHT, ...) with one tile, which is plain softmax
 * attention; out = concat(heads) W_o. W[0..3] = W_q, W_k, W_v, W_o, each
 * (d_model, d_model); X, out (T, d_model). */
static void mha_model(const double *X, const double *const W[4], double *out,
                      int T, int d_model, int h, int causal)
{
    const int dh = d_model / h;
    const size_t nx = (size_t)T * d_model, nh = (size_t)T * dh;
    double *P = kit_alloc(3 * nx * sizeof *P); /* Q, K, V */
    double *cat = kit_alloc(nx * sizeof *cat);
    double *H = kit_alloc(4 * nh * sizeof *H); /* one head's Q, K, V, out */
    for (int m = 0; m < 3; m++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < d_model; c++) {
                double s = 0;
                for (int k = 0; k < d_model; k++)
                    s += X[t * d_model + k] * W[m][k * d_model + c];
                P[m * nx + (size_t)t * d_model + c] = s;
            }
    for (int i = 0; i < h; i++) {
        /* flash_model() reads (T, d) rows back to back: gather the block */
        for (int m = 0; m < 3; m++)
            for (int t = 0; t < T; t++)
                for (int c = 0; c < dh; c++)
                    H[m * nh + (size_t)t * dh + c] =
                        P[m * nx + (size_t)t * d_model + i * dh + c];
        flash_model(F_RIGHT, H, H + nh, H + 2 * nh, H + 3 * nh, T, dh, T, T,
                    causal);
        for (int t = 0; t < T; t++)
            for (int c = 0; c < dh; c++)
                cat[t * d_model + i * dh + c] = H[3 * nh + (size_t)t * dh + c];
    }
    for (int t = 0; t < T; t++)
        for (int c = 0; c < d_model; c++) {
            double s = 0;
            for (int k = 0; k < d_model; k++)
                s += cat[t * d_model + k] * W[3][k * d_model + c];
            out[t * d_model + c] = s;
        }
    free(P), free(cat), free(H);
}

/* The golden cases, then their hidden twin (kit_test.h): the shapes of
 * golden cases on numbers drawn from the seed, judged by mha_model(), so
 * that code which recognises a published X and returns its published
 * out gains nothing. */
KIT_TEST(mha_flash_golden,
         "mha_forward_flash: equals PyTorch's MultiheadAttention, causal "
         "and not (chapter 3's golden cases)")
{
    size_t n_cases = sizeof ch3_golden_cases / sizeof ch3_golden_cases[0];
    for (int causal = 0; causal <= 1; causal++)
        for (size_t k = 0; k < n_cases; k++) {
            const struct ch3_golden_case *g = &ch3_golden_cases[k];
            const size_t nw = (size_t)g->d_model * g->d_model;
            const size_t nx = (size_t)g->T * g->d_model;
            const double *const src[5] = {g->X, g->W_q, g->W_k, g->W_v, g->W_o};
            float *f[5];
            for (int b = 0; b < 5; b++) {
                f[b] = kit_alloc((b ? nw : nx) * sizeof(float));
                kit_to_float(src[b], f[b], b ? nw : nx);
            }
            struct layer7 L;
            layer7_guarded(&L, g->T, g->d_model, g->n_heads, causal, f[0],
                           (const float *const *)f + 1);
            for (int b = 0; b < 5; b++)
                free(f[b]);
            int ok = expect_mha_flash(&L, g->out[causal], g->name, "PyTorch");
            layer7_free(&L);
            if (!ok)
                return;
        }
    struct rng r;
    const unsigned long long seed = kit_hidden_seed();
    rng_seed(&r, seed ^ 0x6d6861ULL);
    /* Consecutive golden shapes from a drawn start, so that the hidden
     * cases never repeat a shape; the mask alternates, so both are met. */
    const int k0 = rng_int(&r, (int)n_cases);
    for (int c = 0; c < KIT_HIDDEN_CASES; c++) {
        const struct ch3_golden_case *g =
            &ch3_golden_cases[(size_t)(k0 + c) % n_cases];
        const int T = g->T, D = g->d_model, causal = c % 2;
        const size_t nx = (size_t)T * D, nw = (size_t)D * D;
        const unsigned long long s0 = (unsigned long long)rng_int(&r, 1 << 30);
        /* the published cases' ranges: X in [-1, 1], weights in [-0.8,
         * 0.8] */
        float *f[5];
        double *dbl[5];
        for (int b = 0; b < 5; b++) {
            const float lim = b ? 0.8f : 1.0f;
            f[b] = random_floats(b ? nw : nx, -lim, lim, s0 + (unsigned)b);
            dbl[b] = to_double(f[b], b ? nw : nx);
        }
        double *want = kit_alloc(nx * sizeof *want);
        mha_model(dbl[0], (const double *const *)dbl + 1, want, T, D,
                  g->n_heads, causal);
        struct layer7 L;
        layer7_guarded(&L, T, D, g->n_heads, causal, f[0],
                       (const float *const *)f + 1);
        char label[200];
        snprintf(label, sizeof label,
                 "\"%s\"'s shape on hidden numbers (seed %llu; "
                 "KIT_HIDDEN_SEED=%llu make test CH=7 runs it again)",
                 g->name, seed, seed);
        int ok =
            expect_mha_flash(&L, want, label, "multi-head attention in double");
        layer7_free(&L);
        for (int b = 0; b < 5; b++)
            free(f[b]), free(dbl[b]);
        free(want);
        if (!ok)
            return;
    }
}

KIT_TEST(mha_flash_equals_mha_forward,
         "mha_forward_flash: equals chapter 3's mha_forward() at T = 1, "
         "T = 67 (past a 64-query tile) and d_head = 5")
{
    const int shapes[][3] = {{1, 8, 2}, {67, 40, 8}, {29, 24, 3}};
    for (int s = 0; s < 3; s++)
        for (int causal = 0; causal <= 1; causal++) {
            const int T = shapes[s][0], D = shapes[s][1], H = shapes[s][2];
            struct layer7 L;
            layer7_random(&L, T, D, H, causal, 1000 + 10 * s + causal);
            const size_t n = (size_t)T * D;
            float *ref = kit_alloc(n * sizeof *ref);
            float *att = kit_alloc((size_t)H * T * T * sizeof *att);
            int ok = KIT_EXPECT_STATUS(
                "mha_forward() (chapter 3)",
                mha_forward(&L.cfg, &L.w, L.X, ref, att, T), KIT_OK);
            double *want = to_double(ref, n);
            ok = ok && expect_mha_flash(&L, want, "random layer",
                                        "mha_forward() (chapter 3)");
            free(ref), free(att), free(want);
            layer7_free(&L);
            if (!ok)
                return;
        }
}

KIT_TEST(mha_flash_errors,
         "mha_forward_flash: impossible configs and NULLs get the "
         "documented error, out left alone")
{
    struct layer7 L;
    layer7_random(&L, 3, 6, 2, 0, 77);
    float *out = kit_guarded(18, "out", "T*d_model");
    const struct mha_config c4 = {6, 4, 0}, c0 = {6, 0, 0}, d0 = {0, 2, 0};
    struct mha_weights holes = L.w;
    holes.W_v = NULL;
    const struct {
        const struct mha_config *cfg;
        const struct mha_weights *w;
        const float *X;
        int out, T, want;
        const char *what;
    } bad[] = {
        {&c4, &L.w, L.X, 1, 3, KIT_E_HEADS,
         "cfg {6, 4 heads}: 4 does not "
         "divide 6"},
        {&c0, &L.w, L.X, 1, 3, KIT_E_SIZE, "cfg {6, 0 heads}"},
        {&d0, &L.w, L.X, 1, 3, KIT_E_SIZE, "cfg {d_model 0, 2 heads}"},
        {&L.cfg, &L.w, L.X, 1, 0, KIT_E_SIZE, "T 0"},
        {&L.cfg, &L.w, L.X, 1, -1, KIT_E_SIZE, "T -1"},
        {NULL, &L.w, L.X, 1, 3, KIT_E_NULL, "cfg NULL"},
        {&L.cfg, NULL, L.X, 1, 3, KIT_E_NULL, "w NULL"},
        {&L.cfg, &L.w, NULL, 1, 3, KIT_E_NULL, "X NULL"},
        {&L.cfg, &L.w, L.X, 0, 3, KIT_E_NULL, "out NULL"},
        {&L.cfg, &holes, L.X, 1, 3, KIT_E_NULL, "w with W_v NULL"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char call[120];
        snprintf(call, sizeof call, "mha_forward_flash(%s)", bad[k].what);
        kit_poison(out, 18);
        if (!KIT_EXPECT_STATUS(call,
                               mha_forward_flash(bad[k].cfg, bad[k].w, bad[k].X,
                                                 bad[k].out ? out : NULL,
                                                 bad[k].T),
                               bad[k].want))
            break;
        int untouched = 1;
        for (int i = 0; i < 18; i++)
            untouched &= isnan(out[i]) != 0;
        if (!KIT_CHECK(untouched,
                       "%s returned the error but wrote into out; check "
                       "every argument before the first write",
                       call) ||
            !KIT_EXPECT_GUARDS(call))
            break;
    }
    kit_output_free(out);
    layer7_free(&L);
}

/* ---------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------- */

KIT_TEST(fast_threads_identical,
         "matmul_fast and mha_forward_flash: bit for bit the same result on "
         "1 thread and on 2")
{
#ifdef _OPENMP
    enum { M = 150, N = 70, P = 90 };
    float *a = random_floats(M * N, -1, 1, 5),
          *b = random_floats(N * P, -1, 1, 6);
    /* guarded, as every buffer below: a read or a write outside is named */
    float *A = kit_guarded_copy(a, M * N, "A", "m*n");
    float *B = kit_guarded_copy(b, N * P, "B", "n*p");
    float *C1 = kit_guarded(M * P, "C", "m*p"),
          *C2 = kit_guarded(M * P, "C", "m*p");
    free(a), free(b);
    omp_set_num_threads(1);
    int ok = KIT_EXPECT_STATUS("matmul_fast(A, B, C, 150, 70, 90) on 1 thread",
                               matmul_fast(A, B, C1, M, N, P), KIT_OK) &&
             KIT_EXPECT_GUARDS("matmul_fast(A, B, C, 150, 70, 90) on 1 "
                               "thread");
    omp_set_num_threads(2);
    ok = ok &&
         KIT_EXPECT_STATUS("matmul_fast(A, B, C, 150, 70, 90) on 2 "
                           "threads",
                           matmul_fast(A, B, C2, M, N, P), KIT_OK) &&
         KIT_EXPECT_GUARDS("matmul_fast(A, B, C, 150, 70, 90) on 2 threads");
    ok = ok && KIT_CHECK(memcmp(C1, C2, sizeof(float) * M * P) == 0,
                         "matmul_fast gives different bits on 1 thread and "
                         "on 2: a row of C must be one thread's work from "
                         "start to end (share whole rows, never the sum "
                         "over k), and nothing may depend on which thread "
                         "runs it");
    kit_output_free(A), kit_output_free(B);
    kit_output_free(C1), kit_output_free(C2);
    for (int causal = 0; ok && causal <= 1; causal++) {
        struct layer7 L;
        layer7_random(&L, 70, 32, 4, causal, 88 + causal);
        float *o1 = kit_guarded(70 * 32, "out", "T*d_model"),
              *o2 = kit_guarded(70 * 32, "out", "T*d_model");
        omp_set_num_threads(1);
        ok = KIT_EXPECT_STATUS("mha_forward_flash(T 70, d_model 32, 4 heads) "
                               "on 1 thread",
                               mha_forward_flash(&L.cfg, &L.w, L.X, o1, 70),
                               KIT_OK) &&
             KIT_EXPECT_GUARDS("mha_forward_flash(T 70, d_model 32, 4 "
                               "heads) on 1 thread");
        omp_set_num_threads(2);
        ok = ok &&
             KIT_EXPECT_STATUS("mha_forward_flash(T 70, d_model 32, 4 "
                               "heads) on 2 threads",
                               mha_forward_flash(&L.cfg, &L.w, L.X, o2, 70),
                               KIT_OK) &&
             KIT_EXPECT_GUARDS("mha_forward_flash(T 70, d_model 32, 4 "
                               "heads) on 2 threads");
        ok = ok && KIT_CHECK(memcmp(o1, o2, sizeof(float) * 70 * 32) == 0,
                             "mha_forward_flash (causal %d) gives different "
                             "bits on 1 thread and on 2: give each thread "
                             "its own scratch (block kit_thread_id() of "
                             "kit_max_threads()), and let each head be one "
                             "thread's work",
                             causal);
        kit_output_free(o1), kit_output_free(o2);
        layer7_free(&L);
    }
#else
    KIT_CHECK(0, "the kit was built without -fopenmp, so this test cannot "
                 "run two threads: build with the Makefile's CFLAGS");
#endif
}

/* ---------------------------------------------------------------------
 * Out of memory: every allocation failing in turn
 * ------------------------------------------------------------------- */

static int oom_all_nan(const float *x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!isnan(x[k]))
            return 0;
    return 1;
}

struct oom7 {
    struct mha_config cfg;
    struct mha_weights w;
    float *X, *out; /* (T, d_model); guarded (T, d_model) */
    int T;
};

static void oom7_prepare(void *ctx)
{
    struct oom7 *o = ctx;
    kit_poison(o->out, (size_t)o->T * o->cfg.d_model);
}

static int oom7_run(void *ctx)
{
    struct oom7 *o = ctx;
    return mha_forward_flash(&o->cfg, &o->w, o->X, o->out, o->T);
}

static int oom7_unchanged(void *ctx, char *why, size_t n_why)
{
    struct oom7 *o = ctx;
    if (oom_all_nan(o->out, (size_t)o->T * o->cfg.d_model))
        return 1;
    snprintf(why, n_why, "it wrote into out");
    return 0;
}

KIT_TEST(flash_out_of_memory,
         "mha_forward_flash: each allocation failing in turn gives "
         "KIT_E_NOMEM, frees what was taken, writes nothing")
{
    enum { T = 40, D = 16, H = 2 };
    struct oom7 o = {{D, H, 1}, {0}, NULL, NULL, T};
    struct mha_weights w;
    if (!KIT_CHECK(mha_weights_alloc(&w, &o.cfg) == KIT_OK &&
                       mha_weights_randomize(&w, &o.cfg, 771) == KIT_OK,
                   "could not allocate the layer's weights"))
        return;
    o.w.W_q = kit_guarded_copy(w.W_q, D * D, "w.W_q", "d_model*d_model");
    o.w.W_k = kit_guarded_copy(w.W_k, D * D, "w.W_k", "d_model*d_model");
    o.w.W_v = kit_guarded_copy(w.W_v, D * D, "w.W_v", "d_model*d_model");
    o.w.W_o = kit_guarded_copy(w.W_o, D * D, "w.W_o", "d_model*d_model");
    mha_weights_free(&w);
    struct rng r;
    rng_seed(&r, 772);
    float X[T * D];
    rng_fill(&r, X, T * D, -1.0f, 1.0f);
    o.X = kit_guarded_copy(X, T * D, "X", "T*d_model");
    o.out = kit_guarded((size_t)T * D, "out", "T*d_model");
    const struct kit_nomem t = {
        "mha_forward_flash(T 40, d_model 16, 2 heads, causal)", oom7_prepare,
        oom7_run, oom7_unchanged, &o};
    KIT_EXPECT_NOMEM(&t);
    kit_output_free(o.out), kit_output_free(o.X);
    kit_output_free(o.w.W_q), kit_output_free(o.w.W_k);
    kit_output_free(o.w.W_v), kit_output_free(o.w.W_o);
}

static const struct kit_test *const ch7_tests[] = {
    &matmul_ikj_ragged,
    &matmul_blocked_ragged,
    &matmul_tiled_ragged,
    &matmul_fast_ragged,
    &matmul_steps_bad_input,
    &softmax_online_equals_rows,
    &softmax_online_huge_logits,
    &softmax_online_bad_input,
    &flash_equals_attention,
    &flash_equals_causal_attention,
    &flash_huge_logits,
    &flash_very_negative_scores,
    &flash_hidden_key_far_above,
    &flash_scratch_guarded,
    &flash_bad_input,
    &mha_flash_golden,
    &mha_flash_equals_mha_forward,
    &mha_flash_errors,
    &fast_threads_identical,
    &flash_out_of_memory,
    NULL, /* keep one test per line */
};
KIT_CHAPTER(ch7_tests)
