/*
 * heads.c: four attention heads built by hand for the example sentence
 * (heads.h). Given code, read in chapter 3.
 *
 * Each head fills its own column block of the fused W_q and W_k
 * (d_model = 16 rows, columns off .. off+3). A head's score is
 *   q_t . k_j = sum over its 4 columns c of (x_t W_q)[c] (x_j W_k)[c],
 * so one column pairs a feature of the query token (a row of W_q) with
 * a feature of the key token (a row of W_k). The gains (6 and 8) make
 * the softmax sharp after the 1/sqrt(d_head) = 1/2 scale.
 *
 * Dimension letters: d_model = embedding width (16), d_head = 4.
 */
#include "heads.h"
#include "sentence.h"

#include <math.h>
#include <string.h>

#define D SENTENCE_D

const char *const heads_relation[HEADS_N] = {
    "previous token", "noun to its adjective", "object to its verb",
    "traffic (semantic)"};

/* Pair query feature fq with key feature fk, with weight g, in column
 * col: that column adds g * x_t[fq] * x_j[fk] to the score. */
static void pair(float *W_q, float *W_k, int col, int fq, int fk, float g)
{
    W_q[fq * D + col] += g;
    W_k[fk * D + col] += 1.0f;
}

/* @listing head_previous */
/* Head 0: the previous token. Position pair f holds (cos t w, sin t w).
 * W_q turns it back by one step, to (cos (t-1)w, sin (t-1)w); W_k
 * copies it. Then q_t . k_j = g (cos (t-1-j)w_0 + cos (t-1-j)w_1), which
 * is largest at j = t - 1. Two frequencies, w = 1 and 0.5, fill the
 * head's 4 columns. */
static void head_previous(float *W_q, float *W_k, int off, float g)
{
    for (int p = 0; p < 2; p++) {
        const float w = (float)sentence_pos_freq(p);
        const int fc = FEAT_POS + 2 * p, fs = fc + 1; /* cos, sin rows */
        const int c0 = off + 2 * p, c1 = c0 + 1;
        /* cos((t-1)w) = cos(tw) cos(w) + sin(tw) sin(w) */
        W_q[fc * D + c0] = g * cosf(w), W_q[fs * D + c0] = g * sinf(w);
        /* sin((t-1)w) = sin(tw) cos(w) - cos(tw) sin(w) */
        W_q[fc * D + c1] = -g * sinf(w), W_q[fs * D + c1] = g * cosf(w);
        W_k[fc * D + c0] = 1.0f, W_k[fs * D + c1] = 1.0f;
    }
}
/* @end head_previous */

/* @listing head_adjective */
/* Head 1: a noun looks for the adjective in its own phrase.
 * Column 0: a NOUN query meets an ADJ key. Columns 1 and 2: a token of
 * the subject phrase meets the subject phrase, the object phrase the
 * object phrase. Only the adjective of the same phrase scores on both:
 * "street" -> "narrow", "truck" -> "delivery". */
static void head_adjective(float *W_q, float *W_k, int off, float g)
{
    pair(W_q, W_k, off + 0, FEAT_NOUN, FEAT_ADJ, g);
    pair(W_q, W_k, off + 1, FEAT_SUBJ, FEAT_SUBJ, g);
    pair(W_q, W_k, off + 2, FEAT_OBJ, FEAT_OBJ, g);
}
/* @end head_adjective */

/* @listing head_verb */
/* Head 2: the object phrase looks for its verb. A query in the object
 * phrase meets a key that is a VERB and not a FUNCtion word: "blocked"
 * scores 1, the auxiliary "was" 1 - 1 = 0. */
static void head_verb(float *W_q, float *W_k, int off, float g)
{
    pair(W_q, W_k, off, FEAT_OBJ, FEAT_VERB, g);
    W_k[FEAT_FUNC * D + off] = -1.0f;
}
/* @end head_verb */

/* @listing head_traffic */
/* Head 3: the world of traffic. Column 0: a TRAFFIC query meets TRAFFIC
 * and NOUN keys (a traffic noun scores 2). Columns 1 and 2: the object
 * phrase prefers the subject phrase and the other way round (+1 for the
 * other phrase, -1 for its own), so "street" finds "delivery truck",
 * not itself, and "truck" finds "street". */
static void head_traffic(float *W_q, float *W_k, int off, float g)
{
    pair(W_q, W_k, off + 0, FEAT_TRAFFIC, FEAT_TRAFFIC, g);
    W_k[FEAT_NOUN * D + off] = 1.0f;
    pair(W_q, W_k, off + 1, FEAT_OBJ, FEAT_SUBJ, g);
    W_k[FEAT_OBJ * D + off + 1] = -1.0f;
    pair(W_q, W_k, off + 2, FEAT_SUBJ, FEAT_OBJ, g);
    W_k[FEAT_SUBJ * D + off + 2] = -1.0f;
}
/* @end head_traffic */

/* @listing heads_build */
int heads_build(struct mha_weights *w)
{
    if (!w || !w->W_q || !w->W_k || !w->W_v || !w->W_o)
        return KIT_E_NULL;
    const size_t n = (size_t)D * D;
    memset(w->W_q, 0, n * sizeof(float));
    memset(w->W_k, 0, n * sizeof(float));
    memset(w->W_v, 0, n * sizeof(float));
    memset(w->W_o, 0, n * sizeof(float));
    const int d_head = D / HEADS_N; /* head i: columns i*d_head.. */
    head_previous(w->W_q, w->W_k, 0 * d_head, 8.0f);
    head_adjective(w->W_q, w->W_k, 1 * d_head, 6.0f);
    head_verb(w->W_q, w->W_k, 2 * d_head, 8.0f);
    head_traffic(w->W_q, w->W_k, 3 * d_head, 8.0f);
    for (int r = 0; r < D; r++) /* W_v = W_o = I */
        w->W_v[r * D + r] = w->W_o[r * D + r] = 1.0f;
    return KIT_OK;
}
/* @end heads_build */
