/*
 * test_ch8.c: chapter 8 tests, the corpus layer (given/corpus.c): the
 * Brown corpus's word/tag files read, lowercased and tagged, the
 * vocabulary with its unknown token, the split by text, the binary file,
 * and every kind of bad input. Then the exercises that measure what the
 * heads do (heads_lm.h): the offset profile, the relation score against
 * its fixed-offset baseline, mean ablation, and the given code around
 * them (relation cases from tags, the model's ablation hook, the
 * driver), each on small hand-made weights whose answers are exact.
 *
 * The tests never need the real corpus: each writes small corpus files
 * of its own into a fresh temporary folder and removes it at the end.
 * tools/checks/68-corpus.sh checks the real corpus.
 *
 * Dimension letters: N = tokens (the corpus) or sequences (the heads),
 * V = vocabulary size, T = tokens per sequence, K = the largest offset,
 * C = d_model, h = heads, d_head = C / h.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "corpus.h"
#include "gpt.h"
#include "heads_lm.h"
#include "kit_test.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------
 * A temporary folder of corpus files
 * ------------------------------------------------------------------- */

static char tmp_dir[64];
static char tmp_path[512];

/* Make a fresh temporary folder. */
static int tmp_make(void)
{
    strcpy(tmp_dir, "/tmp/kit-ch8-XXXXXX");
    return KIT_CHECK(mkdtemp(tmp_dir) != NULL,
                     "cannot make a temporary folder in /tmp");
}

/* The path of NAME in the temporary folder. */
static const char *tmp_file(const char *name)
{
    snprintf(tmp_path, sizeof tmp_path, "%s/%s", tmp_dir, name);
    return tmp_path;
}

/* Write n bytes as the file NAME of the temporary folder; its path. */
static const char *tmp_write(const char *name, const char *bytes, size_t n)
{
    const char *path = tmp_file(name);
    FILE *f = fopen(path, "wb");
    KIT_CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        fwrite(bytes, 1, n, f);
        fclose(f);
    }
    return path;
}

/* The same for a string. */
static const char *tmp_text(const char *name, const char *text)
{
    return tmp_write(name, text, strlen(text));
}

/* Remove the temporary folder and what is in it. */
static void tmp_remove(void)
{
    DIR *d = opendir(tmp_dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(tmp_file(e->d_name));
    if (d)
        closedir(d);
    rmdir(tmp_dir);
}

/* A small corpus in Brown's own format: training texts ca01 and cb01,
 * validation ca02, test ca03. */
static const char text_ca01[] =
    "\n\n\tThe/at Jury/nn said/vbd ,/, ``/`` it/pps was/bedz late/jj ''/'' "
    "./.\n\n\n\tThe/at truck/nn of/in the/at City/nn-tl ./.\n";
static const char text_cb01[] = "\tThe/at city/nn was/bedz narrow/jj ./.\n";
static const char text_ca02[] =
    "\tA/at truck/nn blocked/vbd the/at street/nn ./.\n";
static const char text_ca03[] = "\tThe/at narrow/jj street/nn ./.\n";

/* Write the small corpus into the temporary folder. */
static void write_small_corpus(void)
{
    tmp_text("ca01", text_ca01);
    tmp_text("cb01", text_cb01);
    tmp_text("ca02", text_ca02);
    tmp_text("ca03", text_ca03);
    tmp_text("README", "not a text: read_dir skips it\n");
}

/* Read the small corpus into c and build d with V tokens. */
static int small_corpus(struct corpus_raw *c, struct corpus_data *d, int V)
{
    char err[CORPUS_ERR_LEN] = "";
    write_small_corpus();
    corpus_raw_init(c);
    int rc = corpus_read_dir(c, tmp_dir, err);
    if (!KIT_EXPECT_STATUS("corpus_read_dir(small corpus)", rc, KIT_OK)) {
        KIT_CHECK(0, "corpus_read_dir said: %s", err);
        return 0;
    }
    rc = corpus_build(c, V, d, err);
    if (!KIT_EXPECT_STATUS("corpus_build(small corpus)", rc, KIT_OK)) {
        KIT_CHECK(0, "corpus_build said: %s", err);
        return 0;
    }
    return 1;
}

/* Whether err has the text want in it; a check that says so. */
static int expect_message(const char *call, const char *err, const char *want)
{
    return KIT_CHECK(strstr(err, want) != NULL,
                     "%s: the error message should contain \"%s\"; it is "
                     "\"%s\"",
                     call, want, err);
}

/* Read one file of bad input: the status must be KIT_E_INPUT and the
 * message must hold each of want1, want2 (the file and line, and what is
 * wrong). */
static void expect_bad_file(const char *what, const char *path,
                            const char *want1, const char *want2)
{
    char err[CORPUS_ERR_LEN] = "";
    struct corpus_raw c;
    corpus_raw_init(&c);
    int rc = corpus_read_file(&c, path, err);
    KIT_CHECK(rc == KIT_E_INPUT,
              "%s: corpus_read_file returned %s, not "
              "KIT_E_INPUT",
              what, kit_status_name(rc));
    expect_message(what, err, want1);
    expect_message(what, err, want2);
    KIT_CHECK(strchr(err, '\n') == NULL,
              "%s: the message is more than one "
              "line: \"%s\"",
              what, err);
    KIT_CHECK(c.n_texts == 0 && c.n_tokens == 0,
              "%s: a bad file added %d "
              "texts and %d tokens; it must add nothing",
              what, c.n_texts, c.n_tokens);
    corpus_raw_free(&c);
}

/* ---------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------- */

KIT_TEST(corpus_parse_tokens, "corpus: word/tag tokens read, words "
                              "lowercased, tags kept whole, punctuation kept")
{
    static const char *const words[] = {
        "the", "jury", "said", ",",     "``", "it",  "was",  "late",
        "''",  ".",    "the",  "truck", "of", "the", "city", "."};
    static const char *const tags[] = {"AT",   "NN", "VBD",   ",", "``", "PPS",
                                       "BEDZ", "JJ", "''",    ".", "AT", "NN",
                                       "IN",   "AT", "NN-TL", "."};
    char err[CORPUS_ERR_LEN] = "";
    struct corpus_raw c;
    if (!tmp_make())
        return;
    corpus_raw_init(&c);
    int rc = corpus_read_file(&c, tmp_text("ca01", text_ca01), err);
    if (KIT_EXPECT_STATUS("corpus_read_file(ca01)", rc, KIT_OK) &&
        KIT_CHECK(c.n_tokens == 16 && c.n_texts == 1,
                  "ca01 has 1 text of 16 tokens; read %d texts, %d tokens",
                  c.n_texts, c.n_tokens)) {
        KIT_CHECK(strcmp(c.texts[0].id, "ca01") == 0 && c.texts[0].first == 0 &&
                      c.texts[0].n_tokens == 16 &&
                      c.texts[0].split == SPLIT_TRAIN,
                  "text 0 should be ca01, tokens 0..15, training; it is %s, "
                  "from %d, %d tokens, split %d",
                  c.texts[0].id, c.texts[0].first, c.texts[0].n_tokens,
                  c.texts[0].split);
        for (int i = 0; i < 16; i++) {
            KIT_CHECK(strcmp(c.words[c.word[i]], words[i]) == 0,
                      "token %d's word should be \"%s\", is \"%s\"", i,
                      words[i], c.words[c.word[i]]);
            KIT_CHECK(strcmp(c.tags[c.tag[i]], tags[i]) == 0,
                      "token %d's tag should be \"%s\", is \"%s\"", i, tags[i],
                      c.tags[c.tag[i]]);
        }
        KIT_CHECK(c.word[0] == c.word[10] && c.word[10] == c.word[13],
                  "\"The\" and \"the\" must be one word after lowercasing");
        KIT_CHECK(c.n_words == 13 && c.n_tags == 12,
                  "ca01 has 13 distinct words and 12 distinct tags; counted "
                  "%d and %d",
                  c.n_words, c.n_tags);
    }
    corpus_raw_free(&c);
    tmp_remove();
}

KIT_TEST(corpus_tag_classes, "corpus: every kind of Brown tag lands in its "
                             "class (det, adj, noun, prep, verb, pron, ...)")
{
    static const struct {
        const char *tag;
        int cls;
    } cases[] = {
        {"AT", TAG_DET},     {"at", TAG_DET},     {"DT", TAG_DET},
        {"DTI", TAG_DET},    {"DTS", TAG_DET},    {"ABN", TAG_DET},
        {"AP", TAG_DET},     {"JJ", TAG_ADJ},     {"JJR", TAG_ADJ},
        {"JJT", TAG_ADJ},    {"JJ-TL", TAG_ADJ},  {"NN", TAG_NOUN},
        {"NNS", TAG_NOUN},   {"NN$", TAG_NOUN},   {"NP", TAG_NOUN},
        {"NP$", TAG_NOUN},   {"nn-tl", TAG_NOUN}, {"NN-TL-HL", TAG_NOUN},
        {"FW-NN", TAG_NOUN}, {"NR", TAG_NOUN},    {"IN", TAG_PREP},
        {"IN-TL", TAG_PREP}, {"VB", TAG_VERB},    {"VBD", TAG_VERB},
        {"VBN", TAG_VERB},   {"BEDZ", TAG_VERB},  {"BEDZ*", TAG_VERB},
        {"HVD", TAG_VERB},   {"DOD", TAG_VERB},   {"MD", TAG_VERB},
        {"MD*", TAG_VERB},   {"PPS", TAG_PRON},   {"PPSS+MD", TAG_PRON},
        {"PP$", TAG_PRON},   {"PPO", TAG_PRON},   {"WPS", TAG_PRON},
        {"PN", TAG_PRON},    {".", TAG_PUNCT},    {",", TAG_PUNCT},
        {"``", TAG_PUNCT},   {"''", TAG_PUNCT},   {"--", TAG_PUNCT},
        {"(", TAG_PUNCT},    {":", TAG_PUNCT},    {"CC", TAG_OTHER},
        {"CS", TAG_OTHER},   {"RB", TAG_OTHER},   {"CD", TAG_OTHER},
        {"*", TAG_OTHER},    {"WDT", TAG_OTHER},  {"TO", TAG_OTHER},
        {"QL", TAG_OTHER},   {"NIL", TAG_OTHER},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int got = corpus_tag_class(cases[k].tag);
        KIT_CHECK(got == cases[k].cls, "the tag %s should be class %s, is %s",
                  cases[k].tag, corpus_tag_class_name(cases[k].cls),
                  corpus_tag_class_name(got));
    }
    KIT_CHECK(corpus_tag_class(NULL) == TAG_OTHER,
              "a NULL tag should be class other");
    KIT_CHECK(strcmp(corpus_tag_class_name(TAG_N_CLASSES), "unknown") == 0,
              "a class past the last should be named \"unknown\"");
}

/* ---------------------------------------------------------------------
 * The vocabulary
 * ------------------------------------------------------------------- */

KIT_TEST(corpus_vocab_order, "corpus: the vocabulary is <unk>, then the "
                             "most frequent training words, ties in order")
{
    /* Training words (ca01, cb01): the 4, . 3, city 2, was 2, and once
     * each (in byte order) '', ",", ``, it, jury, late, narrow, of,
     * said, truck. */
    static const char *const want[] = {"<unk>", "the", ".",  "city", "was",
                                       "''",    ",",   "``", "it"};
    struct corpus_raw c;
    struct corpus_data d;
    if (!tmp_make())
        return;
    if (small_corpus(&c, &d, 9)) {
        for (int v = 0; v < 9; v++)
            KIT_CHECK(strcmp(d.vocab[v], want[v]) == 0,
                      "vocabulary id %d should be \"%s\", is \"%s\"", v,
                      want[v], d.vocab[v]);
        KIT_CHECK(corpus_token_id(&d, "The") == 1 &&
                      corpus_token_id(&d, "CITY") == 3,
                  "corpus_token_id lowercases: \"The\" is 1, \"CITY\" is 3; "
                  "got %d and %d",
                  corpus_token_id(&d, "The"), corpus_token_id(&d, "CITY"));
        KIT_CHECK(corpus_token_id(&d, "jury") == CORPUS_UNK,
                  "\"jury\" (count 1, past the 8 words) must be <unk>");
        KIT_CHECK(corpus_token_id(&d, "blocked") == CORPUS_UNK,
                  "\"blocked\" is only in validation: it must be <unk>, as "
                  "the vocabulary is counted on training texts only");
        KIT_CHECK(corpus_token_id(&d, NULL) == CORPUS_UNK,
                  "a NULL word must be <unk>");
        /* ca02, validation: A truck blocked the street . */
        int s = SPLIT_VALID, at = d.split_first[s];
        KIT_CHECK(d.split_n[s] == 6 && d.token[at] == CORPUS_UNK &&
                      d.token[at + 3] == 1 && d.token[at + 5] == 2,
                  "validation should be a(unk) truck(unk) blocked(unk) "
                  "the(1) street(unk) .(2); it has %d tokens, ids %d .. %d",
                  d.split_n[s], d.token[at], d.token[at + d.split_n[s] - 1]);
        double cov = corpus_coverage(&d, s);
        KIT_CHECK(cov > 2.0 / 6 - 1e-9 && cov < 2.0 / 6 + 1e-9,
                  "validation's coverage should be 2/6, is %g", cov);
        corpus_data_free(&d);
    }
    corpus_raw_free(&c);
    tmp_remove();
}

KIT_TEST(corpus_vocab_impossible, "corpus: a vocabulary larger than the "
                                  "training words, or below 2, is one clear "
                                  "KIT_E_SIZE line")
{
    struct corpus_raw c;
    struct corpus_data d;
    char err[CORPUS_ERR_LEN] = "";
    if (!tmp_make())
        return;
    if (small_corpus(&c, &d, 15)) { /* 14 training words: V = 15 fits */
        KIT_CHECK(d.V == 15, "V = 15 should give 15 tokens, gave %d", d.V);
        corpus_data_free(&d);
        int rc = corpus_build(&c, 16, &d, err);
        KIT_EXPECT_STATUS("corpus_build(V = 16, 14 training words)", rc,
                          KIT_E_SIZE);
        expect_message("corpus_build(V = 16)", err, "only 14");
        expect_message("corpus_build(V = 16)", err, "at most 15");
        rc = corpus_build(&c, 1, &d, err);
        KIT_EXPECT_STATUS("corpus_build(V = 1)", rc, KIT_E_SIZE);
        expect_message("corpus_build(V = 1)", err, "impossible");
        rc = corpus_build(&c, CORPUS_MAX_VOCAB + 1, &d, err);
        KIT_EXPECT_STATUS("corpus_build(V = 65536)", rc, KIT_E_SIZE);
    }
    corpus_raw_free(&c);
    tmp_remove();
}

/* ---------------------------------------------------------------------
 * The split
 * ------------------------------------------------------------------- */

KIT_TEST(corpus_split_rule, "corpus: texts ..2 are validation, ..3 test, "
                            "the rest training, and no text is in two sets")
{
    static const struct {
        const char *id;
        int split;
    } cases[] = {
        {"ca01", SPLIT_TRAIN}, {"ca02", SPLIT_VALID},  {"ca03", SPLIT_TEST},
        {"ca10", SPLIT_TRAIN}, {"cm12", SPLIT_VALID},  {"cr43", SPLIT_TEST},
        {"cr09", SPLIT_TRAIN}, {"ci01", KIT_E_INPUT},  {"ca1", KIT_E_INPUT},
        {"xa01", KIT_E_INPUT}, {"ca011", KIT_E_INPUT}, {"caa1", KIT_E_INPUT},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        KIT_CHECK(corpus_split_of(cases[k].id) == cases[k].split,
                  "corpus_split_of(\"%s\") should be %d, is %d", cases[k].id,
                  cases[k].split, corpus_split_of(cases[k].id));
    struct corpus_raw c;
    struct corpus_data d;
    if (!tmp_make())
        return;
    if (small_corpus(&c, &d, 4)) {
        static const char *const order[] = {"ca01", "cb01", "ca02", "ca03"};
        static const int lengths[] = {16, 5, 6, 4};
        int at = 0;
        for (int k = 0; k < 4; k++) {
            const struct corpus_text *t = &d.texts[k];
            KIT_CHECK(strcmp(t->id, order[k]) == 0 && t->first == at &&
                          t->n_tokens == lengths[k] &&
                          t->split == corpus_split_of(order[k]),
                      "text %d should be %s from token %d (%d tokens); it is "
                      "%s from %d (%d)",
                      k, order[k], at, lengths[k], t->id, t->first,
                      t->n_tokens);
            at += lengths[k];
            for (int j = 0; j < k; j++)
                KIT_CHECK(strcmp(d.texts[j].id, t->id) != 0,
                          "text %s is in the corpus twice", t->id);
        }
        KIT_CHECK(d.split_first[0] == 0 && d.split_n[0] == 21 &&
                      d.split_first[1] == 21 && d.split_n[1] == 6 &&
                      d.split_first[2] == 27 && d.split_n[2] == 4,
                  "the splits should be tokens 0+21, 21+6, 27+4; they are "
                  "%d+%d, %d+%d, %d+%d",
                  d.split_first[0], d.split_n[0], d.split_first[1],
                  d.split_n[1], d.split_first[2], d.split_n[2]);
        KIT_CHECK(d.n_tokens == c.n_tokens && d.n_tokens == 31,
                  "31 tokens in, %d out", d.n_tokens);
        corpus_data_free(&d);
    }
    corpus_raw_free(&c);
    tmp_remove();
}

KIT_TEST(corpus_split_empty, "corpus: a corpus with no validation or test "
                             "text is one clear error, not a silent split")
{
    struct corpus_raw c;
    struct corpus_data d;
    char err[CORPUS_ERR_LEN] = "";
    if (!tmp_make())
        return;
    corpus_raw_init(&c);
    corpus_read_file(&c, tmp_text("ca01", text_ca01), err);
    corpus_read_file(&c, tmp_text("ca03", text_ca03), err);
    int rc = corpus_build(&c, 2, &d, err);
    KIT_EXPECT_STATUS("corpus_build(no text ..2)", rc, KIT_E_INPUT);
    expect_message("corpus_build(no text ..2)", err,
                   "validation split is empty");
    corpus_raw_free(&c);
    tmp_remove();
}

/* ---------------------------------------------------------------------
 * Encoding a sentence
 * ------------------------------------------------------------------- */

KIT_TEST(corpus_encode_sentence, "corpus: a sentence splits as Brown does: "
                                 "lowercase, punctuation a token of its own")
{
    struct corpus_raw c;
    struct corpus_data d;
    if (!tmp_make())
        return;
    if (small_corpus(&c, &d, 15)) {
        int ids[8];
        int n = corpus_encode(&d, "The truck, late.", ids, 8);
        int want[5] = {corpus_token_id(&d, "the"), corpus_token_id(&d, "truck"),
                       corpus_token_id(&d, ","), corpus_token_id(&d, "late"),
                       corpus_token_id(&d, ".")};
        if (KIT_CHECK(n == 5, "\"The truck, late.\" is 5 tokens; got %d", n))
            for (int t = 0; t < 5; t++)
                KIT_CHECK(ids[t] == want[t] && ids[t] != CORPUS_UNK,
                          "token %d should be id %d (%s), is %d", t, want[t],
                          d.vocab[want[t]], ids[t]);
        n = corpus_encode(&d, "  the jury  said  ", ids, 2);
        KIT_CHECK(n == 3,
                  "3 tokens are counted even when ids holds 2; "
                  "got %d",
                  n);
        KIT_CHECK(corpus_encode(&d, NULL, ids, 2) == KIT_E_NULL,
                  "corpus_encode(NULL text) should be KIT_E_NULL");
        corpus_data_free(&d);
    }
    corpus_raw_free(&c);
    tmp_remove();
}

/* ---------------------------------------------------------------------
 * The binary file
 * ------------------------------------------------------------------- */

KIT_TEST(corpus_file_round_trip, "corpus: what corpus_save writes, "
                                 "corpus_load reads back unchanged")
{
    struct corpus_raw c;
    struct corpus_data d, e;
    char err[CORPUS_ERR_LEN] = "";
    if (!tmp_make())
        return;
    if (small_corpus(&c, &d, 10)) {
        const char *path = tmp_file("brown.bin");
        int rc = corpus_save(&d, path, err);
        KIT_EXPECT_STATUS("corpus_save", rc, KIT_OK);
        rc = corpus_load(&e, path, err);
        if (KIT_EXPECT_STATUS("corpus_load", rc, KIT_OK) &&
            KIT_CHECK(e.V == d.V && e.n_tags == d.n_tags &&
                          e.n_texts == d.n_texts && e.n_tokens == d.n_tokens,
                      "the sizes read back differ: V %d/%d, tags %d/%d, "
                      "texts %d/%d, tokens %d/%d",
                      e.V, d.V, e.n_tags, d.n_tags, e.n_texts, d.n_texts,
                      e.n_tokens, d.n_tokens)) {
            for (int v = 0; v < d.V; v++)
                KIT_CHECK(strcmp(e.vocab[v], d.vocab[v]) == 0,
                          "vocabulary %d: \"%s\" read back as \"%s\"", v,
                          d.vocab[v], e.vocab[v]);
            for (int g = 0; g < d.n_tags; g++)
                KIT_CHECK(strcmp(e.tags[g], d.tags[g]) == 0 &&
                              e.tag_cl[g] == d.tag_cl[g],
                          "tag %d: %s (class %d) read back as %s (%d)", g,
                          d.tags[g], d.tag_cl[g], e.tags[g], e.tag_cl[g]);
            KIT_CHECK(memcmp(e.texts, d.texts, sizeof *d.texts * 4) == 0,
                      "the texts read back differ");
            KIT_CHECK(memcmp(e.token, d.token, sizeof(int) * 31) == 0 &&
                          memcmp(e.tag, d.tag, sizeof(int) * 31) == 0,
                      "the tokens or their tags read back differ");
            KIT_CHECK(memcmp(e.split_first, d.split_first,
                             sizeof d.split_first) == 0 &&
                          memcmp(e.split_n, d.split_n, sizeof d.split_n) == 0,
                      "the splits read back differ");
            corpus_data_free(&e);
        }
        corpus_data_free(&d);
    }
    corpus_raw_free(&c);
    tmp_remove();
}

/* The saved small corpus's bytes: *n of them, malloc'ed. */
static char *saved_bytes(size_t *n)
{
    struct corpus_raw c;
    struct corpus_data d;
    char err[CORPUS_ERR_LEN] = "";
    char *buf = NULL;
    *n = 0;
    if (small_corpus(&c, &d, 10)) {
        corpus_save(&d, tmp_file("good.bin"), err);
        corpus_data_free(&d);
        FILE *f = fopen(tmp_file("good.bin"), "rb");
        buf = kit_alloc(1 << 16);
        *n = f ? fread(buf, 1, 1 << 16, f) : 0;
        if (f)
            fclose(f);
    }
    corpus_raw_free(&c);
    return buf;
}

/* Load n bytes written as NAME: KIT_E_INPUT, with want in the message. */
static void expect_bad_bin(const char *name, const char *bytes, size_t n,
                           const char *want)
{
    char err[CORPUS_ERR_LEN] = "";
    struct corpus_data d;
    const char *path = tmp_write(name, bytes, n);
    int rc = corpus_load(&d, path, err);
    KIT_CHECK(rc == KIT_E_INPUT,
              "corpus_load(%s) returned %s, not "
              "KIT_E_INPUT",
              name, kit_status_name(rc));
    expect_message(name, err, name);
    expect_message(name, err, want);
    KIT_CHECK(d.V == 0 && d.vocab == NULL && d.token == NULL,
              "corpus_load(%s) failed but left data in d", name);
    corpus_data_free(&d);
}

KIT_TEST(corpus_file_malformed, "corpus: a wrong magic or version, a "
                                "truncated file, trailing bytes, an id out "
                                "of range: each one clear error")
{
    size_t n;
    if (!tmp_make())
        return;
    char *good = saved_bytes(&n);
    char *b = kit_alloc(n + 1);
    if (KIT_CHECK(good && n > 100, "the small corpus file was not written")) {
        memcpy(b, good, n);
        b[0] = 'X';
        expect_bad_bin("magic.bin", b, n, "does not start with");
        memcpy(b, good, n);
        b[8] = 2;
        expect_bad_bin("version.bin", b, n, "version 2");
        expect_bad_bin("truncated.bin", good, n / 2, "truncated");
        expect_bad_bin("empty.bin", good, 0, "truncated");
        memcpy(b, good, n);
        b[n] = 0;
        expect_bad_bin("trailing.bin", b, n + 1, "bytes after the end");
        memcpy(b, good, n);
        b[n - 2 * 31 - 2] = (char)0xFF, b[n - 2 * 31 - 1] = (char)0xFF;
        expect_bad_bin("token.bin", b, n, "past the vocabulary");
        memcpy(b, good, n);
        b[n - 2] = (char)0xFF, b[n - 1] = (char)0xFF;
        expect_bad_bin("tag.bin", b, n, "past the tags");
        memcpy(b, good, n);
        b[12] = (char)0xFF, b[13] = (char)0xFF, b[14] = 0x0F; /* V */
        expect_bad_bin("sizes.bin", b, n, "sizes out of range");
    }
    char err[CORPUS_ERR_LEN] = "";
    struct corpus_data d;
    int rc = corpus_load(&d, tmp_file("missing.bin"), err);
    KIT_EXPECT_STATUS("corpus_load(a missing file)", rc, KIT_E_INPUT);
    expect_message("corpus_load(a missing file)", err, "make corpus");
    free(good);
    free(b);
    tmp_remove();
}

/* ---------------------------------------------------------------------
 * Bad corpus files
 * ------------------------------------------------------------------- */

KIT_TEST(corpus_bad_token, "corpus: a token without a tag, or without a "
                           "word, is named by file and line")
{
    if (!tmp_make())
        return;
    expect_bad_file("a token with no slash",
                    tmp_text("ca01", "The/at\n\tjury said/vbd ./.\n"),
                    "ca01:2:", "\"jury\" has no tag");
    expect_bad_file("a token ending in a slash",
                    tmp_text("ca02", "The/at\n\n\tjury/ ./.\n"),
                    "ca02:3:", "no tag");
    expect_bad_file("a token starting with its slash",
                    tmp_text("ca03", "/nn ./.\n"), "ca03:1:", "no word");
    tmp_remove();
}

KIT_TEST(corpus_bad_bytes, "corpus: a NUL byte or bytes that are not UTF-8 "
                           "are named by file and line; UTF-8 text is fine")
{
    if (!tmp_make())
        return;
    static const char nul[] = "The/at\n\njury/nn\0/nn ./.\n";
    expect_bad_file("a NUL byte", tmp_write("ca01", nul, sizeof nul - 1),
                    "ca01:3:", "NUL byte");
    expect_bad_file("a byte 0xFF",
                    tmp_text("ca02", "The/at jury/nn\n\xff/nn\n"),
                    "ca02:2:", "not UTF-8");
    expect_bad_file("a cut-short UTF-8 character",
                    tmp_text("ca03", "The/at caf\xc3"), "ca03:1:", "not UTF-8");
    expect_bad_file("an overlong UTF-8 form",
                    tmp_text("ca04", "The/at \xc0\xaf/nn\n"),
                    "ca04:1:", "not UTF-8");
    char err[CORPUS_ERR_LEN] = "";
    struct corpus_raw c;
    corpus_raw_init(&c);
    int rc =
        corpus_read_file(&c, tmp_text("ca05", "Caf\xc3\xa9/nn ./.\n"), err);
    KIT_EXPECT_STATUS("corpus_read_file(UTF-8 \"Caf\\xc3\\xa9\")", rc, KIT_OK);
    if (rc == KIT_OK)
        KIT_CHECK(strcmp(c.words[c.word[0]], "caf\xc3\xa9") == 0,
                  "\"Caf\\xc3\\xa9\" should read as \"caf\\xc3\\xa9\"");
    corpus_raw_free(&c);
    tmp_remove();
}

KIT_TEST(corpus_empty_file, "corpus: an empty file, or one of whitespace "
                            "only, is one clear error")
{
    if (!tmp_make())
        return;
    expect_bad_file("an empty file", tmp_text("ca01", ""), "ca01", "empty");
    expect_bad_file("whitespace only", tmp_text("ca02", "\n\n\t  \n"), "ca02",
                    "empty");
    tmp_remove();
}

KIT_TEST(corpus_bad_names, "corpus: a file that is not a text, a text read "
                           "twice, a missing folder: one clear error each, "
                           "and the corpus read so far unchanged")
{
    char err[CORPUS_ERR_LEN] = "";
    struct corpus_raw c;
    if (!tmp_make())
        return;
    expect_bad_file("a name that is not a text id",
                    tmp_text("notes.txt", "The/at ./.\n"), "notes.txt",
                    "not a Brown text name");
    expect_bad_file("a missing file", tmp_file("ca09"), "ca09",
                    "cannot be opened");
    corpus_raw_init(&c);
    int rc = corpus_read_file(&c, tmp_text("ca01", text_ca01), err);
    KIT_EXPECT_STATUS("corpus_read_file(ca01)", rc, KIT_OK);
    rc = corpus_read_file(&c, tmp_file("ca01"), err);
    KIT_EXPECT_STATUS("corpus_read_file(ca01 again)", rc, KIT_E_INPUT);
    expect_message("corpus_read_file(ca01 again)", err, "read twice");
    rc = corpus_read_file(&c, tmp_text("ca02", "The/at jury ./.\n"), err);
    KIT_EXPECT_STATUS("corpus_read_file(a bad ca02)", rc, KIT_E_INPUT);
    KIT_CHECK(c.n_texts == 1 && c.n_tokens == 16 && c.n_words == 13,
              "after two bad files the corpus should still be ca01 alone "
              "(1 text, 16 tokens, 13 words); it is %d, %d, %d",
              c.n_texts, c.n_tokens, c.n_words);
    corpus_raw_free(&c);
    corpus_raw_init(&c);
    rc = corpus_read_dir(&c, tmp_file("nowhere"), err);
    KIT_EXPECT_STATUS("corpus_read_dir(a missing folder)", rc, KIT_E_INPUT);
    expect_message("corpus_read_dir(a missing folder)", err, "cannot open");
    rc = corpus_read_dir(&c, tmp_dir, err); /* holds a bad ca02 */
    KIT_EXPECT_STATUS("corpus_read_dir(a folder with a bad ca02)", rc,
                      KIT_E_INPUT);
    expect_message("corpus_read_dir(a folder with a bad ca02)", err, "ca02:1:");
    corpus_raw_free(&c);
    tmp_remove();
    tmp_make();
    tmp_text("README", "nothing here\n");
    corpus_raw_init(&c);
    rc = corpus_read_dir(&c, tmp_dir, err);
    KIT_EXPECT_STATUS("corpus_read_dir(a folder without texts)", rc,
                      KIT_E_INPUT);
    expect_message("corpus_read_dir(a folder without texts)", err,
                   "no Brown text file");
    corpus_raw_free(&c);
    tmp_remove();
}

/* ---------------------------------------------------------------------
 * What the heads do: the offset profile (exercise 8.3)
 * ------------------------------------------------------------------- */

/* The classic mistakes of the two measurements, as flags of the test's
 * own reference (in double), which gives what each mistake outputs. */
enum {
    M_WRONG_END = 1,       /* offset read as j, not i - j              */
    M_MEAN_ALL_ROWS = 2,   /* mean_w divided by all N*T rows           */
    M_SHARE_ALL_ROWS = 4,  /* top_share divided by all N*T rows        */
    M_TIES_LAST = 8,       /* argmax ties broken to the last j         */
    M_OFFSET_1 = 16,       /* baseline: offset 1 only, not the best k  */
    M_ROW_OF_RELATED = 32, /* score read from the related word's row  */
    M_BEST_K_LAST = 64     /* baseline ties broken to the largest k    */
};

static const char *const advice_wrong_end =
    "The offset of weight A[i][j] is i - j, how far back key j is from "
    "query i: column k of row i is A[i][i - k], not A[i][k].";
static const char *const advice_all_rows =
    "A row i < k has no token k back. Leave such rows out of column k "
    "altogether: divide by the N * (T - k) rows that have the offset, "
    "not by all N * T rows.";
static const char *const advice_ties_last =
    "When two weights of a row tie, the heaviest is the one with the "
    "lowest j: update the best only when a weight is strictly larger (>, "
    "not >=).";

/* The heaviest weight of row A_i (T) among j = 0 .. i. */
static int ref_argmax(const float *A_i, int i, int flags)
{
    int best = 0;
    for (int j = 1; j <= i; j++)
        if ((flags & M_TIES_LAST) ? A_i[j] >= A_i[best] : A_i[j] > A_i[best])
            best = j;
    return best;
}

/* The offset profile with the mistakes in flags: out (2, K + 2),
 * mean_w then top_share. */
static void ref_offset_profile(const float *A, int N, int T, int K, int flags,
                               double *out)
{
    for (int k = 0; k <= K + 1; k++) {
        const int first = k <= K ? k : 0;
        double sum = 0, top = 0;
        for (int n = 0; n < N; n++)
            for (int i = first; i < T; i++) {
                const float *A_i = A + ((size_t)n * T + i) * T;
                int j = k > K ? 0 : (flags & M_WRONG_END) ? k : i - k;
                sum += A_i[j];
                top += ref_argmax(A_i, i, flags) == j;
            }
        double rows = (double)N * (T - first);
        out[k] = sum / ((flags & M_MEAN_ALL_ROWS) ? (double)N * T : rows);
        out[K + 2 + k] =
            top / ((flags & M_SHARE_ALL_ROWS) ? (double)N * T : rows);
    }
}

/* Two sequences of T = 4 tokens: one head's causal weights, in eighths
 * so that every mean is exact. Row 1 of sequence 0 and row 3 of
 * sequence 1 are ties. */
enum { HN = 2, HT = 4 };
static const float hand_A[HN * HT * HT] = {
    1,   0,   0, 0, /* sequence 0 */
    .5,  .5,  0, 0, .25, .5,  .25, 0, .125, .25,  .5,   .125,
    1,   0,   0, 0, /* sequence 1 */
    .25, .75, 0, 0, .5,  .25, .25, 0, .375, .125, .125, .375};

/* Run head_offset_profile(A, N, T, K) and compare both outputs, as one
 * tensor (2, K + 2), with want and the mistakes. */
static int expect_profile(const char *call, const float *A, int N, int T, int K,
                          const double *want)
{
    const int n = K + 2;
    float *mean_w = kit_output((size_t)n), *top = kit_output((size_t)n);
    float *got = kit_alloc(2 * (size_t)n * sizeof *got);
    double *mis = kit_alloc(5 * 2 * (size_t)n * sizeof *mis);
    const int flags[5] = {M_WRONG_END, M_MEAN_ALL_ROWS, M_SHARE_ALL_ROWS,
                          M_MEAN_ALL_ROWS | M_SHARE_ALL_ROWS, M_TIES_LAST};
    for (int v = 0; v < 5; v++)
        ref_offset_profile(A, N, T, K, flags[v], mis + (size_t)v * 2 * n);
    const struct kit_mistake m[] = {
        {"the offset counted from the wrong end (A[i][k] read for offset k, "
         "not A[i][i - k])",
         advice_wrong_end, mis},
        {"rows without the offset counted as zeros in mean_w (divided by "
         "all rows)",
         advice_all_rows, mis + 2 * n},
        {"rows without the offset counted as zeros in top_share (divided "
         "by all rows)",
         advice_all_rows, mis + 4 * n},
        {"rows without the offset counted as zeros (mean_w and top_share "
         "divided by all rows)",
         advice_all_rows, mis + 6 * n},
        {"argmax ties broken to the last j instead of the first",
         advice_ties_last, mis + 8 * n}};
    int ok = KIT_EXPECT_STATUS(
                 call, head_offset_profile(A, N, T, K, mean_w, top), KIT_OK) &&
             KIT_EXPECT_IN_BOUNDS(call, "mean_w", mean_w, (size_t)n) &&
             KIT_EXPECT_IN_BOUNDS(call, "top_share", top, (size_t)n);
    if (ok) {
        memcpy(got, mean_w, (size_t)n * sizeof *got);
        memcpy(got + n, top, (size_t)n * sizeof *got);
        char what[200];
        snprintf(what, sizeof what,
                 "%s: row 0 mean_w[0..K] then mean_w[K+1] (first token), "
                 "row 1 top_share",
                 call);
        ok = KIT_EXPECT_TENSOR(what, got, want, 2, n, 1e-6, m, 5);
    }
    kit_output_free(mean_w), kit_output_free(top);
    free(got), free(mis);
    return ok;
}

KIT_TEST(offset_profile_hand, "head_offset_profile: the mean weight and the "
                              "heaviest-weight share per offset, on two "
                              "hand-made sequences with ties")
{
    /* offsets 0, 1, 2 over 8, 6 and 4 rows, the first token over 8:
     * mean_w    = 4.25/8, 2.125/6, 1.125/4, 4/8
     * top_share = 3/8,    3/6,     1/4,     5/8  (ties: the lowest j) */
    const double want[2 * 4] = {4.25 / 8, 2.125 / 6, 1.125 / 4, 4.0 / 8,
                                3.0 / 8,  3.0 / 6,   1.0 / 4,   5.0 / 8};
    expect_profile("head_offset_profile(A, N 2, T 4, K 2)", hand_A, HN, HT, 2,
                   want);
}

KIT_TEST(offset_profile_previous_token,
         "head_offset_profile: a perfect previous-token head has share 1 at "
         "offset 1, positional by Voita et al.'s 90 %")
{
    /* every row i >= 1 puts all its weight on i - 1; row 0 on itself */
    enum { N = 2, T = 5, K = 3 };
    float A[N * T * T] = {0};
    for (int n = 0; n < N; n++)
        for (int i = 0; i < T; i++)
            A[(n * T + i) * T + (i ? i - 1 : 0)] = 1;
    /* offset 0: only row 0 (2 of 10 rows); offset 1: all 8 rows that
     * have one; first token: rows 0 and 1 (4 of 10) */
    const double want[2 * (K + 2)] = {0.2, 1, 0, 0, 0.4, 0.2, 1, 0, 0, 0.4};
    if (!expect_profile("head_offset_profile(previous-token head, N 2, T 5, "
                        "K 3)",
                        A, N, T, K, want))
        return;
    float mean_w[K + 2], top[K + 2];
    head_offset_profile(A, N, T, K, mean_w, top);
    KIT_CHECK(top[1] >= HEADS_POSITIONAL,
              "a head that always looks one back must count as positional "
              "(top_share[1] = %g >= %g)",
              (double)top[1], (double)HEADS_POSITIONAL);
}

KIT_TEST(offset_profile_one_token, "head_offset_profile: T = 1, where the one "
                                   "row is offset 0 and the first token")
{
    enum { N = 3 };
    const float A[N] = {1, 1, 1};
    const double want[4] = {1, 1, 1, 1};
    expect_profile("head_offset_profile(A, N 3, T 1, K 0)", A, N, 1, 0, want);
    float mean_w[3], top[3];
    KIT_EXPECT_STATUS("head_offset_profile(A, N 3, T 1, K 1): no row has "
                      "offset 1",
                      head_offset_profile(A, N, 1, 1, mean_w, top), KIT_E_SIZE);
}

/* One bad call: its status, and nothing written into either output. */
static void profile_error(const char *call, const float *A, int N, int T, int K,
                          int null_out, int want)
{
    float mean_w[8], top[8];
    kit_poison(mean_w, 8), kit_poison(top, 8);
    if (!KIT_EXPECT_STATUS(call,
                           head_offset_profile(A, N, T, K,
                                               null_out == 1 ? NULL : mean_w,
                                               null_out == 2 ? NULL : top),
                           want))
        return;
    int clean = 1;
    for (int k = 0; k < 8; k++)
        clean &= isnan(mean_w[k]) && isnan(top[k]);
    KIT_CHECK(clean,
              "%s returned the error but wrote into mean_w or "
              "top_share; on error write nothing",
              call);
}

KIT_TEST(offset_profile_errors, "head_offset_profile: NULL, sizes <= 0, K < 0 "
                                "or K >= T are errors, and write nothing")
{
    profile_error("head_offset_profile(NULL, 2, 4, 2, ...)", NULL, 2, 4, 2, 0,
                  KIT_E_NULL);
    profile_error("head_offset_profile(A, 2, 4, 2, NULL, top_share)", hand_A, 2,
                  4, 2, 1, KIT_E_NULL);
    profile_error("head_offset_profile(A, 2, 4, 2, mean_w, NULL)", hand_A, 2, 4,
                  2, 2, KIT_E_NULL);
    profile_error("head_offset_profile(A, N 0, 4, 2)", hand_A, 0, 4, 2, 0,
                  KIT_E_SIZE);
    profile_error("head_offset_profile(A, 2, T 0, 2)", hand_A, 2, 0, 0, 0,
                  KIT_E_SIZE);
    profile_error("head_offset_profile(A, 2, 4, K -1)", hand_A, 2, 4, -1, 0,
                  KIT_E_SIZE);
    profile_error("head_offset_profile(A, 2, T 4, K 4): offset 4 needs T >= 5",
                  hand_A, 2, 4, 4, 0, KIT_E_SIZE);
}

/* ---------------------------------------------------------------------
 * What the heads do: a relation against its baseline (exercise 8.4)
 * ------------------------------------------------------------------- */

/* relation_score with the mistakes in flags: out = {score, baseline,
 * best_k}. */
static void ref_relation(const float *A, int T, const int *word,
                         const int *related, int n_cases, int flags,
                         double *out)
{
    int hits = 0, best_k = 0, n_best = -1;
    for (int c = 0; c < n_cases; c++) {
        int row = (flags & M_ROW_OF_RELATED) ? related[c] : word[c];
        hits +=
            ref_argmax(A + (size_t)row * T, row % T, flags) == related[c] % T;
    }
    for (int k = 0; k < T; k++) {
        int n_k = 0;
        for (int c = 0; c < n_cases; c++)
            n_k += word[c] - related[c] == k;
        int better = (flags & M_BEST_K_LAST) ? n_k >= n_best : n_k > n_best;
        if ((flags & M_OFFSET_1) ? k == 1 : better)
            best_k = k, n_best = n_k;
    }
    out[0] = (double)hits / n_cases;
    out[1] = (double)n_best / n_cases;
    out[2] = best_k;
}

static int expect_relation(const char *call, const float *A, int N, int T,
                           const int *word, const int *related, int n_cases,
                           const double *want)
{
    const int flags[4] = {M_TIES_LAST, M_OFFSET_1, M_ROW_OF_RELATED,
                          M_BEST_K_LAST};
    double mis[4][3];
    for (int v = 0; v < 4; v++)
        ref_relation(A, T, word, related, n_cases, flags[v], mis[v]);
    const struct kit_mistake m[] = {
        {"argmax ties broken to the last j instead of the first",
         advice_ties_last, mis[0]},
        {"the baseline not maximised over k (offset 1 only)",
         "The baseline is the best fixed offset: count the cases at every "
         "offset k = 0 .. T-1 and keep the largest count, not only k = 1.",
         mis[1]},
        {"the related word's row read instead of the word's",
         "The word is the query: its row, A + word[c]*T, says where it "
         "looks; see whether its heaviest weight is at column related[c] % "
         "T.",
         mis[2]},
        {"baseline ties broken to the largest k instead of the smallest",
         "When two offsets have as many cases, keep the first (the "
         "smallest k): replace the best only on a strictly larger count.",
         mis[3]}};
    float score = NAN, baseline = NAN;
    int best_k = -77;
    if (!KIT_EXPECT_STATUS(call,
                           relation_score(A, N, T, word, related, n_cases,
                                          &score, &baseline, &best_k),
                           KIT_OK))
        return 0;
    const float got[3] = {score, baseline, (float)best_k};
    char what[200];
    snprintf(what, sizeof what, "%s: {score, baseline, best_k}", call);
    return KIT_EXPECT_TENSOR(what, got, want, 1, 3, 1e-6, m, 4);
}

KIT_TEST(relation_score_hand, "relation_score: the head's share and the best "
                              "fixed offset's, on hand-made cases with ties")
{
    /* flat positions: sequence 1's token i is 4 + i. The word's row's
     * heaviest weight (ties: lowest j) is on the related word in cases
     * 2, 3, 4 and 5; the offsets are 2, 2, 1, 3, 2, 1: offset 2 holds
     * 3 of 6 */
    const int word[6] = {3, 2, 1, 7, 6, 3}, related[6] = {1, 0, 0, 4, 4, 2};
    const double want[3] = {4.0 / 6, 3.0 / 6, 2};
    if (!expect_relation("relation_score(A, 2, 4, 6 cases)", hand_A, HN, HT,
                         word, related, 6, want))
        return;
    /* offsets 2, 3, 2, 3, 1: a tie between k = 2 and k = 3; only case
     * 1 (a tie in its row, won by j = 0) is found */
    const int w2[5] = {3, 7, 2, 3, 5}, r2[5] = {1, 4, 0, 0, 4};
    const double want2[3] = {1.0 / 5, 2.0 / 5, 2};
    expect_relation("relation_score(A, 2, 4, 5 cases, offsets 2 and 3 tie)",
                    hand_A, HN, HT, w2, r2, 5, want2);
}

KIT_TEST(relation_score_one_token, "relation_score: T = 1, every case a word "
                                   "related to itself")
{
    const float A[2] = {1, 1};
    const int word[2] = {0, 1}, related[2] = {0, 1};
    const double want[3] = {1, 1, 0};
    expect_relation("relation_score(A, N 2, T 1, 2 cases)", A, 2, 1, word,
                    related, 2, want);
}

/* One bad call: its status, and nothing written. */
static void relation_error(const char *call, const float *A, int N, int T,
                           const int *word, const int *related, int n_cases,
                           int null_out, int want)
{
    float score = NAN, baseline = NAN;
    int best_k = -77;
    if (!KIT_EXPECT_STATUS(call,
                           relation_score(A, N, T, word, related, n_cases,
                                          null_out == 1 ? NULL : &score,
                                          null_out == 2 ? NULL : &baseline,
                                          null_out == 3 ? NULL : &best_k),
                           want))
        return;
    KIT_CHECK(isnan(score) && isnan(baseline) && best_k == -77,
              "%s returned the error but wrote into score, baseline or "
              "best_k; on error write nothing (check every case before you "
              "count)",
              call);
}

KIT_TEST(relation_score_errors,
         "relation_score: NULL, sizes <= 0, and a case out of range, related "
         "after the word, or across sequences are errors that write nothing")
{
    const int w[2] = {3, 6}, r[2] = {1, 4};
    relation_error("relation_score(NULL, ...)", NULL, 2, 4, w, r, 2, 0,
                   KIT_E_NULL);
    relation_error("relation_score(A, 2, 4, NULL, related, ...)", hand_A, 2, 4,
                   NULL, r, 2, 0, KIT_E_NULL);
    relation_error("relation_score(A, 2, 4, word, NULL, ...)", hand_A, 2, 4, w,
                   NULL, 2, 0, KIT_E_NULL);
    for (int k = 1; k <= 3; k++)
        relation_error("relation_score(..., an output NULL)", hand_A, 2, 4, w,
                       r, 2, k, KIT_E_NULL);
    relation_error("relation_score(A, N 0, 4, ...)", hand_A, 0, 4, w, r, 2, 0,
                   KIT_E_SIZE);
    relation_error("relation_score(A, 2, T 0, ...)", hand_A, 2, 0, w, r, 2, 0,
                   KIT_E_SIZE);
    relation_error("relation_score(A, 2, 4, ..., 0 cases)", hand_A, 2, 4, w, r,
                   0, 0, KIT_E_SIZE);
    /* the second case of each pair is the bad one */
    const struct {
        int w[2], r[2];
        const char *call;
    } bad[] = {
        {{3, 1},
         {1, 2},
         "relation_score: case 1's related word (2) after "
         "its word (1)"},
        {{3, 8},
         {1, 7},
         "relation_score: case 1's word 8 is past N*T - 1 = "
         "7"},
        {{3, -1}, {1, -2}, "relation_score: case 1 at position -1"},
        {{3, 2}, {1, -1}, "relation_score: case 1's related word at -1"},
        {{3, 4},
         {1, 3},
         "relation_score: case 1's word in sequence 1 (4), "
         "its related word in sequence 0 (3)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        relation_error(bad[k].call, hand_A, 2, 4, bad[k].w, bad[k].r, 2, 0,
                       KIT_E_SIZE);
}

/* A sentence of Brown tags with one case or more of every relation:
 * "The big dog in his old car seat he has not seen to him . Kennedy" */
static const char *const brown_tags[16] = {
    "AT",  "JJ",  "NN", "IN",  "PP$", "JJ",  "NN", "NN",
    "pps", "HVZ", "*",  "VBN", "IN",  "PPO", ".",  "NP-TL"};

KIT_TEST(relation_cases_brown,
         "relation cases from Brown tags (given code), then relation_score: "
         "a previous-token head scores as high as its baseline on adjectives")
{
    const int want_n[HEADS_N_RELATIONS] = {1, 3, 2, 2, 1};
    const int want_w[HEADS_N_RELATIONS][3] = {
        {2}, {2, 6, 7}, {7, 13}, {9, 11}, {6}};
    const int want_r[HEADS_N_RELATIONS][3] = {
        {0}, {1, 5, 5}, {3, 12}, {8, 8}, {4}};
    int word[8], related[8];
    for (int rel = 0; rel < HEADS_N_RELATIONS; rel++) {
        int n = heads_relation_cases(brown_tags, 16, rel, 16, word, related, 8);
        if (!KIT_CHECK(n == want_n[rel],
                       "heads_relation_cases(%s) found %d cases, not %d",
                       heads_relation_name(rel), n, want_n[rel]))
            continue;
        for (int c = 0; c < n; c++)
            KIT_CHECK(word[c] == 16 + want_w[rel][c] &&
                          related[c] == 16 + want_r[rel][c],
                      "heads_relation_cases(%s), case %d: (%d, %d), not "
                      "(%d, %d) (positions + offset 16)",
                      heads_relation_name(rel), c, word[c], related[c],
                      16 + want_w[rel][c], 16 + want_r[rel][c]);
    }
    KIT_CHECK(heads_relation_cases(brown_tags, 16, HEADS_REL_NOUN_ADJ, 0, word,
                                   related, 1) == 3 &&
                  word[0] == 2 && related[0] == 1,
              "heads_relation_cases with room for 1 case: counts all 3, "
              "writes the first");
    KIT_CHECK(heads_relation_cases(NULL, 16, 0, 0, word, related, 8) ==
                      KIT_E_NULL &&
                  heads_relation_cases(brown_tags, 0, 0, 0, word, related, 8) ==
                      KIT_E_SIZE &&
                  heads_relation_cases(brown_tags, 16, HEADS_N_RELATIONS, 0,
                                       word, related, 8) == KIT_E_SIZE,
              "heads_relation_cases: NULL tags, T 0 or a relation out of "
              "range must be errors");

    /* a previous-token head on the adjective cases (2,1), (6,5), (7,5):
     * it finds 2 of 3, and so does the baseline, offset 1 */
    enum { T = 16 };
    static float A[T * T];
    for (int i = 0; i < T; i++)
        A[i * T + (i ? i - 1 : 0)] = 1;
    int n = heads_relation_cases(brown_tags, T, HEADS_REL_NOUN_ADJ, 0, word,
                                 related, 8);
    const double want[3] = {2.0 / 3, 2.0 / 3, 1};
    expect_relation("relation_score(previous-token head, noun -> adjective)", A,
                    1, T, word, related, n, want);
}

/* ---------------------------------------------------------------------
 * What the heads do: mean ablation (exercise 8.5)
 * ------------------------------------------------------------------- */

/* concat (N, C) with entry [t][c] = 10 t + c; the answer and the
 * mistakes' outputs for head `head` and mean (d_head). */
static void ablate_cases(int N, int C, int h, int head, const float *mean,
                         float *concat, double *want, double *mis)
{
    const int dh = C / h, n = N * C;
    for (int t = 0; t < N; t++)
        for (int c = 0; c < C; c++) {
            const int k = t * C + c, in = c / dh == head,
                      next = c / dh == head + 1;
            concat[k] = (float)(10 * t + c);
            want[k] = in ? mean[c % dh] : concat[k];
            mis[k] = in ? 0 : concat[k];                          /* zeros */
            mis[n + k] = next ? mean[c % dh] : concat[k];         /* i + 1 */
            mis[2 * n + k] = concat[k] + (in ? mean[c % dh] : 0); /* added */
            mis[3 * n + k] = in && t == 0 ? mean[c % dh] : concat[k];
        }
}

static int expect_ablate(int N, int C, int h, int head)
{
    const int n = N * C, dh = C / h;
    float *concat = kit_output((size_t)n), mean[8];
    double *want = kit_alloc((size_t)n * sizeof *want);
    double *mis = kit_alloc(4 * (size_t)n * sizeof *mis);
    for (int c = 0; c < dh; c++)
        mean[c] = -1.5f - (float)c;
    ablate_cases(N, C, h, head, mean, concat, want, mis);
    const struct kit_mistake m[] = {
        {"ablating with zero instead of the mean",
         "Mean ablation writes the head's mean output, mean[c], into its "
         "block: a head set to 0 is a head saying something it never says, "
         "and the loss it costs is not what the head carries.",
         mis},
        {"ablating the wrong block (head i + 1's columns)",
         "Head i's block starts at column i * d_head: head 0 is columns 0 .. "
         "d_head - 1.",
         mis + n},
        {"the mean added to the head's output instead of replacing it",
         "Assign (=), do not add (+=): the head's own output is what the "
         "ablation removes.",
         mis + 2 * n},
        {"only the first row ablated",
         "Every row t of concat gets the mean: loop over the N rows, with "
         "row t at concat + t * C.",
         mis + 3 * n}};
    char call[120];
    snprintf(call, sizeof call,
             "mean_ablate_head(concat, mean, N %d, C %d, %d "
             "heads, head %d)",
             N, C, h, head);
    struct kit_shape shape = {0, dh, "head", {{"d_head", dh}}};
    int ok =
        KIT_EXPECT_STATUS(call, mean_ablate_head(concat, mean, N, C, h, head),
                          KIT_OK) &&
        KIT_EXPECT_IN_BOUNDS(call, "concat", concat, (size_t)n) &&
        KIT_EXPECT_TENSOR_SHAPED(call, concat, want, N, C, &shape, 0, m, 4);
    kit_output_free(concat);
    free(want), free(mis);
    return ok;
}

KIT_TEST(mean_ablate_hand, "mean_ablate_head: head 1 of 3 becomes its mean in "
                           "every row, every other entry stays")
{
    expect_ablate(3, 6, 3, 1);
}

KIT_TEST(mean_ablate_every_head, "mean_ablate_head: every head of 2, the last "
                                 "one included, and one head as wide as C")
{
    for (int head = 0; head < 2; head++)
        if (!expect_ablate(2, 8, 2, head))
            return;
    expect_ablate(2, 4, 1, 0);
}

/* One bad call: its status, and concat untouched. */
static void ablate_error(const char *call, float *concat, const float *mean,
                         int N, int C, int h, int head, int want)
{
    float copy[12];
    if (concat)
        memcpy(copy, concat, sizeof copy);
    if (!KIT_EXPECT_STATUS(call, mean_ablate_head(concat, mean, N, C, h, head),
                           want))
        return;
    KIT_CHECK(!concat || memcmp(copy, concat, sizeof copy) == 0,
              "%s returned the error but changed concat; on error write "
              "nothing",
              call);
}

KIT_TEST(mean_ablate_errors, "mean_ablate_head: NULL, sizes <= 0, heads that "
                             "do not divide C, or no such head are errors "
                             "that write nothing")
{
    float concat[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, mean[2] = {0};
    ablate_error("mean_ablate_head(NULL, ...)", NULL, mean, 2, 6, 3, 0,
                 KIT_E_NULL);
    ablate_error("mean_ablate_head(concat, NULL, ...)", concat, NULL, 2, 6, 3,
                 0, KIT_E_NULL);
    ablate_error("mean_ablate_head(concat, mean, N 0, ...)", concat, mean, 0, 6,
                 3, 0, KIT_E_SIZE);
    ablate_error("mean_ablate_head(concat, mean, 2, C 0, ...)", concat, mean, 2,
                 0, 3, 0, KIT_E_SIZE);
    ablate_error("mean_ablate_head(concat, mean, 2, 6, 0 heads, 0)", concat,
                 mean, 2, 6, 0, 0, KIT_E_SIZE);
    ablate_error("mean_ablate_head(concat, mean, 2, 6, 4 heads, 0): 4 does "
                 "not divide 6",
                 concat, mean, 2, 6, 4, 0, KIT_E_HEADS);
    ablate_error("mean_ablate_head(concat, mean, 2, 6, 3 heads, head 3)",
                 concat, mean, 2, 6, 3, 3, KIT_E_HEADS);
    ablate_error("mean_ablate_head(concat, mean, 2, 6, 3 heads, head -1)",
                 concat, mean, 2, 6, 3, -1, KIT_E_HEADS);
}

/* ---------------------------------------------------------------------
 * Mean ablation in the model: the hook and the driver (given code)
 * ------------------------------------------------------------------- */

enum { MV = 11, MT = 5, MC = 8, ML = 2, MH = 2, MB = 2, MDH = MC / MH };

/* A small model whose attention is sharp enough to tell heads apart:
 * GPT-2's start, with W_q, W_k, W_v, W_o scaled by 20. */
static int small_model(struct gpt_model *m)
{
    const struct gpt_config c = {MV, MT, MC, ML, MH, MB};
    if (!KIT_EXPECT_STATUS("gpt_init(V 11, T 5, C 8, L 2, 2 heads, B 2)",
                           gpt_init(m, &c, 3), KIT_OK))
        return 0;
    for (int k = GPT_W_Q; k <= GPT_W_O; k++)
        for (int i = 0; i < gpt_tensor_size(&c, k); i++)
            m->p.t[k][i] *= 20;
    return 1;
}

/* Block l's heads for sequence b of m's last forward pass, in double,
 * from the LN1 output it kept: concat (T, C), head i's block
 * softmax(causal(Q_i K_i^T / sqrt(d_head))) V_i. */
static void ref_concat(const struct gpt_model *m, int l, int b, double *concat)
{
    const int T = m->T, C = MC, N = m->B * m->T;
    const float *X = m->a.ln1 + ((size_t)l * N + (size_t)b * T) * C;
    struct mha_weights w = gpt_block_attn(&m->p, &m->cfg, l);
    double Q[MT * MC], K[MT * MC], V[MT * MC];
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) {
            double q = 0, k = 0, v = 0;
            for (int e = 0; e < C; e++) {
                q += (double)X[t * C + e] * w.W_q[e * C + c];
                k += (double)X[t * C + e] * w.W_k[e * C + c];
                v += (double)X[t * C + e] * w.W_v[e * C + c];
            }
            Q[t * C + c] = q, K[t * C + c] = k, V[t * C + c] = v;
        }
    for (int i = 0; i < MH; i++)
        for (int t = 0; t < T; t++) {
            double s[MT], max = -INFINITY, sum = 0;
            for (int j = 0; j <= t; j++) {
                s[j] = 0;
                for (int c = i * MDH; c < (i + 1) * MDH; c++)
                    s[j] += Q[t * C + c] * K[j * C + c];
                s[j] /= sqrt((double)MDH);
                max = fmax(max, s[j]);
            }
            for (int j = 0; j <= t; j++)
                sum += s[j] = exp(s[j] - max);
            for (int c = i * MDH; c < (i + 1) * MDH; c++) {
                double o = 0;
                for (int j = 0; j <= t; j++)
                    o += s[j] / sum * V[j * C + c];
                concat[t * C + c] = o;
            }
        }
}

/* out (T, C) += (new_i - head_i) W_o[rows of head i], in double:
 * new_i (d_head) the same at every row, or NULL for 0. */
static void ref_replace(const struct gpt_model *m, int l, const double *concat,
                        int i, const float *new_i, double *out)
{
    struct mha_weights w = gpt_block_attn(&m->p, &m->cfg, l);
    for (int t = 0; t < m->T; t++)
        for (int c = 0; c < MC; c++)
            for (int e = 0; e < MDH; e++) {
                double d =
                    (new_i ? new_i[e] : 0) - concat[t * MC + i * MDH + e];
                out[t * MC + c] += d * w.W_o[(i * MDH + e) * MC + c];
            }
}

KIT_TEST(ablation_hook_model,
         "gpt_forward with m->ablation: block 1's attention output becomes "
         "concat' W_o with head 0 replaced by the given mean, exactly")
{
    struct gpt_model m;
    if (!small_model(&m))
        return;
    const int x[MB * MT] = {1, 5, 2, 9, 3, 4, 4, 10, 0, 7};
    const int y[MB * MT] = {5, 2, 9, 3, 6, 4, 10, 0, 7, 8};
    const size_t NC = (size_t)MB * MT * MC;
    float *attn0 = kit_alloc(2 * NC * sizeof *attn0), *attn1 = attn0 + NC;
    double *want = kit_alloc(4 * NC * sizeof *want);
    double *zero = want + NC, *next = zero + NC, *added = next + NC;
    double concat[MT * MC];
    const float mean[MDH] = {0.5f, -0.75f, 0.25f, 1.0f};
    if (!KIT_EXPECT_STATUS("gpt_forward(x, y, B 2, T 5)",
                           gpt_forward(&m, x, y, MB, MT), KIT_OK))
        goto done;
    const float loss = m.loss;
    memcpy(attn0, m.a.attn, NC * sizeof *attn0);
    memcpy(attn1, m.a.attn + NC, NC * sizeof *attn1);
    /* what block 1's output becomes: with the mean, and the mistakes */
    for (int b = 0; b < MB; b++) {
        ref_concat(&m, 1, b, concat);
        for (size_t k = 0; k < (size_t)MT * MC; k++) {
            size_t at = (size_t)b * MT * MC + k;
            want[at] = zero[at] = next[at] = attn1[at];
            added[at] = attn1[at];
        }
        ref_replace(&m, 1, concat, 0, mean, want + b * MT * MC);
        ref_replace(&m, 1, concat, 0, NULL, zero + b * MT * MC);
        ref_replace(&m, 1, concat, 1, mean, next + b * MT * MC);
        for (int t = 0; t < MT; t++) { /* + mean W_o[rows of head 0] */
            struct mha_weights w = gpt_block_attn(&m.p, &m.cfg, 1);
            for (int c = 0; c < MC; c++)
                for (int e = 0; e < MDH; e++)
                    added[b * MT * MC + t * MC + c] +=
                        (double)mean[e] * w.W_o[e * MC + c];
        }
    }
    const struct gpt_ablation ab = {1, 0, mean};
    m.ablation = &ab;
    if (!KIT_EXPECT_STATUS("gpt_forward(x, y) with block 1's head 0 ablated",
                           gpt_forward(&m, x, y, MB, MT), KIT_OK))
        goto done;
    const struct kit_mistake mis[] = {
        {"ablating with zero instead of the mean",
         "mean_ablate_head() must write mean[c], not 0, into the head's "
         "block.",
         zero},
        {"ablating the wrong block (head i + 1's columns)",
         "Head i's block of concat starts at column i * d_head.", next},
        {"the mean added to the head's output instead of replacing it",
         "mean_ablate_head() assigns the mean; it does not add it.", added}};
    KIT_CHECK(memcmp(attn0, m.a.attn, NC * sizeof *attn0) == 0,
              "gpt_forward with block 1 ablated changed block 0's attention "
              "output; only block 1 may change");
    KIT_EXPECT_TENSOR("block 1's attention output with head 0 mean-ablated",
                      m.a.attn + NC, want, MB * MT, MC, 1e-5, mis, 3);
    KIT_CHECK(m.loss != loss, "ablating a head left the loss at %g exactly",
              (double)loss);
    KIT_EXPECT_STATUS("gpt_backward() after an ablated forward pass",
                      gpt_backward(&m), KIT_E_SIZE);
    const struct gpt_ablation bad = {2, 0, mean};
    m.ablation = &bad;
    KIT_EXPECT_STATUS("gpt_forward with an ablation of block 2 of 2",
                      gpt_forward(&m, x, y, MB, MT), KIT_E_SIZE);
    m.ablation = NULL;
    if (KIT_EXPECT_STATUS("gpt_forward(x, y) without the ablation again",
                          gpt_forward(&m, x, y, MB, MT), KIT_OK))
        KIT_CHECK(m.loss == loss,
                  "without the ablation the loss must come back exactly: "
                  "%.9g, not %.9g",
                  (double)loss, (double)m.loss);
done:
    free(attn0), free(want);
    gpt_free(&m);
}

KIT_TEST(ablation_scan_driver,
         "heads_means and heads_ablation_scan (given code): every head's "
         "mean output, and the loss per class of the predicted word without "
         "each head")
{
    struct gpt_model m;
    if (!small_model(&m))
        return;
    enum { S = 3 }; /* 3 sequences: batches of 2 and 1 */
    const int x[S * MT] = {1, 5, 2, 9, 3, 4, 4, 10, 0, 7, 6, 6, 1, 2, 8};
    const int y[S * MT] = {5, 2, 9, 3, 6, 4, 10, 0, 7, 8, 6, 1, 2, 8, 3};
    unsigned char cls[S * MT];
    for (int k = 0; k < S * MT; k++)
        cls[k] = (unsigned char)(y[k] % 3 == 0 ? TAG_NOUN
                                 : k % 2       ? TAG_DET
                                               : TAG_VERB);
    float means[ML * MC], loss[ML * MH * TAG_N_CLASSES], base[TAG_N_CLASSES];
    int count[TAG_N_CLASSES];
    if (!KIT_EXPECT_STATUS("heads_means(m, x, 3 sequences, T 5)",
                           heads_means(&m, x, S, MT, means), KIT_OK))
        goto done;
    /* the means, in double, one sequence at a time */
    double want[ML * MC] = {0}, concat[MT * MC];
    for (int s = 0; s < S; s++) {
        if (!KIT_EXPECT_STATUS("gpt_forward(one sequence)",
                               gpt_forward(&m, x + s * MT, NULL, 1, MT),
                               KIT_OK))
            goto done;
        for (int l = 0; l < ML; l++) {
            ref_concat(&m, l, 0, concat);
            for (int k = 0; k < MT * MC; k++)
                want[l * MC + k % MC] += concat[k] / (S * MT);
        }
    }
    KIT_EXPECT_TENSOR("heads_means: (L, h * d_head)", means, want, ML, MC, 1e-5,
                      NULL, 0);
    if (!KIT_EXPECT_STATUS(
            "heads_ablation_scan(m, x, y, classes, 3, 5)",
            heads_ablation_scan(&m, x, y, cls, S, MT, means, loss, base, count),
            KIT_OK))
        goto done;
    /* each number against a forward pass of its own */
    for (int l = -1; l < ML; l++)
        for (int i = 0; i < MH; i++) {
            if (l < 0 && i > 0)
                continue;
            struct gpt_ablation ab = {l, i, means + (l * MH + i) * MDH};
            double sum[TAG_N_CLASSES] = {0}, want_l[TAG_N_CLASSES];
            int n[TAG_N_CLASSES] = {0};
            for (int s = 0; s < S; s++) {
                m.ablation = l < 0 ? NULL : &ab;
                gpt_forward(&m, x + s * MT, y + s * MT, 1, MT);
                for (int t = 0; t < MT; t++)
                    sum[cls[s * MT + t]] += m.a.losses[t], n[cls[s * MT + t]]++;
            }
            m.ablation = NULL;
            for (int c = 0; c < TAG_N_CLASSES; c++)
                want_l[c] = n[c] ? sum[c] / n[c] : 0;
            if (l < 0) {
                KIT_EXPECT_TENSOR("heads_ablation_scan: base", base, want_l, 1,
                                  TAG_N_CLASSES, 1e-5, NULL, 0);
                for (int c = 0; c < TAG_N_CLASSES; c++)
                    KIT_CHECK(count[c] == n[c], "count[%s] = %d, not %d",
                              corpus_tag_class_name(c), count[c], n[c]);
            } else {
                char what[80];
                snprintf(what, sizeof what,
                         "heads_ablation_scan: block %d head %d", l, i);
                KIT_EXPECT_TENSOR(what, loss + (l * MH + i) * TAG_N_CLASSES,
                                  want_l, 1, TAG_N_CLASSES, 1e-5, NULL, 0);
            }
        }
    cls[4] = TAG_N_CLASSES;
    KIT_EXPECT_STATUS(
        "heads_ablation_scan with a class out of range",
        heads_ablation_scan(&m, x, y, cls, S, MT, means, loss, base, count),
        KIT_E_SIZE);
    KIT_CHECK(m.ablation == NULL, "heads_ablation_scan left m->ablation set");
done:
    gpt_free(&m);
}

static const struct kit_test *const ch8_tests[] = {
    &corpus_parse_tokens,
    &corpus_tag_classes,
    &corpus_vocab_order,
    &corpus_vocab_impossible,
    &corpus_split_rule,
    &corpus_split_empty,
    &corpus_encode_sentence,
    &corpus_file_round_trip,
    &corpus_file_malformed,
    &corpus_bad_token,
    &corpus_bad_bytes,
    &corpus_empty_file,
    &corpus_bad_names,
    &offset_profile_hand,
    &offset_profile_previous_token,
    &offset_profile_one_token,
    &offset_profile_errors,
    &relation_score_hand,
    &relation_score_one_token,
    &relation_score_errors,
    &relation_cases_brown,
    &mean_ablate_hand,
    &mean_ablate_every_head,
    &mean_ablate_errors,
    &ablation_hook_model,
    &ablation_scan_driver,
    NULL, /* keep one test per line */
};
KIT_CHAPTER(8, "Many heads on real English", "ch8_lm.c", ch8_tests)
