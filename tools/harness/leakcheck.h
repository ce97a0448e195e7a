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

/* Forget every block: called before each test body. */
void kit_leak_reset(void);

/* Fail the running test (one kit_check) if a block is still allocated.
 * Returns the number of blocks leaked. */
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
/* Fail the running test with the leak message for info. */
void kit_leak_report(const char *context, const struct kit_leak_info *info);

#ifndef KIT_LEAKCHECK_NO_MACROS
#define malloc(n) kit_leak_malloc((n), __FILE__, __LINE__, __func__)
#define calloc(n, size)                                                        \
    kit_leak_calloc((n), (size), __FILE__, __LINE__, __func__)
#define realloc(p, n) kit_leak_realloc((p), (n), __FILE__, __LINE__, __func__)
#define free(p)       kit_leak_free(p)
#endif

#endif
