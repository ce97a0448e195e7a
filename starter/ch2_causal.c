/*
 * ch2_causal.c: chapter 2, causal masking.
 * YOUR FILE. Replace each stub's body, then run: make test CH=2
 *
 * Dimension letters (see attention.h):
 *   T = tokens, d_k = query/key width, d_v = value width.
 *   i = the query (row), j = the key (column) of a (T, T) matrix.
 * Arrays are flat and row-major: X[i][j] is X[i * cols + j].
 * Every function first checks its input: a NULL pointer returns
 * KIT_E_NULL, a size <= 0 returns KIT_E_SIZE, and nothing is written.
 * You may call your chapter 1 functions (matmul_bt, softmax_rows, matmul).
 */
#include "attention.h"

#include <math.h>

/* @listing causal_mask */
/* Exercise 2.1. scores[i][j] <- -INFINITY for j > i.  scores (T, T).
 * Row i is query i; the keys after it (j > i) are its future. The
 * diagonal (j == i) stays visible: a token may look at itself. Fill with
 * -INFINITY from <math.h>, not with 0: a score of 0 is an ordinary score,
 * and exp(0) = 1 would still give the future a weight. */
int causal_mask(float *scores, int T)
{
    (void)scores, (void)T;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end causal_mask */

/* @listing causal_attention */
/* Exercise 2.2. weights = softmax(mask(Q K^T / sqrt(d_k))),
 * out = weights V.
 * Q (T, d_k), K (T, d_k), V (T, d_v), out (T, d_v), weights (T, T).
 * Your attention() from chapter 1 with one more step: apply causal_mask()
 * to the scaled scores BEFORE softmax_rows(). Masking after the softmax
 * leaves rows that no longer sum to 1. */
int causal_attention(const float *Q, const float *K, const float *V, float *out,
                     float *weights, int T, int d_k, int d_v)
{
    (void)Q, (void)K, (void)V, (void)out, (void)weights;
    (void)T, (void)d_k, (void)d_v;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end causal_attention */
