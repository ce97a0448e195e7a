/*
 * leakcheck.c: the counting allocator behind leakcheck.h.
 *
 * Only the student's files are compiled with leakcheck.h, so only their
 * allocations are in the table; this file itself calls the real malloc
 * and free. A block the table cannot hold (more than MAX_BLOCKS at once)
 * switches the check off for that test rather than report a false leak.
 * The student's functions may allocate on several OpenMP threads at once
 * (chapter 8 runs mha_backward() on the sequences of a batch in
 * parallel), so every change to the table is an OpenMP critical section.
 */
#define KIT_LEAKCHECK_NO_MACROS
#include "leakcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a leak is reported: the runner's (kit_leak_set_reporter()).
 * The plots and the experiment link the student's code (build/.../
 * libkit.a) without the test runner: there it stays NULL and the
 * wrappers only count. */
static kit_leak_reporter reporter;

void kit_leak_set_reporter(kit_leak_reporter fail)
{
    reporter = fail;
}

static kit_leak_refusal refusal;

void kit_leak_set_refusal(kit_leak_refusal refused)
{
    refusal = refused;
}

#ifndef KIT_LEAK_REPORT_ONLY

/* The system refused an allocation of size bytes: say so, once per call. */
static void refused(size_t size, const char *how, const char *file, int line,
                    const char *func)
{
    if (refusal && size > 0) {
#pragma omp critical(kit_leak_refused)
        refusal(size, how, file, line, func);
    }
}

#define MAX_BLOCKS 4096

struct block {
    void *p;
    size_t size;
    const char *file, *func, *how;
    int line;
};

static struct block blocks[MAX_BLOCKS];
static int n_blocks;
static int overflowed;

/* Allocation failure on demand (leakcheck.h, kit_test.h): every malloc, calloc and
 * realloc counts; the fail_at-th of them from the moment it was armed
 * returns NULL, and where it was asked for is remembered. */
static long n_calls;        /* allocation calls since the last reset */
static long fail_at;        /* 0: none fails; else the call number that fails */
static struct block failed; /* the call that was made to fail */

void kit_leak_reset(void)
{
    n_blocks = 0;
    overflowed = 0;
    n_calls = 0;
    fail_at = 0;
}

void kit_leak_fail_nth(long n)
{
    fail_at = n > 0 ? n_calls + n : 0;
    if (n > 0) /* disarming keeps the site of the last failure */
        failed = (struct block){0};
}

long kit_leak_allocations(void)
{
    return n_calls;
}

int kit_leak_live(void)
{
    return overflowed ? -1 : n_blocks;
}

int kit_leak_failed_site(const char **file, int *line, const char **func)
{
    if (!failed.file)
        return 0;
    *file = failed.file, *line = failed.line, *func = failed.func;
    return 1;
}

/* 1 when this call must fail: it is the armed one. */
static int must_fail(const char *file, int line, const char *func,
                     const char *how)
{
    int hit;
#pragma omp critical(kit_leak_table)
    {
        n_calls++;
        hit = fail_at != 0 && n_calls == fail_at;
        if (hit)
            failed = (struct block){NULL, 0, file, func, how, line};
    }
    return hit;
}

static void remember(void *p, size_t size, const char *file, int line,
                     const char *func, const char *how)
{
    if (!p)
        return;
    if (n_blocks == MAX_BLOCKS) {
        overflowed = 1;
        return;
    }
    blocks[n_blocks++] = (struct block){p, size, file, func, how, line};
}

static int find(const void *p)
{
    for (int i = n_blocks - 1; i >= 0; i--)
        if (blocks[i].p == p)
            return i;
    return -1;
}

static void forget_at(int i)
{
    if (i >= 0)
        blocks[i] = blocks[--n_blocks];
}

void *kit_leak_malloc(size_t n, const char *file, int line, const char *func)
{
    if (must_fail(file, line, func, "malloc"))
        return NULL;
    void *p = malloc(n);
    if (!p)
        refused(n, "malloc", file, line, func);
#pragma omp critical(kit_leak_table)
    remember(p, n, file, line, func, "malloc");
    return p;
}

void *kit_leak_calloc(size_t n, size_t size, const char *file, int line,
                      const char *func)
{
    if (must_fail(file, line, func, "calloc"))
        return NULL;
    void *p = calloc(n, size);
    if (!p)
        refused(size && n > (size_t)-1 / size ? (size_t)-1 : n * size, "calloc",
                file, line, func);
#pragma omp critical(kit_leak_table)
    remember(p, n * size, file, line, func, "calloc");
    return p;
}

void *kit_leak_realloc(void *p, size_t n, const char *file, int line,
                       const char *func)
{
    if (must_fail(file, line, func, "realloc"))
        return NULL; /* the old block stays allocated, as realloc says */
    void *q;
#pragma omp critical(kit_leak_table)
    {
        int i = p ? find(p) : -1;
        q = realloc(p, n);
        if (q || n == 0) { /* on failure the old block is still allocated */
            forget_at(i);
            remember(q, n, file, line, func, "realloc");
        }
    }
    if (!q)
        refused(n, "realloc", file, line, func);
    return q;
}

void kit_leak_free(void *p)
{
    if (p) {
#pragma omp critical(kit_leak_table)
        forget_at(find(p));
    }
    free(p);
}

int kit_leak_check(void)
{
    return kit_leak_check_when(NULL);
}

int kit_leak_oldest(struct kit_leak_info *info)
{
    memset(info, 0, sizeof *info);
    if (n_blocks == 0 || overflowed)
        return 0;
    /* The oldest block still allocated; count the rest. */
    const struct block *b = &blocks[0];
    for (int i = 1; i < n_blocks; i++)
        if (blocks[i].p && blocks[i].line < b->line &&
            blocks[i].file == b->file)
            b = &blocks[i];
    for (int i = 0; i < n_blocks; i++)
        info->total += blocks[i].size;
    info->n_blocks = n_blocks;
    info->size = b->size;
    info->line = b->line;
    snprintf(info->file, sizeof info->file, "%s", b->file ? b->file : "?");
    snprintf(info->func, sizeof info->func, "%s", b->func ? b->func : "?");
    snprintf(info->how, sizeof info->how, "%s", b->how ? b->how : "?");
    return n_blocks;
}

int kit_leak_check_when(const char *context)
{
    struct kit_leak_info b;
    if (!reporter || kit_leak_oldest(&b) == 0)
        return 0;
    kit_leak_report(context, &b);
    return b.n_blocks;
}
#endif /* KIT_LEAK_REPORT_ONLY */

void kit_leak_report(const char *context, const struct kit_leak_info *b)
{
    /* Quote the line that allocated it: it names the variable. (Only a
     * file below the folder the tests run in: the name comes from the
     * student's code, which in grading runs in another process.) */
    char src[160] = "";
    FILE *f = b->file[0] != '/' && !strstr(b->file, "..") ? fopen(b->file, "r")
                                                          : NULL;
    if (f) {
        char text[512];
        for (int k = 1; fgets(text, sizeof text, f); k++)
            if (k == b->line) {
                char *t = text + strspn(text, " \t");
                t[strcspn(t, "\n")] = '\0';
                snprintf(src, sizeof src, " (%.150s)", t);
                break;
            }
        fclose(f);
    }
    if (!reporter)
        return;
    char msg[4096]; /* the runner's longest message */
    snprintf(
        msg, sizeof msg,
        "%s%s%s() allocated %zu bytes with %s() at %s:%d%s and never "
        "freed them (%d block%s, %zu bytes in all, still allocated "
        "%s). Add the missing free() for that block before every "
        "return of %s(), the error returns included.",
        context ? context : "memory leak", context ? ". Memory leak: " : ": ",
        b->func, b->size, b->how, b->file, b->line, src, b->n_blocks,
        b->n_blocks == 1 ? "" : "s", b->total,
        context ? "after the call returned" : "when the test ended", b->func);
    reporter(b->file, b->line, msg);
}
