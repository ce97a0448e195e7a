/*
 * ch1_attention.c: chapter 1, scaled dot-product attention for one head.
 * Reference solutions. The starter file of the same name holds the stubs.
 *
 * Dimension letters (see attention.h):
 *   T = tokens, d_k = query/key width, d_v = value width,
 *   m, n, p = the sizes of a plain product (m,n) x (n,p).
 */
#include "attention.h"

#include <math.h>

/* @listing matmul */
/* C = A B.  A (m, n), B (n, p), C (m, p). */
int matmul(const float *A, const float *B, float *C, int m, int n, int p)
{
    if (!A || !B || !C)
        return KIT_E_NULL;
    if (m <= 0 || n <= 0 || p <= 0)
        return KIT_E_SIZE;
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < p; j++) {
            float sum = 0.0f; /* a fresh sum for every entry */
            for (int k = 0; k < n; k++)
                sum += A[i * n + k] * B[k * p + j];
            C[i * p + j] = sum;
        }
    }
    return KIT_OK;
}
/* @end matmul */

/* @listing matmul_bt */
/* C = A B^T.  A (m, n), B (p, n), C (m, p).
 * Row j of B is column j of B^T, so both operands are read along rows. */
int matmul_bt(const float *A, const float *B, float *C, int m, int n, int p)
{
    if (!A || !B || !C)
        return KIT_E_NULL;
    if (m <= 0 || n <= 0 || p <= 0)
        return KIT_E_SIZE;
    for (int i = 0; i < m; i++) {
        const float *a_i = A + i * n;
        for (int j = 0; j < p; j++) {
            const float *b_j = B + j * n;
            float sum = 0.0f;
            for (int k = 0; k < n; k++)
                sum += a_i[k] * b_j[k];
            C[i * p + j] = sum;
        }
    }
    return KIT_OK;
}
/* @end matmul_bt */

/* @listing softmax_rows */
/* X[r][c] <- exp(X[r][c] - max_r) / sum_c exp(X[r][c] - max_r), per row.
 * X (rows, cols). */
int softmax_rows(float *X, int rows, int cols)
{
    if (!X)
        return KIT_E_NULL;
    if (rows <= 0 || cols <= 0)
        return KIT_E_SIZE;
    for (int r = 0; r < rows; r++) {
        float *x_r = X + r * cols;
        /* 1. the row's largest entry */
        float max = x_r[0];
        for (int c = 1; c < cols; c++)
            if (x_r[c] > max)
                max = x_r[c];
        /* 2. exponentials of x - max: all in (0, 1], so none overflows */
        float sum = 0.0f;
        for (int c = 0; c < cols; c++) {
            x_r[c] = expf(x_r[c] - max);
            sum += x_r[c];
        }
        /* 3. normalise so the row sums to 1 */
        for (int c = 0; c < cols; c++)
            x_r[c] /= sum;
    }
    return KIT_OK;
}
/* @end softmax_rows */

/* @listing attention */
/* weights = softmax(Q K^T / sqrt(d_k)),  out = weights V.
 * Q (T, d_k), K (T, d_k), V (T, d_v), out (T, d_v), weights (T, T). */
int attention(const float *Q, const float *K, const float *V, float *out,
              float *weights, int T, int d_k, int d_v)
{
    if (!Q || !K || !V || !out || !weights)
        return KIT_E_NULL;
    if (T <= 0 || d_k <= 0 || d_v <= 0)
        return KIT_E_SIZE;
    /* 1. scores: weights[i][j] = q_i . k_j */
    matmul_bt(Q, K, weights, T, d_k, T);
    /* 2. scale, so the scores' spread does not grow with d_k */
    const float scale = 1.0f / sqrtf((float)d_k);
    for (int i = 0; i < T * T; i++)
        weights[i] *= scale;
    /* 3. each query's scores become a probability distribution */
    softmax_rows(weights, T, T);
    /* 4. each output row is a weighted average of the value rows */
    matmul(weights, V, out, T, T, d_v);
    return KIT_OK;
}
/* @end attention */
