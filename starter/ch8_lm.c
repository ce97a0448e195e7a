/*
 * ch8_lm.c: chapter 8, a small language model: LayerNorm, forward and
 * backward; then three measurements of what its heads do (heads_lm.h).
 * YOUR FILE. Replace each stub's body, then run: make test CH=8.
 *
 * Dimension letters (see gpt.h and heads_lm.h):
 *   N = rows (positions) or sequences, C = d_model, the width of one
 *   row, T = tokens per sequence, K = the largest offset measured,
 *   d_head = C / n_heads.
 * A name d_X is the gradient of the loss with respect to X (X's shape).
 *
 * The rules, as in chapter 4: check the arguments first (NULL is
 * KIT_E_NULL, a size <= 0 is KIT_E_SIZE, and then nothing is written);
 * a backward pass ADDS into its d_ buffers.
 */
#include "gpt.h"
#include "heads_lm.h"

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

/* ---------------------------------------------------------------------
 * Chapter 8 exercises: what the heads do (heads_lm.h)
 *
 * Row i of a causal head's weights A (T, T) is query token i; its entry
 * j <= i is the weight on key token j, which is i - j tokens back (the
 * offset). Its heaviest weight is the largest A[i][j] for j = 0 .. i,
 * the lowest j on a tie (test with >, not >=).
 * ------------------------------------------------------------------- */

/* @listing head_offset_profile */
/* Exercise 8.3. Where one head looks.  A (N, T, T); mean_w, top_share
 * (K + 2). For k = 0 .. K, over the N * (T - k) rows i >= k:
 *   mean_w[k]    = mean of A[n][i][i - k]
 *   top_share[k] = share of those rows whose heaviest weight is at
 *                  j = i - k
 * and column K + 1 the same for the first token (j = 0) over all N * T
 * rows. A row with i < k has no offset k: leave it out of column k
 * altogether, do not count it as a 0. Check the arguments first (NULL,
 * N or T <= 0, K < 0 or K >= T). */
int head_offset_profile(const float *A, int N, int T, int K, float *mean_w,
                        float *top_share)
{
    (void)A, (void)N, (void)T, (void)K, (void)mean_w, (void)top_share;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end head_offset_profile */

/* @listing relation_score */
/* Exercise 8.4. A head against a relation.  A (N, T, T); word, related
 * (n_cases): flat positions n*T + i. Check every case first (in range,
 * related <= word, the same sequence: KIT_E_SIZE). Then
 *   *score    = share of cases whose word's row (A + word[c]*T) has its
 *               heaviest weight on column related[c] % T
 *   *baseline = the largest, over k = 0 .. T-1, share of cases with
 *               word[c] - related[c] == k; *best_k that k (the
 *               smallest on a tie).
 * Only score - baseline says the head knows the relation. */
int relation_score(const float *A, int N, int T, const int *word,
                   const int *related, int n_cases, float *score,
                   float *baseline, int *best_k)
{
    (void)A, (void)N, (void)T, (void)word, (void)related, (void)n_cases;
    (void)score, (void)baseline, (void)best_k;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end relation_score */

/* @listing mean_ablate_head */
/* Exercise 8.5. Mean ablation.  concat (N, C), mean (d_head),
 * d_head = C / n_heads. In every row t, columns head*d_head ..
 * (head+1)*d_head - 1 become mean[0 .. d_head-1]; nothing else changes.
 * Replace, do not add; the mean, not 0 (a head that is always off is
 * not the same as a head that says nothing new). Errors as
 * mha_head_slice(): KIT_E_NULL, KIT_E_SIZE, KIT_E_HEADS. */
int mean_ablate_head(float *concat, const float *mean, int N, int C,
                     int n_heads, int head)
{
    (void)concat, (void)mean, (void)N, (void)C, (void)n_heads, (void)head;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end mean_ablate_head */
