/*
 * inspect.c: check chapter 8's corpus file against what the chapter
 * promises (tools/checks/68-corpus.sh runs it on the real corpus).
 *
 *   inspect FILE TEXTS TOKENS    the file, and the counts it must hold
 *
 * It loads FILE (given/corpus.c, which rejects a malformed one) and
 * checks: TEXTS texts and TOKENS tokens; no text in two splits (every
 * id once, in the split the rule gives it); each of the 15 genres in
 * every split; every token of the kit's sentence in the vocabulary.
 * One line per check, "ok ..." or "FAIL ..."; exit 1 if any failed.
 */
#include "../runner.h" /* run_read_long() */
#include "corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sentence[] =
    "The delivery truck, which was late, blocked the narrow street.";
static const char genres[] = "abcdefghjklmnpr";
static int failures;

/* Print "ok WHAT" or "FAIL WHAT", counting failures. */
static void report(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failures += !ok;
}

/* Whether each text id occurs once, in the split the rule gives it. */
static int splits_disjoint(const struct corpus_data *d)
{
    for (int k = 0; k < d->n_texts; k++) {
        if (corpus_split_of(d->texts[k].id) != d->texts[k].split)
            return 0;
        for (int j = 0; j < k; j++)
            if (strcmp(d->texts[j].id, d->texts[k].id) == 0)
                return 0;
    }
    return 1;
}

/* Whether every genre has a text in every split. */
static int genres_everywhere(const struct corpus_data *d)
{
    for (const char *g = genres; *g; g++)
        for (int s = 0; s < SPLIT_N; s++) {
            int found = 0;
            for (int k = 0; k < d->n_texts && !found; k++)
                found = d->texts[k].id[1] == *g && d->texts[k].split == s;
            if (!found)
                return 0;
        }
    return 1;
}

/* Whether each token of the sentence has an id of its own. */
static int sentence_known(const struct corpus_data *d)
{
    int ids[64];
    int n = corpus_encode(d, sentence, ids, 64);
    int ok = n == 13;
    for (int t = 0; t < n && t < 64; t++) {
        printf("     %-9s id %d\n", d->vocab[ids[t]], ids[t]);
        ok = ok && ids[t] != CORPUS_UNK;
    }
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: inspect FILE TEXTS TOKENS\n");
        return 2;
    }
    char err[CORPUS_ERR_LEN], what[256];
    long want_texts = 0, want_tokens = 0;
    if (!run_read_long(argv[2], &want_texts) ||
        !run_read_long(argv[3], &want_tokens)) {
        fprintf(stderr, "inspect: TEXTS and TOKENS are whole numbers\n");
        return 2;
    }
    struct corpus_data d;
    if (corpus_load(&d, argv[1], err) != KIT_OK) {
        fprintf(stderr, "inspect: %s\n", err);
        return 1;
    }
    snprintf(what, sizeof what, "%d texts (want %s)", d.n_texts, argv[2]);
    report(d.n_texts == want_texts, what);
    snprintf(what, sizeof what, "%d tokens (want %s)", d.n_tokens, argv[3]);
    report(d.n_tokens == want_tokens, what);
    report(splits_disjoint(&d), "no text in two splits");
    report(genres_everywhere(&d), "each of the 15 genres in every split");
    report(sentence_known(&d),
           "every token of the sentence has its own id, none is <unk>");
    corpus_data_free(&d);
    return failures ? 1 : 0;
}
