/*
 * plotdata/ch2.c: run chapter 2's reference code and write what the
 * book's figure and numbers show.
 *
 *   usage: ch2 OUTDIR
 *
 * Writes into OUTDIR:
 *   ch2_full.dat     the example sentence's weights without a mask (T, T),
 *                    from attention(), as "row col weight" lines
 *   ch2_causal.dat   the same sentence's weights from causal_attention()
 *   ch2_cost.md      a table: the work of masking by -INFINITY against
 *                    masking by the loop bound, counted, for several T
 *   ch2.values       key=value numbers quoted in chapter 2
 *
 * The projection is chapter 1's (tools/runs/plotdata/ch1.c): the identity,
 * Q = K = V = X, so the two chapters' figures show the same head.
 *
 * It also holds causal_rows(), causal attention written row by row, which
 * masks either by -INFINITY or by the loop bound. It counts its work, and
 * this program stops with an error unless both ways give exactly the
 * numbers of the reference causal_attention().
 *
 * Dimension letters: T = tokens, d_k = query/key width, d_v = value width.
 */
#include "attention.h"
#include "datafile.h"
#include "rng.h"
#include "sentence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Two ways to hide the future, with their work counted
 * ------------------------------------------------------------------- */

struct cost {
    long long dots; /* q_i . k_j dot products, each d_k multiply-adds */
    long long exps; /* calls to expf()                                */
    long long macs; /* multiply-adds of weights times V               */
};

/* @listing causal_rows */
/* Causal attention one query row at a time (as llama2.c's run.c does).
 * bound = 0: visit every key and fill the future with -INFINITY, as
 *            causal_attention() does.
 * bound = 1: the mask is the loop bound j <= i; the future is never
 *            visited, and its weights are set to 0 at the end.
 * Q (T, d_k), K (T, d_k), V (T, d_v), out (T, d_v), weights (T, T). */
static void causal_rows(const float *Q, const float *K, const float *V,
                        float *out, float *weights, int T, int d_k, int d_v,
                        int bound, struct cost *cost)
{
    const float scale = 1.0f / sqrtf((float)d_k);
    for (int i = 0; i < T; i++) {
        const float *q_i = Q + i * d_k;
        float *w_i = weights + i * T;
        int last = bound ? i : T - 1; /* the last key row i visits */
        /* 1. scores and their maximum; the future is -INFINITY */
        float max = -INFINITY;
        for (int j = 0; j <= last; j++) {
            const float *k_j = K + j * d_k;
            float dot = 0.0f;
            for (int k = 0; k < d_k; k++)
                dot += q_i[k] * k_j[k];
            cost->dots++;
            w_i[j] = j > i ? -INFINITY : dot * scale;
            max = fmaxf(max, w_i[j]);
        }
        /* 2. exponentials and their sum */
        float sum = 0.0f;
        for (int j = 0; j <= last; j++) {
            w_i[j] = expf(w_i[j] - max);
            cost->exps++;
            sum += w_i[j];
        }
        /* 3. normalise; keys never visited get weight 0 */
        for (int j = 0; j <= last; j++)
            w_i[j] /= sum;
        for (int j = last + 1; j < T; j++)
            w_i[j] = 0.0f;
        /* 4. out row i: the weighted sum of the visited value rows */
        for (int c = 0; c < d_v; c++) {
            float acc = 0.0f;
            for (int j = 0; j <= last; j++) {
                acc += w_i[j] * V[j * d_v + c];
                cost->macs++;
            }
            out[i * d_v + c] = acc;
        }
    }
}
/* @end causal_rows */

/* Both ways on random inputs of one size: they must equal the reference
 * bit for bit. Returns the two costs. */
static void compare_costs(int T, int d_k, int d_v, struct cost *fill,
                          struct cost *bound)
{
    size_t nq = (size_t)T * d_k, nv = (size_t)T * d_v, nw = (size_t)T * T;
    float *Q = malloc(nq * sizeof *Q), *K = malloc(nq * sizeof *K);
    float *V = malloc(nv * sizeof *V);
    float *out[3], *w[3];
    for (int m = 0; m < 3; m++) {
        out[m] = malloc(nv * sizeof(float));
        w[m] = malloc(nw * sizeof(float));
    }
    if (!Q || !K || !V || !out[0] || !out[1] || !out[2] || !w[0] || !w[1] ||
        !w[2]) {
        fprintf(stderr, "ch2: out of memory\n");
        exit(1);
    }
    struct rng r;
    rng_seed(&r, 1000 + (unsigned long long)T);
    rng_fill(&r, Q, (int)nq, -2.0f, 2.0f);
    rng_fill(&r, K, (int)nq, -2.0f, 2.0f);
    rng_fill(&r, V, (int)nv, -1.0f, 1.0f);
    memset(fill, 0, sizeof *fill);
    memset(bound, 0, sizeof *bound);
    data_check("ch2", causal_attention(Q, K, V, out[0], w[0], T, d_k, d_v),
               "causal_attention");
    causal_rows(Q, K, V, out[1], w[1], T, d_k, d_v, 0, fill);
    causal_rows(Q, K, V, out[2], w[2], T, d_k, d_v, 1, bound);
    for (int m = 1; m < 3; m++)
        if (memcmp(out[0], out[m], nv * sizeof(float)) != 0 ||
            memcmp(w[0], w[m], nw * sizeof(float)) != 0) {
            fprintf(stderr,
                    "ch2: causal_rows(bound = %d) differs from "
                    "causal_attention() at T = %d\n",
                    m - 1, T);
            exit(1);
        }
    for (int m = 0; m < 3; m++)
        free(out[m]), free(w[m]);
    free(Q), free(K), free(V);
}

static void cost_table(const char *dir, FILE *values)
{
    enum { D_K = 16, D_V = 16 };
    static const int sizes[] = {SENTENCE_T, 128, 1024};
    FILE *f = data_open("ch2", dir, "ch2_cost.md");
    fprintf(f, "| $T$ | dot products, $-\\infty$ fill | dot products, "
               "loop bound | `expf` calls, fill | `expf` calls, bound | "
               "work saved |\n");
    fprintf(f, "|---:|---:|---:|---:|---:|---:|\n");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int T = sizes[s];
        struct cost fill, bound;
        compare_costs(T, D_K, D_V, &fill, &bound);
        double saved = 100.0 * (1.0 - (double)bound.dots / (double)fill.dots);
        fprintf(f, "| %d | %lld | %lld | %lld | %lld | %.2f %% |\n", T,
                fill.dots, bound.dots, fill.exps, bound.exps, saved);
        fprintf(values, "ch2.dots_fill_%d=%lld\n", T, fill.dots);
        fprintf(values, "ch2.dots_bound_%d=%lld\n", T, bound.dots);
        fprintf(values, "ch2.exps_fill_%d=%lld\n", T, fill.exps);
        fprintf(values, "ch2.exps_bound_%d=%lld\n", T, bound.exps);
        fprintf(values, "ch2.macs_fill_%d=%lld\n", T, fill.macs);
        fprintf(values, "ch2.macs_bound_%d=%lld\n", T, bound.macs);
        fprintf(values, "ch2.saved_pct_%d=%.2f\n", T, saved);
    }
    fprintf(values, "ch2.cost_dk=%d\n", D_K);
    data_close("ch2", f);
}

/* ---------------------------------------------------------------------
 * The example sentence, without and with the mask
 * ------------------------------------------------------------------- */

static void sentence_maps(const char *dir, FILE *values)
{
    enum { T = SENTENCE_T, D = SENTENCE_D };
    float X[T * D], full[T * T], causal[T * T], out[T * D];
    sentence_embedding(X);
    data_check("ch2", attention(X, X, X, out, full, T, D, D), "attention");
    data_check("ch2", causal_attention(X, X, X, out, causal, T, D, D),
               "causal_attention");
    data_write_map("ch2", dir, "ch2_full.dat", full, T);
    data_write_map("ch2", dir, "ch2_causal.dat", causal, T);

    /* how much weight the unmasked head gave to the future, per row and
     * on average: the mass the mask takes away and the softmax hands back
     * to the past */
    double mean_future = 0;
    for (int i = 0; i < T; i++) {
        double future = 0;
        for (int j = i + 1; j < T; j++)
            future += full[i * T + j];
        mean_future += future / T;
        if (i == 0)
            fprintf(values, "ch2.the_future_pct=%.0f\n", 100 * future);
    }
    fprintf(values, "ch2.mean_future_pct=%.0f\n", 100 * mean_future);

    /* "truck" (row 2): its weights on "The", "delivery", "truck" */
    for (int j = 0; j <= 2; j++)
        fprintf(values, "ch2.truck_%s_full=%.2f\nch2.truck_%s_causal=%.2f\n",
                sentence_tokens[j], full[2 * T + j], sentence_tokens[j],
                causal[2 * T + j]);
    /* renormalising keeps the ratios among the visible keys */
    fprintf(values, "ch2.truck_ratio_full=%.3f\nch2.truck_ratio_causal=%.3f\n",
            full[2 * T + 1] / full[2 * T + 2],
            causal[2 * T + 1] / causal[2 * T + 2]);

    /* "street" (the last row) has no future: its row does not change */
    int same = memcmp(full + (T - 1) * T, causal + (T - 1) * T,
                      T * sizeof(float)) == 0;
    fprintf(values, "ch2.street_row_same=%s\n", same ? "yes" : "no");
    fprintf(values, "ch2.street_narrow=%.2f\n", causal[(T - 1) * T + 8]);
    fprintf(values, "ch2.sentence_T=%d\n", T);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    FILE *values = data_open("ch2", argv[1], "ch2.values");
    sentence_maps(argv[1], values);
    cost_table(argv[1], values);
    data_close("ch2", values);
    return 0;
}
