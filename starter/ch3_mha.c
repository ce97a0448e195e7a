/*
 * ch3_mha.c: chapter 3, multi-head attention.
 * YOUR FILE. Replace each stub's body, then run: make test CH=3
 *
 * A multi-head layer runs n_heads small attentions side by side, each on
 * its own d_head = d_model / n_heads wide slice of the projections, then
 * mixes their outputs with one more matrix, W_o. You write the layer
 * twice: mha_forward() loops over heads with per-head matrices cut out of
 * the fused ones; mha_forward_fused() projects once and lets each head
 * read its own columns. The tests check that the two agree.
 *
 * Dimension letters (see mha.h):
 *   T = tokens, d_model = embedding width, h = n_heads,
 *   d_head = d_model / n_heads.
 * Weight layout: head i owns columns i*d_head .. (i+1)*d_head - 1 of
 * W_q, W_k and W_v, and rows i*d_head .. (i+1)*d_head - 1 of W_o.
 * Your chapter 1 and 2 functions (attention.h) are there to be used.
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
/* Exercise 3.1. KIT_OK iff cfg != NULL, d_model > 0, n_heads > 0 and
 * d_model % n_heads == 0. Otherwise KIT_E_NULL, KIT_E_SIZE or
 * KIT_E_HEADS, checked in that order. Test with n_heads = 0 before you
 * take d_model % n_heads: a remainder by zero crashes. */
int mha_check_config(const struct mha_config *cfg)
{
    (void)cfg;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end mha_check_config */

/* @listing mha_head_slice */
/* Exercise 3.2. W_i[r][c] = W[r][i*d_head + c]: head i's contiguous
 * column block.  W (d_model, d_model), W_i (d_model, d_head).
 * Check the pointers, then the config (mha_check_config()), then i:
 * a head index outside 0 .. n_heads-1 returns KIT_E_HEADS. Head i's
 * columns sit side by side, not every n_heads-th column. */
int mha_head_slice(const float *W, float *W_i, int d_model, int n_heads, int i)
{
    (void)W, (void)W_i, (void)d_model, (void)n_heads, (void)i;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end mha_head_slice */

/* ---------------------------------------------------------------------
 * The loop over heads
 * ------------------------------------------------------------------- */

/* @listing mha_forward */
/* Exercise 3.3. for each head i: head_i = attention(X W_q^i, X W_k^i,
 * X W_v^i), causal_attention() when cfg->causal is set;
 * out = concat(head_0, ..., head_{h-1}) W_o.
 * X (T, d_model), out (T, d_model), weights (h, T, T): head i writes its
 * (T, T) weights at weights + i*T*T.
 * First check everything (NULLs, mha_check_config(), T > 0) and write
 * nothing on error; malloc scratch for W_q^i, W_k^i, W_v^i
 * (d_model, d_head), Q_i, K_i, V_i, head_i (T, d_head) and concat
 * (T, d_model), returning KIT_E_NOMEM (after freeing) if one fails.
 * Then, for each head i:
 *   1. cut head i's W_q^i, W_k^i, W_v^i out of W_q, W_k, W_v
 *      (mha_head_slice());
 *   2. project: Q_i = X W_q^i, K_i = X W_k^i, V_i = X W_v^i (matmul());
 *   3. attend: attention() (causal_attention() when cfg->causal), whose
 *      width d_head makes it scale by 1/sqrt(d_head), as it must;
 *   4. concatenate: copy head_i into columns i*d_head.. of concat.
 * 5. Last, mix the heads: out = concat W_o. */
int mha_forward(const struct mha_config *cfg, const struct mha_weights *w,
                const float *X, float *out, float *weights, int T)
{
    (void)cfg, (void)w, (void)X, (void)out, (void)weights, (void)T;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end mha_forward */

/* ---------------------------------------------------------------------
 * The fused form
 * ------------------------------------------------------------------- */

/* @listing mha_forward_fused */
/* Exercise 3.4. The same layer, fused. Q = X W_q, K = X W_k, V = X W_v
 * once for all heads, each (T, d_model); head i reads columns
 * off = i*d_head .. off + d_head - 1 of each.
 * X (T, d_model), out (T, d_model), weights (h, T, T).
 * Same checks, errors and scratch rules as mha_forward(). Steps:
 * 1. project once: Q = X W_q, K = X W_k, V = X W_v.
 * Then, for each head i and each query t:
 *   2. scores[j] = (q_t . k_j over head i's columns) / sqrt(d_head),
 *      not sqrt(d_model), reading Q and K at column offset off;
 *   3. when causal, -INFINITY for every key j > t;
 *   4. softmax (softmax_rows()) turns the scores into head i's weights;
 *   5. the weighted sum of head i's value columns, written straight
 *      into columns off.. of concat.
 * 6. Last, mix the heads: out = concat W_o. */
int mha_forward_fused(const struct mha_config *cfg, const struct mha_weights *w,
                      const float *X, float *out, float *weights, int T)
{
    (void)cfg, (void)w, (void)X, (void)out, (void)weights, (void)T;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end mha_forward_fused */
