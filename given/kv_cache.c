/*
 * kv_cache.c: allocate, free and empty a KV cache, and allocate and
 * randomise a grouped-query layer's weights (decode.h). Given code:
 * chapter 6's exercises use it.
 */
#include "decode.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int kv_cache_alloc(struct kv_cache *c, int capacity, int n_kv_heads, int d_head)
{
    if (!c)
        return KIT_E_NULL;
    *c = (struct kv_cache){0};
    if (capacity <= 0 || n_kv_heads <= 0 || d_head <= 0)
        return KIT_E_SIZE;
    /* n = n_kv_heads * capacity * d_head floats, each of K and V */
    size_t n = (size_t)n_kv_heads * (size_t)capacity;
    if (n > SIZE_MAX / sizeof(float) / (size_t)d_head)
        return KIT_E_SIZE;
    n *= (size_t)d_head;
    c->K = calloc(n, sizeof(float));
    c->V = calloc(n, sizeof(float));
    if (!c->K || !c->V) {
        kv_cache_free(c);
        return KIT_E_NOMEM;
    }
    c->capacity = capacity;
    c->n_kv_heads = n_kv_heads;
    c->d_head = d_head;
    return KIT_OK;
}

void kv_cache_free(struct kv_cache *c)
{
    if (!c)
        return;
    free(c->K);
    free(c->V);
    *c = (struct kv_cache){0};
}

void kv_cache_reset(struct kv_cache *c)
{
    if (c)
        c->len = 0;
}

/* The checks of gqa_check_config(), repeated here because that function
 * is an exercise and this given code must work without it. */
static int config_ok(const struct gqa_config *cfg)
{
    if (!cfg)
        return KIT_E_NULL;
    if (cfg->d_model <= 0 || cfg->n_heads <= 0 || cfg->n_kv_heads <= 0)
        return KIT_E_SIZE;
    if (cfg->d_model % cfg->n_heads != 0 || cfg->n_heads % cfg->n_kv_heads != 0)
        return KIT_E_HEADS;
    return KIT_OK;
}

int gqa_weights_alloc(struct mha_weights *w, const struct gqa_config *cfg)
{
    if (!w)
        return KIT_E_NULL;
    w->W_q = w->W_k = w->W_v = w->W_o = NULL;
    int rc = config_ok(cfg);
    if (rc != KIT_OK)
        return rc;
    const size_t d = (size_t)cfg->d_model;
    const size_t d_kv = (size_t)cfg->n_kv_heads * (d / (size_t)cfg->n_heads);
    w->W_q = calloc(d * d, sizeof(float));
    w->W_k = calloc(d * d_kv, sizeof(float));
    w->W_v = calloc(d * d_kv, sizeof(float));
    w->W_o = calloc(d * d, sizeof(float));
    if (!w->W_q || !w->W_k || !w->W_v || !w->W_o) {
        mha_weights_free(w);
        return KIT_E_NOMEM;
    }
    return KIT_OK;
}

int gqa_weights_randomize(struct mha_weights *w, const struct gqa_config *cfg,
                          unsigned long long seed)
{
    if (!w || !w->W_q || !w->W_k || !w->W_v || !w->W_o)
        return KIT_E_NULL;
    int rc = config_ok(cfg);
    if (rc != KIT_OK)
        return rc;
    const int d = cfg->d_model;
    const int d_kv = cfg->n_kv_heads * (d / cfg->n_heads);
    struct rng r;
    rng_seed(&r, seed);
    float a = 1.0f / sqrtf((float)d);
    rng_fill(&r, w->W_q, d * d, -a, a);
    rng_fill(&r, w->W_k, d * d_kv, -a, a);
    rng_fill(&r, w->W_v, d * d_kv, -a, a);
    rng_fill(&r, w->W_o, d * d, -a, a);
    return KIT_OK;
}
