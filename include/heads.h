/*
 * heads.h: four attention heads built by hand for the example sentence
 * (sentence.h), one relation each. Given code for chapter 3: not an
 * exercise. Chapter 3's figure runs them through mha_forward().
 *
 * The layer is d_model = SENTENCE_D = 16 wide with HEADS_N = 4 heads, so
 * d_head = 4. Each head's W_q^i and W_k^i read the embedding's named
 * features (FEAT_NOUN, FEAT_OBJ, the position pairs, ...), so that the
 * score q_t . k_j is large exactly when token j stands in the head's
 * relation to token t. W_v and W_o are the identity: the figure shows
 * weights, and the identity keeps the output easy to read.
 *
 * Read with n_heads = 1, the very same four matrices are one head of
 * width 16 whose score is the SUM of the four relations' scores.
 *
 * Dimension letters: d_model = embedding width, d_head = head width.
 */
#ifndef HEADS_H
#define HEADS_H

#include "mha.h"

#define HEADS_N 4

/* What head i looks for, e.g. "previous token". */
extern const char *const heads_relation[HEADS_N];

/* Write the four hand-built heads into w. w must come from
 * mha_weights_alloc() with d_model = SENTENCE_D; every entry of W_q,
 * W_k, W_v, W_o is overwritten. Returns KIT_OK, or KIT_E_NULL. */
int heads_build(struct mha_weights *w);

#endif
