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
 * The tokens/s of the last line leave out the first step (a warm-up: the
 * first touch of every array) when there is more than one. With
 * LM_QUIET=1 in the environment only that line is printed.
 *
 * Dimension letters (see gpt.h): V = vocabulary, C = d_model, L = blocks,
 * T = context, B = sequences per batch, h = heads.
 */
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
    for (int i = 1; i < argc && i <= 7; i++)
        a[i - 1] = atoi(argv[i]);
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
    printf("%d steps in %.2f s: %.0f tokens/s; peak memory %.1f MB\n", timed,
           secs, (double)timed * c.B * c.T / secs, (double)ru.ru_maxrss / 1024);
    free(x);
    free(y);
    gpt_free(&m);
    if (status != KIT_OK)
        fprintf(stderr, "train: %s\n", kit_strerror(status));
    return status == KIT_OK ? 0 : 1;
}
