/*
 * jail.c: kit_jail, the cell that grading's race pass runs in
 * (tools/grade/build.sh). ThreadSanitizer finds a data race only inside
 * the process whose threads race, so that pass cannot keep the student's
 * code out of the tests' process, as the judge does (proxy.c): it runs
 * the tests, the runner and the student's files in one program, built
 * under ThreadSanitizer. This program keeps what that program can do to
 * the machine small:
 *
 *   kit_jail [--keep-fd N]... -- PROGRAM [ARG...]
 *
 * - Its files: it cannot create, write, rename, remove or change the mode
 *   of any file. Opening with a flag that writes (O_WRONLY, O_RDWR,
 *   O_CREAT, O_TRUNC, O_APPEND) fails, and so do the calls that change a
 *   file's name, links, mode, owner, times or size. It writes only to the
 *   descriptors it was given: 0-2 and each --keep-fd (the results table
 *   and the sanitizer's log, opened by the caller), within a file size
 *   limit (ftruncate() on those, and on its own memory files, is
 *   allowed). Every other descriptor is closed before it starts.
 * - Who it is: started as root (Gradescope runs its grader as root), it
 *   runs as the user nobody, so that the kernel's own checks stop it from
 *   reading files only root may read (other processes' environments
 *   among them), from signalling the grader's processes, and from
 *   starting more processes than the limit. Where it cannot change user
 *   (inside bubblewrap, which grade-all runs it in, and which hides the
 *   rest), it stays as it was.
 * - Everything else a filter (seccomp) refuses: the network, other
 *   processes' memory (ptrace), new namespaces, mounts, the kernel's
 *   extension points (bpf, io_uring, modules), raising its priority, and
 *   signals to a process group or to every process (a negative pid; 0,
 *   its own group, which holds only the jail's processes, is allowed).
 * - Its environment: only PATH, LANG, LC_ALL, TSAN_OPTIONS and the OMP_
 *   and KIT_ variables are passed on.
 * - Its processes: every process it starts ends with it. This program is
 *   their subreaper: when PROGRAM ends, or when this program is told to
 *   stop (SIGTERM, from timeout), it kills every process still below it,
 *   however deep, and only then exits, with PROGRAM's status.
 *
 * What it allows (reading files every user may read, and running
 * programs, which inherit the same filter) is what ThreadSanitizer's
 * start and its symbolizer need. What the race pass writes is trusted
 * for one thing only: a test it reports failing fails (build.sh). A test
 * it reports passing, or does not report, keeps the judge's verdict.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY   65534
#define MAX_KEEP 8

static volatile sig_atomic_t told_to_stop;

static void on_stop(int sig)
{
    (void)sig;
    told_to_stop = 1;
}

static void die(const char *what)
{
    dprintf(2, "kit_jail: %s: %s\n", what, strerror(errno));
    _exit(126);
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *end;
    long x = v && *v ? strtol(v, &end, 10) : dflt;
    return v && *v && *end == '\0' && x > 0 ? x : dflt;
}

/* The filter: everything not refused here is allowed (the loader,
 * ThreadSanitizer, OpenMP and the symbolizer need a wide set of calls);
 * the refusals are what could change the machine or reach outside. */
static void filter(void)
{
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
    if (!f)
        die("seccomp_init");
    int r = 0;
    const uint32_t no = SCMP_ACT_ERRNO(EPERM);
    /* opening a file to write it, or to create it */
    static const int write_flags[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC,
                                      O_APPEND};
    for (size_t k = 0; k < sizeof write_flags / sizeof write_flags[0]; k++) {
        scmp_datum_t m = (scmp_datum_t)write_flags[k];
        r |= seccomp_rule_add(f, no, SCMP_SYS(open), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, m, m));
        r |= seccomp_rule_add(f, no, SCMP_SYS(openat), 1,
                              SCMP_A2(SCMP_CMP_MASKED_EQ, m, m));
    }
    /* openat2 takes its flags in memory, where a filter cannot look;
     * "not implemented" makes the C library use openat */
    r |= seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
    /* clone3 likewise (its flags could ask for a new namespace) */
    r |= seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    static const unsigned long new_ns[] = {
        CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
        CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};
    for (size_t k = 0; k < sizeof new_ns / sizeof new_ns[0]; k++)
        r |=
            seccomp_rule_add(f, no, SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, new_ns[k], new_ns[k]));
    /* a signal to a process group (negative pid, or -1: every process
     * it may signal) other than its own (0) */
    r |=
        seccomp_rule_add(f, no, SCMP_SYS(kill), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, 0x80000000u, 0x80000000u));
    /* the limits of another process, and raising one's priority */
    r |= seccomp_rule_add(f, no, SCMP_SYS(prlimit64), 1,
                          SCMP_A0(SCMP_CMP_NE, 0));
    static const int refused[] = {
        /* files: names, links, modes, owners, times, sizes */
        SCMP_SYS(creat), SCMP_SYS(rename), SCMP_SYS(renameat),
        SCMP_SYS(renameat2), SCMP_SYS(unlink), SCMP_SYS(unlinkat),
        SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink),
        SCMP_SYS(symlinkat), SCMP_SYS(mkdir), SCMP_SYS(mkdirat),
        SCMP_SYS(rmdir), SCMP_SYS(mknod), SCMP_SYS(mknodat), SCMP_SYS(chmod),
        SCMP_SYS(fchmod), SCMP_SYS(fchmodat), SCMP_SYS(chown), SCMP_SYS(fchown),
        SCMP_SYS(lchown), SCMP_SYS(fchownat), SCMP_SYS(truncate),
        SCMP_SYS(utime), SCMP_SYS(utimes), SCMP_SYS(utimensat),
        SCMP_SYS(futimesat), SCMP_SYS(setxattr), SCMP_SYS(lsetxattr),
        SCMP_SYS(fsetxattr), SCMP_SYS(removexattr), SCMP_SYS(lremovexattr),
        SCMP_SYS(fremovexattr), SCMP_SYS(name_to_handle_at),
        SCMP_SYS(open_by_handle_at),
        /* the network */
        SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect),
        SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(accept), SCMP_SYS(accept4),
        /* other processes */
        SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv),
        SCMP_SYS(process_vm_writev), SCMP_SYS(pidfd_getfd),
        SCMP_SYS(pidfd_send_signal), SCMP_SYS(kcmp),
        /* namespaces, mounts, the system */
        SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(mount), SCMP_SYS(umount2),
        SCMP_SYS(pivot_root), SCMP_SYS(chroot), SCMP_SYS(swapon),
        SCMP_SYS(swapoff), SCMP_SYS(reboot), SCMP_SYS(sethostname),
        SCMP_SYS(setdomainname), SCMP_SYS(settimeofday),
        SCMP_SYS(clock_settime), SCMP_SYS(clock_adjtime), SCMP_SYS(adjtimex),
        SCMP_SYS(acct), SCMP_SYS(quotactl), SCMP_SYS(syslog), SCMP_SYS(vhangup),
        SCMP_SYS(ioperm), SCMP_SYS(iopl), SCMP_SYS(init_module),
        SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(kexec_load),
        SCMP_SYS(kexec_file_load), SCMP_SYS(fsopen), SCMP_SYS(fsconfig),
        SCMP_SYS(fsmount), SCMP_SYS(fspick), SCMP_SYS(move_mount),
        SCMP_SYS(open_tree), SCMP_SYS(mount_setattr), SCMP_SYS(fanotify_init),
        /* the kernel's extension points */
        SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd),
        SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter),
        SCMP_SYS(io_uring_register), SCMP_SYS(keyctl), SCMP_SYS(add_key),
        SCMP_SYS(request_key), SCMP_SYS(lookup_dcookie),
        /* priority */
        SCMP_SYS(setpriority), SCMP_SYS(sched_setscheduler),
        SCMP_SYS(sched_setparam), SCMP_SYS(sched_setattr),
        SCMP_SYS(ioprio_set)};
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++)
        if (refused[k] >= 0) /* a call this machine's libseccomp knows */
            r |= seccomp_rule_add(f, no, refused[k], 0);
    if (r != 0)
        die("seccomp_rule_add");
    if (seccomp_load(f) != 0)
        die("seccomp_load");
    seccomp_release(f);
}

static void limits(void)
{
    struct {
        int what;
        rlim_t value;
    } lim[] = {
        {RLIMIT_FSIZE, (rlim_t)env_long("KIT_JAIL_FSIZE_MB", 64) << 20},
        {RLIMIT_CORE, 0},
        {RLIMIT_NPROC, (rlim_t)env_long("KIT_JAIL_NPROC", 256)},
        {RLIMIT_NOFILE, 256},
    };
    for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++) {
        struct rlimit rl = {lim[k].value, lim[k].value};
        if (setrlimit(lim[k].what, &rl) != 0)
            die("setrlimit");
    }
}

/* Root becomes nobody; a process that cannot change user (no
 * CAP_SETUID: inside bubblewrap) stays as it was. */
static void become_nobody(void)
{
    if (geteuid() != 0)
        return;
    if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0) {
        if (errno == EPERM || errno == EINVAL)
            return;
        die("setuid");
    }
    if (setuid(0) == 0) /* it must not be able to come back */
        die("setuid(0) succeeded after dropping root");
}

static void run_child(char **argv, const int *keep, int n_keep)
{
    /* its own process group: kill(0, ...) reaches only the jail */
    if (setpgid(0, 0) != 0)
        die("setpgid");
    for (int fd = 3; fd < 4096; fd++) {
        int kept = 0;
        for (int k = 0; k < n_keep; k++)
            kept |= keep[k] == fd;
        if (!kept)
            close(fd);
    }
    limits();
    become_nobody();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        die("no_new_privs");
    filter();
    /* Its environment: what the runner, OpenMP and the sanitizer read,
     * nothing of the grader's own (an instructor's tokens, say). */
    static char *env[64];
    int n = 0;
    static const char *const keep_env[] = {
        "PATH=", "LANG=", "LC_ALL=", "TSAN_OPTIONS=", "OMP_", "KIT_"};
    for (char **e = environ; *e && n < 63; e++)
        for (size_t k = 0; k < sizeof keep_env / sizeof keep_env[0]; k++)
            if (strncmp(*e, keep_env[k], strlen(keep_env[k])) == 0) {
                env[n++] = *e;
                break;
            }
    env[n] = NULL;
    execvpe(argv[0], argv, env);
    die(argv[0]);
}

/* Kills every process below this one (they are its children, or became
 * so when their parents died: it is their subreaper) and reaps them. */
static void kill_all_below(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    for (int round = 0; round < 10000; round++) {
        int any = 0;
        FILE *f = fopen(path, "r");
        int pid;
        if (f) {
            while (fscanf(f, "%d", &pid) == 1) {
                kill(pid, SIGKILL);
                any = 1;
            }
            fclose(f);
        }
        int st;
        pid_t w;
        while ((w = waitpid(-1, &st, WNOHANG)) > 0)
            any = 1;
        if (!any && w < 0 && errno == ECHILD)
            return;
        if (!any)
            usleep(1000);
    }
}

int main(int argc, char **argv)
{
    int keep[MAX_KEEP], n_keep = 0, a = 1;
    for (; a < argc && strcmp(argv[a], "--") != 0; a++) {
        if (strcmp(argv[a], "--keep-fd") == 0 && a + 1 < argc &&
            n_keep < MAX_KEEP) {
            char *end;
            long fd = strtol(argv[++a], &end, 10);
            if (*end || fd < 3 || fd > 255) {
                fprintf(stderr, "kit_jail: --keep-fd takes 3 to 255\n");
                return 2;
            }
            keep[n_keep++] = (int)fd;
        } else {
            fprintf(stderr, "usage: kit_jail [--keep-fd N]... -- PROGRAM "
                            "[ARG...]\n");
            return 2;
        }
    }
    if (a + 1 >= argc) {
        fprintf(stderr,
                "usage: kit_jail [--keep-fd N]... -- PROGRAM [ARG...]\n");
        return 2;
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        die("subreaper");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        run_child(argv + a + 1, keep, n_keep);
    }
    int status = 0;
    for (;;) {
        pid_t w = waitpid(child, &status, 0);
        if (w == child)
            break;
        if (w < 0 && errno == EINTR && told_to_stop) {
            kill(child, SIGKILL);
            told_to_stop = 0;
        } else if (w < 0 && errno != EINTR)
            die("waitpid");
    }
    /* First its process group at once (where the children file of
     * /proc cannot be read, that is all), then whatever left it. */
    kill(-child, SIGKILL);
    kill_all_below();
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
