/*
 * heads_lm.h: chapter 8, measuring what each head of the trained model
 * does. Three measurements, after three papers:
 *   - where a head looks, by offset (Voita et al. 2019: a head is
 *     positional when one offset takes its heaviest weight in >= 90 %
 *     of rows): head_offset_profile()
 *   - whether a head finds a syntactic relation more often than the
 *     best fixed offset does (Clark et al. 2019: only the margin
 *     counts): relation_score()
 *   - what the loss loses without it (Michel et al. 2019, with the
 *     head's mean in place of zero): mean_ablate_head()
 * The three are the chapter's exercises (starter/ch8_lm.c); the rest of
 * this header is given code (given/heads_lm.c): the relation cases read
 * from Brown's tags, the ablation hook it sets on the model, and the
 * driver that ablates every head on validation data.
 *
 * Dimension letters used in every shape comment:
 *   N = sequences, T = tokens per sequence, K = the largest offset
 *   measured, h = heads, d_head = C / h, C = d_model, L = blocks,
 *   n_cases = cases of a relation.
 *
 * Positions and offsets. In a sequence, token i (the query, a row of a
 * head's weights A) looks at token j <= i (a key, a column): the
 * offset of that weight is i - j, how far back j is; offset 0 is the
 * token itself. In (N, T, T) weights, row i of sequence n is
 * A + (n*T + i)*T, and a case's positions are flat, p = n*T + i.
 *
 * The heaviest weight of row i is its largest entry among j = 0 .. i
 * (a causal head's entries past i are 0 and are not read); when several
 * entries tie, the one with the lowest j, as argmax usually does.
 *
 * All arrays are flat, row-major and caller-allocated (see kit.h).
 */
#ifndef HEADS_LM_H
#define HEADS_LM_H

#include "corpus.h"
#include "gpt.h"
#include "kit.h"

/* Voita et al.'s share: a head is positional when one offset takes the
 * heaviest weight in at least this share of the rows that have it. */
#define HEADS_POSITIONAL 0.9f

/* ---------------------------------------------------------------------
 * Chapter 8 exercises (starter/ch8_lm.c)
 * ------------------------------------------------------------------- */

/* Exercise 8.3. Where one head looks, by offset. A (N, T, T): one
 * head's causal weights on N sequences. mean_w, top_share (K + 2):
 *   mean_w[k]      the mean of A[n][i][i-k] over the rows that have an
 *                  offset k (i >= k: N * (T - k) rows), k = 0 .. K
 *   mean_w[K+1]    the mean of A[n][i][0], the first token, over all
 *                  N * T rows
 *   top_share[k]   the share of those same N * (T - k) rows whose
 *                  heaviest weight is at offset k
 *   top_share[K+1] the share of all N * T rows whose heaviest weight is
 *                  on the first token (j = 0)
 * A row without offset k (i < k) counts for neither the numerator nor
 * the denominator of column k: it is not a row that looked elsewhere.
 * Row 0 counts in column 0 and in column K + 1 (token 0 is both itself
 * and the first). Returns KIT_OK; KIT_E_NULL for a NULL pointer;
 * KIT_E_SIZE when N or T <= 0, K < 0 or K >= T (offset K must exist in
 * some row); on an error it writes nothing. */
int head_offset_profile(const float *A, int N, int T, int K, float *mean_w,
                        float *top_share);

/* Exercise 8.4. How often one head finds a relation, and the best
 * fixed offset on the same cases. A (N, T, T) as above. Case c is the
 * word at flat position word[c] and its related word at related[c]
 * (n_cases each), in the same sequence, related[c] <= word[c].
 *   *score    the share of cases whose row word[c] has its heaviest
 *             weight on related[c]
 *   *baseline max over k >= 0 of the share of cases with
 *             word[c] - related[c] == k (the related word exactly k
 *             back), and *best_k that k, the smallest one on a tie
 * Returns KIT_OK; KIT_E_NULL for a NULL pointer; KIT_E_SIZE when N, T or
 * n_cases <= 0, or a case has a position outside 0 .. N*T - 1, its
 * related word after it, or the two in different sequences; on an
 * error it writes nothing. */
int relation_score(const float *A, int N, int T, const int *word,
                   const int *related, int n_cases, float *score,
                   float *baseline, int *best_k);

/* Exercise 8.5. Mean-ablate head `head` in the concatenation of the
 * heads' outputs, before W_o: concat (N, C), where head i's output is
 * columns i*d_head .. (i+1)*d_head - 1 of each row. Every row's block of
 * that head becomes mean (d_head); every other entry stays. Returns
 * KIT_OK; KIT_E_NULL for a NULL pointer; KIT_E_SIZE when N, C or n_heads
 * <= 0; KIT_E_HEADS when n_heads does not divide C or head is not in
 * 0 .. n_heads - 1; on an error it writes nothing. */
int mean_ablate_head(float *concat, const float *mean, int N, int C,
                     int n_heads, int head);

/* ---------------------------------------------------------------------
 * Given code: relation cases from Brown's tags
 * ------------------------------------------------------------------- */

/* The relations, each a rule on one sequence's tags (Brown tags, read
 * with corpus_tag_class() and, for a few words, the tag itself):
 *
 * HEADS_REL_NOUN_DET  a noun -> its determiner: for each noun, walk
 *   back over adjectives and determiners; the first determiner met
 *   (the nearest) is its determiner. "the big dog": dog -> the.
 *   Anything else on the way (a noun of a compound, a comma) ends the
 *   walk with no case.
 * HEADS_REL_NOUN_ADJ  a noun -> its adjective: for each noun, walk back
 *   over nouns (the rest of a compound: "a large steel plant"); when the
 *   first word that is not a noun is an adjective, that is the case.
 *   "the big red dog": dog -> red.
 * HEADS_REL_PREP_OBJ  the object of a preposition -> the preposition:
 *   for each preposition (IN), walk forward over determiners and
 *   adjectives; the object is a pronoun met right there ("to him"), or
 *   the last noun of the run of nouns met there ("in the city council":
 *   council -> in). Anything else first: no case.
 * HEADS_REL_VERB_SUBJ a verb -> its subject pronoun: for each verb,
 *   walk back over verbs (auxiliaries, modals), adverbs (RB...) and
 *   "not" (*); when the first other word is a subject pronoun (PPS
 *   he/she/it or PPSS I/we/they/you, contractions such as PPSS+MD
 *   included), that is the case. "he has not seen": seen -> he,
 *   has -> he.
 * HEADS_REL_NOUN_POSS a noun -> its possessive pronoun (PP$: his, their):
 *   as the determiner's rule, walking back over adjectives only.
 *   "their old car": car -> their.
 */
enum heads_relation_id {
    HEADS_REL_NOUN_DET = 0,
    HEADS_REL_NOUN_ADJ,
    HEADS_REL_PREP_OBJ,
    HEADS_REL_VERB_SUBJ,
    HEADS_REL_NOUN_POSS,
    HEADS_N_RELATIONS
};

/* "noun -> determiner", ...; "?" when out of range. */
const char *heads_relation_name(int rel);

/* The cases of relation rel in one sequence of T tags (Brown tags, as
 * in corpus.h, upper or lower case; a NULL tag is "other"): word and
 * related (max_cases) get positions 0 .. T-1 of this sequence, related
 * before word, in the order of word. offset is added to every position
 * written (n*T for sequence n, to make flat positions). Returns the
 * number of cases (those past max_cases counted, not written: with
 * max_cases 0, word and related may be NULL), or KIT_E_NULL, or
 * KIT_E_SIZE (T <= 0, max_cases < 0, rel out of range). */
int heads_relation_cases(const char *const *tags, int T, int rel, int offset,
                         int *word, int *related, int max_cases);

/* ---------------------------------------------------------------------
 * Given code: the heads' outputs, and mean ablation in the model
 * ------------------------------------------------------------------- */

/* The concatenation of block l's heads' outputs for sequence b of the
 * model's last forward pass: concat (T, C), T = m->T, head i's block
 * = A_i V_i with V = LN1(X) W_v (the LN1 output the forward pass kept)
 * and A_i its weights, which this recomputes with the student's
 * mha_forward(). weights (h, T, T) receives them.
 * Returns KIT_OK, KIT_E_NULL, KIT_E_SIZE (l or b out of range, no
 * forward pass yet), KIT_E_NOMEM or an error of mha_forward(). */
int heads_block_concat(const struct gpt_model *m, int l, int b, float *concat,
                       float *weights);

/* A mean ablation: block `block`'s head `head` gives mean (d_head) at
 * every position instead of its own output. */
struct gpt_ablation {
    int block;         /* l, 0 .. L-1                                  */
    int head;          /* i, 0 .. h-1                                  */
    const float *mean; /* (d_head) what head i's output becomes        */
};

/* The model's hook (gpt.h's after_attention) that applies the ablation
 * ctx (a const struct gpt_ablation *): gpt_forward() calls it for every
 * block and sequence, right after the block's attention; for block
 * l = ab->block it changes the output, and for any other it returns at
 * once. out (T, C) is that block's attention output, ln1 (T, C) its
 * input. With concat the heads' outputs (as above) and concat' the same
 * after mean_ablate_head(concat', mean, ...):
 *   out += (concat' - concat) W_o
 * which is exactly concat' W_o, the layer's output with the head
 * replaced, since out = concat W_o: the other heads' blocks of
 * concat' - concat are 0, so their share of out is the student's own
 * numbers, untouched. Returns KIT_OK, KIT_E_NULL, KIT_E_SIZE (the
 * ablation's block or head out of range, whatever the block called),
 * KIT_E_NOMEM or an error of the student's code. */
int heads_apply_ablation(void *ctx, const struct gpt_model *m, int block,
                         const float *ln1, float *out, int T);

/* Make m's forward passes apply ab (heads_apply_ablation() as its hook,
 * ab its context, which must live as long as the hook is set), or none
 * with ab NULL (the hook unset). */
void heads_set_ablation(struct gpt_model *m, const struct gpt_ablation *ab);

/* The ablation m's forward passes apply: its hook's context when the
 * hook is heads_apply_ablation(), else NULL. */
const struct gpt_ablation *heads_ablation_of(const struct gpt_model *m);

/* The mean of every head's output over the positions of n_seq
 * sequences x (n_seq, T) (run in batches of at most m->cfg.B): means
 * (L, h, d_head), block l's head i at means + (l*h + i)*d_head. Runs
 * the forward pass without targets and without ablation (m's hook is
 * unset first). Returns KIT_OK or an error of the forward pass. */
int heads_means(struct gpt_model *m, const int *x, int n_seq, int T,
                float *means);

/* The loss without each head in turn, per tag class of the predicted
 * word. x, targets (n_seq, T), target_class (n_seq, T): the class
 * (enum corpus_tag_class) of each target. For every block l and head i,
 * with head i's output replaced by its mean (means, from heads_means()):
 *   loss[(l*h + i)*TAG_N_CLASSES + c] = the mean loss over positions
 *                                       whose target has class c
 * and base[c] the same without ablation, count[c] how many positions
 * have class c (a class with none gets loss 0). loss (L, h,
 * TAG_N_CLASSES), base, count (TAG_N_CLASSES). The increase is
 * loss - base. Leaves m's hook unset. Returns KIT_OK, KIT_E_NULL,
 * KIT_E_SIZE or an error of the forward pass. */
int heads_ablation_scan(struct gpt_model *m, const int *x, const int *targets,
                        const unsigned char *target_class, int n_seq, int T,
                        const float *means, float *loss, float *base,
                        int *count);

/* ---------------------------------------------------------------------
 * Given code: the run's measures of a trained model's heads
 * ------------------------------------------------------------------- */

/* Every head's weights on n_seq sequences x (n_seq, T), every block, in forward passes of at most m->cfg.B sequences (without the
 * ablation hook): A (L*h, n_seq, T, T), block l's head i at
 * A + (l*h + i)*n_seq*T*T. Returns KIT_OK, KIT_E_NULL, KIT_E_NOMEM or an
 * error of the forward pass or of heads_block_concat(). */
int heads_weights(struct gpt_model *m, const int *x, int n_seq, int T,
                  float *A);

/* How sharp one head's rows are: the mean over A (N, T, T)'s rows
 * i = K .. T-1 (those with offsets 0 .. K, as head_offset_profile()'s)
 * of each row's heaviest weight. 1 for a head that always puts all its
 * weight on one key; 1 / (i + 1) on row i for a uniform head. */
float heads_row_max(const float *A, int N, int T, int K);

/* One head's profile over tag classes (NC = TAG_N_CLASSES), from its
 * weights A (N, T, T) on sequences whose input tokens have the classes
 * x_class (N, T): mass[cf*NC + ct] = the mean, over the queries i = K ..
 * T-1 whose own token has class cf, of the weight they put on keys of
 * class ct (each row cf sums to 1; a class with no query gets 0). With
 * A NULL, the same for a head with no preference, k < 0: each of the
 * i + 1 keys of query i weighs 1 / (i + 1) (uniform); or a head that
 * always looks k back, k = 0 .. K. Those are the baselines a profile is
 * read against: a head that puts more on nouns than the uniform head
 * only because nouns tend to stand one before the query does what the
 * offset-1 head does. q (NC), if not NULL, gets the queries of each
 * class. */
void heads_tag_profile(const float *A, const unsigned char *x_class, int N,
                       int T, int K, int k, float *mass, long *q);

/* Every head's weights on one sequence sent (S tokens, S <= m->cfg.T):
 * w (L*h, S, S), block l's head i at w + (l*h + i)*S*S. Returns KIT_OK,
 * KIT_E_NULL, KIT_E_NOMEM or an error of the forward pass. */
int heads_sentence_weights(struct gpt_model *m, const int *sent, int S,
                           float *w);

/* What each head does to one sentence sent (S tokens): the loss at each
 * word it predicts (position t predicts word t + 1), as it is (base,
 * S - 1) and with block l's head i mean-ablated (means, from
 * heads_means()) at abl + (l*h + i)*stride (S - 1 of each row; stride
 * >= S - 1). One call of heads_ablation_scan() per position, that
 * position as class 0 and the others as class 1. Returns KIT_OK,
 * KIT_E_NULL, KIT_E_SIZE (S < 2 or stride < S - 1), KIT_E_NOMEM or an
 * error of heads_ablation_scan(). */
int heads_sentence_ablation(struct gpt_model *m, const int *sent, int S,
                            const float *means, float *base, float *abl,
                            int stride);

#endif
