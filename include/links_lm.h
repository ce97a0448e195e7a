/*
 * links_lm.h: chapter 8's relations from a real parser. Link Grammar
 * 5.12 parsed every sentence of the Brown corpus's validation and test
 * texts (tools/runs/links/: the program, its options, and the committed
 * links, tools/runs/links/data/links.tsv.gz); this module reads those
 * links and turns them into cases on windows of the corpus, with every
 * cheap explanation of a head that finds them: the best fixed offset,
 * the nearest word of the right tag class, and the best of many heads
 * by chance. Given code (given/links_lm.c): not an exercise.
 *
 * Dimension letters used in every shape comment:
 *   N = windows (sequences), T = tokens per window, n_links = links
 *   between two tokens, n_cases = cases of a relation, R = relations.
 *
 * The links. A link joins two tokens of one sentence and has a label
 * ("Ds**c", "Ss", "Jp"); its family is the label's leading capitals
 * ("D", "S", "J"; "_" for the links inside an idiom of the dictionary,
 * "_IBGC"), as tools/runs/links/links.c counts them. Token i of text X
 * in the file is token texts[t].first + i of the corpus (corpus.h),
 * with texts[t].id X. Links with a wall (-1) and links within one token
 * (left == right: the two parts of a token the parser cut in two) are
 * read and dropped: they join no two tokens.
 *
 * A case, seen from the later word. A link has no direction, but its
 * left token comes first, and a causal model can only look back: the
 * case of a link is (word, related) = (its right token, its left one),
 * the later word looking at the earlier. Which side is which was read
 * off the committed links by the tag classes of their two ends (the
 * share of the family's links between two tokens, all 108 texts):
 *   D  left: a determiner (0.79; a pronoun, "his", 0.13), right: the
 *      noun (0.96)                              noun -> determiner
 *   A  left: the adjective (0.79), right: the noun (0.97)
 *                                               noun -> adjective
 *   S  left: the subject (a noun 0.49, a pronoun 0.39), right: the verb
 *      (0.89)                                   verb -> subject
 *   O  left: the verb (0.88), right: its object (a noun 0.68, a pronoun
 *      0.13)                                    object -> verb
 *   J  left: the preposition (0.93), right: its object (a noun 0.78)
 *                                               object -> preposition
 * Clark et al. (2019) measured the other direction in BERT, which sees
 * both sides: determiners attending to their noun, prepositions to their
 * object. A causal model cannot: from the determiner, its noun has not
 * come yet.
 *
 * A path of two links: object -> its verb's subject: an O link (verb v,
 * object o) and an S link (subject s, verb v) through the same verb give
 * the case (o, s); s < v < o.
 *
 * The other families: every family with at least LINKS_MIN_CASES cases
 * in the test windows of chapter 8's long run (tools/runs/lm/sizes.c,
 * size long: 512 windows of 64 tokens) is a relation too, read the same
 * way (right -> left); tools/runs/links/relations.c checks that the list
 * below is exactly those.
 *
 * A case on windows. A window n of T tokens starts at corpus token
 * first[n]; a case is in it when both of its tokens are (a link whose
 * partner falls outside the window is not a case), at flat positions
 * n*T + (token - first[n]), as heads_lm.h's cases are. The same pair of
 * tokens is one case even when the parser linked it twice.
 *
 * Errors: a function that fails returns a code from kit.h; links_read()
 * also writes one line into err (LINKS_ERR_LEN chars, may be NULL)
 * naming the file and line.
 */
#ifndef LINKS_LM_H
#define LINKS_LM_H

#include "corpus.h"
#include "kit.h"

#define LINKS_ERR_LEN    512
#define LINKS_FAMILY_LEN 8   /* a family's name, its NUL included */
#define LINKS_MIN_CASES  200 /* a family's cases to be a relation */

/* The links between two tokens, sorted by right token, then left token,
 * then family. */
struct links {
    int n;                            /* n_links */
    int *left, *right;                /* (n_links) corpus token indices,
                                          * left < right */
    char (*family)[LINKS_FAMILY_LEN]; /* (n_links) "D", "MV", "_"   */
};

/* The relations. The first six are chapter 8's; the rest, each one
 * family read from its right token to its left one, are the families
 * with at least LINKS_MIN_CASES cases in the long run's test windows
 * (their names say what the committed links join most often). */
enum links_relation_id {
    LINKS_REL_D = 0, /* noun -> determiner        */
    LINKS_REL_A,     /* noun -> adjective         */
    LINKS_REL_S,     /* verb -> subject           */
    LINKS_REL_O,     /* object -> verb            */
    LINKS_REL_J,     /* object -> preposition     */
    LINKS_REL_OS,    /* object -> its verb's subject (O, then S) */
    LINKS_REL_MV,    /* modifier -> verb ("ran fast", "met in")   */
    LINKS_REL_M,     /* modifier -> noun ("the man in the park") */
    LINKS_REL_X,     /* punctuation links                         */
    LINKS_REL_SJ,    /* conjoined nouns ("cats and dogs")         */
    LINKS_REL_I,     /* infinitive -> modal or "to"               */
    LINKS_REL_AN,    /* noun -> noun modifier ("steel plant")     */
    LINKS_REL_P,     /* predicate -> verb ("is red", "was seen")  */
    LINKS_REL_CO,    /* subject -> opener ("In 1960, he ...")     */
    LINKS_REL_CV,    /* verb -> its clause's conjunction          */
    LINKS_REL_C,     /* subject -> conjunction ("that he ...")    */
    LINKS_REL_VJ,    /* conjoined verbs ("came and went")         */
    LINKS_REL_G,     /* proper noun -> proper noun ("John Smith") */
    LINKS_REL_E,     /* verb -> adverb before it ("quickly ran")  */
    LINKS_REL_W,     /* clause head -> the comma or word before it */
    LINKS_REL_R,     /* relative pronoun -> noun ("the man who")  */
    LINKS_REL_B,     /* verb -> the noun it relates back to ("the
                      * man he saw", a relative clause)            */
    LINKS_REL_ZZZ,   /* quotation mark -> the word before it      */
    LINKS_REL_WV,    /* verb -> the word that opens its clause     */
    LINKS_REL_IDIOM, /* within an idiom of the dictionary ("_")   */
    LINKS_REL_MX,    /* apposition -> noun ("John, my friend,")   */
    LINKS_N_RELATIONS
};

/* "noun -> determiner", ...; "?" when out of range. */
const char *links_relation_name(int rel);

/* The relation's key in files: "D", "A", "S", "O", "J", "OS", "MV", ...
 * (its family, or "OS" for the path); "?" when out of range. */
const char *links_relation_key(int rel);

/* An empty set of links. */
void links_init(struct links *lk);
void links_free(struct links *lk);

/* Read path, the decompressed links.tsv (tools/runs/links/data: a header
 * line, then split, text, sentence, left, right, label, separated by
 * tabs), whose texts must be d's: each row's text is a text of d in the
 * split it names (valid or test), its tokens -1 or within the text, and
 * left <= right when neither is -1. Keeps the links between two tokens.
 * Returns KIT_OK; KIT_E_NULL; KIT_E_INPUT for a file that cannot be read
 * or a row that breaks a rule (in one line, by line); KIT_E_NOMEM. On
 * an error lk is left empty. */
int links_read(struct links *lk, const char *path, const struct corpus_data *d,
               char *err);

/* The links of one family ("MV": exactly that family) that fall within
 * windows first (N) of T tokens, counted once per pair of tokens: the
 * count, or KIT_E_NULL, KIT_E_SIZE (N or T <= 0). */
int links_family_cases(const struct links *lk, const char *family,
                       const long *first, int N, int T);

/* The cases of relation rel in N windows of T tokens, window n starting
 * at corpus token first[n]: word and related (max_cases) get flat
 * positions n*T + i, related[c] < word[c] in the same window, in the
 * order of window, then word, then related. Returns the number of cases
 * (those past max_cases counted, not written: with max_cases 0, word and
 * related may be NULL), or KIT_E_NULL, KIT_E_SIZE (N or T <= 0,
 * max_cases < 0, rel out of range) or KIT_E_NOMEM. */
int links_relation_cases(const struct links *lk, int rel, const long *first,
                         int N, int T, int *word, int *related, int max_cases);

/* What a head gets without reading anything but positions and tags, on
 * the cases (word, related) (n_cases each, flat positions in N windows
 * of T tokens; x_class (N, T) each input token's corpus_tag_class):
 *   offset_k, offset_base   the best fixed offset k >= 0 (the smallest on
 *                           a tie) and the share of cases whose related
 *                           word is exactly k back: relation_score()'s
 *                           baseline (heads_lm.h)
 *   class_base              the class rule: for each case, the nearest
 *                           earlier token of its window whose class is
 *                           the related word's; the share of cases where
 *                           that token is the related word
 *   n_hard                  the cases the related word of which is
 *                           neither at offset_k nor the nearest of its
 *                           class; hard (n_cases), if not NULL, gets 1
 *                           for each of them and 0 for the rest
 * With n_cases 0 every share is 0, offset_k 0. */
struct links_baseline {
    int n_cases;
    int offset_k;
    float offset_base;
    float class_base;
    int n_hard;
};

/* Fills b as above. Returns KIT_OK; KIT_E_NULL (word, related, x_class or
 * b NULL with n_cases > 0); KIT_E_SIZE when N or T <= 0, n_cases < 0, or
 * a case is outside 0 .. N*T - 1, has its related word after it or in
 * another window. */
int links_baselines(const int *word, const int *related, int n_cases,
                    const unsigned char *x_class, int N, int T,
                    unsigned char *hard, struct links_baseline *b);

/* The best of many heads by chance. Suppose each of n_heads heads finds
 * relation r exactly as often as its best fixed offset, p[r]: on
 * n_cases[r] cases each head's observed score is Binomial(n_cases[r],
 * p[r]) / n_cases[r], and its margin that minus p[r]. The best head's
 * margin on relation r is the largest of n_heads such margins; the best
 * over all is the largest over the n_rel relations too. Drawn draws
 * times (a Monte Carlo with rng.h's generator from seed: in draw t, for
 * each relation r in order, for each head, one uniform number, turned
 * into a count by the inverse of the binomial's distribution function,
 * computed exactly from its terms): mean (n_rel) and p95 (n_rel) get the
 * mean of the best head's margin on each relation and its 95th
 * percentile (the ceil(0.95 * draws)-th smallest of the draws); *all_mean
 * and *all_p95 the same for the best over all. A relation with no case
 * has margin 0. Returns KIT_OK; KIT_E_NULL; KIT_E_SIZE (n_rel, n_heads or
 * draws <= 0, an n_cases < 0, a p outside [0, 1]); KIT_E_NOMEM. */
int links_best_of_null(const int *n_cases, const float *p, int n_rel,
                       int n_heads, int draws, unsigned long long seed,
                       float *mean, float *p95, float *all_mean,
                       float *all_p95);

#endif
