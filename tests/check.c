/*
 * check.c: helpers the chapters' tests share (declared in kit_test.h).
 *
 * The main one, kit_expect_tensor(), compares a whole tensor in one
 * assertion. When it fails, its message says where, what was expected and
 * what came back, and, when the student's output equals a known wrong
 * answer, which classic mistake produces exactly that.
 */
#include "attention.h"
#include "fast.h"
#include "grad.h"
#include "kit.h"
#include "kit_test.h"
#include "mha.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Never suggest SAN=1 to a run that has it on (make test SAN=1). */
#if defined(__SANITIZE_ADDRESS__)
#define SAN_ADVICE                                                             \
    "SAN=1 is on, and a read outside any allocation would have stopped the "   \
    "test with a sanitizer report"
#else
#define SAN_ADVICE "make test SAN=1 finds that"
#endif

void *kit_alloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "test: out of memory (%zu bytes)\n", bytes);
        abort();
    }
    return p;
}

void kit_poison(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
}

/* A kit_guarded() buffer's guards are signalling NaNs, each carrying in
 * its payload the buffer's slot, its generation and its own place.
 * Arithmetic on one (+, *, exp, a conversion) gives a quiet NaN with the
 * same payload, so a NaN that reaches an output from a read past the end
 * says which float of which buffer was read; and since the result is
 * quiet, even x[n] += 0 changes the guard's bits and is seen as a write.
 * The bits: exponent all ones, bit 22 clear (signalling; set once it has
 * passed through arithmetic), bit 21 set (the NAN macro and 0/0 never
 * have it), bit 20 the side (1: past the end), bits 14-19 the slot, 7-13
 * the generation, 0-6 k.
 *
 * Beyond each guard lies a far zone of GUARD_FAR floats, whose NaNs all
 * carry k = GUARD_FAR_K: a read 65 to 64 + GUARD_FAR floats outside the
 * buffer is named as "more than 64 floats past the end" of that buffer,
 * rather than reaching the guards of whatever buffer the allocator put
 * next to it and being named as that one's ("before the start of C" for
 * a read far past the end of A). GUARD_LEAD: the floats before the data. */
#define GUARD_MARK      0x7fa00000u
#define GUARD_MARK_MASK 0x7fa00000u /* bit 22 either way */
#define GUARD_FAR       192
#define GUARD_FAR_K     0x7fu
#define GUARD_LEAD      (GUARD_FAR + KIT_GUARD)

/* The live kit_guarded() buffers, so that the grader's
 * proxies (tools/harness/proxy.c) send a buffer to the worker with its
 * guards, and a write past its end is seen there as it is in-process. */
#define MAX_OUTPUTS 64
static struct guarded {
    float *base;
    size_t total;     /* floats, the guards included */
    size_t n;         /* floats between the guards */
    const char *name; /* "out" */
    const char *size; /* "T*d_model", or NULL */
    unsigned gen;     /* kit_guarded(): which use of the slot */
} outputs[MAX_OUTPUTS], retired[MAX_OUTPUTS]; /* retired: each slot's
                                                 last freed buffer */
static unsigned generation;

static uint32_t guard_bits(int slot, unsigned gen, int after, size_t k)
{
    return GUARD_MARK | (after ? 1u << 20 : 0u) | (uint32_t)slot << 14 |
           (gen & 0x7fu) << 7 | (uint32_t)(k & 0x7f);
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Set slot's guards and far zones to what they should hold. */
static void set_guards(int slot)
{
    float *base = outputs[slot].base, *x = base + GUARD_LEAD;
    const size_t n = outputs[slot].n;
    const unsigned gen = outputs[slot].gen;
    for (size_t k = 0; k < KIT_GUARD; k++) {
        x[-(ptrdiff_t)k - 1] = bits_float(guard_bits(slot, gen, 0, k + 1));
        x[n + k] = bits_float(guard_bits(slot, gen, 1, k));
    }
    for (size_t f = 0; f < GUARD_FAR; f++) {
        base[f] = bits_float(guard_bits(slot, gen, 0, GUARD_FAR_K));
        x[n + KIT_GUARD + f] =
            bits_float(guard_bits(slot, gen, 1, GUARD_FAR_K));
    }
}

float *kit_guarded(size_t n, const char *name, const char *size)
{
    float *base = kit_alloc((n + 2 * GUARD_LEAD) * sizeof *base);
    int slot = -1;
    for (int k = 0; k < MAX_OUTPUTS && slot < 0; k++)
        if (!outputs[k].base)
            slot = k;
    if (slot < 0) {
        fprintf(stderr, "test: more than %d guarded buffers at once\n",
                MAX_OUTPUTS);
        abort();
    }
    kit_poison(base + GUARD_LEAD, n);
    outputs[slot].base = base;
    outputs[slot].total = n + 2 * GUARD_LEAD;
    outputs[slot].n = n;
    outputs[slot].name = name;
    outputs[slot].size = size;
    outputs[slot].gen = generation++;
    set_guards(slot);
    return base + GUARD_LEAD;
}

float *kit_guarded_copy(const float *src, size_t n, const char *name,
                        const char *size)
{
    float *x = kit_guarded(n, name, size);
    memcpy(x, src, n * sizeof *x);
    return x;
}

void kit_output_free(float *x)
{
    if (!x)
        return;
    for (int k = 0; k < MAX_OUTPUTS; k++)
        if (outputs[k].base == x - GUARD_LEAD) {
            retired[k] = outputs[k]; /* its NaNs may still be named */
            outputs[k].base = NULL;
            /* but not the ones left in the freed memory: code that later
             * reads memory it never set (malloc's, the stack's) could
             * find a guard's NaN there and be named as a read past this
             * buffer. A plain NaN is "never set". */
            kit_poison(x - GUARD_LEAD, retired[k].total);
        }
    free(x - GUARD_LEAD);
}

int kit_output_extent(const float *x, size_t *lead, size_t *total)
{
    for (int k = 0; x && k < MAX_OUTPUTS; k++)
        if (outputs[k].base && x >= outputs[k].base &&
            x < outputs[k].base + outputs[k].total) {
            *lead = (size_t)(x - outputs[k].base);
            *total = outputs[k].total;
            return 1;
        }
    return 0;
}

/* "out[48], one past the end of its 48 floats (T*d_model)", or
 * "out[-1], just before its start": where a guard was touched. name is
 * cut at its first space ("scratch (flash_scratch_size floats)"). */
static void format_guard(char *buf, size_t size, const char *name,
                         const char *dims, size_t n, int after, size_t k)
{
    int len = (int)strcspn(name, " ");
    char sz[80] = "";
    if (dims)
        snprintf(sz, sizeof sz, " (%s)", dims);
    if (k == GUARD_FAR_K && !after)
        snprintf(buf, size,
                 "%.*s[-%d] or further, more than %d floats before its start",
                 len, name, KIT_GUARD + 1, KIT_GUARD);
    else if (k == GUARD_FAR_K)
        snprintf(buf, size,
                 "%.*s[%zu] or further, more than %d floats past the end of "
                 "its %zu float%s%s",
                 len, name, n + KIT_GUARD, KIT_GUARD, n, n == 1 ? "" : "s", sz);
    else if (!after)
        snprintf(buf, size, "%.*s[-%zu], %s its start", len, name, k,
                 k == 1 ? "just before" : "before");
    else if (k == 0)
        snprintf(buf, size, "%.*s[%zu], one past the end of its %zu float%s%s",
                 len, name, n, n, n == 1 ? "" : "s", sz);
    else
        snprintf(buf, size, "%.*s[%zu], %zu past the end of its %zu float%s%s",
                 len, name, n + k, k + 1, n, n == 1 ? "" : "s", sz);
}

static const char before_advice[] =
    "An index went below 0: check where each loop starts and the index "
    "arithmetic (a row's start is row * stride, a head's is h * d_head).";
static const char one_past_advice[] =
    "A loop bound off by one (<= where < belongs), a size one too big, a "
    "row's or a block's start one too far (i + 1 for i), or the wrong row "
    "stride?";
static const char far_past_advice[] =
    "Check the loop bounds (the right size in each loop) and the row "
    "stride in the index arithmetic.";

/* A write outside x (n floats, the buffer of slot): which side and k
 * (GUARD_FAR_K in a far zone), or 0 when none. */
static int find_write(const float *x, size_t n, int slot, int *after, size_t *k)
{
    for (size_t i = 0; i < KIT_GUARD; i++) {
        uint32_t lo = guard_bits(slot, outputs[slot].gen, 0, i + 1);
        uint32_t hi = guard_bits(slot, outputs[slot].gen, 1, i);
        if (float_bits(x[-(ptrdiff_t)i - 1]) != lo) {
            *after = 0, *k = i + 1;
            return 1;
        }
        if (float_bits(x[n + i]) != hi) {
            *after = 1, *k = i;
            return 1;
        }
    }
    const uint32_t far_lo = guard_bits(slot, outputs[slot].gen, 0, GUARD_FAR_K);
    const uint32_t far_hi = guard_bits(slot, outputs[slot].gen, 1, GUARD_FAR_K);
    for (size_t f = 0; f < GUARD_FAR; f++) {
        if (float_bits(x[-(ptrdiff_t)(KIT_GUARD + f) - 1]) != far_lo) {
            *after = 0, *k = GUARD_FAR_K;
            return 1;
        }
        if (float_bits(x[n + KIT_GUARD + f]) != far_hi) {
            *after = 1, *k = GUARD_FAR_K;
            return 1;
        }
    }
    return 0;
}

static int report_write(const char *file, int line, const char *call,
                        const char *name, const char *dims, size_t n, int after,
                        size_t k)
{
    char where[200];
    format_guard(where, sizeof where, name, dims, n, after, k);
    int len = (int)strcspn(name, " ");
    return kit_check(0, file, line, "%s wrote %s %.*s: %s. %s", call,
                     after ? "past the end of" : "before the start of", len,
                     name, where,
                     !after   ? before_advice
                     : k == 0 ? one_past_advice
                              : far_past_advice);
}

int kit_expect_in_bounds(const char *file, int line, const char *call,
                         const char *name, const float *x, size_t n)
{
    int slot = -1, after;
    size_t k;
    for (int s = 0; s < MAX_OUTPUTS; s++)
        if (outputs[s].base && outputs[s].base + GUARD_LEAD == x)
            slot = s;
    if (slot < 0) { /* the test's own mistake */
        fprintf(stderr, "test: %s:%d: %s is not a kit_guarded() buffer\n", file,
                line, name);
        abort();
    }
    if (find_write(x, n, slot, &after, &k)) {
        set_guards(slot); /* said once */
        return report_write(file, line, call, name, outputs[slot].size, n,
                            after, k);
    }
    return kit_check(1, file, line, "%s", "");
}

int kit_expect_guards(const char *file, int line, const char *call)
{
    for (int s = 0; s < MAX_OUTPUTS; s++) {
        int after;
        size_t k;
        if (!outputs[s].base || !find_write(outputs[s].base + GUARD_LEAD,
                                            outputs[s].n, s, &after, &k))
            continue;
        set_guards(s); /* said once */
        return report_write(file, line, call, outputs[s].name, outputs[s].size,
                            outputs[s].n, after, k);
    }
    return kit_check(1, file, line, "%s", "");
}

/* When x is a NaN from a guard of a live kit_guarded() buffer (or of
 * the last one freed from its slot: a test may copy the output out of a
 * guarded buffer and free it): that buffer, with the guard's side (1:
 * past the end), k, and whether the buffer is live. Else NULL. */
static const struct guarded *guard_of(float x, int *after, size_t *k, int *live)
{
    uint32_t u = float_bits(x) & 0x7fffffffu; /* either sign */
    if ((u & GUARD_MARK_MASK) != GUARD_MARK)
        return NULL;
    int slot = (int)(u >> 14 & 0x3f);
    const unsigned gen = u >> 7 & 0x7f;
    *after = (int)(u >> 20 & 1);
    *k = u & 0x7f;
    if ((*k >= KIT_GUARD + 1 && *k != GUARD_FAR_K) || (!*after && *k == 0))
        return NULL;
    *live = outputs[slot].base && (outputs[slot].gen & 0x7fu) == gen;
    return outputs[slot].base && (outputs[slot].gen & 0x7fu) == gen
               ? &outputs[slot]
           : retired[slot].base && (retired[slot].gen & 0x7fu) == gen
               ? &retired[slot]
               : NULL;
}

/* When x is a NaN from a guard: 1, with where it was read ("K[12], one
 * past the end of its 12 floats (T*d_k)") and the buffer's name. */
static int guard_read(float x, char *where, size_t size, const char **name)
{
    int after, live;
    size_t k;
    const struct guarded *b = guard_of(x, &after, &k, &live);
    if (!b)
        return 0;
    *name = b->name;
    format_guard(where, size, b->name, b->size, b->n, after, k);
    return 1;
}

long kit_guard_nan_from(float x, const float *buf)
{
    int after, live;
    size_t k;
    const struct guarded *b = guard_of(x, &after, &k, &live);
    if (!b || !live || b->base + GUARD_LEAD != buf)
        return 0;
    if (k == GUARD_FAR_K) /* the far zone: the index nearest the buffer */
        return after ? (long)(b->n + KIT_GUARD) : -(long)(KIT_GUARD + 1);
    return after ? (long)(b->n + k) : -(long)k;
}

/* "1st", "2nd", "3rd", "4th", ... */
static const char *ordinal(long k)
{
    const long t = k % 100;
    if (t >= 11 && t <= 13)
        return "th";
    return k % 10 == 1 ? "st" : k % 10 == 2 ? "nd" : k % 10 == 3 ? "rd" : "th";
}

int kit_expect_nomem(const char *file, int line, const struct kit_nomem *t)
{
    char about[400], when[400], why[300];
    /* 1. as it is: it must work, and its allocations are counted */
    t->prepare(t->ctx);
    kit_leak_fail_nth(0);
    const long before = kit_leak_allocations();
    kit_about_to_call(t->call);
    int rc = t->run(t->ctx);
    const long n = kit_leak_allocations() - before;
    if (!kit_check(rc == KIT_OK, file, line,
                   "%s returned %s (%d) before any allocation was made to "
                   "fail: it must work first (%s).",
                   t->call, kit_status_name(rc), rc, kit_strerror(rc)) ||
        kit_leak_check_when("on a call where every allocation succeeded"))
        return 0;
    /* 2. allocation k of n fails */
    for (long k = 1; k <= n; k++) {
        t->prepare(t->ctx);
        const int live = kit_leak_live();
        snprintf(about, sizeof about,
                 "%s, with its %ld%s allocation (of %ld) returning NULL",
                 t->call, k, ordinal(k), n);
        kit_about_to_call(about);
        const long calls0 = kit_leak_allocations();
        kit_leak_fail_nth(k);
        rc = t->run(t->ctx);
        kit_leak_fail_nth(0);
        const long calls = kit_leak_allocations() - calls0;
        const char *f = "?", *fn = "?";
        int l = 0;
        if (!kit_leak_failed_site(&f, &l, &fn))
            /* fewer allocations this time: nothing failed */
            continue;
        snprintf(when, sizeof when,
                 "%s, when its %ld%s allocation of %ld (in %s() at %s:%d) "
                 "returned NULL,",
                 t->call, k, ordinal(k), n, fn, f, l);
        if (!kit_check(rc == KIT_E_NOMEM, file, line,
                       "%s returned %s (%d), expected KIT_E_NOMEM (%s). Check "
                       "every malloc() and calloc() for NULL: free what was "
                       "already allocated and return KIT_E_NOMEM.",
                       when, kit_status_name(rc), rc,
                       kit_strerror(KIT_E_NOMEM)))
            return 0;
        const int left = kit_leak_live() - live;
        if (left > 0 && live >= 0) {
            char ctx[1024];
            if (left == calls - 1) /* every block but the NULL one */
                snprintf(ctx, sizeof ctx,
                         "%s returned KIT_E_NOMEM but freed none of the %d "
                         "block%s it had allocated. Likely mistake: an "
                         "early return KIT_E_NOMEM that frees nothing; free "
                         "every block on the way out (one exit label that "
                         "frees them all: free(NULL) does nothing)",
                         when, left, left == 1 ? "" : "s");
            else
                snprintf(ctx, sizeof ctx,
                         "%s returned KIT_E_NOMEM but did not free %d of the "
                         "%ld blocks it had allocated",
                         when, left, calls - 1);
            kit_leak_check_when(ctx);
            kit_leak_reset(); /* named once, here, not again at the end */
            return 0;
        }
        why[0] = '\0';
        if (t->unchanged &&
            !kit_check(t->unchanged(t->ctx, why, sizeof why), file, line,
                       "%s returned KIT_E_NOMEM as it should, but %s; on an "
                       "error it writes nothing: allocate everything before "
                       "the first write.",
                       when, why))
            return 0;
    }
    return kit_check(1, file, line, "%s", "");
}

void kit_to_double(const float *x, double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i];
}

void kit_to_float(const double *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = (float)x[i];
}

void kit_softmax_double(const double *X, double *Y, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        const double *x = X + (size_t)r * cols;
        double *y = Y + (size_t)r * cols, max = x[0], sum = 0;
        for (int c = 1; c < cols; c++)
            max = fmax(max, x[c]);
        for (int c = 0; c < cols; c++)
            sum += y[c] = exp(x[c] - max);
        for (int c = 0; c < cols; c++)
            y[c] /= sum;
    }
}

/* ---------------------------------------------------------------------
 * Which functions of the earlier chapters are still stubs?
 * ------------------------------------------------------------------- */

/* Each probe calls one student function on tiny valid input and returns
 * its status. The buffers are shared scratch, and a probe may overwrite
 * what another reads: only whether the status is KIT_E_TODO matters. */
static float z[8][16];
static const struct mha_config probe_cfg = {2, 1, 0};
static struct mha_weights probe_w(int k)
{
    struct mha_weights w = {z[k], z[k + 1], z[k + 2], z[k + 3]};
    return w;
}

static int p_matmul(void)
{
    return matmul(z[0], z[1], z[2], 1, 1, 1);
}
static int p_matmul_bt(void)
{
    return matmul_bt(z[0], z[1], z[2], 1, 1, 1);
}
static int p_softmax(void)
{
    return softmax_rows(z[2], 1, 1);
}
static int p_attention(void)
{
    return attention(z[0], z[1], z[2], z[3], z[4], 1, 1, 1);
}
static int p_causal_mask(void)
{
    return causal_mask(z[4], 1);
}
static int p_causal_attention(void)
{
    return causal_attention(z[0], z[1], z[2], z[3], z[4], 1, 1, 1);
}
static int p_check_config(void)
{
    return mha_check_config(&probe_cfg);
}
static int p_head_slice(void)
{
    return mha_head_slice(z[0], z[5], 2, 1, 0);
}
static int p_mha_forward(void)
{
    struct mha_weights w = probe_w(0);
    return mha_forward(&probe_cfg, &w, z[4], z[5], z[6], 1);
}
static int p_mha_fused(void)
{
    struct mha_weights w = probe_w(0);
    return mha_forward_fused(&probe_cfg, &w, z[4], z[5], z[6], 1);
}
static int p_matmul_backward(void)
{
    return matmul_backward(z[0], z[1], z[2], z[5], z[6], 1, 1, 1);
}
static int p_softmax_backward(void)
{
    return softmax_rows_backward(z[0], z[1], z[5], 1, 1);
}
static int p_mask_backward(void)
{
    return causal_mask_backward(z[5], 1);
}
static int p_attention_backward(void)
{
    return attention_backward(z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7], 1,
                              1, 1, 0);
}
static int p_mha_backward(void)
{
    struct mha_weights w = probe_w(0), d_w = probe_w(4);
    return mha_backward(&probe_cfg, &w, z[0], z[1], z[2], &d_w, 1);
}
static int p_matmul_fast(void)
{
    return matmul_fast(z[0], z[1], z[2], 1, 1, 1);
}
static int p_mha_flash(void)
{
    struct mha_weights w = probe_w(0);
    return mha_forward_flash(&probe_cfg, &w, z[4], z[5], 1);
}

/* Each chapter's tests link only the student files that chapter needs
 * (chapters/chapters.tsv), so a later chapter's functions may be absent:
 * the probes refer to them weakly, and an absent one is skipped. */
#pragma weak matmul
#pragma weak matmul_bt
#pragma weak softmax_rows
#pragma weak attention
#pragma weak causal_mask
#pragma weak causal_attention
#pragma weak mha_check_config
#pragma weak mha_head_slice
#pragma weak mha_forward
#pragma weak mha_forward_fused
#pragma weak matmul_backward
#pragma weak softmax_rows_backward
#pragma weak causal_mask_backward
#pragma weak attention_backward
#pragma weak mha_backward
#pragma weak matmul_fast
#pragma weak mha_forward_flash
#define PRESENT(f) ((void (*)(void))(f))

static const struct {
    int chapter;
    const char *name;
    int (*probe)(void);
    void (*present)(void); /* the function probed, NULL if not linked */
} probes[] = {
    {1, "matmul()", p_matmul, PRESENT(matmul)},
    {1, "matmul_bt()", p_matmul_bt, PRESENT(matmul_bt)},
    {1, "softmax_rows()", p_softmax, PRESENT(softmax_rows)},
    {1, "attention()", p_attention, PRESENT(attention)},
    {2, "causal_mask()", p_causal_mask, PRESENT(causal_mask)},
    {2, "causal_attention()", p_causal_attention, PRESENT(causal_attention)},
    {3, "mha_check_config()", p_check_config, PRESENT(mha_check_config)},
    {3, "mha_head_slice()", p_head_slice, PRESENT(mha_head_slice)},
    {3, "mha_forward()", p_mha_forward, PRESENT(mha_forward)},
    {3, "mha_forward_fused()", p_mha_fused, PRESENT(mha_forward_fused)},
    {4, "matmul_backward()", p_matmul_backward, PRESENT(matmul_backward)},
    {4, "softmax_rows_backward()", p_softmax_backward,
     PRESENT(softmax_rows_backward)},
    {4, "causal_mask_backward()", p_mask_backward,
     PRESENT(causal_mask_backward)},
    {4, "attention_backward()", p_attention_backward,
     PRESENT(attention_backward)},
    {4, "mha_backward()", p_mha_backward, PRESENT(mha_backward)},
    {7, "matmul_fast()", p_matmul_fast, PRESENT(matmul_fast)},
    {7, "mha_forward_flash()", p_mha_flash, PRESENT(mha_forward_flash)},
};

/* Whether chapter `chapter`'s tests call the file of chapter `earlier`:
 * whether `chapter` needs `earlier` in chapters/chapters.tsv. The
 * Makefile passes the table's needs as KIT_CH_NEEDS, "N:n n ...;" per
 * chapter (chapters 6 and 7 do not need chapter 4's gradients, so a stub
 * there must not be named as in their way). Without it, or for a chapter
 * it does not list, every earlier chapter counts. */
static int calls_chapter(int chapter, int earlier)
{
#ifdef KIT_CH_NEEDS
    const char *seg = KIT_CH_NEEDS;
    while (*seg) {
        char *end;
        long n = strtol(seg, &end, 10);
        if (end == seg || *end != ':')
            return 1; /* not the Makefile's format: count everything */
        seg = end + 1;
        if (n == chapter) {
            while (*seg && *seg != ';') {
                long need = strtol(seg, &end, 10);
                if (end == seg)
                    return 1;
                if (need == earlier)
                    return 1;
                seg = end + strspn(end, " ");
            }
            return 0;
        }
        seg += strcspn(seg, ";");
        seg += *seg == ';';
    }
    return 1;
#else
    (void)chapter;
    (void)earlier;
    return 1;
#endif
}

/* List in buf the functions of chapters before `chapter` that are still
 * stubs and that chapter's tests call; return the first such chapter, or
 * 0 if there is none. */
static int earlier_stubs(int chapter, char *buf, size_t size)
{
    int first = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        if (probes[i].chapter >= chapter || !probes[i].present ||
            !calls_chapter(chapter, probes[i].chapter) ||
            probes[i].probe() != KIT_E_TODO)
            continue;
        if (!first)
            first = probes[i].chapter;
        if (used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s (ch%d)",
                                     used ? ", " : "", probes[i].name,
                                     probes[i].chapter);
    }
    return first;
}

int kit_expect_status(const char *file, int line, const char *call, int got,
                      int want)
{
    if (got == want)
        return kit_check(1, file, line, "%s", "");
    if (got == KIT_E_TODO) {
        char stubs[512];
        int ch = earlier_stubs(kit_current_chapter(), stubs, sizeof stubs);
        if (ch)
            return kit_check(0, file, line,
                             "%s returned KIT_E_TODO, and these functions "
                             "of earlier chapters are still stubs: %s. "
                             "Later chapters call them, so finish them "
                             "first: make test CH=%d.",
                             call, stubs, ch);
        return kit_check(0, file, line,
                         "%s returned KIT_E_TODO: it is still the starter "
                         "stub. Write it, then run the test again.",
                         call);
    }
    return kit_check(0, file, line, "%s returned %s (%d: %s); expected %s (%s)",
                     call, kit_status_name(got), got, kit_strerror(got),
                     kit_status_name(want), kit_strerror(want));
}

/* ---------------------------------------------------------------------
 * Comparing a whole tensor, naming a mistake, describing a failure
 * ------------------------------------------------------------------- */

/* Add to msg (size bytes, *used of them used), never past its end. */
__attribute__((format(printf, 4, 5))) static void
append(char *msg, size_t size, int *used, const char *fmt, ...)
{
    if (*used < 0 || (size_t)*used >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg + *used, size - (size_t)*used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = (size_t)*used + (size_t)n < size ? *used + n : (int)size - 1;
}

static int close_enough(double got, double want, double tol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= tol + tol * fabs(want);
}

static int all_close(const float *got, const double *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++)
        if (!close_enough(got[i], want[i], tol))
            return 0;
    return 1;
}

/* Largest |a - b| over the n entries that are wrong, with NaN counted as
 * infinite (an expected -INFINITY that came back -INFINITY is right). */
static double max_error(const float *got, const double *want, size_t n,
                        double tol)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        if (close_enough(got[i], want[i], tol))
            continue;
        double e = fabs((double)got[i] - want[i]);
        if (isnan(e))
            return INFINITY;
        if (e > worst)
            worst = e;
    }
    return worst;
}

/* "1 entry is" / "3 entries are" */
static const char *entries(size_t n)
{
    return n == 1 ? "entry is" : "entries are";
}

/* The position of flat index k, as the student indexes it: [head][row][col]
 * for a shape with row blocks, [row][col], or one index for a vector. */
static void format_index(char *buf, size_t size, size_t k, int rows, int cols,
                         const struct kit_shape *shape)
{
    int r = (int)(k / (size_t)cols), c = (int)(k % (size_t)cols);
    if (shape && shape->row_block > 0 && rows > shape->row_block)
        snprintf(buf, size, "[%d][%d][%d]", r / shape->row_block,
                 r % shape->row_block, c);
    else if (cols == 1)
        snprintf(buf, size, "[%d]", r);
    else if (rows == 1)
        snprintf(buf, size, "[%d]", c);
    else
        snprintf(buf, size, "[%d][%d]", r, c);
}

/* Append a set of indices 0..n-1 (flag[i] != 0) as "1, 3-5, 7". */
static void append_set(char *msg, size_t size, int *used, const char *flag,
                       int n)
{
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (!flag[i])
            continue;
        int j = i;
        while (j + 1 < n && flag[j + 1])
            j++;
        if (j == i)
            append(msg, size, used, "%s%d", first ? "" : ", ", i);
        else if (j == i + 1)
            append(msg, size, used, "%s%d, %d", first ? "" : ", ", i, j);
        else
            append(msg, size, used, "%s%d-%d", first ? "" : ", ", i, j);
        first = 0;
        i = j;
    }
}

static int count_set(const char *flag, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += flag[i] != 0;
    return k;
}

/* Say which of n rows (or columns, or blocks: what) are wrong, when not
 * all of them are: "only the first row (row 0)", "rows 1, 3-5". */
static void append_where(char *msg, size_t size, int *used, const char *flag,
                         int n, const char *what, const char *whats)
{
    int k = count_set(flag, n);
    if (k == 0 || k == n || n == 1)
        return;
    if (k == 1 && flag[0])
        append(msg, size, used, " Only the first %s (%s 0) is wrong.", what,
               what);
    else if (k == 1 && flag[n - 1])
        append(msg, size, used, " Only the last %s (%s %d) is wrong.", what,
               what, n - 1);
    else {
        append(msg, size, used, " Only %s ", k == 1 ? what : whats);
        append_set(msg, size, used, flag, n);
        if (n - k == 1)
            append(msg, size, used, " %s wrong; the other %s is right.",
                   k == 1 ? "is" : "are", what);
        else
            append(msg, size, used, " %s wrong; the other %d %s are right.",
                   k == 1 ? "is" : "are", n - k, whats);
    }
}

/* The names a constant factor f may have, from the shape's sizes:
 * "sqrt(d_k)", "1/d_head", or for bare numbers "sqrt(8)". Appends
 * " (that is X)" when one fits. */
static void append_factor_name(char *msg, size_t size, int *used, double f,
                               const struct kit_shape *shape)
{
    char names[200] = "";
    int n_names = 0;
    size_t len = 0;
    for (int d = 0; shape && d < KIT_MAX_DIMS && shape->dims[d].name; d++) {
        double v = shape->dims[d].value;
        const char *nm = shape->dims[d].name;
        const struct {
            double value;
            const char *fmt;
        } cand[] = {{v, "%s"},
                    {sqrt(v), "sqrt(%s)"},
                    {1 / v, "1/%s"},
                    {1 / sqrt(v), "1/sqrt(%s)"}};
        for (size_t k = 0; k < 4; k++)
            if (v > 1 && fabs(f - cand[k].value) <= 1e-4 * fabs(f) &&
                len < sizeof names) {
                char one[64];
                snprintf(one, sizeof one, cand[k].fmt, nm);
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                        n_names++ ? " or " : "", one);
            }
    }
    if (n_names) {
        append(msg, size, used, " (= %s)", names);
        return;
    }
    for (int k = 2; k <= 4096; k++) {
        double s = sqrt((double)k);
        if (fabs(f - k) <= 1e-5 * k && k <= 64)
            return; /* a whole number says it all */
        if (fabs(f - s) <= 1e-5 * s) {
            append(msg, size, used, " (= sqrt(%d))", k);
            return;
        }
        if (fabs(f - 1 / s) <= 1e-5 / s) {
            append(msg, size, used, " (= 1/sqrt(%d))", k);
            return;
        }
        if (fabs(f - 1.0 / k) <= 1e-5 / k) {
            append(msg, size, used, " (= 1/%d)", k);
            return;
        }
    }
}

/* got = f * want for one f (not 1) on every entry? Returns f, or NAN. */
static double constant_factor(const float *got, const double *want, size_t n,
                              double tol)
{
    size_t big = n;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(want[i]) || !isfinite(got[i]))
            return NAN;
        if (big == n || fabs(want[i]) > fabs(want[big]))
            big = i;
    }
    if (big == n || fabs(want[big]) < 1e-6)
        return NAN;
    double f = got[big] / want[big];
    if (fabs(f - 1) < 1e-3)
        return NAN;
    double t = fmax(tol, 1e-6);
    for (size_t i = 0; i < n; i++)
        if (fabs(got[i] - f * want[i]) > t + t * fabs(f * want[i]))
            return NAN;
    return f;
}

/* got = want + c for one c (not 0) on every entry? Returns c, or NAN. */
static double constant_offset(const float *got, const double *want, size_t n,
                              double tol)
{
    if (!isfinite(got[0]) || !isfinite(want[0]))
        return NAN;
    double c = got[0] - want[0], t = fmax(tol, 1e-6);
    if (fabs(c) <= t)
        return NAN;
    for (size_t i = 1; i < n; i++)
        if (!isfinite(got[i]) || !isfinite(want[i]) ||
            fabs(got[i] - want[i] - c) > t + t * fabs(want[i]))
            return NAN;
    return c;
}

/* The factor f (not 1) that every wrong block of got shares with the
 * same block of want, or NAN. Blocks are row blocks of rb rows (rb <
 * rows) or column blocks of cb columns (cb < cols). */
static double block_factor(const float *got, const double *want, int rows,
                           int cols, int rb, int cb, double tol)
{
    int n_rb = rows / rb, n_cb = cols / cb;
    size_t bs = (size_t)rb * cb;
    float *g = kit_alloc(bs * sizeof *g);
    double *w = kit_alloc(bs * sizeof *w);
    double common = NAN;
    int ok = 1;
    for (int br = 0; br < n_rb && ok; br++)
        for (int bc = 0; bc < n_cb && ok; bc++) {
            size_t k = 0;
            for (int r = br * rb; r < (br + 1) * rb; r++)
                for (int c = bc * cb; c < (bc + 1) * cb; c++, k++) {
                    g[k] = got[(size_t)r * cols + c];
                    w[k] = want[(size_t)r * cols + c];
                }
            if (all_close(g, w, bs, tol))
                continue;
            double f = constant_factor(g, w, bs, tol);
            if (isnan(f) ||
                (!isnan(common) && fabs(f - common) > 1e-4 * fabs(common)))
                ok = 0;
            else
                common = f;
        }
    free(g), free(w);
    return ok ? common : NAN;
}

/* Is every row of got the same row of want times a factor of that row,
 * with at least two different factors? */
static int row_factors(const float *got, const double *want, int rows, int cols,
                       double tol)
{
    double first = NAN;
    int differ = 0;
    for (int r = 0; r < rows; r++) {
        const float *g = got + (size_t)r * cols;
        const double *w = want + (size_t)r * cols;
        double f = constant_factor(g, w, (size_t)cols, tol);
        if (isnan(f)) {
            if (!all_close(g, w, (size_t)cols, tol))
                return 0;
            f = 1;
        }
        if (isnan(first))
            first = f;
        differ |= fabs(f - first) > 1e-4 * fabs(first);
    }
    return differ;
}

/* Is got the transpose of want? Both (rows, cols), read in blocks of
 * rb rows (a (h, T, T) tensor is h blocks of T rows); each block
 * (rb, cols) is compared as a (cols, rb) matrix with want's block
 * transposed. */
static int is_transpose(const float *got, const double *want, int rows,
                        int cols, int rb, double tol)
{
    if (rb <= 0 || rows % rb)
        rb = rows;
    if (rb == 1 || cols == 1)
        return 0; /* a vector's transpose has the same numbers */
    for (int b = 0; b < rows / rb; b++) {
        const float *g = got + (size_t)b * rb * cols;
        const double *w = want + (size_t)b * rb * cols;
        for (int r = 0; r < rb; r++)
            for (int c = 0; c < cols; c++)
                if (!close_enough(g[(size_t)c * rb + r],
                                  w[(size_t)r * cols + c], tol))
                    return 0;
    }
    return 1;
}

/* Describe what is wrong with got, from the structure of its error,
 * without guessing at a cause: how many entries, which rows, columns and
 * blocks, a constant factor or offset, a transpose, NaN and infinities.
 * Returns the number of NaN entries where the answer is finite. */
static size_t describe(char *msg, size_t size, int *used, const float *got,
                       const double *want, int rows, int cols, double tol,
                       const struct kit_shape *shape)
{
    size_t n = (size_t)rows * (size_t)cols;
    size_t n_bad = 0, n_finite = 0, n_nan = 0, n_pinf = 0, n_ninf = 0;
    int rb = shape && shape->row_block > 0 && rows % shape->row_block == 0
                 ? shape->row_block
                 : rows;
    int cb = shape && shape->col_block > 0 && cols % shape->col_block == 0
                 ? shape->col_block
                 : cols;
    int n_rblocks = rows / rb, n_cblocks = cols / cb;
    const char *block = shape && shape->block ? shape->block : "block";
    char *bad_row = kit_alloc((size_t)rb), *bad_col = kit_alloc((size_t)cols);
    char *bad_rblock = kit_alloc((size_t)n_rblocks);
    char *bad_cblock = kit_alloc((size_t)n_cblocks);
    int above = 0, on = 0, below = 0;
    for (size_t k = 0; k < n; k++) {
        int r = (int)(k / (size_t)cols), c = (int)(k % (size_t)cols);
        if (isfinite(want[k])) {
            n_finite++;
            n_nan += isnan(got[k]) != 0;
            n_pinf += isinf(got[k]) && got[k] > 0;
            n_ninf += isinf(got[k]) && got[k] < 0;
        }
        if (close_enough(got[k], want[k], tol))
            continue;
        n_bad++;
        bad_row[r % rb] = 1, bad_col[c] = 1;
        bad_rblock[r / rb] = 1, bad_cblock[c / cb] = 1;
        above += c > r % rb, on += c == r % rb, below += c < r % rb;
    }
    if (n_finite && n_nan == n_finite) {
        append(msg, size, used,
               " Every entry is NaN. Either the output was never written "
               "(the test fills it with NaN first) or added to without being "
               "set to zero, or a NaN was computed and spread to every "
               "entry: 0/0, inf - inf, exp(-inf - -inf), an overflow.");
        goto done;
    }
    if (n_bad == n && n > 1)
        append(msg, size, used, " Every entry is wrong.");
    else if (n_bad == 1 && n > 1)
        append(msg, size, used, " Only that one entry of %zu is wrong.", n);
    else if (n > 1)
        append(msg, size, used, " %zu of %zu entries are wrong.", n_bad, n);

    double f = constant_factor(got, want, n, tol);
    double off = isnan(f) ? constant_offset(got, want, n, tol) : NAN;
    int all_zero = 1;
    for (size_t k = 0; k < n && all_zero; k++)
        all_zero = got[k] == 0.0f;
    if (all_zero)
        append(msg, size, used, " Every entry of your output is 0.");
    else if (!isnan(f) && fabs(f + 1) < 1e-4)
        append(msg, size, used,
               " Every entry has the right size but the wrong sign.");
    else if (!isnan(f)) {
        append(msg, size, used,
               " Every entry is the right one times the same factor, %.6g", f);
        append_factor_name(msg, size, used, f, shape);
        append(msg, size, used, ".");
    } else if (!isnan(off))
        append(msg, size, used,
               " Every entry is the right one plus the same number, %.6g.",
               off);
    else if (n_bad > 1 && is_transpose(got, want, rows, cols, rb, tol))
        append(msg, size, used,
               " Your output is the transpose of the right one: entry "
               "[i][j] holds what belongs at [j][i]%s.",
               n_rblocks > 1 ? ", within each block" : "");
    else if (n_bad > 1 && cols > 1 && row_factors(got, want, rows, cols, tol))
        append(msg, size, used,
               " Each wrong row is the right row times a number of its own: "
               "the proportions within each row are right, the row's total "
               "is not.");
    else if (n_bad > 1 && (n_rblocks > 1 || n_cblocks > 1) &&
             !isnan(f = block_factor(got, want, rows, cols, rb, cb, tol))) {
        append(msg, size, used,
               " In each wrong %s's block, every entry is the right one "
               "times the same factor, %.6g",
               block, f);
        append_factor_name(msg, size, used, f, shape);
        append(msg, size, used, ".");
    }

    if (n_bad == 1)
        ; /* its place is already said */
    else if (n_rblocks > 1) {
        char what[40], whats[48];
        snprintf(what, sizeof what, "%s", block);
        snprintf(whats, sizeof whats, "%ss", block);
        append_where(msg, size, used, bad_rblock, n_rblocks, what, whats);
    }
    int k_cb = count_set(bad_cblock, n_cblocks);
    if (n_cblocks > 1 && n_bad > 1 && k_cb < n_cblocks) {
        append(msg, size, used, " Only the columns of %s%s ", block,
               k_cb == 1 ? "" : "s");
        append_set(msg, size, used, bad_cblock, n_cblocks);
        append(msg, size, used,
               " are wrong (a %s's block is %d columns wide); the others are "
               "right.",
               block, cb);
    }
    if (n_bad > 1) {
        append_where(msg, size, used, bad_row, rb, "row", "rows");
        if (n_cblocks == 1 || k_cb == n_cblocks)
            append_where(msg, size, used, bad_col, cols, "column", "columns");
    }
    if (rb == cols && rb > 1 && n_bad > 1) {
        if (above && !on && !below)
            append(msg, size, used,
                   " Every wrong entry is above the diagonal (column > "
                   "row).");
        else if (!above && on && !below)
            append(msg, size, used, " Only the diagonal is wrong.");
        else if (!above && !on && below)
            append(msg, size, used,
                   " Every wrong entry is below the diagonal (column < "
                   "row).");
    }
    if (n_nan || n_pinf || n_ninf) {
        append(msg, size, used, " Where the answer is finite,");
        if (n_nan)
            append(msg, size, used, " %zu %s NaN%s", n_nan, entries(n_nan),
                   n_pinf || n_ninf ? "," : ".");
        if (n_pinf)
            append(msg, size, used, " %zu %s +inf%s", n_pinf, entries(n_pinf),
                   n_ninf ? "," : ".");
        if (n_ninf)
            append(msg, size, used, " %zu %s -inf.", n_ninf, entries(n_ninf));
    }
done:
    free(bad_row), free(bad_col), free(bad_rblock), free(bad_cblock);
    return n_finite && n_nan == n_finite ? 0 : n_nan;
}

int kit_expect_tensor_shaped(const char *file, int line, const char *call,
                             const float *got, const double *want, int rows,
                             int cols, const struct kit_shape *shape,
                             double tol, const struct kit_mistake *mistakes,
                             int n_mistakes)
{
    size_t n = (size_t)rows * (size_t)cols;
    size_t bad = n;
    for (size_t i = 0; i < n; i++)
        if (!close_enough(got[i], want[i], tol)) {
            bad = i;
            break;
        }
    if (bad == n)
        return kit_check(1, file, line, "%s", "");

    char msg[3500], where[48];
    format_index(where, sizeof where, bad, rows, cols, shape);
    int used = snprintf(msg, sizeof msg,
                        "%s: entry %s should be %.6g but is %.6g (largest "
                        "error %.3g, allowed %.1g).",
                        call, where, want[bad], (double)got[bad],
                        max_error(got, want, n, tol), tol);

    /* A NaN from a guard: the code read past the end of that buffer.
     * Checked before the mistakes: no mistake's model holds a guard's
     * NaN, and a model whose entries are NaN (a poisoned output never
     * written) must not be matched by one. */
    size_t n_read = 0, first_read = n;
    const char *read_name = NULL;
    char read_where[200];
    for (size_t i = 0; i < n; i++) {
        char w[200];
        const char *nm;
        if (guard_read(got[i], w, sizeof w, &nm)) {
            if (!n_read++) {
                first_read = i, read_name = nm;
                snprintf(read_where, sizeof read_where, "%s", w);
            }
        }
    }
    if (n_read) {
        char how_many[80];
        if (n_read == n)
            snprintf(how_many, sizeof how_many, "every entry holds such a NaN");
        else
            snprintf(how_many, sizeof how_many,
                     "%zu of the %zu entries hold%s such a NaN", n_read, n,
                     n_read == 1 ? "s" : "");
        format_index(where, sizeof where, first_read, rows, cols, shape);
        append(msg, sizeof msg, &used,
               " " KIT_NAMING_MARK ": a read past the %s of %.*s. Entry %s "
               "is the NaN the test keeps in %s, outside the buffer, carried "
               "into the output by the arithmetic; %s. %s",
               strstr(read_where, "its start") ? "start" : "end",
               (int)strcspn(read_name, " "), read_name, where, read_where,
               how_many,
               strstr(read_where, "its start")  ? before_advice
               : strstr(read_where, "one past") ? one_past_advice
                                                : far_past_advice);
        return kit_check(0, file, line, "%s", msg);
    }

    /* Name the classic mistakes whose answer this is, and only those.
     * More than one can fit the same numbers; then say so, rather than
     * guess. The words KIT_NAMING_MARK start every naming. */
    int match[16], n_match = 0;
    for (int k = 0; k < n_mistakes && n_match < 16; k++)
        if (mistakes[k].value && all_close(got, mistakes[k].value, n, tol))
            match[n_match++] = k;
    if (n_match == 1) {
        const struct kit_mistake *m = &mistakes[match[0]];
        append(msg, sizeof msg, &used,
               " " KIT_NAMING_MARK ": %s. Your output is what that mistake "
               "gives. %s",
               m->name, m->advice);
        return kit_check(0, file, line, "%s", msg);
    }
    if (n_match > 1) {
        append(msg, sizeof msg, &used,
               " " KIT_NAMING_MARK "s: your output fits %d classic mistakes, "
               "and these numbers cannot tell them apart:",
               n_match);
        for (int k = 0; k < n_match && used < (int)sizeof msg; k++)
            append(msg, sizeof msg, &used, " (%d) %s: %s", k + 1,
                   mistakes[match[k]].name, mistakes[match[k]].advice);
        return kit_check(0, file, line, "%s", msg);
    }

    /* No known mistake gives these numbers: say what is wrong instead. */
    size_t n_nan =
        describe(msg, sizeof msg, &used, got, want, rows, cols, tol, shape);
    int any_inf = 0;
    for (size_t i = 0; i < n && !any_inf; i++)
        any_inf = isinf(got[i]) != 0;
    if (n_nan && any_inf)
        append(msg, sizeof msg, &used,
               " NaN comes from inf - inf, 0 * inf or 0/0.");
    else if (n_nan)
        append(msg, sizeof msg, &used,
               " NaN comes from 0/0, inf - inf or 0 * inf, or from reading "
               "memory that was never set, as past the end of an array "
               "(" SAN_ADVICE ").");
    return kit_check(0, file, line, "%s", msg);
}

int kit_expect_tensor(const char *file, int line, const char *call,
                      const float *got, const double *want, int rows, int cols,
                      double tol, const struct kit_mistake *mistakes,
                      int n_mistakes)
{
    return kit_expect_tensor_shaped(file, line, call, got, want, rows, cols,
                                    NULL, tol, mistakes, n_mistakes);
}

unsigned long long kit_hidden_seed(void)
{
    const char *s = getenv("KIT_HIDDEN_SEED");
    if (s && *s) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (*end == '\0')
            return v;
    }
    return 20261201ULL;
}
