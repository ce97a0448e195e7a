/*
 * tests/given/ngram.c: the kit's tests of chapter 8's n-gram baselines
 * (given/ngram.c): probabilities worked by hand on streams of a few
 * tokens, the discounts from counts of counts, every context's
 * distribution summing to 1, the windows scored as the network sees them,
 * and bad input. No student code is called, so these run in make check
 * (tools/checks/12-given.sh), not in a chapter's make test.
 *
 * The hand-worked stream: 1 2 1 2 3 1 over V = 4 (token 0 never occurs),
 * every discount 0.5.
 *   bigrams (raw): 1 2 twice; 2 1, 2 3, 3 1 once. Contexts: after 1,
 *     total 2 (N2 = 1); after 2, total 2 (N1 = 2); after 3, total 1.
 *   unigrams (continuation): 1 follows 2 and 3, and starts the stream: 3;
 *     2 follows 1: 1; 3 follows 2: 1; total 5, N1 = 2, N3+ = 1.
 *   P1(w) = max(n - 0.5, 0)/5 + gamma/4, gamma = 0.5 (2 + 1)/5 = 0.3:
 *     P1 = 0.075, 0.575, 0.175, 0.175.
 *   P2(2 | 1) = 1.5/2 + (0.5 * 1/2) 0.175 = 0.79375
 *   P2(1 | 2) = 0.5/2 + (0.5 * 2/2) 0.575 = 0.5375
 *   P2(3 | 2) = 0.25 + 0.5 * 0.175 = 0.3375
 *   P2(1 | 3) = 0.5/1 + (0.5 * 1/1) 0.575 = 0.7875
 *   P2(0 | 1) = 0.25 * 0.075 = 0.01875 (never seen after 1)
 * As a trigram model, the bigrams' continuation counts (suffixes of the
 * trigrams 1 2 1, 2 1 2, 1 2 3, 2 3 1, and the start's 1 2) come out as
 * the raw counts above, so P2 is the same, and
 *   P3(1 | 1 2) = 0.5/2 + (0.5 * 2/2) P2(1 | 2) = 0.51875
 *   P3(3 | 1 2) = 0.25 + 0.5 * 0.3375 = 0.41875
 *   P3(1 | 3 3) = P2(1 | 3) = 0.7875 (a context never seen)
 */
#include "kit_test.h"
#include "ngram.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const int stream[6] = {1, 2, 1, 2, 3, 1};
static const float half[9] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
                              0.5f, 0.5f, 0.5f, 0.5f};

/* P(w | ctx) of m against want, named by what; within 1e-6, the
 * discounts being floats */
static void expect_prob(const struct ngram_model *m, const int *ctx, int n_ctx,
                        int w, double want, const char *what)
{
    const double got = ngram_prob(m, ctx, n_ctx, w);
    KIT_CHECK(fabs(got - want) < 1e-6,
              "%s should be %.6f (worked by hand); "
              "ngram_prob gives %.6f",
              what, want, got);
}

KIT_TEST(ngram_by_hand, "n-gram: unigram, bigram and trigram probabilities of "
                        "a six-token stream, worked by hand")
{
    struct ngram_model m;
    char why[128];
    int rc = ngram_fit(&m, 2, 4, stream, 6, half, why, sizeof why);
    if (!KIT_EXPECT_STATUS("ngram_fit(order 2)", rc, KIT_OK))
        return;
    const int c1[1] = {1}, c2[1] = {2}, c3[1] = {3}, c0[1] = {0};
    expect_prob(&m, NULL, 0, 0, 0.075, "P1(0), never seen");
    expect_prob(&m, NULL, 0, 1, 0.575, "P1(1), continuation count 3");
    expect_prob(&m, NULL, 0, 2, 0.175, "P1(2)");
    expect_prob(&m, c1, 1, 2, 0.79375, "P2(2 | 1)");
    expect_prob(&m, c2, 1, 1, 0.5375, "P2(1 | 2)");
    expect_prob(&m, c2, 1, 3, 0.3375, "P2(3 | 2)");
    expect_prob(&m, c3, 1, 1, 0.7875, "P2(1 | 3)");
    expect_prob(&m, c1, 1, 0, 0.01875, "P2(0 | 1), never seen after 1");
    expect_prob(&m, c0, 1, 1, 0.575, "P2(1 | 0), a context never seen");
    ngram_free(&m);

    rc = ngram_fit(&m, 3, 4, stream, 6, half, why, sizeof why);
    if (!KIT_EXPECT_STATUS("ngram_fit(order 3)", rc, KIT_OK))
        return;
    const int c12[2] = {1, 2}, c33[2] = {3, 3};
    expect_prob(&m, c12, 2, 1, 0.51875, "P3(1 | 1 2)");
    expect_prob(&m, c12, 2, 3, 0.41875, "P3(3 | 1 2)");
    expect_prob(&m, c33, 2, 1, 0.7875, "P3(1 | 3 3), a context never seen");
    expect_prob(&m, c2, 1, 1, 0.5375, "P3's P(1 | 2) at a window's start");
    /* a longer context: only the last two tokens are read */
    const int c912[3] = {3, 1, 2};
    expect_prob(&m, c912, 3, 1, 0.51875, "P3(1 | 3 1 2), reading 1 2");
    ngram_free(&m);
}

KIT_TEST(ngram_discounts, "n-gram: the discounts from counts of counts "
                          "(Chen and Goodman), and 0.75 where one is 0")
{
    /* counts 1, 2, 3, 4 once each: n1 = n2 = n3 = n4 = 1, Y = 1/3,
     * D1 = 1 - 2/3 = 1/3, D2 = 2 - 1 = 1, D3 = 3 - 4/3 = 5/3 */
    const int s[10] = {1, 2, 2, 3, 3, 3, 4, 4, 4, 4};
    struct ngram_model m;
    int rc = ngram_fit(&m, 1, 5, s, 10, NULL, NULL, 0);
    if (!KIT_EXPECT_STATUS("ngram_fit(order 1)", rc, KIT_OK))
        return;
    const float want[3] = {1.0f / 3, 1.0f, 5.0f / 3};
    for (int k = 0; k < 3; k++)
        KIT_CHECK(fabsf(m.t[0].D[k] - want[k]) < 1e-6f,
                  "D%d should be %.6f; it is %.6f", k + 1, (double)want[k],
                  (double)m.t[0].D[k]);
    KIT_CHECK(m.t[0].estimated, "the discounts should be marked estimated");
    /* P1(4) = (4 - 5/3)/10 + gamma/5, gamma = (1/3 + 1 + 2 * 5/3)/10 */
    const double gamma = (1.0 / 3 + 1 + 10.0 / 3) / 10;
    expect_prob(&m, NULL, 0, 4, (4 - 5.0 / 3) / 10 + gamma / 5, "P1(4)");
    expect_prob(&m, NULL, 0, 0, gamma / 5, "P1(0)");
    ngram_free(&m);
    /* the six-token stream has no count of 4: the fallback */
    rc = ngram_fit(&m, 2, 4, stream, 6, NULL, NULL, 0);
    KIT_EXPECT_STATUS("ngram_fit(order 2, no count of 4)", rc, KIT_OK);
    KIT_CHECK(!m.t[1].estimated && m.t[1].D[0] == 0.75f && m.t[1].D[2] == 0.75f,
              "with no count of 4 the discounts should fall back to 0.75");
    ngram_free(&m);
}

KIT_TEST(ngram_sums_to_one, "n-gram: every context's distribution sums to 1 "
                            "over the vocabulary, seen or not, at every order")
{
    /* 4000 tokens over V = 40, skewed, from a fixed LCG */
    enum { V = 40, N = 4000 };
    static int s[N];
    unsigned long long x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const double u = (double)(x >> 11) / 9007199254740992.0;
        s[i] = (int)(V * u * u * u); /* token 0 most frequent */
        if (i > 0 && s[i] == 7)
            s[i] = (s[i - 1] + 1) % V; /* some structure for the bigrams */
    }
    for (int order = 1; order <= 3; order++) {
        struct ngram_model m;
        char why[128];
        int rc = ngram_fit(&m, order, V, s, N, NULL, why, sizeof why);
        if (!KIT_EXPECT_STATUS("ngram_fit", rc, KIT_OK))
            return;
        double worst = 0;
        int wu = 0, wv = 0, wn = 0;
        for (int n_ctx = 0; n_ctx <= 2; n_ctx++)
            for (int u = 0; u < (n_ctx >= 2 ? V : 1); u++)
                for (int v = 0; v < (n_ctx >= 1 ? V : 1); v++) {
                    const int ctx[2] = {u, v};
                    const int *c = n_ctx == 2 ? ctx : ctx + 1;
                    double sum = 0;
                    for (int w = 0; w < V; w++)
                        sum += ngram_prob(&m, c, n_ctx, w);
                    if (fabs(sum - 1) > worst)
                        worst = fabs(sum - 1), wu = u, wv = v, wn = n_ctx;
                }
        KIT_CHECK(worst < 1e-9,
                  "order %d: the distribution after %d context token(s) "
                  "(%d %d) sums to 1 %+.3g, not 1",
                  order, wn, wu, wv, worst);
        ngram_free(&m);
    }
}

KIT_TEST(ngram_windows, "n-gram: a window's targets scored from the window's "
                        "own tokens only, as the network sees them")
{
    struct ngram_model m;
    int rc = ngram_fit(&m, 3, 4, stream, 6, half, NULL, 0);
    if (!KIT_EXPECT_STATUS("ngram_fit", rc, KIT_OK))
        return;
    /* two windows of T = 2; target 0 sees one token, target 1 two */
    const int x[4] = {1, 2, 3, 3}, y[4] = {2, 1, 3, 1};
    double loss = 0;
    rc = ngram_window_loss(&m, x, y, 2, 2, &loss);
    KIT_EXPECT_STATUS("ngram_window_loss", rc, KIT_OK);
    const double want = -(log(0.79375) + log(0.51875) +
                          log(ngram_prob(&m, x + 2, 1, 3)) + log(0.7875)) /
                        4;
    KIT_CHECK(fabs(loss - want) < 1e-9,
              "the loss of the two windows should be %.6f; it is %.6f", want,
              loss);
    ngram_free(&m);
}

KIT_TEST(ngram_bad_input, "n-gram: an impossible order, V, length or token "
                          "is an error that says which")
{
    struct ngram_model m;
    char why[128] = "";
    const int bad[3] = {1, 5, 2};
    struct {
        int order, V;
        const int *s;
        long n;
        int want;
        const char *says;
    } cases[] = {
        {0, 4, stream, 6, KIT_E_SIZE, "order 0"},
        {4, 4, stream, 6, KIT_E_SIZE, "order 4"},
        {2, 0, stream, 6, KIT_E_SIZE, "V = 0"},
        {3, 4, stream, 2, KIT_E_SIZE, "2 tokens"},
        {2, 4, bad, 3, KIT_E_SIZE, "token 1 is 5"},
        {2, 4, NULL, 6, KIT_E_NULL, "NULL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        why[0] = 0;
        int rc = ngram_fit(&m, cases[i].order, cases[i].V, cases[i].s,
                           cases[i].n, NULL, why, sizeof why);
        KIT_EXPECT_STATUS("ngram_fit(bad input)", rc, cases[i].want);
        KIT_CHECK(strstr(why, cases[i].says) != NULL,
                  "the error should say '%s'; it says '%s'", cases[i].says,
                  why);
        if (rc == KIT_OK)
            ngram_free(&m);
    }
    int rc = ngram_fit(&m, 2, 4, stream, 6, half, NULL, 0);
    KIT_EXPECT_STATUS("ngram_fit", rc, KIT_OK);
    KIT_CHECK(ngram_prob(&m, NULL, 0, 4) == 0 &&
                  ngram_prob(&m, NULL, 0, -1) == 0,
              "a token outside 0 .. V-1 should have probability 0");
    const int x[2] = {1, 2}, y[2] = {2, 9};
    double loss;
    KIT_EXPECT_STATUS("ngram_window_loss(a target outside the vocabulary)",
                      ngram_window_loss(&m, x, y, 1, 2, &loss), KIT_E_SIZE);
    ngram_free(&m);
}

static const struct kit_test *const given_ngram_tests[] = {
    &ngram_by_hand, &ngram_discounts, &ngram_sums_to_one,
    &ngram_windows, &ngram_bad_input, NULL, /* keep one test per line */
};
KIT_CHAPTER_AS(81, "Given code: the n-gram baselines", "ngram.c",
               given_ngram_tests)
