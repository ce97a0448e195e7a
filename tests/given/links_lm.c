/*
 * tests/given/links_lm.c: the kit's tests of chapter 8's relations from
 * the parser's links (given/links_lm.c): a small links file written by
 * hand, read and checked against a corpus of three texts; every kind of
 * bad row refused with KIT_E_INPUT and a message naming the line; the
 * cases on windows (a link whose partner is outside the window is not a
 * case, the later word looks at the earlier, a pair linked twice is one
 * case, the path O then S); the offset and class baselines and the hard
 * cases on seven cases worked by hand; and the best-of-N null. No
 * student code is called, so these run in make check
 * (tools/checks/12-given.sh), not in a chapter's make test.
 *
 * The corpus is only its texts (links_read() reads nothing else):
 *   ca02  validation, corpus tokens  0 ..  9
 *   ca03  test,       corpus tokens 10 .. 19
 *   ca01  training,   corpus tokens 20 .. 24
 * The links file (good_tsv below), by corpus token:
 *   D (1, 3) twice (labels Ds**c and Dmc), A (2, 3), S (3, 5), O (5, 7),
 *   J (10, 12), MV (12, 19), "_" (14, 16); and a wall (-1) and a link
 *   within one token (4, 4), both dropped.
 *
 * Dimension letters: N = windows, T = tokens per window.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "kit_test.h"
#include "links_lm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------
 * A temporary folder for the links files, and the corpus's texts
 * ------------------------------------------------------------------- */

static char tmp_dir[64];
static char tmp_path[512];

static int tmp_make(void)
{
    strcpy(tmp_dir, "/tmp/kit-links-XXXXXX");
    return KIT_CHECK(mkdtemp(tmp_dir) != NULL,
                     "cannot make a temporary folder in /tmp");
}

/* Write text as the file name of the temporary folder; its path (valid
 * until the next call). */
static const char *tmp_text(const char *name, const char *text)
{
    snprintf(tmp_path, sizeof tmp_path, "%s/%s", tmp_dir, name);
    FILE *f = fopen(tmp_path, "wb");
    KIT_CHECK(f != NULL, "cannot write %s", tmp_path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return tmp_path;
}

static void tmp_remove(const char *name)
{
    snprintf(tmp_path, sizeof tmp_path, "%s/%s", tmp_dir, name);
    unlink(tmp_path);
}

static struct corpus_text texts[3] = {
    {"ca02", SPLIT_VALID, 0, 10},
    {"ca03", SPLIT_TEST, 10, 10},
    {"ca01", SPLIT_TRAIN, 20, 5},
};

/* A corpus of the three texts above, nothing else. */
static struct corpus_data small_corpus(void)
{
    struct corpus_data d;
    memset(&d, 0, sizeof d);
    d.n_texts = 3;
    d.texts = texts;
    d.n_tokens = 25;
    return d;
}

#define HEADER "split\ttext\tsentence\tleft\tright\tlabel\n"

static const char good_tsv[] = HEADER "valid\tca02\t0\t-1\t3\tWd\n"
                                      "valid\tca02\t0\t1\t3\tDs**c\n"
                                      "valid\tca02\t0\t2\t3\tA\n"
                                      "valid\tca02\t0\t3\t5\tSs\n"
                                      "valid\tca02\t0\t5\t7\tOs\n"
                                      "valid\tca02\t0\t4\t4\tXx\n"
                                      "valid\tca02\t0\t1\t3\tDmc\n"
                                      "test\tca03\t0\t0\t2\tJp\n"
                                      "test\tca03\t0\t4\t6\t_IBGC\n"
                                      "test\tca03\t0\t2\t9\tMVp\n";

/* Read good_tsv into lk; 1 when it was read. */
static int read_good(struct links *lk, const struct corpus_data *d)
{
    char err[LINKS_ERR_LEN] = "";
    int rc = links_read(lk, tmp_text("good.tsv", good_tsv), d, err);
    if (!KIT_EXPECT_STATUS("links_read(good.tsv)", rc, KIT_OK)) {
        KIT_CHECK(0, "links_read said: %s", err);
        return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------- */

KIT_TEST(links_read_by_hand, "links: a hand-made links file read: corpus "
                             "token indices, families, walls and links "
                             "within a token dropped, sorted by right token")
{
    static const struct {
        int left, right;
        const char *family;
    } want[] = {{1, 3, "D"}, {1, 3, "D"},   {2, 3, "A"},   {3, 5, "S"},
                {5, 7, "O"}, {10, 12, "J"}, {14, 16, "_"}, {12, 19, "MV"}};
    const int n_want = (int)(sizeof want / sizeof want[0]);
    struct corpus_data d = small_corpus();
    struct links lk;
    if (!tmp_make())
        return;
    if (read_good(&lk, &d)) {
        if (KIT_CHECK(lk.n == n_want,
                      "good.tsv has %d links between two tokens (a wall and "
                      "a link within one token dropped); read %d",
                      n_want, lk.n))
            for (int i = 0; i < n_want; i++)
                KIT_CHECK(lk.left[i] == want[i].left &&
                              lk.right[i] == want[i].right &&
                              strcmp(lk.family[i], want[i].family) == 0,
                          "link %d should be %s (%d, %d) in corpus tokens "
                          "(sorted by right token, then left, then family); "
                          "it is %s (%d, %d)",
                          i, want[i].family, want[i].left, want[i].right,
                          lk.family[i], lk.left[i], lk.right[i]);
    }
    links_free(&lk);
    KIT_CHECK(lk.n == 0 && lk.left == NULL,
              "links_free should leave an empty set of links");
    links_free(&lk); /* twice is safe */
    KIT_CHECK(
        strcmp(links_relation_key(LINKS_REL_OS), "OS") == 0 &&
            strcmp(links_relation_key(LINKS_REL_IDIOM), "_") == 0 &&
            strcmp(links_relation_key(LINKS_N_RELATIONS), "?") == 0 &&
            strcmp(links_relation_name(-1), "?") == 0 &&
            strcmp(links_relation_name(LINKS_REL_D), "noun -> determiner") == 0,
        "the relations' keys and names: OS, _, and ? out of range");
    tmp_remove("good.tsv");
    rmdir(tmp_dir);
}

KIT_TEST(links_read_bad, "links: every kind of bad row refused with "
                         "KIT_E_INPUT and a message naming the line, and "
                         "nothing kept")
{
    static const struct {
        const char *what, *text, *says;
    } bad[] = {
        {"a wrong header", "split\ttext\tleft\tright\tlabel\n",
         ":1: the header"},
        {"five columns", HEADER "valid\tca02\t0\t1\t3\n",
         ":2: 5 columns, not 6"},
        {"seven columns", HEADER "valid\tca02\t0\t1\t3\tD\tx\n",
         ":2: 7 columns, not 6"},
        {"a text not in the corpus",
         HEADER "valid\tca02\t0\t1\t3\tD\n"
                "valid\tcz99\t0\t1\t3\tD\n",
         ":3: the text cz99 is not a valid text"},
        {"a validation text called test", HEADER "test\tca02\t0\t1\t3\tD\n",
         ":2: the text ca02 is not a test text"},
        {"a training text", HEADER "valid\tca01\t0\t1\t3\tD\n",
         ":2: the text ca01 is not a valid text"},
        {"an unknown split", HEADER "train\tca01\t0\t1\t3\tD\n",
         ":2: the text ca01 is not a train text"},
        {"a token past the text's end", HEADER "valid\tca02\t0\t1\t10\tD\n",
         ":2: the tokens 1, 10 are not"},
        {"a token before -1", HEADER "valid\tca02\t0\t-2\t3\tD\n",
         ":2: the tokens -2, 3 are not"},
        {"a token that is not a number", HEADER "test\tca03\t0\t1x\t3\tD\n",
         ":2: the tokens 1x, 3 are not"},
        {"left after right", HEADER "valid\tca02\t0\t5\t3\tD\n",
         ":2: the tokens 5, 3 are not"},
        {"a label with no family", HEADER "valid\tca02\t0\t1\t3\txy\n",
         ":2: the label xy has no family"},
        {"an unended last line", HEADER "valid\tca02\t0\t1\t3\tD",
         ":2: a line that is too long or unended"},
        {"an empty file", "", ":0: an empty file"},
    };
    static char long_row[sizeof HEADER + 700];
    struct corpus_data d = small_corpus();
    if (!tmp_make())
        return;
    /* a row longer than any the parser writes: refused, not cut */
    snprintf(long_row, sizeof long_row, "%svalid\tca02\t0\t1\t3\tD", HEADER);
    const size_t at = strlen(long_row);
    memset(long_row + at, 'x', 600);
    long_row[at + 600] = '\n', long_row[at + 601] = '\0';
    const size_t n_bad = sizeof bad / sizeof bad[0];
    for (size_t k = 0; k <= n_bad; k++) {
        const char *what =
            k == n_bad ? "a line of 600 characters" : bad[k].what;
        const char *text = k == n_bad ? long_row : bad[k].text;
        const char *says =
            k == n_bad ? ":2: a line that is too long or unended" : bad[k].says;
        char err[LINKS_ERR_LEN] = "";
        struct links lk;
        const char *path = tmp_text("bad.tsv", text);
        int rc = links_read(&lk, path, &d, err);
        KIT_CHECK(rc == KIT_E_INPUT,
                  "%s: links_read returned %s, not KIT_E_INPUT", what,
                  kit_status_name(rc));
        KIT_CHECK(strstr(err, path) != NULL && strstr(err, says),
                  "%s: the message should name the file and say \"%s\"; it "
                  "is \"%s\"",
                  what, says, err);
        KIT_CHECK(lk.n == 0 && !lk.left && !lk.right && !lk.family,
                  "%s: a refused file must leave the links empty; %d kept",
                  what, lk.n);
        links_free(&lk);
    }
    tmp_remove("bad.tsv");
    char err[LINKS_ERR_LEN] = "";
    struct links lk;
    snprintf(tmp_path, sizeof tmp_path, "%s/missing.tsv", tmp_dir);
    KIT_CHECK(links_read(&lk, tmp_path, &d, err) == KIT_E_INPUT &&
                  strstr(err, "cannot be read"),
              "a missing file should be KIT_E_INPUT, \"cannot be read\"; the "
              "message is \"%s\"",
              err);
    KIT_EXPECT_STATUS("links_read(NULL, ...)",
                      links_read(NULL, tmp_path, &d, err), KIT_E_NULL);
    KIT_EXPECT_STATUS("links_read(..., NULL corpus, ...)",
                      links_read(&lk, tmp_path, NULL, err), KIT_E_NULL);
    rmdir(tmp_dir);
}

/* ---------------------------------------------------------------------
 * Cases on windows
 * ------------------------------------------------------------------- */

/* The cases of rel on windows first (N) of T tokens against want (2 *
 * n_want: word, related, flat positions), named by what. */
static void expect_cases(const struct links *lk, int rel, const long *first,
                         int N, int T, const int *want, int n_want,
                         const char *what)
{
    int word[16], related[16];
    int n = links_relation_cases(lk, rel, first, N, T, NULL, NULL, 0);
    if (!KIT_CHECK(n == n_want, "%s: %d case(s) of %s; counted %d", what,
                   n_want, links_relation_key(rel), n))
        return;
    int got = links_relation_cases(lk, rel, first, N, T, word, related, 16);
    KIT_CHECK(got == n, "%s: writing the cases counted %d, counting alone %d",
              what, got, n);
    for (int c = 0; c < n_want && c < got; c++)
        KIT_CHECK(word[c] == want[2 * c] && related[c] == want[2 * c + 1],
                  "%s: case %d of %s should be (word %d, related %d), the "
                  "later word looking back; it is (%d, %d)",
                  what, c, links_relation_key(rel), want[2 * c],
                  want[2 * c + 1], word[c], related[c]);
}

KIT_TEST(links_cases_on_windows, "links: cases on windows, later word -> "
                                 "earlier, a partner outside the window no "
                                 "case, a pair linked twice one case")
{
    struct corpus_data d = small_corpus();
    struct links lk;
    if (!tmp_make())
        return;
    if (!read_good(&lk, &d)) {
        tmp_remove("good.tsv"), rmdir(tmp_dir);
        return;
    }
    /* windows 0 .. 3 and 4 .. 7: S (3, 5) crosses them */
    const long two[2] = {0, 4};
    const int d_want[2] = {3, 1}, a_want[2] = {3, 2}, o_want[2] = {7, 5};
    expect_cases(&lk, LINKS_REL_D, two, 2, 4, d_want, 1,
                 "D (1, 3) linked twice, windows 0..3 and 4..7");
    expect_cases(&lk, LINKS_REL_A, two, 2, 4, a_want, 1, "A (2, 3)");
    expect_cases(&lk, LINKS_REL_S, two, 2, 4, NULL, 0,
                 "S (3, 5), across the two windows");
    expect_cases(&lk, LINKS_REL_O, two, 2, 4, o_want, 1,
                 "O (5, 7), in the second window");
    expect_cases(&lk, LINKS_REL_OS, two, 2, 4, NULL, 0,
                 "O (5, 7) then S (3, 5): the subject outside the window");
    KIT_CHECK(links_family_cases(&lk, "D", two, 2, 4) == 1 &&
                  links_family_cases(&lk, "S", two, 2, 4) == 0,
              "links_family_cases: D once (linked twice), S none (across "
              "windows); counted %d, %d",
              links_family_cases(&lk, "D", two, 2, 4),
              links_family_cases(&lk, "S", two, 2, 4));
    /* one window of tokens 2 .. 7: the path fits, so does S; D does not */
    const long mid[1] = {2};
    const int os_want[2] = {5, 1}, s_want[2] = {3, 1};
    expect_cases(&lk, LINKS_REL_OS, mid, 1, 6, os_want, 1,
                 "O (5, 7) then S (3, 5), window 2..7: object -> subject");
    expect_cases(&lk, LINKS_REL_S, mid, 1, 6, s_want, 1,
                 "S (3, 5), window 2..7");
    expect_cases(&lk, LINKS_REL_D, mid, 1, 6, NULL, 0,
                 "D (1, 3), its determiner before the window 2..7");
    /* the test text: windows 10 .. 19 and 12 .. 21 (a window may run
     * past a text: links never do), in window order */
    const long test[2] = {10, 12};
    const int j_want[2] = {2, 0}, mv_want[4] = {9, 2, 17, 10};
    const int idiom_want[4] = {6, 4, 14, 12};
    expect_cases(&lk, LINKS_REL_J, test, 2, 10, j_want, 1,
                 "J (10, 12): in the first test window only");
    expect_cases(&lk, LINKS_REL_MV, test, 2, 10, mv_want, 2,
                 "MV (12, 19): in both test windows");
    expect_cases(&lk, LINKS_REL_IDIOM, test, 2, 10, idiom_want, 2,
                 "_ (14, 16): in both test windows");
    /* counted past max_cases, not written */
    int word[1] = {-7}, related[1] = {-7};
    int n =
        links_relation_cases(&lk, LINKS_REL_MV, test, 2, 10, word, related, 1);
    KIT_CHECK(n == 2 && word[0] == 9 && related[0] == 2,
              "with max_cases 1, MV's 2 cases are counted and the first "
              "written; got %d, (%d, %d)",
              n, word[0], related[0]);
    KIT_EXPECT_STATUS("links_relation_cases(rel out of range)",
                      links_relation_cases(&lk, LINKS_N_RELATIONS, test, 2, 10,
                                           NULL, NULL, 0),
                      KIT_E_SIZE);
    KIT_EXPECT_STATUS("links_relation_cases(T 0)",
                      links_relation_cases(&lk, 0, test, 2, 0, NULL, NULL, 0),
                      KIT_E_SIZE);
    KIT_EXPECT_STATUS("links_relation_cases(no first)",
                      links_relation_cases(&lk, 0, NULL, 2, 10, NULL, NULL, 0),
                      KIT_E_NULL);
    links_free(&lk);
    tmp_remove("good.tsv");
    rmdir(tmp_dir);
}

/* ---------------------------------------------------------------------
 * The offset and class baselines
 * ------------------------------------------------------------------- */

KIT_TEST(links_baselines_by_hand, "links: the best offset, the class rule "
                                  "and the hard cases of seven cases worked "
                                  "by hand")
{
    /* two windows of 5 tokens:
     *   0 det  1 adj  2 det  3 det  4 noun | 5 noun 6 prep 7 det 8 noun
     *   9 verb
     * case (word, related) offset, the nearest earlier token of the
     * related word's class, hard (neither at offset 2 nor the nearest):
     *   (4, 2)  2  det: 3, not 2          at the offset
     *   (3, 1)  2  adj: 1                 both
     *   (4, 1)  3  adj: 1                 the class rule only
     *   (4, 0)  4  det: 3, not 0          hard
     *   (9, 7)  2  det: 7                 both
     *   (9, 5)  4  noun: 8, not 5         hard
     *   (8, 5)  3  noun: 5                the class rule only
     * offsets: 2 three times, 3 twice, 4 twice: k = 2, 3/7;
     * the class rule: 4/7; hard: 2. */
    const unsigned char cls[10] = {TAG_DET,  TAG_ADJ,  TAG_DET,  TAG_DET,
                                   TAG_NOUN, TAG_NOUN, TAG_PREP, TAG_DET,
                                   TAG_NOUN, TAG_VERB};
    const int word[7] = {4, 3, 4, 4, 9, 9, 8}, rel[7] = {2, 1, 1, 0, 7, 5, 5};
    const unsigned char hard_want[7] = {0, 0, 0, 1, 0, 1, 0};
    unsigned char hard[7];
    memset(hard, 9, sizeof hard);
    struct links_baseline b;
    int rc = links_baselines(word, rel, 7, cls, 2, 5, hard, &b);
    if (KIT_EXPECT_STATUS("links_baselines(7 cases)", rc, KIT_OK)) {
        KIT_CHECK(b.n_cases == 7 && b.offset_k == 2 &&
                      fabsf(b.offset_base - 3.0f / 7) < 1e-6f,
                  "the best offset should be 2, 3 of 7 cases; got %d, %.4f "
                  "(n_cases %d)",
                  b.offset_k, (double)b.offset_base, b.n_cases);
        KIT_CHECK(fabsf(b.class_base - 4.0f / 7) < 1e-6f,
                  "the class rule should find 4 of 7; got %.4f",
                  (double)b.class_base);
        KIT_CHECK(b.n_hard == 2, "2 cases are hard; counted %d", b.n_hard);
        for (int c = 0; c < 7; c++)
            KIT_CHECK(hard[c] == hard_want[c],
                      "case %d (%d, %d) should be marked %s; hard[%d] is %d", c,
                      word[c], rel[c], hard_want[c] ? "hard" : "not hard", c,
                      hard[c]);
    }
    /* (4, 1), (4, 0), (9, 5), (8, 5): the offsets 3 and 4 twice each,
     * the smaller wins the tie; the class rule finds (4, 1) and (8, 5);
     * (4, 0) and (9, 5), at offset 4 and missed by the class rule, are
     * hard */
    const int w2[4] = {4, 4, 9, 8}, r2[4] = {1, 0, 5, 5};
    rc = links_baselines(w2, r2, 4, cls, 2, 5, NULL, &b);
    if (KIT_EXPECT_STATUS("links_baselines(4 cases, a tie)", rc, KIT_OK))
        KIT_CHECK(b.offset_k == 3 && fabsf(b.offset_base - 0.5f) < 1e-6f &&
                      fabsf(b.class_base - 0.5f) < 1e-6f && b.n_hard == 2,
                  "offsets 3 and 4 twice each: k should be 3 (the smaller), "
                  "0.5, the class rule 0.5, 2 hard; got %d, %.4f, %.4f, %d",
                  b.offset_k, (double)b.offset_base, (double)b.class_base,
                  b.n_hard);
    rc = links_baselines(NULL, NULL, 0, NULL, 2, 5, NULL, &b);
    if (KIT_EXPECT_STATUS("links_baselines(no case)", rc, KIT_OK))
        KIT_CHECK(b.n_cases == 0 && b.offset_k == 0 && b.offset_base == 0 &&
                      b.class_base == 0 && b.n_hard == 0,
                  "with no case every share should be 0");
    const int across_w[1] = {5}, across_r[1] = {4};
    const int after_w[1] = {2}, after_r[1] = {3};
    const int out_w[1] = {10}, out_r[1] = {9};
    KIT_EXPECT_STATUS(
        "links_baselines(a case across two windows)",
        links_baselines(across_w, across_r, 1, cls, 2, 5, NULL, &b),
        KIT_E_SIZE);
    KIT_EXPECT_STATUS("links_baselines(a related word after its word)",
                      links_baselines(after_w, after_r, 1, cls, 2, 5, NULL, &b),
                      KIT_E_SIZE);
    KIT_EXPECT_STATUS("links_baselines(a word past N*T)",
                      links_baselines(out_w, out_r, 1, cls, 2, 5, NULL, &b),
                      KIT_E_SIZE);
    KIT_EXPECT_STATUS("links_baselines(NULL x_class)",
                      links_baselines(word, rel, 7, NULL, 2, 5, NULL, &b),
                      KIT_E_NULL);
}

/* ---------------------------------------------------------------------
 * The best-of-N null
 * ------------------------------------------------------------------- */

KIT_TEST(links_null, "links: the best-of-N null: fixed by its seed, a p95 at "
                     "least its mean, more heads a larger null, and two "
                     "heads on one case worked by hand")
{
    const int n[3] = {200, 200, 50};
    const float p[3] = {0.3f, 0.3f, 0.6f};
    float m1[3], q1[3], am1, aq1, m2[3], q2[3], am2, aq2;
    int rc = links_best_of_null(n, p, 3, 32, 2000, 42, m1, q1, &am1, &aq1);
    if (!KIT_EXPECT_STATUS("links_best_of_null(32 heads)", rc, KIT_OK))
        return;
    rc = links_best_of_null(n, p, 3, 32, 2000, 42, m2, q2, &am2, &aq2);
    KIT_CHECK(rc == KIT_OK && memcmp(m1, m2, sizeof m1) == 0 &&
                  memcmp(q1, q2, sizeof q1) == 0 && am1 == am2 && aq1 == aq2,
              "the same seed should give the same null, bit for bit");
    rc = links_best_of_null(n, p, 3, 32, 2000, 43, m2, q2, &am2, &aq2);
    KIT_CHECK(rc == KIT_OK && (m1[0] != m2[0] || m1[1] != m2[1]),
              "another seed should give other draws; seed 42 and 43 both "
              "give mean %.6f, %.6f",
              (double)m1[0], (double)m1[1]);
    /* relations 0 and 1 have the same n and p, drawn one after the
     * other: other draws of the same law */
    KIT_CHECK(m1[0] != m1[1] && fabsf(m1[0] - m1[1]) < 0.01f,
              "two relations of the same n and p should get other draws of "
              "the same law: means %.5f and %.5f",
              (double)m1[0], (double)m1[1]);
    for (int r = 0; r < 3; r++)
        KIT_CHECK(q1[r] >= m1[r] && am1 >= m1[r] && aq1 >= q1[r],
                  "relation %d: its p95 (%.4f) should be at least its mean "
                  "(%.4f), and the best over all (mean %.4f, p95 %.4f) at "
                  "least the relation's",
                  r, (double)q1[r], (double)m1[r], (double)am1, (double)aq1);
    /* one head: its margin has mean 0; the best of 32 is well above */
    float o_m[3], o_q[3], o_am, o_aq;
    rc = links_best_of_null(n, p, 3, 1, 4000, 42, o_m, o_q, &o_am, &o_aq);
    if (KIT_EXPECT_STATUS("links_best_of_null(1 head)", rc, KIT_OK)) {
        KIT_CHECK(fabsf(o_m[0]) < 0.005f && o_q[0] > 0.03f && o_q[0] < 0.08f,
                  "one head on 200 cases at p 0.3: its margin's mean should "
                  "be about 0 and its p95 about 1.645 sqrt(0.21/200) = 0.053; "
                  "got %.4f, %.4f",
                  (double)o_m[0], (double)o_q[0]);
        for (int r = 0; r < 3; r++)
            KIT_CHECK(o_m[r] < m1[r] && o_q[r] < q1[r],
                      "relation %d: 1 head's null (mean %.4f, p95 %.4f) "
                      "should be below 32 heads' (%.4f, %.4f)",
                      r, (double)o_m[r], (double)o_q[r], (double)m1[r],
                      (double)q1[r]);
    }
    /* one case at p 0.5: a head's margin is +0.5 or -0.5, each half the
     * time; the best of 2 is +0.5 three times in four: mean 0.25, p95 0.5 */
    const int one = 1;
    const float half = 0.5f;
    float hm, hq, ham, haq;
    rc = links_best_of_null(&one, &half, 1, 2, 10000, 7, &hm, &hq, &ham, &haq);
    if (KIT_EXPECT_STATUS("links_best_of_null(1 case, 2 heads)", rc, KIT_OK))
        KIT_CHECK(fabsf(hm - 0.25f) < 0.02f && hq == 0.5f && ham == hm,
                  "two heads on one case at p 0.5: the best margin's mean "
                  "should be 0.25 (+0.5 three times in four) and its p95 "
                  "0.5; got %.4f, %.4f (over all: %.4f)",
                  (double)hm, (double)hq, (double)ham);
    /* no chance at all: p 0 or 1, or no case */
    const int n0[3] = {100, 100, 0};
    const float p0[3] = {0.0f, 1.0f, 0.4f};
    rc = links_best_of_null(n0, p0, 3, 8, 100, 1, m1, q1, &am1, &aq1);
    if (KIT_EXPECT_STATUS("links_best_of_null(p 0, p 1, no case)", rc, KIT_OK))
        KIT_CHECK(m1[0] == 0 && q1[0] == 0 && m1[1] == 0 && q1[1] == 0 &&
                      m1[2] == 0 && q1[2] == 0 && am1 == 0 && aq1 == 0,
                  "with p 0, p 1 or no case every margin should be 0; got "
                  "%.4f %.4f %.4f",
                  (double)m1[0], (double)m1[1], (double)m1[2]);
    const float bad_p[1] = {1.5f};
    const int bad_n[1] = {-1};
    KIT_EXPECT_STATUS(
        "links_best_of_null(p 1.5)",
        links_best_of_null(n, bad_p, 1, 8, 100, 1, m1, q1, &am1, &aq1),
        KIT_E_SIZE);
    const float nan_p[1] = {NAN};
    KIT_EXPECT_STATUS(
        "links_best_of_null(p NaN)",
        links_best_of_null(n, nan_p, 1, 8, 100, 1, m1, q1, &am1, &aq1),
        KIT_E_SIZE);
    KIT_EXPECT_STATUS(
        "links_best_of_null(n_cases -1)",
        links_best_of_null(bad_n, p, 1, 8, 100, 1, m1, q1, &am1, &aq1),
        KIT_E_SIZE);
    KIT_EXPECT_STATUS(
        "links_best_of_null(0 heads)",
        links_best_of_null(n, p, 1, 0, 100, 1, m1, q1, &am1, &aq1), KIT_E_SIZE);
    KIT_EXPECT_STATUS(
        "links_best_of_null(NULL p95)",
        links_best_of_null(n, p, 1, 8, 100, 1, m1, NULL, &am1, &aq1),
        KIT_E_NULL);
}

static const struct kit_test *const given_links_tests[] = {
    &links_read_by_hand,      &links_read_bad, &links_cases_on_windows,
    &links_baselines_by_hand, &links_null,     NULL, /* one test per line */
};
KIT_CHAPTER_AS(82, "Given code: the parser's links", "links_lm.c",
               given_links_tests)
