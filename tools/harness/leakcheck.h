/*
 * leakcheck.h: the kit's leak check, forced into every student file.
 *
 * The build compiles starter/ and solutions/ with
 * `-include tools/harness/leakcheck.h`, so each malloc, calloc, realloc
 * and free in them goes through a counting wrapper (leakcheck.c) that
 * remembers the function and the line that allocated each block. After
 * every test body the runner asks kit_leak_check() whether any block is
 * still allocated; if so, that test fails with a message naming the
 * function and the line whose memory was never freed. Memory that the
 * tests or the given code allocate is not counted.
 *
 * This file and leakcheck.c depend on nothing of the test library: the
 * runner (runner.c) registers where a leak is reported
 * (kit_leak_set_reporter()), and tests/kit_test.h declares the calls
 * below that the tests make.
 */
#ifndef KIT_LEAKCHECK_H
#define KIT_LEAKCHECK_H

#include <stdlib.h> /* first, so that the macros below do not rename it */

void *kit_leak_malloc(size_t n, const char *file, int line, const char *func);
void *kit_leak_calloc(size_t n, size_t size, const char *file, int line,
                      const char *func);
void *kit_leak_realloc(void *p, size_t n, const char *file, int line,
                       const char *func);
void kit_leak_free(void *p);

/* Where a leak is reported: fail(file, line, msg) fails the running
 * test with msg, for the line that allocated the block. Without one (the
 * plots and the experiment, which link the student's code without the
 * runner, and grading's worker) the wrappers only count, and
 * kit_leak_check() reports nothing. */
typedef void (*kit_leak_reporter)(const char *file, int line, const char *msg);
void kit_leak_set_reporter(kit_leak_reporter fail);

/* An allocation the system refused (one of the student's that returned
 * NULL without being made to fail): refused(size, how, file, line, func)
 * is called, so that the runner can fail the test naming its memory
 * limit (make test's MEM_LIMIT). Without one, nothing is said. */
typedef void (*kit_leak_refusal)(size_t size, const char *how, const char *file,
                                 int line, const char *func);
void kit_leak_set_refusal(kit_leak_refusal refused);

/* Forget every block: called before each test body. */
void kit_leak_reset(void);

/* Allocation failure on demand, and the counts (kit_test.h says more):
 * the n-th allocation from now fails (0 disarms); allocation calls since
 * the last reset; blocks still allocated (-1: too many to tell); where
 * the failed allocation was asked for (0 when none failed). */
void kit_leak_fail_nth(long n);
long kit_leak_allocations(void);
int kit_leak_live(void);
int kit_leak_failed_site(const char **file, int *line, const char **func);

/* Fail the running test (through the reporter) if a block is still
 * allocated. Returns the number of blocks leaked (0 without a
 * reporter). */
int kit_leak_check(void);

/* The same, at any moment, with context ("when its allocation 2 of 5
 * failed") in the message. */
int kit_leak_check_when(const char *context);

/* The oldest block still allocated, with the counts (for the grader's
 * worker, which sends it to the judging process): returns the number of
 * blocks, 0 when none is (or too many to tell), and then info is zeroed. */
struct kit_leak_info {
    int n_blocks, line;
    size_t size, total;
    char file[256], func[128], how[16];
};
int kit_leak_oldest(struct kit_leak_info *info);
/* Fail the running test with the leak message for info (through the
 * reporter; nothing without one). */
void kit_leak_report(const char *context, const struct kit_leak_info *info);

#ifndef KIT_LEAKCHECK_NO_MACROS
#define malloc(n) kit_leak_malloc((n), __FILE__, __LINE__, __func__)
#define calloc(n, size)                                                        \
    kit_leak_calloc((n), (size), __FILE__, __LINE__, __func__)
#define realloc(p, n) kit_leak_realloc((p), (n), __FILE__, __LINE__, __func__)
#define free(p)       kit_leak_free(p)
#endif

#endif
