/*
 * ch4_grad.c: chapter 4, gradients through attention (backward passes).
 * YOUR FILE. Replace each stub's body, then run: make test CH=4
 *
 * Dimension letters (see grad.h):
 *   T = tokens, d_k = query/key width, d_v = value width,
 *   d_model = embedding width, h = heads, d_head = d_model / h,
 *   m, n, p = the sizes of a plain product (m,n) x (n,p).
 * A name d_X is the gradient of the loss with respect to X (X's shape).
 *
 * The rules of every backward pass here:
 *   - walk the forward pass backwards, one numbered step at a time, and
 *     write above each step the forward line it differentiates;
 *   - ADD into the d_ buffers (d_X[i] += ...), never assign: the caller
 *     zeroes them, and a tensor used twice must collect both gradients;
 *   - check the arguments first: a NULL pointer returns KIT_E_NULL, a
 *     size <= 0 returns KIT_E_SIZE, and then nothing is written.
 */
#include "grad.h"

#include "attention.h"
#include "mha.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* @listing matmul_backward */
/* Exercise 4.1. C = A B, backward.  A (m, n), B (n, p), d_C (m, p).
 *   d_A += d_C B^T  (m, n),   d_B += A^T d_C  (n, p).
 * A[i][k] meets B[k][j] in every C[i][j], so d_A[i][k] sums
 * d_C[i][j] * B[k][j] over j, and d_B[k][j] sums A[i][k] * d_C[i][j]
 * over i. Skip d_A (or d_B) when it is NULL. */
int matmul_backward(const float *A, const float *B, const float *d_C,
                    float *d_A, float *d_B, int m, int n, int p)
{
    (void)A, (void)B, (void)d_C, (void)d_A, (void)d_B;
    (void)m, (void)n, (void)p;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end matmul_backward */

/* @listing softmax_rows_backward */
/* Exercise 4.2. Y = softmax_rows(X), backward.  Y, d_Y, d_X (rows, cols).
 *   d_X[r][c] += Y[r][c] * (d_Y[r][c] - sum_j d_Y[r][j] Y[r][j])
 * Per row: first the dot product of d_Y and Y, then one pass that adds.
 * Both terms matter: the diagonal one (d_Y[r][c]) and the shared sum. */
int softmax_rows_backward(const float *Y, const float *d_Y, float *d_X,
                          int rows, int cols)
{
    (void)Y, (void)d_Y, (void)d_X, (void)rows, (void)cols;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end softmax_rows_backward */

/* @listing causal_mask_backward */
/* Exercise 4.3. causal_mask() backward.  d_scores (T, T).
 *   d_scores[i][j] <- 0 for j > i; the rest passes unchanged.
 * The forward pass replaced those scores by a constant (-INFINITY), so
 * they no longer reach the loss. Write 0 here, not -INFINITY. */
int causal_mask_backward(float *d_scores, int T)
{
    (void)d_scores, (void)T;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end causal_mask_backward */

/* @listing attention_backward */
/* Exercise 4.4. attention() or causal_attention() (causal != 0), backward.
 * Q (T, d_k), K (T, d_k), V (T, d_v), weights (T, T), d_out (T, d_v).
 * Adds into d_Q (T, d_k), d_K (T, d_k), d_V (T, d_v).
 * calloc two (T, T) scratch matrices, d_weights and d_scores (return
 * KIT_E_NOMEM if that fails), then undo attention()'s steps 4 to 1:
 *   4. out = weights V         -> matmul_backward()
 *   3. softmax                 -> softmax_rows_backward()
 *   2b. the mask, if causal    -> causal_mask_backward()
 *   2. scores *= 1/sqrt(d_k)   -> d_scores *= the same scale
 *   1. scores = Q K^T          -> d_Q += d_scores K, d_K += d_scores^T Q
 * Free the scratch before returning. */
int attention_backward(const float *Q, const float *K, const float *V,
                       const float *weights, const float *d_out, float *d_Q,
                       float *d_K, float *d_V, int T, int d_k, int d_v,
                       int causal)
{
    (void)Q, (void)K, (void)V, (void)weights, (void)d_out;
    (void)d_Q, (void)d_K, (void)d_V, (void)T, (void)d_k, (void)d_v;
    (void)causal;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end attention_backward */

/* @listing mha_backward */
/* Exercise 4.5. mha_forward() backward. X (T, d_model), d_out (T, d_model).
 * Adds into d_X (T, d_model; may be NULL) and d_w's four matrices
 * (d_model, d_model). Check cfg with mha_check_config(), and every
 * pointer of w and d_w.
 * First run mha_forward()'s steps again, keeping every head's Q_i, K_i,
 * V_i, weights_i and the concatenation. Then, from step 5 down:
 *   5. out = concat W_o        -> matmul_backward() gives d_concat, d_W_o
 *   4. concat                  -> d_head_i is column block i of d_concat
 *   3. head_i = attention(...) -> attention_backward() (cfg->causal)
 *   2. Q_i = X W_q^i, K_i, V_i -> matmul_backward() three times; all of
 *      them add into the same d_X
 *   1. W_q^i = mha_head_slice() -> add d_W_q^i into column block i of
 *      d_w->W_q (and the same for W_k, W_v). */
int mha_backward(const struct mha_config *cfg, const struct mha_weights *w,
                 const float *X, const float *d_out, float *d_X,
                 struct mha_weights *d_w, int T)
{
    (void)cfg, (void)w, (void)X, (void)d_out, (void)d_X, (void)d_w, (void)T;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end mha_backward */
