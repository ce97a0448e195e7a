/*
 * sentence.h: the kit's example sentence and its hand-made embedding.
 *
 *   "The delivery truck, which was late, blocked the narrow street."
 *
 * Punctuation is dropped, which leaves SENTENCE_T = 10 tokens. Each token
 * gets a SENTENCE_D = 16 wide embedding whose every feature has a meaning
 * a student can read off (see given/sentence.c and chapter 1):
 *
 *   0 FEAT_DET    a determiner ("The", "the")
 *   1 FEAT_NOUN   a noun ("delivery", "truck", "street")
 *   2 FEAT_ADJ    describes a noun ("delivery", "late", "narrow")
 *   3 FEAT_VERB   a verb ("was", "blocked")
 *   4 FEAT_FUNC   a function word ("which", "was")
 *   5 FEAT_TRAFFIC  belongs to the world of traffic ("delivery", "truck",
 *                   "blocked", "street")
 *   6 FEAT_SUBJ   part of the subject phrase ("The delivery truck")
 *   7 FEAT_OBJ    part of the object phrase ("the narrow street")
 *   8..15         position: cos and sin of t * w_f for 4 frequencies w_f
 *
 * Dimension letters: T = tokens, d_model = embedding width.
 */
#ifndef SENTENCE_H
#define SENTENCE_H

#define SENTENCE_T 10
#define SENTENCE_D 16

enum sentence_feature {
    FEAT_DET = 0,
    FEAT_NOUN = 1,
    FEAT_ADJ = 2,
    FEAT_VERB = 3,
    FEAT_FUNC = 4,
    FEAT_TRAFFIC = 5,
    FEAT_SUBJ = 6,
    FEAT_OBJ = 7,
    FEAT_POS = 8, /* first of the 8 position features */
    FEAT_POS_PAIRS = 4,
};

/* The tokens, in order: sentence_tokens[t] for t in 0..SENTENCE_T-1. */
extern const char *const sentence_tokens[SENTENCE_T];

/* Angular frequency of position pair f (f in 0..FEAT_POS_PAIRS-1; 0 for
 * any other f):
 * feature FEAT_POS + 2f is cos(t * w_f), FEAT_POS + 2f + 1 is sin(t * w_f). */
double sentence_pos_freq(int f);

/* Write the embedding. X (SENTENCE_T, SENTENCE_D). Always succeeds. */
void sentence_embedding(float *X);

#endif
