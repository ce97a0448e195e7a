/*
 * ngram.h: chapter 8's baselines, the simplest language models of the
 * same tokens: unigram, bigram and trigram models with interpolated
 * Kneser-Ney smoothing, in Chen and Goodman's modified form (three
 * discounts per order). Given code (given/ngram.c): not an exercise.
 *
 * A network's loss means something only beside these. They are estimated
 * on the same training tokens the networks train on and scored on the
 * same windows (ngram_window_loss()), so that every predicted token
 * counts the same on both sides.
 *
 * Dimension letters: V = vocabulary size, n = tokens, N = windows, T =
 * tokens per window. An n-gram is written u v w: w the predicted token,
 * u v its context, v the nearest.
 *
 * The model of order 3 (interpolated, Chen and Goodman 1999, eq. 17-18):
 *
 *   P3(w | u v) = max(c(u v w) - D3(c(u v w)), 0) / c(u v .)
 *                 + gamma(u v) P2(w | v)
 *   gamma(u v)  = (D3_1 N1(u v .) + D3_2 N2(u v .) + D3_3 N3+(u v .))
 *                 / c(u v .)
 *
 * with c the count in the training tokens, c(u v .) the count of the
 * context followed by anything, N1, N2 and N3+ the number of distinct w
 * seen once, twice and three or more times after it, and D_k the
 * discount of a count k (k >= 3 shares D_3). A context never seen gives
 * its whole mass to the order below: P3(w | u v) = P2(w | v).
 *
 * The orders below the highest count differently: not how often v w
 * occurred, but after how many distinct tokens (its continuation count,
 * N1+(. v w)). A word that follows only one other word ("Francisco"
 * after "San") is then rare as a continuation however frequent it is.
 * The first token of the stream counts its start as one left context.
 * The lowest order interpolates with the uniform 1/V:
 *
 *   P1(w) = max(n(w) - D1(n(w)), 0) / sum n + gamma() / V
 *
 * with n(w) the raw count when order 1 is the model's highest, the
 * continuation count otherwise. Every P sums to 1 over the V tokens for
 * every context (tests/given/ngram.c checks it).
 *
 * The discounts of each order come from its counts of counts n_k (how
 * many n-grams of that order have count k, continuation counts for the
 * lower orders; Chen and Goodman eq. 26):
 *   Y = n_1 / (n_1 + 2 n_2),  D_1 = 1 - 2Y n_2/n_1,
 *   D_2 = 2 - 3Y n_3/n_2,     D_3 = 3 - 4Y n_4/n_3,
 * each clamped to [0, k]; where an n_k it needs is 0 (tiny corpora), the
 * order falls back to D_k = 0.75 for every k, and says so in
 * ngram_model.estimated.
 *
 * Errors: KIT_E_NULL, KIT_E_SIZE (an order outside 1..3, V < 1, fewer
 * tokens than the order, a token outside 0..V-1), KIT_E_NOMEM; why (may be
 * NULL) then holds one line saying which.
 */
#ifndef NGRAM_H
#define NGRAM_H

#include "kit.h"

#include <stddef.h>

#define NGRAM_MAX_ORDER 3

/* One order's table: its n-grams (sorted keys), their counts (raw for the
 * highest order, continuation counts below it), and per context (the
 * key without its last token, sorted) the total and N1, N2, N3+. */
struct ngram_table {
    long n;                  /* distinct n-grams          */
    unsigned long long *key; /* (n) tokens packed, sorted */
    int *count;              /* (n)                       */
    long n_ctx;              /* distinct contexts         */
    unsigned long long *ctx; /* (n_ctx) sorted            */
    long *ctx_total;         /* (n_ctx) sum of counts     */
    int *ctx_n[3];           /* (n_ctx) N1, N2, N3+       */
    float D[3];              /* the discounts of 1, 2, 3+ */
    int estimated;           /* 1: D from counts of counts; 0: the 0.75 */
};

struct ngram_model {
    int order, V;
    long n_train;                          /* training tokens */
    struct ngram_table t[NGRAM_MAX_ORDER]; /* t[k-1]: order k */
};

/* Estimate the model of the given order (1, 2 or 3) from the n tokens
 * (ids 0 .. V-1), read as one stream. With D not NULL, order k uses the
 * discounts D[3*(k-1) .. 3*(k-1)+2] (of counts 1, 2, 3+) instead of
 * estimating them (the tests' hand-worked cases). */
int ngram_fit(struct ngram_model *m, int order, int V, const int *tokens,
              long n, const float *D, char *why, size_t why_len);

/* P(w | the n_ctx tokens before it), ctx[n_ctx - 1] the nearest; only the
 * last order - 1 of them are read, and fewer when n_ctx is smaller (the
 * start of a window). A token outside 0 .. V-1: 0. */
double ngram_prob(const struct ngram_model *m, const int *ctx, int n_ctx,
                  int w);

/* The mean loss in nats over N windows of T inputs x (N, T) and targets y
 * (N, T): target y[n][t] is predicted from x[n][0 .. t] alone, as the
 * network sees it. */
int ngram_window_loss(const struct ngram_model *m, const int *x, const int *y,
                      int N, int T, double *loss);

void ngram_free(struct ngram_model *m);

#endif
