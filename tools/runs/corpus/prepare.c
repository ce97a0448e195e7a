/*
 * prepare.c: chapter 8's corpus file. Reads the Brown corpus's 500
 * word/tag files, builds the vocabulary and the split (given/corpus.c),
 * writes the tokenised corpus to one binary file, and prints the counts.
 *
 *   prepare DIR OUT [V]    DIR: the folder of ca01 ... cr09
 *                          OUT: the file to write (build/ch8/brown.bin),
 *                               and its checksum OUT.sum beside it
 *                          V:   the vocabulary size (default 8192)
 *   prepare --check FILE   loads FILE as chapter 8's programs do
 *                          (corpus_load: its structure and its checksum);
 *                          exit 1 with the reason if it is damaged
 *
 * Run by `make corpus`, after tools/corpus/verify.sh has checked DIR,
 * and with --check on the file it made before, which it makes again when
 * that fails. Any error is one line on stderr and exit status 1, and OUT
 * is not written.
 */
#include "corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const split_names[SPLIT_N] = {"training", "validation",
                                                 "test"};

/* Print every count a reader of chapter 8 may want to compare with. */
static void print_counts(const struct corpus_raw *c,
                         const struct corpus_data *d)
{
    printf("corpus: %d texts, %d tokens, %d distinct lowercased words, "
           "%d distinct tags\n",
           c->n_texts, c->n_tokens, c->n_words, c->n_tags);
    printf("vocabulary: %d tokens (%s and the %d most frequent training "
           "words)\n",
           d->V, CORPUS_UNK_WORD, d->V - 1);
    printf("%-10s %6s %9s %9s\n", "split", "texts", "tokens", "coverage");
    for (int s = 0; s < SPLIT_N; s++) {
        int texts = 0;
        for (int k = 0; k < d->n_texts; k++)
            texts += d->texts[k].split == s;
        printf("%-10s %6d %9d %8.2f%%\n", split_names[s], texts, d->split_n[s],
               100.0 * corpus_coverage(d, s));
    }
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: prepare DIR OUT [V] | prepare --check FILE\n");
        return 2;
    }
    if (strcmp(argv[1], "--check") == 0) {
        char err[CORPUS_ERR_LEN];
        struct corpus_data d;
        if (argc != 3 || corpus_load(&d, argv[2], err) != KIT_OK) {
            fprintf(stderr, "%s\n",
                    argc != 3 ? "usage: prepare --check FILE" : err);
            return argc != 3 ? 2 : 1;
        }
        corpus_data_free(&d);
        return 0;
    }
    int V = CORPUS_DEFAULT_VOCAB;
    if (argc == 4) {
        char *end;
        long v = strtol(argv[3], &end, 10);
        if (*end || v < 2 || v > CORPUS_MAX_VOCAB) {
            fprintf(stderr, "prepare: V must be 2 to %d, not %s\n",
                    CORPUS_MAX_VOCAB, argv[3]);
            return 1;
        }
        V = (int)v;
    }
    char err[CORPUS_ERR_LEN];
    struct corpus_raw c;
    struct corpus_data d;
    corpus_raw_init(&c);
    int rc = corpus_read_dir(&c, argv[1], err);
    if (rc == KIT_OK)
        rc = corpus_build(&c, V, &d, err);
    if (rc == KIT_OK && (rc = corpus_save(&d, argv[2], err)) != KIT_OK)
        corpus_data_free(&d);
    if (rc != KIT_OK) {
        fprintf(stderr, "prepare: %s\n", err);
        corpus_raw_free(&c);
        return 1;
    }
    print_counts(&c, &d);
    printf("wrote %s\n", argv[2]);
    corpus_data_free(&d);
    corpus_raw_free(&c);
    return 0;
}
