/*
 * plotdata/ch8_parsed.c: chapter 8's tables of the parser's relations,
 * made from a run's parsed.csv (lm-experiment --parsed,
 * tools/runs/lm/parsed.c) and the parse's coverage
 * (tools/runs/links/data/coverage.tsv), so that the book shows them
 * without reading a network again.
 *
 *   usage: ch8_parsed OUTDIR [RUNDIR [LINKSDIR]]
 *
 * RUNDIR defaults to tools/runs/lm/reference/long (the run the book
 * prints), LINKSDIR to tools/runs/links/data. For every network of
 * parsed.csv (seed 1's of each head count; networks sharing K/V heads
 * are left out) and every relation, parsed.csv holds the head chosen on
 * the measurement windows (the largest margin over the best fixed
 * offset there), the best-of-N null of that choice (the 95th percentile
 * of the best margin that the network's L*h heads reach by chance), and
 * the chosen head scored once on the test windows beside the test
 * cases' offset and class baselines. This program adds one number: the
 * test null, the 95th percentile of the margin that one head with no
 * skill beyond the offset shows on the test cases by chance
 * (links_best_of_null() with one head; the chosen head is one head on
 * the test windows, chosen before they were read).
 *
 * A head FOLLOWS a relation, here and in the book, when all three hold:
 * its margin on the measurement windows is above the best-of-N null
 * (the choice found more than chance), its margin on the test windows
 * is above the test null (and the finding held on new text), and its
 * test score is above the class rule's (it does more than point at the
 * nearest earlier word of the related word's class). A head that passes
 * the first two but not the third beats distance but not the class
 * rule ("offset" in the files); otherwise "none".
 *
 * Writes into OUTDIR:
 *   ch8_parsed.md        the lesson's six relations on the test windows:
 *                        cases, hard cases, the two baselines, and each
 *                        head count's chosen head: its score and margin
 *                        over the offset (bold when it follows)
 *   ch8_parsed_heads.md  each chosen head: which, its margin against
 *                        both nulls, its score on the hard cases, what
 *                        mean-ablating it costs at the relation's words
 *                        and at every position
 *   ch8parsed.values     every number of both tables as
 *                        ch8parsed.REL_hH_WHAT (REL the relation's key,
 *                        OS written os), each head count's count of
 *                        relations it follows (of the lesson's six and
 *                        of all), and the other relations it follows
 *   ch8links.values      the parse's coverage: sentences parsed whole,
 *                        with words left out, timed out, too long;
 *                        tokens linked, split, skipped
 *   ch8gain.values       what many heads gain, seed by seed: for each
 *                        pair of head counts (1 and 4, 1 and 16, 4 and
 *                        16), the test loss's difference on each seed
 *                        (networks of one seed saw the same batches),
 *                        their mean, smallest and largest, how many are
 *                        positive, the perplexity ratio exp(mean), and
 *                        the two-sided p of a paired t test (df = seeds
 *                        - 1); the same for the run at half the budget,
 *                        RUNDIR/../long-4m (a replication), with _half
 */
#define _POSIX_C_SOURCE 200809L

#include "../runner.h" /* run_read_row() */
#include "links_lm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG       "ch8_parsed"
#define MAX_NET    4
#define NULL_DRAWS 10000 /* as parsed.c's PARSED_DRAWS */
#define NULL_SEED  20190801ULL
#define LR         LINKS_N_RELATIONS
#define PI         3.14159265358979323846

/* the lesson's relations, in the order the book prints them */
static const int lesson[] = {LINKS_REL_D, LINKS_REL_A, LINKS_REL_J,
                             LINKS_REL_S, LINKS_REL_O, LINKS_REL_OS};
#define N_LESSON ((int)(sizeof lesson / sizeof lesson[0]))

struct row { /* one relation of one network, as parsed.csv has it */
    int seen, block, head, meas_n, test_n, hard_n;
    double meas_score, meas_base, meas_margin, meas_null;
    double test_score, test_base, test_margin, class_base, hard_score;
    double abl_word, abl_all, test_null;
    int follows; /* 2 follows, 1 beats the offset only, 0 neither */
};

static struct {
    int n_net, heads[MAX_NET];
    struct row r[MAX_NET][LR];
} run;

static void die(const char *path, const char *what)
{
    fprintf(stderr, PROG ": %s: %s\n", path, what);
    exit(1);
}

static int relation_of(const char *key)
{
    for (int q = 0; q < LR; q++)
        if (!strcmp(links_relation_key(q), key))
            return q;
    return -1;
}

static void read_parsed(const char *dir)
{
    static const char head[] =
        "relation,heads,kv_heads,lr,block,head,meas_cases,meas_score,"
        "meas_base,meas_margin,meas_null_p95,test_cases,test_score,"
        "test_base,test_margin,test_class_base,test_hard,test_hard_score,"
        "word_positions,loss_word_next,abl_inc_word_next,loss_all,"
        "abl_inc_all";
    char path[700], line[1024], why[160], key[16];
    snprintf(path, sizeof path, "%s/parsed.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        die(path, "cannot be read (make lm-parsed writes it)");
    if (!fgets(line, sizeof line, f) || strncmp(line, head, strlen(head)))
        die(path, "its header is not lm-experiment --parsed's");
    for (int ln = 2; fgets(line, sizeof line, f); ln++) {
        struct row x = {0};
        int h, g;
        if (!run_read_row(why, sizeof why, line, "siiniiiffffiffffifnnfnf", key,
                          (int)sizeof key, &h, &g, &x.block, &x.head, &x.meas_n,
                          &x.meas_score, &x.meas_base, &x.meas_margin,
                          &x.meas_null, &x.test_n, &x.test_score, &x.test_base,
                          &x.test_margin, &x.class_base, &x.hard_n,
                          &x.hard_score, &x.abl_word, &x.abl_all))
            run_bad_row(PROG, path, ln, why, "lm-experiment --parsed wrote it");
        const int q = relation_of(key);
        if (q < 0)
            run_bad_row(PROG, path, ln, "a relation links_lm.h does not name",
                        NULL);
        if (g != h)
            continue; /* a network sharing K/V heads: not in these tables */
        int k = 0;
        while (k < run.n_net && run.heads[k] != h)
            k++;
        if (k == run.n_net) {
            if (run.n_net == MAX_NET)
                run_bad_row(PROG, path, ln, "more head counts than expected",
                            NULL);
            run.heads[run.n_net++] = h;
        }
        if (run.r[k][q].seen)
            run_bad_row(PROG, path, ln, "a relation twice for one network",
                        NULL);
        x.seen = 1;
        run.r[k][q] = x;
    }
    fclose(f);
    for (int k = 0; k < run.n_net; k++)
        for (int q = 0; q < LR; q++)
            if (!run.r[k][q].seen) {
                char what[160];
                snprintf(what, sizeof what,
                         "no row for relation %s of the %d-head network",
                         links_relation_key(q), run.heads[k]);
                die(path, what);
            }
    /* the head counts in increasing order */
    for (int a = 0; a < run.n_net; a++)
        for (int b = a + 1; b < run.n_net; b++)
            if (run.heads[b] < run.heads[a]) {
                int t = run.heads[a];
                run.heads[a] = run.heads[b], run.heads[b] = t;
                for (int q = 0; q < LR; q++) {
                    struct row s = run.r[a][q];
                    run.r[a][q] = run.r[b][q], run.r[b][q] = s;
                }
            }
}

/* each row's test null and its verdict */
static void judge(void)
{
    for (int k = 0; k < run.n_net; k++)
        for (int q = 0; q < LR; q++) {
            struct row *x = &run.r[k][q];
            const float p = (float)x->test_base;
            float mean, p95, all_mean, all_p95;
            if (links_best_of_null(&x->test_n, &p, 1, 1, NULL_DRAWS, NULL_SEED,
                                   &mean, &p95, &all_mean,
                                   &all_p95) != KIT_OK) {
                fprintf(stderr, PROG ": the test null of %s failed\n",
                        links_relation_key(q));
                exit(1);
            }
            x->test_null = p95;
            const int chance =
                x->meas_margin > x->meas_null && x->test_margin > x->test_null;
            x->follows = chance ? (x->test_score > x->class_base ? 2 : 1) : 0;
        }
}

static FILE *out_file(const char *dir, const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        die(path, "cannot be written");
    return f;
}

/* links_relation_name(q) with "->" written as an arrow, into buf */
static const char *rel_name(int q, char *buf, size_t n)
{
    const char *s = links_relation_name(q), *a = strstr(s, "->");
    if (a)
        snprintf(buf, n, "%.*s\u2192%s", (int)(a - s), s, a + 2);
    else
        snprintf(buf, n, "%s", s);
    return buf;
}

static const char *heads_word(int h)
{
    return h == 1 ? "head" : "heads";
}

static void write_tables(const char *dir)
{
    FILE *t = out_file(dir, "ch8_parsed.md");
    fprintf(t, "| relation, from the later word | cases | hard | best offset "
               "| class rule |");
    for (int k = 0; k < run.n_net; k++)
        fprintf(t, " %d %s |", run.heads[k], heads_word(run.heads[k]));
    /* the dashes set the columns' widths (pandoc) */
    fprintf(t, "\n|:----------------------|-----:|----:|------:|------:|");
    for (int k = 0; k < run.n_net; k++)
        fprintf(t, "---------:|");
    fprintf(t, "\n");
    for (int i = 0; i < N_LESSON; i++) {
        const int q = lesson[i];
        const struct row *x0 = &run.r[0][q];
        char nb[80];
        fprintf(t, "| %s | %d | %d | %.3f | %.3f |", rel_name(q, nb, sizeof nb),
                x0->test_n, x0->hard_n, x0->test_base, x0->class_base);
        for (int k = 0; k < run.n_net; k++) {
            const struct row *x = &run.r[k][q];
            const char *b = x->follows == 2 ? "**" : "";
            fprintf(t, " %s%.3f%s (%+.3f) |", b, x->test_score, b,
                    x->test_margin);
        }
        fprintf(t, "\n");
    }
    fclose(t);

    FILE *h = out_file(dir, "ch8_parsed_heads.md");
    fprintf(h, "| relation | heads | head | chosen | chance | test | chance | "
               "hard | at words | all "
               "|\n|:-------------------|----:|-----:|------:|-----:|------:|"
               "-----:|-----:|-------:|-------:|\n");
    for (int i = 0; i < N_LESSON; i++) {
        const int q = lesson[i];
        char nb[80];
        for (int k = 0; k < run.n_net; k++) {
            const struct row *x = &run.r[k][q];
            fprintf(h,
                    "| %s | %d | %d.%d | %+.3f | %.3f | %+.3f | %.3f | %.3f | "
                    "%+.4f | %+.4f |\n",
                    k == 0 ? rel_name(q, nb, sizeof nb) : "", run.heads[k],
                    x->block, x->head, x->meas_margin, x->meas_null,
                    x->test_margin, x->test_null, x->hard_score, x->abl_word,
                    x->abl_all);
        }
    }
    fclose(h);
}

static void key_of(int q, char *buf, size_t n)
{
    snprintf(buf, n, "%s", links_relation_key(q));
    for (char *c = buf; *c; c++)
        *c = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
    if (!strcmp(buf, "_"))
        snprintf(buf, n, "idiom");
}

static void write_values(const char *dir)
{
    FILE *v = out_file(dir, "ch8parsed.values");
    fprintf(v, "# ch8_parsed: the parser's relations, from parsed.csv\n");
    for (int k = 0; k < run.n_net; k++) {
        const int hh = run.heads[k];
        int n_lesson = 0, n_offset = 0, n_all = 0, n_beat = 0;
        char others[600] = "";
        for (int q = 0; q < LR; q++) {
            const struct row *x = &run.r[k][q];
            char key[16];
            key_of(q, key, sizeof key);
            int in_lesson = 0;
            for (int i = 0; i < N_LESSON; i++)
                in_lesson |= lesson[i] == q;
            n_all += x->follows == 2;
            n_beat += x->follows >= 1;
            if (in_lesson) {
                n_lesson += x->follows == 2;
                n_offset += x->follows >= 1;
            } else if (x->follows >= 1) {
                char nb[80];
                const size_t len = strlen(others);
                snprintf(others + len, sizeof others - len, "%s%s (%s)",
                         len ? ", " : "", rel_name(q, nb, sizeof nb),
                         links_relation_key(q));
            }
            const char *p = "ch8parsed.";
            fprintf(v, "%s%s_h%d_cases=%d\n", p, key, hh, x->test_n);
            fprintf(v, "%s%s_h%d_hard=%d\n", p, key, hh, x->hard_n);
            fprintf(v, "%s%s_h%d_offset=%.3f\n", p, key, hh, x->test_base);
            fprintf(v, "%s%s_h%d_class=%.3f\n", p, key, hh, x->class_base);
            fprintf(v, "%s%s_h%d_head=%d.%d\n", p, key, hh, x->block, x->head);
            fprintf(v, "%s%s_h%d_meas_margin=%.3f\n", p, key, hh,
                    x->meas_margin);
            fprintf(v, "%s%s_h%d_meas_null=%.3f\n", p, key, hh, x->meas_null);
            fprintf(v, "%s%s_h%d_score=%.3f\n", p, key, hh, x->test_score);
            fprintf(v, "%s%s_h%d_margin=%.3f\n", p, key, hh, x->test_margin);
            fprintf(v, "%s%s_h%d_test_null=%.3f\n", p, key, hh, x->test_null);
            fprintf(v, "%s%s_h%d_hard_score=%.3f\n", p, key, hh, x->hard_score);
            fprintf(v, "%s%s_h%d_abl_word=%.4f\n", p, key, hh, x->abl_word);
            fprintf(v, "%s%s_h%d_abl_all=%.4f\n", p, key, hh, x->abl_all);
            fprintf(v, "%s%s_h%d_follows=%d\n", p, key, hh, x->follows);
        }
        /* follow: beats the class rule too; beat: beats the offset and
         * both nulls, whatever the class rule */
        fprintf(v, "ch8parsed.h%d_follow_lesson=%d\n", hh, n_lesson);
        fprintf(v, "ch8parsed.h%d_follow_all=%d\n", hh, n_all);
        fprintf(v, "ch8parsed.h%d_beat_lesson=%d\n", hh, n_offset);
        fprintf(v, "ch8parsed.h%d_beat_all=%d\n", hh, n_beat);
        fprintf(v, "ch8parsed.h%d_beat_others=%s\n", hh,
                others[0] ? others : "none");
    }
    fprintf(v, "ch8parsed.n_relations=%d\nch8parsed.n_lesson=%d\n", LR,
            N_LESSON);
    fclose(v);
}

/* coverage.tsv's rows "what name count share" into ch8links.values */
static void write_coverage(const char *out, const char *links)
{
    char path[700], line[256], why[160];
    snprintf(path, sizeof path, "%s/coverage.tsv", links);
    FILE *f = fopen(path, "r");
    if (!f)
        die(path, "cannot be read (make links-save writes it)");
    FILE *v = out_file(out, "ch8links.values");
    fprintf(v, "# ch8_parsed: the parse's coverage, from %s\n", path);
    int n = 0;
    for (int ln = 1; fgets(line, sizeof line, f); ln++) {
        char what[32], name[32];
        long count;
        if (ln == 1)
            continue;
        for (char *c = line; *c; c++)
            *c = *c == '\t' ? ',' : *c;
        if (!run_read_row(why, sizeof why, line, "ssl+", what, (int)sizeof what,
                          name, (int)sizeof name, &count))
            run_bad_row(PROG, path, ln, why, "git checkout restores it");
        if (strcmp(what, "sentences") && strcmp(what, "tokens") &&
            strcmp(what, "words"))
            continue;
        fprintf(v, "ch8links.%s_%s=%ld\n", what, name, count);
        const char *share = strrchr(line, ',') + 1; /* the 4th field */
        if (*share && *share != '\n')
            fprintf(v, "ch8links.%s_%s_pct=%.1f\n", what, name,
                    100 * atof(share));
        n++;
    }
    fclose(f);
    fclose(v);
    if (n == 0)
        die(path, "holds no sentences or tokens");
}

/* RUN/results.csv's test losses of the networks with their own K/V
 * heads, loss[head count index][seed index], seeds 2017 on */
#define MAX_SEED 8
static int read_losses(const char *dir, const int *heads, int n_h,
                       double loss[][MAX_SEED])
{
    char path[700], line[1024], why[160];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        die(path, "cannot be read (lm-experiment writes it)");
    int n_seed = 0, seen[MAX_NET][MAX_SEED] = {{0}};
    for (int ln = 1; fgets(line, sizeof line, f); ln++) {
        int h, g, seed;
        double test;
        if (ln == 1)
            continue;
        if (!run_read_row(why, sizeof why, line, "*iinin*nf+", &h, &g, &seed,
                          &test))
            run_bad_row(PROG, path, ln, why, "lm-experiment wrote it");
        const int s = seed - 2017;
        if (s < 0 || s >= MAX_SEED)
            run_bad_row(PROG, path, ln, "a seed outside 2017 ..", NULL);
        for (int k = 0; k < n_h; k++)
            if (heads[k] == h && g == h) {
                loss[k][s] = test, seen[k][s] = 1;
                n_seed = s + 1 > n_seed ? s + 1 : n_seed;
            }
    }
    fclose(f);
    for (int k = 0; k < n_h; k++)
        for (int s = 0; s < n_seed; s++)
            if (!seen[k][s])
                die(path, "lacks a seed of a head count");
    return n_seed;
}

/* two-sided p of Student's t with df degrees of freedom, for df 1 to 4
 * (closed forms of the distribution function); -1 beyond */
static double t_p(double t, int df)
{
    t = fabs(t);
    const double x = t * t;
    switch (df) {
    case 1: return 1 - 2 * atan(t) / PI;
    case 2: return 1 - t / sqrt(2 + x);
    case 3: return 1 - 2 / PI * (atan(t / sqrt(3)) + sqrt(3) * t / (3 + x));
    case 4: return 1 - t * (6 + x) / pow(4 + x, 1.5);
    default: return -1;
    }
}

static void write_gain(FILE *v, const char *dir, const char *suffix)
{
    double loss[MAX_NET][MAX_SEED];
    const int S = read_losses(dir, run.heads, run.n_net, loss);
    for (int a = 0; a < run.n_net; a++)
        for (int b = a + 1; b < run.n_net; b++) {
            double d[MAX_SEED], mean = 0, lo = 1e9, hi = -1e9, ss = 0;
            int pos = 0;
            for (int s = 0; s < S; s++) {
                d[s] = loss[a][s] - loss[b][s];
                mean += d[s] / S, pos += d[s] > 0;
                lo = d[s] < lo ? d[s] : lo, hi = d[s] > hi ? d[s] : hi;
            }
            for (int s = 0; s < S; s++)
                ss += (d[s] - mean) * (d[s] - mean);
            const double sd = S > 1 ? sqrt(ss / (S - 1)) : 0;
            const double t = sd > 0 ? mean / (sd / sqrt(S)) : 0;
            const char *p = "ch8gain.";
            const int ha = run.heads[a], hb = run.heads[b];
            fprintf(v, "%sh%d_h%d%s_mean=%.3f\n", p, ha, hb, suffix, mean);
            fprintf(v, "%sh%d_h%d%s_min=%.3f\n", p, ha, hb, suffix, lo);
            fprintf(v, "%sh%d_h%d%s_max=%.3f\n", p, ha, hb, suffix, hi);
            fprintf(v, "%sh%d_h%d%s_pos=%d\n", p, ha, hb, suffix, pos);
            fprintf(v, "%sh%d_h%d%s_ppl_pct=%.1f\n", p, ha, hb, suffix,
                    100 * (exp(mean) - 1));
            fprintf(v, "%sh%d_h%d%s_p=%.2f\n", p, ha, hb, suffix,
                    t_p(t, S - 1));
        }
    fprintf(v, "ch8gain.seeds%s=%d\n", suffix, S);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: " PROG " OUTDIR [RUNDIR [LINKSDIR]]\n");
        return 2;
    }
    read_parsed(argc >= 3 ? argv[2] : "tools/runs/lm/reference/long");
    judge();
    write_tables(argv[1]);
    write_values(argv[1]);
    write_coverage(argv[1], argc >= 4 ? argv[3] : "tools/runs/links/data");
    const char *dir = argc >= 3 ? argv[2] : "tools/runs/lm/reference/long";
    char half[700];
    snprintf(half, sizeof half, "%s/../long-4m", dir);
    FILE *v = out_file(argv[1], "ch8gain.values");
    fprintf(v, "# ch8_parsed: what many heads gain, seed by seed\n");
    write_gain(v, dir, "");
    write_gain(v, half, "_half");
    fclose(v);
    return 0;
}
