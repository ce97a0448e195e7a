/*
 * train.c: chapter 8's model trained on a synthetic stream, to show the
 * speed of one training step (tokens per second) and its peak memory.
 * Not the book's run: the corpus comes from another part of the kit.
 *
 *   make lm-train                      the default size below
 *   make lm-train LM_ARGS="V C L T B h steps"
 *
 * The stream: each token is (5 * previous + 3) mod V, except that one in
 * ten is drawn uniformly, so a model that learns the rule gets a loss of
 * about 0.1 * log V + 0.33 (the noise cannot be predicted).
 *
 * The tokens/s of the "tokens/s" line leave out the first step (a
 * warm-up: the first touch of every array) when there is more than one.
 * The line after it counts the floating-point operations of one token's
 * step, from the shapes, so that tokens/s can be set against the
 * machine's peak (tools/runs/bench/lm.sh). With LM_QUIET=1 in the
 * environment only those two lines are printed.
 *
 * With LM_PARTS=1, one more line times the parts of a step on one
 * thread, in CPU time (parts()): the forward pass, the backward pass and
 * the update, and apart from them the readout's three products by
 * matmul_fast() (chapter 7's code), chunk by chunk as given/gpt.c runs
 * them, with their count of floating-point operations.
 * tools/runs/bench/lm.sh prints them beside the machine's peak.
 *
 * Dimension letters (see gpt.h): V = vocabulary, C = d_model, L = blocks,
 * T = context, B = sequences per batch, h = heads.
 */
#include "../runner.h" /* run_read_long() */
#include "fast.h"
#include "gpt.h"
#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Where one training step of m goes, timed on one thread (CPU time, the
 * fastest of 3 runs; x, y one batch): the forward pass (gpt_forward()),
 * the backward pass (gpt_zero_grad() and gpt_backward()) and the update
 * (gpt_clip_grads() and gpt_adamw_step()), all three as gpt_train_step()
 * runs them; then, apart, the readout's three products, matmul_fast()
 * on chunks of GPT's 256 rows, on random numbers (their time does not
 * depend on the values): logits (n, C) x (C, V), d_lnf (n, V) x (V, C),
 * d_W_te^T (C, n) x (n, V). They are in the two passes' times too.
 * Prints "parts: forward F ms; backward K ms; update U ms; readout
 * products R ms, G GFLOP". */
static int parts(struct gpt_model *m, const int *x, const int *y)
{
    const struct gpt_config *c = &m->cfg;
    const int C = c->C, V = c->V, N = c->B * c->T, rows = 256;
    const struct gpt_train_config tc = gpt_default_train(100);
    float *A = malloc((size_t)rows * C * sizeof *A);
    float *Z = malloc((size_t)rows * V * sizeof *Z);
    float *W = malloc((size_t)V * C * sizeof *W);
    float *P = malloc((size_t)C * V * sizeof *P);
    int status = A && Z && W && P ? KIT_OK : KIT_E_NOMEM;
    struct rng r;
    rng_seed(&r, 8);
    if (status == KIT_OK) {
        rng_fill(&r, A, rows * C, -1.0f, 1.0f);
        rng_fill(&r, W, V * C, -1.0f, 1.0f);
    }
    const int before = kit_max_threads();
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    double best[4] = {1e30, 1e30, 1e30, 1e30}, flops = 0;
    for (int rep = 0; rep < 3 && status == KIT_OK; rep++) {
        double t[5];
        t[0] = cpu_now();
        status = gpt_forward(m, x, y, c->B, c->T);
        t[1] = cpu_now();
        gpt_zero_grad(m);
        if (status == KIT_OK)
            status = gpt_backward(m);
        t[2] = cpu_now();
        gpt_clip_grads(m, tc.clip);
        gpt_adamw_step(m, &tc, gpt_lr_at(&tc, 50));
        t[3] = cpu_now();
        flops = 0;
        for (int r0 = 0; r0 < N && status == KIT_OK; r0 += rows) {
            const int n = N - r0 < rows ? N - r0 : rows;
            status = matmul_fast(A, W, Z, n, C, V); /* W as (C, V) */
            if (status == KIT_OK)
                status = matmul_fast(Z, W, A, n, V, C);
            if (status == KIT_OK)
                status = matmul_fast(A, Z, P, C, n, V); /* A as (C, n) */
            flops += 3.0 * 2.0 * n * C * V;
        }
        t[4] = cpu_now();
        for (int k = 0; k < 4; k++)
            best[k] = t[k + 1] - t[k] < best[k] ? t[k + 1] - t[k] : best[k];
    }
#ifdef _OPENMP
    omp_set_num_threads(before);
#else
    (void)before;
#endif
    if (status == KIT_OK)
        printf("parts: forward %.1f ms; backward %.1f ms; update %.1f ms; "
               "readout products %.1f ms, %.3f GFLOP\n",
               1e3 * best[0], 1e3 * best[1], 1e3 * best[2], 1e3 * best[3],
               flops / 1e9);
    free(A), free(Z), free(W), free(P);
    return status;
}

/* x, y (B, T): B windows of the stream, y one token ahead of x. */
static void make_batch(struct rng *r, int *x, int *y, int B, int T, int V)
{
    for (int b = 0; b < B; b++) {
        int tok = rng_int(r, V);
        for (int t = 0; t <= T; t++) {
            int next = rng_uniform(r) < 0.1 ? rng_int(r, V) : (5 * tok + 3) % V;
            if (t < T)
                x[b * T + t] = tok;
            if (t > 0)
                y[b * T + t - 1] = tok;
            tok = next;
        }
    }
}

int main(int argc, char **argv)
{
    /* V C L T B h steps: the chapter's sizes unless given */
    const struct gpt_config d = gpt_default_config();
    int a[7] = {d.V, d.C, d.L, d.T, d.B, d.n_heads, 20};
    for (int i = 1; i < argc && i <= 7; i++) {
        long v = 0;
        if (!run_read_long(argv[i], &v) || v < 1 || v > 1 << 24) {
            fprintf(stderr,
                    "train: LM_ARGS are whole numbers \"V C L T B h steps\", "
                    "each from 1 to %d, not '%s'\n",
                    1 << 24, argv[i]);
            return 2;
        }
        a[i - 1] = (int)v;
    }
    struct gpt_config c = {a[0], a[3], a[1], a[2], a[5], a[4]};
    const int steps = a[6];
    char why[160];
    if (gpt_check_config(&c, why, sizeof why) != KIT_OK) {
        fprintf(stderr, "train: %s\n", why);
        return 2;
    }
    struct gpt_model m;
    int status = gpt_init(&m, &c, 1);
    if (status != KIT_OK) {
        fprintf(stderr, "train: gpt_init: %s\n", kit_strerror(status));
        return 1;
    }
    const int quiet = getenv("LM_QUIET") && atoi(getenv("LM_QUIET"));
    if (!quiet)
        printf("V %d, C %d, L %d, T %d, B %d, %d heads: %d parameters\n", c.V,
               c.C, c.L, c.T, c.B, c.n_heads, m.n_params);
    int *x = malloc((size_t)c.B * c.T * sizeof *x);
    int *y = malloc((size_t)c.B * c.T * sizeof *y);
    if (!x || !y)
        return 1;
    struct rng r;
    rng_seed(&r, 2026);
    struct gpt_train_config tc = gpt_default_train(steps);
    double t0 = now(), last = t0;
    for (int step = 0; step < steps && status == KIT_OK; step++) {
        float loss = 0, norm = 0;
        make_batch(&r, x, y, c.B, c.T, c.V);
        status = gpt_train_step(&m, &tc, step, x, y, c.B, c.T, &loss, &norm);
        double t = now();
        if (step == 0 && steps > 1)
            t0 = t; /* time from the end of the warm-up step */
        if (!quiet)
            printf("step %4d  loss %.4f  norm %.3f  lr %.2e  %.0f tokens/s\n",
                   step, loss, norm, gpt_lr_at(&tc, step),
                   (double)c.B * c.T / (t - last));
        last = t;
    }
    const int timed = steps > 1 ? steps - 1 : steps;
    double secs = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%d step%s in %.2f s: %.0f tokens/s; peak memory %.1f MB\n", timed,
           timed == 1 ? "" : "s", secs, (double)timed * c.B * c.T / secs,
           (double)ru.ru_maxrss / 1024);
    /* the step's useful work: the forward pass's products, counted from
     * the shapes, times 3 (the backward pass does two products for each
     * of the forward's); attention over the causal keys only */
    const double fwd =
        2.0 * c.C * c.V + c.L * (2.0 * 4 * c.C * c.C + 2.0 * 2 * 4 * c.C * c.C +
                                 2.0 * 2 * c.C * (c.T + 1) / 2.0);
    printf("model flops: %.4f MFLOP per token (forward and backward)\n",
           3 * fwd / 1e6);
    const char *want = getenv("LM_PARTS");
    if (status == KIT_OK && want && atoi(want))
        status = parts(&m, x, y);
    free(x);
    free(y);
    gpt_free(&m);
    if (status != KIT_OK)
        fprintf(stderr, "train: %s\n", kit_strerror(status));
    return status == KIT_OK ? 0 : 1;
}
