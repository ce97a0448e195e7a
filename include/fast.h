/*
 * fast.h: chapter 7, attention at CPU speed.
 *
 * The same maths as chapters 1 to 3, computed so that it runs near the
 * speed of the machine: a matrix product in four steps (loop order,
 * cache blocking, a register tile, threads), a softmax in one pass over
 * the scores, and tiled "flash" attention that never stores a T x T
 * matrix and skips the tiles the causal mask hides.
 *
 * Dimension letters used in every shape comment:
 *   T       = number of tokens
 *   d       = width of one head's queries, keys and values (d_head)
 *   Bq, Bk  = the tile sizes: Bq queries by Bk keys
 *   m, n, p = the sizes of a plain matrix product (m,n) x (n,p)
 *   d_model, h = as in mha.h
 *
 * All arrays are flat, row-major and caller-allocated (see kit.h). The
 * code is plain C11; the threads come from OpenMP (gcc -fopenmp), and
 * every function gives bit-for-bit the same result whatever the number
 * of threads.
 */
#ifndef FAST_H
#define FAST_H

#include "kit.h"
#include "mha.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* ---------------------------------------------------------------------
 * The matrix product, one idea per step
 *
 * Each computes C = A B with A (m, n), B (n, p), C (m, p), the contract
 * of chapter 1's matmul(): KIT_E_NULL for a NULL pointer, KIT_E_SIZE for
 * a size <= 0, and then nothing written; C is overwritten, never added
 * to. Each step keeps the one before it and adds one idea.
 * ------------------------------------------------------------------- */

/* Step 1: loop order i, k, j. The innermost loop walks along a row of B
 * and a row of C, one float after the next. */
int matmul_ikj(const float *A, const float *B, float *C, int m, int n, int p);

/* Step 2: step 1 in blocks of MM_KB rows of B by MM_NB columns, so that
 * the block of B being read stays in the cache while every row of A
 * uses it. */
int matmul_blocked(const float *A, const float *B, float *C, int m, int n,
                   int p);

/* Step 3: step 2 with a register tile: MM_TR rows by MM_TC columns of C
 * held in local variables for a whole block of k, which the compiler
 * keeps in vector registers. */
int matmul_tiled(const float *A, const float *B, float *C, int m, int n, int p);

/* Step 4, the fast product: blocks of MM_MB rows of C shared among
 * threads (OpenMP); the reference also packs blocks of A and B and runs
 * an MM_MR x MM_NR register micro-kernel. Each row is computed by one
 * thread, in the same order, so the result does not depend on the
 * number of threads. */
int matmul_fast(const float *A, const float *B, float *C, int m, int n, int p);

/* The block and tile sizes of steps 2 to 4 (floats). */
enum {
    MM_KB = 128, /* rows of B in a cache block                  */
    MM_NB = 256, /* columns of B in a cache block               */
    MM_TR = 4,   /* rows of the register tile                   */
    MM_TC = 16,  /* columns of the register tile: 2 AVX vectors */
};

/* Step 4's sizes (floats): the packed blocks and the micro-kernel. */
enum {
    MM_KC = 256, /* rows of a packed block of B                 */
    MM_NC = 256, /* columns of a packed block of B              */
    MM_MB = 48,  /* rows of C in a thread's share, packed A     */
    MM_MR = 6,   /* rows of the micro-kernel's tile             */
    MM_NR = 16,  /* its columns: 2 vectors of 8 floats          */
};

/* ---------------------------------------------------------------------
 * The online softmax
 * ------------------------------------------------------------------- */

/* Row-wise softmax, in place, as softmax_rows() of chapter 1, but the
 * row's maximum and sum come from ONE pass: a running maximum m and a
 * running sum l of exp(x - m), rescaled by exp(m_old - m_new) whenever
 * the maximum grows. A second pass writes exp(x - m) / l.
 * X (rows, cols). Entries equal to -INFINITY become exactly 0. */
int softmax_online(float *X, int rows, int cols);

/* ---------------------------------------------------------------------
 * Tiled (flash) attention for one head
 * ------------------------------------------------------------------- */

/* How many floats of scratch flash_attention() needs, with
 * bq = min(Bq, T) and bk = min(Bk, T):
 *   S   (bk, bq)  one tile of scores, then of exp(score - max), one
 *                 key per row and one query per column
 *   Qt  (d, bq)   the query tile, transposed (and scaled by 1/sqrt(d))
 *   acc (bq, d)   the output accumulators of the tile's queries
 *   m   (bq)      each query's running maximum
 *   l   (bq)      each query's running sum
 * laid out in that order. It does not grow with T: at most
 * Bk*Bq + 2*d*Bq + 2*Bq. Returns 0 when a size is not positive.
 * (Given code, given/flash.c.) */
size_t flash_scratch_size(int T, int d, int Bq, int Bk);

/* out = softmax(Q K^T / sqrt(d)) V, computed tile by tile:
 * for each tile of Bq queries, for each tile of Bk keys,
 *   s_ij    = q_i . k_j / sqrt(d)
 *   m_new   = max(m_i, max_j s_ij)
 *   acc_i   = acc_i * exp(m_i - m_new) + sum_j exp(s_ij - m_new) v_j
 *   l_i     = l_i   * exp(m_i - m_new) + sum_j exp(s_ij - m_new)
 *   m_i     = m_new
 * and at the end out_i = acc_i / l_i, one division per entry.
 * causal != 0: query i sees keys j <= i only, and a key tile that lies
 * wholly after the tile's last query is never touched.
 * Q, K, V, out (T, d). scratch: flash_scratch_size(T, d, Bq, Bk) floats,
 * which the function may overwrite. Returns KIT_OK, KIT_E_NULL or
 * KIT_E_SIZE (T, d, Bq or Bk not positive), and then writes nothing. */
int flash_attention(const float *Q, const float *K, const float *V, float *out,
                    int T, int d, int Bq, int Bk, int causal, float *scratch);

/* The tile sizes mha_forward_flash() uses. */
enum { FLASH_BQ = 64, FLASH_BK = 64 };

/* ---------------------------------------------------------------------
 * The multi-head layer, fast
 * ------------------------------------------------------------------- */

/* mha_forward() of chapter 3, built from matmul_fast() and
 * flash_attention() (tiles FLASH_BQ x FLASH_BK), with the heads shared
 * among threads. No weights output: the point is never to store them.
 * X (T, d_model), out (T, d_model). Equal to mha_forward()'s out within
 * float rounding. Returns KIT_OK; KIT_E_NULL for a NULL pointer (w's
 * four matrices included); an error of mha_check_config(); KIT_E_SIZE
 * when T <= 0; KIT_E_NOMEM when scratch cannot be allocated. On an
 * error it writes nothing. */
int mha_forward_flash(const struct mha_config *cfg, const struct mha_weights *w,
                      const float *X, float *out, int T);

/* ---------------------------------------------------------------------
 * Given code (given/flash.c and below): heads and threads
 * ------------------------------------------------------------------- */

/* Regroup the fused projection head by head: H[i][t][c] = P[t][i*d_head
 * + c], so that head i's (T, d_head) rows are contiguous.
 * P (T, d_model), H (h, T, d_head), d_head = d_model / h. */
void mha_split_heads(const float *P, float *H, int T, int d_model, int h);

/* The reverse, which is the concatenation: P[t][i*d_head + c] =
 * H[i][t][c].  H (h, T, d_head), P (T, d_model). */
void mha_merge_heads(const float *H, float *P, int T, int d_model, int h);

/* How many threads a parallel loop will use, and which one this is
 * (0 .. kit_max_threads() - 1); 1 and 0 without OpenMP. */
static inline int kit_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static inline int kit_thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* ---------------------------------------------------------------------
 * Given code: an exp() the compiler can vectorise
 * ------------------------------------------------------------------- */

/* e^x for x <= 0 (larger x are clamped to 88), to about 2 units in the
 * last place; x below -87 (and -INFINITY) gives about 1e-38, not 0, and
 * NaN gives NaN. Written without branches or library calls, so that a
 * loop of them becomes vector code: libm's expf() is a call the compiler
 * cannot vectorise.
 * e^x = 2^n e^r, n = round(x / ln 2), |r| <= ln(2) / 2, e^r by its
 * Taylor series to r^6, 2^n built in the float's exponent bits. */
static inline float fast_expf(float x)
{
    /* the clamps also send NaN to -87, so the conversion to int below is
     * always defined; the last line gives NaN back for NaN */
    float xc = x > -87.0f ? x : -87.0f;
    xc = xc < 88.0f ? xc : 88.0f;
    const float shifter = 12582912.0f; /* 1.5 * 2^23: rounds to an int */
    float n = (xc * 1.44269504f + shifter) - shifter;
    float r = xc - n * 0.693145752f; /* ln 2, high bits */
    r = r - n * 1.42860677e-6f;      /* ln 2, low bits  */
    float e =
        1.0f +
        r * (1.0f +
             r * (0.5f + r * (0.166666672f +
                              r * (0.0416666679f + r * (0.00833333377f +
                                                        r * 0.00138888892f)))));
    int32_t bits = ((int32_t)n + 127) << 23; /* the float 2^n */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return x == x ? e * scale : x;
}

#endif
