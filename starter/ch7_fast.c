/*
 * ch7_fast.c: chapter 7, attention at CPU speed.
 * YOUR FILE. Replace each stub's body, then run: make test CH=7
 *
 * Dimension letters (see fast.h):
 *   m, n, p = a product (m,n) x (n,p); T = tokens; d = one head's width;
 *   Bq, Bk = tile sizes (queries, keys); d_model, h, d_head as in mha.h.
 * Arrays are flat and row-major: X[r][c] is X[r * cols + c].
 * Every function first checks its input: a NULL pointer returns
 * KIT_E_NULL, a size <= 0 returns KIT_E_SIZE, and nothing is written.
 * Plain C only: no intrinsics, no BLAS. Time your work with make bench.
 */
#include "fast.h"

#include "attention.h"

#include <math.h>
#include <stdlib.h>

/* @listing matmul_ikj */
/* Exercise 7.1. C = A B in the loop order i, k, j.
 * A (m, n), B (n, p), C (m, p). For each row i: set row i of C to 0,
 * then for each k add A[i][k] times row k of B to it. The innermost
 * loop walks along a row (j), so it reads consecutive floats; keep it
 * within the row: j runs over 0 .. p-1. */
int matmul_ikj(const float *A, const float *B, float *C, int m, int n, int p)
{
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)p;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end matmul_ikj */

/* @listing matmul_blocked */
/* Exercise 7.2. C = A B, one cache block of B at a time.
 * A (m, n), B (n, p), C (m, p). Zero C; then for each block of rows
 * k0 .. k1-1 (MM_KB of them) and columns j0 .. j1-1 (MM_NB) of B, run
 * exercise 7.1's loops over every row i of A, with k and j limited to
 * the block. The last block of each is ragged: k1 = min(k0 + MM_KB, n). */
int matmul_blocked(const float *A, const float *B, float *C, int m, int n,
                   int p)
{
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)p;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end matmul_blocked */

/* @listing matmul_tiled */
/* Exercise 7.3. C = A B, with exercise 7.2's blocks and, inside each
 * block, a register tile. A (m, n), B (n, p), C (m, p).
 * Write a static helper that updates an MM_TR x MM_TC tile of C:
 * copy it into a local array float acc[MM_TR][MM_TC], loop k over the
 * block adding A[i + r][k] * B[k][j + c] into acc[r][c], and store acc
 * back. Constant loop bounds let the compiler keep acc in registers.
 * Rows and columns that do not fill a whole tile (m, p not multiples of
 * MM_TR, MM_TC) go through a plain loop like exercise 7.2's.
 * Keep the rows' work in a helper over a row range [i_begin, i_end):
 * exercise 7.4 shares those ranges among threads. */
int matmul_tiled(const float *A, const float *B, float *C, int m, int n, int p)
{
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)p;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end matmul_tiled */

/* @listing matmul_fast */
/* Exercise 7.4. C = A B, exercise 7.3 with threads (and, for speed,
 * packing and a micro-kernel). A (m, n), B (n, p), C (m, p).
 * Cut the rows of C into blocks of MM_MB and put "#pragma omp parallel
 * for" before the loop over blocks; each iteration computes its own
 * rows: exercise 7.3's row helper will do. Faster: pack a block of
 * MM_KC x MM_NC of B and each block of A into strips of MM_NR columns
 * and MM_MR rows, and keep an MM_MR x MM_NR tile of C in GCC vector
 * types while k runs. Every row is one thread's work, added in one
 * order: the result must be the same, bit for bit, for 1 thread and
 * for 2. */
int matmul_fast(const float *A, const float *B, float *C, int m, int n, int p)
{
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)p;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end matmul_fast */

/* @listing softmax_online */
/* Exercise 7.5. Row-wise softmax in place, the maximum and the sum in
 * ONE pass.  X (rows, cols).
 * Keep m (the largest x so far, starting at -INFINITY) and l (the sum
 * of exp(x - m) so far, starting at 0). When x > m, the old sum was
 * measured against the old maximum: multiply l by exp(m_old - x) before
 * m becomes x. Then l += exp(x - m). A second pass writes
 * exp(x - m) / l. */
int softmax_online(float *X, int rows, int cols)
{
    (void)X, (void)rows, (void)cols;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end softmax_online */

/* @listing flash_attention */
/* Exercise 7.6. out = softmax(Q K^T / sqrt(d)) V, tile by tile.
 * Q, K, V, out (T, d). scratch: flash_scratch_size(T, d, Bq, Bk) floats,
 * laid out as fast.h says (S, Qt, acc, m, l), with bq = min(Bq, T) and
 * bk = min(Bk, T). For each tile of queries i0 .. i0+nq-1:
 *   set m_i = -INFINITY, l_i = 0, acc_i = 0;
 *   for each tile of keys j0 .. j0+nk-1 (nk = min(bk, T - j0)):
 *     causal: stop once j0 is past the tile's last query, i0 + nq - 1;
 *     for each query i: s_j = q_i . k_j / sqrt(d) over the keys it may
 *       see (causal: j <= i), m_new = max(m_i, max s_j),
 *       p_j = fast_expf(s_j - m_new), alpha = expf(m_i - m_new),
 *       l_i = alpha l_i + sum p_j, acc_i = alpha acc_i + sum p_j v_j,
 *       m_i = m_new;
 *   then out_i = acc_i / l_i, the only division. */
int flash_attention(const float *Q, const float *K, const float *V, float *out,
                    int T, int d, int Bq, int Bk, int causal, float *scratch)
{
    (void)Q, (void)K, (void)V, (void)out, (void)T, (void)d;
    (void)Bq, (void)Bk, (void)causal, (void)scratch;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end flash_attention */

/* @listing mha_forward_flash */
/* Exercise 7.7. Chapter 3's layer, fast, without the weights.
 * X (T, d_model), out (T, d_model). Check the input as mha_forward()
 * does. Then: Q = X W_q, K = X W_k, V = X W_v with matmul_fast(), each
 * regrouped head by head with mha_split_heads(); run flash_attention()
 * on every head (tiles FLASH_BQ x FLASH_BK) under
 * "#pragma omp parallel for", each thread with its own scratch
 * (kit_max_threads() blocks, block kit_thread_id()); put the heads back
 * together with mha_merge_heads() and finish with out = concat W_o.
 * Allocate scratch with malloc and return KIT_E_NOMEM if it fails. */
int mha_forward_flash(const struct mha_config *cfg, const struct mha_weights *w,
                      const float *X, float *out, int T)
{
    (void)cfg, (void)w, (void)X, (void)out, (void)T;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end mha_forward_flash */
