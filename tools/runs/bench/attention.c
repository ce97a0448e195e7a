/*
 * bench/attention.c: time one configuration of chapter 7's benchmark
 * in a fresh process, so that its peak memory is its own.
 *
 *   usage: attention IMPL T THREADS REPS [WARMUP]
 *
 * WARMUP (1 by default) is the number of untimed calls before the timed
 * ones: 0 for chapter 3's form in bench.sh's alternating rounds, whose
 * one call takes seconds.
 *
 * IMPL is one of
 *   ch3_fused        mha_forward_fused() of chapter 3, causal (1 thread)
 *   flash            mha_forward_flash(), causal
 *   flash_noncausal  mha_forward_flash(), not causal: the masked tiles
 *                    computed too, to measure what skipping them saves
 *   flash_proj       the four projections of mha_forward_flash(): four
 *                    calls of matmul_fast(), (T, 512) x (512, 512)
 *   flash_att        the attention of mha_forward_flash(), causal: the 8
 *                    heads' flash_attention() calls, shared among
 *                    threads as mha_forward_flash() shares them, on
 *                    (T, 64) inputs uniform in [-1, 1] already split into
 *                    heads (the given regrouping is not timed)
 *   matmul_ch1, matmul_ikj, matmul_blocked, matmul_tiled, matmul_fast
 *                    C = A B with A (T, 512), B (512, 512): the shape of
 *                    one projection
 *   openblas         the same product by OpenBLAS's cblas_sgemm(), "what
 *                    a library gives", on THREADS threads; loaded at run
 *                    time (libopenblas.so.0), and exit status 3 with a
 *                    note when it is not installed
 *   peak             the machine's peak: THREADS threads each running
 *                    independent multiply-adds on vectors of 128, 256
 *                    and 512 bits (GCC vector types, fused into FMAs by
 *                    -ffp-contract=fast); one line per width, impl
 *                    peak128, peak256, peak512, T = 0. The fastest
 *                    width is the one the machine has.
 *   scratch          prints flash_scratch_size(T, d_head, FLASH_BQ,
 *                    FLASH_BK) in floats for the layer's d_head, and exits
 * The layer is d_model 512 with 8 heads, weights from
 * mha_weights_randomize(), X uniform in [-1, 1].
 *
 * Prints one CSV line: impl,T,threads,ms,gflops,peak_bytes,cpu_share
 * where ms is
 * the median of REPS timed calls after one untimed warm-up call,
 * threads the number of threads the code ran on (1 for code without
 * threads), gflops the useful work divided by the median time (for the
 * causal layer, only the unmasked half of the scores: see flops()),
 * and peak_bytes the growth of this process's peak resident memory
 * (VmHWM) from just before the first call, with inputs and outputs
 * allocated and touched, to the end: the memory the method itself
 * needs, chapter 3's (h, T, T) weights output included. cpu_share is
 * the CPU time the process got during the timed calls over their wall
 * time times the threads: near 1 when it had its cores to itself (idle
 * OpenMP threads wait spinning), lower when other programs took turns
 * on them, which a load average cannot say of the moment itself.
 */
#include "../runner.h" /* run_read_long() */
#include "attention.h"
#include "fast.h"
#include "mha.h"
#include "rng.h"

#include <dlfcn.h>
#include <stdio.h>
#include <sys/resource.h>
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

/* The CPU time this process has used so far, user and system, in ms. */
static double cpu_ms(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0)
        return 0;
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
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
    if (strncmp(impl, "matmul_", 7) == 0 || strcmp(impl, "openblas") == 0)
        return 2.0 * t * d * d;
    if (strcmp(impl, "flash_proj") == 0)
        return 8.0 * t * d * d;
    const double pairs =
        strcmp(impl, "flash_noncausal") == 0 ? t * t : t * (t + 1) / 2;
    if (strcmp(impl, "flash_att") == 0)
        return 4.0 * d * pairs;
    return 8.0 * t * d * d + 4.0 * d * pairs;
}

/* The peak: NACC independent chains acc = acc * b + c on vectors of
 * W bytes, iters times over, on every thread at once. Each chain waits
 * for its own previous result only, so with enough of them the
 * multiply-add units never wait; NACC = 10 covers 2 units with a
 * latency of 5 cycles and leaves registers for b and c. Returns the
 * sum of the lanes, which keeps the work from being optimised away. */
enum { PEAK_NACC = 10 };
#define PEAK_KERNEL(NAME, W)                                                   \
    static float NAME(long iters, float b0, float c0)                          \
    {                                                                          \
        typedef float vec __attribute__((vector_size(W)));                     \
        vec acc[PEAK_NACC], b = (vec){0} + b0, c = (vec){0} + c0;              \
        for (int a = 0; a < PEAK_NACC; a++)                                    \
            acc[a] = (vec){0} + (float)a;                                      \
        for (long it = 0; it < iters; it++)                                    \
            for (int a = 0; a < PEAK_NACC; a++)                                \
                acc[a] = acc[a] * b + c;                                       \
        float s = 0;                                                           \
        for (int a = 0; a < PEAK_NACC; a++)                                    \
            for (int l = 0; l < (int)(W / sizeof(float)); l++)                 \
                s += acc[a][l];                                                \
        return s;                                                              \
    }
PEAK_KERNEL(peak_16, 16)
PEAK_KERNEL(peak_32, 32)
PEAK_KERNEL(peak_64, 64)

/* b and c from a volatile, so that the compiler cannot fold the chains */
static volatile float peak_b = 0.999999f, peak_c = 1e-7f;

static void peak(int threads, int reps)
{
    float (*const kernels[])(long, float, float) = {peak_16, peak_32, peak_64};
    const long iters = 20000000; /* about 0.03 s at 128 bits */
    for (int w = 0; w < 3; w++) {
        const int bytes = 16 << w;
        const long n_it = iters / (bytes / 16); /* the same flops each */
        double best = 0;
        float sink = 0;
        for (int k = 0; k <= reps; k++) { /* k = 0: the warm-up */
            const double t0 = now_ms();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
            sink += kernels[w](n_it, peak_b, peak_c);
            const double ms = now_ms() - t0;
            if (k > 0 && (best == 0 || ms < best))
                best = ms;
        }
        const double flops = 2.0 * PEAK_NACC * (bytes / 4) * (double)n_it;
        /* the fastest run: the peak is what the machine can do */
        printf("peak%d,0,%d,%.3f,%.2f,0\n", bytes * 8, threads, best,
               threads * flops / (best * 1e6));
        if (sink == 12345.0f) /* never: uses the sums */
            printf("#\n");
    }
}

/* OpenBLAS's C interface, declared here (no header needed): row-major
 * (101), no transposes (111). */
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
static sgemm_fn blas_sgemm;

static int openblas_product(const float *A, const float *B, float *C, int m,
                            int n, int p)
{
    blas_sgemm(101, 111, 111, m, p, n, 1.0f, A, n, B, p, 0.0f, C, p);
    return KIT_OK;
}

/* Loads libopenblas.so.0 and sets its thread count; 0 when absent. A
 * symbol's address is copied into the function pointer with memcpy: ISO
 * C has no conversion from void * to a function pointer. */
static int openblas_load(int threads)
{
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW);
    void *f = lib ? dlsym(lib, "cblas_sgemm") : NULL;
    void *t = lib ? dlsym(lib, "openblas_set_num_threads") : NULL;
    if (!f)
        return 0;
    memcpy(&blas_sgemm, &f, sizeof f);
    if (t) {
        void (*set_threads)(int);
        memcpy(&set_threads, &t, sizeof t);
        set_threads(threads);
    }
    return 1;
}

static void fail(const char *what, int rc)
{
    fprintf(stderr, "bench: %s failed: %s\n", what, kit_strerror(rc));
    exit(1);
}

/* The two parts of mha_forward_flash(), timed on their own: P is a
 * (T, D_MODEL) buffer; H (3, N_HEADS, T, d_head) holds Q, K, V split
 * into heads, and out (N_HEADS, T, d_head); scratch one
 * flash_scratch_size() per thread. */
static int part_proj(const struct mha_weights *w, const float *X, float *P,
                     int T)
{
    const float *W[4] = {w->W_q, w->W_k, w->W_v, w->W_o};
    for (int k = 0; k < 4; k++) {
        const int rc = matmul_fast(X, W[k], P, T, D_MODEL, D_MODEL);
        if (rc != KIT_OK)
            return rc;
    }
    return KIT_OK;
}

static int part_att(const float *H, float *out, int T, float *scratch,
                    size_t per_thread)
{
    const int d_head = D_MODEL / N_HEADS;
    const size_t n = (size_t)T * D_MODEL;
    int bad = KIT_OK;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N_HEADS; i++) {
        const size_t off = (size_t)i * T * d_head;
        const int rc =
            flash_attention(H + off, H + n + off, H + 2 * n + off, out + off, T,
                            d_head, FLASH_BQ, FLASH_BK, 1,
                            scratch + (size_t)kit_thread_id() * per_thread);
        if (rc != KIT_OK) {
#pragma omp critical
            bad = rc;
        }
    }
    return bad;
}

/* The command line: IMPL T THREADS REPS [WARMUP]. */
struct args {
    const char *impl;
    int T, threads, reps, warmup;
};

/* The command line into *A; 0 when it is not one (the message printed) */
static int read_args(int argc, char **argv, struct args *a)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s IMPL T THREADS REPS [WARMUP]\n", argv[0]);
        return 0;
    }
    a->impl = argv[1];
    long t = -1, th = 0, rp = 0, wu = 1;
    const int whole = run_read_long(argv[2], &t) &&
                      run_read_long(argv[3], &th) &&
                      run_read_long(argv[4], &rp) &&
                      (argc != 6 || run_read_long(argv[5], &wu)) &&
                      t <= 1 << 20 && th <= 1024;
    a->T = (int)t, a->threads = (int)th, a->reps = (int)rp, a->warmup = (int)wu;
    if (!whole || a->T < (strcmp(a->impl, "peak") == 0 ? 0 : 1) ||
        a->threads <= 0 || a->reps <= 0 || a->reps > 100 || a->warmup < 0 ||
        a->warmup > 10) {
        fprintf(stderr, "bench: T, THREADS, REPS must be positive whole "
                        "numbers, REPS at most 100, WARMUP 0 to 10\n");
        return 0;
    }
    return 1;
}

/* The layer every IMPL but peak and scratch runs on: its weights, X and
 * out (T, d_model), and the random numbers that filled X. */
struct layer {
    struct mha_config cfg;
    struct mha_weights w;
    size_t n; /* T * d_model */
    float *X, *out;
    struct rng r;
};

static void layer_init(struct layer *l, const char *impl, int T)
{
    l->cfg =
        (struct mha_config){D_MODEL, N_HEADS, strcmp(impl, "flash_noncausal")};
    if (mha_weights_alloc(&l->w, &l->cfg) != KIT_OK ||
        mha_weights_randomize(&l->w, &l->cfg, 7) != KIT_OK)
        fail("weights", KIT_E_NOMEM);
    l->n = (size_t)T * D_MODEL;
    l->X = malloc(l->n * sizeof *l->X), l->out = malloc(l->n * sizeof *l->out);
    if (!l->X || !l->out)
        fail("malloc", KIT_E_NOMEM);
    rng_seed(&l->r, 11);
    rng_fill(&l->r, l->X, (int)l->n, -1.0f, 1.0f);
    memset(l->out, 0, l->n * sizeof *l->out);
}

typedef int (*product_fn)(const float *, const float *, float *, int, int, int);

/* The code IMPL names: a product (C = A B), or one of the layer's forms
 * or parts; and the threads it runs on. */
struct method {
    product_fn product;
    int fused, proj, att, flash;
    int used_threads;
};

/* The code IMPL names into *M: returns 0, or the exit status when it
 * cannot be run, the message printed: 2 when IMPL names no code, 3 when
 * it is openblas and OpenBLAS is not installed */
static int find_method(const char *impl, int threads, struct method *m)
{
    const struct {
        const char *name;
        product_fn f;
    } products[] = {{"matmul_ch1", matmul},
                    {"matmul_ikj", matmul_ikj},
                    {"matmul_blocked", matmul_blocked},
                    {"matmul_tiled", matmul_tiled},
                    {"matmul_fast", matmul_fast}};
    m->product = NULL;
    for (size_t k = 0; k < sizeof products / sizeof products[0]; k++)
        if (strcmp(impl, products[k].name) == 0)
            m->product = products[k].f;
    if (strcmp(impl, "openblas") == 0) {
        if (!openblas_load(threads)) {
            fprintf(stderr, "bench: OpenBLAS (libopenblas.so.0 with "
                            "cblas_sgemm) is not installed: no openblas "
                            "row\n");
            return 3;
        }
        m->product = openblas_product;
    }
    m->fused = strcmp(impl, "ch3_fused") == 0;
    m->proj = strcmp(impl, "flash_proj") == 0;
    m->att = strcmp(impl, "flash_att") == 0;
    m->flash =
        !m->proj && !m->att &&
        (strcmp(impl, "flash") == 0 || strcmp(impl, "flash_noncausal") == 0);
    if (!m->product && !m->fused && !m->flash && !m->proj && !m->att) {
        fprintf(stderr, "bench: unknown IMPL '%s'\n", impl);
        return 2;
    }
    m->used_threads = threads;
    if (m->fused || (m->product && m->product != matmul_fast &&
                     m->product != openblas_product))
        m->used_threads = 1;
    return 0;
}

/* What a call needs beyond the layer: chapter 3's (h, T, T) weights
 * output; flash_att's inputs H (3, h, T, d_head), uniform in [-1, 1]
 * from the layer's random numbers, and its scratch, PER_THREAD floats a
 * thread. */
struct extra {
    float *weights, *H, *scratch;
    size_t per_thread;
};

static void extra_alloc(struct extra *e, const struct method *m,
                        struct layer *l, int T)
{
    e->weights = NULL;
    if (m->fused) {
        e->weights = malloc((size_t)N_HEADS * T * T * sizeof *e->weights);
        if (!e->weights)
            fail("malloc", KIT_E_NOMEM);
    }
    e->H = NULL, e->scratch = NULL;
    e->per_thread =
        flash_scratch_size(T, D_MODEL / N_HEADS, FLASH_BQ, FLASH_BK);
    if (m->att) {
        e->H = malloc(3 * l->n * sizeof *e->H);
        e->scratch = malloc((size_t)kit_max_threads() * e->per_thread *
                            sizeof *e->scratch);
        if (!e->H || !e->scratch)
            fail("malloc", KIT_E_NOMEM);
        rng_fill(&l->r, e->H, (int)(3 * l->n), -1.0f, 1.0f);
    }
}

/* REPS timed calls of M after WARMUP untimed ones, each call's time in
 * ms into MS (REPS + WARMUP): returns the CPU time the process got
 * during the timed calls over their wall time times the threads M runs
 * on */
static double time_calls(const char *impl, const struct method *m,
                         struct layer *l, const struct extra *e, int T,
                         int reps, int warmup, double *ms)
{
    double cpu0 = 0, wall = 0;
    for (int k = 0; k < reps + warmup; k++) { /* k < warmup: untimed */
        if (k == warmup)
            cpu0 = cpu_ms();
        const double t0 = now_ms();
        int rc =
            m->product ? m->product(l->X, l->w.W_q, l->out, T, D_MODEL, D_MODEL)
            : m->fused
                ? mha_forward_fused(&l->cfg, &l->w, l->X, l->out, e->weights, T)
            : m->proj ? part_proj(&l->w, l->X, l->out, T)
            : m->att  ? part_att(e->H, l->out, T, e->scratch, e->per_thread)
                      : mha_forward_flash(&l->cfg, &l->w, l->X, l->out, T);
        if (rc != KIT_OK)
            fail(impl, rc);
        ms[k] = now_ms() - t0;
        if (k >= warmup)
            wall += ms[k];
    }
    return wall > 0 ? (cpu_ms() - cpu0) / (wall * m->used_threads) : 0;
}

/* the median of the N times MS, which it sorts */
static double median_of(double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    struct args a;
    if (!read_args(argc, argv, &a))
        return 2;
    const char *impl = a.impl;
    const int T = a.T;
    if (strcmp(impl, "scratch") == 0) {
        printf("%zu\n",
               flash_scratch_size(T, D_MODEL / N_HEADS, FLASH_BQ, FLASH_BK));
        return 0;
    }
#ifdef _OPENMP
    omp_set_num_threads(a.threads);
#endif
    if (strcmp(impl, "peak") == 0) {
        peak(a.threads, a.reps);
        return 0;
    }
    struct layer l;
    layer_init(&l, impl, T);
    struct method m;
    const int status = find_method(impl, a.threads, &m);
    if (status != 0)
        return status;

    const long long base = peak_rss();
    struct extra e;
    extra_alloc(&e, &m, &l, T);
    double *ms = malloc((size_t)(a.reps + a.warmup) * sizeof *ms);
    if (!ms)
        fail("malloc", KIT_E_NOMEM);
    const double share = time_calls(impl, &m, &l, &e, T, a.reps, a.warmup, ms);
    const long long peak = peak_rss() - base;
    const double median = median_of(ms + a.warmup, a.reps);
    printf("%s,%d,%d,%.3f,%.2f,%lld,%.2f\n", impl, T, m.used_threads, median,
           flops(impl, T) / (median * 1e6), peak > 0 ? peak : 0, share);
    free(ms), free(e.weights), free(e.H), free(e.scratch);
    free(l.X), free(l.out);
    mha_weights_free(&l.w);
    return 0;
}
