/*
 * tests/given/corpus.c: the kit's tests of the given corpus layer
 * (given/corpus.c): the Brown corpus's word/tag files read, lowercased
 * and tagged, the vocabulary with its unknown token, the split by text,
 * the binary file, and every kind of bad input. No student code is
 * called, so these run in make check (tools/checks/12-given.sh), not in
 * a chapter's make test.
 *
 * The tests never need the real corpus: each writes small corpus files
 * of its own into a fresh temporary folder and removes it at the end.
 * tools/checks/68-corpus.sh checks the real corpus.
 *
 * Dimension letters: N = tokens, V = vocabulary size.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "corpus.h"
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

static const struct kit_test *const given_corpus_tests[] = {
    &corpus_parse_tokens,    &corpus_tag_classes,
    &corpus_vocab_order,     &corpus_vocab_impossible,
    &corpus_split_rule,      &corpus_split_empty,
    &corpus_encode_sentence, &corpus_file_round_trip,
    &corpus_file_malformed,  &corpus_bad_token,
    &corpus_bad_bytes,       &corpus_empty_file,
    &corpus_bad_names,       NULL, /* keep one test per line */
};
KIT_CHAPTER_AS(80, "Given code: the Brown corpus reader", "corpus.c",
               given_corpus_tests)
