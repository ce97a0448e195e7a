/*
 * ch2_causal.c: chapter 2, causal masking.
 * Reference solutions. The starter file of the same name holds the stubs.
 *
 * A model that writes text one token at a time must not let token t look
 * at tokens it has not written yet. This file hides those future tokens:
 * first in a score matrix, then inside scaled dot-product attention. It
 * builds on chapter 1 (matmul_bt, softmax_rows, matmul) and adds no
 * faster variant; the loop-bound version the book measures lives in
 * tools/runs/plotdata/ch2.c, checked there against this one.
 *
 * Dimension letters (see attention.h):
 *   T = tokens, d_k = query/key width, d_v = value width.
 *   i = the query (row), j = the key (column) of a (T, T) matrix.
 */
#include "attention.h"

#include <math.h>

/* @listing causal_mask */
/* scores[i][j] <- -INFINITY for j > i; the rest is left alone.
 * scores (T, T). */
int causal_mask(float *scores, int T)
{
    if (!scores)
        return KIT_E_NULL;
    if (T <= 0)
        return KIT_E_SIZE;
    for (int i = 0; i < T; i++) {
        /* the keys after query i are its future */
        for (int j = i + 1; j < T; j++)
            scores[i * T + j] = -INFINITY;
    }
    return KIT_OK;
}
/* @end causal_mask */

/* @listing causal_attention */
/* weights = softmax(mask(Q K^T / sqrt(d_k))),  out = weights V,
 * where mask sets entry [i][j] to -INFINITY for j > i.
 * Q (T, d_k), K (T, d_k), V (T, d_v), out (T, d_v), weights (T, T). */
int causal_attention(const float *Q, const float *K, const float *V, float *out,
                     float *weights, int T, int d_k, int d_v)
{
    if (!Q || !K || !V || !out || !weights)
        return KIT_E_NULL;
    if (T <= 0 || d_k <= 0 || d_v <= 0)
        return KIT_E_SIZE;
    /* 1. scores: weights[i][j] = q_i . k_j / sqrt(d_k) */
    matmul_bt(Q, K, weights, T, d_k, T);
    const float scale = 1.0f / sqrtf((float)d_k);
    for (int i = 0; i < T * T; i++)
        weights[i] *= scale;
    /* 2. hide the future, BEFORE the softmax: exp(-inf) is exactly 0 */
    causal_mask(weights, T);
    /* 3. row i becomes a distribution over keys 0..i, summing to 1 */
    softmax_rows(weights, T, T);
    /* 4. out row i averages value rows 0..i only */
    matmul(weights, V, out, T, T, d_v);
    return KIT_OK;
}
/* @end causal_attention */
