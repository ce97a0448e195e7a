/*
 * plotdata/ch6.c: run chapter 6's reference code and write what the
 * book's figures, tables and numbers show.
 *
 *   usage: ch6 OUTDIR
 *
 * Writes into OUTDIR:
 *   ch6_memory.dat  context length, then the KV cache of one sequence in
 *                   GiB (16-bit numbers) for GPT-3 175B and Llama 2 70B
 *                   with every query head's own K/V head (MHA), 8 K/V
 *                   heads (GQA) and one (MQA): kv_cache_bytes()
 *   ch6_groups.dat  which K/V head each of 8 query heads reads with 8, 2
 *                   and 1 K/V heads, measured by running gqa_forward()
 *   ch6_cache_k.dat the K and V arrays of a cache (2 K/V heads, capacity
 *   ch6_cache_v.dat 8, d_head 4) after gqa_decode_step() has decoded 5
 *                   tokens, as "row col value" lines; unfilled rows NaN
 *   ch6_cache_labels.gp  that cache's len and capacity, for the figure
 *   ch6_models.md   a table: the cache per token and per sequence, and
 *                   how many sequences fit in 80 GiB
 *   ch6.values      key=value numbers quoted in chapter 6
 *
 * It also decodes a small layer token by token and stops with an error
 * unless every row equals the causal mha_forward(), and counts the
 * appends (projections) of decoding with the cache against re-running
 * the prefix at every step. The timing figure is tools/runs/bench/decode.sh's.
 *
 * Dimension letters: T = tokens, d_model = embedding width, h = query
 * heads, g = K/V heads, d_head = d_model / h.
 */
#include "attention.h"
#include "datafile.h"
#include "decode.h"
#include "../bench/decode_sizes.h"
#include "mha.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A published model: layers, query heads, K/V heads, d_head, context. */
struct model {
    const char *name;
    int layers, n_heads, n_kv, d_head, context;
    double params; /* parameters, for the weights' size */
};

static uint64_t bytes_of(int layers, int n_kv, int d_head, int context,
                         int batch)
{
    uint64_t b = 0;
    data_check("ch6",
               kv_cache_bytes(layers, n_kv, d_head, context, batch, 2, &b),
               "kv_cache_bytes");
    return b;
}

/* 1234567 -> "1,234,567" */
static const char *grouped(unsigned long long n, char *buf)
{
    char raw[32];
    int len = snprintf(raw, sizeof raw, "%llu", n), o = 0;
    for (int k = 0; k < len; k++) {
        if (k > 0 && (len - k) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[k];
    }
    buf[o] = '\0';
    return buf;
}

/* A size in bytes as "320 KiB", "1.25 GiB", ... */
static const char *human(double b, char *buf)
{
    const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4)
        b /= 1024, u++;
    snprintf(buf, 32, b >= 100 || b == floor(b) ? "%.0f %s" : "%.3g %s", b,
             unit[u]);
    return buf;
}

/* Decode a random layer token by token; every row must equal the causal
 * mha_forward(). Returns the appends the cache counted, and in *rerun the
 * appends of re-running the prefix at every step instead. */
static long decode_check(int T, long *rerun)
{
    enum { D = 16, H = 4 };
    struct mha_config cfg = {D, H, 1};
    struct mha_weights w;
    data_check("ch6", mha_weights_alloc(&w, &cfg), "mha_weights_alloc");
    data_check("ch6", mha_weights_randomize(&w, &cfg, 606),
               "mha_weights_randomize");
    float *X = malloc(sizeof(float) * T * D);
    float *full = malloc(sizeof(float) * T * D);
    float *dec = malloc(sizeof(float) * T * D);
    float *att = malloc(sizeof(float) * H * T * T);
    if (!X || !full || !dec || !att) {
        fprintf(stderr, "ch6: out of memory\n");
        exit(1);
    }
    struct rng r;
    rng_seed(&r, 607);
    rng_fill(&r, X, T * D, -1.0f, 1.0f);
    data_check("ch6", mha_forward(&cfg, &w, X, full, att, T), "mha_forward");
    struct kv_cache c;
    data_check("ch6", kv_cache_alloc(&c, T, H, D / H), "kv_cache_alloc");
    data_check("ch6", mha_decode(&cfg, &w, &c, X, dec, T), "mha_decode");
    for (int k = 0; k < T * D; k++)
        if (fabsf(dec[k] - full[k]) > 1e-5f) {
            fprintf(stderr,
                    "ch6: decoding disagrees with mha_forward at "
                    "row %d\n",
                    k / D);
            exit(1);
        }
    const long cached = c.appends;
    /* the mistake, on purpose: re-run the whole prefix for every token */
    for (int t = 0; t < T; t++) {
        kv_cache_reset(&c);
        data_check("ch6", mha_decode(&cfg, &w, &c, X, dec, t + 1),
                   "mha_decode");
    }
    *rerun = c.appends - cached;
    kv_cache_free(&c);
    mha_weights_free(&w);
    free(X), free(full), free(dec), free(att);
    return cached;
}

/* Which K/V head each query head reads, measured: with T = 1 every
 * weight is 1, so head i's output is the value of its K/V head. K/V head
 * j's value is j + 1 in every column, and W_o = I copies the heads into
 * out. out[i*d_head] - 1 is then the K/V head that query head i read. */
static void groups(FILE *f, int n_heads, int n_kv, int panel)
{
    const int d_head = 2, d = n_heads * d_head, d_kv = n_kv * d_head;
    struct gqa_config cfg = {d, n_heads, n_kv, 1};
    struct mha_weights w;
    data_check("ch6", gqa_weights_alloc(&w, &cfg), "gqa_weights_alloc");
    for (int c = 0; c < d_kv; c++)
        w.W_v[0 * d_kv + c] = (float)(c / d_head + 1); /* row 0 of W_v */
    for (int k = 0; k < d; k++)
        w.W_o[k * d + k] = 1.0f;
    float x[64] = {1.0f}, out[64], att[32]; /* x = e_0 */
    data_check("ch6", gqa_forward(&cfg, &w, x, out, att, 1), "gqa_forward");
    const int G = n_heads / n_kv;
    for (int i = 0; i < n_heads; i++) {
        int j = (int)lrintf(out[i * d_head]) - 1;
        /* panel, query head i at (i, 1), K/V head j under its group */
        fprintf(f, "%d %d %d %g\n", panel, i, j, (j + 0.5) * G - 0.5);
    }
    fprintf(f, "\n\n");
    mha_weights_free(&w);
}

/* A small GQA layer decodes CACHE_LEN tokens into a cache of capacity
 * CACHE_C; write its K and V as (n_kv * C, d_head) maps, NaN where no
 * position has been appended. */
enum { CACHE_H = 4, CACHE_G = 2, CACHE_DH = 4, CACHE_C = 8, CACHE_LEN = 5 };

static void write_cache(const char *dir, const struct kv_cache *c,
                        const float *A, const char *name)
{
    FILE *f = data_open("ch6", dir, name);
    for (int j = 0; j < c->n_kv_heads; j++)
        for (int p = 0; p < c->capacity; p++) {
            const int row = j * c->capacity + p;
            for (int d = 0; d < c->d_head; d++)
                fprintf(f, "%d %d %.5f\n", row, d,
                        p < c->len ? A[(size_t)row * c->d_head + d] : NAN);
            fprintf(f, "\n");
        }
    data_close("ch6", f);
}

static void cache_picture(const char *dir)
{
    const int d = CACHE_H * CACHE_DH;
    struct gqa_config cfg = {d, CACHE_H, CACHE_G, 1};
    struct mha_weights w;
    data_check("ch6", gqa_weights_alloc(&w, &cfg), "gqa_weights_alloc");
    data_check("ch6", gqa_weights_randomize(&w, &cfg, 608),
               "gqa_weights_randomize");
    struct kv_cache c;
    data_check("ch6", kv_cache_alloc(&c, CACHE_C, CACHE_G, CACHE_DH),
               "kv_cache_alloc");
    float x[CACHE_H * CACHE_DH], out[CACHE_H * CACHE_DH];
    struct rng r;
    rng_seed(&r, 609);
    for (int t = 0; t < CACHE_LEN; t++) {
        rng_fill(&r, x, d, -1.0f, 1.0f);
        data_check("ch6", gqa_decode_step(&cfg, &w, &c, x, out),
                   "gqa_decode_step");
    }
    write_cache(dir, &c, c.K, "ch6_cache_k.dat");
    write_cache(dir, &c, c.V, "ch6_cache_v.dat");
    /* the figure's words, from the cache itself */
    FILE *f = data_open("ch6", dir, "ch6_cache_labels.gp");
    fprintf(f,
            "cache_title = \"A KV cache after %d of %d positions: K (left) "
            "and V (right)\"\n",
            c.len, c.capacity);
    fprintf(f, "cache_free = \"free: len = %d\"\n", c.len);
    fprintf(f, "cache_rows = %d; cache_C = %d\n", c.n_kv_heads * c.capacity,
            c.capacity);
    data_close("ch6", f);
    kv_cache_free(&c);
    mha_weights_free(&w);
}

/* the two published models the chapter measures */
static const struct model gpt3 = {"GPT-3 175B", 96, 96, 96, 128, 2048, 175e9};
static const struct model llama = {"Llama 2 70B", 80, 64, 8, 128, 4096, 70e9};

/* DIR/ch6_memory.dat: the cache of one sequence against context length,
 * for both models with MHA, GQA (8 K/V heads) and MQA */
static void write_memory(const char *dir)
{
    FILE *f = data_open("ch6", dir, "ch6_memory.dat");
    fprintf(f, "# context  GPT-3: MHA(96) GQA(8) MQA(1)  Llama 2 70B: "
               "MHA(64) GQA(8) MQA(1)   GiB of 16-bit K and V, batch 1\n");
    for (int ctx = 128; ctx <= 131072; ctx *= 2) {
        fprintf(f, "%d", ctx);
        const struct model *m[2] = {&gpt3, &llama};
        for (int k = 0; k < 2; k++) {
            const int kv[3] = {m[k]->n_heads, 8, 1};
            for (int v = 0; v < 3; v++)
                fprintf(f, " %.6g",
                        bytes_of(m[k]->layers, kv[v], m[k]->d_head, ctx, 1) /
                            GIB);
        }
        fprintf(f, "\n");
    }
    data_close("ch6", f);
}

/* DIR/ch6_models.md: the table: per token, per sequence, sequences per
 * 80 GiB */
static void write_models(const char *dir)
{
    char b1[32], b2[32];
    FILE *f = data_open("ch6", dir, "ch6_models.md");
    fprintf(f, "| model | K/V heads | per token | per sequence | "
               "sequences in 80 GiB |\n");
    fprintf(f, "|---|--:|--:|--:|--:|\n");
    const struct {
        const struct model *m;
        int n_kv;
        const char *kind;
    } rows[] = {
        {&gpt3, 96, "MHA, as built"},
        {&gpt3, 8, "GQA"},
        {&gpt3, 1, "MQA"},
        {&llama, 64, "MHA"},
        {&llama, 8, "GQA, as built"},
        {&llama, 1, "MQA"},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        const struct model *m = rows[k].m;
        uint64_t tok = bytes_of(m->layers, rows[k].n_kv, m->d_head, 1, 1);
        uint64_t seq =
            bytes_of(m->layers, rows[k].n_kv, m->d_head, m->context, 1);
        fprintf(f, "| %s (%d tokens) | %d (%s) | %s | %s | %llu |\n", m->name,
                m->context, rows[k].n_kv, rows[k].kind, human(tok, b1),
                human(seq, b2), (unsigned long long)(80.0 * GIB / seq));
    }
    data_close("ch6", f);
}

/* DIR/ch6_groups.dat: who reads which K/V head: 8 query heads, 8, 2 and
 * 1 K/V heads */
static void write_groups(const char *dir)
{
    FILE *f = data_open("ch6", dir, "ch6_groups.dat");
    fprintf(f, "# panel query_head kv_head kv_x (measured by gqa_forward)\n");
    groups(f, 8, 8, 0);
    groups(f, 8, 2, 1);
    groups(f, 8, 1, 2);
    data_close("ch6", f);
}

/* DIR/ch6.values: the numbers the prose quotes: both models' caches and
 * weights, the drawn cache's sizes, and the decode check's T_CHECK
 * tokens, its appends with the cache (CACHED) and re-running the prefix
 * (RERUN) */
static void write_values(const char *dir, int T_check, long cached, long rerun)
{
    char b1[32], b2[32], b3[32];
    FILE *v = data_open("ch6", dir, "ch6.values");
    uint64_t g_tok = bytes_of(96, 96, 128, 1, 1);
    uint64_t g_seq = bytes_of(96, 96, 128, 2048, 1);
    uint64_t l_tok = bytes_of(80, 8, 128, 1, 1);
    uint64_t l_seq = bytes_of(80, 8, 128, 4096, 1);
    uint64_t l_mha = bytes_of(80, 64, 128, 4096, 1);
    uint64_t l_mqa = bytes_of(80, 1, 128, 4096, 1);
    uint64_t l_batch = bytes_of(80, 8, 128, 4096, 32);
    const double g_w = gpt3.params * 2, l_w = llama.params * 2;
    fprintf(v, "ch6.gpt3_token_bytes=%s\n", grouped(g_tok, b1));
    fprintf(v, "ch6.gpt3_token=%s\n", human(g_tok, b1));
    fprintf(v, "ch6.gpt3_seq=%s\n", human(g_seq, b1));
    fprintf(v, "ch6.gpt3_seq_bytes=%s\n", grouped(g_seq, b1));
    fprintf(v, "ch6.gpt3_weights=%s\n", human(g_w, b1));
    fprintf(v, "ch6.gpt3_seqs_eq_weights=%.0f\n", floor(g_w / g_seq));
    fprintf(v, "ch6.llama_token_bytes=%s\n", grouped(l_tok, b1));
    fprintf(v, "ch6.llama_token=%s\n", human(l_tok, b1));
    fprintf(v, "ch6.llama_seq=%s\n", human(l_seq, b1));
    fprintf(v, "ch6.llama_mha_seq=%s\n", human(l_mha, b1));
    fprintf(v, "ch6.llama_mqa_seq=%s\n", human(l_mqa, b1));
    fprintf(v, "ch6.llama_weights=%s\n", human(l_w, b1));
    fprintf(v, "ch6.llama_seqs_eq_weights=%.0f\n", floor(l_w / l_seq));
    fprintf(v, "ch6.llama_batch32=%s\n", human(l_batch, b1));
    fprintf(v, "ch6.llama_gqa_saving=%llu\n",
            (unsigned long long)(l_mha / l_seq));
    fprintf(v, "ch6.gpt3_128k=%s\n",
            human(bytes_of(96, 96, 128, 131072, 1), b1));
    fprintf(v, "ch6.llama_128k=%s\n",
            human(bytes_of(80, 8, 128, 131072, 1), b1));
    fprintf(v, "ch6.check_T=%d\n", T_check);
    fprintf(v, "ch6.cache_C=%d\nch6.cache_len=%d\n", CACHE_C, CACHE_LEN);
    fprintf(v, "ch6.cache_g=%d\nch6.cache_h=%d\nch6.cache_dh=%d\n", CACHE_G,
            CACHE_H, CACHE_DH);
    fprintf(v, "ch6.appends_cached=%s\n",
            grouped((unsigned long long)cached, b2));
    fprintf(v, "ch6.appends_rerun=%s\n",
            grouped((unsigned long long)rerun, b3));
    data_close("ch6", v);
}

/* DIR/ch6_bench.values: the decode benchmark's layer
 * (tools/runs/bench/decode_speed.c): its multiply-adds per decoded
 * token, which do not depend on the machine, unlike its timings.
 * Projections: W_q and W_o are (D, D) either way; W_k and W_v are (D, D)
 * with a K/V head per query head and (D, D/H) with one (MQA). Attention
 * over T cached positions: q.k and the weighted sum of the v's, D per
 * position each, the same for both, since every query head still reads
 * T keys and values. Counts, not times: the benchmark times the whole
 * step only. */
static void write_bench_values(const char *dir)
{
    enum { D = DECODE_BENCH_D, H = DECODE_BENCH_H };
    const long proj_mha = 4L * D * D, proj_mqa = 2L * D * D + 2L * D * (D / H);
    FILE *v = data_open("ch6", dir, "ch6_bench.values");
    fprintf(v, "ch6bench.d_model=%d\nch6bench.heads=%d\n", D, H);
    fprintf(v, "ch6bench.proj_mha=%ld\nch6bench.proj_mqa=%ld\n", proj_mha,
            proj_mqa);
    fprintf(v, "ch6bench.proj_mha_d2=%g\nch6bench.proj_mqa_d2=%g\n",
            (double)proj_mha / (D * D), (double)proj_mqa / (D * D));
    const int Tq[3] = {16, 64, 2048};
    for (int i = 0; i < 3; i++) {
        const long att = 2L * Tq[i] * D;
        fprintf(v, "ch6bench.att_T%d=%ld\n", Tq[i], att);
        fprintf(v, "ch6bench.ratio_T%d=%.2f\n", Tq[i],
                (double)(proj_mha + att) / (double)(proj_mqa + att));
    }
    data_close("ch6", v);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];

    /* 1. the cache of one sequence against context length */
    write_memory(dir);
    /* 2. the table: per token, per sequence, sequences per 80 GiB */
    write_models(dir);
    /* 3. who reads which K/V head, and a cache, drawn */
    write_groups(dir);
    cache_picture(dir);

    /* 4. decoding equals the layer; the cache saves projections */
    enum { T_CHECK = 64 };
    long rerun = 0, cached = decode_check(T_CHECK, &rerun);

    /* 5. the numbers the prose quotes */
    write_values(dir, T_CHECK, cached, rerun);
    /* 6. the decode benchmark's layer, counted */
    write_bench_values(dir);
    return 0;
}
