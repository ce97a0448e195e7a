/*
 * bench/decode_speed.c: how fast one token is decoded, with the KV cache
 * and without it, against the context length. Run by
 * tools/runs/bench/decode.sh (and, with a short time budget, by make plots).
 *
 *   usage: decode_speed OUTDIR [seconds per measurement]
 *
 * For each context length T = 16, 32, ..., 2048, on one layer of chapter
 * 3 (d_model 64, 4 heads, random weights), it times the step that makes
 * token T-1 both ways:
 *   cached  mha_decode_step() with positions 0 .. T-2 already cached;
 *   full    mha_forward() of all T tokens, causal, of which the decoder
 *           would keep the last row: what a decoder without a cache
 *           must run for every token;
 *   mqa     gqa_decode_step() of the same sizes with one K/V head
 *           (multi-query attention), its cache 4 times smaller.
 * Each is timed in ROUNDS rounds, the two methods taking turns; a round
 * repeats its call until its share of the time budget is spent (at least
 * once), and the best round's repetitions / seconds is the rate. Both run on one thread, in this one
 * process, side by side. The two last rows must agree, or it stops.
 *
 * Prints a table and writes OUTDIR/ch6_speed.dat (T, cached tokens/s,
 * full tokens/s, their ratio, MQA cached tokens/s) and the figure's
 * title, OUTDIR/ch6_speed_labels.gp. The book quotes none of these
 * numbers (they differ on every run); it draws them, labelled as this
 * machine's. The multiply-adds per token of this layer, which the book
 * does quote, are counted by tools/runs/plotdata/ch6.c (decode_sizes.h
 * gives both the sizes).
 */
#define _POSIX_C_SOURCE 199309L
#include "../runner.h" /* run_read_double() */
#include "attention.h"
#include "datafile.h"
#include "decode_sizes.h"
#include "decode.h"
#include "mha.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { D = DECODE_BENCH_D, H = DECODE_BENCH_H, T_MAX = 2048, ROUNDS = 3 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The CPU's name from /proc/cpuinfo, or "unknown CPU". */
static void cpu_name(char *buf, size_t size)
{
    snprintf(buf, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!strncmp(line, "model name", 10) && colon) {
            colon += 2;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(buf, size, "%s", colon);
            for (char *q = buf; *q; q++) /* it goes inside "..." */
                if (*q == '"' || *q == '\\')
                    *q = '\'';
            break;
        }
    }
    fclose(f);
}

/* The two layers the benchmark times, and their buffers. */
struct layers {
    struct mha_config cfg; /* a K/V head per query head */
    struct mha_weights w;
    struct gqa_config mcfg; /* one K/V head: MQA */
    struct mha_weights wm;
    float *X;      /* (T_MAX, d_model): the tokens, random */
    float *out;    /* (T_MAX, d_model): the full forward's output */
    float *att;    /* (h, T_MAX, T_MAX): its weights */
    float *prefix; /* (T_MAX, d_model): the cached prefix's output */
};

/* Both layers with random weights, the tokens and the buffers; 0 if
 * memory runs out */
static int layers_init(struct layers *l)
{
    l->cfg = (struct mha_config){D, H, 1};
    data_check("decode_speed", mha_weights_alloc(&l->w, &l->cfg),
               "mha_weights_alloc");
    data_check("decode_speed", mha_weights_randomize(&l->w, &l->cfg, 6),
               "mha_weights_randomize");
    l->mcfg = (struct gqa_config){D, H, 1, 1};
    data_check("decode_speed", gqa_weights_alloc(&l->wm, &l->mcfg),
               "gqa_weights_alloc");
    data_check("decode_speed", gqa_weights_randomize(&l->wm, &l->mcfg, 8),
               "gqa_weights_randomize");
    l->X = malloc(sizeof(float) * T_MAX * D);
    l->out = malloc(sizeof(float) * T_MAX * D);
    l->att = malloc(sizeof(float) * H * T_MAX * T_MAX);
    l->prefix = malloc(sizeof(float) * T_MAX * D);
    if (!l->X || !l->out || !l->att || !l->prefix)
        return 0;
    struct rng r;
    rng_seed(&r, 7);
    rng_fill(&r, l->X, T_MAX * D, -1.0f, 1.0f);
    return 1;
}

static void layers_free(struct layers *l)
{
    mha_weights_free(&l->w);
    mha_weights_free(&l->wm);
    free(l->X), free(l->out), free(l->att), free(l->prefix);
}

/* tokens per second of the three ways to make token T-1 */
struct rates {
    double cached, full, mqa;
};

/* Time the step that makes token T-1, with the caches C (MHA) and CM
 * (MQA) holding positions 0 .. T-2, and the full forward: the best of
 * ROUNDS rounds, so that a busy moment of the machine does not count
 * against either, each round BUDGET / ROUNDS seconds per way. The cached
 * step's output into STEP_OUT (d_model), the forward's into l->out. */
static struct rates time_rounds(struct layers *l, struct kv_cache *c,
                                struct kv_cache *cm, int T, double budget,
                                float *step_out)
{
    float mqa_out[D];
    const float *x = l->X + (size_t)(T - 1) * D;
    double cached = 0, full = 0, mqa = 0;
    for (int round = 0; round < ROUNDS; round++) {
        long n = 0;
        double t0 = now(), t1;
        do {
            c->len = T - 1; /* forget the last step's token: redo it */
            data_check("decode_speed",
                       mha_decode_step(&l->cfg, &l->w, c, x, step_out),
                       "mha_decode_step");
            n++;
        } while ((t1 = now()) - t0 < budget / ROUNDS);
        cached = fmax(cached, (double)n / (t1 - t0));
        n = 0;
        t0 = now();
        do {
            cm->len = T - 1;
            data_check("decode_speed",
                       gqa_decode_step(&l->mcfg, &l->wm, cm, x, mqa_out),
                       "gqa_decode_step");
            n++;
        } while ((t1 = now()) - t0 < budget / ROUNDS);
        mqa = fmax(mqa, (double)n / (t1 - t0));
        n = 0;
        t0 = now();
        do {
            data_check("decode_speed",
                       mha_forward(&l->cfg, &l->w, l->X, l->out, l->att, T),
                       "mha_forward");
            n++;
        } while ((t1 = now()) - t0 < budget / ROUNDS);
        full = fmax(full, (double)n / (t1 - t0));
        if (t1 - t0 > budget)
            break; /* one full forward outlasts the budget: one round */
    }
    return (struct rates){cached, full, mqa};
}

/* Context length T: fill both caches with positions 0 .. T-2, time the
 * three ways, check that the cached step's row equals the forward's,
 * and print the row and write it into DAT; 0 if they disagree */
static int measure(struct layers *l, int T, double budget, FILE *dat)
{
    float step_out[D];
    struct kv_cache c;
    data_check("decode_speed", kv_cache_alloc(&c, T, H, D / H),
               "kv_cache_alloc");
    if (T > 1)
        data_check("decode_speed",
                   mha_decode(&l->cfg, &l->w, &c, l->X, l->prefix, T - 1),
                   "mha_decode");
    struct kv_cache cm; /* the MQA layer's cache: 1 head */
    data_check("decode_speed", kv_cache_alloc(&cm, T, 1, D / H),
               "kv_cache_alloc");
    for (int t = 0; t < T - 1; t++)
        data_check("decode_speed",
                   gqa_decode_step(&l->mcfg, &l->wm, &cm, l->X + (size_t)t * D,
                                   step_out),
                   "gqa_decode_step");
    const struct rates r = time_rounds(l, &c, &cm, T, budget, step_out);

    for (int k = 0; k < D; k++)
        if (fabsf(step_out[k] - l->out[(size_t)(T - 1) * D + k]) > 1e-4f) {
            fprintf(stderr,
                    "decode_speed: the cached step disagrees "
                    "with mha_forward at T %d\n",
                    T);
            return 0;
        }
    printf("%6d %16.0f %16.1f %10.0f %16.0f\n", T, r.cached, r.full,
           r.cached / r.full, r.mqa);
    fprintf(dat, "%d %.6g %.6g %.6g %.6g\n", T, r.cached, r.full,
            r.cached / r.full, r.mqa);
    kv_cache_free(&c);
    kv_cache_free(&cm);
    return 1;
}

/* DIR/ch6_speed_labels.gp: the figure's title: the sizes and this
 * machine (CPU), for the reader */
static void write_labels(const char *dir, const char *cpu)
{
    FILE *v = data_open("decode_speed", dir, "ch6_speed_labels.gp");
    fprintf(v,
            "speed_title = \"Decoding one token, with the KV cache and "
            "without\\nd_model %d, %d heads, 1 thread, %s\"\n",
            D, H, cpu);
    data_close("decode_speed", v);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s OUTDIR [seconds per measurement]\n",
                argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    double budget = 0.2;
    if (argc == 3 && !run_read_double(argv[2], &budget))
        budget = 0; /* not a number: refused below */
    if (!(budget > 0)) {
        fprintf(stderr, "decode_speed: the time budget must be > 0\n");
        return 2;
    }
    struct layers l;
    if (!layers_init(&l)) {
        fprintf(stderr, "decode_speed: out of memory\n");
        return 1;
    }

    char cpu[128];
    cpu_name(cpu, sizeof cpu);
    printf("decode speed, one layer: d_model %d, %d heads, 1 thread, "
           "%.2f s per measurement\n",
           D, H, budget);
    printf("machine: %s\n", cpu);
    printf("%6s %16s %16s %10s %16s\n", "T", "cached tok/s", "full tok/s",
           "ratio", "MQA cached");
    FILE *dat = data_open("decode_speed", dir, "ch6_speed.dat");
    fprintf(dat,
            "# T cached_tokens_per_s full_tokens_per_s ratio "
            "mqa_cached_tokens_per_s (d_model %d, %d heads, 1 thread)\n",
            D, H);
    for (int T = 16; T <= T_MAX; T *= 2)
        if (!measure(&l, T, budget, dat))
            return 1;
    data_close("decode_speed", dat);
    write_labels(dir, cpu);
    layers_free(&l);
    return 0;
}
