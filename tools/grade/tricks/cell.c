/* Prelude of the trick "cell": what code run by the race pass (the
 * ThreadSanitizer program, in one process with the tests, in kit_jail:
 * tools/harness/jail.c) might try, in system calls made in inline
 * assembly: asm.c's trick_sys(), which goes before this file. Planted at
 * the top of ch7_fast.c by tools/checks/75-grade.sh, with TRICK_KIT
 * replaced by the grader's copy of the kit (the autograder's source/, or
 * the kit itself for grade-all) and TRICK_SECRET by a file of mode 0600;
 * at the start of matmul_fast() it calls trick_cell(). Each attempt that works prints a line that the
 * check looks for. */
static void cell_say(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    trick_sys(1, 1, (long)s, (long)n);
}
static void trick_cell(void)
{
    static char buf[4096];
    static const char awk[] = "TRICK_KIT/tools/grade/compose.awk";
    static const char moved[] = "TRICK_KIT/tools/grade/compose.awk.moved";
    cell_say("\nTRICK-CELL-RAN\n");
    /* 1. Change the grader: append to its compose.awk (O_WRONLY |
     *    O_APPEND), create a file (O_WRONLY | O_CREAT | O_TRUNC), rename
     *    and remove one. */
    long fd = trick_sys(2, (long)awk, 01 | 02000, 0);
    if (fd >= 0 && trick_sys(1, fd, (long)"# TRICK\n", 8) == 8)
        cell_say("TRICK-WROTE-A-FILE compose.awk\n");
    fd = trick_sys(2, (long)"/tmp/trick-cell-file", 01 | 0100 | 01000, 0644);
    if (fd >= 0)
        cell_say("TRICK-WROTE-A-FILE /tmp\n");
    if (trick_sys(82, (long)awk, (long)moved, 0) == 0) /* rename */
        cell_say("TRICK-WROTE-A-FILE renamed\n");
    if (trick_sys(87, (long)"TRICK_KIT/tools/grade/build.sh", 0, 0) == 0)
        cell_say("TRICK-WROTE-A-FILE removed\n"); /* unlink */
    /* The judge's tables lie beside the race pass's own (descriptor 3):
     * append a forged row to chapter 7's. */
    static char dir[600];
    long len = trick_sys(89, (long)"/proc/self/fd/3", (long)dir, 512);
    while (len > 0 && dir[len - 1] != '/')
        len--; /* readlink, then its folder */
    if (len > 0) {
        const char *t = "results-judge-7.tsv";
        for (int k = 0; t[k]; k++)
            dir[len++] = t[k];
        dir[len] = '\0';
        fd = trick_sys(2, (long)dir, 01 | 02000, 0);
        if (fd >= 0 &&
            trick_sys(1, fd, (long)"7\tch7_fast.c\tTRICK\tpassed\n", 26) > 0)
            cell_say("TRICK-WROTE-A-FILE results\n");
    }
    /* 2. Read what only root may read: a file of mode 0600 and the
     *    environment of process 1. */
    const char *paths[] = {"TRICK_SECRET", "/proc/1/environ"};
    for (int k = 0; k < 2; k++) {
        fd = trick_sys(2, (long)paths[k], 0, 0);
        long n = fd >= 0 ? trick_sys(0, fd, (long)buf, sizeof buf) : -1;
        if (n > 0) {
            trick_sys(1, 1, (long)buf, n);
            cell_say("\nTRICK-READ-A-FILE\n");
        }
    }
    /* 3. Signal every process it may (-1), and process 1 (signal 0: the
     *    permission is checked, nothing is sent). */
    if (trick_sys(62, -1, 0, 0) == 0 || trick_sys(62, 1, 0, 0) == 0)
        cell_say("TRICK-SIGNALLED\n");
    /* 4. The network: a socket. */
    if (trick_sys(41, 2, 1, 0) >= 0) /* socket(AF_INET, SOCK_STREAM) */
        cell_say("TRICK-SOCKET\n");
    /* 5. A process that outlives the run: a new session, asleep. */
    if (trick_sys(57, 0, 0, 0) == 0) { /* fork */
        trick_sys(112, 0, 0, 0);       /* setsid */
        long ts[2] = {1000, 0};
        for (;;)
            trick_sys(35, (long)ts, 0, 0); /* nanosleep */
    }
}
