/*
 * ch8_lm.c: chapter 8, a small language model: LayerNorm, forward and
 * backward. Reference solutions. The starter file of the same name
 * holds the stubs. The rest of the model is given code (given/gpt.c).
 *
 * Dimension letters (see gpt.h):
 *   N = rows (positions), C = d_model, the width of one row.
 * A name d_X is the gradient of the loss with respect to X (X's shape).
 */
#include "gpt.h"

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
