/*
 * registry.h: what the registry's arguments (exercises.def) become in
 * each place that reads it. An argument such as F_IN(A, prod(m, n)) is
 * never a macro itself: KIT_ARG(KIT_PARAM_, F_IN(A, prod(m, n))) pastes
 * the prefix to its first word and makes KIT_PARAM_F_IN(A, prod(m, n)).
 *
 *   KIT_PARAM_   its declaration in the signature    const float *A
 *   KIT_NAME_    its name, as the call's argument     A
 *   KIT_INTS_    its integers in a request (proxy.c)  m,
 *   KIT_BUFS_    its buffers in a request (proxy.c)   floats(A, n, 0),
 *   KIT_UNPACK_  the worker's copy of it, from the request's next
 *                integers and buffers (worker.c: I, F and IB, and the
 *                counters ni_ and nb_)
 *
 * KIT_EACH(m, a, ...) is m(a) m(...) for each argument (up to 16);
 * KIT_LIST(m, a, ...) the same with commas between.
 */
#ifndef KIT_REGISTRY_H
#define KIT_REGISTRY_H

#define KIT_CAT(a, b)        KIT_CAT_(a, b)
#define KIT_CAT_(a, b)       a##b
#define KIT_ARG(prefix, arg) KIT_CAT(prefix, arg)
#define KIT_COUNT(...)                                                         \
    KIT_COUNT_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3,   \
               2, 1, 0)
#define KIT_COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13,     \
                   _14, _15, _16, n, ...)                                      \
    n

#define KIT_EACH(m, ...)                                                       \
    KIT_CAT(KIT_EACH_, KIT_COUNT(__VA_ARGS__))(m, __VA_ARGS__)
#define KIT_EACH_1(m, a)       m(a)
#define KIT_EACH_2(m, a, ...)  m(a) KIT_EACH_1(m, __VA_ARGS__)
#define KIT_EACH_3(m, a, ...)  m(a) KIT_EACH_2(m, __VA_ARGS__)
#define KIT_EACH_4(m, a, ...)  m(a) KIT_EACH_3(m, __VA_ARGS__)
#define KIT_EACH_5(m, a, ...)  m(a) KIT_EACH_4(m, __VA_ARGS__)
#define KIT_EACH_6(m, a, ...)  m(a) KIT_EACH_5(m, __VA_ARGS__)
#define KIT_EACH_7(m, a, ...)  m(a) KIT_EACH_6(m, __VA_ARGS__)
#define KIT_EACH_8(m, a, ...)  m(a) KIT_EACH_7(m, __VA_ARGS__)
#define KIT_EACH_9(m, a, ...)  m(a) KIT_EACH_8(m, __VA_ARGS__)
#define KIT_EACH_10(m, a, ...) m(a) KIT_EACH_9(m, __VA_ARGS__)
#define KIT_EACH_11(m, a, ...) m(a) KIT_EACH_10(m, __VA_ARGS__)
#define KIT_EACH_12(m, a, ...) m(a) KIT_EACH_11(m, __VA_ARGS__)
#define KIT_EACH_13(m, a, ...) m(a) KIT_EACH_12(m, __VA_ARGS__)
#define KIT_EACH_14(m, a, ...) m(a) KIT_EACH_13(m, __VA_ARGS__)
#define KIT_EACH_15(m, a, ...) m(a) KIT_EACH_14(m, __VA_ARGS__)
#define KIT_EACH_16(m, a, ...) m(a) KIT_EACH_15(m, __VA_ARGS__)

#define KIT_LIST(m, ...)                                                       \
    KIT_CAT(KIT_LIST_, KIT_COUNT(__VA_ARGS__))(m, __VA_ARGS__)
#define KIT_LIST_1(m, a)       m(a)
#define KIT_LIST_2(m, a, ...)  m(a), KIT_LIST_1(m, __VA_ARGS__)
#define KIT_LIST_3(m, a, ...)  m(a), KIT_LIST_2(m, __VA_ARGS__)
#define KIT_LIST_4(m, a, ...)  m(a), KIT_LIST_3(m, __VA_ARGS__)
#define KIT_LIST_5(m, a, ...)  m(a), KIT_LIST_4(m, __VA_ARGS__)
#define KIT_LIST_6(m, a, ...)  m(a), KIT_LIST_5(m, __VA_ARGS__)
#define KIT_LIST_7(m, a, ...)  m(a), KIT_LIST_6(m, __VA_ARGS__)
#define KIT_LIST_8(m, a, ...)  m(a), KIT_LIST_7(m, __VA_ARGS__)
#define KIT_LIST_9(m, a, ...)  m(a), KIT_LIST_8(m, __VA_ARGS__)
#define KIT_LIST_10(m, a, ...) m(a), KIT_LIST_9(m, __VA_ARGS__)
#define KIT_LIST_11(m, a, ...) m(a), KIT_LIST_10(m, __VA_ARGS__)
#define KIT_LIST_12(m, a, ...) m(a), KIT_LIST_11(m, __VA_ARGS__)
#define KIT_LIST_13(m, a, ...) m(a), KIT_LIST_12(m, __VA_ARGS__)
#define KIT_LIST_14(m, a, ...) m(a), KIT_LIST_13(m, __VA_ARGS__)
#define KIT_LIST_15(m, a, ...) m(a), KIT_LIST_14(m, __VA_ARGS__)
#define KIT_LIST_16(m, a, ...) m(a), KIT_LIST_15(m, __VA_ARGS__)

/* The uses: an argument's declaration, name, integers, buffers and
 * unpacking; and, for an argument the call may change beyond its
 * buffers (a cache's fields), the reply's integers: how many
 * (KIT_NREP_), the worker's (KIT_RETURN_: reply_ and the counter no_) and
 * the judge's copy of them into the caller's struct (KIT_REPLY_:
 * proxy.c's rep_ and the counter nr_). */
#define KIT_PARAM(a)  KIT_ARG(KIT_PARAM_, a)
#define KIT_NAME(a)   KIT_ARG(KIT_NAME_, a)
#define KIT_INTS(a)   KIT_ARG(KIT_INTS_, a)
#define KIT_BUFS(a)   KIT_ARG(KIT_BUFS_, a)
#define KIT_UNPACK(a) KIT_ARG(KIT_UNPACK_, a)
#define KIT_NREP(a)   KIT_ARG(KIT_NREP_, a)
#define KIT_RETURN(a) KIT_ARG(KIT_RETURN_, a)
#define KIT_REPLY(a)  KIT_ARG(KIT_REPLY_, a)

#define KIT_PARAM_INT(x)            int x
#define KIT_PARAM_F_IN(x, n)        const float *x
#define KIT_PARAM_F_OUT(x, n)       float *x
#define KIT_PARAM_I_IN(x, n)        const int *x
#define KIT_PARAM_I_OUT(x, n)       int *x
#define KIT_PARAM_MHA_CFG(x)        const struct mha_config *x
#define KIT_PARAM_MHA_W(x, d)       const struct mha_weights *x
#define KIT_PARAM_MHA_W_OUT(x, d)   struct mha_weights *x
#define KIT_PARAM_GQA_CFG(x)        const struct gqa_config *x
#define KIT_PARAM_GQA_W(x, d, d_kv) const struct mha_weights *x
#define KIT_PARAM_CACHE(x)          struct kv_cache *x
#define KIT_PARAM_CACHE_IN(x)       const struct kv_cache *x
#define KIT_PARAM_U64_OUT(x, n)     uint64_t *x

#define KIT_NAME_INT(x)            x
#define KIT_NAME_F_IN(x, n)        x
#define KIT_NAME_F_OUT(x, n)       x
#define KIT_NAME_I_IN(x, n)        x
#define KIT_NAME_I_OUT(x, n)       x
#define KIT_NAME_MHA_CFG(x)        x
#define KIT_NAME_MHA_W(x, d)       x
#define KIT_NAME_MHA_W_OUT(x, d)   x
#define KIT_NAME_GQA_CFG(x)        x
#define KIT_NAME_GQA_W(x, d, d_kv) x
#define KIT_NAME_CACHE(x)          x
#define KIT_NAME_CACHE_IN(x)       x
#define KIT_NAME_U64_OUT(x, n)     x

/* proxy.c: floats(), ints_arg(), u64s_arg() and prod(). A struct's
 * integers start with whether it is set, so that a NULL one reaches the
 * student's function as NULL. */
#define KIT_INTS_INT(x)      x,
#define KIT_INTS_F_IN(x, n)  /* a buffer */
#define KIT_INTS_F_OUT(x, n) /* a buffer */
#define KIT_INTS_I_IN(x, n)  /* a buffer */
#define KIT_INTS_I_OUT(x, n) /* a buffer */
#define KIT_INTS_MHA_CFG(x)                                                    \
    x != NULL, x ? x->d_model : 0, x ? x->n_heads : 0, x ? x->causal : 0,
#define KIT_INTS_MHA_W(x, d)     x != NULL,
#define KIT_INTS_MHA_W_OUT(x, d) x != NULL,
#define KIT_INTS_GQA_CFG(x)                                                    \
    x != NULL, x ? x->d_model : 0, x ? x->n_heads : 0, x ? x->n_kv_heads : 0,  \
        x ? x->causal : 0,
#define KIT_INTS_GQA_W(x, d, d_kv) x != NULL,
#define KIT_INTS_CACHE(x)                                                      \
    x != NULL, x ? x->capacity : 0, x ? x->n_kv_heads : 0, x ? x->d_head : 0,  \
        x ? x->len : 0, x ? x->appends : 0,
#define KIT_INTS_CACHE_IN(x)   KIT_INTS_CACHE(x)
#define KIT_INTS_U64_OUT(x, n) /* a buffer */

#define KIT_BUFS_INT(x)            /* an integer */
#define KIT_BUFS_F_IN(x, n)        floats(x, n, 0),
#define KIT_BUFS_F_OUT(x, n)       floats(x, n, 1),
#define KIT_BUFS_I_IN(x, n)        ints_arg(x, n, 0),
#define KIT_BUFS_I_OUT(x, n)       ints_arg(x, n, 1),
#define KIT_BUFS_MHA_CFG(x)        /* integers */
#define KIT_BUFS_MHA_W(x, d)       KIT_W_BUFS(x, prod(d, d), prod(d, d), 0)
#define KIT_BUFS_MHA_W_OUT(x, d)   KIT_W_BUFS(x, prod(d, d), prod(d, d), 1)
#define KIT_BUFS_GQA_CFG(x)        /* integers */
#define KIT_BUFS_GQA_W(x, d, d_kv) KIT_W_BUFS(x, prod(d, d), prod(d, d_kv), 0)
#define KIT_BUFS_CACHE(x)          KIT_CACHE_BUFS(x, 1)
#define KIT_BUFS_CACHE_IN(x)       KIT_CACHE_BUFS(x, 0)
#define KIT_BUFS_U64_OUT(x, n)     u64s_arg(x, n, 1),
/* W_q and W_o are dq floats, W_k and W_v dkv */
#define KIT_W_BUFS(x, dq, dkv, out)                                            \
    floats(x ? x->W_q : NULL, dq, out), floats(x ? x->W_k : NULL, dkv, out),   \
        floats(x ? x->W_v : NULL, dkv, out),                                   \
        floats(x ? x->W_o : NULL, dq, out),
/* K and V, guards included (floats()); sent back unless the cache is
 * const */
#define KIT_CACHE_BUFS(x, out)                                                 \
    floats(x ? x->K : NULL, cache_floats(x), out),                             \
        floats(x ? x->V : NULL, cache_floats(x), out),

/* worker.c: I(), IL(), F(), IB(), S(), U64() (on S()) and the counters ni_ and nb_ */
#define KIT_UNPACK_INT(x)      const int x = I(ni_++);
#define KIT_UNPACK_F_IN(x, n)  const float *const x = F(nb_++);
#define KIT_UNPACK_F_OUT(x, n) float *const x = F(nb_++);
#define KIT_UNPACK_I_IN(x, n)  const int *const x = IB(nb_++);
#define KIT_UNPACK_I_OUT(x, n) int *const x = IB(nb_++);
#define KIT_UNPACK_MHA_CFG(x)                                                  \
    const struct mha_config x##_v_ = {I(ni_ + 1), I(ni_ + 2), I(ni_ + 3)};     \
    const struct mha_config *const x = I(ni_) ? &x##_v_ : NULL;                \
    ni_ += 4;
#define KIT_UNPACK_MHA_W(x, d)       KIT_UNPACK_W(const, x)
#define KIT_UNPACK_MHA_W_OUT(x, d)   KIT_UNPACK_W(, x)
#define KIT_UNPACK_GQA_W(x, d, d_kv) KIT_UNPACK_W(const, x)
#define KIT_UNPACK_W(cv, x)                                                    \
    struct mha_weights x##_v_ = {F(nb_), F(nb_ + 1), F(nb_ + 2), F(nb_ + 3)};  \
    cv struct mha_weights *const x = I(ni_++) ? &x##_v_ : NULL;                \
    nb_ += 4;
#define KIT_UNPACK_GQA_CFG(x)                                                  \
    const struct gqa_config x##_v_ = {I(ni_ + 1), I(ni_ + 2), I(ni_ + 3),      \
                                      I(ni_ + 4)};                             \
    const struct gqa_config *const x = I(ni_) ? &x##_v_ : NULL;                \
    ni_ += 5;
#define KIT_UNPACK_CACHE(x)    KIT_UNPACK_C(, x)
#define KIT_UNPACK_CACHE_IN(x) KIT_UNPACK_C(const, x)
#define KIT_UNPACK_C(cv, x)                                                    \
    struct kv_cache x##_v_ = {I(ni_ + 1), I(ni_ + 2),        I(ni_ + 3),       \
                              I(ni_ + 4), (long)IL(ni_ + 5), F(nb_),           \
                              F(nb_ + 1)};                                     \
    cv struct kv_cache *const x = I(ni_) ? &x##_v_ : NULL;                     \
    ni_ += 6, nb_ += 2;
#define KIT_UNPACK_U64_OUT(x, n) uint64_t *const x = U64(nb_++);

/* The reply's integers: a writable cache's fields after the call (the
 * worker sends its copy's whether or not the cache was set; the judge
 * takes them into a cache that is). */
#define KIT_NREP_INT(x)
#define KIT_NREP_F_IN(x, n)
#define KIT_NREP_F_OUT(x, n)
#define KIT_NREP_I_IN(x, n)
#define KIT_NREP_I_OUT(x, n)
#define KIT_NREP_MHA_CFG(x)
#define KIT_NREP_MHA_W(x, d)
#define KIT_NREP_MHA_W_OUT(x, d)
#define KIT_NREP_GQA_CFG(x)
#define KIT_NREP_GQA_W(x, d, d_kv)
#define KIT_NREP_CACHE(x) 5 +
#define KIT_NREP_CACHE_IN(x)
#define KIT_NREP_U64_OUT(x, n)

#define KIT_RETURN_INT(x)
#define KIT_RETURN_F_IN(x, n)
#define KIT_RETURN_F_OUT(x, n)
#define KIT_RETURN_I_IN(x, n)
#define KIT_RETURN_I_OUT(x, n)
#define KIT_RETURN_MHA_CFG(x)
#define KIT_RETURN_MHA_W(x, d)
#define KIT_RETURN_MHA_W_OUT(x, d)
#define KIT_RETURN_GQA_CFG(x)
#define KIT_RETURN_GQA_W(x, d, d_kv)
#define KIT_RETURN_CACHE(x)                                                    \
    reply_[no_++] = x##_v_.capacity, reply_[no_++] = x##_v_.n_kv_heads,        \
    reply_[no_++] = x##_v_.d_head, reply_[no_++] = x##_v_.len,                 \
    reply_[no_++] = x##_v_.appends;
#define KIT_RETURN_CACHE_IN(x)
#define KIT_RETURN_U64_OUT(x, n)

#define KIT_REPLY_INT(x)
#define KIT_REPLY_F_IN(x, n)
#define KIT_REPLY_F_OUT(x, n)
#define KIT_REPLY_I_IN(x, n)
#define KIT_REPLY_I_OUT(x, n)
#define KIT_REPLY_MHA_CFG(x)
#define KIT_REPLY_MHA_W(x, d)
#define KIT_REPLY_MHA_W_OUT(x, d)
#define KIT_REPLY_GQA_CFG(x)
#define KIT_REPLY_GQA_W(x, d, d_kv)
#define KIT_REPLY_CACHE(x)                                                     \
    if (x) {                                                                   \
        x->capacity = (int)rep_[nr_], x->n_kv_heads = (int)rep_[nr_ + 1];      \
        x->d_head = (int)rep_[nr_ + 2], x->len = (int)rep_[nr_ + 3];           \
        x->appends = (long)rep_[nr_ + 4];                                      \
    }                                                                          \
    nr_ += 5;
#define KIT_REPLY_CACHE_IN(x)
#define KIT_REPLY_U64_OUT(x, n)

#endif
