/*
 * plotdata/ch1.c: run chapter 1's reference code and write what the
 * book's figures and numbers show.
 *
 *   usage: ch1 OUTDIR
 *
 * Writes into OUTDIR:
 *   ch1_heatmap.dat   the example sentence's single-head weights (T, T),
 *                     as "row col weight" lines for gnuplot
 *   sentence_tics.gp  the token labels as gnuplot xtics/ytics commands
 *   ch1_scale.dat     the sqrt(d_k) measurement: d_k, score variance and
 *                     mean largest weight, without and with the scale
 *   ch1.values        key=value numbers quoted in chapter 1
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

/* The worked example of chapter 1 and its test (attention_by_hand). */
static void worked_example(FILE *values)
{
    const float Q[8] = {1, 1, 0, 0, 0, 0, 1, 1}; /* (2, 4) */
    const float K[8] = {1, 1, 0, 0, 0, 0, 1, 1}; /* (2, 4) */
    const float V[4] = {1, 0, 0, 1};             /* (2, 2) */
    float w[4], out[4];
    data_check("ch1", attention(Q, K, V, out, w, 2, 4, 2), "attention");
    fprintf(values, "ch1.example_w00=%.4f\nch1.example_w01=%.4f\n", w[0], w[1]);
    fprintf(values, "ch1.example_out0=[%.4f, %.4f]\n", out[0], out[1]);
}

/* The sentence's weights with the identity as every projection:
 * Q = K = V = X. Each token attends to the tokens whose features
 * resemble its own. */
static void sentence_heatmap(const char *dir, FILE *values)
{
    enum { T = SENTENCE_T, D = SENTENCE_D };
    float X[T * D], w[T * T], out[T * D];
    sentence_embedding(X);
    data_check("ch1", attention(X, X, X, out, w, T, D, D), "attention");

    data_write_map("ch1", dir, "ch1_heatmap.dat", w, T);
    /* the token labels, as gnuplot tic commands the figures load */
    data_write_tics("ch1", dir, "sentence_tics.gp", sentence_tokens, T, 45);

    /* the row of "street", the sentence's last token */
    const float *street = w + (T - 1) * T;
    int second = 0;
    for (int j = 1; j < T - 1; j++)
        if (street[j] > street[second])
            second = j;
    fprintf(values, "ch1.street_self=%.2f\n", street[T - 1]);
    fprintf(values, "ch1.street_second=%s\n", sentence_tokens[second]);
    fprintf(values, "ch1.street_second_w=%.2f\n", street[second]);
}

/* Why 1/sqrt(d_k): with q and k of independent unit-variance entries,
 * q . k has variance d_k, so unscaled scores spread out as d_k grows and
 * the softmax collapses onto one key. Measured over random draws. */
static void scale_measurement(const char *dir, FILE *values)
{
    enum { T = 16, TRIALS = 200, MAX_DK = 512 };
    static float Q[T * MAX_DK], K[T * MAX_DK], S[T * T];
    struct rng r;
    rng_seed(&r, 2017);
    FILE *f = data_open("ch1", dir, "ch1_scale.dat");
    fprintf(f, "# d_k var_unscaled var_scaled maxw_unscaled maxw_scaled\n");
    for (int d_k = 4; d_k <= MAX_DK; d_k *= 2) {
        double var[2] = {0, 0}, maxw[2] = {0, 0};
        for (int trial = 0; trial < TRIALS; trial++) {
            for (int i = 0; i < T * d_k; i++) {
                Q[i] = (float)rng_normal(&r);
                K[i] = (float)rng_normal(&r);
            }
            for (int scaled = 0; scaled < 2; scaled++) {
                data_check("ch1", matmul_bt(Q, K, S, T, d_k, T), "matmul_bt");
                float scale = scaled ? 1.0f / sqrtf((float)d_k) : 1.0f;
                for (int i = 0; i < T * T; i++) {
                    S[i] *= scale;
                    var[scaled] += (double)S[i] * S[i]; /* the mean is 0 */
                }
                data_check("ch1", softmax_rows(S, T, T), "softmax_rows");
                for (int i = 0; i < T; i++) {
                    float m = 0;
                    for (int j = 0; j < T; j++)
                        m = fmaxf(m, S[i * T + j]);
                    maxw[scaled] += m;
                }
            }
        }
        for (int s = 0; s < 2; s++) {
            var[s] /= (double)TRIALS * T * T;
            maxw[s] /= (double)TRIALS * T;
        }
        fprintf(f, "%d %.4f %.4f %.4f %.4f\n", d_k, var[0], var[1], maxw[0],
                maxw[1]);
        if (d_k == 64 || d_k == 512) {
            fprintf(values, "ch1.var_unscaled_%d=%.1f\n", d_k, var[0]);
            fprintf(values, "ch1.var_scaled_%d=%.2f\n", d_k, var[1]);
            fprintf(values, "ch1.maxw_unscaled_%d=%.2f\n", d_k, maxw[0]);
            fprintf(values, "ch1.maxw_scaled_%d=%.2f\n", d_k, maxw[1]);
        }
    }
    fprintf(values, "ch1.scale_keys=%d\nch1.scale_trials=%d\n", T, TRIALS);
    fprintf(values, "ch1.uniform_weight=%.4f\n", 1.0 / T);
    data_close("ch1", f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    FILE *values = data_open("ch1", argv[1], "ch1.values");
    worked_example(values);
    sentence_heatmap(argv[1], values);
    scale_measurement(argv[1], values);
    data_close("ch1", values);
    return 0;
}
