/*
 * plotdata/ch8_long.c: chapter 8's experiment as the book prints it, from
 * the kit's reference run of `make lm-reference` (lm-experiment --size
 * long), committed as data in tools/runs/lm/reference/long/: its CSV files,
 * the book's data it wrote with --data (data/), and run.values (the
 * command, the machine and the wall time). The run takes about two and a
 * half hours on two cores, longer than `make all` may spend, so the book
 * prints this reference; `make lm-reference` reruns it and compares, and
 * `make check` (67-lm) reruns its first validation point.
 *
 *   usage: ch8_long OUTDIR [REFDIR [BOOKDIR [HALFDIR]]]
 *
 * Writes into OUTDIR:
 *   every file of REFDIR/data/, as the run wrote it (ch8run.values,
 *                     the curves, the sentence's maps, ...; its tables
 *                     are plotdata/ch8_tables.c's)
 *   ch8_sentence_hH_lL_iI.dat, ch8_ablation_hH.dat  every file of
 *                     REFDIR/sentence/ (every head's weights on the lesson's
 *                     sentence, and what ablating each costs it), renamed
 *   ch8long_run.values  REFDIR/run.values as committed
 *   ch8_hard.md       the relations on their hard cases: those whose
 *                     related word is not at the relation's most common
 *                     offset; per relation its cases, the best fixed
 *                     offset's share of them, and each network's best head
 *   ch8_close.md      the run in one table: per configuration its test
 *                     loss, its best relation margin (the mean over seeds,
 *                     and each seed's, from REFDIR/seed_heads.csv), its
 *                     positional heads by Voita's rule and by the majority
 *                     rule per seed; the n-gram models' test losses beneath
 *   ch8_generated_ngram.md  the trigram model's lines for the networks'
 *                     prompts (REFDIR/generated.txt), as a text block
 * From BOOKDIR (default tools/runs/lm/reference/book), the book-sized
 * run's ablation.csv and results.csv: ch8long.values's book_ keys,
 * what mean-ablating block 1's costliest head costs at that budget.
 * From HALFDIR (default tools/runs/lm/reference/long-4m), the same
 * protocol at half the budget, its results.csv and seed_heads.csv:
 * ch8long.values's ch8half. keys, each configuration's mean test loss
 * and mean best margin there.
 *   ch8long.values    the numbers the chapter quotes from those (key=value)
 * Dimension letters: H = measured head counts, R = relations.
 */
#define _POSIX_C_SOURCE 200809L

#include "../runner.h" /* run_read_row(): every number whole, or an error */
#include "datafile.h"
#include "gpt.h"
#include "heads_lm.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROG      "ch8_long"
#define MAX_HC    8
#define MAX_CFG   16
#define R         5
#define MARGIN    0.05 /* the margin the chapter asks of a head */
#define MAJORITY  0.5  /* the majority rule, as lm-experiment --roles's */
#define MAX_SEEDS 8

static const char *const rel_key[R] = {"noun_det", "noun_adj", "prep_obj",
                                       "verb_subj", "noun_poss"};

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

static FILE *open_ref(const char *ref, const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", ref, name);
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot be read (it is committed with the kit; make "
            "lm-reference writes it)",
            path);
    return f;
}

/* the header line of a CSV must begin with WANT */
static void header(FILE *f, const char *path, const char *want)
{
    char line[1024];
    if (!fgets(line, sizeof line, f) || strncmp(line, want, strlen(want)))
        die("its header is not lm-experiment's", path);
}

/* REF/NAME, a committed values file, into OUT/TO as it is: comments
 * and keys that start with PREFIX, at least one key */
static void copy_values(const char *ref, const char *name, const char *out,
                        const char *to, const char *prefix)
{
    char path[600], line[1024];
    FILE *f = open_ref(ref, name, path, sizeof path);
    FILE *o = data_open(PROG, out, to);
    int n_keys = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] != '#' && strncmp(line, prefix, strlen(prefix)) != 0) {
            fprintf(stderr,
                    PROG ": %s: a line whose key does not start "
                         "with %s\n",
                    path, prefix);
            exit(1);
        }
        n_keys += line[0] != '#';
        fputs(line, o);
    }
    fclose(f);
    data_close(PROG, o);
    if (n_keys == 0)
        die("holds no values", path);
}

/* Copy every regular file of DIR into OUT, its name after PREFIX. */
static void copy_data(const char *dir, const char *out, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        die("cannot be read (the run's --data directory, committed with "
            "the kit)",
            dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char from[1024];
        struct stat st;
        if (snprintf(from, sizeof from, "%s/%s", dir, e->d_name) >=
            (int)sizeof from)
            die("has a name too long", e->d_name);
        if (e->d_name[0] == '.' || stat(from, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        FILE *in = fopen(from, "rb");
        if (!in)
            die("cannot be read", from);
        char name[600];
        snprintf(name, sizeof name, "%s%s", prefix, e->d_name);
        FILE *o = data_open(PROG, out, name);
        char buf[8192];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, got, o) != got)
                die("cannot be copied", from);
        fclose(in);
        data_close(PROG, o);
        n++;
    }
    closedir(d);
    if (n == 0)
        die("holds no files", dir);
}

/* one configuration of results.csv: its test losses over the seeds */
struct cfg {
    int heads, kv, n;
    double lr, sum, sum2;
};

/* one configuration of seed_heads.csv: its heads over every seed */
struct seeds {
    int heads, kv, n, n_heads;
    int voita[MAX_SEEDS], weak[MAX_SEEDS];
    double margin[MAX_SEEDS][R]; /* each relation's best head, per seed */
    /* over the seeds: the relation whose mean margin is largest, that
     * mean, and its smallest and largest seed */
    int best;
    double mean, lo, hi;
};

struct net { /* one measured network (the first seed's), by head count */
    int heads, n_heads, voita, weak;
    double top_share, abl[2]; /* the costliest head's ablation per block */
    double margin[R], hard_margin[R], hard_score[R];
    int hard_head[R];
};

static struct net *net_of(struct net *nets, int *n, int heads, const char *path)
{
    for (int i = 0; i < *n; i++)
        if (nets[i].heads == heads)
            return &nets[i];
    if (*n == MAX_HC)
        die("has too many head counts", path);
    struct net *x = &nets[(*n)++];
    memset(x, 0, sizeof *x);
    x->heads = heads;
    for (int q = 0; q < R; q++)
        x->margin[q] = x->hard_margin[q] = -2, x->hard_head[q] = -1;
    x->abl[0] = x->abl[1] = -1;
    return x;
}

/* DIR/ablation.csv: each network's costliest head per block, mean-
 * ablated, over all predicted words, into its net's abl[] */
static void read_ablation(const char *dir, struct net *nets, int *n_net)
{
    char path[600], line[1024];
    FILE *f = open_ref(dir, "ablation.csv", path, sizeof path);
    header(f, path, "class,heads,block,head,targets,base,ablated,increase");
    char why[128];
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        char cls[32];
        int heads, block, head;
        double inc;
        if (!run_read_row(why, sizeof why, line, "siiinnnf", cls,
                          (int)sizeof cls, &heads, &block, &head, &inc))
            die_row(path, row, why);
        if (block < 0 || block > 1)
            die_row(path, row, "a block other than 0 or 1");
        struct net *x = net_of(nets, n_net, heads, path);
        if (!strcmp(cls, "all") && inc > x->abl[block])
            x->abl[block] = inc;
    }
    fclose(f);
}

static int best_rel(const double *m)
{
    int b = 0;
    for (int q = 1; q < R; q++)
        b = m[q] > m[b] ? q : b;
    return b;
}

/* a configuration's name in the values' keys: h4, or h4g1 for 4 query
 * heads on 1 K/V head */
static void cfg_key(char *key, size_t n, int heads, int kv)
{
    if (kv == heads)
        snprintf(key, n, "h%d", heads);
    else
        snprintf(key, n, "h%dg%d", heads, kv);
}

/* DIR/results.csv: every configuration's test losses over its seeds
 * into CFGS, the tokens a network into *RUN_TOKENS; returns how many */
static int read_results(const char *dir, struct cfg *cfgs, long *run_tokens)
{
    char path[600], line[1024];
    int n_cfg = 0;
    FILE *f = open_ref(dir, "results.csv", path, sizeof path);
    header(f, path,
           "impl,heads,kv_heads,lr,seed,params,tokens,val_loss,"
           "test_loss");
    char why[128];
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        int heads, kv, seed;
        double lr, val, test;
        long params, tokens;
        if (!run_read_row(why, sizeof why, line, "*iifillff***", &heads, &kv,
                          &lr, &seed, &params, &tokens, &val, &test))
            die_row(path, row, why);
        int c = 0;
        while (c < n_cfg && (cfgs[c].heads != heads || cfgs[c].kv != kv))
            c++;
        if (c == n_cfg) {
            if (n_cfg == MAX_CFG)
                die("has too many configurations", path);
            cfgs[n_cfg++] = (struct cfg){heads, kv, 0, lr, 0, 0};
        }
        cfgs[c].n++, cfgs[c].sum += test, cfgs[c].sum2 += test * test;
        *run_tokens = tokens;
    }
    fclose(f);
    if (n_cfg == 0)
        die("has no rows", path);
    return n_cfg;
}

/* DIR/seed_heads.csv: every final network's heads into SH, a
 * configuration each, summed up over its seeds (the relation whose mean
 * margin is largest, that mean, its smallest and largest seed); returns
 * how many configurations */
static int read_seeds(const char *dir, struct seeds *sh)
{
    char path[600], line[1024];
    int n_sh = 0;
    FILE *f = open_ref(dir, "seed_heads.csv", path, sizeof path);
    header(f, path,
           "heads,kv_heads,lr,seed,test_loss,positional_voita,"
           "positional_weak,top_share,margin_noun_det");
    char why[128];
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        int heads, kv, voita, weak;
        double m[R];
        if (!run_read_row(why, sizeof why, line, "iinnniinfffff*****", &heads,
                          &kv, &voita, &weak, &m[0], &m[1], &m[2], &m[3],
                          &m[4]))
            die_row(path, row, why);
        if (heads < 1 || kv < 1 || heads % kv != 0)
            die_row(path, row, "heads not a multiple of its K/V heads");
        int c = 0;
        while (c < n_sh && (sh[c].heads != heads || sh[c].kv != kv))
            c++;
        if (c == n_sh) {
            if (n_sh == MAX_CFG)
                die("has too many configurations", path);
            sh[n_sh++] = (struct seeds){.heads = heads, .kv = kv};
        }
        struct seeds *x = &sh[c];
        if (x->n == MAX_SEEDS)
            die("has too many seeds", path);
        x->n_heads = 2 * heads; /* gpt_default_config()'s two blocks */
        x->voita[x->n] = voita, x->weak[x->n] = weak;
        memcpy(x->margin[x->n++], m, sizeof m);
    }
    fclose(f);
    if (n_sh == 0)
        die("has no rows", path);
    for (int c = 0; c < n_sh; c++) {
        struct seeds *x = &sh[c];
        double mean[R] = {0};
        for (int q = 0; q < R; q++)
            for (int s = 0; s < x->n; s++)
                mean[q] += x->margin[s][q] / x->n;
        const int b = x->best = best_rel(mean);
        x->mean = mean[b], x->lo = 1e9, x->hi = -1e9;
        for (int s = 0; s < x->n; s++) {
            x->lo = x->margin[s][b] < x->lo ? x->margin[s][b] : x->lo;
            x->hi = x->margin[s][b] > x->hi ? x->margin[s][b] : x->hi;
        }
    }
    return n_sh;
}

/* The same protocol at half the budget (HALF, the run made before the
 * book's): the tokens a network, and per configuration its mean test
 * loss and the mean over seeds of its best margin, and how many many-head
 * configurations were below TRI_TEST (the trigram model's test loss, the
 * same at any budget), which the chapter's account of how the budget was
 * chosen quotes */
static void write_half(const char *half, double tri_test, FILE *v)
{
    static struct cfg c[MAX_CFG];
    static struct seeds s[MAX_CFG];
    long tokens = 0;
    const int n_c = read_results(half, c, &tokens), n_s = read_seeds(half, s);
    if (n_c != n_s)
        die("holds different configurations in results.csv and "
            "seed_heads.csv",
            half);
    fprintf(v, "ch8half.tokens=%ld\n", tokens);
    int n_multi = 0, n_margin = 0, n_below_tri = 0;
    for (int i = 0; i < n_s; i++) {
        int k = 0;
        while (k < n_c && (c[k].heads != s[i].heads || c[k].kv != s[i].kv))
            k++;
        if (k == n_c)
            die("has a configuration in seed_heads.csv that results.csv "
                "lacks",
                half);
        char key[32];
        cfg_key(key, sizeof key, s[i].heads, s[i].kv);
        fprintf(v, "ch8half.%s.test=%.3f\nch8half.%s.seed_margin=%.3f\n", key,
                c[k].sum / c[k].n, key, s[i].mean);
        if (s[i].heads > 1)
            n_multi++, n_margin += s[i].mean >= MARGIN,
                n_below_tri += c[k].sum / c[k].n < tri_test;
    }
    fprintf(v, "ch8half.n_seed_multi=%d\nch8half.n_seed_margin=%d\n", n_multi,
            n_margin);
    fprintf(v, "ch8half.n_below_trigram=%d\n", n_below_tri);
}

/* the n-gram models of baselines.csv: the bigram's and the trigram's
 * test losses, and the tokens they were trained on */
struct ngram {
    double bi_test, tri_test;
    long train_tokens;
};

/* the relations' cases, the same in every measured network: how many
 * each relation has, how many of them are hard, and the best fixed
 * offset's share of the hard ones */
struct cases {
    int all[R], hard[R];
    double hard_base[R];
};

/* DIR/baselines.csv: the n-gram models' test losses into *NG */
static void read_baselines(const char *dir, struct ngram *ng)
{
    char path[600], line[1024], why[128];
    *ng = (struct ngram){NAN, NAN, 0};
    FILE *f = open_ref(dir, "baselines.csv", path, sizeof path);
    header(f, path, "model,order,train_tokens,val_loss,test_loss");
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        char model[32];
        double v, t;
        if (!run_read_row(why, sizeof why, line, "snlff*", model,
                          (int)sizeof model, &ng->train_tokens, &v, &t))
            die_row(path, row, why);
        if (ng->train_tokens <= 0)
            die_row(path, row, "train_tokens not positive");
        if (!strcmp(model, "bigram"))
            ng->bi_test = t;
        if (!strcmp(model, "trigram"))
            ng->tri_test = t;
    }
    fclose(f);
    if (isnan(ng->bi_test) || isnan(ng->tri_test))
        die("has no bigram or trigram row", path);
}

/* DIR/offsets.csv: where the measured networks' heads look; per network
 * its heads, how many are positional by Voita's rule and by the majority
 * rule, and the largest share one offset takes */
static void read_offsets(const char *dir, struct net *nets, int *n_net)
{
    char path[600], line[1024], why[128];
    FILE *f = open_ref(dir, "offsets.csv", path, sizeof path);
    header(f, path, "heads,block,head,mean_w_0");
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        /* every field a number; of the last three (best_offset,
         * best_share, positional) the share */
        int heads;
        double share;
        if (!run_read_row(why, sizeof why, line, "i+", &heads))
            die_row(path, row, why);
        char *c3 = strrchr(line, ',');
        if (!c3 || c3 == line)
            die_row(path, row, "too few fields");
        *c3 = 0;
        char *c2 = strrchr(line, ',');
        if (!c2 || !run_read_double(c2 + 1, &share))
            die_row(path, row, "best_share is not a number");
        for (char *p = strtok(line, ","); p; p = strtok(NULL, ","))
            if (!run_read_double(p, &(double){0}))
                die_row(path, row, "a field that is not a number");
        struct net *x = net_of(nets, n_net, heads, path);
        x->n_heads++;
        x->voita += share >= HEADS_POSITIONAL;
        x->weak += share >= MAJORITY;
        x->top_share = share > x->top_share ? share : x->top_share;
    }
    fclose(f);
}

/* DIR/relations.csv: what the measured networks' heads follow, on all
 * cases and on the hard ones; per network and relation its best margin
 * and its best head on the hard cases, and the cases into *CS */
static void read_relations(const char *dir, struct net *nets, int *n_net,
                           struct cases *cs)
{
    char path[600], line[1024], why[128];
    FILE *f = open_ref(dir, "relations.csv", path, sizeof path);
    header(f, path,
           "relation,heads,block,head,cases,score,baseline,best_k,"
           "margin,hard_cases,hard_score,hard_baseline,hard_margin");
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        char key[32];
        int heads, block, head, n, bk, hn;
        double score, base, margin, hs, hb, hm;
        if (!run_read_row(why, sizeof why, line, "siiiiffififff", key,
                          (int)sizeof key, &heads, &block, &head, &n, &score,
                          &base, &bk, &margin, &hn, &hs, &hb, &hm))
            die_row(path, row, why);
        int q = 0;
        while (q < R && strcmp(key, rel_key[q]))
            q++;
        if (q == R)
            die("names a relation heads_lm.h does not", path);
        struct net *x = net_of(nets, n_net, heads, path);
        cs->all[q] = n, cs->hard[q] = hn, cs->hard_base[q] = hb;
        if (margin > x->margin[q])
            x->margin[q] = margin;
        if (hn > 0 && hm > x->hard_margin[q])
            x->hard_margin[q] = hm, x->hard_score[q] = hs,
            x->hard_head[q] = block * heads + head;
    }
    fclose(f);
}

/* REF's measured networks, a struct net each into NETS: where their
 * heads look, what they follow, and what each block is worth (its
 * costliest head, mean-ablated, over all predicted words); the
 * relations' cases into *CS; returns how many networks */
static int read_nets(const char *ref, struct net *nets, struct cases *cs)
{
    int n_net = 0;
    read_offsets(ref, nets, &n_net);
    read_relations(ref, nets, &n_net, cs);
    for (int i = 0; i < n_net; i++)
        if (nets[i].n_heads == 0 || nets[i].margin[0] < -1)
            die("offsets.csv and relations.csv measure different networks",
                ref);
    read_ablation(ref, nets, &n_net);
    if (gpt_default_config().L != 2)
        die("is for a model of 2 blocks", "ch8_long.c");
    for (int i = 0; i < n_net; i++)
        if (nets[i].abl[0] < -0.5 || nets[i].abl[1] < -0.5)
            die("ablation.csv and offsets.csv measure different networks", ref);
    return n_net;
}

/* Into V: the chapter's first condition, over the many-head
 * configurations of CFGS: a mean test loss below the trigram's (the
 * second, a head that beats some relation's best fixed offset by MARGIN,
 * is judged over every seed by write_seed_values); and per measured
 * network its positional heads, what its blocks are worth and its best
 * margin on the hard cases */
static void write_net_values(FILE *v, const struct cfg *cfgs, int n_cfg,
                             const struct net *nets, int n_net,
                             const struct ngram *ng)
{
    int n_multi = 0, n_below_tri = 0, n_below_bi = 0;
    for (int c = 0; c < n_cfg; c++)
        if (cfgs[c].heads > 1) {
            const double mean = cfgs[c].sum / cfgs[c].n;
            n_multi++, n_below_tri += mean < ng->tri_test,
                n_below_bi += mean < ng->bi_test;
        }
    int n_hard_pos = 0;
    double abl_b1_min = 1e9; /* the least block 1 is worth in any network */
    for (int i = 0; i < n_net; i++) {
        const struct net *x = &nets[i];
        const int hb = best_rel(x->hard_margin);
        n_hard_pos += x->hard_margin[hb] > 0;
        abl_b1_min = x->abl[1] < abl_b1_min ? x->abl[1] : abl_b1_min;
        fprintf(v, "ch8long.h%d.voita=%d\nch8long.h%d.weak=%d\n", x->heads,
                x->voita, x->heads, x->weak);
        fprintf(v, "ch8long.h%d.top_share=%.2f\n", x->heads, x->top_share);
        fprintf(v, "ch8long.h%d.abl_b0=%.3f\nch8long.h%d.abl_b1=%.3f\n",
                x->heads, x->abl[0], x->heads, x->abl[1]);
        fprintf(v, "ch8long.h%d.hard_margin=%.3f\nch8long.h%d.hard_rel=%s\n",
                x->heads, x->hard_margin[hb], x->heads,
                heads_relation_name(hb));
    }
    fprintf(v, "ch8long.n_multi=%d\nch8long.n_below_trigram=%d\n", n_multi,
            n_below_tri);
    fprintf(v, "ch8long.n_below_bigram=%d\n", n_below_bi);
    fprintf(v, "ch8long.n_hard_positive=%d\nch8long.n_nets=%d\n", n_hard_pos,
            n_net);
    fprintf(v, "ch8long.majority=%.1f\n", MAJORITY);
    fprintf(v, "ch8long.abl_b1_min=%.3f\n", abl_b1_min);
}

/* Into V: the second condition over every seed of SH: a configuration's
 * margin is the mean over seeds of its best head's, on the relation
 * where that mean is largest; and the positional heads over every seed */
static void write_seed_values(FILE *v, const struct seeds *sh, int n_sh)
{
    int n_seed_multi = 0, n_seed_margin = 0, seed_voita = 0, seed_weak = 0;
    double spread_max = 0; /* a many-head configuration's widest range */
    for (int c = 0; c < n_sh; c++) {
        const struct seeds *x = &sh[c];
        for (int s = 0; s < x->n; s++)
            seed_voita += x->voita[s], seed_weak += x->weak[s];
        if (x->heads > 1) {
            n_seed_multi++, n_seed_margin += x->mean >= MARGIN;
            if (x->hi - x->lo > spread_max)
                spread_max = x->hi - x->lo;
        }
        char key[32];
        cfg_key(key, sizeof key, x->heads, x->kv);
        fprintf(v,
                "ch8long.%s.seed_margin=%.3f\nch8long.%s.seed_margin_rel=%s\n"
                "ch8long.%s.seed_margin_min=%.3f\n"
                "ch8long.%s.seed_margin_max=%.3f\n",
                key, x->mean, key, heads_relation_name(x->best), key, x->lo,
                key, x->hi);
    }
    fprintf(v, "ch8long.seeds_measured=%d\n", sh[0].n);
    fprintf(v, "ch8long.seed_spread_max=%.2f\n", spread_max);
    fprintf(v, "ch8long.n_seed_multi=%d\nch8long.n_seed_margin=%d\n",
            n_seed_multi, n_seed_margin);
    fprintf(v, "ch8long.seed_voita=%d\nch8long.seed_weak=%d\n", seed_voita,
            seed_weak);
}

/* OUT/ch8_hard.md: the hard cases, a row per relation, a column per
 * measured network: its best head's score there, and that head's margin
 * over the best fixed offset */
static void write_hard(const char *out, const struct net *nets, int n_net,
                       const struct cases *cs)
{
    FILE *t = data_open(PROG, out, "ch8_hard.md");
    fprintf(t, "| relation | hard cases | best offset |");
    for (int i = 0; i < n_net; i++)
        fprintf(t, " %d head%s |", nets[i].heads, nets[i].heads > 1 ? "s" : "");
    fprintf(t, "\n|:---|---:|---:|");
    for (int i = 0; i < n_net; i++)
        fprintf(t, "---:|");
    for (int q = 0; q < R; q++) {
        fprintf(t, "\n| %s | %d | %.2f |", heads_relation_name(q), cs->hard[q],
                cs->hard_base[q]);
        for (int i = 0; i < n_net; i++) {
            const struct net *x = &nets[i];
            const int k = x->hard_head[q];
            if (k < 0) {
                fprintf(t, " – |");
                continue;
            }
            fprintf(t,
                    x->hard_margin[q] >= MARGIN ? " %.2f (%d.%d), **%+.2f** |"
                                                : " %.2f (%d.%d), %+.2f |",
                    x->hard_score[q], k / x->heads, k % x->heads,
                    x->hard_margin[q]);
        }
    }
    fprintf(t, "\n");
    data_close(PROG, t);
}

/* One row of ch8_close.md into T: configuration X's name, its test loss
 * (mean ± standard deviation over seeds), and from its heads over every
 * seed (its entry of SH), its best relation, that relation's margin (the
 * mean, and each seed's) and its positional heads by both rules */
static void write_close_row(FILE *t, const struct cfg *x,
                            const struct seeds *sh, int n_sh)
{
    const double mean = x->sum / x->n;
    const double var =
        x->n > 1 ? (x->sum2 - x->n * mean * mean) / (x->n - 1) : 0;
    if (x->kv == x->heads)
        fprintf(t, "| %d head%s |", x->heads, x->heads > 1 ? "s" : "");
    else
        fprintf(t, "| %d query heads on %d K/V head%s |", x->heads, x->kv,
                x->kv > 1 ? "s" : "");
    fprintf(t, " %.3f ± %.3f |", mean, sqrt(var > 0 ? var : 0));
    const struct seeds *m = NULL;
    for (int i = 0; i < n_sh; i++)
        if (sh[i].heads == x->heads && sh[i].kv == x->kv)
            m = &sh[i];
    if (!m)
        die("has a configuration seed_heads.csv lacks", "results.csv");
    const int b = m->best;
    fprintf(t, m->mean >= MARGIN ? " %s | **%+.3f** (" : " %s | %+.3f (",
            heads_relation_name(b), m->mean);
    for (int s = 0; s < m->n; s++) { /* -0.004 as 0.00, not -0.00 */
        const double r2 = round(m->margin[s][b] * 100) / 100;
        fprintf(t, r2 == 0 ? "%s0.00" : "%s%+.2f", s ? ", " : "", r2);
    }
    fprintf(t, ") |");
    for (int rule = 0; rule < 2; rule++) { /* one number if all agree */
        const int *c = rule ? m->weak : m->voita;
        int same = 1;
        for (int s = 1; s < m->n; s++)
            same &= c[s] == c[0];
        fprintf(t, rule ? " / " : " ");
        for (int s = 0; s < (same ? 1 : m->n); s++)
            fprintf(t, "%s%d", s ? ", " : "", c[s]);
        fprintf(t, rule ? " of %d |" : "", m->n_heads);
    }
    fprintf(t, "\n");
}

/* OUT/ch8_close.md: the run in one table, a row per configuration of
 * CFGS with its heads over every seed (SH), the n-gram models beneath */
static void write_close(const char *out, const struct cfg *cfgs, int n_cfg,
                        const struct seeds *sh, int n_sh,
                        const struct ngram *ng)
{
    FILE *t = data_open(PROG, out, "ch8_close.md");
    fprintf(t, "| network | test loss (nats) | best relation | its margin: "
               "mean (each seed) | positional: Voita / majority |\n"
               "|:---|---:|:---|:---|---:|\n");
    for (int c = 0; c < n_cfg; c++)
        write_close_row(t, &cfgs[c], sh, n_sh);
    fprintf(t, "| Kneser-Ney bigram | %.3f | | | |\n", ng->bi_test);
    fprintf(t, "| Kneser-Ney trigram | %.3f | | | |\n", ng->tri_test);
    data_close(PROG, t);
}

/* OUT/ch8_generated_ngram.md: the trigram model's lines, sampled as the
 * networks' are, from the same prompts: REF/generated.txt's "trigram: "
 * lines, as a text block */
static void write_generated(const char *ref, const char *out)
{
    char path[600], line[1024];
    FILE *f = open_ref(ref, "generated.txt", path, sizeof path);
    FILE *t = data_open(PROG, out, "ch8_generated_ngram.md");
    fprintf(t, "The Kneser-Ney trigram model:\n\n```text\n");
    int n_tri = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "trigram: ", 9))
            fputs(line + 9, t), n_tri++;
    fprintf(t, "```\n");
    fclose(f);
    data_close(PROG, t);
    if (n_tri == 0)
        die("has no trigram lines", path);
}

/* Into V: the book-sized run (BOOK): what its block 1 is worth (its
 * costliest head, mean-ablated, over every network the run measured),
 * the tokens a network, and how many times as many RUN_TOKENS is */
static void write_book(const char *book, long run_tokens, FILE *v)
{
    char path[600], line[1024], why[128];
    static struct net book_nets[MAX_HC];
    int n_book = 0;
    read_ablation(book, book_nets, &n_book);
    double book_b1 = -1;
    for (int i = 0; i < n_book; i++)
        book_b1 = book_nets[i].abl[1] > book_b1 ? book_nets[i].abl[1] : book_b1;
    if (book_b1 < -0.5)
        die("has no row for block 1", book);
    FILE *f = open_ref(book, "results.csv", path, sizeof path);
    header(f, path, "impl,heads,kv_heads,lr,seed,params,tokens");
    long book_tokens = 0;
    if (!fgets(line, sizeof line, f))
        die("has no row", path);
    if (!run_read_row(why, sizeof why, line, "*nnnnnl*****", &book_tokens))
        die_row(path, 2, why);
    if (book_tokens <= 0)
        die_row(path, 2, "tokens not positive");
    fclose(f);
    fprintf(v, "ch8long.book_abl_b1_max=%.4f\nch8long.book_tokens=%ld\n",
            book_b1, book_tokens);
    fprintf(v, "ch8long.book_fraction=%ld\n", run_tokens / book_tokens);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) {
        fprintf(stderr,
                "usage: " PROG " OUTDIR [REFDIR [BOOKDIR [HALFDIR]]]\n");
        return 2;
    }
    const char *out = argv[1];
    const char *ref = argc >= 3 ? argv[2] : "tools/runs/lm/reference/long";
    const char *book = argc >= 4 ? argv[3] : "tools/runs/lm/reference/book";
    const char *half = argc == 5 ? argv[4] : "tools/runs/lm/reference/long-4m";
    char path[600];

    /* the run's own data, as it wrote it */
    snprintf(path, sizeof path, "%s/data", ref);
    copy_data(path, out, "");
    snprintf(path, sizeof path, "%s/sentence", ref);
    copy_data(path, out, "ch8_");

    /* the test losses of every configuration, over its seeds, and the
     * n-gram models' */
    static struct cfg cfgs[MAX_CFG];
    long run_tokens = 0;
    const int n_cfg = read_results(ref, cfgs, &run_tokens);
    struct ngram ng;
    read_baselines(ref, &ng);

    /* the measured networks' heads, and every final network's, summed
     * up (seed_heads.csv) */
    static struct net nets[MAX_HC];
    struct cases cs = {{0}, {0}, {0}};
    const int n_net = read_nets(ref, nets, &cs);
    static struct seeds sh[MAX_CFG];
    const int n_sh = read_seeds(ref, sh);
    if (n_sh != n_cfg)
        die("and results.csv hold different configurations", ref);

    FILE *v = data_open(PROG, out, "ch8long.values");
    fprintf(v, "ch8long.passes=%.1f\n", run_tokens / (double)ng.train_tokens);
    write_net_values(v, cfgs, n_cfg, nets, n_net, &ng);
    write_seed_values(v, sh, n_sh);
    for (int q = 0; q < R; q++)
        fprintf(v, "ch8long.hard_cases_%s=%d\nch8long.cases_%s=%d\n",
                rel_key[q], cs.hard[q], rel_key[q], cs.all[q]);

    write_hard(out, nets, n_net, &cs);
    write_close(out, cfgs, n_cfg, sh, n_sh, &ng);
    write_generated(ref, out);
    /* the run's command, machine and wall time, as committed */
    copy_values(ref, "run.values", out, "ch8long_run.values", "ch8long.run.");
    write_book(book, run_tokens, v);
    write_half(half, ng.tri_test, v);
    data_close(PROG, v);
    return 0;
}
