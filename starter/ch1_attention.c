/*
 * ch1_attention.c: chapter 1, scaled dot-product attention for one head.
 * YOUR FILE. Replace each stub's body, then run: make test CH=1
 *
 * Dimension letters (see attention.h):
 *   T = tokens, d_k = query/key width, d_v = value width,
 *   m, n, p = the sizes of a plain product (m,n) x (n,p).
 * Arrays are flat and row-major: X[r][c] is X[r * cols + c].
 * Every function first checks its input: a NULL pointer returns
 * KIT_E_NULL, a size <= 0 returns KIT_E_SIZE, and nothing is written.
 */
#include "attention.h"

#include <math.h>

/* @listing matmul */
/* Exercise 1.1. C = A B.  A (m, n), B (n, p), C (m, p).
 * C[i][j] = sum over k of A[i][k] * B[k][j]. Start every sum at zero:
 * C may hold garbage when you are called. */
int matmul(const float *A, const float *B, float *C, int m, int n, int p)
{
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)p;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end matmul */

/* @listing matmul_bt */
/* Exercise 1.2. C = A B^T.  A (m, n), B (p, n), C (m, p).
 * C[i][j] = sum over k of A[i][k] * B[j][k]: row i of A against row j
 * of B. With A = Q and B = K this is the score matrix Q K^T. */
int matmul_bt(const float *A, const float *B, float *C, int m, int n, int p)
{
    (void)A, (void)B, (void)C, (void)m, (void)n, (void)p;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end matmul_bt */

/* @listing softmax_rows */
/* Exercise 1.3. Softmax of every row of X, in place.  X (rows, cols).
 * For each row: find its maximum, replace each entry x by exp(x - max),
 * then divide each by the row's sum. Subtracting the maximum keeps
 * expf() from overflowing; an entry of -INFINITY becomes exactly 0. */
int softmax_rows(float *X, int rows, int cols)
{
    (void)X, (void)rows, (void)cols;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end softmax_rows */

/* @listing attention */
/* Exercise 1.4. weights = softmax(Q K^T / sqrt(d_k)),  out = weights V.
 * Q (T, d_k), K (T, d_k), V (T, d_v), out (T, d_v), weights (T, T).
 * Use your matmul_bt(), softmax_rows() and matmul(). Mind the scale:
 * 1 / sqrt(d_k) in floating point, not 1 / d_k. */
int attention(const float *Q, const float *K, const float *V, float *out,
              float *weights, int T, int d_k, int d_v)
{
    (void)Q, (void)K, (void)V, (void)out, (void)weights;
    (void)T, (void)d_k, (void)d_v;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end attention */
