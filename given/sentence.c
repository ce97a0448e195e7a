/*
 * sentence.c: the example sentence and its hand-made embedding
 * (sentence.h). Given code, read in chapter 1.
 */
#include "sentence.h"

#include <math.h>
#include <string.h>

const char *const sentence_tokens[SENTENCE_T] = {
    "The",  "delivery", "truck", "which",  "was",
    "late", "blocked",  "the",   "narrow", "street"};

double sentence_pos_freq(int f)
{
    /* from one full turn over the sentence down to slow drifts */
    static const double w[FEAT_POS_PAIRS] = {1.0, 0.5, 0.25, 0.125};
    return f >= 0 && f < FEAT_POS_PAIRS ? w[f] : 0.0; /* no such pair: 0 */
}

/* @listing sentence_features */
/* Which word-level features each token has: 1 = yes, 0 = no.
 *             DET NOUN ADJ VERB FUNC TRAFFIC SUBJ OBJ */
static const float features[SENTENCE_T][8] = {
    /* The      */ {1, 0, 0, 0, 0, 0, 1, 0},
    /* delivery */ {0, 1, 1, 0, 0, 1, 1, 0},
    /* truck    */ {0, 1, 0, 0, 0, 1, 1, 0},
    /* which    */ {0, 0, 0, 0, 1, 0, 0, 0},
    /* was      */ {0, 0, 0, 1, 1, 0, 0, 0},
    /* late     */ {0, 0, 1, 0, 0, 0, 0, 0},
    /* blocked  */ {0, 0, 0, 1, 0, 1, 0, 0},
    /* the      */ {1, 0, 0, 0, 0, 0, 0, 1},
    /* narrow   */ {0, 0, 1, 0, 0, 0, 0, 1},
    /* street   */ {0, 1, 0, 0, 0, 1, 0, 1},
};
/* @end sentence_features */

/* @listing sentence_embedding */
void sentence_embedding(float *X) /* X (SENTENCE_T, SENTENCE_D) */
{
    for (int t = 0; t < SENTENCE_T; t++) {
        float *x_t = X + t * SENTENCE_D;
        memcpy(x_t, features[t], sizeof features[t]);
        for (int f = 0; f < FEAT_POS_PAIRS; f++) {
            double angle = t * sentence_pos_freq(f);
            x_t[FEAT_POS + 2 * f] = (float)cos(angle);
            x_t[FEAT_POS + 2 * f + 1] = (float)sin(angle);
        }
    }
}
/* @end sentence_embedding */
