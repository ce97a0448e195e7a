/*
 * main.c: chapter 6's experiment, `make kv-experiment`: which part of a
 * head must be its own?
 *
 *   kvexp [--seeds N] [--workers W] RESULTS_DIR [DATA_DIR]
 *
 * Trains chapter 5's network (experiment.h) on the position task with 4
 * query heads and 4, 2 and 1 K/V heads: the grouped-query layer
 * exp_gqa_layer, everything else as chapter 5's book run (the same
 * steps, data, seeds and evaluation sequences). 4 K/V heads is chapter
 * 5's 4-head network. Every network is trained by one worker process
 * from its own seed, so the numbers do not depend on W. It writes
 *   RESULTS_DIR/kv.csv        one row per network
 *   RESULTS_DIR/kv_table.txt  the table it prints
 * and, when DATA_DIR is given, the book's data:
 *   ch6_kv.md                 mean +- sd per relation, per K/V count
 *   ch6_kv.values             key=value numbers for the prose
 *   ch6_kv_gG_iI.dat, ch6_kv.gpi   the trained query heads' maps
 * Progress and the wall time go to stderr, never into the book's data.
 * The options, the worker processes, the progress lines and the CSV
 * file are the runner's (tools/runs/runner.h), as in chapter 5's run.
 *
 * Dimension letters: T = tokens, R = relations, h = query heads,
 * g = K/V heads.
 */
#include "datafile.h"
#include "experiment.h"
#include "runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PROG  "kvexp"
#define HEADS 4 /* query heads */
#define N_KV  3 /* K/V head counts compared */

static const int kv_heads[N_KV] = {4, 2, 1};
static const char *const key[EXP_R] = {"previous", "two_back", "first",
                                       "second"};

/* One number per network: f(result, relation j). */
typedef double (*measure)(const struct exp_result *r, int j);

static double get_acc(const struct exp_result *r, int j)
{
    return j < EXP_R ? r->score.accuracy[j] : r->score.mean_accuracy;
}
static double get_loss(const struct exp_result *r, int j)
{
    (void)j;
    return r->score.loss;
}
/* how many different relations the query heads put their largest mean
 * weight on (1 .. min(h, R)) */
static double get_roles_distinct(const struct exp_result *r, int j)
{
    (void)j;
    int seen[EXP_R] = {0}, n = 0;
    for (int i = 0; i < r->n_heads; i++) {
        int best = 0;
        for (int q = 1; q < r->n_relations; q++)
            if (r->role[i][q] > r->role[i][best])
                best = q;
        n += !seen[best];
        seen[best] = 1;
    }
    return n;
}

/* mean and sample sd of f over the `seeds` networks from res */
static struct run_stats over(const struct exp_result *res, int seeds, measure f,
                             int j)
{
    struct run_sum sum = {0};
    for (int k = 0; k < seeds; k++)
        run_sum_add(&sum, f(&res[k], j));
    return run_sum_stats(&sum);
}

/* one row per network: heads,kv_heads,seed,params,mean_accuracy,
 * acc_previous .. acc_second,final_loss */
static void write_csv(const struct run *run, const char *dir,
                      const struct exp_result *res, int n)
{
    struct run_col col[5 + EXP_R + 1] = {{"heads", 0},
                                         {"kv_heads", 0},
                                         {"seed", 0},
                                         {"params", 0},
                                         {"mean_accuracy", 6}};
    static char names[EXP_R][32];
    for (int r = 0; r < EXP_R; r++) {
        snprintf(names[r], sizeof names[r], "acc_%s", key[r]);
        col[5 + r] = (struct run_col){names[r], 6};
    }
    col[5 + EXP_R] = (struct run_col){"final_loss", 6};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "kv.csv", NULL, col, 5 + EXP_R + 1);
    for (int k = 0; k < n; k++) {
        const struct exp_result *r = &res[k];
        double v[5 + EXP_R + 1] = {r->n_heads, kv_heads[k / (n / N_KV)],
                                   (double)r->seed, r->n_params,
                                   r->score.mean_accuracy};
        for (int j = 0; j < EXP_R; j++)
            v[5 + j] = r->score.accuracy[j];
        v[5 + EXP_R] = r->score.loss;
        run_csv_row(&csv, NULL, v);
    }
    run_csv_close(&csv);
}

static void print_table(FILE *f, const struct exp_result *res, int seeds)
{
    fprintf(f,
            "Position task, 4 query heads, mean +- sd over %d seeds "
            "(%llu..%llu):\n",
            seeds, RUN_FIRST_SEED,
            RUN_FIRST_SEED + (unsigned long long)seeds - 1);
    fprintf(f, "%-10s %6s", "K/V heads", "params");
    for (int r = 0; r < EXP_R; r++)
        fprintf(f, " %13s", exp_relation_name(EXP_TASK_POSITION, r));
    fprintf(f, " %13s %17s\n", "mean", "final loss");
    for (int k = 0; k < N_KV; k++) {
        const struct exp_result *r = res + k * seeds;
        fprintf(f, "%-10d %6d", kv_heads[k], r->n_params);
        for (int j = 0; j <= EXP_R; j++) {
            struct run_stats st = over(r, seeds, get_acc, j);
            fprintf(f, " %5.1f +- %4.1f%%", 100 * st.mean, 100 * st.sd);
        }
        struct run_stats st = over(r, seeds, get_loss, 0);
        fprintf(f, " %.4f +- %.4f\n", st.mean, st.sd);
    }
}

static void write_data(const struct run *run, const char *dir,
                       const struct exp_result *res, int seeds,
                       const struct exp_config *c0, const int *shown)
{
    const int d = c0->d_model, dh = d / HEADS;
    FILE *v = data_open(PROG, dir, "ch6_kv.values");
    fprintf(v, "ch6kv.seeds=%d\nch6kv.networks=%d\nch6kv.steps=%d\n", seeds,
            N_KV * seeds, c0->steps);
    fprintf(v, "ch6kv.heads=%d\nch6kv.d_head=%d\n", HEADS, dh);
    for (int k = 0; k < N_KV; k++) {
        const struct exp_result *r = res + k * seeds;
        const int g = kv_heads[k];
        fprintf(v, "ch6kv.params_g%d=%d\n", g, r->n_params);
        fprintf(v, "ch6kv.params_attn_g%d=%d\n", g, 2 * d * d + 2 * d * g * dh);
        fprintf(v, "ch6kv.params_kv_g%d=%d\n", g, 2 * d * g * dh);
        fprintf(v, "ch6kv.params_saved_g%d=%d\n", g,
                res[0].n_params - r->n_params);
        for (int j = 0; j <= EXP_R; j++) {
            struct run_stats st = over(r, seeds, get_acc, j);
            const char *name = j < EXP_R ? key[j] : "mean";
            fprintf(v, "ch6kv.acc_g%d_%s=%.1f\nch6kv.acc_g%d_%s_sd=%.1f\n", g,
                    name, 100 * st.mean, g, name, 100 * st.sd);
        }
        for (int j = 0; j < EXP_R; j++) {
            struct run_stats st = over(r, seeds, exp_top_weight, j);
            fprintf(v, "ch6kv.top_weight_g%d_%s=%.2f\n", g, key[j], st.mean);
            st = over(r, seeds, exp_owner_loss, j);
            fprintf(v, "ch6kv.owner_loss_g%d_%s=%.1f\n", g, key[j],
                    100 * st.mean);
        }
        int perfect = 0;
        double worst = 1, worst_loss = 0;
        for (int s = 0; s < seeds; s++) {
            perfect += r[s].score.mean_accuracy == 1.0;
            worst = fmin(worst, r[s].score.mean_accuracy);
            worst_loss = fmax(worst_loss, r[s].score.loss);
        }
        fprintf(v, "ch6kv.perfect_g%d=%d\nch6kv.worst_g%d=%.2f\n", g, perfect,
                g, 100 * worst);
        fprintf(v, "ch6kv.loss_g%d_max=%.5f\n", g, worst_loss);
        struct run_stats st = over(r, seeds, get_loss, 0);
        fprintf(v, "ch6kv.loss_g%d=%.5f\nch6kv.loss_g%d_sd=%.5f\n", g, st.mean,
                g, st.sd);
        st = over(r, seeds, exp_owners_distinct, 0);
        fprintf(v, "ch6kv.owners_distinct_g%d=%.0f\n", g, st.mean * seeds);
        st = over(r, seeds, get_roles_distinct, 0);
        fprintf(v, "ch6kv.roles_distinct_g%d=%.1f\n", g, st.mean);
        double lo = 9, hi = 0;
        for (int s = 0; s < seeds; s++) {
            double x = get_roles_distinct(&r[s], 0);
            lo = fmin(lo, x), hi = fmax(hi, x);
        }
        fprintf(v, "ch6kv.roles_distinct_g%d_min=%.0f\n", g, lo);
        fprintf(v, "ch6kv.roles_distinct_g%d_max=%.0f\n", g, hi);
        /* the networks in which the two measures disagree: each relation
         * has its own owner by ablation, yet the heads' heaviest tokens
         * belong to fewer relations than there are */
        int disagree = 0;
        for (int s = 0; s < seeds; s++)
            disagree += exp_owners_distinct(&r[s], 0) == 1 &&
                        get_roles_distinct(&r[s], 0) < EXP_R;
        fprintf(v, "ch6kv.disagree_g%d=%d\n", g, disagree);
    }
    data_close(PROG, v);

    FILE *f = data_open(PROG, dir, "ch6_kv.md");
    fprintf(f, "| K/V heads |");
    for (int r = 0; r < EXP_R; r++)
        fprintf(f, " %s |", exp_relation_name(EXP_TASK_POSITION, r));
    fprintf(f, " mean | final loss |\n|:---|");
    for (int r = 0; r <= EXP_R + 1; r++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int k = 0; k < N_KV; k++) {
        const struct exp_result *r = res + k * seeds;
        fprintf(f, "| %d%s |", kv_heads[k],
                kv_heads[k] == HEADS ? " (MHA)"
                : kv_heads[k] == 1   ? " (MQA)"
                                     : " (GQA)");
        for (int j = 0; j <= EXP_R; j++) {
            struct run_stats st = over(r, seeds, get_acc, j);
            fprintf(f, j < EXP_R ? " %.1f ± %.1f |" : " **%.1f ± %.1f** |",
                    100 * st.mean, 100 * st.sd);
        }
        struct run_stats st = over(r, seeds, get_loss, 0);
        fprintf(f, " %.4f ± %.4f |\n", st.mean, st.sd);
    }
    data_close(PROG, f);

    /* the maps of the first seed's query heads, on the sequence chapter 5
     * shows, and a title per panel: the head's mean weight on the token
     * each relation reads */
    static const char *const short_name[EXP_R] = {"t-1", "t-2", "x0", "x1"};
    FILE *g = data_open(PROG, dir, "ch6_kv.gpi");
    for (int k = 0; k < N_KV; k++) {
        const struct exp_result *r = res + k * seeds;
        const int T = r->T;
        for (int i = 0; i < r->n_heads; i++) {
            char name[64];
            snprintf(name, sizeof name, "ch6_kv_g%d_i%d.dat", kv_heads[k], i);
            run_write_map(run, dir, name, r->maps[i], T, shown);
            fprintf(g, "title_g%d_i%d = \"q-head %d (K/V head %d)", kv_heads[k],
                    i, i, i / (HEADS / kv_heads[k]));
            for (int j = 0; j < EXP_R; j++)
                fprintf(g, "%s%s %.2f", j % 2 ? "  " : "\\n", short_name[j],
                        r->role[i][j]);
            fprintf(g, "\"\n");
        }
    }
    data_close(PROG, g);
}

int main(int argc, char **argv)
{
    struct run run = {.prog = PROG,
                      .usage = "[--seeds N] [--workers W] RESULTS_DIR "
                               "[DATA_DIR]",
                      .hint = "make test CH=6 shows where",
                      .seeds = 5};
    int a = run_args(&run, argc, argv, NULL, 0, 1, 2);
    const int seeds = run.seeds;
    const char *results_dir = argv[a],
               *data_dir = a + 1 < argc ? argv[a + 1] : NULL;

    const struct exp_config c0 = exp_default_config(HEADS);
    const int n = N_KV * seeds;
    struct exp_config *cfg = run_calloc(&run, n, sizeof *cfg);
    struct exp_result *res = run_calloc(&run, n, sizeof *res);
    /* @listing kvexp_configs */
    for (int k = 0; k < N_KV; k++)
        for (int s = 0; s < seeds; s++) {
            struct exp_config *c = &cfg[k * seeds + s];
            *c = exp_default_config(HEADS); /* chapter 5's run, 4 heads */
            c->layer = &exp_gqa_layer;      /* grouped-query attention */
            c->n_kv_heads = kv_heads[k];    /* 4, 2 or 1 K/V heads */
            c->seed = RUN_FIRST_SEED + (unsigned long long)s;
        }
    /* @end kvexp_configs */

    struct exp_eval_set e; /* chapter 5's evaluation sequences */
    run_eval_set(&run, &e, &c0);
    run_networks(&run, N_KV, cfg, &e, res);
    write_csv(&run, results_dir, res, n);
    FILE *tab = data_open(PROG, results_dir, "kv_table.txt");
    print_table(stdout, res, seeds);
    print_table(tab, res, seeds);
    data_close(PROG, tab);
    if (data_dir)
        write_data(&run, data_dir, res, seeds, &c0, e.eval + e.shown * e.T);
    exp_eval_set_free(&e);
    free(cfg);
    free(res);
    return 0;
}
