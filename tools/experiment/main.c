/*
 * main.c: chapter 5's experiment, `make experiment`.
 *
 *   experiment RESULTS_DIR DATA_DIR
 *
 * Trains the same attention-only network (experiment.h) with 1, 2 and 4
 * heads, from the same starting weights, on the same batches, and
 * measures how well each names the previous token, the token two back,
 * the first and the second token of fresh sequences. Then it writes:
 *   RESULTS_DIR/results.csv   one row per head count
 *   DATA_DIR/ch5_results.md   the same table, for the book
 *   DATA_DIR/ch5.values       key=value numbers, for the book's prose
 *   DATA_DIR/ch5_loss.dat     the three loss curves
 *   DATA_DIR/ch5_heads_hH_iI.dat  head I's weights (model with H heads)
 *                             on one sequence, with token labels
 *   DATA_DIR/ch5_heads.gpi    each panel's title: the relation that head
 *                             took on
 * The table goes to stdout, progress to stderr.
 *
 * Dimension letters: T = tokens, S = symbols, R = relations, h = heads,
 * N = sequences.
 */
#define _POSIX_C_SOURCE 200809L

#include "datafile.h"
#include "experiment.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_RUNS    3
#define MAX_HEADS 8    /* the most heads a run may have */
#define N_EVAL    1000 /* fresh sequences the accuracy is measured on */
#define SMOOTH    25   /* the loss curve averages this many steps      */

static const int head_counts[N_RUNS] = {1, 2, 4};

/* What one run leaves behind. */
struct run {
    struct exp_config cfg;
    int n_params;
    struct exp_score score;
    double seconds;
    float *losses;  /* (steps)                          */
    float *weights; /* (h, T, T) on the shown sequence */
    /* head i's mean weight on the token relation r reads */
    double role[MAX_HEADS][EXP_R];
    double late[EXP_R]; /* accuracy at t >= 4 only */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Symbol s as a letter: A .. P for 16 symbols. */
static char symbol(int s)
{
    return (char)('A' + s);
}

/* role (h, R): head i's weight on the token relation r reads, averaged
 * over every evaluation sequence and every position t >= 4, where the
 * four relations read four different tokens. late (R): the accuracy at
 * those positions alone. x (N, T). */
static int measure_late(struct exp_model *m, const int *x, int N,
                        double role[][EXP_R], double late[EXP_R])
{
    const int T = m->cfg.T, h = m->cfg.n_heads, S = m->cfg.n_symbols;
    long n = 0, correct[EXP_R] = {0};
    for (int i = 0; i < h; i++)
        for (int r = 0; r < EXP_R; r++)
            role[i][r] = 0;
    for (int k = 0; k < N; k++) {
        const int *x_k = x + k * T;
        int status = exp_forward(m, x_k, NULL, NULL, NULL);
        if (status != KIT_OK)
            return status;
        for (int t = 4; t < T; t++, n++)
            for (int r = 0; r < EXP_R; r++) {
                const int src = exp_source(r, t);
                for (int i = 0; i < h; i++)
                    role[i][r] += m->weights[(i * T + t) * T + src];
                /* the argmax of relation r's S logits */
                const float *z = m->logits + (t * EXP_R + r) * S;
                int best = 0;
                for (int s = 1; s < S; s++)
                    if (z[s] > z[best])
                        best = s;
                correct[r] += best == x_k[src];
            }
    }
    for (int r = 0; r < EXP_R; r++) {
        for (int i = 0; i < h; i++)
            role[i][r] /= (double)(n ? n : 1);
        late[r] = (double)correct[r] / (double)(n ? n : 1);
    }
    return KIT_OK;
}

/* The sequence the heads are shown on: the first evaluation sequence
 * whose T symbols are all different, so that every label names one
 * position. x (N, T). */
static int shown_sequence(const int *x, int N, int T)
{
    for (int n = 0; n < N; n++) {
        int seen = 0, ok = 1; /* a bit per symbol, S <= 32 */
        for (int t = 0; t < T && ok; t++) {
            ok = !(seen & (1 << x[n * T + t]));
            seen |= 1 << x[n * T + t];
        }
        if (ok)
            return n;
    }
    return 0;
}

static int run_one(struct run *run, int n_heads, const int *eval_x,
                   const int *shown)
{
    struct exp_model m;
    if (n_heads > MAX_HEADS)
        return KIT_E_HEADS;
    run->cfg = exp_default_config(n_heads);
    int status = exp_model_init(&m, &run->cfg);
    if (status != KIT_OK)
        return status;
    const int T = run->cfg.T;
    run->n_params = m.n_params;
    run->losses = calloc((size_t)run->cfg.steps, sizeof(float));
    run->weights = calloc((size_t)(n_heads * T * T), sizeof(float));
    if (!run->losses || !run->weights) {
        exp_model_free(&m);
        return KIT_E_NOMEM;
    }
    double start = now();
    status = exp_train(&m, run->losses);
    run->seconds = now() - start;
    if (status == KIT_OK)
        status = exp_evaluate(&m, eval_x, N_EVAL, &run->score);
    if (status == KIT_OK)
        status = measure_late(&m, eval_x, N_EVAL, run->role, run->late);
    if (status == KIT_OK)
        status = exp_forward(&m, shown, NULL, NULL, NULL);
    if (status == KIT_OK)
        memcpy(run->weights, m.weights,
               (size_t)(n_heads * T * T) * sizeof(float));
    exp_model_free(&m);
    return status;
}

/* ---------------------------------------------------------------------
 * Writers
 * ------------------------------------------------------------------- */

static void print_table(FILE *f, const struct run *runs)
{
    fprintf(f, "%5s %7s %9s %9s %9s %9s %9s %10s %8s\n", "heads", "params",
            "previous", "two back", "first", "second", "mean", "final loss",
            "seconds");
    for (int k = 0; k < N_RUNS; k++) {
        const struct run *r = &runs[k];
        fprintf(f, "%5d %7d", r->cfg.n_heads, r->n_params);
        for (int j = 0; j < EXP_R; j++)
            fprintf(f, " %8.1f%%", 100 * r->score.accuracy[j]);
        fprintf(f, " %8.1f%% %10.4f %8.2f\n", 100 * r->score.mean_accuracy,
                r->score.loss, r->seconds);
    }
}

static int write_csv(const char *dir, const struct run *runs)
{
    FILE *f = data_open("experiment", dir, "results.csv");
    fprintf(f, "heads,params,acc_previous,acc_two_back,acc_first,"
               "acc_second,mean_accuracy,final_loss,seconds\n");
    for (int k = 0; k < N_RUNS; k++) {
        const struct run *r = &runs[k];
        fprintf(f, "%d,%d", r->cfg.n_heads, r->n_params);
        for (int j = 0; j < EXP_R; j++)
            fprintf(f, ",%.6f", r->score.accuracy[j]);
        fprintf(f, ",%.6f,%.6f,%.2f\n", r->score.mean_accuracy, r->score.loss,
                r->seconds);
    }
    data_close("experiment", f);
    return 1;
}

static int write_markdown(const char *dir, const struct run *runs)
{
    FILE *f = data_open("experiment", dir, "ch5_results.md");
    /* no wall time here: the book shows only what every run reproduces
     * (tools/checks/76-reproducible.sh); timings: bench_experiment.sh */
    fprintf(f, "| heads | parameters | previous | two back | first | second "
               "| mean | final loss |\n");
    fprintf(f, "|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < N_RUNS; k++) {
        const struct run *r = &runs[k];
        fprintf(f, "| %d | %d |", r->cfg.n_heads, r->n_params);
        for (int j = 0; j < EXP_R; j++)
            fprintf(f, " %.1f%% |", 100 * r->score.accuracy[j]);
        fprintf(f, " **%.1f%%** | %.3f |\n", 100 * r->score.mean_accuracy,
                r->score.loss);
    }
    data_close("experiment", f);
    return 1;
}

/* The relation head i of a run attends to most, and how much. */
static int main_role(const struct run *r, int i)
{
    int best = 0;
    for (int j = 1; j < EXP_R; j++)
        if (r->role[i][j] > r->role[i][best])
            best = j;
    return best;
}

static int write_values(const char *dir, const struct run *runs, double total)
{
    static const char *const key[EXP_R] = {"previous", "two_back", "first",
                                           "second"};
    FILE *f = data_open("experiment", dir, "ch5.values");
    const struct exp_config *c = &runs[0].cfg;
    fprintf(f, "ch5.symbols=%d\nch5.T=%d\nch5.d_model=%d\n", c->n_symbols, c->T,
            c->d_model);
    fprintf(f, "ch5.batch=%d\nch5.steps=%d\nch5.lr=%g\nch5.lr_final=%g\n",
            c->batch, c->steps, c->lr, c->lr_final);
    fprintf(f, "ch5.seed=%llu\nch5.eval_sequences=%d\n", c->seed, N_EVAL);
    fprintf(f, "ch5.params=%d\nch5.seconds_total=%.1f\n", runs[0].n_params,
            total);
    fprintf(f, "ch5.chance_pct=%.2f\nch5.chance_loss=%.2f\n",
            100.0 / c->n_symbols, log((double)c->n_symbols));
    fprintf(f, "ch5.emb_init=%g\nch5.qk_init=%g\nch5.vo_init=%g\n", c->emb_init,
            c->qk_init, c->vo_init);
    /* the parameter count, piece by piece (experiment.h) */
    const int d = c->d_model, RS = EXP_R * c->n_symbols;
    fprintf(f, "ch5.params_tok=%d\nch5.params_pos=%d\n", c->n_symbols * d,
            c->T * d);
    fprintf(f, "ch5.params_attn=%d\nch5.params_readout=%d\n", 4 * d * d,
            d * RS + RS);
    for (int k = 0; k < N_RUNS; k++) {
        const struct run *r = &runs[k];
        int h = r->cfg.n_heads;
        fprintf(f, "ch5.acc_%dhead=%.4f\n", h, r->score.mean_accuracy);
        fprintf(f, "ch5.pct_%dhead=%.1f\n", h, 100 * r->score.mean_accuracy);
        fprintf(f, "ch5.params_%dhead=%d\n", h, r->n_params);
        fprintf(f, "ch5.loss_%dhead=%.3f\n", h, r->score.loss);
        fprintf(f, "ch5.seconds_%dhead=%.1f\n", h, r->seconds);
        fprintf(f, "ch5.d_head_%dhead=%d\n", h, r->cfg.d_model / h);
        for (int j = 0; j < EXP_R; j++)
            fprintf(f, "ch5.pct_%dhead_%s=%.1f\n", h, key[j],
                    100 * r->score.accuracy[j]);
        for (int i = 0; i < h; i++) {
            int best = main_role(r, i);
            fprintf(f, "ch5.role_%dhead_%d=%s\n", h, i,
                    exp_relation_name(best));
            fprintf(f, "ch5.role_%dhead_%d_weight=%.2f\n", h, i,
                    r->role[i][best]);
        }
        double late = 0;
        for (int j = 0; j < EXP_R; j++)
            late += r->late[j] / EXP_R;
        fprintf(f, "ch5.pct_%dhead_late=%.1f\n", h, 100 * late);
        for (int j = 0; j < EXP_R; j++)
            fprintf(f, "ch5.pct_%dhead_late_%s=%.1f\n", h, key[j],
                    100 * r->late[j]);
        for (int j = 0; j < EXP_R; j++)
            if (h == 1)
                fprintf(f, "ch5.weight_1head_%s=%.2f\n", key[j], r->role[0][j]);
    }
    data_close("experiment", f);
    return 1;
}

static int write_loss(const char *dir, const struct run *runs)
{
    FILE *f = data_open("experiment", dir, "ch5_loss.dat");
    fprintf(f,
            "# step  loss(1 head)  loss(2 heads)  loss(4 heads), each the "
            "mean of %d steps\n",
            SMOOTH);
    const int steps = runs[0].cfg.steps;
    for (int s0 = 0; s0 + SMOOTH <= steps; s0 += SMOOTH) {
        fprintf(f, "%d", s0 + SMOOTH);
        for (int k = 0; k < N_RUNS; k++) {
            double sum = 0;
            for (int s = s0; s < s0 + SMOOTH; s++)
                sum += runs[k].losses[s];
            fprintf(f, " %.6g", sum / SMOOTH);
        }
        fprintf(f, "\n");
    }
    data_close("experiment", f);
    return 1;
}

/* One file per head, for gnuplot's `matrix rowheaders columnheaders`:
 * the first row names the keys, the first column the queries. */
static int write_heads(const char *dir, const struct run *runs,
                       const int *shown)
{
    static const char *const short_name[EXP_R] = {"t-1", "t-2", "x0", "x1"};
    FILE *g = data_open("experiment", dir, "ch5_heads.gpi");
    for (int k = 0; k < N_RUNS; k++) {
        const struct run *r = &runs[k];
        const int h = r->cfg.n_heads, T = r->cfg.T;
        for (int i = 0; i < h; i++) {
            char name[64];
            snprintf(name, sizeof name, "ch5_heads_h%d_i%d.dat", h, i);
            FILE *f = data_open("experiment", dir, name);
            fprintf(f, "query\\key");
            for (int j = 0; j < T; j++)
                fprintf(f, " %c", symbol(shown[j]));
            fprintf(f, "\n");
            for (int t = 0; t < T; t++) {
                fprintf(f, "%c", symbol(shown[t]));
                for (int j = 0; j < T; j++)
                    fprintf(f, " %.4f", r->weights[(i * T + t) * T + j]);
                fprintf(f, "\n");
            }
            data_close("experiment", f);
            /* "2 heads: head 1" over its mean weight on each relation,
             * two relations a line so the title fits over its panel */
            fprintf(g, "title_h%d_i%d = \"%d head%s: head %d", h, i, h,
                    h > 1 ? "s" : "", i);
            for (int j = 0; j < EXP_R; j++)
                fprintf(g, "%s%s %.2f", j % 2 ? "  " : "\\n", short_name[j],
                        r->role[i][j]);
            fprintf(g, "\"\n");
        }
    }
    data_close("experiment", g);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s RESULTS_DIR DATA_DIR\n", argv[0]);
        return 2;
    }
    struct run runs[N_RUNS];
    memset(runs, 0, sizeof runs);

    /* the evaluation sequences: fresh, from their own seed */
    struct exp_config c = exp_default_config(1);
    int *eval_x = malloc((size_t)(N_EVAL * c.T) * sizeof(int));
    if (!eval_x)
        return 1;
    struct rng r;
    rng_seed(&r, c.seed + 12345);
    exp_make_batch(&r, eval_x, N_EVAL, c.T, c.n_symbols);
    const int *shown = eval_x + shown_sequence(eval_x, N_EVAL, c.T) * c.T;

    double start = now();
    int status = KIT_OK;
    for (int k = 0; k < N_RUNS && status == KIT_OK; k++) {
        fprintf(stderr, "  training with %d head%s ...\n", head_counts[k],
                head_counts[k] > 1 ? "s" : "");
        status = run_one(&runs[k], head_counts[k], eval_x, shown);
    }
    double total = now() - start;
    if (status != KIT_OK) {
        fprintf(stderr, "experiment: %s\n", kit_strerror(status));
        return 1;
    }
    print_table(stdout, runs);
    int ok = write_csv(argv[1], runs) && write_markdown(argv[2], runs) &&
             write_values(argv[2], runs, total) && write_loss(argv[2], runs) &&
             write_heads(argv[2], runs, shown);
    for (int k = 0; k < N_RUNS; k++) {
        free(runs[k].losses);
        free(runs[k].weights);
    }
    free(eval_x);
    fprintf(stderr, "  total %.1f s\n", total);
    return ok ? 0 : 1;
}
