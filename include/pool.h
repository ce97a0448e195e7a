/*
 * pool.h: n jobs on worker processes. Given code: exp_run_many()
 * (experiment.h) trains chapter 5's networks with it, and the
 * experiments' runner (tools/runs/runner.h) runs any driver's jobs.
 *
 * Each job k fills its own result, results + k * size, from nothing but
 * k and the context, so what the jobs compute does not depend on how
 * many processes share them.
 */
#ifndef POOL_H
#define POOL_H

#include <stddef.h>

/* Job k: fill result (size bytes, zeroed before the call). Returns
 * KIT_OK or an error code. */
typedef int (*pool_job)(int k, void *result, void *ctx);

/* Called in the calling process as job k finishes, with its status. */
typedef void (*pool_done)(int k, int status, const void *result, void *ctx);

/* The status of a job whose worker process died (a crash in the code it
 * runs) before it finished. */
enum { POOL_E_WORKER = -50 };

/* Run jobs 0 .. n-1 on `workers` processes (fork; at most 64, at most n;
 * workers <= 1 runs them here, in order). results holds n results of
 * size bytes; status (n, or NULL) gets each job's status. done, if not
 * NULL, is called for each job that finishes, as it does. Returns
 * KIT_OK, KIT_E_NULL, KIT_E_SIZE, KIT_E_NOMEM, or the status of the
 * first job (in job order) that failed. */
int pool_run(int n, int workers, size_t size, void *results, int *status,
             pool_job job, pool_done done, void *ctx);

#endif
