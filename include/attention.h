/*
 * attention.h: chapters 1 and 2, one head of scaled dot-product attention.
 *
 * Dimension letters used in every shape comment:
 *   T       = number of tokens in the sequence (time)
 *   d_model = width of a token embedding
 *   d_k     = width of a query and of a key
 *   d_v     = width of a value
 *   m, n, p = the sizes of a plain matrix product (m,n) x (n,p)
 *
 * All arrays are flat, row-major and caller-allocated (see kit.h).
 * Every function returns KIT_OK, or KIT_E_SIZE when a size is not
 * positive, or KIT_E_NULL when a pointer is NULL, and then writes nothing.
 */
#ifndef ATTENTION_H
#define ATTENTION_H

#include "kit.h"

/* ---------------------------------------------------------------------
 * Chapter 1: scaled dot-product attention
 * ------------------------------------------------------------------- */

/* C = A B.  A (m, n), B (n, p), C (m, p). C is overwritten. */
int matmul(const float *A, const float *B, float *C, int m, int n, int p);

/* C = A B^T.  A (m, n), B (p, n), C (m, p). C is overwritten.
 * With A = Q and B = K this gives the score matrix Q K^T. */
int matmul_bt(const float *A, const float *B, float *C, int m, int n, int p);

/* Row-wise softmax, in place.  X (rows, cols).
 * X[r][c] <- exp(X[r][c] - max_c X[r]) / sum_c exp(X[r][c] - max_c X[r]).
 * Entries equal to -INFINITY become exactly 0, as long as the row holds
 * at least one finite entry. Two exceptions, both following from the
 * formula: a row whose entries are ALL -INFINITY becomes all NaN (its max
 * is -inf, and -inf - -inf is NaN); a row holding +INFINITY becomes all
 * NaN (+inf - +inf is NaN). NaN in a row makes the row NaN. */
int softmax_rows(float *X, int rows, int cols);

/* Scaled dot-product attention for one head.
 *   weights = softmax(Q K^T / sqrt(d_k))      weights (T, T)
 *   out     = weights V                       out     (T, d_v)
 * Q (T, d_k), K (T, d_k), V (T, d_v). Row t of weights says how much
 * query t takes from each key; each row sums to 1. */
int attention(const float *Q, const float *K, const float *V, float *out,
              float *weights, int T, int d_k, int d_v);

/* ---------------------------------------------------------------------
 * Chapter 2: causal masking
 * ------------------------------------------------------------------- */

/* Hide the future: scores[i][j] <- -INFINITY for every j > i.
 * scores (T, T). Entries with j <= i are left as they are. */
int causal_mask(float *scores, int T);

/* Causal scaled dot-product attention: as attention(), but query t sees
 * only keys 0..t.  weights[i][j] is exactly 0.0f for j > i.
 * Q (T, d_k), K (T, d_k), V (T, d_v), out (T, d_v), weights (T, T).
 * Row t of out and of weights depends on rows 0..t of K and V only, bit
 * for bit: changing rows t+1.. of K and V leaves row t exactly as it was.
 * This holds because the masked scores are -INFINITY before the softmax,
 * so the row's max comes from keys 0..t, each future weight is exactly
 * exp(-inf) = 0, and adding an exact 0 (to the softmax's sum, or 0 * v to
 * an output) leaves a float sum unchanged. (Finite, non-NaN K and V.) */
int causal_attention(const float *Q, const float *K, const float *V, float *out,
                     float *weights, int T, int d_k, int d_v);

#endif
