/*
 * kit_runner.h: how a program linked with the test runner (runner.c)
 * plugs into it without the runner naming it. The runner calls the
 * hooks registered here in each test's process; it knows nothing of
 * who registered them. The grader's side of its worker
 * (tools/harness/proxy.c) is one user: it registers from a constructor,
 * before main() runs.
 */
#ifndef KIT_RUNNER_H
#define KIT_RUNNER_H

struct kit_runner_hooks {
    /* In a test's process, before its body: the CPU seconds the runner
     * limited it to (setrlimit), or 0 when it set none (--no-fork, or
     * no CPU limit). Nonzero: the test's process exits, with status
     * 126, as when the runner's own setrlimit() fails. May be NULL. */
    int (*on_test_start)(unsigned long long cpu_seconds);
    /* In a test's process, after its body and the leak check, before
     * it reports its end to the runner. May be NULL. */
    void (*on_test_end)(void);
};

/* Register hooks (one set: a later call replaces it, NULL removes it).
 * *hooks must live as long as the run. Call it before the tests run
 * (from a constructor, say). */
void kit_runner_set_hooks(const struct kit_runner_hooks *hooks);

#endif
