/*
 * data.c: the book's data (driver.h), into DATA_DIR: numbers only, from
 * the two CSV files as written (the summaries) and from the measurements
 * of experiment.h. Every table and gnuplot script the chapter shows is
 * made from these files by tools/runs/plotdata/ch5.c, so that a table's
 * heading changes without a run.
 *   ch5.values                   key=value numbers for the prose
 *   ch5_results.csv, ch5_content.csv  per configuration of each task,
 *                                the mean and sd over seeds of each
 *                                relation's accuracy, the mean accuracy
 *                                and the final loss
 *   ch5_grid.csv                 the grid: validation accuracy and loss
 *                                of every row and cell, the chosen cell
 *   ch5_depth.csv                the depth control's rows
 *   ch5_loss.dat                 mean loss curves
 *   ch5_ablation_hH.dat          head x relation accuracy lost,
 *   ch5_ablation_mean_hH.dat     zeroed and mean-ablated
 *   ch5_prune.dat                the pruning curves
 *   ch5_heads_hH_iI.dat          trained heads' maps, and each head's
 *   ch5_heads_roles.csv          mean weight on each relation's token
 *   ch5_content_hH_iI.dat        the same for the content task
 *   ch5_content_roles.csv
 *   ch5_shown.csv                the shown sequence: its symbols, their
 *                                classes
 * The CSV files' numbers are written in full ("%.17g", which reads back
 * as the very same double), so that the tables made from them print what
 * the run measured.
 */
#include "driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The ablations' thresholds, as fractions of accuracy: the prose's
 * wording depends on them, and the values file states them. */
#define ABL_SHARED 0.1  /* a head other than the owner costs this or more */
#define ABL4_OWNER 0.5  /* the owner costs its relation this or more */
#define ABL4_OTHER 0.1  /* any other head costs it less than this */
#define ABL2_SMALL 0.05 /* zeroing the weak head costs less than this */

/* The sizes, the training and the sequences every network shares. */
static void write_setup(FILE *v, const struct outcome *o)
{
    const struct exp_config *c0 = &o->c0;
    const int seeds = o->seeds;
    fprintf(v, "ch5.symbols=%d\nch5.T=%d\nch5.d_model=%d\nch5.classes=%d\n",
            c0->n_symbols, c0->T, c0->d_model, c0->n_classes);
    fprintf(v, "ch5.class_size=%d\n", c0->n_symbols / c0->n_classes);
    fprintf(v, "ch5.batch=%d\nch5.steps=%d\nch5.lr=%g\nch5.lr_final=%g\n",
            c0->batch, c0->steps, c0->lr, c0->lr_final);
    fprintf(v, "ch5.seeds=%d\nch5.seed_first=%llu\nch5.seed_last=%llu\n", seeds,
            RUN_FIRST_SEED, RUN_FIRST_SEED + (unsigned long long)seeds - 1);
    fprintf(v, "ch5.eval_sequences=%d\nch5.probe_sequences=%d\n", RUN_N_EVAL,
            RUN_N_PROBE);
    fprintf(v, "ch5.ablation_sequences=%d\nch5.networks=%d\n", RUN_N_ABL, o->n);
    fprintf(v, "ch5.chance_pct=%.2f\nch5.chance_loss=%.2f\n",
            100.0 / c0->n_symbols, log((double)c0->n_symbols));
    fprintf(v, "ch5.emb_init=%g\nch5.qk_init=%g\nch5.vo_init=%g\n",
            c0->emb_init, c0->qk_init, c0->vo_init);
    const int d = c0->d_model, RS = EXP_R * c0->n_symbols;
    fprintf(v, "ch5.params=%d\n", o->res[0].n_params);
    fprintf(v, "ch5.params_tok=%d\nch5.params_pos=%d\n", c0->n_symbols * d,
            c0->T * d);
    fprintf(v, "ch5.params_attn=%d\nch5.params_readout=%d\n", 4 * d * d,
            d * RS + RS);
}

/* The grid's data (ch5_grid.csv: one row per grid row and cell) and the
 * chosen settings' values. */
static void write_grid(const char *dir, FILE *v, const struct outcome *o)
{
    FILE *f = data_open(PROG, dir, "ch5_grid.csv");
    fprintf(f, "heads,layers,lr,vo_init,val_accuracy,val_loss,chosen\n");
    for (int i = 0; i < o->n_choice; i++) {
        const struct choice *c = &o->choice[i];
        char tag[32] = "";
        if (c->layers > 1)
            snprintf(tag, sizeof tag, "_%dlayer", c->layers);
        for (int g = 0; g < N_GRID; g++)
            fprintf(f, "%d,%d,%g,%g,%.17g,%.17g,%d\n", c->heads, c->layers,
                    (double)grid_lr[g / N_VO], (double)grid_vo[g % N_VO],
                    c->val_acc[g], c->val_loss[g], g == c->chosen);
        fprintf(v, "ch5.chosen_lr_%dhead%s=%g\nch5.chosen_vo_%dhead%s=%g\n",
                c->heads, tag, (double)grid_lr[c->chosen / N_VO], c->heads, tag,
                (double)grid_vo[c->chosen % N_VO]);
        /* the chosen cell, counted from 1 in the table's order, so that
         * the prose can tell whether two rows chose alike */
        fprintf(v, "ch5.chosen_cell_%dhead%s=%d\n", c->heads, tag,
                c->chosen + 1);
    }
    data_close(PROG, f);
}

/* The grid's and the long runs' values. */
static void write_protocol(const char *dir, FILE *v, const struct outcome *o)
{
    const struct longrun *g_long = o->lng;
    const int n_long = o->n_long;
    write_grid(dir, v, o);
    for (int k = 0; k < N_LR; k++)
        fprintf(v, "ch5.grid_lr_%d=%g\n", k + 1, (double)grid_lr[k]);
    for (int k = 0; k < N_VO; k++)
        fprintf(v, "ch5.grid_vo_%d=%g\n", k + 1, (double)grid_vo[k]);
    fprintf(v, "ch5.grid_n_lr=%d\nch5.grid_n_vo=%d\nch5.grid_cells=%d\n", N_LR,
            N_VO, N_GRID);
    fprintf(v, "ch5.grid_seed=%llu\nch5.grid_networks=%d\n", GRID_SEED,
            o->n_choice * N_GRID);
    fprintf(v, "ch5.networks_total=%d\n",
            o->n + o->n_choice * N_GRID + n_long * LONG_SEEDS +
                N_DEPTH * o->seeds);
    fprintf(v, "ch5.long_factor=%d\nch5.long_steps=%d\nch5.long_seed=%llu\n",
            LONG_FACTOR, LONG_FACTOR * o->c0.steps, RUN_FIRST_SEED);
    for (int k = 0; k < n_long; k++)
        fprintf(v,
                "ch5.long_short_%dhead=%.1f\nch5.long_long_%dhead=%.1f\n"
                "ch5.long_loss_short_%dhead=%.3f\nch5.long_loss_long_%dhead="
                "%.3f\n",
                g_long[k].heads, 100 * g_long[k].acc_short, g_long[k].heads,
                100 * g_long[k].acc_long, g_long[k].heads, g_long[k].loss_short,
                g_long[k].heads, g_long[k].loss_long);
    if (n_long == 2)
        fprintf(v, "ch5.long_gap_short=%.1f\nch5.long_gap_long=%.1f\n",
                100 * (g_long[1].acc_short - g_long[0].acc_short),
                100 * (g_long[1].acc_long - g_long[0].acc_long));
}

/* What a stack q gives against one head and four heads in one layer,
 * as flags the prose picks its wording by, in this order: the gap to
 * four heads closed (every seed within DEPTH_CLOSE of their mean),
 * narrowed in every seed (its worst seed above one head's best),
 * narrowed on average only (its mean above one head's by more than one
 * head's spread, at least DEPTH_SPREAD), worse than one head by more than
 * that spread, or none of these. */
#define DEPTH_CLOSE  0.01
#define DEPTH_SPREAD 0.01
static void write_depth_verdict(FILE *v, const struct depth *one,
                                const struct depth *q, const struct depth *four)
{
    const double spread = fmax(one->acc[EXP_R].sd, DEPTH_SPREAD);
    const double gain = q->acc[EXP_R].mean - one->acc[EXP_R].mean;
    fprintf(v,
            "ch5.depth_closes_%dlayer=%d\nch5.depth_above_every_seed_%dlayer="
            "%d\nch5.depth_above_mean_%dlayer=%d\nch5.depth_below_%dlayer="
            "%d\n",
            q->layers, q->lo >= four->acc[EXP_R].mean - DEPTH_CLOSE, q->layers,
            q->lo > one->hi, q->layers, gain > spread, q->layers,
            gain < -spread);
}

/* One row of the depth control: its values. */
static void write_depth_values(FILE *v, const struct depth *q)
{
    char tag[32];
    snprintf(tag, sizeof tag, "%dhead_%dlayer", q->heads, q->layers);
    fprintf(v,
            "ch5.depth_pct_%s=%.1f\nch5.depth_sd_%s=%.1f\n"
            "ch5.depth_params_%s=%d\nch5.depth_kv_%s=%d\n",
            tag, 100 * q->acc[EXP_R].mean, tag, 100 * q->acc[EXP_R].sd, tag,
            q->params, tag, kv_floats(q->layers, 32));
    for (int r = 0; r < EXP_R; r++)
        fprintf(v, "ch5.depth_pct_%s_%s=%.1f\n", tag, csv_key[0][r],
                100 * q->acc[r].mean);
    fprintf(v,
            "ch5.depth_lo_%s=%.1f\nch5.depth_hi_%s=%.1f\n"
            "ch5.depth_solved_%s=%d\n",
            tag, 100 * q->lo, tag, 100 * q->hi, tag, q->solved);
}

/* The depth control's data (ch5_depth.csv: rows in o->depth's order, 1
 * head and 4 heads in one layer first) and its values. */
static void write_depth(const char *dir, FILE *v, const struct outcome *o)
{
    if (o->n_depth < 3)
        return;
    FILE *f = data_open(PROG, dir, "ch5_depth.csv");
    fprintf(f, "heads,layers,params,kv_floats");
    for (int r = 0; r < EXP_R; r++)
        fprintf(f, ",%s", csv_key[0][r]);
    fprintf(f, ",mean_accuracy,sd_accuracy\n");
    const struct depth *one = NULL, *four = NULL;
    for (int k = 0; k < o->n_depth; k++) {
        const struct depth *q = &o->depth[k];
        if (q->layers == 1 && q->heads == 1)
            one = q;
        if (q->layers == 1 && q->heads == 4)
            four = q;
    }
    for (int k = 0; k < o->n_depth; k++) {
        const struct depth *q = &o->depth[k];
        fprintf(f, "%d,%d,%d,%d", q->heads, q->layers, q->params,
                kv_floats(q->layers, 32));
        for (int r = 0; r < EXP_R; r++) /* the means; the sd is the mean's */
            fprintf(f, ",%.17g", q->acc[r].mean);
        fprintf(f, ",%.17g,%.17g\n", q->acc[EXP_R].mean, q->acc[EXP_R].sd);
        write_depth_values(v, q);
        if (q->layers > 1 && one && four)
            write_depth_verdict(v, one, q, four);
    }
    data_close(PROG, f);
    fprintf(v, "ch5.depth_close_pts=%g\nch5.depth_spread_min_pts=%g\n",
            100 * DEPTH_CLOSE, 100 * DEPTH_SPREAD);
}

/* "1head", "1head_scaled", "content_2head": a configuration's name in
 * the values' keys */
static const char *tag_of(int task, int heads, int scaled, char *buf, size_t n)
{
    snprintf(buf, n, "%s%dhead%s", task == EXP_TASK_CONTENT ? "content_" : "",
             heads, scaled ? "_scaled" : "");
    return buf;
}

/* Configuration c's values for relation j, over the seeds. */
static void write_relation_values(FILE *v, const struct outcome *o,
                                  const struct config *c, const char *tag,
                                  int j)
{
    const struct exp_result *res = o->res;
    const int n = o->n, h = c->heads, task = c->task;
    const float sc_ = c->score_scale;
    const char *key = csv_key[task][j];
    struct run_stats st = over_seeds(res, n, task, h, sc_, get_late, j);
    fprintf(v, "ch5.late_%s_%s=%.1f\n", tag, key, 100 * st.mean);
    st = over_seeds(res, n, task, h, sc_, get_probe, j);
    fprintf(v, "ch5.probe_%s_%s=%.1f\nch5.probe_%s_%s_sd=%.1f\n", tag, key,
            100 * st.mean, tag, key, 100 * st.sd);
    if (task == EXP_TASK_CONTENT) {
        st = over_seeds(res, n, task, h, sc_, get_cue_same, j);
        fprintf(v, "ch5.cue_%s_%s_same=%.1f\n", tag, key, 100 * st.mean);
        st = over_seeds(res, n, task, h, sc_, get_cue_other, j);
        fprintf(v, "ch5.cue_%s_%s_other=%.1f\n", tag, key, 100 * st.mean);
        st = over_seeds(res, n, task, h, sc_, get_same_share, j);
        if (h == 1 && j == 0)
            fprintf(v, "ch5.same_class_share=%.0f\n", 100 * st.mean);
    }
    if (h == 1) {
        st = over_seeds(res, n, task, h, sc_, get_role0, j);
        fprintf(v, "ch5.weight_%s_%s=%.2f\n", tag, key, st.mean);
        st = over_seeds(res, n, task, h, sc_, get_heavy_share, j);
        fprintf(v, "ch5.heavy_share_%s_%s=%.0f\n", tag, key, 100 * st.mean);
        st = over_seeds(res, n, task, h, sc_, get_acc_heavy, j);
        fprintf(v, "ch5.acc_heavy_%s_%s=%.1f\n", tag, key, 100 * st.mean);
        st = over_seeds(res, n, task, h, sc_, get_acc_other, j);
        fprintf(v, "ch5.acc_other_%s_%s=%.1f\n", tag, key, 100 * st.mean);
    } else {
        st = over_seeds(res, n, task, h, sc_, exp_top_weight, j);
        fprintf(v, "ch5.top_weight_%s_%s=%.2f\n", tag, key, st.mean);
        st = over_seeds(res, n, task, h, sc_, exp_owner_loss, j);
        fprintf(v, "ch5.owner_loss_%s_%s=%.1f\n", tag, key, 100 * st.mean);
        st = over_seeds(res, n, task, h, sc_, get_owner_mean, j);
        fprintf(v, "ch5.owner_loss_mean_%s_%s=%.1f\n", tag, key, 100 * st.mean);
    }
}

/* A configuration of several heads: its ablations' and its pruning's
 * values. */
static void write_heads_values(FILE *v, const struct outcome *o,
                               const struct config *c, const char *tag)
{
    const struct exp_result *res = o->res;
    const int n = o->n, h = c->heads, task = c->task;
    const int R = exp_task_relations(task);
    const float sc_ = c->score_scale;
    struct run_stats st =
        over_seeds(res, n, task, h, sc_, exp_owners_distinct, 0);
    fprintf(v, "ch5.owners_distinct_%s=%.0f\n", tag, st.mean * o->seeds);
    st = over_seeds(res, n, task, h, sc_, get_distinct_mean, 0);
    fprintf(v, "ch5.owners_distinct_mean_%s=%.0f\n", tag, st.mean * o->seeds);
    double oz, om;
    other_loss_max(res, n, task, h, sc_, R, &oz, &om);
    fprintf(v, "ch5.other_loss_max_%s=%.1f\nch5.other_loss_max_mean_%s=%.1f\n",
            tag, 100 * oz, tag, 100 * om);
    /* how far the two ablations ever part, any head, relation and seed */
    double gap = 0;
    for (int q = 0; q < n; q++)
        if (res[q].task == task && res[q].n_heads == h &&
            res[q].score_scale == sc_)
            for (int i = 0; i < h; i++)
                for (int j = 0; j < R; j++)
                    gap = fmax(
                        gap, fabs(res[q].lost[i][j] - res[q].lost_mean[i][j]));
    fprintf(v, "ch5.abl_gap_max_%s=%.1f\n", tag, 100 * gap);
    /* whether some relation depends on more than one head: a head other
     * than its owner costs it ABL_SHARED or more, mean-ablated */
    fprintf(v, "ch5.abl_shared_%s=%d\n", tag, om >= ABL_SHARED);
    for (int keep = 1; keep <= h; keep++) {
        st = over_seeds(res, n, task, h, sc_, get_prune_keep, keep);
        if (keep == 1 || keep == R || keep == h / 2)
            fprintf(v, "ch5.prune_%s_keep%d=%.1f\n", tag, keep, 100 * st.mean);
    }
}

/* Every configuration's measures over the seeds. */
static void write_config_values(FILE *v, const struct outcome *o)
{
    const struct exp_result *res = o->res;
    const int n = o->n;
    for (int k = 0; k < o->n_cf; k++) {
        const struct config *c = &o->cf[k];
        const int R = exp_task_relations(c->task), h = c->heads;
        const float sc_ = c->score_scale;
        char tag[32];
        tag_of(c->task, h, sc_ != 1.0f, tag, sizeof tag);
        fprintf(v, "ch5.d_head_%s=%d\n", tag, o->c0.d_model / h);
        for (int j = 0; j < R; j++)
            write_relation_values(v, o, c, tag, j);
        struct run_stats st =
            over_seeds(res, n, c->task, h, sc_, get_late_mean, 0);
        fprintf(v, "ch5.late_%s=%.1f\n", tag, 100 * st.mean);
        st = over_seeds(res, n, c->task, h, sc_, get_probe_mean, 0);
        fprintf(v, "ch5.probe_%s=%.1f\n", tag, 100 * st.mean);
        st = over_seeds(res, n, c->task, h, sc_, get_sharp, 0);
        fprintf(v, "ch5.sharp_%s=%.2f\nch5.sharp_%s_sd=%.2f\n", tag, st.mean,
                tag, st.sd);
        st = over_seeds(res, n, c->task, h, sc_, get_loss_drop, 0);
        fprintf(v, "ch5.loss_last_tenth_%s=%.0f\n", tag, 100 * (1 - st.mean));
        if (h > 1)
            write_heads_values(v, o, c, tag);
    }
}

/* The tables' means, from the CSV files, for the prose. */
static void write_summary_values(FILE *v, const struct outcome *o)
{
    const int d = o->c0.d_model;
    for (int k = 0; k < o->n_pos + o->n_con; k++) {
        const struct summary *q =
            k < o->n_pos ? &o->s[k] : &o->sc[k - o->n_pos];
        const int task = k < o->n_pos ? EXP_TASK_POSITION : EXP_TASK_CONTENT;
        const int R = exp_task_relations(task);
        double own = 1 / sqrt((double)d / q->heads);
        char tag[32];
        tag_of(task, q->heads, fabs(q->scale - own) > 1e-4, tag, sizeof tag);
        fprintf(v, "ch5.pct_%s=%.1f\nch5.sd_%s=%.1f\n", tag, 100 * q->mean[R],
                tag, 100 * q->sd[R]);
        fprintf(v, "ch5.loss_%s=%.3f\nch5.params_%s=%d\n", tag, q->mean[R + 1],
                tag, q->params);
        for (int j = 0; j < R; j++)
            fprintf(v, "ch5.pct_%s_%s=%.1f\nch5.sd_%s_%s=%.1f\n", tag,
                    csv_key[task][j], 100 * q->mean[j], tag, csv_key[task][j],
                    100 * q->sd[j]);
    }
}

/* The first seed's four-head network: is its heatmap a permutation,
 * zeroed and mean-ablated: each relation one head that costs it at
 * least half its accuracy, every other cell under 10 points, four
 * different heads. */
static void write_abl4_values(FILE *v, const struct exp_result *r)
{
    int perm = exp_owners_distinct(r, 0) > 0.5 && get_distinct_mean(r, 0) > 0.5;
    for (int j = 0; j < EXP_R; j++)
        perm = perm && exp_owner_loss(r, j) >= ABL4_OWNER &&
               get_owner_mean(r, j) >= ABL4_OWNER &&
               get_other_zero(r, j) < ABL4_OTHER &&
               get_other_mean(r, j) < ABL4_OTHER;
    fprintf(v, "ch5.abl4_permutation=%d\n", perm);
}

/* The first seed's two-head network, relation by relation: the head that
 * gives the relation's token the least weight, and what zeroing it and
 * mean-ablating it cost. */
static void write_abl2_values(FILE *v, const struct exp_result *r)
{
    /* the previous token's case, the issue's: the other head's weights
     * on the previous token and the one two back, and whether
     * mean-ablation removes the weak head's cost */
    int weak = r->role[0][EXP_PREV] <= r->role[1][EXP_PREV] ? 0 : 1;
    double zero = r->lost[weak][EXP_PREV], mean = r->lost_mean[weak][EXP_PREV];
    fprintf(v,
            "ch5.abl2_strong_head=%d\nch5.abl2_strong_previous=%.2f\n"
            "ch5.abl2_strong_two_back=%.2f\nch5.abl2_weak_two_back=%.2f\n",
            1 - weak, r->role[1 - weak][EXP_PREV], r->role[1 - weak][EXP_BACK2],
            r->role[weak][EXP_BACK2]);
    /* whether zeroing the weak head costs the relation less than
     * ABL2_SMALL, and whether mean-ablating it costs less than half of
     * what zeroing does */
    fprintf(v, "ch5.abl2_zero_small=%d\nch5.abl2_mean_removes=%d\n",
            zero < ABL2_SMALL, mean < zero / 2);
    for (int j = 0; j < EXP_R; j++) {
        const char *key = csv_key[0][j];
        weak = r->role[0][j] <= r->role[1][j] ? 0 : 1;
        fprintf(v,
                "ch5.abl2_%s_weak_head=%d\nch5.abl2_%s_weak_weight=%.2f\n"
                "ch5.abl2_%s_weak_zero=%.0f\nch5.abl2_%s_weak_mean=%.0f\n",
                key, weak, key, r->role[weak][j], key, 100 * r->lost[weak][j],
                key, 100 * r->lost_mean[weak][j]);
    }
}

/* The ablation heatmaps (the first seed's network of each head count of
 * several heads): rows heads, columns relations, in percentage points
 * lost, zeroed (ch5_ablation_hH.dat) and mean-ablated
 * (ch5_ablation_mean_hH.dat); and the values of the four-head and the
 * two-head network's. */
static void write_ablations(const char *dir, FILE *v, const struct outcome *o)
{
    static const char *const tic[2][EXP_R] = {{"t-1", "t-2", "x0", "x1"},
                                              {"t-1", "class", "", ""}};
    for (int k = 0; k < o->n_cf; k++) {
        const struct config *c = &o->cf[k];
        if (c->heads < 2 || c->score_scale != 1.0f)
            continue;
        const struct exp_result *r =
            first_of(o->res, o->n, c->task, c->heads, c->score_scale);
        if (!r)
            continue;
        for (int mean = 0; mean < 2; mean++) {
            char name[64];
            snprintf(name, sizeof name, "ch5_ablation_%s%s%d.dat",
                     mean ? "mean_" : "",
                     c->task == EXP_TASK_CONTENT ? "content_h" : "h", c->heads);
            FILE *f = data_open(PROG, dir, name);
            fprintf(f, "head\\relation");
            for (int j = 0; j < r->n_relations; j++)
                fprintf(f, " %s", tic[c->task][j]);
            fprintf(f, "\n");
            for (int i = 0; i < r->n_heads; i++) {
                fprintf(f, "%d", i);
                for (int j = 0; j < r->n_relations; j++)
                    fprintf(f, " %.2f",
                            100 * (mean ? r->lost_mean[i][j] : r->lost[i][j]));
                fprintf(f, "\n");
            }
            data_close(PROG, f);
        }
        if (c->task == EXP_TASK_POSITION && c->heads == 4)
            write_abl4_values(v, r);
        if (c->task == EXP_TASK_POSITION && c->heads == 2)
            write_abl2_values(v, r);
    }
}

/* The loss curves: the mean over seeds, one column per configuration of
 * the position task. */
static void write_loss(const char *dir, const struct outcome *o)
{
    const struct exp_result *res = o->res;
    const struct config *cf = o->cf;
    FILE *f = data_open(PROG, dir, "ch5_loss.dat");
    fprintf(f,
            "# step, then the mean training loss over %d seeds of:", o->seeds);
    for (int k = 0; k < o->n_cf; k++)
        if (cf[k].task == EXP_TASK_POSITION)
            fprintf(f, " [%s]", cf[k].label);
    fprintf(f, "\n");
    const int pts = res[0].n_points, smooth = res[0].smooth;
    for (int p = 0; p < pts; p++) {
        fprintf(f, "%d", (p + 1) * smooth);
        for (int k = 0; k < o->n_cf; k++) {
            if (cf[k].task != EXP_TASK_POSITION)
                continue;
            double sum = 0;
            int m = 0;
            for (int j = 0; j < o->n; j++)
                if (res[j].task == cf[k].task &&
                    res[j].n_heads == cf[k].heads &&
                    res[j].score_scale == cf[k].score_scale)
                    sum += res[j].loss_curve[p], m++;
            fprintf(f, " %.6g", m ? sum / m : 0);
        }
        fprintf(f, "\n");
    }
    data_close(PROG, f);
}

/* The pruning curves: mean accuracy (mean, sd over seeds) with k heads
 * kept, the least important removed first; one block per head count. */
static void write_prune(const char *dir, const struct outcome *o)
{
    FILE *f = data_open(PROG, dir, "ch5_prune.dat");
    fprintf(f,
            "# heads kept, mean accuracy (%%), sd over %d seeds; one block "
            "per head count (gnuplot index 0, 1, ...)\n",
            o->seeds);
    for (int k = 0; k < o->n_cf; k++) {
        const struct config *c = &o->cf[k];
        if (c->task != EXP_TASK_POSITION || c->heads < 2 ||
            c->score_scale != 1.0f)
            continue;
        fprintf(f, "# %d heads\n", c->heads);
        for (int keep = 0; keep <= c->heads; keep++) {
            struct run_stats st =
                over_seeds(o->res, o->n, c->task, c->heads, c->score_scale,
                           get_prune_keep, keep);
            fprintf(f, "%d %.3f %.3f\n", keep, 100 * st.mean, 100 * st.sd);
        }
        fprintf(f, "\n\n");
    }
    data_close(PROG, f);
}

/* A table's summaries (ch5_results.csv, ch5_content.csv): heads, scale,
 * parameters, seeds, then the mean and sd of each relation's accuracy,
 * of the mean accuracy and of the final loss. */
static void write_summary(const char *dir, const char *name, int task,
                          const struct summary *s, int n)
{
    const int R = exp_task_relations(task);
    FILE *f = data_open(PROG, dir, name);
    fprintf(f, "heads,scale,params,seeds");
    for (int r = 0; r < R; r++)
        fprintf(f, ",mean_%s,sd_%s", csv_key[task][r], csv_key[task][r]);
    fprintf(f, ",mean_accuracy,sd_accuracy,mean_loss,sd_loss\n");
    for (int k = 0; k < n; k++) {
        fprintf(f, "%d,%.17g,%d,%d", s[k].heads, s[k].scale, s[k].params,
                s[k].n);
        for (int j = 0; j < R + 2; j++)
            fprintf(f, ",%.17g,%.17g", s[k].mean[j], s[k].sd[j]);
        fprintf(f, "\n");
    }
    data_close(PROG, f);
}

/* One map file per head of r (the first four), for gnuplot's `matrix
 * rowheaders columnheaders`, STEM_hH_iI.dat, and a row per head in
 * roles: heads, head, its mean weight on each relation's token. */
static void write_maps(const struct run *run, const char *dir, const char *stem,
                       FILE *roles, const struct exp_result *r,
                       const int *shown)
{
    const int h = r->n_heads, T = r->T, R = r->n_relations;
    for (int i = 0; i < h && i < 4; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s_h%d_i%d.dat", stem, h, i);
        run_write_map(run, dir, name, r->maps[i], T, shown);
        fprintf(roles, "%d,%d", h, i);
        for (int j = 0; j < R; j++)
            fprintf(roles, ",%.17g", r->role[i][j]);
        fprintf(roles, "\n");
    }
}

/* The maps of the first seed, on the shown sequence: the position task's
 * 1, 2 and 4 heads, the content task's 1 and 2 heads; and the shown
 * sequence's symbols and their classes. */
static void write_heads(const struct run *run, const char *dir,
                        const struct outcome *o)
{
    static const int shown_heads[3] = {1, 2, 4};
    const int *shown = o->e.eval + o->e.shown * o->e.T;
    for (int task = 0; task < 2; task++) {
        const int position = task == EXP_TASK_POSITION,
                  R = exp_task_relations(task);
        const char *stem = position ? "ch5_heads" : "ch5_content";
        char name[64];
        snprintf(name, sizeof name, "%s_roles.csv", stem);
        FILE *roles = data_open(PROG, dir, name);
        fprintf(roles, "heads,head");
        for (int j = 0; j < R; j++)
            fprintf(roles, ",%s", csv_key[task][j]);
        fprintf(roles, "\n");
        for (int k = 0; k < (position ? 3 : 2); k++) {
            const struct exp_result *r = first_of(
                o->res, o->n, task, position ? shown_heads[k] : k + 1, 1.0f);
            if (r)
                write_maps(run, dir, stem, roles, r, shown);
        }
        data_close(PROG, roles);
    }
    FILE *f = data_open(PROG, dir, "ch5_shown.csv");
    fprintf(f, "t,symbol,class\n");
    for (int t = 0; t < o->e.T; t++)
        fprintf(f, "%d,%d,%d\n", t, shown[t], exp_class(&o->c0, shown[t]));
    data_close(PROG, f);
}

void write_data(const struct run *run, const char *dir, const struct outcome *o)
{
    FILE *v = data_open(PROG, dir, "ch5.values");
    write_setup(v, o);
    write_protocol(dir, v, o);
    write_depth(dir, v, o);
    fprintf(v,
            "ch5.abl_shared_pts=%g\nch5.abl4_owner_pct=%g\n"
            "ch5.abl4_other_pts=%g\nch5.abl2_small_pts=%g\n",
            100 * ABL_SHARED, 100 * ABL4_OWNER, 100 * ABL4_OTHER,
            100 * ABL2_SMALL);
    write_config_values(v, o);
    write_summary_values(v, o);
    write_ablations(dir, v, o); /* the last values: the ablations' */
    data_close(PROG, v);
    write_loss(dir, o);
    write_prune(dir, o);
    write_summary(dir, "ch5_results.csv", EXP_TASK_POSITION, o->s, o->n_pos);
    write_summary(dir, "ch5_content.csv", EXP_TASK_CONTENT, o->sc, o->n_con);
    write_heads(run, dir, o);
}
