/*
 * runner.c: the kit's test runner, built on CUnit.
 *
 * Every chapter is a CUnit suite and every test a CUnit test. The CUnit
 * test function is a wrapper: it forks, the child runs the test body, and
 * each check the body makes travels back through a pipe as a record. The
 * parent replays the records into CUnit with CU_assertImplementation(), so
 * CUnit's counts and run summary are the real ones. A child that
 * crashes, exits early or runs past the time limit becomes one more failed
 * assertion with a plain reason, and the run goes on.
 *
 * With --no-fork (or KIT_FORK=no) bodies run in this process, for gdb.
 *
 * JUnit XML: CUnit 2.1-3 (Debian 12) has a JUnit mode, but it writes
 * malformed XML and aborts on the first failed test, so this file writes
 * the JUnit report itself from the results it already records.
 *
 * What this file will not do: decide what a test checks. That is in the
 * test files, through kit_test.h.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* wait4(): a test's CPU time */

#include "kit_runner.h"
#include "kit_test.h"
#define KIT_LEAKCHECK_NO_MACROS /* the runner calls the real allocator */
#include "leakcheck.h"

#include <CUnit/CUnit.h>
#include <CUnit/TestRun.h>

#include <fcntl.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Built with AddressSanitizer (make test SAN=1)? */
#if defined(__SANITIZE_ADDRESS__)
#define KIT_SAN 1
#include <sanitizer/lsan_interface.h>
#else
#define KIT_SAN 0
#endif

/* Built with ThreadSanitizer (make races: clang and LLVM's libomp, whose
 * Archer tool tells ThreadSanitizer where OpenMP synchronises)? */
#if defined(__SANITIZE_THREAD__)
#define KIT_RACE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KIT_RACE 1
#endif
#endif
#ifndef KIT_RACE
#define KIT_RACE 0
#endif

#if KIT_RACE
/* ThreadSanitizer reads these before main. ignore_noninstrumented_modules:
 * libomp and CUnit are not instrumented, and what they do is known
 * through Archer; exitcode=0: a race fails its test through
 * race_check() below, in words, not through the process's status;
 * atexit_sleep_ms=0: no second's wait at each test's end; and the
 * symbolizer of LLVM 14 (Debian's llvm-14), for the reports' lines. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "ignore_noninstrumented_modules=1:exitcode=0:history_size=7:"
           "atexit_sleep_ms=0:"
           "external_symbolizer_path=/usr/lib/llvm-14/bin/llvm-symbolizer";
}
#endif

/* ---------------------------------------------------------------------
 * Registration
 * ------------------------------------------------------------------- */

#define MAX_CHAPTERS 32

static const struct kit_chapter *chapters[MAX_CHAPTERS];
static int n_chapters;

void kit_register_chapter(const struct kit_chapter *ch)
{
    if (n_chapters == MAX_CHAPTERS) {
        fprintf(stderr, "runner: more than %d chapters\n", MAX_CHAPTERS);
        exit(2);
    }
    chapters[n_chapters++] = ch;
}

static int by_number(const void *a, const void *b)
{
    const struct kit_chapter *x = *(const struct kit_chapter *const *)a;
    const struct kit_chapter *y = *(const struct kit_chapter *const *)b;
    return (x->number > y->number) - (x->number < y->number);
}

/* ---------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------- */

static struct {
    int chapter;             /* 0: all                            */
    const char *test;        /* NULL: all                         */
    int fork;                /* run each body in a child          */
    double timeout;          /* seconds per test                  */
    const char *junit;       /* path of the JUnit XML, or NULL  */
    const char *table;       /* path of the results TSV, or NULL */
    const char *impl;        /* "starter" or "solutions", for hints */
    int verbose;             /* print every test, not only failures */
    const char *san_log;     /* SAN=1: where the sanitizers' reports go */
    const char *exercises;   /* build/exercises.tsv: the book's exercises */
    int progress_only;       /* print only the progress view */
    const char *state;       /* where each chapter's last result is kept */
    const char *book;        /* build/book.html: the rendered book */
    int cpu;                 /* the timeout counts CPU time (grading) */
    const char *race_failed; /* tests the last race pass failed, or NULL */
    long long output_cap;    /* bytes a test may print; 0: no cap */
    long long mem_limit;     /* a test process's address space; 0: none */
} opt = {0,    NULL, 1,    5.0,  NULL, NULL, "starter", 1, NULL,
         NULL, 0,    NULL, NULL, 0,    NULL, 0,         0};

/* Chapters that did not compile, so are not in this binary (--broken
 * "N|title|file|test test ..."): the progress view still shows them,
 * the JUnit report counts their tests as failed, and the last line says
 * how many tests could not run. */
static const char *broken[32];
static int n_broken;

/* ---------------------------------------------------------------------
 * Records: how a child's checks reach the parent
 * ------------------------------------------------------------------- */

enum { REC_CHECK = 1, REC_END = 2, REC_CALL = 3 };

struct rec_header {
    int kind;
    int ok;
    int line;
    int file_len;
    int msg_len;
};

/* What a program linked with the runner plugs in (kit_runner.h). */
static const struct kit_runner_hooks *hooks;

void kit_runner_set_hooks(const struct kit_runner_hooks *h)
{
    hooks = h;
}

static int record_fd = -1; /* write end, in a child; -1 in-process */
static int child_failed;   /* checks failed so far, in a child */

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            _exit(3);
        p += k;
        n -= (size_t)k;
    }
}

static void send_record(int kind, int ok, const char *file, int line,
                        const char *msg)
{
    struct rec_header h = {kind, ok, line, (int)strlen(file), (int)strlen(msg)};
    write_all(record_fd, &h, sizeof h);
    write_all(record_fd, file, (size_t)h.file_len);
    write_all(record_fd, msg, (size_t)h.msg_len);
}

/* ---------------------------------------------------------------------
 * What the parent learns about the current test
 * ------------------------------------------------------------------- */

#define MSG_MAX 4096

static struct {
    int checks, failed;
    char first_msg[MSG_MAX];
    char first_where[256];
    char last_call[512]; /* the student's function being called, if any */
    int san;             /* a sanitizer's report explains the failure */
} cur;

static int current_chapter;       /* the chapter of the test running now */
static const char *cur_name = ""; /* and its name */

int kit_current_chapter(void)
{
    return current_chapter;
}

int kit_current_failed(void)
{
    return record_fd >= 0 ? child_failed : cur.failed;
}

static void assert_in_parent(int ok, const char *file, int line,
                             const char *msg)
{
    cur.checks++;
    if (!ok) {
        if (cur.failed++ == 0) {
            snprintf(cur.first_msg, sizeof cur.first_msg, "%s", msg);
            if (line > 0) /* a crash or a timeout has no line */
                snprintf(cur.first_where, sizeof cur.first_where, "%s:%d", file,
                         line);
        }
    }
    /* CUnit copies the message and the file name it is given. */
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, (unsigned)line, msg, file,
                            "", CU_FALSE);
}

void kit_about_to_call(const char *call)
{
    if (record_fd >= 0)
        send_record(REC_CALL, 1, "", 0, call);
    else
        snprintf(cur.last_call, sizeof cur.last_call, "%.500s", call);
}

/* make races: where the current test's part of the log starts, and
 * whether its race is reported already (once, and before the first
 * failed check, which the race may well have caused). */
static off_t race_from = -1;
static void race_check(off_t from);

int kit_check(int ok, const char *file, int line, const char *fmt, ...)
{
    char msg[MSG_MAX];
    if (!ok && race_from >= 0)
        race_check(race_from);
    child_failed += !ok;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (record_fd >= 0)
        send_record(REC_CHECK, ok, file, line, ok ? "" : msg);
    else
        assert_in_parent(ok, file, line, msg);
    return ok;
}

/* The leak check's reports (leakcheck.h): a failed check. */
static void leak_failed(const char *file, int line, const char *msg)
{
    kit_check(0, file, line, "%s", msg);
}

/* ---------------------------------------------------------------------
 * Running one body in a child
 * ------------------------------------------------------------------- */

static const char *signal_words(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV (segmentation fault: a read or write "
               "outside an array, or through a bad pointer)";
    case SIGBUS: return "SIGBUS (bus error: a bad memory access)";
    case SIGFPE:
        return "SIGFPE (arithmetic error, such as an integer "
               "division by zero)";
    case SIGABRT:
        return "SIGABRT (abort: an assert() failed, or free() or "
               "a sanitizer found a memory error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGKILL: return "SIGKILL (killed)";
    default: return strsignal(sig);
    }
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --output-cap (make test): the test process's stdout (and stderr, but
 * under a sanitizer) is a pipe this process reads while it waits for the
 * records, passing on at most opt.output_cap bytes of each test; a test
 * that prints more is stopped and fails (grading keeps no more of it). */
static struct {
    int fd;           /* the read end, or -1 */
    long long kept;   /* bytes passed on for this test */
    int over;         /* it printed more than the cap */
    int ends_in_line; /* the last byte passed on was a newline */
} relay = {-1, 0, 0, 1};

/* Pass on what is in the pipe. 0 at its end (or on error), 1 else. */
static int relay_some(void)
{
    char buf[65536];
    ssize_t k = read(relay.fd, buf, sizeof buf);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
        return 1;
    if (k <= 0)
        return 0;
    long long keep = opt.output_cap - relay.kept;
    if (keep > k)
        keep = k;
    if (keep > 0) {
        for (const char *p = buf; p < buf + keep;) {
            ssize_t w = write(STDOUT_FILENO, p, (size_t)(buf + keep - p));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            p += w;
        }
        relay.kept += keep;
        relay.ends_in_line = buf[keep - 1] == '\n';
    }
    if (keep < k)
        relay.over = 1;
    return 1;
}

/* Pass on the rest, until the pipe's end or the deadline. */
static void relay_rest(double deadline)
{
    while (relay.fd >= 0 && !relay.over) {
        double left = deadline - now_seconds();
        if (left <= 0)
            return;
        struct pollfd pfd = {relay.fd, POLLIN, 0};
        int r = poll(&pfd, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR)
            return;
        if (r > 0 && !relay_some())
            return;
    }
}

/* Read exactly n bytes unless the deadline passes or the pipe closes,
 * passing on the test's output meanwhile. Returns 1 on success, 0 on
 * EOF, -1 on timeout, -2 when the output went past its cap. */
static int read_until(int fd, void *buf, size_t n, double deadline)
{
    char *p = buf;
    while (n > 0) {
        double left = deadline - now_seconds();
        if (left <= 0)
            return -1;
        struct pollfd pfd[2] = {{fd, POLLIN, 0}, {relay.fd, POLLIN, 0}};
        double ms = left * 1000 + 1;
        int r = poll(pfd, relay.fd >= 0 ? 2 : 1,
                     ms > 60000 ? 60000 : (int)ms); /* loop on */
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            continue; /* the loop sees the deadline */
        if (relay.fd >= 0 && pfd[1].revents) {
            if (!relay_some()) {
                close(relay.fd); /* its end: the records' pipe says more */
                relay.fd = -1;
            }
            if (relay.over)
                return -2;
        }
        if (!pfd[0].revents)
            continue;
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        p += k;
        n -= (size_t)k;
    }
    return 1;
}

/* After one test has timed out, the same endless loop would likely cost
 * every later test the full limit; they get this many seconds instead. */
#define SHORT_LIMIT 1.0
static int timeouts_so_far;

/* --cpu-time (grading): the limit counts the CPU time of the test's
 * process (RLIMIT_CPU: every thread, and each process it starts, one a
 * hook starts among them, has its own), so that a busy machine does
 * not fail a test that a quiet one passes. A test that waits without
 * computing is stopped by the wall clock after this many times the
 * limit. */
#define WALL_FACTOR 10.0

/* SAN=1: the log every child's stderr goes to, and the part of it that
 * the current test wrote. */
static int san_fd = -1;
/* Grading's race pass (tools/harness/jail.c) may not open a file to
 * write it: its results table and its sanitizer log are descriptors its
 * caller opened (--results-fd, --san-fd); the log is still read through
 * its path (--san-log). */
static int table_fd = -1, san_given_fd = -1;

static int san_explain(off_t from, char *why, size_t size, int *n);

/* Under AddressSanitizer, LeakSanitizer looks for blocks nobody can
 * reach any more, allocated anywhere (the counting wrappers only see the
 * student's malloc, calloc and realloc calls). Its report goes to the
 * log; the failure quotes its summary and the student's frame. */
static void lsan_check(off_t from)
{
#if KIT_SAN
    if (__lsan_do_recoverable_leak_check()) {
        char why[MSG_MAX];
        int n = snprintf(why, sizeof why,
                         "memory leak: LeakSanitizer found memory that was "
                         "allocated during this test and never freed.");
        san_explain(from, why, sizeof why, &n);
        if ((size_t)n < sizeof why)
            snprintf(why + n, sizeof why - (size_t)n,
                     " Its full report, with where each block was "
                     "allocated: %s.",
                     opt.san_log);
        kit_check(0, "runner.c", __LINE__, "%s", why);
    }
#else
    (void)from;
#endif
}

/* make races: ThreadSanitizer's first data-race report of the current
 * test (from byte `from` of the log on), in words. A race on a variable
 * of the student's function's stack, written inside its parallel loop,
 * is a variable declared outside the loop that every thread shares; one
 * in a block the student's code allocated is that block shared by the
 * threads. Anything else is described (where, which lines), not named. */
#if KIT_RACE
struct race_access {
    int write;       /* a write, not a read                  */
    char where[256]; /* "solutions/ch7_fast.c:318"           */
    char func[128];  /* the student's function around it     */
    int in_region;   /* in an OpenMP region's outlined body  */
};

/* A frame line "#0 func /path/solutions/ch7_fast.c:318:20 (bin+0x1)" in
 * the student's code (a file chN_*.c outside tests/): its function and
 * "dir/file:line". */
static int race_frame(const char *p, char *func, size_t nf, char *where,
                      size_t nw)
{
    if (p[0] != '#')
        return 0;
    const char *fn = p + strcspn(p, " ");
    fn += strspn(fn, " ");
    int fn_len = (int)strcspn(fn, " ");
    const char *path = fn + fn_len + strspn(fn + fn_len, " ");
    int path_len = (int)strcspn(path, " ");
    const char *base = path;
    for (const char *q = path; q < path + path_len; q++)
        if (*q == '/')
            base = q + 1;
    if (strncmp(base, "ch", 2) != 0 || !isdigit((unsigned char)base[2]) ||
        !strstr(base, ".c:") || strstr(path, "/tests/") ||
        (int)(base - path) > path_len)
        return 0;
    /* "dir/file:line": the folder, the file and the line, no column */
    const char *dir = base;
    if (dir > path + 1)
        for (dir = base - 1; dir > path && dir[-1] != '/'; dir--)
            ;
    int len = (int)(path + path_len - dir);
    const char *colon = memchr(base, ':', (size_t)(path + path_len - base));
    const char *col2 =
        colon ? memchr(colon + 1, ':', (size_t)(path + path_len - colon - 1))
              : NULL;
    if (col2)
        len = (int)(col2 - dir);
    snprintf(func, nf, "%.*s", fn_len, fn);
    snprintf(where, nw, "%.*s", len, dir);
    return 1;
}

/* The statement at a report's "path:line", trimmed and on one line: the
 * line itself, joined to the lines before it that it continues (up to
 * three: "float *scratch =" above "    malloc(...);"). */
static void race_source(const char *full, char *out, size_t n)
{
    *out = '\0';
    char path[512];
    snprintf(path, sizeof path, "%s", full);
    char *colon = strrchr(path, ':');
    if (!colon)
        return;
    *colon = '\0';
    int line = atoi(colon + 1);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char ring[4][256] = {"", "", "", ""}, buf[256];
    int k = 0;
    while (k < line && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = '\0';
        snprintf(ring[k % 4], sizeof ring[0], "%s", buf);
        k++;
    }
    fclose(f);
    if (k < line)
        return;
    /* back from the line while the one before does not end a statement */
    int first = line - 1;
    while (first > line - 4 && first > 0) {
        const char *prev = ring[(first - 1) % 4];
        size_t len = strlen(prev);
        while (len > 0 && prev[len - 1] == ' ')
            len--;
        if (len == 0 || strchr(";{}/", prev[len - 1]) ||
            prev[strspn(prev, " ")] == '#')
            break;
        first--;
    }
    size_t used = 0;
    for (int l = first; l < line && used + 1 < n; l++) {
        const char *t = ring[l % 4] + strspn(ring[l % 4], " \t");
        used +=
            (size_t)snprintf(out + used, n - used, "%s%s", used ? " " : "", t);
    }
}
#endif

static void race_check(off_t from)
{
#if KIT_RACE
    race_from = -1; /* once per test: the failure below is a check too */
    if (san_fd < 0)
        return;
    FILE *f = fopen(opt.san_log, "r");
    if (!f)
        return;
    fseeko(f, from, SEEK_SET);
    char line[1024];
    int in_report = 0, section = 0; /* 1, 2: the accesses; 3: location */
    struct race_access acc[2];
    memset(acc, 0, sizeof acc);
    char loc[16] = "", alloc_where[256] = "", alloc_full[512] = "";
    char alloc_func[128] = "", full[2][512] = {"", ""}, other[320] = "";
    int have[2] = {0, 0}, reports = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *p = line + strspn(line, " ");
        if (strncmp(p, "WARNING: ThreadSanitizer: data race", 35) == 0) {
            reports++;
            in_report = reports == 1;
            section = 0;
            continue;
        }
        if (!in_report)
            continue;
        if (strncmp(p, "SUMMARY:", 8) == 0) {
            in_report = 0;
            continue;
        }
        if (strstr(p, " of size ") && strstr(p, " at 0x") &&
            strstr(p, " by ") && section < 2 && p[0] != '#' &&
            strncmp(p, "Location", 8) != 0) {
            acc[section].write = strstr(p, "rite of size") != NULL;
            section++;
            continue;
        }
        if (strncmp(p, "Location is ", 12) == 0) {
            section = 3;
            if (*loc) /* a second line ("global '??'") says no more */
                continue;
            snprintf(loc, sizeof loc, "%s",
                     strncmp(p + 12, "stack", 5) == 0  ? "stack"
                     : strncmp(p + 12, "heap", 4) == 0 ? "heap"
                                                       : "other");
            continue;
        }
        if (strncmp(p, "Mutex ", 6) == 0 || strncmp(p, "Thread ", 7) == 0) {
            section = 4;
            continue;
        }
        char func[128], where[256];
        if (!race_frame(p, func, sizeof func, where, sizeof where))
            continue;
        /* the path as written in the report, for reading the line */
        const char *fn = p + strcspn(p, " ");
        fn += strspn(fn, " ");
        fn += strcspn(fn, " ");
        fn += strspn(fn, " ");
        char path[512];
        snprintf(path, sizeof path, "%.*s", (int)strcspn(fn, " "), fn);
        char *c2 = strrchr(path, ':'); /* drop the column */
        if (c2 && strchr(path, ':') != c2)
            *c2 = '\0';
        if (section == 1 || section == 2) {
            struct race_access *a = &acc[section - 1];
            int outlined = func[0] == '.' || strstr(func, "_omp_fn") ||
                           strstr(func, "omp_outlined");
            if (!have[section - 1]) {
                have[section - 1] = 1;
                snprintf(a->where, sizeof a->where, "%s", where);
                snprintf(full[section - 1], sizeof full[0], "%s", path);
            }
            a->in_region |= outlined != 0; /* in a region, or called from one */
            if (!a->func[0] && !outlined)
                snprintf(a->func, sizeof a->func, "%s", func);
        } else if (section == 3 && !alloc_where[0]) {
            snprintf(alloc_where, sizeof alloc_where, "%s", where);
            snprintf(alloc_full, sizeof alloc_full, "%s", path);
            snprintf(alloc_func, sizeof alloc_func, "%s", func);
        }
    }
    fclose(f);
    if (!reports)
        return;
    /* the function around the first access: its own stack says, or the
     * other thread's (a worker's stack starts inside the region) */
    const char *func = acc[0].func[0] ? acc[0].func : acc[1].func;
    char src[256] = "";
    if (have[0])
        race_source(full[0], src, sizeof src);
    if (have[1] && strcmp(acc[0].where, acc[1].where) != 0) {
        char src1[160] = "";
        race_source(full[1], src1, sizeof src1);
        snprintf(other, sizeof other,
                 ", and on the other thread at %.60s%s%s%s", acc[1].where,
                 *src1 ? " (" : "", src1, *src1 ? ")" : "");
    }
    const char *what = acc[0].write && acc[1].write ? "write"
                       : acc[0].write || acc[1].write
                           ? "use (one of them writing)"
                           : "read";
    char why[MSG_MAX];
    int n = 0;
    if (have[0])
        n = snprintf(why, sizeof why,
                     "data race: two threads %s the same memory at once, "
                     "with nothing ordering them, at %s%s%s%s%s%s%s%s.",
                     what, acc[0].where, *func ? " in " : "", func,
                     *func ? "()" : "", *src ? " (" : "", src, *src ? ")" : "",
                     other);
    else
        n = snprintf(why, sizeof why,
                     "data race: two threads %s the same memory at once, "
                     "with nothing ordering them (outside your code's "
                     "lines).",
                     what);
    int both_region =
        have[0] && have[1] && acc[0].in_region && acc[1].in_region;
    if ((size_t)n >= sizeof why) {
    } else if (strcmp(loc, "stack") == 0 && both_region) {
        n += snprintf(why + n, sizeof why - (size_t)n,
                      " It is a variable of %s%s's own stack, used inside "
                      "its parallel loop. " KIT_NAMING_MARK
                      ": a variable declared outside the parallel loop, "
                      "and so shared by every thread (a loop index, or a "
                      "bound such as i1 in int i0, i1;). Declare it "
                      "inside the loop (for (int i = ...), const int i1 = "
                      "...), so that each thread has its own.",
                      *func ? func : "your function", *func ? "()" : "");
    } else if (strcmp(loc, "heap") == 0 && both_region && *alloc_where) {
        char asrc[256] = "", var[64] = "";
        race_source(alloc_full, asrc, sizeof asrc);
        /* "float *scratch = malloc(...)": the block's name */
        char *eq = strchr(asrc, '=');
        if (eq && (strstr(eq, "alloc(") != NULL)) {
            char *e = eq;
            while (e > asrc && e[-1] == ' ')
                e--;
            char *b = e;
            while (b > asrc && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
                b--;
            if (e > b)
                snprintf(var, sizeof var, "%.*s", (int)(e - b), b);
        }
        n += snprintf(why + n, sizeof why - (size_t)n,
                      " The memory is in the block%s%s that %s() allocated "
                      "at %s%s%s%s.",
                      *var ? " " : "", var, alloc_func, alloc_where,
                      *asrc ? " (" : "", asrc, *asrc ? ")" : "");
        if ((size_t)n < sizeof why)
            n += snprintf(why + n, sizeof why - (size_t)n,
                          " " KIT_NAMING_MARK ": one block%s%s%s shared by "
                          "every thread, each writing the same part of it. "
                          "Give each thread its own part (for scratch: "
                          "kit_max_threads() blocks, and block "
                          "kit_thread_id() for each thread).",
                          *var ? ", " : "", var, *var ? "," : "");
    }
    if ((size_t)n < sizeof why)
        snprintf(why + n, sizeof why - (size_t)n,
                 " ThreadSanitizer's full report: %s.", opt.san_log);
    kit_check(0, "runner.c", __LINE__, "%s", why);
#else
    (void)from;
#endif
}

/* The "SUMMARY:" line of the sanitizer report the current test wrote to
 * the log (from byte `from` on), or UBSan's "runtime error:" line, and
 * the first stack frame in the student's code, appended to why. Returns
 * 0 when the log holds no report for this test. The log's path is given
 * once, at the end of the run. */
static int san_explain(off_t from, char *why, size_t size, int *n)
{
    if (san_fd < 0 || *n < 0 || (size_t)*n >= size)
        return 0;
    FILE *f = fopen(opt.san_log, "r");
    if (!f)
        return 0;
    fseeko(f, from, SEEK_SET);
    char line[1024], summary[512] = "", frame[512] = "", ub[512] = "";
    char dir[64];
    snprintf(dir, sizeof dir, "%s/", opt.impl);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *p = line + strspn(line, " ");
        if (!*summary && strncmp(p, "SUMMARY: ", 9) == 0)
            snprintf(summary, sizeof summary, "%s", p + 9);
        else if (!*ub && strstr(p, "runtime error:"))
            snprintf(ub, sizeof ub, "%s", p);
        else if (!*frame && p[0] == '#' && strstr(p, " in ") &&
                 strstr(p, dir)) {
            /* "#0 0x5555 in matmul /path/starter/ch1_attention.c:30" */
            const char *fn = strstr(p, " in ") + 4;
            const char *src = strstr(p, dir);
            int fn_len = (int)strcspn(fn, " ");
            snprintf(frame, sizeof frame, "%s in %.*s()", src, fn_len, fn);
        }
    }
    fclose(f);
    for (char *t = summary + strlen(summary); t > summary && t[-1] == '.';)
        *--t = '\0'; /* its own full stop: ours follows */
    if (!*summary && !*ub)
        return 0;
    /* UBSan's "file:line: runtime error: ..." says more than its
     * summary; ASan's summary names the error and the line. */
    *n += snprintf(why + *n, size - (size_t)*n, "%s%s%s.", *n ? " " : "",
                   *ub ? "" : "SUMMARY: ", *ub ? ub : summary);
    /* The frame, unless the summary already names the same line. */
    char at[512];
    snprintf(at, sizeof at, "%.*s", (int)strcspn(frame, " "), frame);
    if (*frame && !strstr(*ub ? ub : summary, at) && (size_t)*n < size)
        *n +=
            snprintf(why + *n, size - (size_t)*n,
                     " The first line of your code in its report: %s.", frame);
    if (*n > (int)size - 1)
        *n = (int)size - 1;
    return 1;
}

/* --mem-limit: the limit, in words ("4 GiB"). */
static const char *mem_words(long long bytes)
{
    static char w[64];
    if (bytes >= 1LL << 30 && bytes % (1LL << 30) == 0)
        snprintf(w, sizeof w, "%lld GiB", bytes >> 30);
    else if (bytes >= 1LL << 20 && bytes % (1LL << 20) == 0)
        snprintf(w, sizeof w, "%lld MiB", bytes >> 20);
    else
        snprintf(w, sizeof w, "%lld bytes", bytes);
    return w;
}

/* --mem-limit: an allocation of the student's that the limit refused
 * (leakcheck.c) fails the test, naming the limit, before the NULL it
 * returned can crash the code. */
static void mem_refused(size_t size, const char *how, const char *file,
                        int line, const char *func)
{
    int gib = size >= (size_t)1 << 30;
    kit_check(0, file, line,
              "%s() in %s() asked for %.1f %s and got NULL: make test "
              "limits a test's process to %s of memory (MEM_LIMIT, as "
              "grading does). Is the size the product of the right "
              "dimensions, and is each block freed when it is no longer "
              "needed?",
              how, func, (double)size / (gib ? 1 << 30 : 1 << 20),
              gib ? "GiB" : "MiB", mem_words(opt.mem_limit));
}

static void run_forked(const struct kit_test *t)
{
    int fds[2], out[2] = {-1, -1};
    off_t san_from = san_fd >= 0 ? lseek(san_fd, 0, SEEK_END) : 0;
    cur_name = t->name;
    if (pipe(fds) != 0) {
        assert_in_parent(0, "runner.c", __LINE__, "runner: pipe() failed");
        return;
    }
    if (opt.output_cap > 0 && pipe(out) != 0) {
        close(fds[0]);
        close(fds[1]);
        assert_in_parent(0, "runner.c", __LINE__, "runner: pipe() failed");
        return;
    }
    double limit =
        timeouts_so_far ? fmin(opt.timeout, SHORT_LIMIT) : opt.timeout;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        if (out[0] >= 0) {
            close(out[0]);
            close(out[1]);
        }
        assert_in_parent(0, "runner.c", __LINE__, "runner: fork() failed");
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        record_fd = fds[1];
        if (out[1] >= 0) {
            close(out[0]);
            dup2(out[1], STDOUT_FILENO);
            dup2(out[1], STDERR_FILENO); /* (the log's, below, under SAN) */
            close(out[1]);
        }
        if (san_fd >= 0) {
            /* The sanitizers' reports go to the log, not the screen. */
            dprintf(san_fd, "\n==== test %s ====\n", t->name);
            dup2(san_fd, STDERR_FILENO);
        }
        if (opt.mem_limit > 0) {
            struct rlimit r = {(rlim_t)opt.mem_limit, (rlim_t)opt.mem_limit};
            if (setrlimit(RLIMIT_AS, &r) != 0)
                _exit(126);
            kit_leak_set_refusal(mem_refused);
        }
        unsigned long long cpu = 0; /* the limit set here, for the hook */
        if (opt.cpu) {
            struct rlimit r, had;
            r.rlim_cur = (rlim_t)ceil(limit);
            r.rlim_max = r.rlim_cur + 1;
            if (getrlimit(RLIMIT_CPU, &had) == 0 &&
                had.rlim_max != RLIM_INFINITY && r.rlim_max > had.rlim_max) {
                r.rlim_max = had.rlim_max; /* the run's own limit is lower */
                r.rlim_cur = r.rlim_max > 1 ? r.rlim_max - 1 : r.rlim_max;
            }
            if (setrlimit(RLIMIT_CPU, &r) != 0)
                _exit(126);
            cpu = (unsigned long long)r.rlim_cur;
        }
        if (hooks && hooks->on_test_start && hooks->on_test_start(cpu) != 0)
            _exit(126);
        kit_leak_reset();
        race_from = KIT_RACE ? san_from : -1;
        t->body();
        if (!kit_leak_check() && !child_failed)
            lsan_check(san_from);
        if (race_from >= 0)
            race_check(race_from);
        if (hooks && hooks->on_test_end)
            hooks->on_test_end();
        fflush(stdout); /* all its output is in the pipe before the end */
        send_record(REC_END, 1, "", 0, "");
        _exit(0);
    }
    close(fds[1]);
    relay.fd = out[0], relay.kept = 0, relay.over = 0, relay.ends_in_line = 1;
    if (out[1] >= 0) {
        close(out[1]);
        fcntl(relay.fd, F_SETFL, O_NONBLOCK);
    }

    double deadline =
        now_seconds() + (opt.cpu ? WALL_FACTOR * ceil(limit) : limit);
    int got_end = 0, timed_out = 0;
    for (;;) {
        struct rec_header h;
        int r = read_until(fds[0], &h, sizeof h, deadline);
        if (r == -2)
            break; /* past the output's cap */
        if (r < 0) {
            timed_out = 1;
            break;
        }
        if (r == 0)
            break;
        if (h.kind == REC_END) {
            got_end = 1;
            break;
        }
        if (h.file_len < 0 || h.msg_len < 0 || h.file_len > 4096 ||
            h.msg_len >= MSG_MAX) {
            assert_in_parent(0, "runner.c", __LINE__,
                             "runner: garbled record from the test process "
                             "(did the code write past an array?)");
            break;
        }
        char file[4097], msg[MSG_MAX];
        if (read_until(fds[0], file, (size_t)h.file_len, deadline) != 1 ||
            read_until(fds[0], msg, (size_t)h.msg_len, deadline) != 1) {
            timed_out = !relay.over && now_seconds() >= deadline;
            break;
        }
        file[h.file_len] = '\0';
        msg[h.msg_len] = '\0';
        if (h.kind == REC_CALL) {
            /* keep what fits: a call is short */
            size_t keep = strlen(msg);
            if (keep >= sizeof cur.last_call)
                keep = sizeof cur.last_call - 1;
            memcpy(cur.last_call, msg, keep);
            cur.last_call[keep] = '\0';
        } else
            assert_in_parent(h.ok, file, h.line, msg);
    }
    close(fds[0]);
    /* The rest of its output: what it printed last, and flushed at its
     * end (a second at most, for a process it started that holds the
     * pipe). */
    if (got_end && !relay.over)
        relay_rest(now_seconds() + 1.0);

    /* A child that timed out, printed past the cap, or whose records
     * stopped making sense, may still be running: stop it before waiting
     * for it. (Killing a child that has already exited does nothing.) */
    if (timed_out || !got_end || relay.over)
        kill(pid, SIGKILL);
    if (relay.fd >= 0) {
        close(relay.fd);
        relay.fd = -1;
    }
    if (!relay.ends_in_line) { /* the kit's next line on a line of its own */
        ssize_t w = write(STDOUT_FILENO, "\n", 1);
        (void)w;
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    /* Its CPU time ran out: it, or a process it started (a hook's,
     * whose death it passes on as its own), was stopped by SIGXCPU, or,
     * having caught that, by SIGKILL a second later. */
    double cpu_used = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    int cpu_out = opt.cpu && !timed_out && WIFSIGNALED(status) &&
                  (WTERMSIG(status) == SIGXCPU ||
                   (WTERMSIG(status) == SIGKILL && got_end == 0 &&
                    cpu_used >= ceil(limit) - 0.05));

    char why[1024];
    int n = 0;
    if (relay.over) {
        n = snprintf(why, sizeof why,
                     "printed more than %s, so it was stopped there: make "
                     "test passes on at most that much of a test's output "
                     "(OUTPUT_CAP, as grading does). Is a printf() left in "
                     "a loop?",
                     mem_words(opt.output_cap));
        if (*cur.last_call && (size_t)n < sizeof why)
            snprintf(why + n, sizeof why - (size_t)n, " It happened inside %s.",
                     cur.last_call);
        assert_in_parent(0, t->name, 0, why);
        return;
    }
    if (!timed_out && !cpu_out && (WIFSIGNALED(status) || !got_end) &&
        san_explain(san_from, why, sizeof why, &n)) {
        /* A sanitizer stopped it: its one line says what and where. */
        cur.san = 1;
        if (*cur.last_call && (size_t)n < sizeof why)
            snprintf(why + n, sizeof why - (size_t)n, " It happened inside %s.",
                     cur.last_call);
        assert_in_parent(0, t->name, 0, why);
        return;
    }
    if (timed_out && opt.cpu && cpu_used < 0.5 * ceil(limit)) {
        timeouts_so_far++;
        n = snprintf(why, sizeof why,
                     "timed out after %g s by the clock, having used only "
                     "%.1f s of CPU time: the code never finished. Does it "
                     "wait for something, such as input, a pipe or sleep()?",
                     WALL_FACTOR * ceil(limit), cpu_used);
    } else if (timed_out && opt.cpu) {
        timeouts_so_far++;
        n = snprintf(why, sizeof why,
                     "timed out after %g s by the clock, with %.1f s of CPU "
                     "time used, of its %g: the machine was too busy to "
                     "finish it.",
                     WALL_FACTOR * ceil(limit), cpu_used, ceil(limit));
    } else if (timed_out || cpu_out) {
        timeouts_so_far++;
        n = snprintf(why, sizeof why,
                     "timed out after %g s%s%s: the code never finished. Look "
                     "for a loop whose counter never reaches its bound (a "
                     "wrong variable in the condition, or i-- for i++).",
                     cpu_out ? ceil(limit) : limit,
                     cpu_out ? " of CPU time" : "",
                     limit < opt.timeout ? " (the limit is shortened once a "
                                           "test has timed out)"
                                         : "");
    } else if (WIFSIGNALED(status)) {
        n = snprintf(why, sizeof why, "crashed with %s.",
                     signal_words(WTERMSIG(status)));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        n = snprintf(why, sizeof why,
                     "the test process exited with status %d before it "
                     "finished%s.",
                     WEXITSTATUS(status),
                     KIT_SAN ? ": a sanitizer stopped it"
                             : " (a sanitizer report above says why, if "
                               "there is one)");
    } else if (!got_end) {
        n = snprintf(why, sizeof why,
                     "the test process stopped before the test finished: "
                     "does the code call exit()?");
    } else {
        return;
    }
    /* Say which call it was, and how to find the line. */
    if (*cur.last_call && n > 0 && (size_t)n < sizeof why)
        n += snprintf(why + n, sizeof why - (size_t)n,
                      " It happened inside %s.", cur.last_call);
    if (!timed_out && !cpu_out && n > 0 && (size_t)n < sizeof why) {
        if (KIT_SAN) /* SAN=1 is on already: only the debugger is left */
            snprintf(why + n, sizeof why - (size_t)n,
                     " To stop at the line: make debug TEST=%s.", t->name);
        else
            snprintf(why + n, sizeof why - (size_t)n,
                     " To see the line: make test SAN=1 TEST=%s, or make "
                     "debug TEST=%s.",
                     t->name, t->name);
    }
    assert_in_parent(0, t->name, 0, why);
}

/* ---------------------------------------------------------------------
 * The CUnit test functions: one wrapper per test, found by position
 * ------------------------------------------------------------------- */

/* CUnit test functions take no argument, so each registered test gets a
 * wrapper from this table that knows its index. */
#define MAX_TESTS 256

struct selected {
    const struct kit_chapter *ch;
    const struct kit_test *t;
    int passed;
    int ran;
    double seconds;
    char *message;  /* first failure, or NULL */
    char call[128]; /* the student's call it failed in, if known */
    int san;        /* its failure is a sanitizer's report */
};

static struct selected sel[MAX_TESTS];
static int n_sel;

static int first_failure = -1;
static char first_failure_msg[MSG_MAX];
static char first_failure_where[256];

static void run_selected(int i)
{
    struct selected *s = &sel[i];
    memset(&cur, 0, sizeof cur);
    current_chapter = s->ch->number;
    double start = now_seconds();
    if (opt.fork)
        run_forked(s->t);
    else {
        kit_leak_reset();
        s->t->body();
        kit_leak_check();
    }
    if (cur.checks == 0)
        assert_in_parent(0, s->t->name, 0,
                         "this test made no checks, so it proves nothing");
    s->ran = 1;
    s->seconds = now_seconds() - start;
    s->passed = cur.failed == 0;
    if (!s->passed)
        s->message = strdup(cur.first_msg);
    if (opt.progress_only)
        ; /* print nothing per test */
    else if (s->passed) {
        if (opt.verbose)
            printf("  ok    ch%d %s\n", s->ch->number, s->t->name);
    } else {
        printf("  FAIL  ch%d %s: %s\n", s->ch->number, s->t->name, s->t->what);
        printf("        %s\n", cur.first_msg);
        if (cur.failed > 1)
            printf("        (and %d more failed check%s in this test)\n",
                   cur.failed - 1, cur.failed > 2 ? "s" : "");
    }
    if (!s->passed) {
        snprintf(s->call, sizeof s->call, "%.127s", cur.last_call);
        s->san = cur.san;
        if (first_failure < 0) {
            first_failure = i;
            snprintf(first_failure_msg, sizeof first_failure_msg, "%s",
                     cur.first_msg);
            snprintf(first_failure_where, sizeof first_failure_where, "%s",
                     cur.first_where);
        }
    }
    fflush(stdout);
}

/* clang-format off */
/* wrap_abc runs test a*64 + b*8 + c (digits pasted into the name only:
 * the index is computed, never read as a literal like 010, which C
 * would take for octal). */
#define W(a, b, c) \
    static void wrap_##a##b##c(void) { run_selected(a * 64 + b * 8 + c); }
#define W8(a, b) W(a, b, 0) W(a, b, 1) W(a, b, 2) W(a, b, 3) \
                 W(a, b, 4) W(a, b, 5) W(a, b, 6) W(a, b, 7)
#define W64(a) W8(a, 0) W8(a, 1) W8(a, 2) W8(a, 3) \
               W8(a, 4) W8(a, 5) W8(a, 6) W8(a, 7)
W64(0) W64(1) W64(2) W64(3)
#undef W
#define W(a, b, c) wrap_##a##b##c,
static void (*const wrappers[MAX_TESTS])(void) = {
    W64(0) W64(1) W64(2) W64(3)
};
#undef W
#undef W8
#undef W64
/* clang-format on */

/* ---------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kit_tests [--chapter N] [--test NAME] [--no-fork]\n"
            "                 [--timeout SECONDS] [--junit FILE.xml]\n"
            "                 [--results FILE.tsv]\n"
            "                 [--impl starter|solutions] [--quiet] [--list]\n"
            "                 [--san-log FILE] [--exercises FILE.tsv]\n"
            "                 [--broken 'N|title|file|tests'] [--progress]\n"
            "                 [--state DIR] [--book FILE.html] [--cpu-time]\n"
            "                 [--race-failed FILE] [--results-fd N] [--san-fd "
            "N]\n"
            "                 [--output-cap BYTES] [--mem-limit BYTES]\n");
}

static int parse_args(int argc, char **argv, int *list)
{
    const char *env = getenv("KIT_FORK");
    if (env && strcmp(env, "no") == 0)
        opt.fork = 0;
    env = getenv("KIT_TIMEOUT");
    if (env && *env)
        opt.timeout = atof(env);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--chapter") == 0 && v) {
            opt.chapter = atoi(v);
            i++;
        } else if (strcmp(a, "--test") == 0 && v) {
            opt.test = *v ? v : NULL;
            i++;
        } else if (strcmp(a, "--timeout") == 0 && v) {
            opt.timeout = atof(v);
            i++;
        } else if (strcmp(a, "--junit") == 0 && v) {
            opt.junit = v;
            i++;
        } else if (strcmp(a, "--results") == 0 && v) {
            opt.table = v;
            i++;
        } else if (strcmp(a, "--impl") == 0 && v) {
            opt.impl = v;
            i++;
        } else if ((strcmp(a, "--results-fd") == 0 ||
                    strcmp(a, "--san-fd") == 0) &&
                   v) {
            char *end;
            long fd = strtol(v, &end, 10);
            if (*end || fd < 3 || fd > 255) {
                fprintf(stderr, "kit_tests: %s takes a descriptor, 3 to 255\n",
                        a);
                return 0;
            }
            if (a[2] == 'r') {
                table_fd = (int)fd;
                if (!opt.table)
                    opt.table = "the results descriptor";
            } else
                san_given_fd = (int)fd;
            i++;
        } else if (strcmp(a, "--san-log") == 0 && v) {
            opt.san_log = *v ? v : NULL;
            i++;
        } else if (strcmp(a, "--exercises") == 0 && v) {
            opt.exercises = v;
            i++;
        } else if (strcmp(a, "--broken") == 0 && v) {
            if (n_broken < (int)(sizeof broken / sizeof broken[0]))
                broken[n_broken++] = v;
            i++;
        } else if ((strcmp(a, "--output-cap") == 0 ||
                    strcmp(a, "--mem-limit") == 0) &&
                   v) {
            char *end;
            long long b = strtoll(v, &end, 10);
            if (*end || b < 0 || (b > 0 && b < 4096)) {
                fprintf(stderr,
                        "kit_tests: %s takes a number of bytes, 4096 or "
                        "more (0: none), not '%s'\n",
                        a, v);
                return 0;
            }
            if (a[2] == 'o')
                opt.output_cap = b;
            else
                opt.mem_limit = b;
            i++;
        } else if (strcmp(a, "--state") == 0 && v) {
            opt.state = v;
            i++;
        } else if (strcmp(a, "--race-failed") == 0 && v) {
            opt.race_failed = *v ? v : NULL;
            i++;
        } else if (strcmp(a, "--book") == 0 && v) {
            opt.book = *v ? v : NULL;
            i++;
        } else if (strcmp(a, "--progress") == 0) {
            opt.progress_only = 1;
            opt.verbose = 0;
        } else if (strcmp(a, "--no-fork") == 0) {
            opt.fork = 0;
        } else if (strcmp(a, "--cpu-time") == 0) {
            opt.cpu = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            opt.verbose = 0;
        } else if (strcmp(a, "--list") == 0) {
            *list = 1;
        } else if (strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, "kit_tests: unknown or incomplete option '%s'\n",
                    a);
            usage(stderr);
            return 0;
        }
    }
    if (!(opt.timeout > 0) || opt.timeout > 86400) {
        fprintf(stderr, "kit_tests: the timeout must be a number of seconds "
                        "between 0 and 86400\n");
        return 0;
    }
    return 1;
}

static int select_tests(void)
{
    for (int c = 0; c < n_chapters; c++) {
        const struct kit_chapter *ch = chapters[c];
        if (opt.chapter && ch->number != opt.chapter)
            continue;
        for (const struct kit_test *const *t = ch->tests; *t; t++) {
            if (opt.test && strcmp((*t)->name, opt.test) != 0)
                continue;
            if (n_sel == MAX_TESTS) {
                fprintf(stderr, "runner: more than %d tests\n", MAX_TESTS);
                return 0;
            }
            sel[n_sel].ch = ch;
            sel[n_sel].t = *t;
            n_sel++;
        }
    }
    return 1;
}

static int register_with_cunit(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 0;
    CU_pSuite suite = NULL;
    const struct kit_chapter *in = NULL;
    for (int i = 0; i < n_sel; i++) {
        if (sel[i].ch != in) {
            char name[128];
            snprintf(name, sizeof name, "ch%d %s", sel[i].ch->number,
                     sel[i].ch->title);
            suite = CU_add_suite(name, NULL, NULL); /* copied */
            if (!suite)
                return 0;
            in = sel[i].ch;
        }
        if (!CU_add_test(suite, sel[i].t->name, wrappers[i]))
            return 0;
    }
    return 1;
}

/* The book's exercise for a function, from --exercises (a TSV written
 * from the chapters' Markdown: function, exercise number, section, chapter file,
 * the student's file that defines the function).
 * Returns 1 and fills the fields when found. */
static int find_exercise(const char *func, char *ex, char *section, char *md,
                         char *src, size_t size)
{
    FILE *f = opt.exercises ? fopen(opt.exercises, "r") : NULL;
    if (!f)
        return 0;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *fields[5] = {line, NULL, NULL, NULL, NULL};
        for (int k = 1; k < 5; k++) {
            char *tab = fields[k - 1] ? strchr(fields[k - 1], '\t') : NULL;
            if (tab) {
                *tab = '\0';
                fields[k] = tab + 1;
            }
        }
        if (fields[4] && strcmp(fields[0], func) == 0) {
            snprintf(ex, size, "%s", fields[1]);
            snprintf(section, size, "%s", fields[2]);
            snprintf(md, size, "%s", fields[3]);
            snprintf(src, size, "%s", fields[4]);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* The anchor of section NUMBER ("6.2") in the rendered book (--book):
 * the id pandoc gave its heading, <h2 data-number="6.2" id="...">.
 * Returns 1 and fills id when the book is there and has the section. */
static int book_anchor(const char *number, char *id, size_t size)
{
    FILE *f = opt.book ? fopen(opt.book, "r") : NULL;
    if (!f)
        return 0;
    char want[64], line[4096];
    snprintf(want, sizeof want, "data-number=\"%s\" id=\"", number);
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        const char *at = strstr(line, want);
        if (!at)
            continue;
        at += strlen(want);
        size_t n = strcspn(at, "\"");
        if (at[n] == '"' && n > 0 && n < size) {
            snprintf(id, size, "%.*s", (int)n, at);
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* The function a failed test is about: the student's call it failed in,
 * else the longest exercise function its name starts with. */
static void function_of(const struct selected *s, char *func, size_t size)
{
    /* the identifier just before the first '(': "case 1: f(x)" -> f */
    size_t n = strcspn(s->call, "("), from = n;
    while (from > 0 && (isalnum((unsigned char)s->call[from - 1]) ||
                        s->call[from - 1] == '_'))
        from--;
    if (n > from && s->call[n] == '(') {
        snprintf(func, size, "%.*s", (int)(n - from), s->call + from);
        return;
    }
    *func = '\0';
    FILE *f = opt.exercises ? fopen(opt.exercises, "r") : NULL;
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        size_t k = strcspn(line, "\t");
        if (k < size && k > strlen(func) && strncmp(s->t->name, line, k) == 0)
            snprintf(func, size, "%.*s", (int)k, line);
    }
    fclose(f);
}

/* The tests of broken chapter b: the words after its third '|'. */
static const char *broken_tests(int b)
{
    const char *p = broken[b];
    for (int k = 0; k < 3 && p; k++) {
        p = strchr(p, '|');
        p = p ? p + 1 : NULL;
    }
    return p ? p : "";
}

static int count_broken_tests(void)
{
    int n = 0;
    for (int b = 0; b < n_broken; b++)
        for (const char *p = broken_tests(b); *p;) {
            p += strspn(p, " ");
            if (*p)
                n++;
            p += strcspn(p, " ");
        }
    return n;
}

static void print_broken(int number)
{
    for (int b = 0; b < n_broken; b++) {
        char title[128] = "", file[128] = "";
        int n = 0;
        if (sscanf(broken[b], "%d|%127[^|]|%127[^|]", &n, title, file) < 1 ||
            n != number)
            continue;
        printf("  Chapter %d  %-42s [%s] does not compile: %s\n", n, title,
               "--------------------", file);
    }
}

static void make_bar(char bar[21], int passed, int total)
{
    int fill = total ? passed * 20 / total : 0;
    for (int k = 0; k < 20; k++)
        bar[k] = k < fill ? '#' : '.';
    bar[20] = '\0';
}

/* --state DIR: each chapter whose every test ran leaves "passed total
 * title" in DIR/chN.txt, so that a later run of another chapter can show
 * its bar too, marked as from an earlier run. */
static void save_state(const struct kit_chapter *ch, int passed, int total)
{
    if (!opt.state)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/ch%d.txt", opt.state, ch->number);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "%d %d %s\n", passed, total, ch->title);
    fclose(f);
}

static void print_saved(int number)
{
    if (!opt.state)
        return;
    char path[1024], title[128] = "", bar[21];
    int passed = 0, total = 0;
    snprintf(path, sizeof path, "%s/ch%d.txt", opt.state, number);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    int got = fscanf(f, "%d %d %127[^\n]", &passed, &total, title);
    fclose(f);
    if (got != 3 || total <= 0)
        return;
    make_bar(bar, passed, total);
    printf("  Chapter %d  %-42s [%s] %3d/%d%s (from an earlier "
           "run)\n",
           number, title, bar, passed, total, passed == total ? "  done" : "");
}

/* --race-failed FILE: the tests the race pass failed on this same code,
 * one name per line (tools/loop/races.sh); the progress view counts them
 * as failed, since the ordinary build may pass a race by chance. */
static int raced(const char *name)
{
    if (!opt.race_failed)
        return 0;
    FILE *f = fopen(opt.race_failed, "r");
    if (!f)
        return 0;
    char line[256];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        found = strcmp(line, name) == 0;
    }
    fclose(f);
    return found;
}

static void print_progress(void)
{
    printf("\nProgress\n");
    for (int number = 1; number < 100; number++) {
        const struct kit_chapter *ch = NULL;
        for (int c = 0; c < n_chapters; c++)
            if (chapters[c]->number == number)
                ch = chapters[c];
        int is_broken = 0;
        for (int b = 0; b < n_broken; b++)
            is_broken |= atoi(broken[b]) == number;
        if (is_broken) {
            print_broken(number);
            continue;
        }
        int total = 0, passed = 0, races = 0;
        for (int i = 0; ch && i < n_sel; i++)
            if (sel[i].ch == ch && sel[i].ran) {
                total++;
                int race = sel[i].passed && raced(sel[i].t->name);
                races += race;
                passed += sel[i].passed && !race;
            }
        if (total == 0) {
            print_saved(number);
            continue;
        }
        int in_chapter = 0; /* all of the chapter's tests, run or not */
        for (const struct kit_test *const *t = ch->tests; *t; t++)
            in_chapter++;
        char bar[21];
        make_bar(bar, passed, total);
        if (total < in_chapter) /* TEST= chose some: no "done" */
            printf("  Chapter %d  %-42s [%s] %3d/%d passed (%d of its %d "
                   "tests run)\n",
                   ch->number, ch->title, bar, passed, total, total,
                   in_chapter);
        else {
            printf("  Chapter %d  %-42s [%s] %3d/%d%s", ch->number, ch->title,
                   bar, passed, total, passed == total ? "  done" : "");
            if (races)
                printf(" (%d with a data race: make races)", races);
            printf("\n");
            save_state(ch, passed, total);
        }
    }

    /* The next exercise: the one the first failing test is about. */
    if (first_failure < 0) {
        if (n_broken)
            printf("Next: make the file above compile; the compiler's "
                   "message is at the top.\n");
        return;
    }
    const struct selected *s = &sel[first_failure];
    char func[128], ex[128], section[128], md[128], src[128];
    function_of(s, func, sizeof func);
    if (*func && find_exercise(func, ex, section, md, src, sizeof ex)) {
        /* The book's section, in the rendered book: build/book.html#id
         * (the chapter's Markdown is its source, not what to read). */
        char number[32], id[256];
        snprintf(number, sizeof number, "%.*s", (int)strcspn(section, " "),
                 section);
        const char *title = section + strcspn(section, " ") +
                            (section[strcspn(section, " ")] != 0);
        printf("Next: Exercise %s, %s() in %s/%s. Read section %s, \"%s\", ",
               ex, func, opt.impl, src, number, title);
        if (book_anchor(number, id, sizeof id))
            printf("in the book: %s#%s\n", opt.book, id);
        else
            printf("in the book: make book-html, then open %s at section "
                   "%s.\n",
                   opt.book ? opt.book : "build/book.html", number);
    } else
        printf("Next: %s, in %s/%s.\n", s->t->name, opt.impl, s->ch->file);
}

static const char *prog_path = "kit_tests"; /* argv[0] */

static void print_first_failure(void)
{
    if (first_failure < 0)
        return;
    const struct selected *s = &sel[first_failure];
    printf("\nFirst failure: ch%d %s%s%s%s\n", s->ch->number, s->t->name,
           *first_failure_where ? " (" : "", first_failure_where,
           *first_failure_where ? ")" : "");
    printf("  %s\n", first_failure_msg);
    if (s->ch->number >= KIT_GIVEN_FIRST) /* the course's given code */
        printf("  This tests the given code, given/%s: after editing it, "
               "run: make given-tests && %s --impl %s --chapter %d "
               "--test %s\n",
               s->ch->file, prog_path, opt.impl, s->ch->number, s->t->name);
    else
        printf("  Edit %s/%s, then run: make test CH=%d TEST=%s%s%s\n",
               opt.impl, s->ch->file, s->ch->number, s->t->name,
               KIT_SAN ? " SAN=1" : "",
               strcmp(opt.impl, "starter") ? " IMPL=solutions" : "");
    if (s->san && san_fd >= 0)
        printf("  The sanitizer's full report: %s (the section '==== test "
               "%s'); to stop at the line in gdb: make debug TEST=%s\n",
               opt.san_log, s->t->name, s->t->name);
    if (s->ch->number < KIT_GIVEN_FIRST)
        printf("  Stuck? make hint TEST=%s shows a hint.\n", s->t->name);
}

static void xml_escaped(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

/* One <testsuite> per chapter, one <testcase> per test that ran. */
static int write_junit(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "kit_tests: cannot write %s\n", path);
        return 0;
    }
    int total = 0, failed = 0;
    for (int i = 0; i < n_sel; i++) {
        total += sel[i].ran;
        failed += sel[i].ran && !sel[i].passed;
    }
    total += count_broken_tests();
    failed += count_broken_tests();
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"kit\" tests=\"%d\" failures=\"%d\">\n",
            total, failed);
    for (int i = 0; i < n_sel;) {
        const struct kit_chapter *ch = sel[i].ch;
        int end = i, n = 0, nf = 0;
        for (; end < n_sel && sel[end].ch == ch; end++) {
            n += sel[end].ran;
            nf += sel[end].ran && !sel[end].passed;
        }
        fprintf(f, "  <testsuite name=\"ch%d ", ch->number);
        xml_escaped(f, ch->title);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\">\n", n, nf);
        for (; i < end; i++) {
            if (!sel[i].ran)
                continue;
            fprintf(f,
                    "    <testcase classname=\"ch%d\" name=\"%s\" "
                    "time=\"%.3f\"",
                    ch->number, sel[i].t->name, sel[i].seconds);
            if (sel[i].passed) {
                fprintf(f, "/>\n");
                continue;
            }
            fprintf(f, ">\n      <failure message=\"");
            xml_escaped(f, sel[i].message);
            fprintf(f, "\">");
            xml_escaped(f, sel[i].t->what);
            fprintf(f, "</failure>\n    </testcase>\n");
        }
        fprintf(f, "  </testsuite>\n");
    }
    /* Chapters that did not compile: each test is a failure. */
    for (int b = 0; b < n_broken; b++) {
        char title[128] = "", file[128] = "";
        int number = 0;
        sscanf(broken[b], "%d|%127[^|]|%127[^|]", &number, title, file);
        fprintf(f, "  <testsuite name=\"ch%d ", number);
        xml_escaped(f, title);
        fprintf(f, "\">\n");
        for (const char *p = broken_tests(b); *p;) {
            p += strspn(p, " ");
            int len = (int)strcspn(p, " ");
            if (len)
                fprintf(f,
                        "    <testcase classname=\"ch%d\" name=\"%.*s\" "
                        "time=\"0\">\n      <failure message=\"%s does not "
                        "compile\">not run</failure>\n    </testcase>\n",
                        number, len, p, file);
            p += len;
        }
        fprintf(f, "  </testsuite>\n");
    }
    fprintf(f, "</testsuites>\n");
    return fclose(f) == 0;
}

/* The results as a table, for graders (tools/grade/): a header line,
 * then one line per test that ran, tab-separated: chapter, the student's
 * file, test name, passed or failed, seconds, the first failure's message
 * (tabs and line breaks turned into spaces). Written by this process, the parent, from
 * what it recorded; the test bodies run in children and never see it. */
static int write_results(const char *path)
{
    FILE *f = table_fd >= 0 ? fdopen(table_fd, "w") : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "kit_tests: cannot write %s\n", path);
        return 0;
    }
    fprintf(f, "chapter\tfile\ttest\tstatus\tseconds\tmessage\n");
    for (int i = 0; i < n_sel; i++) {
        if (!sel[i].ran)
            continue;
        fprintf(f, "%d\t%s\t%s\t%s\t%.3f\t", sel[i].ch->number, sel[i].ch->file,
                sel[i].t->name, sel[i].passed ? "passed" : "failed",
                sel[i].seconds);
        for (const char *m = sel[i].message; m && *m; m++)
            fputc((unsigned char)*m < 0x20 ? ' ' : *m, f);
        fputc('\n', f);
    }
    return fclose(f) == 0;
}

int main(int argc, char **argv)
{
    int list = 0;
    if (argc > 0 && argv[0])
        prog_path = argv[0];
#if KIT_RACE
    /* Archer looks for this option in the environment (ThreadSanitizer
     * has it already, from __tsan_default_options), and warns without. */
    if (!getenv("TSAN_OPTIONS"))
        setenv("TSAN_OPTIONS", __tsan_default_options(), 1);
    /* Without Archer, libomp's own barriers look like races. */
    setenv("OMP_TOOL", "enabled", 1);
#endif
    if (!parse_args(argc, argv, &list))
        return 2;
    kit_leak_set_reporter(leak_failed);
    qsort(chapters, (size_t)n_chapters, sizeof chapters[0], by_number);
    if (list) {
        for (int c = 0; c < n_chapters; c++)
            for (const struct kit_test *const *t = chapters[c]->tests; *t; t++)
                printf("ch%d %-40s %s\n", chapters[c]->number, (*t)->name,
                       (*t)->what);
        return 0;
    }
    if (!select_tests())
        return 2;
    if (n_sel == 0) {
        /* The nearest names ("Did you mean") are the student's loop's to
           give (tools/loop/lib.sh, nearest), which checks TEST against the
           tests' sources before this binary is even built. */
        static const char every_test[] =
            "  Run 'make list' (or kit_tests --list) to see every test.\n";
        int known = 0;
        for (int c = 0; c < n_chapters; c++)
            known |= chapters[c]->number == opt.chapter;
        if (opt.chapter && !known) {
            fprintf(stderr,
                    "kit_tests: there is no chapter %d. The chapters are:",
                    opt.chapter);
            for (int c = 0; c < n_chapters; c++)
                fprintf(stderr, " %d", chapters[c]->number);
            fprintf(stderr, ".\n");
        } else if (opt.chapter) {
            fprintf(stderr, "kit_tests: chapter %d has no test named '%s'.\n",
                    opt.chapter, opt.test ? opt.test : "");
            fprintf(stderr, "%s", every_test);
        } else {
            fprintf(stderr, "kit_tests: there is no test named '%s'.\n",
                    opt.test ? opt.test : "");
            fprintf(stderr, "%s", every_test);
        }
        return 2;
    }
    if (!register_with_cunit()) {
        fprintf(stderr, "kit_tests: CUnit: %s\n", CU_get_error_msg());
        return 2;
    }

    if (opt.san_log && opt.fork) {
        san_fd = san_given_fd >= 0
                     ? san_given_fd
                     : open(opt.san_log,
                            O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        if (san_fd < 0)
            fprintf(stderr,
                    "kit_tests: cannot write %s; the sanitizers' "
                    "reports go to the screen\n",
                    opt.san_log);
    }

    /* CUnit runs the suites; the wrappers print each test's line. */
    double start = now_seconds();
    CU_run_all_tests();
    double wall = now_seconds() - start;
    if (opt.junit && !write_junit(opt.junit))
        return 2;
    if (opt.table && !write_results(opt.table))
        return 2;

    print_progress();
    if (opt.progress_only) {
        CU_cleanup_registry();
        return 0;
    }
    print_first_failure();

    /* CUnit's summary, but its "Elapsed time" counts only the CPU time of
     * this process, not the tests' children or the time waited for a
     * test that hung: it says the wall-clock time instead. */
    char *summary = CU_get_run_results_string();
    char *el = summary ? strstr(summary, "Elapsed time") : NULL;
    if (el) {
        char *end = strchr(el, '\n');
        printf("\n%.*sElapsed time = %8.3f seconds (wall clock)%s\n",
               (int)(el - summary), summary, wall, end ? end : "");
    } else
        printf("\n%s\n", summary ? summary : "");
    free(summary);
    if (san_fd >= 0)
        close(san_fd);

    unsigned ran = CU_get_number_of_tests_run();
    unsigned failed = CU_get_number_of_tests_failed();
    int not_run = count_broken_tests();
    if (not_run)
        printf("%u passed, %u failed, %d not run (their chapters do not "
               "compile)\n",
               ran - failed, failed, not_run);
    else
        printf("%u passed, %u failed\n", ran - failed, failed);
    CU_cleanup_registry();
    for (int i = 0; i < n_sel; i++)
        free(sel[i].message);
    return failed == 0 && ran > 0 ? 0 : 1;
}
