/*
 * worker_proto.h: how the judging process (proxy.c) and the worker that
 * runs a student's code (worker.c) talk, when grading.
 *
 * The worker reads requests on fd WORKER_REQ_FD and writes replies on
 * WORKER_REP_FD; its stdout and stderr are a third pipe that the judge
 * reads and caps. A request is a header, then n_ints 64-bit integers,
 * then n_bufs buffers, each a struct worker_buf and its bytes. A reply
 * is a header (ret: the function's status), n_ints integers, and the
 * buffers the function may write, in the order of the request, each of
 * exactly the length sent. The judge reads a reply into buffers of the
 * length it chose, so a worker that writes anything else is caught as a
 * garbled reply and cannot write outside them.
 */
#ifndef WORKER_PROTO_H
#define WORKER_PROTO_H

#include "mha.h"

#include <stdint.h>
#include <string.h>

#define WORKER_REQ_FD   3
#define WORKER_REP_FD   4
#define WORKER_MAGIC    0x4b495457u /* "KITW" */
#define WORKER_MAX_INTS 32
#define WORKER_MAX_BUFS 20
/* No buffer of the chapters' tests comes near this. */
#define WORKER_MAX_BYTES (64u << 20)

enum worker_fn {
    /* the leak check's counting allocator, which lives in the worker */
    W_LEAK_RESET = 1,
    W_LEAK_FAIL_NTH,
    W_LEAK_ALLOCATIONS,
    W_LEAK_LIVE,
    W_LEAK_FAILED_SITE,
    W_LEAK_OLDEST,
    /* chapter 1 */
    W_MATMUL = 16,
    W_MATMUL_BT,
    W_SOFTMAX_ROWS,
    W_ATTENTION,
    /* chapter 2 */
    W_CAUSAL_MASK = 32,
    W_CAUSAL_ATTENTION,
    /* chapter 3 */
    W_MHA_CHECK_CONFIG = 48,
    W_MHA_HEAD_SLICE,
    W_MHA_FORWARD,
    W_MHA_FORWARD_FUSED,
    /* chapter 4 */
    W_MATMUL_BACKWARD = 64,
    W_SOFTMAX_ROWS_BACKWARD,
    W_CAUSAL_MASK_BACKWARD,
    W_ATTENTION_BACKWARD,
    W_MHA_BACKWARD,
    /* chapter 7: each request's last integer is the judge's thread
     * count, which the worker sets before the call */
    W_MATMUL_IKJ = 80,
    W_MATMUL_BLOCKED,
    W_MATMUL_TILED,
    W_MATMUL_FAST,
    W_SOFTMAX_ONLINE,
    W_FLASH_ATTENTION,
    W_MHA_FORWARD_FLASH,
    /* chapter 6: a request with a cache carries its fields as integers
     * 7-12 and its K and V as buffers 7 and 8 (both ways); the reply's
     * integers are the fields after the call */
    W_KV_CACHE_APPEND = 96,
    W_KV_CACHE_READ,
    W_MHA_DECODE_STEP,
    W_MHA_DECODE,
    W_GQA_CHECK_CONFIG,
    W_GQA_FORWARD,
    W_GQA_DECODE_STEP,
    W_KV_CACHE_BYTES,
    /* chapter 8's exercises */
    W_LAYERNORM_FORWARD = 112,
    W_LAYERNORM_BACKWARD,
    W_HEAD_OFFSET_PROFILE,
    W_RELATION_SCORE,
    W_MEAN_ABLATE_HEAD,
    /* chapter 8's model (given/gpt.c), one request per call of the
     * model: nothing stays in the worker. The request carries the
     * model's sizes (integers 0-5), its numbers and its state; the
     * worker rebuilds the model (gpt_layout()), makes the call and sends
     * the numbers and the state back (proxy.c, "Chapter 8"). */
    W_GPT_FORWARD = 128,
    W_GPT_BACKWARD,
    W_GPT_TRAIN_STEP,
    W_GPT_GENERATE,
    W_GPT_TRAIN_STEPS,
    W_GPT_LOSS_PROBE,
    /* chapter 5's network (given/experiment.c and exp_measure.c), the
     * same way: one request per call, nothing kept in the worker */
    W_EXP_FORWARD = 144,
    W_EXP_BACKWARD,
    W_EXP_TRAIN_STEP,
    W_EXP_TRAIN,
    W_EXP_EVALUATE,
    W_EXP_LOSS_PROBE,
    W_EXP_MEASURE,
};

struct worker_header {
    uint32_t magic;
    uint32_t fn;
    uint32_t seq;
    int32_t ret;
    uint32_t n_ints;
    uint32_t n_bufs;
};

struct worker_buf {
    uint32_t present; /* 0: the pointer is NULL */
    uint32_t out;     /* 1: the function may write it: sent back */
    uint32_t bytes;
    uint32_t lead; /* bytes before the pointer (a guard zone) */
};

/* A float travels as the bits of an integer (chapter 8's losses, rates). */
static inline long long worker_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float worker_float(long long bits)
{
    uint32_t u = (uint32_t)bits;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Chapter 5's m->used and m->d_used (experiment.h): 0 when never set,
 * else 4, with 1 when its W_q is the scaled copy q and 2 when its W_o is
 * the copy o; rebuilt from a (the parameters or their gradients). */
static inline int worker_used_state(const struct mha_weights *u, const float *q,
                                    const float *o)
{
    if (!u->W_q)
        return 0;
    return 4 | (u->W_q == q) | (u->W_o == o) << 1;
}

static inline void worker_set_used(int state, struct mha_weights *u,
                                   const struct mha_weights *a, float *q,
                                   float *o)
{
    memset(u, 0, sizeof *u);
    if (state & 4) {
        *u = *a;
        if (state & 1)
            u->W_q = q;
        if (state & 2)
            u->W_o = o;
    }
}

#endif
