/*
 * mha_weights.c: allocate, free and randomise a multi-head layer's
 * weights (mha.h). Given code: chapter 3's exercises use it.
 */
#include "mha.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>

int mha_weights_alloc(struct mha_weights *w, const struct mha_config *cfg)
{
    if (!w)
        return KIT_E_NULL;
    w->W_q = w->W_k = w->W_v = w->W_o = NULL;
    /* The checks of mha_check_config(), repeated here because that
     * function is an exercise and this given code must work without it. */
    if (!cfg)
        return KIT_E_NULL;
    if (cfg->d_model <= 0 || cfg->n_heads <= 0)
        return KIT_E_SIZE;
    if (cfg->d_model % cfg->n_heads != 0)
        return KIT_E_HEADS;
    size_t n = (size_t)cfg->d_model * (size_t)cfg->d_model;
    w->W_q = calloc(n, sizeof(float));
    w->W_k = calloc(n, sizeof(float));
    w->W_v = calloc(n, sizeof(float));
    w->W_o = calloc(n, sizeof(float));
    if (!w->W_q || !w->W_k || !w->W_v || !w->W_o) {
        mha_weights_free(w);
        return KIT_E_NOMEM;
    }
    return KIT_OK;
}

void mha_weights_free(struct mha_weights *w)
{
    if (!w)
        return;
    free(w->W_q);
    free(w->W_k);
    free(w->W_v);
    free(w->W_o);
    w->W_q = w->W_k = w->W_v = w->W_o = NULL;
}

int mha_weights_randomize(struct mha_weights *w, const struct mha_config *cfg,
                          unsigned long long seed)
{
    if (!w || !cfg || !w->W_q || !w->W_k || !w->W_v || !w->W_o)
        return KIT_E_NULL;
    if (cfg->d_model <= 0)
        return KIT_E_SIZE;
    struct rng r;
    rng_seed(&r, seed);
    int n = cfg->d_model * cfg->d_model;
    float a = 1.0f / sqrtf((float)cfg->d_model);
    rng_fill(&r, w->W_q, n, -a, a);
    rng_fill(&r, w->W_k, n, -a, a);
    rng_fill(&r, w->W_v, n, -a, a);
    rng_fill(&r, w->W_o, n, -a, a);
    return KIT_OK;
}
