/*
 * grad.h: chapter 4, gradients through attention (backward passes).
 *
 * Dimension letters, as in attention.h and mha.h:
 *   T = tokens, d_k = query/key width, d_v = value width,
 *   d_model = embedding width, h = heads, d_head = d_model / h,
 *   m, n, p = the sizes of a plain product (m,n) x (n,p).
 *
 * Conventions, the same for every function here:
 *   - A name d_X is the gradient of the loss with respect to X, with X's
 *     shape.
 *   - Backward passes ACCUMULATE: they add into d_X (d_X += ...), so a
 *     tensor used twice receives both contributions. Callers zero the
 *     gradient buffers before a backward pass.
 *   - Each backward pass mirrors its forward pass, step for step, in
 *     reverse.
 *   - Return KIT_OK, KIT_E_NULL or KIT_E_SIZE, as the forward passes do;
 *     KIT_E_NOMEM when scratch space cannot be allocated (attention and
 *     the multi-head layer), and KIT_E_HEADS for an impossible layer.
 */
#ifndef GRAD_H
#define GRAD_H

#include "kit.h"
#include "mha.h"

/* C = A B, backward.  A (m, n), B (n, p), d_C (m, p).
 *   d_A += d_C B^T   (m, n)      d_B += A^T d_C   (n, p)
 * d_A or d_B may be NULL when that gradient is not wanted; both NULL is
 * no error (KIT_OK, nothing computed). A, B and d_C NULL: KIT_E_NULL;
 * m, n or p <= 0: KIT_E_SIZE. */
int matmul_backward(const float *A, const float *B, const float *d_C,
                    float *d_A, float *d_B, int m, int n, int p);

/* Y = softmax_rows(X), backward, from the output Y.  Y, d_Y, d_X (rows, cols).
 *   d_X[r][c] += Y[r][c] * (d_Y[r][c] - sum_j d_Y[r][j] Y[r][j])
 * Y, d_Y or d_X NULL: KIT_E_NULL; rows or cols <= 0: KIT_E_SIZE. */
int softmax_rows_backward(const float *Y, const float *d_Y, float *d_X,
                          int rows, int cols);

/* causal_mask() backward: a masked score does not reach the loss, so its
 * gradient is 0.  d_scores (T, T): d_scores[i][j] <- 0 for j > i.
 * Like causal_mask() itself, it works in place: the one backward pass
 * here that edits its buffer instead of adding into it. d_scores NULL:
 * KIT_E_NULL; T <= 0: KIT_E_SIZE. */
int causal_mask_backward(float *d_scores, int T);

/* attention() (causal = 0) or causal_attention() (causal != 0), backward.
 * Inputs: Q (T, d_k), K (T, d_k), V (T, d_v), weights (T, T) as the
 * forward pass wrote them, d_out (T, d_v).
 * Adds into: d_Q (T, d_k), d_K (T, d_k), d_V (T, d_v).
 * Every pointer is required: any of them NULL, d_Q, d_K and d_V
 * included, is KIT_E_NULL. T, d_k or d_v <= 0: KIT_E_SIZE; KIT_E_NOMEM
 * when its scratch cannot be allocated. On an error it writes nothing. */
int attention_backward(const float *Q, const float *K, const float *V,
                       const float *weights, const float *d_out, float *d_Q,
                       float *d_K, float *d_V, int T, int d_k, int d_v,
                       int causal);

/* mha_forward() backward. Recomputes what it needs from X and w.
 * On KIT_E_NOMEM (scratch space could not be allocated) d_X and d_w may
 * already hold part of the sums: the one case where an error writes.
 * X (T, d_model), d_out (T, d_model).
 * Adds into: d_X (T, d_model, may be NULL) and the four matrices of d_w
 * (each (d_model, d_model), laid out as in mha.h). cfg, w, X, d_out, d_w
 * or any of the eight matrices NULL: KIT_E_NULL. */
int mha_backward(const struct mha_config *cfg, const struct mha_weights *w,
                 const float *X, const float *d_out, float *d_X,
                 struct mha_weights *d_w, int T);

#endif
