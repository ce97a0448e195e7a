/*
 * ch3_mha.c: chapter 3, multi-head attention.
 * Reference solutions. The starter file of the same name holds the stubs.
 *
 * A multi-head layer runs n_heads small attentions side by side, each on
 * its own d_head = d_model / n_heads wide slice of the projections, then
 * mixes their outputs with one more matrix, W_o. This file writes the
 * layer twice: mha_forward() loops over heads with per-head matrices cut
 * out of the fused ones; mha_forward_fused() projects once and lets each
 * head read its own columns. The tests check that the two agree.
 *
 * Dimension letters (see mha.h):
 *   T = tokens, d_model = embedding width, h = n_heads,
 *   d_head = d_model / n_heads.
 * Weight layout: head i owns columns i*d_head .. (i+1)*d_head - 1 of
 * W_q, W_k and W_v, and rows i*d_head .. (i+1)*d_head - 1 of W_o.
 */
#include "attention.h"
#include "mha.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Checking a configuration, cutting out one head
 * ------------------------------------------------------------------- */

/* @listing mha_check_config */
/* KIT_OK iff cfg != NULL, d_model > 0, n_heads > 0 and
 * d_model % n_heads == 0. */
int mha_check_config(const struct mha_config *cfg)
{
    if (!cfg)
        return KIT_E_NULL;
    if (cfg->d_model <= 0 || cfg->n_heads <= 0)
        return KIT_E_SIZE;
    if (cfg->d_model % cfg->n_heads != 0)
        return KIT_E_HEADS; /* d_head would not be a whole number */
    return KIT_OK;
}
/* @end mha_check_config */

/* @listing mha_head_slice */
/* W_i[r][c] = W[r][i*d_head + c]: head i's contiguous column block.
 * W (d_model, d_model), W_i (d_model, d_head). */
int mha_head_slice(const float *W, float *W_i, int d_model, int n_heads, int i)
{
    if (!W || !W_i)
        return KIT_E_NULL;
    struct mha_config cfg = {d_model, n_heads, 0};
    int rc = mha_check_config(&cfg);
    if (rc != KIT_OK)
        return rc;
    if (i < 0 || i >= n_heads)
        return KIT_E_HEADS; /* there is no head i */
    const int d_head = d_model / n_heads;
    for (int r = 0; r < d_model; r++)
        for (int c = 0; c < d_head; c++)
            W_i[r * d_head + c] = W[r * d_model + i * d_head + c];
    return KIT_OK;
}
/* @end mha_head_slice */

/* The checks both forward functions start with: pointers, config, T. */
static int check_forward(const struct mha_config *cfg,
                         const struct mha_weights *w, const float *X,
                         const float *out, const float *weights, int T)
{
    if (!cfg || !w || !X || !out || !weights)
        return KIT_E_NULL;
    if (!w->W_q || !w->W_k || !w->W_v || !w->W_o)
        return KIT_E_NULL;
    int rc = mha_check_config(cfg);
    if (rc != KIT_OK)
        return rc;
    return T > 0 ? KIT_OK : KIT_E_SIZE;
}

/* ---------------------------------------------------------------------
 * The loop over heads
 * ------------------------------------------------------------------- */

/* @listing mha_forward */
/* for each head i: head_i = attention(X W_q^i, X W_k^i, X W_v^i);
 * out = concat(head_0, ..., head_{h-1}) W_o.
 * X (T, d_model), out (T, d_model), weights (h, T, T). */
int mha_forward(const struct mha_config *cfg, const struct mha_weights *w,
                const float *X, float *out, float *weights, int T)
{
    int rc = check_forward(cfg, w, X, out, weights, T);
    if (rc != KIT_OK)
        return rc;
    const int d_model = cfg->d_model, n_heads = cfg->n_heads;
    const int d_head = d_model / n_heads;
    const size_t wsz = (size_t)d_model * d_head, tsz = (size_t)T * d_head;
    const size_t csz = (size_t)T * d_model;
    /* scratch: one head's three weight slices and its Q, K, V, output */
    float *W_qi = malloc(wsz * sizeof *W_qi);     /* (d_model, d_head) */
    float *W_ki = malloc(wsz * sizeof *W_ki);     /* (d_model, d_head) */
    float *W_vi = malloc(wsz * sizeof *W_vi);     /* (d_model, d_head) */
    float *Q_i = malloc(tsz * sizeof *Q_i);       /* (T, d_head) */
    float *K_i = malloc(tsz * sizeof *K_i);       /* (T, d_head) */
    float *V_i = malloc(tsz * sizeof *V_i);       /* (T, d_head) */
    float *head_i = malloc(tsz * sizeof *head_i); /* (T, d_head) */
    float *concat = malloc(csz * sizeof *concat); /* (T, d_model) */
    if (!W_qi || !W_ki || !W_vi || !Q_i || !K_i || !V_i || !head_i || !concat) {
        rc = KIT_E_NOMEM;
        goto done;
    }
    for (int i = 0; i < n_heads; i++) {
        float *weights_i = weights + (size_t)i * T * T; /* (T, T) */
        /* 1. head i's own projections, cut out of the fused ones */
        mha_head_slice(w->W_q, W_qi, d_model, n_heads, i);
        mha_head_slice(w->W_k, W_ki, d_model, n_heads, i);
        mha_head_slice(w->W_v, W_vi, d_model, n_heads, i);
        /* 2. project: Q_i = X W_q^i, K_i = X W_k^i, V_i = X W_v^i */
        matmul(X, W_qi, Q_i, T, d_model, d_head);
        matmul(X, W_ki, K_i, T, d_model, d_head);
        matmul(X, W_vi, V_i, T, d_model, d_head);
        /* 3. attend: chapter 1 (or chapter 2 when causal), width d_head */
        if (cfg->causal)
            causal_attention(Q_i, K_i, V_i, head_i, weights_i, T, d_head,
                             d_head);
        else
            attention(Q_i, K_i, V_i, head_i, weights_i, T, d_head, d_head);
        /* 4. concatenate: head i fills columns i*d_head.. of concat */
        for (int t = 0; t < T; t++)
            for (int c = 0; c < d_head; c++)
                concat[t * d_model + i * d_head + c] = head_i[t * d_head + c];
    }
    /* 5. mix the heads: out = concat W_o */
    matmul(concat, w->W_o, out, T, d_model, d_model);
done:
    free(W_qi), free(W_ki), free(W_vi);
    free(Q_i), free(K_i), free(V_i), free(head_i), free(concat);
    return rc;
}
/* @end mha_forward */

/* ---------------------------------------------------------------------
 * The fused form
 * ------------------------------------------------------------------- */

/* @listing mha_forward_fused */
/* Q = X W_q, K = X W_k, V = X W_v once for all heads; head i reads
 * columns i*d_head .. (i+1)*d_head - 1 of each. out = concat W_o.
 * X (T, d_model), out (T, d_model), weights (h, T, T). */
int mha_forward_fused(const struct mha_config *cfg, const struct mha_weights *w,
                      const float *X, float *out, float *weights, int T)
{
    int rc = check_forward(cfg, w, X, out, weights, T);
    if (rc != KIT_OK)
        return rc;
    const int d_model = cfg->d_model, n_heads = cfg->n_heads;
    const int d_head = d_model / n_heads;
    const size_t tsz = (size_t)T * d_model;
    float *Q = malloc(tsz * sizeof *Q);           /* (T, d_model) */
    float *K = malloc(tsz * sizeof *K);           /* (T, d_model) */
    float *V = malloc(tsz * sizeof *V);           /* (T, d_model) */
    float *concat = malloc(tsz * sizeof *concat); /* (T, d_model) */
    if (!Q || !K || !V || !concat) {
        rc = KIT_E_NOMEM;
        goto done;
    }
    /* 1. project once: three (T, d_model) x (d_model, d_model) products */
    matmul(X, w->W_q, Q, T, d_model, d_model);
    matmul(X, w->W_k, K, T, d_model, d_model);
    matmul(X, w->W_v, V, T, d_model, d_model);
    const float scale = 1.0f / sqrtf((float)d_head);
    for (int i = 0; i < n_heads; i++) {
        float *att = weights + (size_t)i * T * T; /* (T, T) head i */
        const int off = i * d_head;               /* head i's first column */
        for (int t = 0; t < T; t++) {
            const float *q_t = Q + t * d_model + off; /* (d_head) */
            /* 2. scores of query t against every key, scaled */
            for (int j = 0; j < T; j++) {
                const float *k_j = K + j * d_model + off; /* (d_head) */
                float s = 0.0f;
                for (int c = 0; c < d_head; c++)
                    s += q_t[c] * k_j[c];
                att[t * T + j] = s * scale;
            }
            /* 3. causal: query t must not see keys j > t */
            for (int j = t + 1; cfg->causal && j < T; j++)
                att[t * T + j] = -INFINITY;
        }
        /* 4. each query's scores become a distribution over keys */
        softmax_rows(att, T, T);
        /* 5. weighted sum of values, written straight into the
         *    concatenation: this is where the heads are concatenated */
        for (int t = 0; t < T; t++) {
            float *out_t = concat + t * d_model + off; /* (d_head) */
            for (int c = 0; c < d_head; c++) {
                float s = 0.0f;
                for (int j = 0; j < T; j++)
                    s += att[t * T + j] * V[j * d_model + off + c];
                out_t[c] = s;
            }
        }
    }
    /* 6. mix the heads: out = concat W_o */
    matmul(concat, w->W_o, out, T, d_model, d_model);
done:
    free(Q), free(K), free(V), free(concat);
    return rc;
}
/* @end mha_forward_fused */
