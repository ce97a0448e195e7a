/*
 * proxy.c: the student's functions, as the judging process sees them when
 * grading (tools/grade/build.sh links this in place of the student's
 * files). Each function here has the API's signature; it sends its
 * inputs to a worker process that runs the student's code (worker.c,
 * linked with the student's files only), and reads the outputs back, with
 * the shapes the headers document. The process that makes the checks and
 * writes the results never holds the student's code.
 *
 * One worker per test: the first call in a test's process starts it, and
 * it keeps its state (the leak check's table, a chapter's cache) until
 * the test ends (kit_worker_end). It starts sandboxed: before it is
 * executed, this file sets its limits (setrlimit) and a seccomp filter
 * that lets it read and write its pipes, map memory that is never
 * executable, run OpenMP's threads and exit; nothing else. The worker is
 * linked statically, so that no loader needs to open a file, and the
 * filter is in place before the first instruction of the worker runs
 * (code that runs before main included).
 *
 * When the worker dies, the test's process dies the same way (the same
 * signal, or the same exit status), so the runner reports it with the
 * words it uses in-process ("crashed with SIGSEGV ... It happened inside
 * matmul(...)").
 *
 * The worker's output (stdout and stderr) is a pipe this file reads: it
 * keeps the first KIT_OUTPUT_CAP bytes of each test (default 65536) and
 * says how many it cut.
 */
#define _GNU_SOURCE

#include "kit_runner.h"
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
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static pid_t owner;     /* the process that started the worker */
static pid_t wpid;      /* the worker */
static int req_fd = -1; /* requests to the worker */
static int rep_fd = -1; /* its replies */
static int out_fd = -1; /* its stdout and stderr */
static uint32_t seq;    /* requests sent */
static size_t out_kept; /* bytes of its output passed on, this test */
static size_t out_cut;  /* and cut */
/* A request is gathered here and sent in one go; a reply is read in
 * large pieces. */
static char send_buf[1 << 16], recv_buf[1 << 16];
static size_t send_len, recv_at, recv_len;

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *end;
    long x = v && *v ? strtol(v, &end, 10) : dflt;
    return v && *v && *end == '\0' && x > 0 ? x : dflt;
}

static void die_setup(const char *what)
{
    /* In the worker's child before exec: the test fails with this. */
    dprintf(2, "kit worker: %s: %s\n", what, strerror(errno));
    _exit(126);
}

/* The seccomp filter. Anything not listed fails with EPERM. */
static void sandbox_filter(pid_t self)
{
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!f)
        die_setup("seccomp_init");
    int r = 0;
#define ALLOW(name, ...)                                                       \
    r |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(name), __VA_ARGS__)
    /* its pipes: requests in; replies and output out */
    ALLOW(read, 1, SCMP_A0(SCMP_CMP_EQ, WORKER_REQ_FD));
    ALLOW(write, 1, SCMP_A0(SCMP_CMP_EQ, WORKER_REP_FD));
    ALLOW(write, 1, SCMP_A0(SCMP_CMP_EQ, 1));
    ALLOW(write, 1, SCMP_A0(SCMP_CMP_EQ, 2));
    ALLOW(writev, 1, SCMP_A0(SCMP_CMP_EQ, 2)); /* abort()'s message */
    /* memory, never executable */
    ALLOW(brk, 0);
    ALLOW(mmap, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    ALLOW(mprotect, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    ALLOW(munmap, 0);
    ALLOW(mremap, 0);
    ALLOW(madvise, 0);
    /* the end: exit, or a signal to itself (abort(), assert()) */
    ALLOW(exit, 0);
    ALLOW(exit_group, 0);
    ALLOW(rt_sigreturn, 0);
    ALLOW(rt_sigprocmask, 0);
    ALLOW(rt_sigaction, 0);
    ALLOW(getpid, 0);
    ALLOW(gettid, 0);
    ALLOW(kill, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    ALLOW(tgkill, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    /* the C library's start (static: no loader, no file opened) */
    ALLOW(execve, 0); /* this one exec; whatever it runs stays filtered */
    ALLOW(arch_prctl, 0);
    ALLOW(set_tid_address, 0);
    ALLOW(set_robust_list, 0);
    ALLOW(rseq, 0);
    ALLOW(getrandom, 0);
    ALLOW(prlimit64, 1, SCMP_A2(SCMP_CMP_EQ, 0)); /* read a limit, never set */
    ALLOW(clock_gettime, 0);
    /* OpenMP's threads (chapter 7): threads of this process only */
    ALLOW(clone, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    ALLOW(futex, 0);
    ALLOW(sched_yield, 0);
    ALLOW(sched_getaffinity, 0);
    ALLOW(nanosleep, 0);
    ALLOW(clock_nanosleep, 0);
#undef ALLOW
    /* clone3 takes its flags in memory, where a filter cannot look:
     * "not implemented" makes the C library fall back to clone. */
    r |= seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (r != 0)
        die_setup("seccomp_rule_add");
    if (seccomp_load(f) != 0)
        die_setup("seccomp_load");
    seccomp_release(f);
}

/* The test's CPU limit, which the worker gets too (test_start()). */
static rlim_t cpu_limit;

static void sandbox_limits(void)
{
    struct {
        int what;
        rlim_t value;
    } lim[] = {
        {RLIMIT_AS, (rlim_t)env_long("KIT_WORKER_MEM_MB", 2048) << 20},
        {RLIMIT_CPU,
         cpu_limit ? cpu_limit : (rlim_t)env_long("KIT_WORKER_CPU", 20)},
        {RLIMIT_FSIZE, 0},
        {RLIMIT_CORE, 0},
        {RLIMIT_NPROC, (rlim_t)env_long("KIT_WORKER_NPROC", 64)},
        {RLIMIT_NOFILE, 16},
    };
    for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++) {
        /* CPU time: SIGXCPU first, which the test's process passes on
         * and the runner reports as a timeout; SIGKILL a second later. */
        struct rlimit rl = {lim[k].value,
                            lim[k].value + (lim[k].what == RLIMIT_CPU)};
        if (setrlimit(lim[k].what, &rl) != 0)
            die_setup("setrlimit");
    }
}

static void spawn(void)
{
    const char *path = getenv("KIT_WORKER");
    if (!path || !*path) {
        fprintf(stderr, "kit: KIT_WORKER (the worker's path) is not set\n");
        _exit(125);
    }
    int rq[2], rp[2], out[2];
    if (pipe(rq) || pipe(rp) || pipe(out)) {
        perror("kit: pipe");
        _exit(125);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        perror("kit: fork");
        _exit(125);
    }
    if (pid == 0) {
        /* The worker dies with the test's process. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(125);
        int a = fcntl(rq[0], F_DUPFD, 10), b = fcntl(rp[1], F_DUPFD, 10),
            c = fcntl(out[1], F_DUPFD, 10);
        if (a < 0 || b < 0 || c < 0 || dup2(a, WORKER_REQ_FD) < 0 ||
            dup2(b, WORKER_REP_FD) < 0 || dup2(c, 1) < 0 || dup2(c, 2) < 0)
            die_setup("dup2");
        close(0);
        /* Every other descriptor (the runner's record pipe among them)
         * is closed: the worker cannot reach it. */
        for (int fd = WORKER_REP_FD + 1; fd < 4096; fd++)
            close(fd);
        char *env[8];
        int n = 0;
        static const char *const keep[] = {"OMP_NUM_THREADS", "OMP_WAIT_POLICY",
                                           "OMP_PROC_BIND"};
        static char buf[3][128];
        for (int k = 0; k < 3; k++) {
            const char *v = getenv(keep[k]);
            if (v && strlen(v) < 64) {
                snprintf(buf[k], sizeof buf[k], "%s=%s", keep[k], v);
                env[n++] = buf[k];
            }
        }
        env[n] = NULL;
        char *argv[] = {(char *)"kit_worker", NULL};
        sandbox_limits();
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
            die_setup("no_new_privs");
        sandbox_filter(getpid());
        execve(path, argv, env);
        die_setup("execve");
    }
    close(rq[0]);
    close(rp[1]);
    close(out[1]);
    req_fd = rq[1];
    rep_fd = rp[0];
    out_fd = out[0];
    fcntl(req_fd, F_SETFL, O_NONBLOCK);
    fcntl(out_fd, F_SETFL, O_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);
    wpid = pid;
    owner = getpid();
    seq = 0;
    out_kept = out_cut = 0;
    send_len = recv_at = recv_len = 0;
}

/* Pass on what the worker printed, up to the cap. 0 at its end. */
static int drain(void)
{
    char buf[65536];
    ssize_t k = read(out_fd, buf, sizeof buf);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
        return 1;
    if (k <= 0)
        return 0;
    size_t cap = (size_t)env_long("KIT_OUTPUT_CAP", 65536);
    size_t keep = out_kept < cap ? cap - out_kept : 0;
    if (keep > (size_t)k)
        keep = (size_t)k;
    if (keep) {
        fflush(stdout);
        if (write(1, buf, keep) < 0)
            keep = 0;
        out_kept += keep;
    }
    out_cut += (size_t)k - keep;
    return 1;
}

/* The worker is gone: this process ends as it did. */
static void worker_gone(void)
{
    int status = 0;
    close(req_fd);
    while (out_fd >= 0 && drain())
        ;
    while (waitpid(wpid, &status, 0) < 0 && errno == EINTR)
        ;
    fflush(stdout);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        raise(sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

static void garbled(void)
{
    kit_check(0, "proxy.c", __LINE__,
              "the student's code answered the test with a garbled reply "
              "(did the code write past an array, or print to the kit's "
              "pipe?)");
    kill(wpid, SIGKILL);
    fflush(stdout);
    _exit(0); /* no end record: the test fails */
}

static void put_now(const char *c, size_t n)
{
    while (n > 0) {
        struct pollfd fds[2] = {{req_fd, POLLOUT, 0}, {out_fd, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            worker_gone();
        if (fds[1].revents && !drain())
            worker_gone();
        if (fds[0].revents & (POLLERR | POLLHUP))
            worker_gone();
        if (fds[0].revents & POLLOUT) {
            ssize_t k = write(req_fd, c, n);
            if (k < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (k <= 0)
                worker_gone();
            c += k;
            n -= (size_t)k;
        }
    }
}

static void put_flush(void)
{
    put_now(send_buf, send_len);
    send_len = 0;
}

static void put(const void *p, size_t n)
{
    if (send_len + n > sizeof send_buf)
        put_flush();
    if (n > sizeof send_buf) {
        put_now(p, n);
        return;
    }
    memcpy(send_buf + send_len, p, n);
    send_len += n;
}

static void get(void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        if (recv_at < recv_len) {
            size_t k = recv_len - recv_at < n ? recv_len - recv_at : n;
            memcpy(c, recv_buf + recv_at, k);
            recv_at += k;
            c += k;
            n -= k;
            continue;
        }
        struct pollfd fds[2] = {{rep_fd, POLLIN, 0}, {out_fd, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            worker_gone();
        if (fds[1].revents && !drain()) {
            out_fd = -1; /* its output closed: only the reply is left */
        }
        if (fds[0].revents) {
            ssize_t k = read(rep_fd, recv_buf, sizeof recv_buf);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                worker_gone();
            recv_at = 0;
            recv_len = (size_t)k;
        }
    }
}

/* One buffer of a call. */
struct arg {
    const void *p;
    size_t bytes; /* from p */
    size_t lead;  /* bytes before p that are sent too */
    int out;
};

/* A float array of n entries (n <= 0: none); one inside a kit_guarded()
 * buffer goes with the whole buffer, its guards included. */
static struct arg floats(const float *p, long long n, int out)
{
    struct arg a = {p, 0, 0, out};
    size_t lead, total;
    if (p && kit_output_extent(p, &lead, &total)) {
        a.lead = lead * sizeof(float);
        a.bytes = (total - lead) * sizeof(float);
    } else if (p && n > 0)
        a.bytes = (size_t)n * sizeof(float);
    if (a.lead + a.bytes > WORKER_MAX_BYTES)
        a.bytes = WORKER_MAX_BYTES - a.lead;
    return a;
}

/* One call at a time: the student's code of chapters 4 to 8 may call
 * these functions from several threads at once (chapter 8's model runs
 * its sequences on OpenMP threads), and the worker's pipe, the buffers
 * and seq are shared. Each call is a pure function of its inputs, so
 * taking them in turn changes no result. */
static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;

static long long call_locked(uint32_t fn, const long long *ints, int n_ints,
                             struct arg *args, int n_args, long long *ret_ints,
                             int n_ret);

static long long call(uint32_t fn, const long long *ints, int n_ints,
                      struct arg *args, int n_args, long long *ret_ints,
                      int n_ret)
{
    pthread_mutex_lock(&call_lock);
    long long r = call_locked(fn, ints, n_ints, args, n_args, ret_ints, n_ret);
    pthread_mutex_unlock(&call_lock);
    return r;
}

static long long call_locked(uint32_t fn, const long long *ints, int n_ints,
                             struct arg *args, int n_args, long long *ret_ints,
                             int n_ret)
{
    if (owner != getpid())
        spawn();
    struct worker_header h = {WORKER_MAGIC,    fn, ++seq, 0, (uint32_t)n_ints,
                              (uint32_t)n_args};
    put(&h, sizeof h);
    for (int k = 0; k < n_ints; k++) {
        int64_t v = ints[k];
        put(&v, sizeof v);
    }
    for (int k = 0; k < n_args; k++) {
        struct worker_buf b = {args[k].p != NULL, (uint32_t)args[k].out,
                               (uint32_t)args[k].bytes, (uint32_t)args[k].lead};
        put(&b, sizeof b);
        if (b.present)
            put((const char *)args[k].p - args[k].lead,
                args[k].lead + args[k].bytes);
    }
    put_flush();
    struct worker_header r;
    get(&r, sizeof r);
    if (r.magic != WORKER_MAGIC || r.fn != fn || r.seq != seq ||
        r.n_ints != (uint32_t)n_ret)
        garbled();
    for (int k = 0; k < n_ret; k++) {
        int64_t v;
        get(&v, sizeof v);
        ret_ints[k] = v;
    }
    for (int k = 0; k < n_args; k++)
        if (args[k].out && args[k].p) {
            uint32_t len;
            get(&len, sizeof len);
            if (len != args[k].lead + args[k].bytes)
                garbled();
            get((char *)args[k].p - args[k].lead, len);
        }
    return r.ret;
}

#define NARGS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---------------------------------------------------------------------
 * The end of a test, and the leak check, which lives in the worker
 * ------------------------------------------------------------------- */

/* Called by the runner in a test's process after the body and the leak
 * check: the worker is told to stop, its output is passed on, and the
 * cut is said. */
static void kit_worker_end(void)
{
    if (owner != getpid())
        return;
    close(req_fd);
    while (out_fd >= 0 && drain())
        ;
    int status;
    while (waitpid(wpid, &status, 0) < 0 && errno == EINTR)
        ;
    owner = 0;
    /* KIT_WORKER_TRIPS=1: how many requests this test made (measured for
     * the README's grading section) */
    if (getenv("KIT_WORKER_TRIPS"))
        fprintf(stderr, "[kit: %u round trips to the worker]\n", seq);
    if (out_cut)
        printf("\n[kit: this test's output was cut at %zu bytes; %zu more "
               "bytes were not kept]\n",
               out_kept, out_cut);
    fflush(stdout);
}

static int test_start(unsigned long long cpu_seconds)
{
    cpu_limit = (rlim_t)cpu_seconds; /* 0: none, KIT_WORKER_CPU's or 20 s */
    return 0;
}

/* The runner calls these two in each test's process (kit_runner.h). */
__attribute__((constructor)) static void plug_into_runner(void)
{
    static const struct kit_runner_hooks h = {test_start, kit_worker_end};
    kit_runner_set_hooks(&h);
}

/* The leak check of the student's code that runs in the worker. */
static struct arg bytes_out(void *p, size_t n)
{
    struct arg a = {p, n, 0, 1};
    return a;
}

void kit_leak_reset(void)
{
    if (owner == getpid())
        call(W_kit_leak_reset, NULL, 0, NULL, 0, NULL, 0);
}

void kit_leak_fail_nth(long n)
{
    long long i[] = {n};
    call(W_kit_leak_fail_nth, i, 1, NULL, 0, NULL, 0);
}

long kit_leak_allocations(void)
{
    return owner == getpid()
               ? (long)call(W_kit_leak_allocations, NULL, 0, NULL, 0, NULL, 0)
               : 0;
}

int kit_leak_live(void)
{
    return owner == getpid()
               ? (int)call(W_kit_leak_live, NULL, 0, NULL, 0, NULL, 0)
               : 0;
}

int kit_leak_failed_site(const char **file, int *line, const char **func)
{
    static char f[256], fn[128];
    if (owner != getpid())
        return 0;
    long long l = 0;
    struct arg a[] = {bytes_out(f, sizeof f), bytes_out(fn, sizeof fn)};
    int ok = (int)call(W_kit_leak_failed_site, NULL, 0, a, NARGS(a), &l, 1);
    f[sizeof f - 1] = fn[sizeof fn - 1] = '\0';
    if (ok) {
        *file = f, *line = (int)l, *func = fn;
    }
    return ok;
}

int kit_leak_oldest(struct kit_leak_info *info)
{
    memset(info, 0, sizeof *info);
    if (owner != getpid())
        return 0;
    long long v[4];
    struct arg a[] = {bytes_out(info->file, sizeof info->file),
                      bytes_out(info->func, sizeof info->func),
                      bytes_out(info->how, sizeof info->how)};
    int n = (int)call(W_kit_leak_oldest, NULL, 0, a, NARGS(a), v, 4);
    info->file[sizeof info->file - 1] = '\0';
    info->func[sizeof info->func - 1] = '\0';
    info->how[sizeof info->how - 1] = '\0';
    info->n_blocks = (int)v[0];
    info->line = (int)v[1];
    info->size = (size_t)v[2];
    info->total = (size_t)v[3];
    return n > 0 ? n : 0;
}

int kit_leak_check_when(const char *context)
{
    struct kit_leak_info b;
    if (kit_leak_oldest(&b) == 0)
        return 0;
    kit_leak_report(context, &b);
    return b.n_blocks;
}

int kit_leak_check(void)
{
    return kit_leak_check_when(NULL);
}

/* The counting allocator's wrappers belong to the worker. The judge
 * links the kit's stubs of the chapters it does not proxy (the tests of
 * those chapters are graded elsewhere), and those call these. */
void *kit_leak_malloc(size_t n, const char *file, int line, const char *func)
{
    (void)file, (void)line, (void)func;
    return malloc(n);
}

void *kit_leak_calloc(size_t n, size_t size, const char *file, int line,
                      const char *func)
{
    (void)file, (void)line, (void)func;
    return calloc(n, size);
}

void *kit_leak_realloc(void *p, size_t n, const char *file, int line,
                       const char *func)
{
    (void)file, (void)line, (void)func;
    return realloc(p, n);
}

void kit_leak_free(void *p)
{
    free(p);
}

/* ---------------------------------------------------------------------
 * The exercises (tools/harness/exercises.def): each of the registry's
 * lines becomes one of these functions, sending its integers and
 * buffers in its signature's order and taking back what the call wrote
 * (a cache's fields too). A count is an expression of the arguments,
 * with these helpers.
 * ------------------------------------------------------------------- */

static long long prod(long long a, long long b)
{
    return a > 0 && b > 0 ? a * b : 0;
}

/* An array of n numbers of size bytes each (n <= 0: none). */
static struct arg array_arg(const void *p, long long n, size_t size, int out)
{
    struct arg a = {p, p && n > 0 ? (size_t)n * size : 0, 0, out};
    return a;
}

static struct arg ints_arg(const int *p, long long n, int out)
{
    return array_arg(p, n, sizeof *p, out);
}

static struct arg u64s_arg(const uint64_t *p, long long n, int out)
{
    return array_arg(p, n, sizeof *p, out);
}

static int mha_d(const struct mha_config *c)
{
    return c ? c->d_model : 0;
}

static int mha_h(const struct mha_config *c)
{
    return c ? c->n_heads : 0;
}

static int gqa_d(const struct gqa_config *c)
{
    return c ? c->d_model : 0;
}

static int gqa_h(const struct gqa_config *c)
{
    return c ? c->n_heads : 0;
}

/* the width of W_k and W_v, n_kv_heads * d_head (0 with no shape) */
static long long gqa_kv(const struct gqa_config *c)
{
    return c && c->n_heads > 0 ? prod(c->n_kv_heads, c->d_model / c->n_heads)
                               : 0;
}

static long long cache_row(const struct kv_cache *c)
{
    return c ? prod(c->n_kv_heads, c->d_head) : 0;
}

static int cache_dh(const struct kv_cache *c)
{
    return c ? c->d_head : 0;
}

/* K's and V's floats, (n_kv_heads, capacity, d_head) */
static long long cache_floats(const struct kv_cache *c)
{
    return c ? prod(prod(c->n_kv_heads, c->capacity), c->d_head) : 0;
}

/* (The buffers' list ends with a 0 that is not sent, and the reply's
 * integers have one more place than they need: a function may have no
 * buffer and no reply, and C has no empty array.) */
#define KIT_EXERCISE(number, chapter, name, kind, ...)                         \
    KIT_PROXY_##kind(name, __VA_ARGS__)
#define KIT_REQUEST(number, chapter, name)
#define KIT_PROXY_SIMPLE(name, ...) KIT_PROXY(name, , __VA_ARGS__)
#define KIT_PROXY_THREADED(name, ...)                                          \
    KIT_PROXY(name, kit_max_threads(), __VA_ARGS__)
#define KIT_PROXY(name, thr, ...)                                              \
    int name(KIT_LIST(KIT_PARAM, __VA_ARGS__))                                 \
    {                                                                          \
        long long ints_[] = {KIT_EACH(KIT_INTS, __VA_ARGS__) thr};             \
        struct arg args_[] = {KIT_EACH(KIT_BUFS, __VA_ARGS__){0}};             \
        long long rep_[KIT_EACH(KIT_NREP, __VA_ARGS__) 1];                     \
        const int ret_ = (int)call(W_##name, ints_, NARGS(ints_), args_,       \
                                   NARGS(args_) - 1, rep_, NARGS(rep_) - 1);   \
        int nr_ = 0;                                                           \
        KIT_EACH(KIT_REPLY, __VA_ARGS__)                                       \
        (void)nr_;                                                             \
        return ret_;                                                           \
    }
#include "exercises.def"
#undef KIT_EXERCISE
#undef KIT_REQUEST
#undef KIT_PROXY_SIMPLE
#undef KIT_PROXY_THREADED
#undef KIT_PROXY

/* ---------------------------------------------------------------------
 * Chapter 8: the model. The given model (given/gpt.c) calls the student's
 * code thousands of times per training step; one request per call of
 * the model keeps a test to tens of round trips. The judge links
 * given/gpt.c with these six functions renamed kit_local_*
 * (tools/grade/prepare.sh): the rest of it (gpt_init, the optimiser, the
 * sampling, the checks) runs here, on the judge's copy of the model.
 * A call that reaches no student code (a NULL argument) stays here too.
 *
 * A request carries the model's sizes (integers 0-5), its state
 * (6-12: adam_t, B, T, the loss's bits, ablated, whether m->targets is
 * set, whether an ablation is; 31: whether m->x is), the ablation's
 * block and head (13, 14),
 * the thread count (15) and the call's own arguments (16 on:
 * gpt_train_step() sends *loss and *norm too, which stay as they were
 * when its forward pass fails); its
 * buffers are params, grads, adam_m, adam_v and act_block (0-4, sent
 * back), the tokens m->x holds (5, for gpt_backward() only), the call's x and targets (6, 7), the
 * ablation's mean (8), gpt_generate()'s out (9, sent back), and the
 * call's arrays of gpt_train_steps() (losses, norms: 10, 11) and
 * gpt_loss_probe() (index, value, losses: 10-12). The
 * reply's integers are the state after the call, where m->x and
 * m->targets point (worker.c), and gpt_train_step()'s loss and norm.
 * ------------------------------------------------------------------- */

int kit_local_gpt_forward(struct gpt_model *m, const int *x, const int *targets,
                          int B, int T_used);
int kit_local_gpt_backward(struct gpt_model *m);
int kit_local_gpt_train_step(struct gpt_model *m,
                             const struct gpt_train_config *tc, int step,
                             const int *x, const int *targets, int B,
                             int T_used, float *loss, float *norm);
int kit_local_gpt_generate(struct gpt_model *m, int *out, int n_prompt,
                           int n_new, float temperature, int top_k,
                           unsigned long long seed);
int kit_local_gpt_train_steps(struct gpt_model *m,
                              const struct gpt_train_config *tc, int first,
                              int n, const int *x, const int *targets, int B,
                              int T_used, float *losses, float *norms);
int kit_local_gpt_loss_probe(struct gpt_model *m, const int *x,
                             const int *targets, int B, int T_used, int g,
                             int n, const int *index, const float *value,
                             float *losses);

enum { G8_INTS = 32, G8_BUFS = 13, G8_REPLY = 11 };

/* The model's part of a request, from m. */
static void model_request(const struct gpt_model *m, long long *i,
                          struct arg *a)
{
    const struct gpt_config *c = &m->cfg;
    const struct gpt_ablation *ab = heads_ablation_of(m);
    const long long s[] = {c->V,
                           c->T,
                           c->C,
                           c->L,
                           c->n_heads,
                           c->B,
                           m->adam_t,
                           m->B,
                           m->T,
                           worker_bits(m->loss),
                           m->ablated,
                           m->targets != NULL,
                           ab != NULL,
                           ab ? ab->block : 0,
                           ab ? ab->head : 0,
                           kit_max_threads()};
    memcpy(i, s, sizeof s);
    a[0] = floats(m->params, m->n_params, 1);
    a[1] = floats(m->grads, m->n_params, 1);
    a[2] = floats(m->adam_m, m->n_params, 1);
    a[3] = floats(m->adam_v, m->n_params, 1);
    a[4] = floats(m->act_block, m->n_acts, 1);
    i[31] = m->x != NULL;
    a[8] = floats(ab ? ab->mean : NULL,
                  ab && c->n_heads > 0 ? c->C / c->n_heads : 0, 0);
}

/* m's state after the call, from the reply r; the pointers the call
 * may have set, from where the worker says they point (a reply that
 * points outside the call's buffers, or sizes the model does not have,
 * is garbled). */
static void model_reply(struct gpt_model *m, const long long *r,
                        const struct arg *a)
{
    const int B = (int)r[1], T = (int)r[2];
    if (B < 0 || B > m->cfg.B || T < 0 || T > m->cfg.T || (B > 0) != (T > 0))
        garbled();
    m->adam_t = (int)r[0], m->B = B, m->T = T, m->loss = worker_float(r[3]);
    m->ablated = (int)r[4];
    const size_t n = (size_t)B * T * sizeof(int);
    const int *x_at[] = {NULL, m->x, a[6].p, a[9].p};
    const size_t x_len[] = {0, a[5].bytes, a[6].bytes, a[9].bytes};
    if (r[5] < 0 || r[5] > 3 || r[6] < 0 ||
        (r[5] >= 2 && (size_t)r[6] * sizeof(int) + n > x_len[r[5]]))
        garbled();
    m->x = x_at[r[5]] ? x_at[r[5]] + (r[5] >= 2 ? r[6] : 0) : NULL;
    const int *t_at[] = {NULL, m->targets, a[7].p};
    if (r[7] < 0 || r[7] > 2 || r[8] < 0 ||
        (r[7] == 2 && (size_t)r[8] * sizeof(int) + n > a[7].bytes))
        garbled();
    m->targets = t_at[r[7]] ? t_at[r[7]] + (r[7] == 2 ? r[8] : 0) : NULL;
    gpt_point_acts(m);
}

static int model_call(uint32_t fn, struct gpt_model *m, long long *i,
                      struct arg *a, long long *r)
{
    model_request(m, i, a);
    int ret = (int)call(fn, i, G8_INTS, a, G8_BUFS, r, G8_REPLY);
    model_reply(m, r, a);
    return ret;
}

/* Whether a forward pass on x (B, T_used) reads x: with a NULL pointer or
 * sizes out of range, it returns before any student code runs, and is
 * made here (so that x is never read past the sizes the model allows). */
static int sizes_ok(const struct gpt_model *m, const int *x, int B, int T_used)
{
    return m && x && m->params && B > 0 && B <= m->cfg.B && T_used > 0 &&
           T_used <= m->cfg.T;
}

int gpt_forward(struct gpt_model *m, const int *x, const int *targets, int B,
                int T_used)
{
    if (!sizes_ok(m, x, B, T_used))
        return kit_local_gpt_forward(m, x, targets, B, T_used);
    long long i[G8_INTS] = {0}, r[G8_REPLY];
    struct arg a[G8_BUFS] = {{0}};
    i[16] = B, i[17] = T_used;
    a[6] = ints_arg(x, prod(B, T_used), 0);
    a[7] = ints_arg(targets, prod(B, T_used), 0);
    return model_call(W_gpt_forward, m, i, a, r);
}

int gpt_backward(struct gpt_model *m)
{
    if (!m || !m->params)
        return kit_local_gpt_backward(m);
    long long i[G8_INTS] = {0}, r[G8_REPLY];
    struct arg a[G8_BUFS] = {{0}};
    /* the one call that reads the tokens of the last forward pass */
    a[5] = ints_arg(m->x, prod(m->B, m->T), 0);
    return model_call(W_gpt_backward, m, i, a, r);
}

/* A training call's arguments: the batch (integers 16, 17, buffers 6,
 * 7), the first step (18) and tc (19-27). */
static void train_request(long long *i, struct arg *a,
                          const struct gpt_train_config *tc, int step,
                          const int *x, const int *targets, int B, int T_used)
{
    const long long t[] = {B,
                           T_used,
                           step,
                           worker_bits(tc->lr),
                           worker_bits(tc->lr_min),
                           tc->warmup,
                           tc->steps,
                           worker_bits(tc->beta1),
                           worker_bits(tc->beta2),
                           worker_bits(tc->eps),
                           worker_bits(tc->weight_decay),
                           worker_bits(tc->clip)};
    memcpy(i + 16, t, sizeof t);
    a[6] = ints_arg(x, prod(B, T_used), 0);
    a[7] = ints_arg(targets, prod(B, T_used), 0);
}

int gpt_train_step(struct gpt_model *m, const struct gpt_train_config *tc,
                   int step, const int *x, const int *targets, int B,
                   int T_used, float *loss, float *norm)
{
    if (!tc || !targets || !loss || !sizes_ok(m, x, B, T_used))
        return kit_local_gpt_train_step(m, tc, step, x, targets, B, T_used,
                                        loss, norm);
    long long i[G8_INTS] = {0}, r[G8_REPLY];
    struct arg a[G8_BUFS] = {{0}};
    train_request(i, a, tc, step, x, targets, B, T_used);
    i[28] = norm != NULL;
    i[29] = worker_bits(*loss), i[30] = norm ? worker_bits(*norm) : 0;
    const int ret = model_call(W_gpt_train_step, m, i, a, r);
    *loss = worker_float(r[9]);
    if (norm)
        *norm = worker_float(r[10]);
    return ret;
}

int gpt_generate(struct gpt_model *m, int *out, int n_prompt, int n_new,
                 float temperature, int top_k, unsigned long long seed)
{
    if (!m || !out || n_prompt <= 0 || n_new < 0 || !m->params)
        return kit_local_gpt_generate(m, out, n_prompt, n_new, temperature,
                                      top_k, seed);
    long long i[G8_INTS] = {0}, r[G8_REPLY];
    struct arg a[G8_BUFS] = {{0}};
    const long long t[] = {n_prompt, n_new, worker_bits(temperature), top_k,
                           (long long)seed};
    memcpy(i + 16, t, sizeof t);
    a[9] = ints_arg(out, (long long)n_prompt + n_new, 1);
    return model_call(W_gpt_generate, m, i, a, r);
}

int gpt_train_steps(struct gpt_model *m, const struct gpt_train_config *tc,
                    int first, int n, const int *x, const int *targets, int B,
                    int T_used, float *losses, float *norms)
{
    if (!losses || n <= 0 || !tc || !targets || !sizes_ok(m, x, B, T_used))
        return kit_local_gpt_train_steps(m, tc, first, n, x, targets, B, T_used,
                                         losses, norms);
    long long i[G8_INTS] = {0}, r[G8_REPLY];
    struct arg a[G8_BUFS] = {{0}};
    train_request(i, a, tc, first, x, targets, B, T_used);
    i[29] = n;
    a[10] = floats(losses, n, 1);
    a[11] = floats(norms, n, 1);
    return model_call(W_gpt_train_steps, m, i, a, r);
}

int gpt_loss_probe(struct gpt_model *m, const int *x, const int *targets, int B,
                   int T_used, int g, int n, const int *index,
                   const float *value, float *losses)
{
    if (!index || !value || !losses || n <= 0 || !sizes_ok(m, x, B, T_used))
        return kit_local_gpt_loss_probe(m, x, targets, B, T_used, g, n, index,
                                        value, losses);
    long long i[G8_INTS] = {0}, r[G8_REPLY];
    struct arg a[G8_BUFS] = {{0}};
    i[16] = B, i[17] = T_used, i[18] = g, i[19] = n;
    a[6] = ints_arg(x, prod(B, T_used), 0);
    a[7] = ints_arg(targets, prod(B, T_used), 0);
    a[10] = ints_arg(index, n, 0);
    a[11] = floats(value, n, 0);
    a[12] = floats(losses, n, 1);
    return model_call(W_gpt_loss_probe, m, i, a, r);
}

/* ---------------------------------------------------------------------
 * Chapter 5: the network of the experiment, one request per call, as
 * chapter 8's model (its tests' training and finite differences would
 * otherwise make thousands of round trips). The judge links
 * given/experiment.c with the six calls below renamed kit_local_*, and
 * given/exp_measure.c with exp_measure() weak (and unoptimised, so that
 * exp_run_one() calls it by name): the definition here wins.
 *
 * A request carries the layer (integer 0: chapter 3's or chapter 6's
 * grouped-query one), whether there is a model (1), its adam_t and
 * heads_off (2, 3) and which weights its layer last saw (4, 5: used and
 * d_used, worker_proto.h); the call's own integers from 6 (the
 * evaluation set's sizes 6-11 and whether there is one, 14; a float
 * argument's bits, 12; a count, 13). Its buffers: the config's bytes
 * (0), params, grads, adam_m, adam_v and the scratch block (1-5, sent
 * back), x (6), the call's outputs and arrays (7-15) and the evaluation
 * set's sequences (16, 17). The reply: the state after the call.
 * ------------------------------------------------------------------- */

int kit_local_exp_forward(struct exp_model *m, const int *x, double *loss_sum,
                          long *correct, long *counted);
int kit_local_exp_backward(struct exp_model *m, const int *x, float scale);
int kit_local_exp_train_step(struct exp_model *m, const int *x, int N, float lr,
                             float *loss);
int kit_local_exp_train(struct exp_model *m, float *losses);
int kit_local_exp_evaluate(struct exp_model *m, const int *x, int N,
                           struct exp_score *score);
int kit_local_exp_loss_probe(struct exp_model *m, const int *x, int n,
                             const int *index, const float *value,
                             double *losses);

enum { G5_INTS = 15, G5_BUFS = 18, G5_REPLY = 4 };

static int layer_id(const struct exp_config *c)
{
    return !c->layer ? 0 : c->layer == &exp_gqa_layer ? 1 : -1;
}

/* Whether m can go to the worker (a model of a layer it knows). */
static int exp_remote(const struct exp_model *m)
{
    return m && m->params && layer_id(&m->cfg) >= 0;
}

static struct arg bytes_of(void *p, size_t n, int out)
{
    struct arg a = {p, p ? n : 0, 0, out};
    return a;
}

static int exp_call(uint32_t fn, struct exp_model *m, long long *i,
                    struct arg *a)
{
    long long r[G5_REPLY] = {0};
    if (m) {
        const long long s[] = {
            layer_id(&m->cfg),
            1,
            m->adam_t,
            (long long)m->heads_off,
            worker_used_state(&m->used, m->W_q_used, m->W_o_used),
            worker_used_state(&m->d_used, m->d_W_q_used, m->d_W_o_used)};
        memcpy(i, s, sizeof s);
        a[0] = bytes_of(&m->cfg, sizeof m->cfg, 0);
        a[1] = floats(m->params, m->n_params, 1);
        a[2] = floats(m->grads, m->n_params, 1);
        a[3] = floats(m->adam_m, m->n_params, 1);
        a[4] = floats(m->adam_v, m->n_params, 1);
        a[5] = floats(m->X, m->n_scratch, 1);
    }
    const int ret = (int)call(fn, i, G5_INTS, a, G5_BUFS, r, G5_REPLY);
    if (m) {
        m->adam_t = (int)r[0], m->heads_off = (unsigned long long)r[1];
        worker_set_used((int)r[2], &m->used, &m->attn, m->W_q_used,
                        m->W_o_used);
        worker_set_used((int)r[3], &m->d_used, &m->d_attn, m->d_W_q_used,
                        m->d_W_o_used);
    }
    return ret;
}

int exp_forward(struct exp_model *m, const int *x, double *loss_sum,
                long *correct, long *counted)
{
    if (!exp_remote(m) || !x)
        return kit_local_exp_forward(m, x, loss_sum, correct, counted);
    long long i[G5_INTS] = {0};
    struct arg a[G5_BUFS] = {{0}};
    const size_t R = (size_t)m->n_relations;
    a[6] = ints_arg(x, m->cfg.T, 0);
    a[7] = bytes_of(loss_sum, sizeof *loss_sum, 1);
    a[8] = bytes_of(correct, R * sizeof *correct, 1);
    a[9] = bytes_of(counted, R * sizeof *counted, 1);
    return exp_call(W_exp_forward, m, i, a);
}

int exp_backward(struct exp_model *m, const int *x, float scale)
{
    if (!exp_remote(m) || !x)
        return kit_local_exp_backward(m, x, scale);
    long long i[G5_INTS] = {0};
    struct arg a[G5_BUFS] = {{0}};
    i[12] = worker_bits(scale);
    a[6] = ints_arg(x, m->cfg.T, 0);
    return exp_call(W_exp_backward, m, i, a);
}

int exp_train_step(struct exp_model *m, const int *x, int N, float lr,
                   float *loss)
{
    if (!exp_remote(m) || !x || !loss || N <= 0)
        return kit_local_exp_train_step(m, x, N, lr, loss);
    long long i[G5_INTS] = {0};
    struct arg a[G5_BUFS] = {{0}};
    i[12] = worker_bits(lr), i[13] = N;
    a[6] = ints_arg(x, prod(N, m->cfg.T), 0);
    a[10] = floats(loss, 1, 1);
    return exp_call(W_exp_train_step, m, i, a);
}

int exp_train(struct exp_model *m, float *losses)
{
    if (!exp_remote(m))
        return kit_local_exp_train(m, losses);
    long long i[G5_INTS] = {0};
    struct arg a[G5_BUFS] = {{0}};
    a[10] = floats(losses, m->cfg.steps, 1);
    return exp_call(W_exp_train, m, i, a);
}

int exp_evaluate(struct exp_model *m, const int *x, int N,
                 struct exp_score *score)
{
    if (!exp_remote(m) || !x || !score || N <= 0)
        return kit_local_exp_evaluate(m, x, N, score);
    long long i[G5_INTS] = {0};
    struct arg a[G5_BUFS] = {{0}};
    i[13] = N;
    a[6] = ints_arg(x, prod(N, m->cfg.T), 0);
    a[11] = bytes_of(score, sizeof *score, 1);
    return exp_call(W_exp_evaluate, m, i, a);
}

int exp_loss_probe(struct exp_model *m, const int *x, int n, const int *index,
                   const float *value, double *losses)
{
    if (!exp_remote(m) || !x || !index || !value || !losses || n <= 0)
        return kit_local_exp_loss_probe(m, x, n, index, value, losses);
    long long i[G5_INTS] = {0};
    struct arg a[G5_BUFS] = {{0}};
    i[13] = n;
    a[6] = ints_arg(x, m->cfg.T, 0);
    a[12] = ints_arg(index, n, 0);
    a[13] = floats(value, n, 0);
    a[14] = bytes_of(losses, (size_t)n * sizeof *losses, 1);
    return exp_call(W_exp_loss_probe, m, i, a);
}

/* (given/exp_measure.c's own is weak in the judge: no local call.) */
int exp_measure(struct exp_model *m, const struct exp_eval_set *e,
                struct exp_result *res)
{
    if (m && layer_id(&m->cfg) < 0) {
        kit_check(0, "proxy.c", __LINE__,
                  "exp_measure() on a network whose layer the grader's "
                  "worker does not know (chapter 3's and chapter 6's only)");
        fflush(stdout);
        _exit(0); /* no end record: the test fails */
    }
    long long i[G5_INTS] = {0};
    struct arg a[G5_BUFS] = {{0}};
    if (e) {
        const long long s[] = {e->T,       e->S,     e->n_eval,
                               e->n_probe, e->n_abl, e->shown};
        memcpy(i + 6, s, sizeof s);
        i[14] = 1;
        a[16] = ints_arg(e->eval, prod(e->n_eval, e->T), 0);
        a[17] = ints_arg(e->probe, prod(e->n_probe, e->T), 0);
    }
    a[15] = bytes_of(res, sizeof *res, 1);
    return exp_call(W_exp_measure, m, i, a);
}
