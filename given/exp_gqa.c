/*
 * exp_gqa.c: chapter 6's grouped-query attention as the layer of chapter
 * 5's network (experiment.h, exp_gqa_layer). Given code, not an exercise.
 *
 * Query head i reads K/V head j = i / G, G = n_heads / n_kv_heads (the
 * convention of decode.h). Rather than a backward pass of its own, the
 * layer is built on chapter 3's and 4's multi-head layer:
 *   expand   W_k (d_model, g*d_head) -> W_k' (d_model, d_model): query
 *            head i's block of columns is a copy of K/V head i/G's; the
 *            same for W_v. Multi-head attention with W_k', W_v' is
 *            grouped-query attention with W_k, W_v.
 *   forward  mha_forward() with W_q, W_k', W_v', W_o.
 *   backward mha_backward() into d W_k', d W_v', then each K/V head's
 *            gradient is the sum of its G copies' (a weight used in G
 *            places gets the G gradients added).
 * Expanding costs two (d_model, d_model) copies per call, small next to
 * the attention itself at the experiment's sizes.
 *
 * Dimension letters: T = tokens, h = query heads, g = K/V heads,
 * G = h / g query heads per K/V head.
 */
#include "experiment.h"
#include "grad.h"

#include <stdlib.h>
#include <string.h>

static int n_kv_of(const struct exp_config *c)
{
    return c->n_kv_heads ? c->n_kv_heads : c->n_heads;
}

/* The multi-head check, then: 0 < g, g divides h. */
static int gqa_check(const struct exp_config *c)
{
    struct mha_config ac = {c->d_model, c->n_heads, 1};
    int status = mha_check_config(&ac);
    if (status != KIT_OK)
        return status;
    if (n_kv_of(c) < 0)
        return KIT_E_SIZE;
    return c->n_heads % n_kv_of(c) == 0 ? KIT_OK : KIT_E_HEADS;
}

/* The width of W_k and W_v: g * d_head. */
static int gqa_kv_width(const struct exp_config *c)
{
    return n_kv_of(c) * (c->d_model / c->n_heads);
}

/* @listing exp_gqa_expand */
/* full (d_model, d_model): query head i's columns i*d_head.. are a copy
 * of K/V head j = i / G's columns j*d_head.. of w (d_model, g*d_head). */
static void expand(const struct exp_config *c, const float *w, float *full)
{
    const int d = c->d_model, dh = d / c->n_heads, kv = gqa_kv_width(c);
    const int G = c->n_heads / n_kv_of(c);
    for (int row = 0; row < d; row++)
        for (int i = 0; i < c->n_heads; i++)
            memcpy(full + row * d + i * dh, w + row * kv + (i / G) * dh,
                   (size_t)dh * sizeof(float));
}

/* The gradient back through expand(): d_w (d_model, g*d_head) += for
 * each K/V head j, the sum of its G query heads' blocks of d_full. */
static void fold(const struct exp_config *c, const float *d_full, float *d_w)
{
    const int d = c->d_model, dh = d / c->n_heads, kv = gqa_kv_width(c);
    const int G = c->n_heads / n_kv_of(c);
    for (int row = 0; row < d; row++)
        for (int i = 0; i < c->n_heads; i++)
            for (int e = 0; e < dh; e++)
                d_w[row * kv + (i / G) * dh + e] +=
                    d_full[row * d + i * dh + e];
}
/* @end exp_gqa_expand */

static int gqa_fwd(const struct exp_config *c, const struct mha_weights *w,
                   const float *X, float *out, float *weights, int T)
{
    if (!c || !w || !w->W_k || !w->W_v)
        return KIT_E_NULL;
    const int d = c->d_model;
    float *K = malloc((size_t)(2 * d * d) * sizeof(float));
    if (!K)
        return KIT_E_NOMEM;
    expand(c, w->W_k, K);
    expand(c, w->W_v, K + d * d);
    struct mha_config ac = {d, c->n_heads, 1};
    struct mha_weights full = {w->W_q, K, K + d * d, w->W_o};
    int status = mha_forward(&ac, &full, X, out, weights, T);
    free(K);
    return status;
}

/* @listing exp_gqa_backward */
static int gqa_bwd(const struct exp_config *c, const struct mha_weights *w,
                   const float *X, const float *d_out, float *d_X,
                   struct mha_weights *d_w, int T)
{
    if (!c || !w || !d_w || !w->W_k || !w->W_v || !d_w->W_k || !d_w->W_v)
        return KIT_E_NULL;
    const int d = c->d_model;
    /* W_k', W_v', then their gradients d W_k', d W_v' from zero */
    float *buf = calloc((size_t)(4 * d * d), sizeof(float));
    if (!buf)
        return KIT_E_NOMEM;
    float *K = buf, *V = buf + d * d, *dK = buf + 2 * d * d, *dV = dK + d * d;
    expand(c, w->W_k, K);
    expand(c, w->W_v, V);
    struct mha_config ac = {d, c->n_heads, 1};
    struct mha_weights full = {w->W_q, K, V, w->W_o};
    struct mha_weights d_full = {d_w->W_q, dK, dV, d_w->W_o};
    int status = mha_backward(&ac, &full, X, d_out, d_X, &d_full, T);
    if (status == KIT_OK) {
        fold(c, dK, d_w->W_k);
        fold(c, dV, d_w->W_v);
    }
    free(buf);
    return status;
}
/* @end exp_gqa_backward */

const struct exp_layer exp_gqa_layer = {"grouped-query", gqa_check,
                                        gqa_kv_width, gqa_fwd, gqa_bwd};
