/*
 * check.c: helpers the chapters' tests share (declared in kit_test.h).
 *
 * The main one, kit_expect_tensor(), compares a whole tensor in one
 * assertion. When it fails, its message says where, what was expected and
 * what came back, and, when the student's output equals a known wrong
 * answer, which classic mistake produces exactly that.
 */
#include "attention.h"
#include "grad.h"
#include "kit.h"
#include "kit_test.h"
#include "mha.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The guard value: unlikely to be computed by any attention code. */
static const float guard_value = -7777.25f;

float *kit_output(size_t n)
{
    float *base = kit_alloc((n + 2 * KIT_GUARD) * sizeof *base);
    for (size_t i = 0; i < n + 2 * KIT_GUARD; i++)
        base[i] = guard_value;
    kit_poison(base + KIT_GUARD, n);
    return base + KIT_GUARD;
}

void kit_output_free(float *x)
{
    if (x)
        free(x - KIT_GUARD);
}

int kit_expect_in_bounds(const char *file, int line, const char *call,
                         const char *name, const float *x, size_t n)
{
    for (size_t k = 0; k < KIT_GUARD; k++) {
        if (x[-(ptrdiff_t)k - 1] != guard_value)
            return kit_check(0, file, line,
                             "%s wrote before the start of %s: at index "
                             "-%zu. An index went below 0; check the loop "
                             "bounds and the index arithmetic.",
                             call, name, k + 1);
        if (x[n + k] != guard_value)
            return kit_check(0, file, line,
                             "%s wrote past the end of %s, which holds %zu "
                             "entries: at index %zu. Check the loop bounds "
                             "(< not <=, and the right size in each loop) "
                             "and the row stride in the index arithmetic.",
                             call, name, n, n + k);
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

/* Each chapter's tests link only the student files that chapter needs
 * (tools/mk/chapters.mk), so a later chapter's functions may be absent:
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
};

/* List in buf the functions of chapters before `chapter` that are still
 * stubs; return the first such chapter, or 0 if there is none. */
static int earlier_stubs(int chapter, char *buf, size_t size)
{
    int first = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        if (probes[i].chapter >= chapter || !probes[i].present ||
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

static int close_enough(double got, double want, double tol);

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

int kit_expect_tensor(const char *file, int line, const char *call,
                      const float *got, const double *want, int rows, int cols,
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

    int r = (int)(bad / (size_t)cols), c = (int)(bad % (size_t)cols);
    char msg[3000];
    int used = snprintf(msg, sizeof msg,
                        "%s is wrong at [%d][%d]: expected %.6g, got %.6g "
                        "(largest error %.3g, allowed %.1g).",
                        call, r, c, want[bad], (double)got[bad],
                        max_error(got, want, n, tol), tol);

    /* Untouched output (still the NaN poison) and NaN from overflow are
     * different stories; say which one this is. Only entries whose right
     * answer is finite count (a mask's -INFINITY is an answer). */
    size_t n_finite = 0, n_nan = 0, n_inf = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(want[i]))
            continue;
        n_finite++;
        n_nan += isnan(got[i]) != 0;
        n_inf += isinf(got[i]) != 0;
    }
    if (n_finite && n_nan == n_finite)
        append(msg, sizeof msg, &used,
               " Every entry is NaN: the function never wrote its "
               "output, or added to an output it never set to "
               "zero, or every entry overflowed.");
    else if (n_nan || n_inf)
        append(msg, sizeof msg, &used,
               " %zu entries are NaN and %zu infinite where the "
               "answer is finite: something overflowed or divided "
               "by zero, or the code read past the end of an "
               "array (a wrong size argument; make test SAN=1 "
               "finds that).",
               n_nan, n_inf);

    /* Name the classic mistakes whose answer this is. More than one can
     * fit the same numbers; then say so, rather than guess. */
    int match[16], n_match = 0;
    for (int k = 0; k < n_mistakes && n_match < 16; k++)
        if (mistakes[k].value && all_close(got, mistakes[k].value, n, tol))
            match[n_match++] = k;
    if (n_match == 1) {
        const struct kit_mistake *m = &mistakes[match[0]];
        append(msg, sizeof msg, &used,
               " Likely mistake: %s. Your output is what that mistake "
               "gives. %s",
               m->name, m->advice);
    } else if (n_match > 1) {
        append(msg, sizeof msg, &used,
               " Your output fits %d classic mistakes, and these "
               "numbers cannot tell them apart:",
               n_match);
        for (int k = 0; k < n_match && used < (int)sizeof msg; k++)
            append(msg, sizeof msg, &used, " (%d) %s: %s", k + 1,
                   mistakes[match[k]].name, mistakes[match[k]].advice);
    }
    return kit_check(0, file, line, "%s", msg);
}
