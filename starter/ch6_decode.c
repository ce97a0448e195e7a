/*
 * ch6_decode.c: chapter 6, many heads at inference.
 * YOUR FILE. Replace each stub's body, then run: make test CH=6
 *
 * A model that writes text makes one token at a time, and each new token
 * attends over all the tokens before it. Their keys and values do not
 * change, so a decoder keeps them in a KV cache and projects only the
 * new token. You write the cache, the one-token step of chapter 3's
 * layer, and grouped-query attention (GQA), in which groups of query
 * heads share one K/V head so that the cache shrinks; with one K/V head
 * for all it is multi-query attention (MQA). Last, the size of a real
 * model's cache.
 *
 * Dimension letters (see decode.h):
 *   T = tokens, t = the position being decoded, d_model = embedding
 *   width, h = n_heads query heads, g = n_kv_heads K/V heads,
 *   d_head = d_model / h, d_kv = g * d_head, C = the cache's capacity.
 * Query head i reads K/V head i / (h / g).
 * Your chapter 1 to 3 functions (attention.h, mha.h) are there to be used.
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
/* Exercise 6.1. Store one position. k, v (n_kv_heads * d_head): K/V head
 * j's key is k[j*d_head .. (j+1)*d_head - 1], and it goes to the row
 * c->K + (j*C + c->len)*d_head, C = c->capacity; the value likewise into
 * c->V. Then c->len and c->appends each grow by 1.
 * Errors: KIT_E_NULL for a NULL c, k, v, c->K or c->V; KIT_E_SIZE when
 * the cache is full (c->len == c->capacity), and then change nothing:
 * no wrap-around, no write, len and appends as they were. */
int kv_cache_append(struct kv_cache *c, const float *k, const float *v)
{
    (void)c, (void)k, (void)v;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end kv_cache_append */

/* @listing kv_cache_read */
/* Exercise 6.2. K_out, V_out (t + 1, d_head) <- K/V head j's positions
 * 0 .. t. Head j's rows start at c->K + j*C*d_head and are contiguous.
 * Errors, checked in this order: KIT_E_NULL; KIT_E_HEADS when j is not
 * 0 .. n_kv_heads-1; KIT_E_SIZE when t < 0 or t >= c->len (a position
 * that was never appended). */
int kv_cache_read(const struct kv_cache *c, int j, int t, float *K_out,
                  float *V_out)
{
    (void)c, (void)j, (void)t, (void)K_out, (void)V_out;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end kv_cache_read */

/* ---------------------------------------------------------------------
 * One token at a time
 * ------------------------------------------------------------------- */

/* @listing decode_step */
/* Exercise 6.3. Decode one token x (d_model) into out (d_model):
 *   1. q = x W_q (d_model), k = x W_k, v = x W_v (d_model each here):
 *      matmul() with m = 1. Only the new token is projected.
 *   2. t = c->len is its position. Append k and v, THEN attend: the
 *      new token must see itself.
 *   3. for each head i: scores q_i . k_p / sqrt(d_head) for p = 0 .. t
 *      (t + 1 of them, no mask needed), softmax_rows(scores, 1, t + 1),
 *      head_i = sum_p a_p v_p, written into concat[i*d_head ..].
 *      Head i's cached keys start at c->K + i*C*d_head.
 *   4. out = concat W_o.
 * Check first, and write nothing on error: NULLs (w's matrices and c->K,
 * c->V too); mha_check_config(); KIT_E_HEADS unless c->n_kv_heads ==
 * n_heads and c->d_head == d_model / n_heads; KIT_E_SIZE when the cache
 * is full. Scratch: q, k, v, concat and the scores (up to C of them). */
int mha_decode_step(const struct mha_config *cfg, const struct mha_weights *w,
                    struct kv_cache *c, const float *x, float *out)
{
    (void)cfg, (void)w, (void)c, (void)x, (void)out;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end decode_step */

/* @listing mha_decode */
/* Exercise 6.4. Decode X (T, d_model) token by token: out row s
 * (T, d_model) is mha_decode_step() of X row s, s = 0 .. T-1, in order,
 * continuing from what the cache already holds.
 * Check first: NULLs, mha_check_config(), KIT_E_SIZE when T <= 0 or
 * T > c->capacity - c->len (then nothing changes). Each token must be
 * projected once: T tokens, T appends. Do not re-run the prefix. */
int mha_decode(const struct mha_config *cfg, const struct mha_weights *w,
               struct kv_cache *c, const float *X, float *out, int T)
{
    (void)cfg, (void)w, (void)c, (void)X, (void)out, (void)T;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end mha_decode */

/* ---------------------------------------------------------------------
 * Grouped-query attention
 * ------------------------------------------------------------------- */

/* @listing gqa_check_config */
/* Exercise 6.6. KIT_OK iff cfg != NULL, d_model, n_heads and n_kv_heads
 * are all > 0, n_heads divides d_model and n_kv_heads divides n_heads.
 * Otherwise KIT_E_NULL, KIT_E_SIZE or KIT_E_HEADS, checked in that
 * order (test for zeros before you take a remainder). */
int gqa_check_config(const struct gqa_config *cfg)
{
    (void)cfg;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end gqa_check_config */

/* @listing gqa_forward */
/* Exercise 6.7. Grouped-query attention over a whole sequence.
 * X (T, d_model), out (T, d_model), weights (n_heads, T, T).
 * Q = X W_q (T, d_model); K = X W_k and V = X W_v are (T, d_kv),
 * d_kv = n_kv_heads * d_head. Query head i reads its columns
 * i*d_head .. of Q and the columns j*d_head .. of K and V, where
 * j = i / (n_heads / n_kv_heads): neighbours share, not i % n_kv_heads.
 * Otherwise it is mha_forward_fused() (chapter 3): scale by
 * 1/sqrt(d_head), mask p > t when causal, softmax, weighted sum into
 * concat, then W_o. Write it with the same loops as your
 * mha_forward_fused(), so that with n_kv_heads == n_heads the two agree
 * bit for bit. Errors as mha_forward(), with gqa_check_config(). */
int gqa_forward(const struct gqa_config *cfg, const struct mha_weights *w,
                const float *X, float *out, float *weights, int T)
{
    (void)cfg, (void)w, (void)X, (void)out, (void)weights, (void)T;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end gqa_forward */

/* @listing gqa_decode_step */
/* Exercise 6.8. mha_decode_step() with n_kv_heads K/V heads: k = x W_k
 * and v = x W_v are d_kv wide, the cache has n_kv_heads heads of d_head,
 * and query head i attends over cached head i / (n_heads / n_kv_heads).
 * Check gqa_check_config(), then the cache's shape (KIT_E_HEADS unless
 * c->n_kv_heads == n_kv_heads and c->d_head == d_head), then as in
 * mha_decode_step(). (Your mha_decode_step() is this with g = h: you may
 * move its body into a helper both call.) */
int gqa_decode_step(const struct gqa_config *cfg, const struct mha_weights *w,
                    struct kv_cache *c, const float *x, float *out)
{
    (void)cfg, (void)w, (void)c, (void)x, (void)out;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end gqa_decode_step */

/* ---------------------------------------------------------------------
 * What a cache costs
 * ------------------------------------------------------------------- */

/* @listing kv_cache_bytes */
/* Exercise 6.5. *bytes = 2 * n_layers * n_kv_heads * d_head * context
 * * batch * bytes_per_number (the 2: a key and a value).
 * KIT_E_NULL when bytes is NULL; KIT_E_SIZE when a size is not positive
 * or the product does not fit in uint64_t, and then *bytes is not
 * written. int * int overflows long before real models do: multiply in
 * uint64_t, and before each product check total > UINT64_MAX / f. */
int kv_cache_bytes(int n_layers, int n_kv_heads, int d_head, int context,
                   int batch, int bytes_per_number, uint64_t *bytes)
{
    (void)n_layers, (void)n_kv_heads, (void)d_head, (void)context;
    (void)batch, (void)bytes_per_number, (void)bytes;
    return KIT_E_TODO; /* TODO: replace with your code */
}
/* @end kv_cache_bytes */
