/*
 * ch8_lm.c: chapter 8, a small language model: LayerNorm, forward and
 * backward; then three measurements of what its heads do (heads_lm.h).
 * Reference solutions. The starter file of the same name holds the
 * stubs. The rest of the model is given code (given/gpt.c,
 * given/heads_lm.c).
 *
 * Dimension letters (see gpt.h and heads_lm.h):
 *   N = rows (positions) or sequences, C = d_model, the width of one
 *   row, T = tokens per sequence, K = the largest offset measured,
 *   d_head = C / n_heads.
 * A name d_X is the gradient of the loss with respect to X (X's shape).
 */
#include "gpt.h"
#include "heads_lm.h"

#include <math.h>
#include <stddef.h>

/* @listing layernorm_forward */
/* Per row i: mean, rstd = 1 / sqrt(var + eps), and
 *   y[i][c] = (x[i][c] - mean) * rstd * g[c] + b[c].
 * x, y (N, C); g, b (C); mean, rstd (N). */
int layernorm_forward(const float *x, const float *g, const float *b, float *y,
                      float *mean, float *rstd, int N, int C)
{
    if (!x || !g || !b || !y || !mean || !rstd)
        return KIT_E_NULL;
    if (N <= 0 || C <= 0)
        return KIT_E_SIZE;
    for (int i = 0; i < N; i++) {
        const float *x_i = x + (size_t)i * C;
        float *y_i = y + (size_t)i * C;
        /* 1. the row's mean */
        float m = 0.0f;
        for (int c = 0; c < C; c++)
            m += x_i[c];
        m /= C;
        /* 2. its variance (divided by C, not C - 1), and 1/sqrt */
        float var = 0.0f;
        for (int c = 0; c < C; c++)
            var += (x_i[c] - m) * (x_i[c] - m);
        var /= C;
        float s = 1.0f / sqrtf(var + GPT_LN_EPS);
        /* 3. normalise, then the gain and the bias */
        for (int c = 0; c < C; c++)
            y_i[c] = (x_i[c] - m) * s * g[c] + b[c];
        mean[i] = m;
        rstd[i] = s;
    }
    return KIT_OK;
}
/* @end layernorm_forward */

/* @listing layernorm_backward */
/* layernorm_forward() backward, its steps in reverse. With
 * xhat = (x - mean) * rstd and dxh = d_y * g, per row:
 *   d_b += d_y,  d_g += d_y * xhat,
 *   d_x += rstd * (dxh - mean(dxh) - xhat * mean(dxh * xhat)).
 * x, d_y, d_x (N, C); g, d_g, d_b (C); mean, rstd (N). */
int layernorm_backward(const float *x, const float *g, const float *mean,
                       const float *rstd, const float *d_y, float *d_x,
                       float *d_g, float *d_b, int N, int C)
{
    if (!x || !g || !mean || !rstd || !d_y || !d_x || !d_g || !d_b)
        return KIT_E_NULL;
    if (N <= 0 || C <= 0)
        return KIT_E_SIZE;
    for (int i = 0; i < N; i++) {
        const float *x_i = x + (size_t)i * C, *dy_i = d_y + (size_t)i * C;
        float *dx_i = d_x + (size_t)i * C;
        /* 3. y = xhat * g + b: d_g and d_b collect every row; and the
         *    two means over the row that step 1 and 2 need */
        float mean_dxh = 0.0f, mean_dxh_xhat = 0.0f;
        for (int c = 0; c < C; c++) {
            float xhat = (x_i[c] - mean[i]) * rstd[i];
            float dxh = dy_i[c] * g[c];
            d_b[c] += dy_i[c];
            d_g[c] += dy_i[c] * xhat;
            mean_dxh += dxh;
            mean_dxh_xhat += dxh * xhat;
        }
        mean_dxh /= C;
        mean_dxh_xhat /= C;
        /* 2. and 1. xhat = (x - mean) * rstd: x reaches xhat directly,
         *    through the mean, and through rstd */
        for (int c = 0; c < C; c++) {
            float xhat = (x_i[c] - mean[i]) * rstd[i];
            float dxh = dy_i[c] * g[c];
            dx_i[c] += rstd[i] * (dxh - mean_dxh - xhat * mean_dxh_xhat);
        }
    }
    return KIT_OK;
}
/* @end layernorm_backward */

/* ---------------------------------------------------------------------
 * Chapter 8 exercises: what the heads do (heads_lm.h)
 * ------------------------------------------------------------------- */

/* The heaviest weight of row A_i (T) of a causal head: the j in 0 .. i
 * with the largest A_i[j], the lowest j on a tie. */
static int row_argmax(const float *A_i, int i)
{
    int best = 0;
    for (int j = 1; j <= i; j++)
        if (A_i[j] > A_i[best]) /* strictly larger: ties keep the first */
            best = j;
    return best;
}

/* @listing head_offset_profile */
/* Per offset k = 0 .. K, over the N * (T - k) rows i >= k that have
 * one, the mean of A[i][i - k] and the share of rows whose heaviest
 * weight is there; column K + 1 the same for the first token, j = 0,
 * over all N * T rows.  A (N, T, T); mean_w, top_share (K + 2). */
int head_offset_profile(const float *A, int N, int T, int K, float *mean_w,
                        float *top_share)
{
    if (!A || !mean_w || !top_share)
        return KIT_E_NULL;
    if (N <= 0 || T <= 0 || K < 0 || K >= T)
        return KIT_E_SIZE;
    /* column k looks at key j = i - k; column K + 1 at key j = 0 */
    for (int k = 0; k <= K + 1; k++) {
        const int first_row = k <= K ? k : 0; /* rows i < k lack it */
        double sum = 0.0, top = 0.0;
        for (int n = 0; n < N; n++)
            for (int i = first_row; i < T; i++) {
                const float *A_i = A + ((size_t)n * T + i) * T;
                const int j = k <= K ? i - k : 0;
                sum += A_i[j];
                top += row_argmax(A_i, i) == j;
            }
        /* divide by the rows that have the offset, not by all rows */
        const double rows = (double)N * (T - first_row);
        mean_w[k] = (float)(sum / rows);
        top_share[k] = (float)(top / rows);
    }
    return KIT_OK;
}
/* @end head_offset_profile */

/* @listing relation_score */
/* The share of cases whose word's row has its heaviest weight on the
 * related word, and the best fixed offset's share on the same cases.
 * A (N, T, T); word, related (n_cases), flat positions n*T + i. */
int relation_score(const float *A, int N, int T, const int *word,
                   const int *related, int n_cases, float *score,
                   float *baseline, int *best_k)
{
    if (!A || !word || !related || !score || !baseline || !best_k)
        return KIT_E_NULL;
    if (N <= 0 || T <= 0 || n_cases <= 0)
        return KIT_E_SIZE;
    /* 1. every case valid first: in range, related before, same row */
    for (int c = 0; c < n_cases; c++)
        if (word[c] < 0 || word[c] >= N * T || related[c] < 0 ||
            related[c] > word[c] || related[c] / T != word[c] / T)
            return KIT_E_SIZE;
    /* 2. the head: does the word's row put its heaviest weight on the
     *    related word? */
    int hits = 0;
    for (int c = 0; c < n_cases; c++) {
        const float *A_i = A + (size_t)word[c] * T;
        hits += row_argmax(A_i, word[c] % T) == related[c] % T;
    }
    /* 3. the baseline: for each offset k, the cases whose related word
     *    is exactly k back; the best k, the smallest on a tie */
    int k_best = 0, n_best = -1;
    for (int k = 0; k < T; k++) {
        int n_k = 0;
        for (int c = 0; c < n_cases; c++)
            n_k += word[c] - related[c] == k;
        if (n_k > n_best)
            k_best = k, n_best = n_k;
    }
    *score = (float)hits / (float)n_cases;
    *baseline = (float)n_best / (float)n_cases;
    *best_k = k_best;
    return KIT_OK;
}
/* @end relation_score */

/* @listing mean_ablate_head */
/* Head `head`'s block of every row of concat (N, C) becomes mean
 * (d_head): columns head*d_head .. (head+1)*d_head - 1. */
int mean_ablate_head(float *concat, const float *mean, int N, int C,
                     int n_heads, int head)
{
    if (!concat || !mean)
        return KIT_E_NULL;
    if (N <= 0 || C <= 0 || n_heads <= 0)
        return KIT_E_SIZE;
    if (C % n_heads != 0 || head < 0 || head >= n_heads)
        return KIT_E_HEADS;
    const int d_head = C / n_heads;
    for (int t = 0; t < N; t++) {
        float *head_t = concat + (size_t)t * C + (size_t)head * d_head;
        for (int c = 0; c < d_head; c++)
            head_t[c] = mean[c];
    }
    return KIT_OK;
}
/* @end mean_ablate_head */
