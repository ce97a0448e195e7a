/*
 * ch8_lm.c: chapter 8, a small language model: LayerNorm, forward and
 * backward. YOUR FILE. Replace each stub's body, then run: make test CH=9
 * (the chapter's development number until it is folded into chapter 8).
 *
 * Dimension letters (see gpt.h):
 *   N = rows (positions), C = d_model, the width of one row.
 * A name d_X is the gradient of the loss with respect to X (X's shape).
 *
 * The rules, as in chapter 4: check the arguments first (NULL is
 * KIT_E_NULL, a size <= 0 is KIT_E_SIZE, and then nothing is written);
 * a backward pass ADDS into its d_ buffers.
 */
#include "gpt.h"

#include <math.h>
#include <stddef.h>

/* @listing layernorm_forward */
/* Exercise 8.1. LayerNorm over each row of x.  x, y (N, C); g, b (C);
 * mean, rstd (N).
 *   mean[i] = sum_c x[i][c] / C
 *   rstd[i] = 1 / sqrt(sum_c (x[i][c] - mean[i])^2 / C + GPT_LN_EPS)
 *   y[i][c] = (x[i][c] - mean[i]) * rstd[i] * g[c] + b[c]
 * The variance divides by C, not C - 1; eps goes inside the sqrt. Keep
 * mean and rstd: the backward pass needs them. */
int layernorm_forward(const float *x, const float *g, const float *b, float *y,
                      float *mean, float *rstd, int N, int C)
{
    (void)x, (void)g, (void)b, (void)y, (void)mean, (void)rstd;
    (void)N, (void)C;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end layernorm_forward */

/* @listing layernorm_backward */
/* Exercise 8.2. layernorm_forward() backward.  x, d_y, d_x (N, C);
 * g, d_g, d_b (C); mean, rstd (N) as the forward pass wrote them.
 * With xhat = (x - mean) * rstd and dxh = d_y * g, per row i:
 *   d_b[c]    += d_y[i][c]
 *   d_g[c]    += d_y[i][c] * xhat[i][c]
 *   d_x[i][c] += rstd[i] * (dxh[c] - mean_c(dxh) - xhat[i][c] *
 *                mean_c(dxh * xhat))
 * The two means are the paths through the mean and through rstd: every
 * x[i][c] moves every output of its row. First one pass for the means
 * (and d_g, d_b), then one that adds into d_x. */
int layernorm_backward(const float *x, const float *g, const float *mean,
                       const float *rstd, const float *d_y, float *d_x,
                       float *d_g, float *d_b, int N, int C)
{
    (void)x, (void)g, (void)mean, (void)rstd, (void)d_y, (void)d_x;
    (void)d_g, (void)d_b, (void)N, (void)C;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end layernorm_backward */
