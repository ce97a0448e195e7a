/*
 * bench/attention.c: time one configuration of chapter 7's benchmark
 * in a fresh process, so that its peak memory is its own.
 *
 *   usage: attention IMPL T THREADS REPS
 *
 * IMPL is one of
 *   ch3_fused        mha_forward_fused() of chapter 3, causal (1 thread)
 *   flash            mha_forward_flash(), causal
 *   flash_noncausal  mha_forward_flash(), not causal: the masked tiles
 *                    computed too, to measure what skipping them saves
 *   matmul_ch1, matmul_ikj, matmul_blocked, matmul_tiled, matmul_fast
 *                    C = A B with A (T, 512), B (512, 512): the shape of
 *                    one projection
 *   scratch          prints flash_scratch_size(T, d_head, FLASH_BQ,
 *                    FLASH_BK) in floats for the layer's d_head, and exits
 * The layer is d_model 512 with 8 heads, weights from
 * mha_weights_randomize(), X uniform in [-1, 1].
 *
 * Prints one CSV line: impl,T,threads,ms,gflops,peak_bytes where ms is
 * the median of REPS timed calls after one untimed warm-up call,
 * threads the number of threads the code ran on (1 for code without
 * threads), gflops the useful work divided by the median time (for the
 * causal layer, only the unmasked half of the scores: see flops()),
 * and peak_bytes the growth of this process's peak resident memory
 * (VmHWM) from just before the first call, with inputs and outputs
 * allocated and touched, to the end: the memory the method itself
 * needs, chapter 3's (h, T, T) weights output included.
 */
#include "attention.h"
#include "fast.h"
#include "mha.h"
#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define D_MODEL 512
#define N_HEADS 8

/* The process's peak resident memory so far, in bytes (VmHWM). */
static long long peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Useful floating-point operations of one call. The layer: four
 * (T, d) x (d, d) products, 2 T d^2 each, and per head q . k and the
 * weighted sum of v over the keys each query may see: with the mask,
 * T (T + 1) / 2 pairs, each 2 d_head multiply-adds for the score and 2
 * d_head for the sum, over d / d_head heads. */
static double flops(const char *impl, int T)
{
    const double d = D_MODEL, t = T;
    if (strncmp(impl, "matmul_", 7) == 0)
        return 2.0 * t * d * d;
    const double pairs =
        strcmp(impl, "flash_noncausal") == 0 ? t * t : t * (t + 1) / 2;
    return 8.0 * t * d * d + 4.0 * d * pairs;
}

static void fail(const char *what, int rc)
{
    fprintf(stderr, "bench: %s failed: %s\n", what, kit_strerror(rc));
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s IMPL T THREADS REPS\n", argv[0]);
        return 2;
    }
    const char *impl = argv[1];
    const int T = atoi(argv[2]), threads = atoi(argv[3]), reps = atoi(argv[4]);
    if (T <= 0 || threads <= 0 || reps <= 0 || reps > 100) {
        fprintf(stderr, "bench: T, THREADS, REPS must be positive\n");
        return 2;
    }
    if (strcmp(impl, "scratch") == 0) {
        printf("%zu\n",
               flash_scratch_size(T, D_MODEL / N_HEADS, FLASH_BQ, FLASH_BK));
        return 0;
    }
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    struct mha_config cfg = {D_MODEL, N_HEADS, strcmp(impl, "flash_noncausal")};
    struct mha_weights w;
    if (mha_weights_alloc(&w, &cfg) != KIT_OK ||
        mha_weights_randomize(&w, &cfg, 7) != KIT_OK)
        fail("weights", KIT_E_NOMEM);
    const size_t n = (size_t)T * D_MODEL;
    float *X = malloc(n * sizeof *X), *out = malloc(n * sizeof *out);
    if (!X || !out)
        fail("malloc", KIT_E_NOMEM);
    struct rng r;
    rng_seed(&r, 11);
    rng_fill(&r, X, (int)n, -1.0f, 1.0f);
    memset(out, 0, n * sizeof *out);

    typedef int (*product_fn)(const float *, const float *, float *, int, int,
                              int);
    const struct {
        const char *name;
        product_fn f;
    } products[] = {{"matmul_ch1", matmul},
                    {"matmul_ikj", matmul_ikj},
                    {"matmul_blocked", matmul_blocked},
                    {"matmul_tiled", matmul_tiled},
                    {"matmul_fast", matmul_fast}};
    product_fn product = NULL;
    for (size_t k = 0; k < sizeof products / sizeof products[0]; k++)
        if (strcmp(impl, products[k].name) == 0)
            product = products[k].f;
    const int fused = strcmp(impl, "ch3_fused") == 0;
    const int flash = strncmp(impl, "flash", 5) == 0;
    if (!product && !fused && !flash) {
        fprintf(stderr, "bench: unknown IMPL '%s'\n", impl);
        return 2;
    }
    int used_threads = threads;
    if (fused || (product && product != matmul_fast))
        used_threads = 1;

    const long long base = peak_rss();
    float *weights = NULL; /* chapter 3's (h, T, T) output */
    if (fused) {
        weights = malloc((size_t)N_HEADS * T * T * sizeof *weights);
        if (!weights)
            fail("malloc", KIT_E_NOMEM);
    }
    double *ms = malloc((size_t)(reps + 1) * sizeof *ms);
    for (int k = 0; k <= reps; k++) { /* k = 0: the warm-up */
        const double t0 = now_ms();
        int rc = product ? product(X, w.W_q, out, T, D_MODEL, D_MODEL)
                 : fused ? mha_forward_fused(&cfg, &w, X, out, weights, T)
                         : mha_forward_flash(&cfg, &w, X, out, T);
        if (rc != KIT_OK)
            fail(impl, rc);
        ms[k] = now_ms() - t0;
    }
    const long long peak = peak_rss() - base;
    qsort(ms + 1, (size_t)reps, sizeof *ms, cmp_double);
    const double median =
        reps % 2 ? ms[1 + reps / 2] : (ms[reps / 2] + ms[1 + reps / 2]) / 2;
    printf("%s,%d,%d,%.3f,%.2f,%lld\n", impl, T, used_threads, median,
           flops(impl, T) / (median * 1e6), peak > 0 ? peak : 0);
    free(ms), free(weights), free(X), free(out);
    mha_weights_free(&w);
    return 0;
}
