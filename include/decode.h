/*
 * decode.h: chapter 6, many heads at inference: the KV cache, incremental
 * decoding, multi-query and grouped-query attention.
 *
 * Dimension letters used in every shape comment:
 *   T        = number of tokens in a whole sequence
 *   t        = the position of the token being decoded, 0 .. T-1
 *   d_model  = width of a token embedding, and of the layer's output
 *   h        = number of query heads (n_heads)
 *   g        = number of K/V heads (n_kv_heads); g divides h
 *   d_head   = d_model / n_heads, the width of one head's q, k and v
 *   d_kv     = g * d_head, the width of one token's keys (and values)
 *   C        = a cache's capacity, the most positions it can hold
 *
 * Weight layout. Chapter 3's struct mha_weights, multiplying from the
 * right (Q = X W_q), with narrower key and value projections:
 *   W_q (d_model, d_model). Query head i owns the column block
 *     i*d_head .. (i+1)*d_head - 1, as in mha.h.
 *   W_k, W_v (d_model, d_kv), d_kv = n_kv_heads * d_head. K/V head j owns
 *     the column block j*d_head .. (j+1)*d_head - 1.
 *   W_o (d_model, d_model). Row block i meets query head i, as in mha.h.
 * Query head i reads K/V head i / (n_heads / n_kv_heads): the heads are
 * cut into n_kv_heads groups of n_heads / n_kv_heads neighbours, and each
 * group shares one K/V head (Llama's convention). With n_kv_heads ==
 * n_heads every head has its own, and the layer is chapter 3's
 * multi-head attention; with n_kv_heads == 1 it is multi-query attention.
 * There are no biases.
 *
 * The KV cache of one layer holds, for each K/V head, the key and value
 * of every position decoded so far:
 *   K (n_kv_heads, C, d_head): position p of K/V head j is the row
 *     K + (j*C + p)*d_head; rows 0 .. len-1 are filled.
 *   V (n_kv_heads, C, d_head): the same for the values.
 *
 * All arrays are flat, row-major and caller-allocated (see kit.h). A
 * function that returns an error writes nothing and changes nothing.
 */
#ifndef DECODE_H
#define DECODE_H

#include "kit.h"
#include "mha.h"

#include <stdint.h>

/* One layer's KV cache. Fill it with kv_cache_alloc(). */
struct kv_cache {
    int capacity;   /* C: the most positions it holds, > 0                 */
    int n_kv_heads; /* g: K/V heads, > 0                                   */
    int d_head;     /* width of one key and one value, > 0                 */
    int len;        /* positions held now, 0 .. capacity                   */
    long appends;   /* successful kv_cache_append() calls since alloc      */
    float *K;       /* (n_kv_heads, capacity, d_head)                      */
    float *V;       /* (n_kv_heads, capacity, d_head)                      */
};

/* A grouped-query attention layer. */
struct gqa_config {
    int d_model;    /* width of the embeddings, > 0                        */
    int n_heads;    /* query heads, > 0, divides d_model                   */
    int n_kv_heads; /* K/V heads, > 0, divides n_heads                     */
    int causal;     /* nonzero: query t sees keys 0..t only                */
};

/* ---------------------------------------------------------------------
 * Given code (given/kv_cache.c): not an exercise.
 * ------------------------------------------------------------------- */

/* Allocate an empty cache: len = 0, appends = 0, K and V zero-filled.
 * Returns KIT_OK, KIT_E_NULL (c is NULL), KIT_E_SIZE (a size is not
 * positive, or the cache would not fit in memory's address range) or
 * KIT_E_NOMEM. */
int kv_cache_alloc(struct kv_cache *c, int capacity, int n_kv_heads,
                   int d_head);

/* Free what kv_cache_alloc() allocated; set the pointers to NULL. */
void kv_cache_free(struct kv_cache *c);

/* Empty the cache for a new sequence: len = 0. The stored numbers stay
 * in memory (they are overwritten as positions come), and appends keeps
 * counting: it says how much projecting work the cache has seen. */
void kv_cache_reset(struct kv_cache *c);

/* Allocate a GQA layer's four matrices, zero-filled: W_q and W_o
 * (d_model, d_model), W_k and W_v (d_model, n_kv_heads * d_head).
 * Returns KIT_OK, an error of the config (as gqa_check_config() would
 * give) or KIT_E_NOMEM. Free with mha_weights_free(). */
int gqa_weights_alloc(struct mha_weights *w, const struct gqa_config *cfg);

/* Fill them uniform in [-1/sqrt(d_model), 1/sqrt(d_model)] from seed. */
int gqa_weights_randomize(struct mha_weights *w, const struct gqa_config *cfg,
                          unsigned long long seed);

/* ---------------------------------------------------------------------
 * Chapter 6: the exercises
 * ------------------------------------------------------------------- */

/* Append one position: k and v (n_kv_heads * d_head) hold every K/V
 * head's key and value of the new token, head j at offset j*d_head (one
 * row of X W_k and X W_v). They are stored at position len, and len
 * grows by 1, appends by 1.
 * Returns KIT_OK; KIT_E_NULL (c, k, v, c->K or c->V is NULL); KIT_E_SIZE
 * when the cache is full (len == capacity): then nothing changes. */
int kv_cache_append(struct kv_cache *c, const float *k, const float *v);

/* Read K/V head j's positions 0 .. t: K_out, V_out (t + 1, d_head).
 * Returns KIT_OK; KIT_E_NULL; KIT_E_HEADS (no K/V head j); KIT_E_SIZE
 * when t < 0 or t >= len (position t is not in the cache). */
int kv_cache_read(const struct kv_cache *c, int j, int t, float *K_out,
                  float *V_out);

/* Decode one token with chapter 3's layer (causal by construction):
 *   q = x W_q, k = x W_k, v = x W_v        x (d_model) -> (d_model) each
 *   append k and v to the cache at position t = c->len
 *   for each head i: a_i = softmax(q_i . k_{i,p} / sqrt(d_head)), p = 0..t
 *                    head_i = sum_p a_{i,p} v_{i,p}
 *   out = concat(head_0, ..., head_{h-1}) W_o       out (d_model)
 * No mask is needed: the cache holds nothing after t. cfg->causal is not
 * read. The cache must have n_kv_heads == n_heads and d_head ==
 * d_model / n_heads. Decoding x_0, x_1, ... in turn gives out_t equal to
 * row t of the causal mha_forward() of the whole sequence.
 * Returns KIT_OK; KIT_E_NULL (a pointer, w's four matrices or the
 * cache's K and V); an error of mha_check_config(); KIT_E_HEADS (the
 * cache's shape does not fit the layer); KIT_E_SIZE (the cache is full);
 * KIT_E_NOMEM. */
int mha_decode_step(const struct mha_config *cfg, const struct mha_weights *w,
                    struct kv_cache *c, const float *x, float *out);

/* Decode a whole sequence token by token: out row s is
 * mha_decode_step() of X row s, s = 0 .. T-1, continuing from what the
 * cache holds. X (T, d_model), out (T, d_model). Each token is projected
 * once: T tokens make exactly T appends.
 * Returns KIT_OK or an error of mha_decode_step(); KIT_E_SIZE when T <= 0
 * or the T tokens do not fit in the cache (checked first: then nothing
 * changes). */
int mha_decode(const struct mha_config *cfg, const struct mha_weights *w,
               struct kv_cache *c, const float *X, float *out, int T);

/* KIT_OK when cfg can exist; otherwise KIT_E_NULL (cfg NULL), KIT_E_SIZE
 * (d_model, n_heads or n_kv_heads not positive) or KIT_E_HEADS (n_heads
 * does not divide d_model, or n_kv_heads does not divide n_heads). */
int gqa_check_config(const struct gqa_config *cfg);

/* Grouped-query attention over a whole sequence:
 *   Q = X W_q (T, d_model), K = X W_k (T, d_kv), V = X W_v (T, d_kv)
 *   query head i, group size G = n_heads / n_kv_heads, reads K/V head
 *   j = i / G:  head_i = attention(Q cols of i, K cols of j, V cols of j)
 *   out = concat(head_0, ..., head_{h-1}) W_o
 * X (T, d_model), out (T, d_model), weights (n_heads, T, T).
 * With n_kv_heads == n_heads this is mha_forward(), bit for bit.
 * Errors as mha_forward(), with gqa_check_config(). */
int gqa_forward(const struct gqa_config *cfg, const struct mha_weights *w,
                const float *X, float *out, float *weights, int T);

/* mha_decode_step() for grouped-query attention: k = x W_k and v = x W_v
 * are (d_kv) wide, the cache has n_kv_heads heads of d_head, and query
 * head i attends over K/V head i / (n_heads / n_kv_heads). cfg->causal is
 * not read. Errors as mha_decode_step(), with gqa_check_config(). */
int gqa_decode_step(const struct gqa_config *cfg, const struct mha_weights *w,
                    struct kv_cache *c, const float *x, float *out);

/* The bytes a model's KV cache takes: a key and a value for every layer,
 * K/V head, position and sequence of the batch:
 *   *bytes = 2 * n_layers * n_kv_heads * d_head * context * batch
 *            * bytes_per_number.
 * Returns KIT_OK; KIT_E_NULL (bytes NULL); KIT_E_SIZE when a size is not
 * positive or the product does not fit in 64 bits (then *bytes is not
 * written). */
int kv_cache_bytes(int n_layers, int n_kv_heads, int d_head, int context,
                   int batch, int bytes_per_number, uint64_t *bytes);

#endif
