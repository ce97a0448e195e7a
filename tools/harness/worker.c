/*
 * worker.c: the process that runs a student's functions when grading.
 * It is linked (statically) with the student's files, the kit's given
 * code and stubs, and the leak check's counting allocator, and with no
 * test and no runner: it cannot see or write a result. It starts already
 * sandboxed (proxy.c sets its seccomp filter and limits before it is
 * executed), reads one request at a time on WORKER_REQ_FD, calls the
 * function and writes the outputs back on WORKER_REP_FD
 * (worker_proto.h). It keeps its state between calls until its requests
 * end, at the end of the test.
 */
#include "kit.h"
#include "kit_test.h"
#define KIT_LEAKCHECK_NO_MACROS
#include "leakcheck.h"
#include "registry.h"
#include "worker_proto.h"

#include "attention.h"
#include "decode.h"
#include "experiment.h"
#include "fast.h"
#include "gpt.h"
#include "grad.h"
#include "heads_lm.h"
#include "mha.h"

#include "../../given/test_hooks.h"

#include <errno.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Requests are read, and replies written, in large pieces. */
static char in_buf[1 << 16], out_buf[1 << 16];
static size_t in_at, in_len, out_len;

static int rd(void *p, size_t n, int at_start)
{
    char *c = p;
    while (n > 0) {
        if (in_at < in_len) {
            size_t k = in_len - in_at < n ? in_len - in_at : n;
            memcpy(c, in_buf + in_at, k);
            in_at += k;
            c += k;
            n -= k;
            continue;
        }
        ssize_t k = read(WORKER_REQ_FD, in_buf, sizeof in_buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (at_start && c == p)
                return 0; /* the test is over */
            _exit(3);
        }
        in_at = 0;
        in_len = (size_t)k;
    }
    return 1;
}

static void wr_now(const char *c, size_t n)
{
    while (n > 0) {
        ssize_t k = write(WORKER_REP_FD, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            _exit(3);
        c += k;
        n -= (size_t)k;
    }
}

static void wr_flush(void)
{
    wr_now(out_buf, out_len);
    out_len = 0;
}

static void wr(const void *p, size_t n)
{
    if (out_len + n > sizeof out_buf)
        wr_flush();
    if (n > sizeof out_buf) {
        wr_now(p, n);
        return;
    }
    memcpy(out_buf + out_len, p, n);
    out_len += n;
}

struct buf {
    struct worker_buf d;
    char *mem;
};

static struct buf bufs[WORKER_MAX_BUFS];
static long long iv[WORKER_MAX_INTS];
static struct worker_header h;

static float *F(uint32_t k)
{
    return k < h.n_bufs && bufs[k].d.present
               ? (float *)(void *)(bufs[k].mem + bufs[k].d.lead)
               : NULL;
}

static int *IB(uint32_t k)
{
    return k < h.n_bufs && bufs[k].d.present
               ? (int *)(void *)(bufs[k].mem + bufs[k].d.lead)
               : NULL;
}

static char *S(uint32_t k)
{
    return k < h.n_bufs && bufs[k].d.present ? bufs[k].mem : NULL;
}

static size_t SN(uint32_t k)
{
    return k < h.n_bufs && bufs[k].d.present ? bufs[k].d.bytes : 0;
}

static int I(uint32_t k)
{
    return k < h.n_ints ? (int)iv[k] : 0;
}

static long long IL(uint32_t k)
{
    return k < h.n_ints ? iv[k] : 0;
}

static uint64_t *U64(uint32_t k)
{
    return (uint64_t *)(void *)S(k);
}

static void copy_str(uint32_t k, const char *s)
{
    if (S(k) && SN(k) > 0)
        snprintf(S(k), SN(k), "%s", s ? s : "");
}

/* The judge's thread count for chapter 7's calls (0: leave it). */
static void threads(int n)
{
#ifdef _OPENMP
    if (n > 0)
        omp_set_num_threads(n);
#else
    (void)n;
#endif
}

/* Chapter 8's model (worker_proto.h; the layout is proxy.c's, "Chapter
 * 8"): the model is rebuilt from the request, called once, and its
 * numbers (in the request's buffers, sent back) and state (the reply's
 * integers) go back; nothing stays here. */
static int where(const int *p, const int *base, size_t bytes, long long *at)
{
    const uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
    if (!p || !base || a < b || a > b + bytes || (a - b) % sizeof(int))
        return 0;
    *at = (long long)((a - b) / sizeof(int));
    return 1;
}

static int chapter8_model(long long *out, uint32_t *n_out)
{
    const struct gpt_config cfg = {I(0), I(1), I(2), I(3), I(4), I(5)};
    struct gpt_model m;
    if (gpt_check_config(&cfg, NULL, 0) != KIT_OK)
        _exit(3);
    if (gpt_layout(&m, &cfg) != KIT_OK)
        _exit(4);
    const size_t P = (size_t)m.n_params * sizeof(float);
    const size_t A = (size_t)m.n_acts * sizeof(float);
    float *const keep[] = {m.params, m.grads, m.adam_m, m.adam_v, m.act_block};
    const size_t len[] = {P, P, P, P, A};
    for (uint32_t k = 0; k < 5; k++) {
        if (SN(k) != len[k] || bufs[k].d.lead)
            _exit(3);
        memcpy(keep[k], F(k), len[k]);
    }
    /* m->targets, and m->x but for gpt_backward(), which reads its
     * tokens (buffer 5): only whether they are NULL counts */
    static const int prior_targets = 0, prior_x = 0;
    m.adam_t = I(6), m.B = I(7), m.T = I(8), m.loss = worker_float(iv[9]);
    m.ablated = I(10);
    m.x = IB(5) ? IB(5) : I(31) ? &prior_x : NULL;
    m.targets = I(11) ? &prior_targets : NULL;
    if (m.B < 0 || m.B > cfg.B || m.T < 0 || m.T > cfg.T ||
        (IB(5) && SN(5) < (size_t)m.B * m.T * sizeof(int)))
        _exit(3);
    gpt_point_acts(&m);
    const struct gpt_ablation ab = {I(13), I(14), F(8)};
    heads_set_ablation(&m, I(12) ? &ab : NULL);
    threads(I(15));
    float loss = worker_float(iv[29]), norm = worker_float(iv[30]);
    /* a training call's tc (integers 19-27; unused by the others) */
    const struct gpt_train_config tc = {worker_float(iv[19]),
                                        worker_float(iv[20]),
                                        I(21),
                                        I(22),
                                        worker_float(iv[23]),
                                        worker_float(iv[24]),
                                        worker_float(iv[25]),
                                        worker_float(iv[26]),
                                        worker_float(iv[27])};
    int ret = 0;
    switch (h.fn) {
    case W_gpt_forward:
        ret = gpt_forward(&m, IB(6), IB(7), I(16), I(17));
        break;
    case W_gpt_backward: ret = gpt_backward(&m); break;
    case W_gpt_train_step:
        ret = gpt_train_step(&m, &tc, I(18), IB(6), IB(7), I(16), I(17), &loss,
                             I(28) ? &norm : NULL);
        break;
    case W_gpt_generate:
        ret = gpt_generate(&m, IB(9), I(16), I(17), worker_float(iv[18]), I(19),
                           (unsigned long long)iv[20]);
        break;
    case W_gpt_train_steps:
        ret = gpt_train_steps(&m, &tc, I(18), I(29), IB(6), IB(7), I(16), I(17),
                              F(10), F(11));
        break;
    case W_gpt_loss_probe:
        ret = gpt_loss_probe(&m, IB(6), IB(7), I(16), I(17), I(18), I(19),
                             IB(10), F(11), F(12));
        break;
    default: _exit(3);
    }
    for (uint32_t k = 0; k < 5; k++)
        memcpy(F(k), keep[k], len[k]);
    /* where m->x and m->targets point: 0 NULL, 1 as before, 2 the call's
     * x or targets (buffers 6, 7), 3 generate's out (buffer 9); then the
     * offset there */
    long long x_at = 0, t_at = 0, x_is = 0, t_is = 0;
    if (m.x && (m.x == IB(5) || m.x == &prior_x))
        x_is = 1;
    else if (where(m.x, IB(6), SN(6), &x_at))
        x_is = 2;
    else if (where(m.x, IB(9), SN(9), &x_at))
        x_is = 3;
    if (m.targets == &prior_targets)
        t_is = 1;
    else if (where(m.targets, IB(7), SN(7), &t_at))
        t_is = 2;
    const long long f[] = {
        m.adam_t, m.B,  m.T,  worker_bits(m.loss), m.ablated,        x_is,
        x_at,     t_is, t_at, worker_bits(loss),   worker_bits(norm)};
    memcpy(out, f, sizeof f);
    *n_out = sizeof f / sizeof f[0];
    gpt_free(&m);
    return ret;
}

/* Chapter 5's network (proxy.c, "Chapter 5"): rebuilt from the request,
 * called once, its numbers sent back in the request's buffers and its
 * state as the reply's integers. */
static void eval_set(struct exp_eval_set *e)
{
    const struct exp_eval_set s = {I(6),  I(7),   I(8),   I(9),
                                   I(10), IB(16), IB(17), I(11)};
    *e = s;
    if (SN(16) < (size_t)e->n_eval * e->T * sizeof(int) ||
        SN(17) < (size_t)e->n_probe * e->T * sizeof(int))
        _exit(3);
}

static int chapter5(long long *out, uint32_t *n_out)
{
    struct exp_config cfg;
    if (I(1) && SN(0) != sizeof cfg)
        _exit(3);
    if (I(1))
        memcpy(&cfg, S(0), sizeof cfg);
    cfg.layer = I(0) ? &exp_gqa_layer : NULL;
    struct exp_model m;
    struct exp_model *mp = I(1) ? &m : NULL;
    if (mp && exp_model_layout(&m, &cfg) != KIT_OK)
        _exit(4);
    float *keep[] = {NULL, NULL, NULL, NULL, NULL};
    size_t len[5] = {0};
    if (mp) {
        float *const b[] = {m.params, m.grads, m.adam_m, m.adam_v, m.X};
        const size_t P = (size_t)m.n_params * sizeof(float);
        const size_t n[] = {P, P, P, P, (size_t)m.n_scratch * sizeof(float)};
        for (uint32_t k = 0; k < 5; k++) {
            if (SN(k + 1) != n[k] || bufs[k + 1].d.lead)
                _exit(3);
            keep[k] = b[k], len[k] = n[k];
            memcpy(b[k], F(k + 1), n[k]);
        }
        m.adam_t = I(2);
        m.heads_off = (unsigned long long)iv[3];
        worker_set_used(I(4), &m.used, &m.attn, m.W_q_used, m.W_o_used);
        worker_set_used(I(5), &m.d_used, &m.d_attn, m.d_W_q_used, m.d_W_o_used);
    }
    struct exp_eval_set e;
    eval_set(&e);
    int ret = 0;
    switch (h.fn) {
    case W_exp_forward:
        ret = exp_forward(mp, IB(6), (double *)(void *)S(7),
                          (long *)(void *)S(8), (long *)(void *)S(9));
        break;
    case W_exp_backward:
        ret = exp_backward(mp, IB(6), worker_float(iv[12]));
        break;
    case W_exp_train_step:
        ret = exp_train_step(mp, IB(6), I(13), worker_float(iv[12]), F(10));
        break;
    case W_exp_train: ret = exp_train(mp, F(10)); break;
    case W_exp_evaluate:
        ret = exp_evaluate(mp, IB(6), I(13), (struct exp_score *)(void *)S(11));
        break;
    case W_exp_loss_probe:
        ret = exp_loss_probe(mp, IB(6), I(13), IB(12), F(13),
                             (double *)(void *)S(14));
        break;
    case W_exp_measure:
        ret = exp_measure(mp, I(14) ? &e : NULL,
                          (struct exp_result *)(void *)S(15));
        break;
    default: _exit(3);
    }
    *n_out = 4;
    if (!mp)
        return ret;
    for (uint32_t k = 0; k < 5; k++)
        memcpy(F(k + 1), keep[k], len[k]);
    const long long f[] = {
        m.adam_t, (long long)m.heads_off,
        worker_used_state(&m.used, m.W_q_used, m.W_o_used),
        worker_used_state(&m.d_used, m.d_W_q_used, m.d_W_o_used)};
    memcpy(out, f, sizeof f);
    exp_model_free(&m);
    return ret;
}

int main(void)
{
    for (;;) {
        if (!rd(&h, sizeof h, 1))
            return 0;
        if (h.magic != WORKER_MAGIC || h.n_ints > WORKER_MAX_INTS ||
            h.n_bufs > WORKER_MAX_BUFS)
            _exit(3);
        for (uint32_t k = 0; k < h.n_ints; k++) {
            int64_t v;
            rd(&v, sizeof v, 0);
            iv[k] = v;
        }
        for (uint32_t k = 0; k < h.n_bufs; k++) {
            rd(&bufs[k].d, sizeof bufs[k].d, 0);
            struct worker_buf *d = &bufs[k].d;
            bufs[k].mem = NULL;
            if (!d->present)
                continue;
            if ((size_t)d->lead + d->bytes > WORKER_MAX_BYTES)
                _exit(3);
            bufs[k].mem = malloc((size_t)d->lead + d->bytes + 1);
            if (!bufs[k].mem)
                _exit(4);
            rd(bufs[k].mem, (size_t)d->lead + d->bytes, 0);
        }
        long long out[16] = {0};
        uint32_t n_out = 0;
        int ret = 0;
        switch (h.fn) {
        case W_kit_leak_reset: kit_leak_reset(); break;
        case W_kit_leak_fail_nth: kit_leak_fail_nth((long)iv[0]); break;
        case W_kit_leak_allocations: ret = (int)kit_leak_allocations(); break;
        case W_kit_leak_live: ret = kit_leak_live(); break;
        case W_kit_leak_failed_site: {
            const char *file = "", *func = "";
            int line = 0;
            ret = kit_leak_failed_site(&file, &line, &func);
            copy_str(0, ret ? file : "");
            copy_str(1, ret ? func : "");
            out[0] = line;
            n_out = 1;
            break;
        }
        case W_kit_leak_oldest: {
            struct kit_leak_info info;
            ret = kit_leak_oldest(&info);
            copy_str(0, info.file);
            copy_str(1, info.func);
            copy_str(2, info.how);
            out[0] = info.n_blocks;
            out[1] = info.line;
            out[2] = (long long)info.size;
            out[3] = (long long)info.total;
            n_out = 4;
            break;
        }
        /* every exercise (exercises.def) */
#define KIT_EXERCISE(number, chapter, name, kind, ...)                         \
    KIT_CASE_##kind(name, __VA_ARGS__)
#define KIT_REQUEST(number, chapter, name)
#define KIT_CASE_SIMPLE(name, ...)   KIT_CASE(name, 0, __VA_ARGS__)
#define KIT_CASE_THREADED(name, ...) KIT_CASE(name, 1, __VA_ARGS__)
#define KIT_CASE(name, thr, ...)                                               \
    case W_##name: {                                                           \
        /* (out may be an argument's name, which hides this one) */            \
        long long *const reply_ = out;                                         \
        uint32_t ni_ = 0, nb_ = 0, no_ = 0;                                    \
        KIT_EACH(KIT_UNPACK, __VA_ARGS__)                                      \
        (void)reply_, (void)nb_;                                               \
        if (thr)                                                               \
            threads(I(ni_));                                                   \
        ret = name(KIT_LIST(KIT_NAME, __VA_ARGS__));                           \
        KIT_EACH(KIT_RETURN, __VA_ARGS__)                                      \
        n_out = no_;                                                           \
        break;                                                                 \
    }
#include "exercises.def"
#undef KIT_EXERCISE
#undef KIT_REQUEST
#undef KIT_CASE_SIMPLE
#undef KIT_CASE_THREADED
#undef KIT_CASE
        /* and the requests written by hand */
        case W_gpt_forward:
        case W_gpt_backward:
        case W_gpt_train_step:
        case W_gpt_generate:
        case W_gpt_train_steps:
        case W_gpt_loss_probe: ret = chapter8_model(out, &n_out); break;
        case W_exp_forward:
        case W_exp_backward:
        case W_exp_train_step:
        case W_exp_train:
        case W_exp_evaluate:
        case W_exp_loss_probe:
        case W_exp_measure: ret = chapter5(out, &n_out); break;
        default: _exit(3);
        }
        fflush(stdout);
        fflush(stderr);
        struct worker_header r = {WORKER_MAGIC, h.fn, h.seq, ret, n_out, 0};
        wr(&r, sizeof r);
        for (uint32_t k = 0; k < n_out; k++) {
            int64_t v = out[k];
            wr(&v, sizeof v);
        }
        for (uint32_t k = 0; k < h.n_bufs; k++) {
            if (bufs[k].d.out && bufs[k].d.present) {
                uint32_t len = bufs[k].d.lead + bufs[k].d.bytes;
                wr(&len, sizeof len);
                wr(bufs[k].mem, len);
            }
            /* zeroed before it is freed: a later read of memory never
             * set must not find a guard's NaN there and be named as a
             * read past this buffer (check.c's kit_output_free()) */
            if (bufs[k].mem)
                memset(bufs[k].mem, 0,
                       (size_t)bufs[k].d.lead + bufs[k].d.bytes + 1);
            free(bufs[k].mem);
            bufs[k].mem = NULL;
        }
        wr_flush();
    }
}
