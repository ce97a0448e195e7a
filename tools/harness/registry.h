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
 * unpacking. */
#define KIT_PARAM(a)  KIT_ARG(KIT_PARAM_, a)
#define KIT_NAME(a)   KIT_ARG(KIT_NAME_, a)
#define KIT_INTS(a)   KIT_ARG(KIT_INTS_, a)
#define KIT_BUFS(a)   KIT_ARG(KIT_BUFS_, a)
#define KIT_UNPACK(a) KIT_ARG(KIT_UNPACK_, a)

#define KIT_PARAM_INT(x)          int x
#define KIT_PARAM_F_IN(x, n)      const float *x
#define KIT_PARAM_F_OUT(x, n)     float *x
#define KIT_PARAM_I_IN(x, n)      const int *x
#define KIT_PARAM_I_OUT(x, n)     int *x
#define KIT_PARAM_MHA_CFG(x)      const struct mha_config *x
#define KIT_PARAM_MHA_W(x, d)     const struct mha_weights *x
#define KIT_PARAM_MHA_W_OUT(x, d) struct mha_weights *x
#define KIT_PARAM_GQA_CFG(x)      const struct gqa_config *x
#define KIT_PARAM_GQA_W(x)        const struct mha_weights *x
#define KIT_PARAM_CACHE(x)        struct kv_cache *x
#define KIT_PARAM_CACHE_IN(x)     const struct kv_cache *x
#define KIT_PARAM_U64_OUT(x, n)   uint64_t *x

#define KIT_NAME_INT(x)          x
#define KIT_NAME_F_IN(x, n)      x
#define KIT_NAME_F_OUT(x, n)     x
#define KIT_NAME_I_IN(x, n)      x
#define KIT_NAME_I_OUT(x, n)     x
#define KIT_NAME_MHA_CFG(x)      x
#define KIT_NAME_MHA_W(x, d)     x
#define KIT_NAME_MHA_W_OUT(x, d) x
#define KIT_NAME_GQA_CFG(x)      x
#define KIT_NAME_GQA_W(x)        x
#define KIT_NAME_CACHE(x)        x
#define KIT_NAME_CACHE_IN(x)     x
#define KIT_NAME_U64_OUT(x, n)   x

/* proxy.c: floats(), ints_arg() and prod() */
#define KIT_INTS_INT(x)      x,
#define KIT_INTS_F_IN(x, n)  /* a buffer */
#define KIT_INTS_F_OUT(x, n) /* a buffer */
#define KIT_INTS_I_IN(x, n)  /* a buffer */
#define KIT_INTS_I_OUT(x, n) /* a buffer */
#define KIT_INTS_MHA_CFG(x)                                                    \
    x != NULL, x ? x->d_model : 0, x ? x->n_heads : 0, x ? x->causal : 0,
#define KIT_INTS_MHA_W(x, d) x != NULL,

#define KIT_BUFS_INT(x)      /* an integer */
#define KIT_BUFS_F_IN(x, n)  floats(x, n, 0),
#define KIT_BUFS_F_OUT(x, n) floats(x, n, 1),
#define KIT_BUFS_I_IN(x, n)  ints_arg(x, n, 0),
#define KIT_BUFS_I_OUT(x, n) ints_arg(x, n, 1),
#define KIT_BUFS_MHA_CFG(x)  /* integers */
#define KIT_BUFS_MHA_W(x, d) KIT_MHA_W_BUFS(x, prod(d, d), 0)
#define KIT_MHA_W_BUFS(x, dd, out)                                             \
    floats(x ? x->W_q : NULL, dd, out), floats(x ? x->W_k : NULL, dd, out),    \
        floats(x ? x->W_v : NULL, dd, out),                                    \
        floats(x ? x->W_o : NULL, dd, out),

/* worker.c: I(), F(), IB() and the counters ni_ and nb_ */
#define KIT_UNPACK_INT(x)      const int x = I(ni_++);
#define KIT_UNPACK_F_IN(x, n)  const float *const x = F(nb_++);
#define KIT_UNPACK_F_OUT(x, n) float *const x = F(nb_++);
#define KIT_UNPACK_I_IN(x, n)  const int *const x = IB(nb_++);
#define KIT_UNPACK_I_OUT(x, n) int *const x = IB(nb_++);
#define KIT_UNPACK_MHA_CFG(x)                                                  \
    const struct mha_config x##_v_ = {I(ni_ + 1), I(ni_ + 2), I(ni_ + 3)};     \
    const struct mha_config *const x = I(ni_) ? &x##_v_ : NULL;                \
    ni_ += 4;
#define KIT_UNPACK_MHA_W(x, d)                                                 \
    const struct mha_weights x##_v_ = {F(nb_), F(nb_ + 1), F(nb_ + 2),         \
                                       F(nb_ + 3)};                            \
    const struct mha_weights *const x = I(ni_++) ? &x##_v_ : NULL;             \
    nb_ += 4;

#endif
