/*
 * ch6_decode.c: chapter 6, many heads at inference.
 * Reference solutions. The starter file of the same name holds the stubs.
 *
 * A model that writes text makes one token at a time, and each new token
 * attends over all the tokens before it. Their keys and values do not
 * change, so a decoder keeps them in a KV cache and projects only the
 * new token. This file writes the cache, the one-token step of chapter
 * 3's layer, and grouped-query attention (GQA), in which groups of query
 * heads share one K/V head so that the cache shrinks; with one K/V head
 * for all it is multi-query attention (MQA). Last, the size of a real
 * model's cache.
 *
 * Dimension letters (see decode.h):
 *   T = tokens, t = the position being decoded, d_model = embedding
 *   width, h = n_heads query heads, g = n_kv_heads K/V heads,
 *   d_head = d_model / h, d_kv = g * d_head, C = the cache's capacity.
 * Query head i reads K/V head i / (h / g).
 */
#include "attention.h"
#include "decode.h"
#include "mha.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * The KV cache
 * ------------------------------------------------------------------- */

/* @listing kv_cache_append */
/* Store one position: K/V head j's key k[j*d_head ..] goes to row
 * K + (j*C + len)*d_head, its value likewise; then len grows by 1.
 * k, v (n_kv_heads * d_head). A full cache is an error, not a wrap. */
int kv_cache_append(struct kv_cache *c, const float *k, const float *v)
{
    if (!c || !k || !v || !c->K || !c->V)
        return KIT_E_NULL;
    if (c->len < 0 || c->len >= c->capacity)
        return KIT_E_SIZE; /* full: nothing changes */
    const int d_head = c->d_head;
    for (int j = 0; j < c->n_kv_heads; j++) {
        size_t row = ((size_t)j * c->capacity + c->len) * d_head;
        memcpy(c->K + row, k + j * d_head, sizeof(float) * d_head);
        memcpy(c->V + row, v + j * d_head, sizeof(float) * d_head);
    }
    c->len++;
    c->appends++;
    return KIT_OK;
}
/* @end kv_cache_append */

/* @listing kv_cache_read */
/* K_out, V_out (t + 1, d_head) <- K/V head j's positions 0 .. t. Head
 * j's rows are contiguous, so this is one copy of (t + 1) * d_head. */
int kv_cache_read(const struct kv_cache *c, int j, int t, float *K_out,
                  float *V_out)
{
    if (!c || !K_out || !V_out || !c->K || !c->V)
        return KIT_E_NULL;
    if (j < 0 || j >= c->n_kv_heads)
        return KIT_E_HEADS; /* there is no K/V head j */
    if (t < 0 || t >= c->len)
        return KIT_E_SIZE; /* position t is not in the cache */
    const size_t first = (size_t)j * c->capacity * c->d_head;
    const size_t n = (size_t)(t + 1) * c->d_head;
    memcpy(K_out, c->K + first, sizeof(float) * n);
    memcpy(V_out, c->V + first, sizeof(float) * n);
    return KIT_OK;
}
/* @end kv_cache_read */

/* ---------------------------------------------------------------------
 * One token at a time
 * ------------------------------------------------------------------- */

/* @listing decode_step */
/* One query head over the cache: q_i (d_head) against K/V head j's
 * positions 0 .. t. att (C) is scratch; out_i (d_head). */
static void attend_cache(const struct kv_cache *c, int j, int t,
                         const float *q_i, float scale, float *att,
                         float *out_i)
{
    const int d_head = c->d_head;
    const int n = t + 1; /* positions 0 .. t: the new token included */
    const float *K_j = c->K + (size_t)j * c->capacity * d_head; /* (C, dh) */
    const float *V_j = c->V + (size_t)j * c->capacity * d_head; /* (C, dh) */
    /* 1. scores of the one query against every cached key; no mask:
     *    the cache holds nothing after t */
    for (int p = 0; p < n; p++) {
        const float *k_p = K_j + (size_t)p * d_head;
        float s = 0.0f;
        for (int d = 0; d < d_head; d++)
            s += q_i[d] * k_p[d];
        att[p] = s * scale;
    }
    /* 2. one row of softmax (chapter 1) */
    softmax_rows(att, 1, n);
    /* 3. weighted sum of the cached values */
    for (int d = 0; d < d_head; d++) {
        float s = 0.0f;
        for (int p = 0; p < n; p++)
            s += att[p] * V_j[(size_t)p * d_head + d];
        out_i[d] = s;
    }
}

/* The step of decode.h for h query heads over a cache of g K/V heads;
 * the caller has checked the configuration. x, out (d_model). */
static int decode_step(int d_model, int n_heads, int n_kv_heads,
                       const struct mha_weights *w, struct kv_cache *c,
                       const float *x, float *out)
{
    if (!w || !c || !x || !out)
        return KIT_E_NULL;
    if (!w->W_q || !w->W_k || !w->W_v || !w->W_o || !c->K || !c->V)
        return KIT_E_NULL;
    const int d_head = d_model / n_heads, d_kv = n_kv_heads * d_head;
    const int group = n_heads / n_kv_heads; /* query heads per K/V head */
    if (c->n_kv_heads != n_kv_heads || c->d_head != d_head)
        return KIT_E_HEADS; /* a cache made for another layer */
    if (c->len < 0 || c->len >= c->capacity)
        return KIT_E_SIZE; /* full: nothing changes */
    const int t = c->len;  /* the new token's position */
    const float scale = 1.0f / sqrtf((float)d_head);
    float *q = malloc(sizeof(float) * d_model);       /* (d_model) */
    float *k = malloc(sizeof(float) * d_kv);          /* (d_kv) */
    float *v = malloc(sizeof(float) * d_kv);          /* (d_kv) */
    float *concat = malloc(sizeof(float) * d_model);  /* (d_model) */
    float *att = malloc(sizeof(float) * c->capacity); /* (C) */
    int rc = KIT_OK;
    if (!q || !k || !v || !concat || !att) {
        rc = KIT_E_NOMEM;
        goto done;
    }
    /* 1. project the new token only: one row of X W_q, X W_k, X W_v */
    matmul(x, w->W_q, q, 1, d_model, d_model);
    matmul(x, w->W_k, k, 1, d_model, d_kv);
    matmul(x, w->W_v, v, 1, d_model, d_kv);
    /* 2. append its key and value at position t, then attend */
    rc = kv_cache_append(c, k, v);
    if (rc != KIT_OK)
        goto done;
    /* 3. query head i attends over K/V head i / group, positions 0..t;
     *    its output goes straight into its columns of concat */
    for (int i = 0; i < n_heads; i++)
        attend_cache(c, i / group, t, q + i * d_head, scale, att,
                     concat + i * d_head);
    /* 4. mix the heads: out = concat W_o */
    matmul(concat, w->W_o, out, 1, d_model, d_model);
done:
    free(q), free(k), free(v), free(concat), free(att);
    return rc;
}

/* q, k, v of one token; append k, v; every head attends over 0..t; W_o.
 * x (d_model), out (d_model); the cache has n_heads heads of d_head. */
int mha_decode_step(const struct mha_config *cfg, const struct mha_weights *w,
                    struct kv_cache *c, const float *x, float *out)
{
    int rc = mha_check_config(cfg);
    if (rc != KIT_OK)
        return rc;
    return decode_step(cfg->d_model, cfg->n_heads, cfg->n_heads, w, c, x, out);
}
/* @end decode_step */

/* @listing mha_decode */
/* out row s = mha_decode_step(X row s), s = 0 .. T-1, in order.
 * X (T, d_model), out (T, d_model). Every token is projected once. */
int mha_decode(const struct mha_config *cfg, const struct mha_weights *w,
               struct kv_cache *c, const float *X, float *out, int T)
{
    if (!X || !out || !c)
        return KIT_E_NULL;
    int rc = mha_check_config(cfg);
    if (rc != KIT_OK)
        return rc;
    if (T <= 0 || c->len < 0 || T > c->capacity - c->len)
        return KIT_E_SIZE; /* the T tokens would not fit */
    const int d_model = cfg->d_model;
    for (int s = 0; s < T && rc == KIT_OK; s++) {
        const float *x_s = X + (size_t)s * d_model; /* (d_model) */
        float *out_s = out + (size_t)s * d_model;   /* (d_model) */
        rc = mha_decode_step(cfg, w, c, x_s, out_s);
    }
    return rc;
}
/* @end mha_decode */

/* ---------------------------------------------------------------------
 * Grouped-query attention
 * ------------------------------------------------------------------- */

/* @listing gqa_check_config */
/* KIT_OK iff cfg != NULL, all three sizes > 0, n_heads divides d_model
 * and n_kv_heads divides n_heads. */
int gqa_check_config(const struct gqa_config *cfg)
{
    if (!cfg)
        return KIT_E_NULL;
    if (cfg->d_model <= 0 || cfg->n_heads <= 0 || cfg->n_kv_heads <= 0)
        return KIT_E_SIZE;
    if (cfg->d_model % cfg->n_heads != 0)
        return KIT_E_HEADS; /* d_head would not be a whole number */
    if (cfg->n_heads % cfg->n_kv_heads != 0)
        return KIT_E_HEADS; /* the groups would not be equal */
    return KIT_OK;
}
/* @end gqa_check_config */

/* @listing gqa_forward */
/* Q = X W_q (T, d_model); K = X W_k, V = X W_v (T, d_kv). Query head i
 * reads columns i*d_head.. of Q and columns j*d_head.. of K and V,
 * j = i / (h / g). out = concat W_o. weights (h, T, T). */
int gqa_forward(const struct gqa_config *cfg, const struct mha_weights *w,
                const float *X, float *out, float *weights, int T)
{
    if (!cfg || !w || !X || !out || !weights)
        return KIT_E_NULL;
    if (!w->W_q || !w->W_k || !w->W_v || !w->W_o)
        return KIT_E_NULL;
    int rc = gqa_check_config(cfg);
    if (rc != KIT_OK)
        return rc;
    if (T <= 0)
        return KIT_E_SIZE;
    const int d_model = cfg->d_model, n_heads = cfg->n_heads;
    const int d_head = d_model / n_heads;
    const int d_kv = cfg->n_kv_heads * d_head;
    const int group = n_heads / cfg->n_kv_heads; /* query heads per K/V */
    float *Q = malloc(sizeof(float) * (size_t)T * d_model);      /* (T, d) */
    float *K = malloc(sizeof(float) * (size_t)T * d_kv);         /* (T, d_kv) */
    float *V = malloc(sizeof(float) * (size_t)T * d_kv);         /* (T, d_kv) */
    float *concat = malloc(sizeof(float) * (size_t)T * d_model); /* (T, d) */
    if (!Q || !K || !V || !concat) {
        rc = KIT_E_NOMEM;
        goto done;
    }
    /* 1. project once; K and V are only d_kv wide */
    matmul(X, w->W_q, Q, T, d_model, d_model);
    matmul(X, w->W_k, K, T, d_model, d_kv);
    matmul(X, w->W_v, V, T, d_model, d_kv);
    const float scale = 1.0f / sqrtf((float)d_head);
    for (int i = 0; i < n_heads; i++) {
        float *att = weights + (size_t)i * T * T; /* (T, T) head i */
        const int j = i / group;                  /* its K/V head */
        const int off = i * d_head, off_kv = j * d_head;
        for (int t = 0; t < T; t++) {
            const float *q_t = Q + t * d_model + off; /* (d_head) */
            /* 2. scores of query t against K/V head j's keys, scaled */
            for (int p = 0; p < T; p++) {
                const float *k_p = K + p * d_kv + off_kv; /* (d_head) */
                float s = 0.0f;
                for (int d = 0; d < d_head; d++)
                    s += q_t[d] * k_p[d];
                att[t * T + p] = s * scale;
            }
            /* 3. causal: query t must not see keys p > t */
            for (int p = t + 1; cfg->causal && p < T; p++)
                att[t * T + p] = -INFINITY;
        }
        /* 4. each query's scores become a distribution over keys */
        softmax_rows(att, T, T);
        /* 5. weighted sum of K/V head j's values, into head i's columns */
        for (int t = 0; t < T; t++) {
            float *out_t = concat + t * d_model + off; /* (d_head) */
            for (int d = 0; d < d_head; d++) {
                float s = 0.0f;
                for (int p = 0; p < T; p++)
                    s += att[t * T + p] * V[p * d_kv + off_kv + d];
                out_t[d] = s;
            }
        }
    }
    /* 6. mix the heads: out = concat W_o */
    matmul(concat, w->W_o, out, T, d_model, d_model);
done:
    free(Q), free(K), free(V), free(concat);
    return rc;
}
/* @end gqa_forward */

/* @listing gqa_decode_step */
/* The decode step with g K/V heads: k, v are d_kv wide, and query head
 * i attends over K/V head i / (h / g). x (d_model), out (d_model). */
int gqa_decode_step(const struct gqa_config *cfg, const struct mha_weights *w,
                    struct kv_cache *c, const float *x, float *out)
{
    int rc = gqa_check_config(cfg);
    if (rc != KIT_OK)
        return rc;
    return decode_step(cfg->d_model, cfg->n_heads, cfg->n_kv_heads, w, c, x,
                       out);
}
/* @end gqa_decode_step */

/* ---------------------------------------------------------------------
 * What a cache costs
 * ------------------------------------------------------------------- */

/* @listing kv_cache_bytes */
/* 2 (a key and a value) * layers * K/V heads * d_head * positions
 * * sequences * bytes per number, in 64 bits, refusing to overflow. */
int kv_cache_bytes(int n_layers, int n_kv_heads, int d_head, int context,
                   int batch, int bytes_per_number, uint64_t *bytes)
{
    if (!bytes)
        return KIT_E_NULL;
    const int factor[] = {n_layers, n_kv_heads, d_head,
                          context,  batch,      bytes_per_number};
    uint64_t total = 2;
    for (size_t f = 0; f < sizeof factor / sizeof factor[0]; f++) {
        if (factor[f] <= 0)
            return KIT_E_SIZE;
        if (total > UINT64_MAX / (uint64_t)factor[f])
            return KIT_E_SIZE; /* the product would not fit in 64 bits */
        total *= (uint64_t)factor[f];
    }
    *bytes = total;
    return KIT_OK;
}
/* @end kv_cache_bytes */
