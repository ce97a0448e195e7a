/*
 * ch4_grad.c: chapter 4, gradients through attention (backward passes).
 * Reference solutions. The starter file of the same name holds the stubs.
 *
 * Each backward pass walks its forward pass in reverse. Its steps carry
 * the forward pass's step numbers, and each quotes the forward line it
 * differentiates. Every backward pass ADDS into its d_ buffers.
 *
 * Dimension letters (see grad.h):
 *   T = tokens, d_k = query/key width, d_v = value width,
 *   d_model = embedding width, h = heads, d_head = d_model / h,
 *   m, n, p = the sizes of a plain product (m,n) x (n,p).
 * A name d_X is the gradient of the loss with respect to X (X's shape).
 */
#include "grad.h"

#include "attention.h"
#include "mha.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * The building blocks
 * ------------------------------------------------------------------- */

/* @listing matmul_backward */
/* C = A B, backward.  A (m, n), B (n, p), d_C (m, p).
 *   d_A += d_C B^T  (m, n),   d_B += A^T d_C  (n, p).
 * d_A or d_B may be NULL: that gradient is skipped. */
int matmul_backward(const float *A, const float *B, const float *d_C,
                    float *d_A, float *d_B, int m, int n, int p)
{
    if (!A || !B || !d_C)
        return KIT_E_NULL;
    if (m <= 0 || n <= 0 || p <= 0)
        return KIT_E_SIZE;
    /* forward: C[i][j] = sum_k A[i][k] * B[k][j] */
    /* 1. A[i][k] meets B[k][j] in every C[i][j] of row i */
    if (d_A)
        for (int i = 0; i < m; i++)
            for (int k = 0; k < n; k++) {
                float sum = 0.0f;
                for (int j = 0; j < p; j++)
                    sum += d_C[i * p + j] * B[k * p + j];
                d_A[i * n + k] += sum;
            }
    /* 2. B[k][j] meets A[i][k] in every C[i][j] of column j. Row i of
     *    A and of d_C at a time (i outermost), so that the inner loop
     *    reads d_C and writes d_B along their rows */
    if (d_B)
        for (int i = 0; i < m; i++)
            for (int k = 0; k < n; k++) {
                const float a = A[i * n + k];
                for (int j = 0; j < p; j++)
                    d_B[k * p + j] += a * d_C[i * p + j];
            }
    return KIT_OK;
}
/* @end matmul_backward */

/* @listing softmax_rows_backward */
/* Y = softmax_rows(X), backward.  Y, d_Y, d_X (rows, cols).
 *   d_X[r][c] += Y[r][c] * (d_Y[r][c] - sum_j d_Y[r][j] Y[r][j]) */
int softmax_rows_backward(const float *Y, const float *d_Y, float *d_X,
                          int rows, int cols)
{
    if (!Y || !d_Y || !d_X)
        return KIT_E_NULL;
    if (rows <= 0 || cols <= 0)
        return KIT_E_SIZE;
    for (int r = 0; r < rows; r++) {
        const float *y_r = Y + r * cols, *d_y_r = d_Y + r * cols;
        float *d_x_r = d_X + r * cols;
        /* 3. "x_r[c] /= sum": every output shares the row's sum, so
         *    each input feels every output: dot = sum_j d_y[j] y[j] */
        float dot = 0.0f;
        for (int c = 0; c < cols; c++)
            dot += d_y_r[c] * y_r[c];
        /* 2. "x_r[c] = expf(x_r[c] - max)": d exp(x) = exp(x) dx, and
         *    the diagonal term d_y[c] y[c] is the direct path
         * 1. "max": a constant shift, so it passes no gradient */
        for (int c = 0; c < cols; c++)
            d_x_r[c] += y_r[c] * (d_y_r[c] - dot);
    }
    return KIT_OK;
}
/* @end softmax_rows_backward */

/* @listing causal_mask_backward */
/* causal_mask() backward.  d_scores (T, T).
 *   d_scores[i][j] <- 0 for j > i; the rest passes unchanged. */
int causal_mask_backward(float *d_scores, int T)
{
    if (!d_scores)
        return KIT_E_NULL;
    if (T <= 0)
        return KIT_E_SIZE;
    /* forward: "scores[i][j] = -INFINITY for j > i": a constant, so
     * the score that was there no longer reaches the loss */
    for (int i = 0; i < T; i++) {
        float *d_s_i = d_scores + i * T;
        for (int j = i + 1; j < T; j++)
            d_s_i[j] = 0.0f;
    }
    return KIT_OK;
}
/* @end causal_mask_backward */

/* ---------------------------------------------------------------------
 * One head of attention
 * ------------------------------------------------------------------- */

/* @listing attention_backward */
/* attention() or causal_attention() (causal != 0), backward.
 * Q (T, d_k), K (T, d_k), V (T, d_v), weights (T, T), d_out (T, d_v).
 * Adds into d_Q (T, d_k), d_K (T, d_k), d_V (T, d_v). */
int attention_backward(const float *Q, const float *K, const float *V,
                       const float *weights, const float *d_out, float *d_Q,
                       float *d_K, float *d_V, int T, int d_k, int d_v,
                       int causal)
{
    if (!Q || !K || !V || !weights || !d_out || !d_Q || !d_K || !d_V)
        return KIT_E_NULL;
    if (T <= 0 || d_k <= 0 || d_v <= 0)
        return KIT_E_SIZE;
    /* two zeroed scratch matrices (T, T): the backward passes add */
    float *d_weights = calloc((size_t)T * (size_t)T, sizeof(float));
    float *d_scores = calloc((size_t)T * (size_t)T, sizeof(float));
    if (!d_weights || !d_scores) {
        free(d_weights);
        free(d_scores);
        return KIT_E_NOMEM;
    }
    /* 4. "matmul(weights, V, out, T, T, d_v)" */
    matmul_backward(weights, V, d_out, d_weights, d_V, T, T, d_v);
    /* 3. "softmax_rows(weights, T, T)" */
    softmax_rows_backward(weights, d_weights, d_scores, T, T);
    /* 2b. causal_attention's step 2, "causal_mask(weights, T)" */
    if (causal)
        causal_mask_backward(d_scores, T);
    /* 2. "weights[i] *= scale" */
    const float scale = 1.0f / sqrtf((float)d_k);
    for (int i = 0; i < T * T; i++)
        d_scores[i] *= scale;
    /* 1. "matmul_bt(Q, K, weights, T, d_k, T)": score[i][j] = q_i . k_j
     *    d_Q = d_scores K,  d_K = d_scores^T Q */
    for (int i = 0; i < T; i++)
        for (int c = 0; c < d_k; c++) {
            float sum = 0.0f;
            for (int j = 0; j < T; j++)
                sum += d_scores[i * T + j] * K[j * d_k + c];
            d_Q[i * d_k + c] += sum;
        }
    /*    d_K by rows of d_scores (i outermost), as matmul_backward's d_B,
     *    so that the inner loop runs along rows of Q and of d_K */
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            const float s = d_scores[i * T + j];
            for (int c = 0; c < d_k; c++)
                d_K[j * d_k + c] += s * Q[i * d_k + c];
        }
    free(d_weights);
    free(d_scores);
    return KIT_OK;
}
/* @end attention_backward */

/* ---------------------------------------------------------------------
 * The multi-head layer
 * ------------------------------------------------------------------- */

/* @listing mha_backward */
/* mha_head_slice() backward: the slice copied column block i of W, so
 * its gradient goes back into that block.
 * d_W_i (d_model, d_head) is added into d_W (d_model, d_model). */
static void mha_head_slice_backward(const float *d_W_i, float *d_W, int d_model,
                                    int d_head, int i)
{
    for (int r = 0; r < d_model; r++)
        for (int c = 0; c < d_head; c++)
            d_W[r * d_model + i * d_head + c] += d_W_i[r * d_head + c];
}

/* mha_forward() backward. X (T, d_model), d_out (T, d_model).
 * Adds into d_X (T, d_model; may be NULL) and d_w's four matrices
 * (d_model, d_model). Recomputes the forward pass from X and w. */
int mha_backward(const struct mha_config *cfg, const struct mha_weights *w,
                 const float *X, const float *d_out, float *d_X,
                 struct mha_weights *d_w, int T)
{
    if (!cfg || !w || !X || !d_out || !d_w)
        return KIT_E_NULL;
    if (!w->W_q || !w->W_k || !w->W_v || !w->W_o || !d_w->W_q || !d_w->W_k ||
        !d_w->W_v || !d_w->W_o)
        return KIT_E_NULL;
    int rc = mha_check_config(cfg);
    if (rc != KIT_OK)
        return rc;
    if (T <= 0)
        return KIT_E_SIZE;
    const int d_model = cfg->d_model, n_heads = cfg->n_heads;
    const int d_head = d_model / n_heads;
    const size_t wsz = (size_t)d_model * d_head, tsz = (size_t)T * d_head;
    const size_t csz = (size_t)T * d_model, asz = (size_t)T * T;
    /* one zeroed block of scratch, cut into named pieces */
    float *buf =
        calloc(3 * n_heads * tsz + n_heads * asz + 2 * csz + 4 * tsz + 6 * wsz,
               sizeof *buf);
    if (!buf)
        return KIT_E_NOMEM;
    float *Q = buf;                          /* (h, T, d_head): every Q_i */
    float *K = Q + n_heads * tsz;            /* (h, T, d_head): every K_i */
    float *V = K + n_heads * tsz;            /* (h, T, d_head): every V_i */
    float *weights = V + n_heads * tsz;      /* (h, T, T): every weights_i */
    float *concat = weights + n_heads * asz; /* (T, d_model) */
    float *d_concat = concat + csz;          /* (T, d_model) */
    float *head = d_concat + csz; /* (T, d_head): head_i, later d_head_i */
    float *d_Q_i = head + tsz;    /* (T, d_head) */
    float *d_K_i = d_Q_i + tsz;   /* (T, d_head) */
    float *d_V_i = d_K_i + tsz;   /* (T, d_head) */
    float *W_qi = d_V_i + tsz;    /* (d_model, d_head), and the 5 below */
    float *W_ki = W_qi + wsz, *W_vi = W_ki + wsz;
    float *d_W_qi = W_vi + wsz, *d_W_ki = d_W_qi + wsz;
    float *d_W_vi = d_W_ki + wsz;

    /* ---- mha_forward's steps 1-4 again, keeping every head's Q_i, K_i,
     *      V_i, weights_i and the concatenation for the way back ---- */
    for (int i = 0; i < n_heads; i++) {
        float *Q_i = Q + i * tsz, *K_i = K + i * tsz, *V_i = V + i * tsz;
        float *weights_i = weights + i * asz;
        mha_head_slice(w->W_q, W_qi, d_model, n_heads, i); /* 1. */
        mha_head_slice(w->W_k, W_ki, d_model, n_heads, i);
        mha_head_slice(w->W_v, W_vi, d_model, n_heads, i);
        matmul(X, W_qi, Q_i, T, d_model, d_head); /* 2. */
        matmul(X, W_ki, K_i, T, d_model, d_head);
        matmul(X, W_vi, V_i, T, d_model, d_head);
        rc = cfg->causal /* 3. (it can run out of scratch memory) */
                 ? causal_attention(Q_i, K_i, V_i, head, weights_i, T, d_head,
                                    d_head)
                 : attention(Q_i, K_i, V_i, head, weights_i, T, d_head, d_head);
        if (rc != KIT_OK) {
            free(buf); /* nothing written yet */
            return rc;
        }
        for (int t = 0; t < T; t++) /* 4. */
            for (int c = 0; c < d_head; c++)
                concat[t * d_model + i * d_head + c] = head[t * d_head + c];
    }

    /* ---- backward, from step 5 down to step 1 ---- */
    /* 5. "matmul(concat, w->W_o, out, T, d_model, d_model)" */
    matmul_backward(concat, w->W_o, d_out, d_concat, d_w->W_o, T, d_model,
                    d_model);
    for (int i = 0; i < n_heads; i++) {
        const float *Q_i = Q + i * tsz, *K_i = K + i * tsz;
        const float *V_i = V + i * tsz, *weights_i = weights + i * asz;
        /* 4. "concat[t * d_model + i * d_head + c] = head[...]":
         *    d_head_i is column block i of d_concat */
        for (int t = 0; t < T; t++)
            for (int c = 0; c < d_head; c++)
                head[t * d_head + c] = d_concat[t * d_model + i * d_head + c];
        /* 3. "attention(Q_i, K_i, V_i, head, weights_i, ...)" */
        memset(d_Q_i, 0, 3 * tsz * sizeof *d_Q_i); /* d_Q_i, d_K_i, d_V_i */
        rc = attention_backward(Q_i, K_i, V_i, weights_i, head, d_Q_i, d_K_i,
                                d_V_i, T, d_head, d_head, cfg->causal);
        if (rc != KIT_OK) {
            free(buf); /* out of memory: d_w and d_X hold partial sums */
            return rc;
        }
        /* 2. "matmul(X, W_qi, Q_i, T, d_model, d_head)", and K_i, V_i.
         *    X is used 3 * n_heads times: d_X adds up every use */
        mha_head_slice(w->W_q, W_qi, d_model, n_heads, i);
        mha_head_slice(w->W_k, W_ki, d_model, n_heads, i);
        mha_head_slice(w->W_v, W_vi, d_model, n_heads, i);
        memset(d_W_qi, 0, 3 * wsz * sizeof *d_W_qi); /* the three d_W_?i */
        matmul_backward(X, W_qi, d_Q_i, d_X, d_W_qi, T, d_model, d_head);
        matmul_backward(X, W_ki, d_K_i, d_X, d_W_ki, T, d_model, d_head);
        matmul_backward(X, W_vi, d_V_i, d_X, d_W_vi, T, d_model, d_head);
        /* 1. "mha_head_slice(w->W_q, W_qi, d_model, n_heads, i)", and
         *    W_k, W_v: each slice's gradient goes back to its block */
        mha_head_slice_backward(d_W_qi, d_w->W_q, d_model, d_head, i);
        mha_head_slice_backward(d_W_ki, d_w->W_k, d_model, d_head, i);
        mha_head_slice_backward(d_W_vi, d_w->W_v, d_model, d_head, i);
    }
    free(buf);
    return KIT_OK;
}
/* @end mha_backward */
