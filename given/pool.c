/*
 * pool.c: n jobs on worker processes (pool.h). Given code.
 *
 * The results live in memory every worker shares (an anonymous shared
 * mapping). The job numbers go down one pipe, to whichever worker reads
 * first; each finished number comes back up another, so the calling
 * process can report it as it happens.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */

#include "pool.h"
#include "kit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define POOL_MAX_WORKERS 64

/* A worker: take job numbers from `jobs` until it is empty, run each
 * into a private result, copy it into the shared one, and report the
 * number on `done`. The status is written last, so that a half-copied
 * result is never read as a finished one. */
static void worker(size_t size, unsigned char *results, int *status,
                   pool_job job, void *ctx, int jobs, int done)
{
    void *mine = malloc(size);
    int k;
    while (mine && read(jobs, &k, sizeof k) == (ssize_t)sizeof k) {
        memset(mine, 0, size);
        int s = job(k, mine, ctx);
        memcpy(results + (size_t)k * size, mine, size);
        status[k] = s;
        if (write(done, &k, sizeof k) != (ssize_t)sizeof k)
            break;
    }
    free(mine);
}

/* the first failure in job order, or KIT_OK */
static int first_failure(const int *status, int n)
{
    for (int k = 0; k < n; k++)
        if (status[k] != KIT_OK)
            return status[k];
    return KIT_OK;
}

int pool_run(int n, int workers, size_t size, void *results, int *status,
             pool_job job, pool_done done, void *ctx)
{
    if (!results || !job)
        return KIT_E_NULL;
    if (n <= 0 || size == 0)
        return KIT_E_SIZE;
    if (workers > n)
        workers = n;
    if (workers > POOL_MAX_WORKERS)
        workers = POOL_MAX_WORKERS;
    unsigned char *out = results;
    if (workers <= 1) {
        int first = KIT_OK;
        for (int k = 0; k < n; k++) {
            void *r = out + (size_t)k * size;
            memset(r, 0, size);
            int s = job(k, r, ctx);
            if (status)
                status[k] = s;
            if (done)
                done(k, s, r, ctx);
            if (first == KIT_OK)
                first = s;
        }
        return first;
    }
    size_t bytes = (size_t)n * size, sbytes = (size_t)n * sizeof(int);
    unsigned char *shared = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED)
        return KIT_E_NOMEM;
    int *sstatus = mmap(NULL, sbytes, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sstatus == MAP_FAILED) {
        munmap(shared, bytes);
        return KIT_E_NOMEM;
    }
    int jobs[2], fin[2], first = KIT_E_NOMEM;
    if (pipe(jobs) != 0)
        goto unmap;
    if (pipe(fin) != 0) {
        close(jobs[0]), close(jobs[1]);
        goto unmap;
    }
    for (int k = 0; k < n; k++) {
        sstatus[k] = POOL_E_WORKER; /* until a worker finishes it */
        if (write(jobs[1], &k, sizeof k) != (ssize_t)sizeof k)
            sstatus[k] = KIT_E_NOMEM;
    }
    close(jobs[1]); /* an empty queue now reads as the end */
    pid_t pid[POOL_MAX_WORKERS];
    int started = 0;
    for (int w = 0; w < workers; w++) {
        pid_t p = fork();
        if (p == 0) {
            close(fin[0]);
            worker(size, shared, sstatus, job, ctx, jobs[0], fin[1]);
            _exit(0);
        }
        if (p > 0)
            pid[started++] = p;
    }
    close(jobs[0]);
    close(fin[1]);
    if (started == 0) /* no process could start: do the work here */
        for (int k = 0; k < n; k++)
            if (sstatus[k] == POOL_E_WORKER)
                sstatus[k] = job(k, shared + (size_t)k * size, ctx);
    int k;
    while (read(fin[0], &k, sizeof k) == (ssize_t)sizeof k)
        if (done && k >= 0 && k < n)
            done(k, sstatus[k], shared + (size_t)k * size, ctx);
    close(fin[0]);
    for (int w = 0; w < started; w++)
        waitpid(pid[w], NULL, 0);
    memcpy(out, shared, bytes);
    if (status)
        memcpy(status, sstatus, sbytes);
    first = first_failure(sstatus, n);
unmap:
    munmap(sstatus, sbytes);
    munmap(shared, bytes);
    return first;
}
