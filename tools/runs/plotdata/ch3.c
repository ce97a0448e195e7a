/*
 * plotdata/ch3.c: run chapter 3's reference code and write what the
 * book's figures and numbers show.
 *
 *   usage: ch3 OUTDIR
 *
 * Writes into OUTDIR:
 *   ch3_single.dat        the single head's weights (T, T) over the example
 *                         sentence, as "row col weight" lines
 *   ch3_head0.dat .. 3    each of the 4 heads' weights, same format
 *   ch3_random_single.dat the same layer with random weights, 1 head,
 *   ch3_random_head0..3   and 4 heads (mha_weights_randomize, fixed seed)
 *   ch3_street.md         a table: the row of "street" in each head
 *   ch3_params.md         a table: parameter counts, h heads against one
 *   ch3_scores.md         a table: the single head's score of "street"
 *                         against a few keys, split into the four heads'
 *                         column blocks
 *   ch3_tics.gp           the token labels as gnuplot xtics/ytics commands
 *   ch3.values            key=value numbers quoted in chapter 3
 *
 * The 4 heads are built by hand (given/heads.c). The single head is
 * the SAME four matrices read with n_heads = 1: one head of width 16
 * whose score is the sum of the four relations' scores. Every map is
 * non-causal (causal = 0). The program stops with an error unless
 * mha_forward() and mha_forward_fused() agree.
 *
 * Dimension letters: T = tokens, d_model = embedding width,
 * h = heads, d_head = d_model / h.
 */
#include "attention.h"
#include "datafile.h"
#include "heads.h"
#include "mha.h"
#include "sentence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define T           SENTENCE_T
#define D           SENTENCE_D
#define RANDOM_SEED 2026ULL

/* Run the layer both ways; they must agree. weights (h, T, T). */
static void run(const struct mha_config *cfg, const struct mha_weights *w,
                const float *X, float *weights)
{
    float out[T * D], out_f[T * D], weights_f[D * T * T];
    data_check("ch3", mha_forward(cfg, w, X, out, weights, T), "mha_forward");
    data_check("ch3", mha_forward_fused(cfg, w, X, out_f, weights_f, T),
               "mha_forward_fused");
    for (int k = 0; k < T * D; k++)
        if (fabsf(out[k] - out_f[k]) > 1e-5f) {
            fprintf(stderr, "ch3: the fused form disagrees at %d\n", k);
            exit(1);
        }
}

/* Parameters of a layer: h heads of W_q^i, W_k^i, W_v^i (d_model,
 * d_head) each, and W_o (d_model, d_model). */
static long long mha_params(long long d_model, long long n_heads)
{
    long long d_head = d_model / n_heads;
    return n_heads * 3 * d_model * d_head + d_model * d_model;
}

/* 603979776 -> "603,979,776" */
static const char *grouped(long long n, char *buf)
{
    char raw[32];
    int len = snprintf(raw, sizeof raw, "%lld", n), o = 0;
    for (int k = 0; k < len; k++) {
        if (k > 0 && (len - k) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[k];
    }
    buf[o] = '\0';
    return buf;
}

/* the tokens of the row of "street" (the last token) the tables show */
enum { NARROW = 8, BLOCKED = 6, TRUCK = 2, DELIVERY = 1, STREET = 9 };

/* Every map: the single head's ATT1 (T, T) and the 4 heads' ATT4
 * (h, T, T), with hand-built weights and (ATT1R, ATT4R) random ones;
 * and the token labels */
static void write_maps(const char *dir, const float *att1, const float *att4,
                       const float *att1r, const float *att4r)
{
    char name[64];
    data_write_map("ch3", dir, "ch3_single.dat", att1, T);
    data_write_map("ch3", dir, "ch3_random_single.dat", att1r, T);
    for (int i = 0; i < HEADS_N; i++) {
        snprintf(name, sizeof name, "ch3_head%d.dat", i);
        data_write_map("ch3", dir, name, att4 + i * T * T, T);
        snprintf(name, sizeof name, "ch3_random_head%d.dat", i);
        data_write_map("ch3", dir, name, att4r + i * T * T, T);
    }

    data_write_tics("ch3", dir, "ch3_tics.gp", sentence_tokens, T, 60);
}

/* DIR/ch3_street.md: the row of "street": each relation's partner, in
 * its own head (ATT4, (h, T, T)) and in the single head (ATT1, (T, T)) */
static void write_street(const char *dir, const float *att4, const float *att1)
{
    const float *s1 = att1 + STREET * T;
    const struct {
        const char *lesson;
        int head, partner;
    } rel[] = {
        {"positional", 0, NARROW},
        {"adjectival", 1, NARROW},
        {"syntactic", 2, BLOCKED},
        {"semantic", 3, TRUCK},
    };
    FILE *md = data_open("ch3", dir, "ch3_street.md");
    /* short cells, so that the table keeps one line per row in print */
    fprintf(md, "| relation | head | key | in its head | in one head |\n");
    fprintf(md, "|---|---|---|--:|--:|\n");
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++) {
        const float *row = att4 + (rel[k].head * T + STREET) * T;
        fprintf(md, "| %s | %d: %s | \"%s\" | %.2f | %.2f |\n", rel[k].lesson,
                rel[k].head, heads_relation[rel[k].head],
                sentence_tokens[rel[k].partner], row[rel[k].partner],
                s1[rel[k].partner]);
    }
    fprintf(md, "| (itself) | | \"street\" | | %.2f |\n", s1[STREET]);
    data_close("ch3", md);
}

/* DIR/ch3_scores.md: why the single head picks what it picks: its score
 * is q_t . k_j over all 16 columns, the sum of the four blocks; the
 * hand-built weights W, the sentence X (T, d_model), the single head's
 * ATT1 (T, T) */
static void write_scores(const char *dir, const struct mha_weights *w,
                         const float *X, const float *att1)
{
    const float *s1 = att1 + STREET * T;
    float Q[T * D], K[T * D];
    data_check("ch3", matmul(X, w->W_q, Q, T, D, D), "matmul");
    data_check("ch3", matmul(X, w->W_k, K, T, D, D), "matmul");
    const int keys[] = {NARROW, BLOCKED, TRUCK, DELIVERY, STREET};
    FILE *md = data_open("ch3", dir, "ch3_scores.md");
    fprintf(md, "| key | head 0 | head 1 | head 2 | head 3 | sum / sqrt(16) "
                "| one head |\n");
    fprintf(md, "|---|--:|--:|--:|--:|--:|--:|\n");
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const int j = keys[k], dh = D / HEADS_N;
        float sum = 0;
        fprintf(md, "| \"%s\" |", sentence_tokens[j]);
        for (int i = 0; i < HEADS_N; i++) {
            float s = 0; /* q_street . k_j over head i's columns */
            for (int c = i * dh; c < (i + 1) * dh; c++)
                s += Q[STREET * D + c] * K[j * D + c];
            sum += s;
            fprintf(md, " %.1f |", s);
        }
        fprintf(md, " %.2f | %.2f |\n", sum / sqrtf((float)D), s1[j]);
    }
    data_close("ch3", md);
}

/* DIR/ch3_params.md: parameter counts: h heads cost what one wide head
 * costs */
static void write_params(const char *dir)
{
    char b1[32];
    FILE *md = data_open("ch3", dir, "ch3_params.md");
    fprintf(md, "| layer | d_model | heads | d_head | parameters |\n");
    fprintf(md, "|---|--:|--:|--:|--:|\n");
    const struct {
        const char *name;
        long long d_model, n_heads;
    } layers[] = {
        {"this chapter, one head", D, 1},
        {"this chapter, 4 heads", D, HEADS_N},
        {"this chapter, 16 heads", D, D},
        {"GPT-3 175B, one layer", 12288, 96},
        {"GPT-3 175B, if 1 head", 12288, 1},
    };
    for (size_t k = 0; k < sizeof layers / sizeof layers[0]; k++)
        fprintf(md, "| %s | %lld | %lld | %lld | %s |\n", layers[k].name,
                layers[k].d_model, layers[k].n_heads,
                layers[k].d_model / layers[k].n_heads,
                grouped(mha_params(layers[k].d_model, layers[k].n_heads), b1));
    data_close("ch3", md);
}

/* DIR/ch3.values: the numbers the prose quotes, from the hand-built
 * heads' ATT4 (h, T, T) and ATT1 (T, T) and the random heads' ATT4R */
static void write_values(const char *dir, const float *att4, const float *att1,
                         const float *att4r)
{
    char b1[32];
    const float *s1 = att1 + STREET * T;
    FILE *v = data_open("ch3", dir, "ch3.values");
    const float *h0 = att4 + (0 * T + STREET) * T;
    const float *h1 = att4 + (1 * T + STREET) * T;
    const float *h2 = att4 + (2 * T + STREET) * T;
    const float *h3 = att4 + (3 * T + STREET) * T;
    fprintf(v, "ch3.street_prev=%.2f\n", h0[NARROW]);
    fprintf(v, "ch3.street_narrow=%.2f\n", h1[NARROW]);
    fprintf(v, "ch3.street_blocked=%.2f\n", h2[BLOCKED]);
    fprintf(v, "ch3.street_truck=%.2f\n", h3[TRUCK]);
    fprintf(v, "ch3.street_delivery=%.2f\n", h3[DELIVERY]);
    fprintf(v, "ch3.single_street_narrow=%.2f\n", s1[NARROW]);
    fprintf(v, "ch3.single_street_blocked=%.2f\n", s1[BLOCKED]);
    fprintf(v, "ch3.single_street_truck=%.2f\n", s1[TRUCK]);
    fprintf(v, "ch3.single_street_delivery=%.2f\n", s1[DELIVERY]);
    fprintf(v, "ch3.single_street_self=%.2f\n", s1[STREET]);
    fprintf(v, "ch3.params_multi=%s\n", grouped(mha_params(D, HEADS_N), b1));
    fprintf(v, "ch3.params_single=%s\n", grouped(mha_params(D, 1), b1));
    fprintf(v, "ch3.params_head=%lld\n", 3LL * D * (D / HEADS_N));
    fprintf(v, "ch3.params_wo=%d\n", D * D);
    fprintf(v, "ch3.gpt3_params=%s\n", grouped(mha_params(12288, 96), b1));
    float lo = 1, hi = 0;
    for (int k = 0; k < HEADS_N * T * T; k++)
        lo = fminf(lo, att4r[k]), hi = fmaxf(hi, att4r[k]);
    fprintf(v, "ch3.random_min=%.3f\nch3.random_max=%.3f\n", lo, hi);
    fprintf(v, "ch3.random_seed=%llu\n", RANDOM_SEED);
    fprintf(v, "ch3.uniform=%.2f\n", 1.0 / T);
    data_close("ch3", v);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    float X[T * D];
    sentence_embedding(X);

    /* 1. the hand-built heads, read as 4 heads and as 1 head */
    struct mha_config multi = {D, HEADS_N, 0}, single = {D, 1, 0};
    struct mha_weights w;
    data_check("ch3", mha_weights_alloc(&w, &multi), "mha_weights_alloc");
    data_check("ch3", heads_build(&w), "heads_build");
    float att4[HEADS_N * T * T], att1[T * T];
    run(&multi, &w, X, att4);
    run(&single, &w, X, att1);

    /* 2. the same layer with random weights */
    struct mha_weights wr;
    data_check("ch3", mha_weights_alloc(&wr, &multi), "mha_weights_alloc");
    data_check("ch3", mha_weights_randomize(&wr, &multi, RANDOM_SEED),
               "mha_weights_randomize");
    float att4r[HEADS_N * T * T], att1r[T * T];
    run(&multi, &wr, X, att4r);
    run(&single, &wr, X, att1r);
    write_maps(dir, att1, att4, att1r, att4r);

    /* 3. the row of "street", and the single head's scores there */
    write_street(dir, att4, att1);
    write_scores(dir, &w, X, att1);
    /* 4. parameter counts */
    write_params(dir);
    /* 5. the numbers the prose quotes */
    write_values(dir, att4, att1, att4r);

    mha_weights_free(&w);
    mha_weights_free(&wr);
    return 0;
}
