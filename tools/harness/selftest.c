/*
 * selftest.c: tests of the test runner itself, not a student chapter.
 *
 * Each test below misbehaves the way a student's code might. The check
 * tools/checks/05-harness.sh runs them and requires that every one is
 * reported as a failure with the right reason, and that the run goes on
 * to the end.
 */
/* The build also passes it on the command line, because the leak check's
 * forced include reads <stdlib.h> before this line. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "kit_test.h"

#include <signal.h>
#include <stdlib.h>

KIT_TEST(passes, "a test whose check holds")
{
    KIT_CHECK(1 + 1 == 2, "arithmetic is broken");
}

KIT_TEST(fails, "a test whose check does not hold")
{
    KIT_CHECK(0, "deliberate failure with a message");
}

KIT_TEST(segfaults, "a test that writes through a NULL pointer")
{
    volatile int *p = NULL;
    KIT_CHECK(1, "before the crash");
    *p = 1;
}

KIT_TEST(hangs, "a test that never returns")
{
    volatile unsigned long n = 0;
    KIT_CHECK(1, "before the loop");
    for (;;)
        n++;
}

KIT_TEST(aborts, "a test that calls abort()")
{
    KIT_CHECK(1, "before abort");
    abort();
}

KIT_TEST(exits_early, "a test whose code calls exit(0)")
{
    KIT_CHECK(1, "before exit");
    exit(0);
}

/* Compiled with the leak check forced in, as a student's file is: this
 * malloc goes through the counting wrapper. */
static int forgets_to_free(int n)
{
    float *scratch = malloc((size_t)n * sizeof *scratch);
    if (!scratch)
        return 0;
    scratch[0] = 1.0f;
    return (int)scratch[0]; /* and scratch is never freed */
}

KIT_TEST(leaks, "a test whose code never frees what it allocated")
{
    KIT_CHECK(forgets_to_free(8) == 1, "the call returned");
}

KIT_TEST(no_checks, "a test that checks nothing")
{
}

KIT_TEST(passes_after, "a test after the misbehaving ones still runs")
{
    KIT_CHECK(1, "never printed");
}

/* More tests than the runner's first 64 wrappers, so that every slot of
 * its wrapper table is proved to run the test it belongs to. */
#define P8                                                                     \
    &passes, &passes, &passes, &passes, &passes, &passes, &passes, &passes
static const struct kit_test *const many_tests[] = {P8, P8, P8, P8, P8,
                                                    P8, P8, P8, P8, NULL};
#undef P8
KIT_CHAPTER_AS(98, "Many tests", "tools/harness/selftest.c", many_tests)

static const struct kit_test *const harness_tests[] = {
    &passes,      &fails, &segfaults, &hangs,        &aborts,
    &exits_early, &leaks, &no_checks, &passes_after, NULL};
KIT_CHAPTER_AS(99, "The runner's self-test", "tools/harness/selftest.c",
               harness_tests)
