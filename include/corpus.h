/*
 * corpus.h: chapter 8's corpus, the Brown corpus, read, tokenised and
 * split into training, validation and test sets. Given code
 * (given/corpus.c): not an exercise.
 *
 * The Brown corpus (Francis and Kucera, 1964; tagged form C) is 500 texts
 * of about 2,000 words each from 15 genres. Each text is a file named
 * c<genre letter><two digits>, ca01 ... cr09, of whitespace-separated
 * word/tag tokens: "The/at jury/nn said/vbd ,/, ...". Punctuation comes
 * as tokens of its own with tags of its own (",/,", "./."), and stays.
 *
 * Dimension letters used in every shape comment:
 *   N       = tokens in the corpus (all splits)
 *   n_texts = texts (files)
 *   V       = vocabulary size, the unknown token included
 *   n_tags  = distinct Brown tags
 *
 * How a token is read:
 *   word  the text before the last '/', lowercased (ASCII letters only:
 *         the corpus is ASCII), looked up in the vocabulary
 *   tag   the text after the last '/', upper-cased as the Brown manual
 *         writes it ("NN-TL"), kept whole, and put in a tag class
 *         (corpus_tag_class())
 *
 * The vocabulary: CORPUS_UNK (id 0, "<unk>") and then the V - 1 most
 * frequent words of the training split, most frequent first, ties in
 * byte order. Every other word becomes CORPUS_UNK.
 *
 * The split (corpus_split_of()): by text, from the text's two-digit
 * number n: n % 10 == 2 is validation, n % 10 == 3 is test, any other n
 * is training. Every genre has texts 01 to at least 06, so every genre
 * lands in all three sets, and a text is never cut in two.
 *
 * Errors: a function that fails returns a code from kit.h (KIT_E_INPUT
 * for a missing or malformed file, KIT_E_SIZE for an impossible
 * configuration, KIT_E_NULL, KIT_E_NOMEM) and writes one line into err,
 * a caller's buffer of CORPUS_ERR_LEN chars, naming the file and line:
 *   "corpus/ca01:12: the token "jury" has no tag (want word/tag)"
 * err may be NULL.
 */
#ifndef CORPUS_H
#define CORPUS_H

#include "kit.h"

#define CORPUS_ERR_LEN       512
#define CORPUS_UNK           0       /* the unknown token's id          */
#define CORPUS_UNK_WORD      "<unk>" /* and its string                  */
#define CORPUS_DEFAULT_VOCAB 8192    /* chapter 8's V                   */
#define CORPUS_MAX_VOCAB     65535   /* ids are stored in 16 bits       */
#define CORPUS_BIN_MAGIC     "BRWNTOK1"
#define CORPUS_BIN_VERSION   1

/* What the measurements of chapter 8 ask of a token's tag. */
enum corpus_tag_class {
    TAG_DET = 0, /* determiners: AT, DT, DTI, DTS, DTX, ABN, ABX, AP    */
    TAG_ADJ,     /* adjectives: JJ, JJR, JJS, JJT                        */
    TAG_NOUN,    /* nouns: NN..., NP... (proper), NR... (adverbial)      */
    TAG_PREP,    /* prepositions: IN                                     */
    TAG_VERB,    /* verbs: VB..., and the forms of be, have, do (BE...,  */
                 /* HV..., DO...) and modals (MD)                        */
    TAG_PRON,    /* pronouns: PP..., PN..., WP...                        */
    TAG_PUNCT,   /* punctuation: . , : ( ) -- `` '' '                    */
    TAG_OTHER,   /* the rest: CC, CS, RB, CD, TO, WDT, UH, ...           */
    TAG_N_CLASSES
};

/* The three sets a text can be in. */
enum corpus_split_id { SPLIT_TRAIN = 0, SPLIT_VALID, SPLIT_TEST, SPLIT_N };

/* One text of the corpus: a file. */
struct corpus_text {
    char id[8];   /* "ca01": 'c', the genre letter, two digits */
    int split;    /* SPLIT_TRAIN, SPLIT_VALID or SPLIT_TEST    */
    int first;    /* its first token's index in the token arrays */
    int n_tokens; /* how many tokens it has, > 0               */
};

/* The corpus as read from the files, before the vocabulary: every token
 * as a word id into words[] (distinct lowercased words) and a tag id
 * into tags[]. Texts in the order read. */
struct corpus_raw {
    int n_texts;
    struct corpus_text *texts; /* (n_texts) */
    int n_tokens;              /* N          */
    int *word;                 /* (N) into words[]  */
    int *tag;                  /* (N) into tags[]   */
    int n_words;               /* distinct lowercased words */
    char **words;              /* (n_words)  */
    int n_tags;
    char **tags; /* (n_tags) full tags, upper case */
    void *priv;  /* the hash tables and capacities behind the arrays */
};

/* The tokenised corpus: what the binary file holds and a training
 * program loads. Tokens are ordered by split, then by text id, so that
 * split s is the contiguous range split_first[s] .. + split_n[s] - 1. */
struct corpus_data {
    int V;
    char **vocab; /* (V) vocab[CORPUS_UNK] is "<unk>" */
    int n_tags;
    char **tags;           /* (n_tags) full tags, upper case */
    unsigned char *tag_cl; /* (n_tags) enum corpus_tag_class of each */
    int n_texts;
    struct corpus_text *texts; /* (n_texts), in token order */
    int n_tokens;              /* N */
    int *token;                /* (N) vocabulary ids, 0 .. V-1 */
    int *tag;                  /* (N) tag ids, 0 .. n_tags-1 */
    int split_first[SPLIT_N];  /* first token of each split */
    int split_n[SPLIT_N];      /* tokens in each split      */
};

/* ---------------------------------------------------------------------
 * Tags and the split rule
 * ------------------------------------------------------------------- */

/* The class of a Brown tag, upper or lower case: the tag is reduced to
 * its base (an "FW-" prefix and "-TL", "-HL", "-NC" suffixes dropped,
 * only the part before a '+' kept: "PPSS+MD" is a pronoun), then looked
 * up as enum corpus_tag_class says. NULL or unknown: TAG_OTHER. */
int corpus_tag_class(const char *tag);

/* "det", "adj", "noun", "prep", "verb", "pron", "punct", "other". */
const char *corpus_tag_class_name(int cls);

/* The split of text id ("ca01"), by the rule above; KIT_E_INPUT when id
 * is not c<letter><two digits>. */
int corpus_split_of(const char *id);

/* ---------------------------------------------------------------------
 * Reading the files
 * ------------------------------------------------------------------- */

/* An empty corpus, to read files into. */
void corpus_raw_init(struct corpus_raw *c);
void corpus_raw_free(struct corpus_raw *c);

/* Append the text in file path, whose name (after the last '/') must be
 * a text id. Bad input (KIT_E_INPUT, by file and line): a name that is
 * not a text id, a text read twice, a file that cannot be read, an
 * empty file, a NUL byte, bytes that are not UTF-8, a token without a
 * word or without a tag. On an error c is as it was. */
int corpus_read_file(struct corpus_raw *c, const char *path, char *err);

/* Read every file of dir whose name is a text id, in name order.
 * KIT_E_INPUT when dir cannot be opened or holds no text, or for a
 * file's error. */
int corpus_read_dir(struct corpus_raw *c, const char *dir, char *err);

/* ---------------------------------------------------------------------
 * The vocabulary and the tokenised corpus
 * ------------------------------------------------------------------- */

/* Build d from c: the vocabulary of V tokens (counted on the training
 * split), every token's id and tag, texts ordered by split then id.
 * KIT_E_SIZE when V < 2, V > CORPUS_MAX_VOCAB, or the training split has
 * fewer than V - 1 distinct words; KIT_E_INPUT when a split is empty. */
int corpus_build(const struct corpus_raw *c, int V, struct corpus_data *d,
                 char *err);

void corpus_data_free(struct corpus_data *d);

/* The vocabulary id of word (lowercased first), CORPUS_UNK when it is
 * not in the vocabulary or is NULL. */
int corpus_token_id(const struct corpus_data *d, const char *word);

/* Split text into tokens as the corpus has them: at whitespace, with
 * each of . , ; : ! ? ( ) " a token of its own; lowercased; then ids.
 * ids (max_ids). Returns the number of tokens (those past max_ids are
 * counted, not written), or KIT_E_NULL. */
int corpus_encode(const struct corpus_data *d, const char *text, int *ids,
                  int max_ids);

/* The share of split s's tokens that are not CORPUS_UNK, in [0, 1]. */
double corpus_coverage(const struct corpus_data *d, int s);

/* ---------------------------------------------------------------------
 * The binary file
 * ------------------------------------------------------------------- */

/* Write d to path: the magic CORPUS_BIN_MAGIC, the version, the sizes,
 * the vocabulary, the tags with their classes, the texts, the tokens
 * (16-bit ids), little-endian; and beside it path.sum, the file's
 * checksum (FNV-1a, 64 bits) and size in one line. KIT_E_INPUT when
 * either cannot be written. */
int corpus_save(const struct corpus_data *d, const char *path, char *err);

/* Load what corpus_save() wrote. A missing file, a wrong magic or
 * version, a truncated file, trailing bytes, any size, id or text range
 * out of place, or bytes that differ from path.sum's checksum (or no
 * path.sum) is KIT_E_INPUT, in one line. On an error d is left empty
 * (corpus_data_free() is safe on it). */
int corpus_load(struct corpus_data *d, const char *path, char *err);

#endif
