/*
 * plotdata/ch8_roles.c: chapter 8's roles-over-training figure and its
 * numbers, from the kit's reference run of `make lm-roles`, committed as
 * data in tools/runs/lm/reference/ (roles.csv, baselines.csv and run.values:
 * the command, the machine and the wall time that produced them). The run
 * takes the better part of an hour, so the book prints this reference;
 * `make lm-roles` reruns it and compares.
 *
 *   usage: ch8_roles OUTDIR [REFDIR]
 *
 * Writes into OUTDIR:
 *   ch8_roles_hH.dat  per head count H: tokens (thousands), validation
 *                     loss, the best margin of any head over any
 *                     relation's best fixed offset, the largest share of
 *                     rows one offset takes in one head, the positional
 *                     heads by Voita's rule and by the majority rule
 *   ch8_roles.gpi     gnuplot: the head counts, the bigram's and the
 *                     trigram's validation loss
 *   ch8_roles.md      the last checkpoint of each head count as a table:
 *                     loss, positional heads by both rules, the largest
 *                     single-offset share, each relation's best margin
 *   ch8roles.values   the numbers the chapter quotes (key=value)
 *   ch8roles_run.values  REFDIR/run.values as committed
 * It also reads REFDIR/relations.csv (the final networks' heads) for
 * each relation's number of cases.
 * Dimension letters: H = heads, P = checkpoints, R = relations.
 */
#include "../runner.h" /* run_read_row(): every number whole, or an error */
#include "datafile.h"
#include "gpt.h"
#include "heads_lm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG     "ch8_roles"
#define MAX_ROWS 256
#define MAX_HC   8
#define R        5
#define MARGIN   0.05 /* the margin the chapter asks of a head */

static const char *const rel_key[R] = {"noun_det", "noun_adj", "prep_obj",
                                       "verb_subj", "noun_poss"};

struct row {
    int heads, tokens, voita, weak;
    double val, top_share, off1, margin[R], train_s;
};

static void die(const char *what, const char *path)
{
    fprintf(stderr, PROG ": %s: %s\n", path, what);
    exit(1);
}

/* PATH's line LINE (1 is the header) is not what it should be: WHY */
static void die_row(const char *path, int line, const char *why)
{
    run_bad_row(PROG, path, line, why,
                "if the kit committed it, git checkout restores it");
}

/* roles.csv as lm-experiment --roles writes it; checks the header */
static int read_roles(const char *path, struct row *rows)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot be read (it is committed with the kit)", path);
    char line[1024];
    const char *want = "heads,tokens,val_loss,positional_voita,positional_"
                       "weak,top_share,offset1_weight,margin_noun_det,margin_"
                       "noun_adj,margin_prep_obj,margin_verb_subj,margin_noun_"
                       "poss,train_s";
    if (!fgets(line, sizeof line, f) || strncmp(line, want, strlen(want)))
        die("its header is not lm-experiment --roles's", path);
    int n = 0;
    char why[128];
    while (fgets(line, sizeof line, f)) {
        if (n == MAX_ROWS)
            die("has too many rows", path);
        struct row *r = &rows[n];
        if (!run_read_row(why, sizeof why, line, "iifiiffffffff", &r->heads,
                          &r->tokens, &r->val, &r->voita, &r->weak,
                          &r->top_share, &r->off1, &r->margin[0], &r->margin[1],
                          &r->margin[2], &r->margin[3], &r->margin[4],
                          &r->train_s))
            die_row(path, n + 2, why);
        n++;
    }
    fclose(f);
    if (n == 0)
        die("has no rows", path);
    return n;
}

/* baselines.csv: the validation and test loss of model NAME */
static void read_baseline(const char *path, const char *name, double *val,
                          double *test)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot be read (it is committed with the kit)", path);
    char line[256], model[32], why[128];
    int found = 0;
    for (int row = 1; fgets(line, sizeof line, f); row++) {
        int order;
        long tokens;
        double v, t;
        if (row == 1)
            continue; /* the header */
        if (!run_read_row(why, sizeof why, line, "silff*", model,
                          (int)sizeof model, &order, &tokens, &v, &t))
            die_row(path, row, why);
        if (!strcmp(model, name))
            *val = v, *test = t, found = 1;
    }
    fclose(f);
    if (!found)
        die("has no row for a baseline the chapter needs", path);
}

static double best_margin(const struct row *r, int *rel)
{
    int b = 0;
    for (int q = 1; q < R; q++)
        if (r->margin[q] > r->margin[b])
            b = q;
    if (rel)
        *rel = b;
    return r->margin[b];
}

/* the head counts of ROWS, in their order, into HC; returns how many */
static int head_counts(const struct row *rows, int n, int *hc)
{
    int n_hc = 0;
    for (int i = 0; i < n; i++)
        if (n_hc == 0 || hc[n_hc - 1] != rows[i].heads) {
            if (n_hc == MAX_HC)
                die("has too many head counts", "roles.csv");
            hc[n_hc++] = rows[i].heads;
        }
    return n_hc;
}

/* Into V: what a head with no preference gives the majority rule to
 * beat (row i has i + 1 keys, so one offset takes its heaviest weight in
 * 1/(i + 1) of such rows; offset 1's mean over rows 1 .. T-1), and the
 * bigram's and trigram's validation losses */
static void write_chance_values(FILE *v, double bi_val, double tri_val)
{
    const int T = gpt_default_config().T;
    double uniform = 0;
    for (int i = 1; i < T; i++)
        uniform += 1.0 / (i + 1) / (T - 1);
    fprintf(v, "ch8roles.uniform_share1=%.2f\nch8roles.T=%d\n", uniform, T);
    fprintf(v, "ch8roles.bigram_val=%.3f\nch8roles.trigram_val=%.3f\n", bi_val,
            tri_val);
}

/* OUT/ch8_roles.gpi: the head counts HC, the bigram's and the trigram's
 * validation loss, the margin the chapter asks */
static void write_gpi(const char *out, const int *hc, int n_hc, double bi_val,
                      double tri_val)
{
    FILE *g = data_open(PROG, out, "ch8_roles.gpi");
    fprintf(g, "n_curves = %d\nlabels = \"", n_hc);
    for (int k = 0; k < n_hc; k++)
        fprintf(g, "%s%d", k ? " " : "", hc[k]);
    fprintf(g, "\"\nbigram_val = %.4f\ntrigram_val = %.4f\nmargin_goal = %g\n",
            bi_val, tri_val, MARGIN);
    data_close(PROG, g);
}

/* Head count H over training: OUT/ch8_roles_hH.dat, a line per
 * checkpoint of ROWS, and into V its last checkpoint and the first
 * checkpoint below each baseline and with a margin (0 tokens: not within
 * the run), with the run's tokens if FIRST; returns its last
 * checkpoint */
static const struct row *write_head_count(const char *out, FILE *v,
                                          const struct row *rows, int n, int h,
                                          int first, double bi_val,
                                          double tri_val)
{
    char name[64];
    snprintf(name, sizeof name, "ch8_roles_h%d.dat", h);
    FILE *d = data_open(PROG, out, name);
    fprintf(d, "# tokens_k val_loss best_margin top_share voita weak\n");
    int below_bi = 0, below_tri = 0, margin_at = 0;
    const struct row *last = NULL;
    for (int i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        if (r->heads != h)
            continue;
        fprintf(d, "%.3f %.5f %.4f %.4f %d %d\n", r->tokens / 1000.0, r->val,
                best_margin(r, NULL), r->top_share, r->voita, r->weak);
        if (!below_bi && r->val < bi_val)
            below_bi = r->tokens;
        if (!below_tri && r->val < tri_val)
            below_tri = r->tokens;
        if (!margin_at && best_margin(r, NULL) >= MARGIN)
            margin_at = r->tokens;
        last = r;
    }
    data_close(PROG, d);
    int rel;
    const double m = best_margin(last, &rel);
    fprintf(v, "ch8roles.h%d.val=%.3f\n", h, last->val);
    fprintf(v, "ch8roles.h%d.below_bigram_k=%.0f\n", h, below_bi / 1000.0);
    fprintf(v, "ch8roles.h%d.below_trigram_k=%.0f\n", h, below_tri / 1000.0);
    fprintf(v, "ch8roles.h%d.margin_k=%.0f\n", h, margin_at / 1000.0);
    fprintf(v, "ch8roles.h%d.margin=%.3f\nch8roles.h%d.margin_rel=%s\n", h, m,
            h, rel_key[rel]);
    fprintf(v, "ch8roles.h%d.voita=%d\nch8roles.h%d.weak=%d\n", h, last->voita,
            h, last->weak);
    fprintf(v, "ch8roles.h%d.top_share=%.2f\nch8roles.h%d.off1=%.2f\n", h,
            last->top_share, h, last->off1);
    for (int q = 0; q < R; q++)
        fprintf(v, "ch8roles.h%d.margin_%s=%.3f\n", h, rel_key[q],
                last->margin[q]);
    if (first)
        fprintf(v, "ch8roles.tokens=%d\nch8roles.tokens_m=%.1f\n", last->tokens,
                last->tokens / 1e6);
    return last;
}

/* Into V: each relation's cases in the final networks' REF/relations.csv,
 * and the standard error of a share measured on that many cases, at the
 * baseline's share: what chance alone moves a margin by */
static void write_cases(const char *ref, FILE *v)
{
    char path[600];
    snprintf(path, sizeof path, "%s/relations.csv", ref);
    FILE *rel = fopen(path, "r");
    if (!rel)
        die("cannot be read (it is committed with the kit)", path);
    char rline[256], why[128];
    int seen[R] = {0};
    for (int row = 1; fgets(rline, sizeof rline, rel); row++) {
        char key[32];
        int heads, block, head, cases;
        double score, base;
        if (row == 1)
            continue; /* the header */
        if (!run_read_row(why, sizeof why, rline, "siiiiff+", key,
                          (int)sizeof key, &heads, &block, &head, &cases,
                          &score, &base))
            die_row(path, row, why);
        for (int q = 0; q < R; q++)
            if (!strcmp(key, rel_key[q]) && !seen[q] && cases > 0) {
                seen[q] = 1;
                fprintf(v, "ch8roles.cases_%s=%d\nch8roles.se_%s=%.3f\n",
                        rel_key[q], cases, rel_key[q],
                        sqrt(base * (1 - base) / cases));
            }
    }
    fclose(rel);
    for (int q = 0; q < R; q++)
        if (!seen[q])
            die("has no row for a relation", path);
}

/* OUT/ch8_roles.md: the last checkpoint of each head count of HC as a
 * table, a column per head count */
static void write_table(const char *out, const struct row *rows, int n,
                        const int *hc, int n_hc)
{
    const struct row *end[MAX_HC] = {rows};
    for (int k = 0; k < n_hc; k++)
        for (int i = 0; i < n; i++)
            if (rows[i].heads == hc[k])
                end[k] = &rows[i];
    const int L = gpt_default_config().L; /* blocks: heads = L * h */
    FILE *t = data_open(PROG, out, "ch8_roles.md");
    fprintf(t, "| after %d tokens |", end[0]->tokens);
    for (int k = 0; k < n_hc; k++)
        fprintf(t, " %d head%s |", hc[k], hc[k] > 1 ? "s" : "");
    fprintf(t, "\n|:---|");
    for (int k = 0; k < n_hc; k++)
        fprintf(t, "---:|");
    fprintf(t, "\n| validation loss (nats) |");
    for (int k = 0; k < n_hc; k++)
        fprintf(t, " %.3f |", end[k]->val);
    fprintf(t, "\n| positional heads, Voita's rule (0.9) |");
    for (int k = 0; k < n_hc; k++)
        fprintf(t, " %d of %d |", end[k]->voita, L * hc[k]);
    fprintf(t, "\n| positional heads, majority rule (0.5) |");
    for (int k = 0; k < n_hc; k++)
        fprintf(t, " %d of %d |", end[k]->weak, L * hc[k]);
    fprintf(t, "\n| largest single-offset share |");
    for (int k = 0; k < n_hc; k++)
        fprintf(t, " %.2f |", end[k]->top_share);
    for (int q = 0; q < R; q++) {
        fprintf(t, "\n| margin: %s |", heads_relation_name(q));
        for (int k = 0; k < n_hc; k++)
            fprintf(t,
                    end[k]->margin[q] >= MARGIN ? " **%+.3f** |" : " %+.3f |",
                    end[k]->margin[q]);
    }
    fprintf(t, "\n");
    data_close(PROG, t);
}

/* REF/run.values, the run's command, machine and wall time, into
 * OUT/ch8roles_run.values as committed; returns its training tokens
 * (ch8roles.train_tokens) */
static long copy_run_values(const char *ref, const char *out)
{
    char path[600];
    snprintf(path, sizeof path, "%s/run.values", ref);
    FILE *in = fopen(path, "r");
    if (!in)
        die("cannot be read (it is committed with the kit)", path);
    FILE *rv = data_open(PROG, out, "ch8roles_run.values");
    char line[512];
    long train = 0;
    while (fgets(line, sizeof line, in)) {
        if (line[0] != '#' && strncmp(line, "ch8roles.", 9) != 0)
            die("holds a line that is not a ch8roles. key", path);
        const char *key = "ch8roles.train_tokens=";
        if (!strncmp(line, key, strlen(key))) {
            char num[64];
            snprintf(num, sizeof num, "%.*s",
                     (int)strcspn(line + strlen(key), "\n"),
                     line + strlen(key));
            if (!run_read_long(num, &train))
                die("holds a ch8roles.train_tokens that is not a whole "
                    "number",
                    path);
        }
        fputs(line, rv);
    }
    fclose(in);
    data_close(PROG, rv);
    if (train <= 0)
        die("has no ch8roles.train_tokens", path);
    return train;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: " PROG " OUTDIR [REFDIR]\n");
        return 2;
    }
    const char *out = argv[1];
    const char *ref = argc == 3 ? argv[2] : "tools/runs/lm/reference";
    char path[600];
    static struct row rows[MAX_ROWS];
    snprintf(path, sizeof path, "%s/roles.csv", ref);
    const int n = read_roles(path, rows);
    double bi_val, bi_test, tri_val, tri_test;
    snprintf(path, sizeof path, "%s/baselines.csv", ref);
    read_baseline(path, "bigram", &bi_val, &bi_test);
    read_baseline(path, "trigram", &tri_val, &tri_test);
    int hc[MAX_HC];
    const int n_hc = head_counts(rows, n, hc);

    FILE *v = data_open(PROG, out, "ch8roles.values");
    write_chance_values(v, bi_val, tri_val);
    write_gpi(out, hc, n_hc, bi_val, tri_val);
    int last_tokens = 0;
    for (int k = 0; k < n_hc; k++) {
        const struct row *last =
            write_head_count(out, v, rows, n, hc[k], k == 0, bi_val, tri_val);
        last_tokens = last->tokens;
    }
    write_cases(ref, v);
    write_table(out, rows, n, hc, n_hc);
    /* the passes over the training texts the run made */
    const long train = copy_run_values(ref, out);
    fprintf(v, "ch8roles.passes=%.1f\n", last_tokens / (double)train);
    data_close(PROG, v);
    return 0;
}
