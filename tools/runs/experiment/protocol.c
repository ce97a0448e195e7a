/*
 * protocol.c: chapter 5's protocol, run (driver.h): the grid each head
 * count chooses its learning rate and vo_init from, on the validation
 * sequences; then the test run, the tables' networks and the controls
 * (1 and 2 heads trained longer, 1 head in 2 and 4 layers) in one batch
 * of the runner's jobs; then what the controls' tables compare.
 */
#include "driver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the best validation accuracy; ties (within 0.05 points) go to the
 * lower validation loss, then to the earlier cell */
static int choose(const struct choice *c)
{
    int best = 0;
    for (int g = 1; g < N_GRID; g++) {
        double d = c->val_acc[g] - c->val_acc[best];
        if (d > 5e-4 || (fabs(d) <= 5e-4 && c->val_loss[g] < c->val_loss[best]))
            best = g;
    }
    return best;
}

static const struct choice *choice_of(const struct choice *ch, int n, int h)
{
    for (int i = 0; i < n; i++)
        if (ch[i].heads == h)
            return &ch[i];
    return NULL;
}

/* The grid's and the long runs' networks as the runner's jobs: trained
 * and scored on one set of sequences, without the rest of exp_measure()
 * (which only the test run's networks need). */
struct scored {
    const struct exp_config *cfg;
    const int *x; /* (n, T) the sequences scored on */
    int n;
};

static int scored_run(int k, void *result, void *ctx)
{
    const struct scored *sc = ctx;
    struct exp_model m;
    int status = exp_model_init(&m, &sc->cfg[k]);
    if (status != KIT_OK)
        return status;
    status = exp_train(&m, NULL);
    if (status == KIT_OK)
        status = exp_evaluate(&m, sc->x, sc->n, result);
    exp_model_free(&m);
    return status;
}

static void scored_name(int k, char *buf, size_t n, void *ctx)
{
    const struct scored *sc = ctx;
    const struct exp_config *c = &sc->cfg[k];
    char layers[32] = "";
    if (c->n_layers > 1)
        snprintf(layers, sizeof layers, " in %d layers", c->n_layers);
    snprintf(buf, n, "%d head%s%s, lr %g, vo_init %g, %d steps, seed %llu",
             c->n_heads, c->n_heads > 1 ? "s" : "", layers, (double)c->lr,
             (double)c->vo_init, c->steps, c->seed);
}

static void scored_score(const void *result, char *buf, size_t n)
{
    snprintf(buf, n, "%.1f%%",
             100 * ((const struct exp_score *)result)->mean_accuracy);
}

static double scored_cost(int k, void *ctx)
{
    const struct scored *sc = ctx;
    return run_network_cost(&sc->cfg[k], 0);
}

/* cfg[k] trained and scored on the n sequences x into score[k], k <
 * n_configs x r->seeds, the longest first */
static void run_scored(struct run *r, int n_configs,
                       const struct exp_config *cfg, const int *x, int n,
                       struct exp_score *score)
{
    struct scored sc = {cfg, x, n};
    struct run_jobs jobs = {sizeof *score, scored_run, scored_name,
                            scored_score,  &sc,        scored_cost};
    run_jobs(r, n_configs, &jobs, score);
}

/* The test run in one batch of jobs, so that the two workers stay busy
 * to its end: job k < n is the tables' network cfg[k], trained and
 * measured on e (exp_run_one); job n + k is the control xcfg[k] (trained
 * longer, or stacked), trained and scored on e's evaluation sequences,
 * its score in the result's score. */
struct tested {
    const struct exp_config *cfg, *xcfg;
    int n;
    const struct exp_eval_set *e;
};

static int tested_run(int k, void *result, void *ctx)
{
    const struct tested *t = ctx;
    struct exp_result *res = result;
    if (k < t->n)
        return exp_run_one(&t->cfg[k], t->e, res);
    struct scored sc = {t->xcfg, t->e->eval, t->e->n_eval};
    return res->status = scored_run(k - t->n, &res->score, &sc);
}

static void tested_name(int k, char *buf, size_t n, void *ctx)
{
    const struct tested *t = ctx;
    if (k < t->n) {
        run_network_name(&t->cfg[k], buf, n);
        return;
    }
    struct scored sc = {t->xcfg, NULL, 0};
    scored_name(k - t->n, buf, n, &sc);
}

static void tested_score(const void *result, char *buf, size_t n)
{
    scored_score(&((const struct exp_result *)result)->score, buf, n);
}

static double tested_cost(int k, void *ctx)
{
    const struct tested *t = ctx;
    return k < t->n ? run_network_cost(&t->cfg[k], 1)
                    : run_network_cost(&t->xcfg[k - t->n], 0);
}

/* The grid, on the validation sequences from one selection seed: its
 * rows are each head count of heads in one layer, then 1 head in each
 * of depth_layers, the same cells for all; each row's chosen cell goes
 * to o->choice. */
void run_grid(struct run *run, const int *heads, int n_heads, struct outcome *o)
{
    const struct exp_config *c0 = &o->c0;
    struct exp_eval_set val;
    data_check(PROG,
               exp_eval_set_init(&val, c0->T, c0->n_symbols, RUN_N_EVAL,
                                 RUN_N_PROBE, RUN_N_ABL, c0->seed + VAL_SEED),
               "drawing the validation sequences");
    const int n_rows = n_heads + N_DEPTH, n_grid = n_rows * N_GRID;
    struct exp_config *gcfg = run_calloc(run, n_grid, sizeof *gcfg);
    struct exp_score *gres = run_calloc(run, n_grid, sizeof *gres);
    for (int j = 0; j < n_grid; j++) {
        const int g = j % N_GRID, row = j / N_GRID;
        gcfg[j] = exp_default_config(row < n_heads ? heads[row] : 1);
        if (row >= n_heads)
            gcfg[j].n_layers = depth_layers[row - n_heads];
        gcfg[j].lr = grid_lr[g / N_VO];
        gcfg[j].vo_init = grid_vo[g % N_VO];
        gcfg[j].seed = GRID_SEED;
    }
    fprintf(stderr,
            "  the grid: %d learning rates x %d vo_init, seed %llu, "
            "validation sequences\n",
            N_LR, N_VO, GRID_SEED);
    const int seeds = run->seeds;
    run->seeds = 1;
    run_scored(run, n_grid, gcfg, val.eval, val.n_eval, gres);
    run->seeds = seeds;
    for (int i = 0; i < n_rows; i++) {
        struct choice *ch = &o->choice[i];
        ch->heads = gcfg[i * N_GRID].n_heads;
        ch->layers = gcfg[i * N_GRID].n_layers;
        for (int g = 0; g < N_GRID; g++) {
            ch->val_acc[g] = gres[i * N_GRID + g].mean_accuracy;
            ch->val_loss[g] = gres[i * N_GRID + g].loss;
        }
        ch->chosen = choose(ch);
    }
    o->n_choice = n_rows;
    free(gcfg);
    free(gres);
    exp_eval_set_free(&val);
}

/* The long runs: 1 and 2 heads, chosen settings, LONG_FACTOR x the
 * steps, the first LONG_SEEDS test seeds, on the test sequences, into
 * lcfg; o->long_of[k] the test run's network lcfg[k] repeats at 1x.
 * Returns how many long runs. */
static int plan_long(const struct outcome *o, int n_heads,
                     struct exp_config *lcfg, int *long_of, struct longrun *lng)
{
    int n_long = 0;
    for (int h = 1; h <= 2; h++) {
        if (!choice_of(o->choice, n_heads, h) || o->seeds < LONG_SEEDS)
            continue;
        for (int s2 = 0; s2 < LONG_SEEDS; s2++) {
            const struct exp_config *cfg = o->cfg;
            int j = 0; /* the test run's network of this head count, seed */
            while (j < o->n &&
                   !(cfg[j].task == EXP_TASK_POSITION && cfg[j].n_heads == h &&
                     cfg[j].score_scale == 1.0f &&
                     cfg[j].seed == RUN_FIRST_SEED + (unsigned)s2))
                j++;
            lcfg[n_long * LONG_SEEDS + s2] = cfg[j];
            lcfg[n_long * LONG_SEEDS + s2].steps *= LONG_FACTOR;
            long_of[n_long * LONG_SEEDS + s2] = j;
        }
        lng[n_long++].heads = h;
    }
    return n_long;
}

/* The test run's networks (o->cfg) and the controls' (o->xcfg): the
 * runner's job j is configuration j / seeds, seed number j % seeds, each
 * with its head count's chosen setting (the content task and the control
 * take the position task's choice for their head count, the default
 * where that head count was not in the grid); then the long runs, and
 * the depth control: 1 head in each of depth_layers, its chosen setting,
 * the test seeds, on the test sequences. */
void plan_test(struct run *run, int n_heads, struct outcome *o)
{
    const int seeds = o->seeds;
    o->n = o->n_cf * seeds;
    o->cfg = run_calloc(run, o->n, sizeof *o->cfg);
    o->res = run_calloc(run, o->n, sizeof *o->res);
    for (int j = 0; j < o->n; j++) {
        const struct config *f = &o->cf[j / seeds];
        struct exp_config *cfg = &o->cfg[j];
        *cfg = f->task == EXP_TASK_CONTENT ? exp_content_config(f->heads)
                                           : exp_default_config(f->heads);
        const struct choice *c = choice_of(o->choice, n_heads, f->heads);
        if (c) {
            cfg->lr = grid_lr[c->chosen / N_VO];
            cfg->vo_init = grid_vo[c->chosen % N_VO];
        }
        cfg->score_scale = f->score_scale;
        cfg->seed = RUN_FIRST_SEED + (unsigned long long)(j % seeds);
    }
    struct exp_config lcfg[2 * LONG_SEEDS];
    o->n_long = plan_long(o, n_heads, lcfg, o->long_of, o->lng);
    const int n_lr = o->n_long * LONG_SEEDS;
    o->n_x = n_lr + N_DEPTH * seeds;
    o->xcfg = run_calloc(run, o->n_x, sizeof *o->xcfg);
    o->xres = run_calloc(run, o->n_x, sizeof *o->xres);
    o->xparams = run_calloc(run, o->n_x, sizeof *o->xparams);
    memcpy(o->xcfg, lcfg, (size_t)n_lr * sizeof *o->xcfg);
    for (int k = 0; k < N_DEPTH * seeds; k++) {
        const struct choice *c = &o->choice[n_heads + N_DEPTH - 1 - k / seeds];
        struct exp_config *x = &o->xcfg[n_lr + k];
        *x = exp_default_config(1);
        x->n_layers = c->layers;
        x->lr = grid_lr[c->chosen / N_VO];
        x->vo_init = grid_vo[c->chosen % N_VO];
        x->seed = RUN_FIRST_SEED + (unsigned long long)(k % seeds);
    }
}

/* The number of parameters of the network c, from the model itself. */
static int params_of(const struct exp_config *c)
{
    struct exp_model pm;
    data_check(PROG, exp_model_init(&pm, c), "counting parameters");
    int n = pm.n_params;
    exp_model_free(&pm);
    return n;
}

/* The long runs' accuracies and losses at 1x and LONG_FACTOR x, each
 * the mean over their LONG_SEEDS seeds. */
static void sum_long(struct outcome *o)
{
    for (int k = 0; k < o->n_long * LONG_SEEDS; k++) {
        const struct exp_score *sh = &o->res[o->long_of[k]].score;
        o->lng[k / LONG_SEEDS].acc_short += sh->mean_accuracy / LONG_SEEDS;
        o->lng[k / LONG_SEEDS].loss_short += sh->loss / LONG_SEEDS;
    }
    for (int k = 0; k < o->n_long * LONG_SEEDS; k++) {
        o->lng[k / LONG_SEEDS].acc_long +=
            o->xres[k].mean_accuracy / LONG_SEEDS;
        o->lng[k / LONG_SEEDS].loss_long += o->xres[k].loss / LONG_SEEDS;
    }
}

/* One network's score into the depth row t: each relation's and the
 * mean accuracy, the worst and best seed, the seeds that solve it. */
static void depth_add(struct depth *t, struct run_sum *sum,
                      const struct exp_score *sc, int *found)
{
    for (int r = 0; r < EXP_R; r++)
        run_sum_add(&sum[r], sc->accuracy[r]);
    run_sum_add(&sum[EXP_R], sc->mean_accuracy);
    double a = sc->mean_accuracy;
    t->lo = *found ? fmin(t->lo, a) : a;
    t->hi = *found ? fmax(t->hi, a) : a;
    t->solved += a >= 0.995;
    *found = 1;
}

/* The depth table: 1 head and 4 heads in one layer (the test run's
 * networks), then 1 head in each of depth_layers; a row only where the
 * run has its networks. */
static void sum_depth(struct outcome *o)
{
    static const int one_layer[2] = {1, 4};
    const int first_x = o->n_long * LONG_SEEDS;
    o->n_depth = 0;
    for (int q = 0; q < 2 + N_DEPTH; q++) {
        struct depth *t = &o->depth[o->n_depth];
        struct run_sum sum[EXP_R + 1];
        memset(sum, 0, sizeof sum);
        struct exp_config pc = exp_default_config(q < 2 ? one_layer[q] : 1);
        pc.n_layers = q < 2 ? 1 : depth_layers[q - 2];
        t->heads = pc.n_heads, t->layers = pc.n_layers;
        int found = 0;
        for (int j = 0; j < o->n && q < 2;
             j++) { /* one layer: the test run's */
            const struct exp_config *c = &o->cfg[j];
            if (c->task != EXP_TASK_POSITION || c->n_heads != t->heads ||
                c->score_scale != 1.0f)
                continue;
            depth_add(t, sum, &o->res[j].score, &found);
            t->params = o->res[j].n_params;
        }
        for (int k = first_x; k < o->n_x && q >= 2; k++)
            if (o->xcfg[k].n_layers == t->layers)
                depth_add(t, sum, &o->xres[k], &found);
        if (q >= 2) /* the count, from the model itself */
            t->params = params_of(&pc);
        for (int r = 0; r <= EXP_R; r++)
            t->acc[r] = run_sum_stats(&sum[r]);
        o->n_depth += found;
    }
}

/* The test run: the tables' networks and the controls in one batch, so
 * that the workers stay busy to its end; then the controls' parameter
 * counts, the long runs' and the depth control's summaries. */
void run_test(struct run *run, struct outcome *o)
{
    run_eval_set(run, &o->e, &o->c0);
    fprintf(stderr,
            "  the test run: %d configurations x %d seeds, %d trained %dx "
            "longer, 1 head in %d and %d layers\n",
            o->n_cf, o->seeds, o->n_long * LONG_SEEDS, LONG_FACTOR,
            depth_layers[0], depth_layers[1]);
    const int n = o->n, n_x = o->n_x;
    struct exp_result *all = run_calloc(run, n + n_x, sizeof *all);
    struct tested t = {o->cfg, o->xcfg, n, &o->e};
    struct run_jobs jobs = {sizeof *all,  tested_run, tested_name,
                            tested_score, &t,         tested_cost};
    run->seeds = 1;
    run_jobs(run, n + n_x, &jobs, all);
    run->seeds = o->seeds;
    memcpy(o->res, all, (size_t)n * sizeof *o->res);
    for (int k = 0; k < n_x; k++)
        o->xres[k] = all[n + k].score;
    free(all);
    for (int k = 0; k < n_x; k++)
        o->xparams[k] = params_of(&o->xcfg[k]);
    sum_long(o);
    sum_depth(o);
}
