/*
 * driver.h: what the files of chapter 5's run share (main.c: the
 * options and the run; protocol.c: the grid, the test run and its
 * controls; tables.c: the CSV files and the tables on stdout; data.c:
 * the book's data).
 *
 * Dimension letters: T = tokens, S = symbols, R = relations, h = heads.
 */
#ifndef EXPERIMENT_DRIVER_H
#define EXPERIMENT_DRIVER_H

#include "datafile.h"
#include "experiment.h"
#include "runner.h"

#include <stdio.h>

#define PROG       "experiment"
#define MAX_CONFIG 8 /* head counts on the position task, + 1 control */

/* One configuration the tables compare: a task, a head count, a scale. */
struct config {
    int task, heads;
    float score_scale; /* exp_config.score_scale */
    const char *label; /* "1 head", "1 head, scale of 4" */
};

/* The summary of one configuration over seeds, computed from the CSV. */
struct summary {
    int heads, params, n;
    double scale; /* the factor on q.k: score_scale / sqrt(d_head) */
    double mean[EXP_R + 2], sd[EXP_R + 2]; /* the R relations, the mean
                                              accuracy, the final loss */
};

/* ---------------------------------------------------------------------
 * The protocol: every head count picks its learning rate and vo_init
 * from the same grid, by mean accuracy on validation sequences (their
 * own seed, never the test's), trained from a selection seed that is not
 * one of the test seeds. The chosen setting's networks are then trained
 * from the test seeds and scored once on the test sequences. One head
 * and two heads are also trained LONG_FACTOR times longer with their
 * chosen settings, from the first LONG_SEEDS test seeds.
 * ------------------------------------------------------------------- */

#define N_LR        2
#define N_VO        2
#define N_GRID      (N_LR * N_VO)
#define GRID_SEED   (RUN_FIRST_SEED + 1000)
#define VAL_SEED    54321ULL /* added to the config's seed */
#define LONG_FACTOR 4
#define LONG_SEEDS  1
#define N_DEPTH     2                   /* the depth control: 1 head in ... */
extern const int depth_layers[N_DEPTH]; /* ... this many layers */

/* the grid's learning rates and vo_init (main.c) */
extern const float grid_lr[N_LR];
extern const float grid_vo[N_VO];

/* one row per position-task head count, then one per depth */
struct choice {
    int heads, layers;
    double val_acc[N_GRID], val_loss[N_GRID]; /* grid g = lr * N_VO + vo */
    int chosen;
};

/* the long runs: one head and two heads, at 1x (the test run's first
 * LONG_SEEDS networks) and LONG_FACTOR x */
struct longrun {
    int heads;
    double acc_short, acc_long, loss_short, loss_long;
};

/* the depth control, one row per network the table compares: 1 head
 * and 4 heads in one layer (the test run's), 1 head in 2 and 4 layers */
struct depth {
    int heads, layers, params;
    struct run_stats acc[EXP_R + 1]; /* the R relations, the mean */
    double lo, hi;                   /* the worst and best seed's mean */
    int solved;                      /* seeds at 99.5 % or more */
};

/* Everything the run measured, for the CSV files, the tables and the
 * book's data. */
struct outcome {
    int seeds;
    struct exp_config c0;    /* the configuration every network starts from */
    const struct config *cf; /* the tables' configurations */
    int n_cf;
    /* the test run: network k is configuration k / seeds, seed k % seeds */
    struct exp_config *cfg;
    struct exp_result *res;
    int n;
    struct exp_eval_set e; /* the test sequences */
    /* the controls: the long runs' networks, then the depth control's */
    struct exp_config *xcfg;
    struct exp_score *xres;
    int *xparams;
    int n_x;
    struct choice choice[MAX_CONFIG + N_DEPTH]; /* the grid's rows */
    int n_choice;
    struct longrun lng[2];
    int n_long;
    int long_of[2 * LONG_SEEDS]; /* the test run's network a long run's
                                    xcfg[k] repeats at 1x */
    struct depth depth[2 + N_DEPTH];
    int n_depth;
    /* the tables: the position and the content task, from the CSV files */
    struct summary s[MAX_CONFIG], sc[MAX_CONFIG];
    int n_pos, n_con;
};

/* protocol.c */
void run_grid(struct run *run, const int *heads, int n_heads,
              struct outcome *o);
void plan_test(struct run *run, int n_heads, struct outcome *o);
void run_test(struct run *run, struct outcome *o);

/* tables.c */
extern const char *const csv_key[2][EXP_R]; /* the relations' names in the
                                               CSV files and the values */
void write_csvs(const struct run *run, const char *dir, const char *impl,
                const struct outcome *o);
int read_csv(const char *dir, const char *name, int R, struct summary *sum,
             int max);
const char *label_of(const struct summary *s, char *buf, size_t n);
const char *name_of(int heads, int layers, char *buf, size_t n);
int kv_floats(int layers, int d_model);
void print_tables(FILE *f, const char *impl, const struct outcome *o);
int print_comparison(FILE *f, const struct outcome *o, const struct summary *rs,
                     int n_rs, const struct summary *rc, int n_rc);

/* measures.c: a measure of one network, f(r, j) for relation j (or
 * head count j, or unused), and its mean and sd over seeds */
typedef double measure_fn(const struct exp_result *r, int j);
const struct exp_result *first_of(const struct exp_result *res, int n, int task,
                                  int heads, float scale);
struct run_stats over_seeds(const struct exp_result *res, int n, int task,
                            int heads, float scale, measure_fn *f, int arg);
measure_fn get_probe, get_late, get_late_mean, get_probe_mean, get_cue_same,
    get_cue_other, get_same_share, get_role0, get_sharp, get_heavy_share,
    get_acc_heavy, get_acc_other, get_prune_keep, get_owner_mean,
    get_other_zero, get_other_mean, get_distinct_mean, get_loss_drop;
void other_loss_max(const struct exp_result *res, int n, int task, int heads,
                    float scale, int R, double *oz, double *om);

/* data.c */
void write_data(const struct run *run, const char *dir,
                const struct outcome *o);

#endif
