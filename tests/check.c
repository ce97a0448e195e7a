/*
 * check.c: helpers the chapters' tests share (declared in kit_test.h).
 *
 * The main one, kit_expect_tensor(), compares a whole tensor in one
 * assertion. When it fails, its message says where, what was expected and
 * what came back, and, when the student's output equals a known wrong
 * answer, which classic mistake produces exactly that.
 */
#include "kit.h"
#include "kit_test.h"

#include <math.h>
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

void kit_format_matrix(char *buf, size_t size, const float *x, int rows,
                       int cols)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int r = 0; r < rows && used < size; r++) {
        used += (size_t)snprintf(buf + used, size - used, "%s[",
                                 r ? "\n          " : "");
        for (int c = 0; c < cols && used < size; c++)
            used += (size_t)snprintf(buf + used, size - used, "%s%9.4g",
                                     c ? " " : "", x[r * cols + c]);
        if (used < size)
            used += (size_t)snprintf(buf + used, size - used, " ]");
    }
}

int kit_expect_status(const char *file, int line, const char *call, int got,
                      int want)
{
    if (got == want)
        return kit_check(1, file, line, "%s", "");
    if (got == KIT_E_TODO)
        return kit_check(0, file, line,
                         "%s returned KIT_E_TODO: it is still a starter "
                         "stub. Write it, then run the test again. (Written "
                         "it already? Then a function it calls from an "
                         "earlier chapter is still a stub.)",
                         call);
    return kit_check(0, file, line, "%s returned %d (%s); expected %d (%s)",
                     call, got, kit_strerror(got), want, kit_strerror(want));
}

/* Largest |a - b| over n entries, with NaN counted as infinite. */
static double max_error(const float *got, const double *want, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
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
                        max_error(got, want, n), tol);

    /* Untouched output (still the NaN poison) and NaN from overflow are
     * different stories; say which one this is. */
    size_t n_nan = 0, n_inf = 0;
    for (size_t i = 0; i < n; i++) {
        n_nan += isnan(got[i]) != 0;
        n_inf += isinf(got[i]) != 0;
    }
    if (n_nan == n)
        used += snprintf(msg + used, sizeof msg - (size_t)used,
                         " Every entry is NaN: the function never wrote "
                         "its output, or added to an output it never set "
                         "to zero, or every entry overflowed.");
    else if (n_nan || n_inf)
        used += snprintf(msg + used, sizeof msg - (size_t)used,
                         " %zu entries are NaN and %zu infinite: something "
                         "overflowed or divided by zero.",
                         n_nan, n_inf);

    for (int k = 0; k < n_mistakes; k++) {
        if (mistakes[k].value && all_close(got, mistakes[k].value, n, tol)) {
            snprintf(msg + used, sizeof msg - (size_t)used,
                     " Likely mistake: %s. Your output is exactly what that "
                     "mistake gives. %s",
                     mistakes[k].name, mistakes[k].advice);
            return kit_check(0, file, line, "%s", msg);
        }
    }
    return kit_check(0, file, line, "%s", msg);
}
