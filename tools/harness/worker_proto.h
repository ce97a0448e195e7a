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

/* The request numbers, W_ and a function's name (W_matmul), from the
 * registry (exercises.def), which says each one's layout: an
 * exercise's integers and buffers in its signature's order, or, for the
 * requests written by hand (KIT_REQUEST), proxy.c's. */
enum worker_fn {
#define KIT_EXERCISE(number, chapter, name, ...) W_##name = number,
#define KIT_REQUEST(number, chapter, name)       W_##name = number,
#include "exercises.def"
#undef KIT_EXERCISE
#undef KIT_REQUEST
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
