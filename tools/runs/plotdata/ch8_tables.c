/*
 * plotdata/ch8_tables.c: chapter 8's tables and gnuplot settings, made
 * from the data of a run of lm-experiment, so that a table's heading is
 * a line here and `make book` shows it without training anything again.
 * The run writes data only: its CSV files, generated.txt, sentence/,
 * and with --data the values and plot data (data/); this program reads
 * them and renders.
 *
 *   usage: ch8_tables OUTDIR [RUNDIR [DATADIR [SIZES]]]
 *
 * RUNDIR defaults to tools/runs/lm/reference/long (the run the book
 * prints), DATADIR to RUNDIR/data, SIZES to tools/runs/lm/sizes.tsv (the
 * table of the experiment's sizes). Reads from RUNDIR results.csv,
 * tuning.csv, baselines.csv, relations.csv, offsets.csv, ablation.csv,
 * tag_profiles.csv, tag_baselines.csv, row_max.csv, generated.txt and
 * sentence/ablation_hH.dat; from DATADIR ch8run.values, ch8tags.values
 * and ch8_sent.values. Writes into OUTDIR:
 *   ch8_heads.md        per head count: the validation loss at each rate
 *                       tried (the chosen one in bold), the chosen rate,
 *                       the test loss over seeds; the n-gram baselines
 *   ch8_kv.md           the query heads over each K/V head count
 *   ch8_relations.md    each relation's best fixed offset and each
 *                       measured network's best head
 *   ch8_positional.md   positional heads, the strongest offset, the
 *                       costliest head when mean-ablated
 *   ch8_sharp.md        every head's mean heaviest weight
 *   ch8_generated.md    the generated lines of 1 head and the best count
 *   ch8_tags.md         the heads that beat every fixed offset on a pair
 *                       of tag classes, and the one that beats them most
 *   ch8_sent_ablation.md  the head whose ablation costs the sentence most
 *   ch8_curves.gpi      the head counts of ch8_curves.dat's columns
 *   ch8_sent.gpi        which networks the sentence's maps show
 *   ch8size.values      the run's size, as the book prints it: its row of
 *                       SIZES (ch8size.d_model, .layers, .context,
 *                       .batch, .tokens, .d_head_h16)
 *   ch8sweep.values     the test losses of results.csv as the prose
 *                       states them: per configuration K (h1, h4, h16,
 *                       h4g1: heads, and g K/V heads where they differ)
 *                       ch8sweep.K.loss / .sd (mean and standard
 *                       deviation over the seeds) / .ppl (e^loss); per
 *                       pair A_vs_B of h1, h4, h16 the paired difference
 *                       A - B seed by seed: .mean, .min, .max, .n_pos
 *                       (seeds where A is worse), .p (two-sided paired
 *                       t-test), .pct (A's perplexity over B's, in
 *                       percent above 100); ch8sweep.seeds; and per
 *                       measured network ch8sweep.abl_hH.top_head /
 *                       .top_class / .top_cost / .top_all: the head and
 *                       word class of ablation.csv's costliest cell,
 *                       its cost there and on all words
 * The run's size is SIZES's row named by ch8run.size, and it must be the
 * one the run was trained at, as the run records it (read_size()): a
 * size the book prints is never other than the committed run's. The
 * width (d_head = d_model / h, the K/V cache's bytes) is that row's; the
 * depth is read from offsets.csv.
 * Dimension letters: H = head counts, R = relations, NC = tag classes.
 */
#define _POSIX_C_SOURCE 200809L

#include "../runner.h" /* run_read_row() */
#include "datafile.h"
#include "gpt.h"
#include "heads_lm.h"
#include "../lm/sizes_tsv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG            "ch8_tables"
#define MAX_CFG         16
#define MAX_SEEDS       8
#define MAX_TUNE        96
#define MAX_NET         8
#define MAX_HL          64 /* heads of one network, every block */
#define MAX_NC          16
#define R               HEADS_N_RELATIONS
#define TAG_MARGIN      0.05f /* ch8_tags: a head beating every offset */
#define TAG_MIN_QUERIES 100   /* ch8_tags: classes with enough queries */

static const char *const rel_key[R] = {"noun_det", "noun_adj", "prep_obj",
                                       "verb_subj", "noun_poss"};

struct cfg { /* one configuration of results.csv, its seeds */
    int h, g, n, params, seed[MAX_SEEDS];
    double lr, test[MAX_SEEDS];
};

struct tune { /* one tuning network of tuning.csv */
    int h, g, chosen;
    double lr, val;
};

struct net { /* one measured network (the first seed's) */
    int heads, n_heads;
    int cases[R], base_k[R];
    float base[R], score[MAX_HL][R], margin[MAX_HL][R];
    int best_off[MAX_HL], positional[MAX_HL];
    float share[MAX_HL], abl_all[MAX_HL], row_max[MAX_HL];
    float abl_top; /* the largest cost of one head on one class of word */
    int abl_top_k;
    char abl_top_cls[32];
    float mass[MAX_HL][MAX_NC * MAX_NC];
};

struct tables {
    const char *dir, *data;
    int n_cfg, n_tune, n_net, L, C, nc;
    struct cfg cfg[MAX_CFG];
    struct tune tune[MAX_TUNE];
    struct net net[MAX_NET];
    double base_test[3];
    char base_name[3][16];
    char cls[MAX_NC][16];
    long tag_q[MAX_NC];
    float tag_uni[MAX_NC * MAX_NC], tag_off[16][MAX_NC * MAX_NC];
    int n_off;
};

static void die(const char *what, const char *path)
{
    fprintf(stderr, PROG ": %s: %s\n", path, what);
    exit(1);
}

static void die_row(const char *path, int line, const char *why)
{
    run_bad_row(PROG, path, line, why,
                "the run wrote it; if the kit committed it, git checkout "
                "restores it");
}

/* DIR/NAME for reading, its header checked against WANT (NULL: none) */
static FILE *open_csv(const char *dir, const char *name, const char *want,
                      char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot be read (lm-experiment writes it)", path);
    char line[1024];
    if (want && (!fgets(line, sizeof line, f) ||
                 strncmp(line, want, strlen(want)) != 0))
        die("its header is not lm-experiment's", path);
    return f;
}

/* the value of KEY in DIR/NAME (key=value lines), into buf; 0 if absent */
static int value(const struct tables *run, const char *name, const char *key,
                 char *buf, size_t n)
{
    char path[600], line[1024];
    snprintf(path, sizeof path, "%s/%s", run->data, name);
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot be read (lm-experiment --data writes it)", path);
    const size_t k = strlen(key);
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (!strncmp(line, key, k) && line[k] == '=') {
            line[strcspn(line, "\n")] = 0;
            snprintf(buf, n, "%s", line + k + 1);
            found = 1;
        }
    fclose(f);
    return found;
}

/* a whole-number value, or fallback when the run wrote none */
static int int_value(const struct tables *run, const char *name,
                     const char *key, int fallback)
{
    char buf[64];
    return value(run, name, key, buf, sizeof buf) ? atoi(buf) : fallback;
}

static struct net *net_of(struct tables *run, int heads, const char *path)
{
    for (int q = 0; q < run->n_net; q++)
        if (run->net[q].heads == heads)
            return &run->net[q];
    if (run->n_net == MAX_NET)
        die("has too many networks", path);
    struct net *x = &run->net[run->n_net++];
    memset(x, 0, sizeof *x);
    x->heads = heads;
    return x;
}

/* head k = block * heads + head of network x, checked */
static int head_of(const struct tables *run, const struct net *x, int block,
                   int head, const char *path, int row)
{
    if (block < 0 || head < 0 || head >= x->heads ||
        (block + 1) * x->heads > MAX_HL || (run->L && block >= run->L))
        die_row(path, row, "a head outside the network");
    return block * x->heads + head;
}

static void read_results(struct tables *run)
{
    char path[600], line[1024], why[128];
    FILE *f = open_csv(run->dir, "results.csv",
                       "impl,heads,kv_heads,lr,seed,params,tokens,val_loss,"
                       "test_loss",
                       path, sizeof path);
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        int h, g, params, seed;
        double lr, test;
        if (!run_read_row(why, sizeof why, line, "*iifiin*f+", &h, &g, &lr,
                          &seed, &params, &test))
            die_row(path, row, why);
        struct cfg *c = NULL;
        for (int i = 0; i < run->n_cfg; i++)
            if (run->cfg[i].h == h && run->cfg[i].g == g)
                c = &run->cfg[i];
        if (!c) {
            if (run->n_cfg == MAX_CFG)
                die_row(path, row, "too many configurations");
            c = &run->cfg[run->n_cfg++];
            *c = (struct cfg){.h = h, .g = g, .lr = lr, .params = params};
        }
        if (c->n == MAX_SEEDS)
            die_row(path, row, "too many seeds");
        c->seed[c->n] = seed;
        c->test[c->n++] = test;
    }
    fclose(f);
    if (run->n_cfg == 0)
        die("holds no networks", path);
}

static void read_tuning(struct tables *run)
{
    char path[600], line[1024], why[128];
    FILE *f = open_csv(run->dir, "tuning.csv",
                       "impl,heads,kv_heads,lr,seed,params,tokens,val_loss,"
                       "chosen",
                       path, sizeof path);
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        struct tune t;
        if (!run_read_row(why, sizeof why, line, "*iifnnnfi", &t.h, &t.g, &t.lr,
                          &t.val, &t.chosen))
            die_row(path, row, why);
        if (run->n_tune == MAX_TUNE)
            die_row(path, row, "too many tuning networks");
        run->tune[run->n_tune++] = t;
    }
    fclose(f);
}

static void read_baselines(struct tables *run)
{
    char path[600], line[1024], why[128];
    FILE *f = open_csv(run->dir, "baselines.csv",
                       "model,order,train_tokens,val_loss,test_loss", path,
                       sizeof path);
    int n = 0;
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        if (n == 3)
            die_row(path, row, "more than 3 n-gram models");
        if (!run_read_row(why, sizeof why, line, "sinnf+", run->base_name[n],
                          (int)sizeof run->base_name[n], &(int){0},
                          &run->base_test[n]))
            die_row(path, row, why);
        n++;
    }
    fclose(f);
    if (n != 3)
        die("does not hold the 3 n-gram models", path);
}

/* offsets.csv: each head's strongest offset, its share, and Voita's
 * verdict; the networks in the order the run measured them */
static void read_offsets(struct tables *run)
{
    char path[600], line[2048], why[128];
    FILE *f = open_csv(run->dir, "offsets.csv", "heads,block,head,mean_w_0",
                       path, sizeof path);
    int L = 0;
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        int heads, block, head, off, pos;
        double share;
        char *last = line;
        for (int commas = 0; *last && commas < 23; last++)
            commas += *last == ',';
        if (!run_read_row(why, sizeof why, line, "iii+", &heads, &block,
                          &head) ||
            !run_read_row(why, sizeof why, last, "ifi", &off, &share, &pos))
            die_row(path, row, why);
        struct net *x = net_of(run, heads, path);
        const int k = head_of(run, x, block, head, path, row);
        x->best_off[k] = off, x->share[k] = (float)share;
        x->positional[k] = pos;
        x->n_heads = k + 1 > x->n_heads ? k + 1 : x->n_heads;
        L = block + 1 > L ? block + 1 : L;
    }
    fclose(f);
    if (run->n_net == 0)
        die("holds no heads", path);
    run->L = L;
}

/* relations.csv: every head's score on each relation, and the baseline */
static void read_relations(struct tables *run)
{
    char path[600], line[1024], why[128];
    FILE *f = open_csv(run->dir, "relations.csv",
                       "relation,heads,block,head,cases,score,baseline,"
                       "best_k,margin",
                       path, sizeof path);
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        char name[32];
        int heads, block, head, cases, best_k;
        double score, base, margin;
        if (!run_read_row(why, sizeof why, line, "siiiiffif+", name,
                          (int)sizeof name, &heads, &block, &head, &cases,
                          &score, &base, &best_k, &margin))
            die_row(path, row, why);
        int rel = 0;
        while (rel < R && strcmp(rel_key[rel], name))
            rel++;
        if (rel == R)
            die_row(path, row, "a relation lm-experiment does not measure");
        struct net *x = net_of(run, heads, path);
        const int k = head_of(run, x, block, head, path, row);
        x->cases[rel] = cases, x->base[rel] = (float)base;
        x->base_k[rel] = best_k;
        x->score[k][rel] = (float)score, x->margin[k][rel] = (float)margin;
    }
    fclose(f);
}

/* ablation.csv: each head's loss increase over every predicted word */
static void read_ablation(struct tables *run)
{
    char path[600], line[1024], why[128];
    FILE *f = open_csv(run->dir, "ablation.csv",
                       "class,heads,block,head,targets,base,ablated,increase",
                       path, sizeof path);
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        char cls[32];
        int heads, block, head;
        double inc;
        if (!run_read_row(why, sizeof why, line, "siiinnnf", cls,
                          (int)sizeof cls, &heads, &block, &head, &inc))
            die_row(path, row, why);
        struct net *x = net_of(run, heads, path);
        const int k = head_of(run, x, block, head, path, row);
        if (!strcmp(cls, "all"))
            x->abl_all[k] = (float)inc;
        else if (x->abl_top_cls[0] == '\0' || inc > x->abl_top) {
            x->abl_top = (float)inc;
            x->abl_top_k = k;
            snprintf(x->abl_top_cls, sizeof x->abl_top_cls, "%s", cls);
        }
    }
    fclose(f);
}

/* row_max.csv: each head's mean heaviest weight in a row */
static void read_row_max(struct tables *run)
{
    char path[600], line[1024], why[128];
    FILE *f = open_csv(run->dir, "row_max.csv", "heads,block,head,row_max",
                       path, sizeof path);
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        int heads, block, head;
        double v;
        if (!run_read_row(why, sizeof why, line, "iiif", &heads, &block, &head,
                          &v))
            die_row(path, row, why);
        struct net *x = net_of(run, heads, path);
        x->row_max[head_of(run, x, block, head, path, row)] = (float)v;
    }
    fclose(f);
}

/* tag_baselines.csv: the classes, the queries of each, and a uniform
 * head's and each fixed offset's mass from class to class; its rows are
 * the pairs from * NC + to */
static void read_tag_baselines(struct tables *run)
{
    char path[600], line[1024], why[128], to[MAX_NC * MAX_NC][16];
    FILE *f = open_csv(run->dir, "tag_baselines.csv", NULL, path, sizeof path);
    if (!fgets(line, sizeof line, f) || strncmp(line, "from,to,queries,", 16))
        die("its header is not lm-experiment's", path);
    for (char *p = line; (p = strstr(p, ",offset_")) != NULL; p++)
        run->n_off++;
    if (run->n_off < 1 || run->n_off > 16)
        die("has no offsets, or too many", path);
    long q[MAX_NC * MAX_NC];
    int n = 0;
    for (int row = 2; fgets(line, sizeof line, f); row++, n++) {
        double uni;
        if (n == MAX_NC * MAX_NC)
            die_row(path, row, "too many pairs of classes");
        if (!run_read_row(why, sizeof why, line, "*slf+", to[n],
                          (int)sizeof to[n], &q[n], &uni))
            die_row(path, row, why);
        const char *p = line;
        for (int commas = 0; commas < 4; p++)
            commas += *p == ',';
        for (int k = 0; k < run->n_off; k++) {
            char *end;
            run->tag_off[k][n] = strtof(p, &end);
            if (end == p)
                die_row(path, row, "an offset's mass is not a number");
            p = end + (*end == ',');
        }
        run->tag_uni[n] = (float)uni;
    }
    fclose(f);
    int nc = 0;
    while (nc * nc < n)
        nc++;
    if (n == 0 || nc * nc != n)
        die("does not hold every pair of classes", path);
    run->nc = nc;
    for (int c = 0; c < nc; c++) {
        memcpy(run->cls[c], to[c], sizeof run->cls[c]);
        run->tag_q[c] = q[c * nc];
    }
}

/* tag_profiles.csv: every measured head's mass from class to class, its
 * pairs in tag_baselines.csv's order */
static void read_tag_profiles(struct tables *run)
{
    char path[600], line[1024], why[128];
    FILE *f = open_csv(run->dir, "tag_profiles.csv",
                       "heads,block,head,from,to,mass", path, sizeof path);
    const int nc = run->nc;
    static int at[MAX_NET][MAX_HL];
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        int heads, block, head;
        char from[16], to[16];
        double mass;
        if (!run_read_row(why, sizeof why, line, "iiissf", &heads, &block,
                          &head, from, (int)sizeof from, to, (int)sizeof to,
                          &mass))
            die_row(path, row, why);
        struct net *x = net_of(run, heads, path);
        const int k = head_of(run, x, block, head, path, row);
        int *i = &at[x - run->net][k];
        if (*i == nc * nc || strcmp(from, run->cls[*i / nc]) ||
            strcmp(to, run->cls[*i % nc]))
            die_row(path, row,
                    "not the pair of classes tag_baselines.csv "
                    "has there");
        x->mass[k][(*i)++] = (float)mass;
    }
    fclose(f);
}

/* ---------------------------------------------------------------------
 * The tables
 * ------------------------------------------------------------------- */

/* mean and sample sd of n numbers, as the run's run_sum_stats() */
static void stats(const double *x, int n, double *mean, double *sd)
{
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += x[i], sq += x[i] * x[i];
    *mean = n ? sum / n : 0;
    const double var = n > 1 ? (sq - n * *mean * *mean) / (n - 1) : 0;
    *sd = var > 0 ? sqrt(var) : 0;
}

/* the rates any tuning network was trained at, lowest first */
static int rates_used(const struct tables *run, double *lr)
{
    int n = 0;
    for (int t = 0; t < run->n_tune; t++) {
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= fabs(lr[i] - run->tune[t].lr) < 1e-9;
        if (!seen && n < MAX_TUNE)
            lr[n++] = run->tune[t].lr;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && lr[j] < lr[j - 1]; j--) {
            const double x = lr[j];
            lr[j] = lr[j - 1], lr[j - 1] = x;
        }
    return n;
}

static const struct tune *tuned(const struct tables *run, const struct cfg *c,
                                double lr)
{
    for (int t = 0; t < run->n_tune; t++)
        if (run->tune[t].h == c->h && run->tune[t].g == c->g &&
            fabs(run->tune[t].lr - lr) < 1e-9)
            return &run->tune[t];
    return NULL;
}

/* ch8_heads.md: the head counts, tuned alike, and the n-gram models */
static void write_heads(const struct tables *run, const char *out)
{
    double lr[MAX_TUNE];
    const int n_lr = rates_used(run, lr);
    FILE *f = data_open(PROG, out, "ch8_heads.md");
    fprintf(f, "| heads | d_head |");
    for (int i = 0; i < n_lr; i++)
        fprintf(f, " lr %g |", lr[i]);
    fprintf(f, " chosen | test loss (nats) |\n|---:|---:|");
    for (int i = 0; i < n_lr; i++)
        fprintf(f, "---:|");
    fprintf(f, "---:|---:|\n");
    for (int i = 0; i < run->n_cfg; i++) {
        const struct cfg *c = &run->cfg[i];
        if (c->g != c->h)
            continue; /* the K/V table's */
        fprintf(f, "| %d | %d |", c->h, run->C / c->h);
        for (int j = 0; j < n_lr; j++) {
            const struct tune *t = tuned(run, c, lr[j]);
            if (t)
                fprintf(f, t->chosen ? " **%.3f** |" : " %.3f |", t->val);
            else
                fprintf(f, " – |");
        }
        double mean, sd;
        stats(c->test, c->n, &mean, &sd);
        fprintf(f, " %g | %.3f ± %.3f |\n", c->lr, mean, sd);
    }
    for (int k = 0; k < 3; k++) { /* the baselines' rows */
        fprintf(f, "| %s | – |", run->base_name[k]);
        for (int i = 0; i < n_lr; i++)
            fprintf(f, " – |");
        fprintf(f, " – | %.3f |\n", run->base_test[k]);
    }
    data_close(PROG, f);
}

/* the query heads that share K/V heads in some configuration; 0: none */
static int gqa_heads(const struct tables *run)
{
    for (int i = 0; i < run->n_cfg; i++)
        if (run->cfg[i].g != run->cfg[i].h)
            return run->cfg[i].h;
    return 0;
}

/* ch8_kv.md: the query heads over each K/V head count, their own first */
static void write_kv(const struct tables *run, const char *out)
{
    const int gqa = gqa_heads(run);
    if (gqa == 0)
        return; /* the run shared no K/V heads */
    FILE *f = data_open(PROG, out, "ch8_kv.md");
    fprintf(f, "| K/V heads | chosen lr | test loss (nats) | perplexity | "
               "parameters | cache bytes per token |\n"
               "|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < run->n_cfg; i++) {
        const struct cfg *c = &run->cfg[i];
        if (c->h != gqa)
            continue;
        double ppl[MAX_SEEDS], mean, sd, pm, psd;
        for (int s = 0; s < c->n; s++)
            ppl[s] = exp(c->test[s]);
        stats(c->test, c->n, &mean, &sd);
        stats(ppl, c->n, &pm, &psd);
        /* K and V, g heads of d_head floats, in every block */
        fprintf(f, "| %d | %g | %.3f ± %.3f | %.1f ± %.1f | %d | %d |\n", c->g,
                c->lr, mean, sd, pm, psd, c->params,
                2 * run->L * c->g * (run->C / gqa) * (int)sizeof(float));
    }
    data_close(PROG, f);
}

/* the best head of x on relation rel, by its score: the first of ties */
static int best_head(const struct net *x, int rel)
{
    int best = 0;
    for (int k = 1; k < x->n_heads; k++)
        if (x->score[k][rel] > x->score[best][rel])
            best = k;
    return best;
}

/* ch8_relations.md: each relation's best fixed offset, and each
 * measured network's best head beside it */
static void write_relations(const struct tables *run, const char *out)
{
    FILE *f = data_open(PROG, out, "ch8_relations.md");
    fprintf(f, "| relation | cases | best fixed offset |");
    for (int q = 0; q < run->n_net; q++)
        fprintf(f, " %d head%s: best head, margin |", run->net[q].heads,
                run->net[q].heads > 1 ? "s" : "");
    fprintf(f, "\n|:---|---:|---:|");
    for (int q = 0; q < run->n_net; q++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    const struct net *first = &run->net[0];
    for (int rel = 0; rel < R; rel++) {
        fprintf(f, "| %s | %d | %.2f (%d back) |", heads_relation_name(rel),
                first->cases[rel], (double)first->base[rel],
                first->base_k[rel]);
        for (int q = 0; q < run->n_net; q++) {
            const struct net *x = &run->net[q];
            const int k = best_head(x, rel);
            fprintf(f, " %.2f (%d.%d), %+.2f |", (double)x->score[k][rel],
                    k / x->heads, k % x->heads, (double)x->margin[k][rel]);
        }
        fprintf(f, "\n");
    }
    data_close(PROG, f);
}

/* ch8_positional.md: per network, its positional heads, its strongest
 * offset, and its costliest head when mean-ablated */
static void write_positional(const struct tables *run, const char *out)
{
    FILE *f = data_open(PROG, out, "ch8_positional.md");
    fprintf(f, "| heads | heads in all | positional | the strongest offset "
               "(share of rows) | costliest head when mean-ablated |\n"
               "|---:|---:|---:|---:|---:|\n");
    for (int q = 0; q < run->n_net; q++) {
        const struct net *x = &run->net[q];
        int n_pos = 0, strong = 0, wk = 0;
        for (int k = 0; k < x->n_heads; k++) {
            n_pos += x->positional[k];
            strong = x->share[k] > x->share[strong] ? k : strong;
            wk = x->abl_all[k] > x->abl_all[wk] ? k : wk;
        }
        /* the run's own value where it wrote one: unrounded, the same */
        char key[64], buf[64];
        snprintf(key, sizeof key, "ch8run.abl_max_h%d", x->heads);
        const double worst = value(run, "ch8run.values", key, buf, sizeof buf)
                                 ? atof(buf)
                                 : (double)x->abl_all[wk];
        fprintf(f,
                "| %d | %d | %d | %d.%d: %d back (%.2f) | %d.%d: %+.3f nats "
                "|\n",
                x->heads, x->n_heads, n_pos, strong / x->heads,
                strong % x->heads, x->best_off[strong],
                (double)x->share[strong], wk / x->heads, wk % x->heads, worst);
    }
    data_close(PROG, f);
}

/* ch8_sharp.md: each head's mean heaviest weight, a row per network and
 * block, those above 0.5 in bold */
static void write_sharp(const struct tables *run, const char *out)
{
    FILE *f = data_open(PROG, out, "ch8_sharp.md");
    fprintf(f, "| heads | block | each head's mean heaviest weight, head 0 "
               "first |\n|--:|--:|:------------------------------------|\n");
    for (int q = 0; q < run->n_net; q++)
        for (int l = 0; l < run->L; l++) {
            const struct net *x = &run->net[q];
            fprintf(f, "| %d | %d |", x->heads, l);
            for (int i = 0; i < x->heads; i++) {
                const float v = x->row_max[l * x->heads + i];
                fprintf(f, v > 0.5f ? " **%.2f**" : " %.2f", (double)v);
            }
            fprintf(f, " |\n");
        }
    data_close(PROG, f);
}

/* ch8_generated.md: generated.txt's lines of the 1-head network and of
 * the best many-head count, as text blocks */
static void write_generated(const struct tables *run, const char *out)
{
    const int best = int_value(run, "ch8run.values", "ch8run.best_heads", -1);
    char path[600], line[4096];
    FILE *f = data_open(PROG, out, "ch8_generated.md");
    for (int q = 0; q < run->n_net; q++) {
        const int h = run->net[q].heads;
        if (h != 1 && h != best)
            continue;
        FILE *g = open_csv(run->dir, "generated.txt", NULL, path, sizeof path);
        char prefix[32];
        snprintf(prefix, sizeof prefix, "%d heads: ", h);
        fprintf(f, "%d head%s:\n\n```text\n", h, h > 1 ? "s" : "");
        int n = 0;
        while (fgets(line, sizeof line, g))
            if (!strncmp(line, prefix, strlen(prefix)))
                fputs(line + strlen(prefix), f), n++;
        fclose(g);
        if (n == 0)
            die("has no lines of a measured network", path);
        fprintf(f, "```\n\n");
    }
    data_close(PROG, f);
}

/* A head's tag-profile margin: over the pairs of classes whose query
 * class has at least TAG_MIN_QUERIES queries, the largest excess of its
 * mass over the best fixed offset's for the same pair; *pair gets that
 * pair (from * NC + to) and *k the offset. */
static float tag_margin(const struct tables *run, const struct net *x, int head,
                        int *pair, int *k)
{
    const int nc = run->nc;
    float best = -1;
    for (int c = 0; c < nc * nc; c++) {
        if (run->tag_q[c / nc] < TAG_MIN_QUERIES)
            continue;
        int kb = 0;
        for (int j = 1; j < run->n_off; j++)
            kb = run->tag_off[j][c] > run->tag_off[kb][c] ? j : kb;
        const float m = x->mass[head][c] - run->tag_off[kb][c];
        if (m > best)
            best = m, *pair = c, *k = kb;
    }
    return best;
}

/* ch8_tags.md: per network, its heads that beat every fixed offset on
 * some pair of classes by TAG_MARGIN, and the one that beats
 * them most */
static void write_tags(const struct tables *run, const char *out)
{
    const int nc = run->nc;
    FILE *f = data_open(PROG, out, "ch8_tags.md");
    fprintf(f,
            "| heads | heads beating every offset by %.2f | head | from "
            "| to | its weight | uniform | best offset | margin |\n"
            "|---:|---:|---:|:--|:--|---:|---:|---:|---:|\n",
            (double)TAG_MARGIN);
    for (int q = 0; q < run->n_net; q++) {
        const struct net *x = &run->net[q];
        int n_beat = 0, top = 0, top_pair = 0, top_k = 0;
        float top_m = -1;
        for (int k = 0; k < x->n_heads; k++) {
            int pair = 0, kb = 0;
            const float m = tag_margin(run, x, k, &pair, &kb);
            n_beat += m >= TAG_MARGIN;
            if (m > top_m)
                top_m = m, top = k, top_pair = pair, top_k = kb;
        }
        /* the count the run made from unrounded masses, where it wrote
         * one: a margin at the threshold's edge counts as it did there */
        char key[64];
        snprintf(key, sizeof key, "ch8tags.n_beat_h%d", x->heads);
        n_beat = int_value(run, "ch8tags.values", key, n_beat);
        fprintf(f,
                "| %d | %d of %d | %d.%d | %s | %s | %.2f | %.2f | %.2f "
                "(%d back) | %+.2f |\n",
                x->heads, n_beat, x->n_heads, top / x->heads, top % x->heads,
                run->cls[top_pair / nc], run->cls[top_pair % nc],
                (double)x->mass[top][top_pair], (double)run->tag_uni[top_pair],
                (double)run->tag_off[top_k][top_pair], top_k, (double)top_m);
    }
    data_close(PROG, f);
}

/* sentence/ablation_hH.dat: the sentence's loss at each predicted word
 * and its increase with each head mean-ablated; returns the words */
#define MAX_WORDS 32
static int read_sent_ablation(const struct tables *run, const struct net *x,
                              char (*word)[32], float *base,
                              float (*inc)[MAX_WORDS])
{
    char path[600], name[64], line[4096];
    snprintf(name, sizeof name, "sentence/ablation_h%d.dat", x->heads);
    FILE *f = open_csv(run->dir, name, "word loss", path, sizeof path);
    int n = 0;
    for (int row = 2; fgets(line, sizeof line, f); row++, n++) {
        char *p = line, *end;
        int len = 0;
        if (n == MAX_WORDS || sscanf(p, "%31s%n", word[n], &len) != 1)
            die_row(path, row, "too many words, or none");
        p += len;
        base[n] = strtof(p, &end);
        for (int k = 0; k < x->n_heads && end != p; k++) {
            p = end;
            inc[k][n] = strtof(p, &end);
        }
        if (end == p || strspn(end, " \r\n") != strlen(end))
            die_row(path, row, "not a loss and one increase per head");
    }
    fclose(f);
    return n;
}

/* ch8_sent_ablation.md: per network, the head whose mean ablation costs
 * the lesson's sentence most in all, and the word it costs most */
static void write_sent_ablation(const struct tables *run, const char *out)
{
    static float inc[MAX_HL][MAX_WORDS];
    char word[MAX_WORDS][32];
    float base[MAX_WORDS];
    FILE *f = data_open(PROG, out, "ch8_sent_ablation.md");
    fprintf(f, "| heads | head | sentence loss, + | word most hurt | "
               "its loss, + |\n|---:|---:|---:|:--|---:|\n");
    for (int q = 0; q < run->n_net; q++) {
        const struct net *x = &run->net[q];
        const int n = read_sent_ablation(run, x, word, base, inc);
        int worst = 0, w = 0;
        double worst_sum = -1e9;
        for (int k = 0; k < x->n_heads; k++) {
            double sum = 0;
            for (int t = 0; t < n; t++)
                sum += inc[k][t];
            if (sum > worst_sum)
                worst_sum = sum, worst = k;
        }
        /* the run's choice where it wrote one: made from unrounded
         * losses, it holds where the rounded sums tie */
        char key[64], buf[64];
        snprintf(key, sizeof key, "ch8tags.sent_head_h%d", x->heads);
        worst = int_value(run, "ch8tags.values", key, worst);
        if (worst < 0 || worst >= x->n_heads)
            die("names a head the network does not have", key);
        for (int t = 1; t < n; t++)
            if (inc[worst][t] > inc[worst][w])
                w = t;
        snprintf(key, sizeof key, "ch8tags.sent_cost_h%d", x->heads);
        if (value(run, "ch8tags.values", key, buf, sizeof buf))
            worst_sum = atof(buf); /* the run's sum of unrounded losses */
        fprintf(f, "| %d | %d.%d | %+.3f | %s | %.2f, %+.3f |\n", x->heads,
                worst / x->heads, worst % x->heads, worst_sum, word[w],
                (double)base[w], (double)inc[worst][w]);
    }
    data_close(PROG, f);
}

/* ch8_curves.gpi: the head counts of ch8_curves.dat's column pairs */
static void write_curves_gpi(const struct tables *run, const char *out)
{
    FILE *f = data_open(PROG, out, "ch8_curves.gpi");
    fprintf(f,
            "# the columns of ch8_curves.dat\nn_curves = 0\nlabels = \"\"\n");
    int n = 0;
    for (int i = 0; i < run->n_cfg; i++)
        if (run->cfg[i].g == run->cfg[i].h)
            fprintf(f, "labels = labels.\" %d\"\n", run->cfg[i].h), n++;
    fprintf(f, "n_curves = %d\n", n);
    data_close(PROG, f);
}

/* ch8_sent.gpi: which networks the sentence's maps and its ablation
 * show, and how many words it has (sentence/'s maps' header) */
static void write_sent_gpi(const struct tables *run, const char *out)
{
    char path[600], name[64], line[4096];
    snprintf(name, sizeof name, "sentence/sentence_h%d_l0_i0.dat",
             run->net[0].heads);
    FILE *g = open_csv(run->dir, name, "query\\key ", path, sizeof path);
    fclose(g);
    g = open_csv(run->dir, name, NULL, path, sizeof path);
    int n_words = -1; /* the header's first field is not a word */
    if (fgets(line, sizeof line, g))
        for (char *t = strtok(line, " \n"); t; t = strtok(NULL, " \n"))
            n_words++;
    fclose(g);
    FILE *f = data_open(PROG, out, "ch8_sent.gpi");
    fprintf(f,
            "# the sentence maps: ch8_sent_one_l*_i0.dat and, for the network "
            "of `many` heads,\n# ch8_sent_many_l*_i*.dat; the ablation's: "
            "`ablated` heads\nmany = %d\nablated = %d\nn_words = %d\n",
            int_value(run, "ch8_sent.values", "ch8run.sent_heads", 0),
            int_value(run, "ch8run.values", "ch8run.best_heads", 0), n_words);
    data_close(PROG, f);
}

/* one size of the run's record against the table's, or stop */
static void same_size(const char *what, int recorded, int table,
                      const char *where, const char *sizes, const char *name)
{
    if (recorded == table)
        return;
    fprintf(stderr,
            PROG ": %s, size %s: %s is %d there but %d in the run (%s): "
                 "the book would print a size the run was not trained at\n",
            sizes, name, what, table, recorded, where);
    exit(1);
}

/* The run's size: the row of the table of sizes (path) that ch8run.size
 * names, checked against what the run records it was trained at: its
 * batch, tokens and steps (ch8run.values: steps x batch x context are
 * its tokens, the budget cut to whole steps), its width, depth and
 * context where it writes them (ch8run.d_model, .layers, .context) and
 * in table.txt's first line, its depth in offsets.csv; into run->C and
 * OUTDIR/ch8size.values. */
static void read_size(struct tables *run, const char *path, const char *out)
{
    static struct size_row rows[SIZES_TSV_MAX];
    char why[700], name[64], where[700];
    const int n = sizes_tsv_read(path, rows, why, sizeof why);
    if (n == 0) {
        fprintf(stderr, PROG ": the table of sizes: %s\n", why);
        exit(1);
    }
    if (!value(run, "ch8run.values", "ch8run.size", name, sizeof name))
        die("names no size (ch8run.size)", run->data);
    const struct size_row *z = sizes_tsv_find(rows, n, name);
    if (!z) {
        fprintf(stderr, PROG ": %s: no size '%s', the size of the run in %s\n",
                path, name, run->data);
        exit(1);
    }
    /* table.txt's first line: "Chapter 8 (IMPL, size NAME): V 8192,
     * d_model 64, 2 blocks, context 64, batch 8 x 64 tokens; ..." */
    snprintf(where, sizeof where, "%s/table.txt", run->dir);
    FILE *f = fopen(where, "r");
    char line[1024];
    int V, C, L, T, B, T2;
    if (f && fgets(line, sizeof line, f) &&
        sscanf(line,
               "Chapter 8 (%*[^)]): V %d, d_model %d, %d blocks, context %d, "
               "batch %d x %d tokens",
               &V, &C, &L, &T, &B, &T2) == 6) {
        same_size("d_model", C, z->C, where, path, name);
        same_size("the depth", L, z->L, where, path, name);
        same_size("the context", T, z->T, where, path, name);
        same_size("the batch", B, z->B, where, path, name);
    } else if (f)
        die("its first line does not name the run's sizes", where);
    if (f)
        fclose(f);
    snprintf(where, sizeof where, "%s/ch8run.values", run->data);
    const int steps = z->tokens / (z->B * z->T);
    same_size("d_model",
              int_value(run, "ch8run.values", "ch8run.d_model", z->C), z->C,
              where, path, name);
    same_size("the depth",
              int_value(run, "ch8run.values", "ch8run.layers", z->L), z->L,
              where, path, name);
    same_size("the context",
              int_value(run, "ch8run.values", "ch8run.context", z->T), z->T,
              where, path, name);
    same_size("the batch", int_value(run, "ch8run.values", "ch8run.batch", -1),
              z->B, where, path, name);
    same_size("the number of steps",
              int_value(run, "ch8run.values", "ch8run.steps", -1), steps, where,
              path, name);
    same_size("the tokens per network",
              int_value(run, "ch8run.values", "ch8run.tokens", -1),
              steps * z->B * z->T, where, path, name);
    snprintf(where, sizeof where, "%s/offsets.csv", run->dir);
    same_size("the depth", run->L, z->L, where, path, name);
    run->C = z->C;
    FILE *v = data_open(PROG, out, "ch8size.values");
    fprintf(v,
            "ch8size.d_model=%d\nch8size.layers=%d\nch8size.context=%d\n"
            "ch8size.batch=%d\nch8size.tokens=%d\n",
            z->C, z->L, z->T, z->B, z->tokens);
    if (z->C % 16 == 0) /* the width of a head of the 16-head networks */
        fprintf(v, "ch8size.d_head_h16=%d\n", z->C / 16);
    data_close(PROG, v);
}

/* a tag class of ablation.csv as the prose names it */
static const char *class_words(const char *cls)
{
    static const char *const names[][2] = {
        {"det", "determiners"},   {"noun", "nouns"},
        {"verb", "verbs"},        {"adj", "adjectives"},
        {"prep", "prepositions"}, {"pron", "pronouns"},
        {"punct", "punctuation"}, {"other", "other words"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(cls, names[i][0]))
            return names[i][1];
    return cls;
}

/* the configuration of H heads on H K/V heads, or NULL */
static const struct cfg *cfg_of(const struct tables *run, int h)
{
    for (int i = 0; i < run->n_cfg; i++)
        if (run->cfg[i].h == h && run->cfg[i].g == h)
            return &run->cfg[i];
    return NULL;
}

/* the two-sided p of Student's t with DF degrees of freedom: 1 minus
 * twice the density's integral from 0 to |t| (Simpson's rule) */
static double t_two_sided(double t, int df)
{
    const double nu = df, a = fabs(t), k = 4000;
    const double c =
        tgamma((nu + 1) / 2) / (sqrt(nu * acos(-1.0)) * tgamma(nu / 2));
    double sum = 0;
    for (int i = 0; i <= k; i++) {
        const double x = a * i / k;
        const double w = (i == 0 || i == k) ? 1 : (i % 2 ? 4 : 2);
        sum += w * c * pow(1 + x * x / nu, -(nu + 1) / 2);
    }
    const double p = 1 - 2 * sum * a / (3 * k);
    return p < 0 ? 0 : p;
}

/* ch8sweep.values: the sweep's test losses and the paired differences
 * the prose states, each seed of one configuration against the same
 * seed of another (a seed gives both the same batches and start) */
static void write_sweep(const struct tables *run, const char *out)
{
    FILE *v = data_open(PROG, out, "ch8sweep.values");
    int seeds = 0;
    for (int i = 0; i < run->n_cfg; i++) {
        const struct cfg *c = &run->cfg[i];
        char key[32];
        if (c->g == c->h)
            snprintf(key, sizeof key, "h%d", c->h);
        else
            snprintf(key, sizeof key, "h%dg%d", c->h, c->g);
        double m = 0, ss = 0;
        for (int s = 0; s < c->n; s++)
            m += c->test[s] / c->n;
        for (int s = 0; s < c->n; s++)
            ss += (c->test[s] - m) * (c->test[s] - m);
        fprintf(v, "ch8sweep.%s.loss=%.3f\nch8sweep.%s.sd=%.3f\n", key, m, key,
                c->n > 1 ? sqrt(ss / (c->n - 1)) : 0.0);
        fprintf(v, "ch8sweep.%s.ppl=%.1f\n", key, exp(m));
        if (c->n > seeds)
            seeds = c->n;
    }
    fprintf(v, "ch8sweep.seeds=%d\n", seeds);
    static const int pairs[][2] = {{1, 4}, {1, 16}, {4, 16}};
    for (int p = 0; p < 3; p++) {
        const struct cfg *a = cfg_of(run, pairs[p][0]),
                         *b = cfg_of(run, pairs[p][1]);
        if (!a || !b)
            continue;
        double d[MAX_SEEDS], m = 0, ss = 0, lo = INFINITY, hi = -INFINITY;
        int n = 0, n_pos = 0;
        for (int i = 0; i < a->n; i++)
            for (int j = 0; j < b->n; j++)
                if (a->seed[i] == b->seed[j])
                    d[n++] = a->test[i] - b->test[j];
        if (n < 2)
            continue;
        for (int i = 0; i < n; i++) {
            m += d[i] / n;
            n_pos += d[i] > 0;
            lo = fmin(lo, d[i]);
            hi = fmax(hi, d[i]);
        }
        for (int i = 0; i < n; i++)
            ss += (d[i] - m) * (d[i] - m);
        const double sd = sqrt(ss / (n - 1));
        const double pv = sd > 0 ? t_two_sided(m / (sd / sqrt(n)), n - 1) : 0;
        char key[32];
        snprintf(key, sizeof key, "ch8sweep.h%d_vs_h%d", pairs[p][0],
                 pairs[p][1]);
        fprintf(v,
                "%s.mean=%.3f\n%s.min=%.3f\n%s.max=%.3f\n%s.n_pos=%d\n"
                "%s.n=%d\n%s.p=%.2f\n%s.pct=%.1f\n",
                key, m, key, lo, key, hi, key, n_pos, key, n, key, pv, key,
                100 * (exp(m) - 1));
    }
    /* each measured network's costliest cell of the ablation by class:
     * the head (block.head), the class, its cost there and on all words */
    for (int i = 0; i < run->n_net; i++) {
        const struct net *x = &run->net[i];
        if (x->abl_top_cls[0] == '\0')
            continue;
        const int k = x->abl_top_k;
        fprintf(
            v,
            "ch8sweep.abl_h%d.top_head=%d.%d\nch8sweep.abl_h%d.top_class=%s\n"
            "ch8sweep.abl_h%d.top_cost=%.3f\nch8sweep.abl_h%d.top_all=%.3f\n",
            x->heads, k / x->heads, k % x->heads, x->heads,
            class_words(x->abl_top_cls), x->heads, x->abl_top, x->heads,
            x->abl_all[k]);
    }
    data_close(PROG, v);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) {
        fprintf(stderr, "usage: " PROG " OUTDIR [RUNDIR [DATADIR [SIZES]]]\n");
        return 2;
    }
    static struct tables run;
    char data[600];
    run.dir = argc >= 3 ? argv[2] : "tools/runs/lm/reference/long";
    snprintf(data, sizeof data, "%s/data", run.dir);
    run.data = argc >= 4 ? argv[3] : data;
    read_offsets(&run); /* first: the networks in the run's order */
    read_size(&run, argc == 5 ? argv[4] : "tools/runs/lm/sizes.tsv", argv[1]);
    read_results(&run);
    read_tuning(&run);
    read_baselines(&run);
    read_relations(&run);
    read_ablation(&run);
    read_row_max(&run);
    read_tag_baselines(&run);
    read_tag_profiles(&run);
    const char *out = argv[1];
    write_heads(&run, out);
    write_sweep(&run, out);
    write_kv(&run, out);
    write_relations(&run, out);
    write_positional(&run, out);
    write_sharp(&run, out);
    write_generated(&run, out);
    write_tags(&run, out);
    write_sent_ablation(&run, out);
    write_curves_gpi(&run, out);
    write_sent_gpi(&run, out);
    return 0;
}
