/*
 * ch7_fast.c: chapter 7, attention at CPU speed.
 * Reference solutions. The starter file of the same name holds the stubs.
 *
 * The maths of chapters 1 to 3, computed fast. First the matrix product
 * in four steps, each a function of its own so that the benchmark can
 * time every step against the one before (make bench): loop order,
 * cache blocks, a register tile, threads. Then the online softmax, then
 * tiled "flash" attention, which keeps a running maximum, sum and output
 * per query instead of a (T, T) matrix, and last the multi-head layer
 * built from them. The tests check each against chapters 1 to 3.
 *
 * Dimension letters (see fast.h):
 *   m, n, p = a product (m,n) x (n,p); T = tokens; d = one head's width;
 *   Bq, Bk = tile sizes (queries, keys); d_model, h, d_head as in mha.h.
 */
#include "fast.h"

#include "attention.h"

#include <math.h>
#include <stdlib.h>

/* The checks every product starts with: chapter 1's contract. */
static int check_product(const float *A, const float *B, const float *C, int m,
                         int n, int p)
{
    if (!A || !B || !C)
        return KIT_E_NULL;
    if (m <= 0 || n <= 0 || p <= 0)
        return KIT_E_SIZE;
    return KIT_OK;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* ---------------------------------------------------------------------
 * Step 1: loop order
 * ------------------------------------------------------------------- */

/* @listing matmul_ikj */
/* C = A B in the order i, k, j.  A (m, n), B (n, p), C (m, p).
 * Row i of C gathers a_ik times row k of B, for every k. */
int matmul_ikj(const float *A, const float *B, float *C, int m, int n, int p)
{
    int rc = check_product(A, B, C, m, n, p);
    if (rc != KIT_OK)
        return rc;
    for (int i = 0; i < m; i++) {
        float *c_i = C + i * p; /* (p) row i of C */
        for (int j = 0; j < p; j++)
            c_i[j] = 0.0f;
        for (int k = 0; k < n; k++) {
            const float a_ik = A[i * n + k];
            const float *b_k = B + k * p; /* (p) row k of B */
            /* along a row: consecutive floats, one vector at a time */
            for (int j = 0; j < p; j++)
                c_i[j] += a_ik * b_k[j];
        }
    }
    return KIT_OK;
}
/* @end matmul_ikj */

/* ---------------------------------------------------------------------
 * Step 2: cache blocking
 * ------------------------------------------------------------------- */

/* @listing matmul_blocked */
/* C = A B, one block of B at a time.  A (m, n), B (n, p), C (m, p).
 * The block B[k0..k1)[j0..j1) (MM_KB x MM_NB floats) stays in the cache
 * while every row of A uses it. */
int matmul_blocked(const float *A, const float *B, float *C, int m, int n,
                   int p)
{
    int rc = check_product(A, B, C, m, n, p);
    if (rc != KIT_OK)
        return rc;
    for (int i = 0; i < m * p; i++)
        C[i] = 0.0f;
    for (int k0 = 0; k0 < n; k0 += MM_KB) {
        const int k1 = min_int(k0 + MM_KB, n); /* the last block is ragged */
        for (int j0 = 0; j0 < p; j0 += MM_NB) {
            const int j1 = min_int(j0 + MM_NB, p);
            for (int i = 0; i < m; i++) {
                float *c_i = C + i * p;
                for (int k = k0; k < k1; k++) {
                    const float a_ik = A[i * n + k];
                    const float *b_k = B + k * p;
                    for (int j = j0; j < j1; j++)
                        c_i[j] += a_ik * b_k[j];
                }
            }
        }
    }
    return KIT_OK;
}
/* @end matmul_blocked */

/* ---------------------------------------------------------------------
 * Step 3: a register tile
 * ------------------------------------------------------------------- */

/* @listing matmul_tiled */
/* C[i..i+MM_TR)[j..j+MM_TC) += A[same rows][k0..k1) B[k0..k1)[same cols].
 * The MM_TR x MM_TC sums live in acc, local variables the compiler
 * keeps in vector registers, for the whole loop over k. */
static void mm_tile(const float *A, const float *B, float *C, int i, int j,
                    int k0, int k1, int n, int p)
{
    float *c0 = C + i * p + j, *c1 = c0 + p, *c2 = c1 + p, *c3 = c2 + p;
    float acc0[MM_TC], acc1[MM_TC], acc2[MM_TC], acc3[MM_TC];
    for (int c = 0; c < MM_TC; c++) {
        acc0[c] = c0[c], acc1[c] = c1[c];
        acc2[c] = c2[c], acc3[c] = c3[c];
    }
    for (int k = k0; k < k1; k++) {
        const float *b = B + k * p + j; /* (MM_TC) part of row k of B */
        const float a0 = A[i * n + k], a1 = A[(i + 1) * n + k];
        const float a2 = A[(i + 2) * n + k], a3 = A[(i + 3) * n + k];
        for (int c = 0; c < MM_TC; c++) {
            acc0[c] += a0 * b[c];
            acc1[c] += a1 * b[c];
            acc2[c] += a2 * b[c];
            acc3[c] += a3 * b[c];
        }
    }
    for (int c = 0; c < MM_TC; c++) {
        c0[c] = acc0[c], c1[c] = acc1[c];
        c2[c] = acc2[c], c3[c] = acc3[c];
    }
}

/* The ragged edges the tiles leave: rows [i0, i1) by columns [j0, j1),
 * over k in [k0, k1), in step 2's order. */
static void mm_edge(const float *A, const float *B, float *C, int i0, int i1,
                    int j0, int j1, int k0, int k1, int n, int p)
{
    for (int i = i0; i < i1; i++)
        for (int k = k0; k < k1; k++) {
            const float a_ik = A[i * n + k];
            for (int j = j0; j < j1; j++)
                C[i * p + j] += a_ik * B[k * p + j];
        }
}

/* Rows [i_begin, i_end) of C = A B: cache blocks of B, and in each
 * block, register tiles of C; the edges that do not fill a tile go
 * through mm_edge(). */
static void mm_rows(const float *A, const float *B, float *C, int i_begin,
                    int i_end, int n, int p)
{
    for (int i = i_begin; i < i_end; i++)
        for (int j = 0; j < p; j++)
            C[i * p + j] = 0.0f;
    for (int k0 = 0; k0 < n; k0 += MM_KB) {
        const int k1 = min_int(k0 + MM_KB, n);
        for (int j0 = 0; j0 < p; j0 += MM_NB) {
            const int j1 = min_int(j0 + MM_NB, p);
            int i = i_begin;
            for (; i + MM_TR <= i_end; i += MM_TR) {
                int j = j0;
                for (; j + MM_TC <= j1; j += MM_TC)
                    mm_tile(A, B, C, i, j, k0, k1, n, p);
                mm_edge(A, B, C, i, i + MM_TR, j, j1, k0, k1, n, p);
            }
            mm_edge(A, B, C, i, i_end, j0, j1, k0, k1, n, p);
        }
    }
}

/* C = A B with cache blocks and register tiles, on one thread.
 * A (m, n), B (n, p), C (m, p). */
int matmul_tiled(const float *A, const float *B, float *C, int m, int n, int p)
{
    int rc = check_product(A, B, C, m, n, p);
    if (rc != KIT_OK)
        return rc;
    mm_rows(A, B, C, 0, m, n, p);
    return KIT_OK;
}
/* @end matmul_tiled */

/* ---------------------------------------------------------------------
 * Step 4: packing, a register micro-kernel, threads
 * ------------------------------------------------------------------- */

/* @listing matmul_fast */
/* Eight floats that the compiler handles as one value: one AVX
 * register, added and multiplied as a whole (a GCC and Clang extension,
 * not ISO C; on a machine with narrower vectors it becomes two or four
 * of them). a * b + c on two of them is eight fused multiply-adds. */
typedef float mm_vec __attribute__((vector_size(MM_NR / 2 * sizeof(float))));

/* Pack rows [k0, k0 + kc) by columns [j0, j0 + nc) of B into strips of
 * MM_NR columns: strip s holds, for each k, its MM_NR floats one after
 * the next, so that the micro-kernel reads B in the order it uses it.
 * Columns past p are 0.  Bp (ceil(nc / MM_NR), kc, MM_NR). */
static void mm_pack_b(const float *B, float *Bp, int s, int k0, int kc, int j0,
                      int nc, int p)
{
    float *dst = Bp + (size_t)s * kc * MM_NR;
    const int j = j0 + s * MM_NR, cols = min_int(MM_NR, j0 + nc - j);
    for (int k = 0; k < kc; k++) {
        const float *b_k = B + (size_t)(k0 + k) * p + j;
        for (int c = 0; c < MM_NR; c++)
            dst[k * MM_NR + c] = c < cols ? b_k[c] : 0.0f;
    }
}

/* The same for A: rows [i0, i0 + mc) by columns [k0, k0 + kc) in strips
 * of MM_MR rows, each holding, for each k, its MM_MR floats. Rows past
 * m are 0.  Ap (ceil(mc / MM_MR), kc, MM_MR). */
static void mm_pack_a(const float *A, float *Ap, int i0, int mc, int k0, int kc,
                      int n)
{
    for (int r0 = 0; r0 < mc; r0 += MM_MR) {
        float *dst = Ap + (size_t)r0 * kc;
        const int rows = min_int(MM_MR, mc - r0);
        for (int k = 0; k < kc; k++)
            for (int r = 0; r < MM_MR; r++)
                dst[k * MM_MR + r] =
                    r < rows ? A[(size_t)(i0 + r0 + r) * n + k0 + k] : 0.0f;
    }
}

/* The micro-kernel: an MM_MR x MM_NR tile of C (ldc floats between its
 * rows) += a strip of packed A times a strip of packed B, over kc.
 * The MM_MR x 2 vectors of sums stay in registers for the whole loop:
 * per k, two loads of B and MM_MR floats of A feed 2 MM_MR vector
 * multiply-adds. first: the tile starts from 0, not from C. */
static void mm_kernel(const float *a, const float *b, float *c, int ldc, int kc,
                      int first)
{
    mm_vec acc[MM_MR][2];
    for (int r = 0; r < MM_MR; r++)
        for (int v = 0; v < 2; v++) {
            if (first)
                acc[r][v] = (mm_vec){0};
            else
                memcpy(&acc[r][v], c + r * ldc + v * MM_NR / 2,
                       sizeof acc[r][v]);
        }
    for (int k = 0; k < kc; k++) {
        mm_vec b0, b1;
        memcpy(&b0, b + k * MM_NR, sizeof b0);
        memcpy(&b1, b + k * MM_NR + MM_NR / 2, sizeof b1);
        for (int r = 0; r < MM_MR; r++) {
            const float a_r = a[k * MM_MR + r]; /* the same in all lanes */
            acc[r][0] += a_r * b0;
            acc[r][1] += a_r * b1;
        }
    }
    for (int r = 0; r < MM_MR; r++)
        for (int v = 0; v < 2; v++)
            memcpy(c + r * ldc + v * MM_NR / 2, &acc[r][v], sizeof acc[r][v]);
}

/* C[i0 .. i0+mc)[j0 .. j0+nc) += packed A block times packed B block,
 * tile by tile. A tile that sticks out of C is computed, by the same
 * kernel, in a small tile of its own and then copied in, so that every
 * entry of C goes through the same operations in the same order. */
static void mm_block(const float *Ap, const float *Bp, float *C, int i0, int mc,
                     int j0, int nc, int kc, int p, int first)
{
    for (int jr = 0; jr < nc; jr += MM_NR) {
        const float *b = Bp + (size_t)jr * kc;
        const int cols = min_int(MM_NR, nc - jr);
        for (int ir = 0; ir < mc; ir += MM_MR) {
            const float *a = Ap + (size_t)ir * kc;
            const int rows = min_int(MM_MR, mc - ir);
            float *c = C + (size_t)(i0 + ir) * p + j0 + jr;
            if (rows == MM_MR && cols == MM_NR) {
                mm_kernel(a, b, c, p, kc, first);
                continue;
            }
            float t[MM_MR * MM_NR]; /* the edge tile */
            for (int r = 0; r < rows; r++)
                for (int q = 0; q < cols; q++)
                    t[r * MM_NR + q] = c[r * p + q];
            mm_kernel(a, b, t, MM_NR, kc, first);
            for (int r = 0; r < rows; r++)
                for (int q = 0; q < cols; q++)
                    c[r * p + q] = t[r * MM_NR + q];
        }
    }
}

/* C = A B.  A (m, n), B (n, p), C (m, p). For each block of MM_KC rows
 * by MM_NC columns of B: the threads pack it together (it is read by
 * all), then share blocks of MM_MB rows of C, each packing its rows of
 * A and running the micro-kernel over them; a block goes to the next
 * thread free (dynamic), so a thread slowed by other programs takes
 * fewer. Every entry of C is one
 * thread's work, over k in the same order: the result does not depend
 * on the number of threads. */
int matmul_fast(const float *A, const float *B, float *C, int m, int n, int p)
{
    int rc = check_product(A, B, C, m, n, p);
    if (rc != KIT_OK)
        return rc;
    float Bp[MM_KC * MM_NC]; /* the packed block of B, shared */
    for (int j0 = 0; j0 < p; j0 += MM_NC) {
        const int nc = min_int(MM_NC, p - j0);
        const int strips = (nc + MM_NR - 1) / MM_NR;
        for (int k0 = 0; k0 < n; k0 += MM_KC) {
            const int kc = min_int(MM_KC, n - k0);
#pragma omp parallel
            {
#pragma omp for schedule(static)
                for (int s = 0; s < strips; s++)
                    mm_pack_b(B, Bp, s, k0, kc, j0, nc, p);
                /* (every thread waits here until B is packed) */
                float Ap[MM_MB * MM_KC]; /* this thread's rows of A */
#pragma omp for schedule(dynamic)
                for (int i0 = 0; i0 < m; i0 += MM_MB) {
                    const int mc = min_int(MM_MB, m - i0);
                    mm_pack_a(A, Ap, i0, mc, k0, kc, n);
                    mm_block(Ap, Bp, C, i0, mc, j0, nc, kc, p, k0 == 0);
                }
            }
        }
    }
    return KIT_OK;
}
/* @end matmul_fast */

/* ---------------------------------------------------------------------
 * The online softmax
 * ------------------------------------------------------------------- */

/* @listing softmax_online */
/* X[r][c] <- exp(X[r][c] - m) / l, per row, where the row's maximum m
 * and sum l = sum_c exp(X[r][c] - m) come from one pass.  X (rows, cols). */
int softmax_online(float *X, int rows, int cols)
{
    if (!X)
        return KIT_E_NULL;
    if (rows <= 0 || cols <= 0)
        return KIT_E_SIZE;
    for (int r = 0; r < rows; r++) {
        float *x = X + r * cols;
        /* 1. one pass: the running maximum m and the running sum l */
        float m = -INFINITY, l = 0.0f;
        for (int c = 0; c < cols; c++) {
            if (x[c] == -INFINITY)
                continue; /* masked: adds exp(-inf) = 0, and -inf - -inf
                           * would be NaN */
            if (x[c] > m) {
                l = l * expf(m - x[c]); /* the old sum, at the new maximum */
                m = x[c];
            }
            l += expf(x[c] - m);
        }
        /* 2. normalise */
        for (int c = 0; c < cols; c++)
            x[c] = expf(x[c] - m) / l;
    }
    return KIT_OK;
}
/* @end softmax_online */

/* ---------------------------------------------------------------------
 * Tiled (flash) attention
 * ------------------------------------------------------------------- */

/* @listing flash_attention */
/* The micro-kernel of both products of a tile: an MM_MR x MM_NR tile
 * of C, ldc floats between its rows, += a (MM_MR, n) block of A times
 * an (n, MM_NR) block of B, as mm_kernel() does. Entry (r, k) of A is
 * a[r][k * aks], so that A may be read along its rows (aks = 1) or
 * down its columns; row k of B starts at b + k * ldb. first: the tile
 * starts from 0, not from C. */
static void fa_kernel(const float *const a[MM_MR], int aks, const float *b,
                      int ldb, int n, float *c, int ldc, int first)
{
    mm_vec acc[MM_MR][2];
    for (int r = 0; r < MM_MR; r++)
        for (int v = 0; v < 2; v++) {
            if (first)
                acc[r][v] = (mm_vec){0};
            else
                memcpy(&acc[r][v], c + r * ldc + v * MM_NR / 2,
                       sizeof acc[r][v]);
        }
    for (int k = 0; k < n; k++) {
        mm_vec b0, b1;
        memcpy(&b0, b + (size_t)k * ldb, sizeof b0);
        memcpy(&b1, b + (size_t)k * ldb + MM_NR / 2, sizeof b1);
        for (int r = 0; r < MM_MR; r++) {
            const float a_r = a[r][(size_t)k * aks]; /* the same in all lanes */
            acc[r][0] += a_r * b0;
            acc[r][1] += a_r * b1;
        }
    }
    for (int r = 0; r < MM_MR; r++)
        for (int v = 0; v < 2; v++)
            memcpy(c + r * ldc + v * MM_NR / 2, &acc[r][v], sizeof acc[r][v]);
}

/* The same on a tile of rows <= MM_MR rows and cols <= MM_NR columns,
 * with A's row r at a0 + r * ars: a full tile goes straight to the
 * kernel; one with fewer rows through a small tile of its own (its
 * missing rows read row 0 of A, and their results are dropped); one
 * with fewer columns by plain loops, in the same order of operations. */
static void fa_tile(const float *a0, int ars, int aks, int rows, const float *b,
                    int ldb, int n, float *c, int ldc, int cols, int first)
{
    const float *a[MM_MR];
    for (int r = 0; r < MM_MR; r++)
        a[r] = a0 + (size_t)(r < rows ? r : 0) * ars;
    if (rows == MM_MR && cols == MM_NR) {
        fa_kernel(a, aks, b, ldb, n, c, ldc, first);
    } else if (cols == MM_NR) {
        float t[MM_MR * MM_NR] = {0}; /* the edge tile */
        for (int r = 0; r < rows && !first; r++)
            memcpy(t + r * MM_NR, c + r * ldc, sizeof(float) * MM_NR);
        fa_kernel(a, aks, b, ldb, n, t, MM_NR, first);
        for (int r = 0; r < rows; r++)
            memcpy(c + r * ldc, t + r * MM_NR, sizeof(float) * MM_NR);
    } else {
        for (int r = 0; r < rows; r++)
            for (int q = 0; q < cols; q++) {
                float x = first ? 0.0f : c[r * ldc + q];
                for (int k = 0; k < n; k++)
                    x += a[r][(size_t)k * aks] * b[(size_t)k * ldb + q];
                c[r * ldc + q] = x;
            }
    }
}

/* out = softmax(Q K^T / sqrt(d)) V, in tiles of Bq queries by Bk keys,
 * never holding more than one (Bk, Bq) tile of scores. Both products
 * of a tile, S = K_tile Q_tile^T and acc += P V_tile, go through the
 * register micro-kernel, and the softmax runs across the queries: S
 * holds one query per column, so every loop over them is a vector loop.
 * Q, K, V, out (T, d); scratch: flash_scratch_size(T, d, Bq, Bk). */
int flash_attention(const float *Q, const float *K, const float *V, float *out,
                    int T, int d, int Bq, int Bk, int causal, float *scratch)
{
    if (!Q || !K || !V || !out || !scratch)
        return KIT_E_NULL;
    if (T <= 0 || d <= 0 || Bq <= 0 || Bk <= 0)
        return KIT_E_SIZE;
    const int bq = min_int(Bq, T), bk = min_int(Bk, T);
    float *S = scratch;       /* (bk, bq) scores, then exp(score - max) */
    float *Qt = S + bk * bq;  /* (d, bq)  the query tile, transposed */
    float *acc = Qt + d * bq; /* (bq, d)  output accumulators */
    float *m = acc + bq * d;  /* (bq)     running maxima */
    float *l = m + bq;        /* (bq)     running sums */
    const float scale = 1.0f / sqrtf((float)d);
    for (int i0 = 0; i0 < T; i0 += bq) {
        const int nq = min_int(bq, T - i0); /* queries in this tile */
        /* 1. a fresh start for the tile's queries, whose scaled
         *    vectors become the columns of Qt */
        for (int i = 0; i < nq; i++) {
            m[i] = -INFINITY;
            l[i] = 0.0f;
            for (int c = 0; c < d; c++) {
                acc[i * d + c] = 0.0f;
                Qt[c * bq + i] = Q[(i0 + i) * d + c] * scale;
            }
        }
        for (int j0 = 0; j0 < T; j0 += bk) {
            /* 2. causal: a key tile after the tile's last query is hidden */
            if (causal && j0 > i0 + nq - 1)
                break;
            const int nk = T - j0 < bk ? T - j0 : bk; /* keys in this tile */
            /* 3. scores S[j][i] = k_j . q_i / sqrt(d), MM_MR keys by
             *    MM_NR queries at a time; causal: a block whose first
             *    key comes after its last query is left out */
            for (int jr = 0; jr < nk; jr += MM_MR)
                for (int ir = 0; ir < nq; ir += MM_NR) {
                    const int cols = min_int(MM_NR, nq - ir);
                    if (causal && j0 + jr > i0 + ir + cols - 1)
                        continue;
                    fa_tile(K + (size_t)(j0 + jr) * d, d, 1,
                            min_int(MM_MR, nk - jr), Qt + ir, bq, d,
                            S + jr * bq + ir, bq, cols, 1);
                }
            /* causal: key j0 + j is hidden from the queries before it */
            const int diagonal = causal && j0 + nk - 1 > i0;
            for (int j = 0; diagonal && j < nk; j++)
                for (int i = 0; i < min_int(nq, j0 + j - i0); i++)
                    S[j * bq + i] = -INFINITY;
            /* 4.-6. the online softmax, MM_NR queries (columns) at a time */
            for (int i = 0; i < nq; i += MM_NR) {
                const int w = min_int(MM_NR, nq - i);
                float m_new[MM_NR], sum[MM_NR];
                /* 4. the new running maxima (a hidden score is -inf) */
                for (int q = 0; q < w; q++)
                    m_new[q] = m[i + q];
                for (int j = 0; j < nk; j++)
                    for (int q = 0; q < w; q++) {
                        const float x = S[j * bq + i + q];
                        m_new[q] = x > m_new[q] ? x : m_new[q];
                    }
                /* 5. exponentials, all <= 1, and their sums; a hidden
                 *    score's is 0 (fast_expf(-inf) is not) */
                for (int j = 0; j < nk; j++)
                    for (int q = 0; q < w; q++)
                        S[j * bq + i + q] =
                            fast_expf(S[j * bq + i + q] - m_new[q]);
                for (int j = 0; diagonal && j < nk; j++)
                    for (int q = 0; q < min_int(w, j0 + j - i0 - i); q++)
                        S[j * bq + i + q] = 0.0f;
                for (int q = 0; q < w; q++)
                    sum[q] = 0.0f;
                for (int j = 0; j < nk; j++)
                    for (int q = 0; q < w; q++)
                        sum[q] += S[j * bq + i + q];
                /* 6. what came before was measured against the old
                 *    maximum: rescale it; step 7 adds this tile */
                for (int q = 0; q < w; q++) {
                    if (m_new[q] == -INFINITY)
                        continue; /* no key seen yet: nothing to add */
                    const float alpha =
                        expf(m[i + q] - m_new[q]); /* 0 at first */
                    l[i + q] = l[i + q] * alpha + sum[q];
                    float *a = acc + (i + q) * d; /* (d) */
                    for (int c = 0; c < d; c++)
                        a[c] *= alpha;
                    m[i + q] = m_new[q];
                }
            }
            /* 7. acc += P V_tile, with P = S^T: MM_MR queries by MM_NR
             *    columns at a time, over the keys the block's last
             *    query may see */
            for (int r0 = 0; r0 < nq; r0 += MM_MR) {
                const int rows = min_int(MM_MR, nq - r0);
                const int kend = causal ? min_int(nk, i0 + r0 + rows - j0) : nk;
                for (int c0 = 0; c0 < d && kend > 0; c0 += MM_NR)
                    fa_tile(S + r0, 1, bq, rows, V + (size_t)j0 * d + c0, d,
                            kend, acc + r0 * d + c0, d, min_int(MM_NR, d - c0),
                            0);
            }
        }
        /* 8. divide once, at the end */
        for (int i = 0; i < nq; i++)
            for (int c = 0; c < d; c++)
                out[(i0 + i) * d + c] = acc[i * d + c] / l[i];
    }
    return KIT_OK;
}
/* @end flash_attention */

/* ---------------------------------------------------------------------
 * The multi-head layer
 * ------------------------------------------------------------------- */

/* @listing mha_forward_flash */
/* mha_forward() without a weights output: projections by matmul_fast(),
 * each head by flash_attention() on a thread of its own.
 * X (T, d_model), out (T, d_model). */
int mha_forward_flash(const struct mha_config *cfg, const struct mha_weights *w,
                      const float *X, float *out, int T)
{
    if (!cfg || !w || !X || !out)
        return KIT_E_NULL;
    if (!w->W_q || !w->W_k || !w->W_v || !w->W_o)
        return KIT_E_NULL;
    int rc = mha_check_config(cfg);
    if (rc != KIT_OK)
        return rc;
    if (T <= 0)
        return KIT_E_SIZE;
    const int d_model = cfg->d_model, h = cfg->n_heads;
    const int d_head = d_model / h;
    const size_t n = (size_t)T * d_model;
    const size_t per_thread = flash_scratch_size(T, d_head, FLASH_BQ, FLASH_BK);
    float *P = malloc(n * sizeof *P);   /* (T, d_model) a projection */
    float *Qh = malloc(n * sizeof *Qh); /* (h, T, d_head) */
    float *Kh = malloc(n * sizeof *Kh); /* (h, T, d_head) */
    float *Vh = malloc(n * sizeof *Vh); /* (h, T, d_head) */
    float *scratch =
        malloc((size_t)kit_max_threads() * per_thread * sizeof(float));
    if (!P || !Qh || !Kh || !Vh || !scratch) {
        rc = KIT_E_NOMEM;
        goto done;
    }
    /* 1. project, and regroup so that each head's rows are contiguous */
    matmul_fast(X, w->W_q, P, T, d_model, d_model);
    mha_split_heads(P, Qh, T, d_model, h);
    matmul_fast(X, w->W_k, P, T, d_model, d_model);
    mha_split_heads(P, Kh, T, d_model, h);
    matmul_fast(X, w->W_v, P, T, d_model, d_model);
    mha_split_heads(P, Vh, T, d_model, h);
    /* 2. attend: one head per thread, each with its own scratch;
     *    head i's output (T, d_head) goes to P + i*T*d_head */
#pragma omp parallel for schedule(static)
    for (int i = 0; i < h; i++) {
        const size_t off = (size_t)i * T * d_head;
        flash_attention(Qh + off, Kh + off, Vh + off, P + off, T, d_head,
                        FLASH_BQ, FLASH_BK, cfg->causal,
                        scratch + (size_t)kit_thread_id() * per_thread);
    }
    /* 3. concatenate (into Qh, free now), then mix: out = concat W_o */
    mha_merge_heads(P, Qh, T, d_model, h);
    matmul_fast(Qh, w->W_o, out, T, d_model, d_model);
done:
    free(P), free(Qh), free(Kh), free(Vh), free(scratch);
    return rc;
}
/* @end mha_forward_flash */
