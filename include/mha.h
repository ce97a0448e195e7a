/*
 * mha.h: chapter 3, multi-head attention.
 *
 * Dimension letters used in every shape comment:
 *   T       = number of tokens
 *   d_model = width of a token embedding, and of the layer's output
 *   h       = number of heads (n_heads)
 *   d_head  = d_model / n_heads, the width of one head's q, k and v
 *
 * Weight layout. The layer multiplies from the right: Q = X W_q.
 *   W_q, W_k, W_v (d_model, d_model). Head i owns the contiguous column
 *     block i*d_head .. (i+1)*d_head - 1, so W_q^i is that (d_model, d_head)
 *     block: the fused matrix is [W_q^0 | W_q^1 | ... | W_q^{h-1}].
 *   W_o (d_model, d_model). Row block i*d_head .. (i+1)*d_head - 1 is what
 *     head i's output is multiplied by, so
 *       out = concat(head_0, ..., head_{h-1}) W_o
 *           = sum_i head_i W_o[rows of block i].
 * There are no biases.
 *
 * PyTorch's torch.nn.MultiheadAttention(d_model, n_heads, bias=False)
 * holds the same numbers transposed:
 *   in_proj_weight = [W_q^T; W_k^T; W_v^T]  (3*d_model, d_model)
 *   out_proj.weight = W_o^T                 (d_model, d_model)
 *
 * All arrays are flat, row-major and caller-allocated (see kit.h).
 */
#ifndef MHA_H
#define MHA_H

#include "kit.h"

struct mha_config {
    int d_model; /* width of the embeddings, > 0                     */
    int n_heads; /* number of heads, > 0, and divides d_model        */
    int causal;  /* nonzero: query t sees keys 0..t only (chapter 2)  */
};

struct mha_weights {
    float *W_q; /* (d_model, d_model), column block i is W_q^i */
    float *W_k; /* (d_model, d_model), column block i is W_k^i */
    float *W_v; /* (d_model, d_model), column block i is W_v^i */
    float *W_o; /* (d_model, d_model), row block i meets head i */
};

/* ---------------------------------------------------------------------
 * Given code (given/mha_weights.c): not an exercise.
 * ------------------------------------------------------------------- */

/* Allocate the four matrices of w for cfg, zero-filled.
 * Returns KIT_OK, an error from mha_check_config(), or KIT_E_NOMEM. */
int mha_weights_alloc(struct mha_weights *w, const struct mha_config *cfg);

/* Free what mha_weights_alloc() allocated, and set the pointers to NULL. */
void mha_weights_free(struct mha_weights *w);

/* Fill w with random weights, uniform in [-1/sqrt(d_model), 1/sqrt(d_model)],
 * from a fixed seed: the same seed always gives the same weights.
 * Returns KIT_OK, KIT_E_NULL (w, cfg or a matrix is NULL) or KIT_E_SIZE. */
int mha_weights_randomize(struct mha_weights *w, const struct mha_config *cfg,
                          unsigned long long seed);

/* ---------------------------------------------------------------------
 * Chapter 3: the exercises
 * ------------------------------------------------------------------- */

/* KIT_OK when cfg describes a layer that can exist; otherwise
 * KIT_E_NULL (cfg is NULL), KIT_E_SIZE (d_model or n_heads not positive)
 * or KIT_E_HEADS (n_heads does not divide d_model). */
int mha_check_config(const struct mha_config *cfg);

/* Copy head i's column block out of a fused projection.
 * W (d_model, d_model) -> W_i (d_model, d_head).
 * Returns KIT_OK; KIT_E_NULL when W or W_i is NULL; KIT_E_SIZE when
 * d_model or n_heads is not positive; KIT_E_HEADS when n_heads does not
 * divide d_model or i is not a head (i < 0 or i >= n_heads). On an error
 * it writes nothing. */
int mha_head_slice(const float *W, float *W_i, int d_model, int n_heads, int i);

/* Multi-head attention, one head at a time:
 *   for each head i:  Q_i = X W_q^i, K_i = X W_k^i, V_i = X W_v^i
 *                     head_i = attention(Q_i, K_i, V_i)  (causal if set)
 *   out = concat(head_0, ..., head_{h-1}) W_o
 * X (T, d_model), out (T, d_model), weights (n_heads, T, T): head i's
 * attention weights are the T x T block starting at weights + i*T*T.
 * Returns KIT_OK; KIT_E_NULL for a NULL pointer (w's four matrices
 * included); an error of mha_check_config(); KIT_E_SIZE when T <= 0;
 * KIT_E_NOMEM when scratch space cannot be allocated. On an error it
 * writes nothing. */
int mha_forward(const struct mha_config *cfg, const struct mha_weights *w,
                const float *X, float *out, float *weights, int T);

/* The same layer, fused: Q = X W_q once for all heads, then head i reads
 * columns i*d_head .. (i+1)*d_head - 1 of Q, K and V. Must agree with
 * mha_forward() to float rounding. Same shapes as mha_forward(). */
int mha_forward_fused(const struct mha_config *cfg, const struct mha_weights *w,
                      const float *X, float *out, float *weights, int T);

#endif
