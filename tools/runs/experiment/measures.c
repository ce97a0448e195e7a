/*
 * measures.c: what the tables and the book's data read off the test
 * run's networks (driver.h): a measure of one network (exp_result), and
 * its mean and sd over the seeds of a configuration.
 */
#include "driver.h"

#include <math.h>

/* The first network (the first seed) with this task, heads and scale. */
const struct exp_result *first_of(const struct exp_result *res, int n, int task,
                                  int heads, float scale)
{
    for (int k = 0; k < n; k++)
        if (res[k].task == task && res[k].n_heads == heads &&
            res[k].score_scale == scale)
            return &res[k];
    return NULL;
}

/* mean and sample sd of f(res[k]) over the networks with this task,
 * heads and scale */
struct run_stats over_seeds(const struct exp_result *res, int n, int task,
                            int heads, float scale,
                            double (*f)(const struct exp_result *, int),
                            int arg)
{
    struct run_sum sum = {0};
    for (int k = 0; k < n; k++)
        if (res[k].task == task && res[k].n_heads == heads &&
            res[k].score_scale == scale)
            run_sum_add(&sum, f(&res[k], arg));
    return run_sum_stats(&sum);
}

double get_probe(const struct exp_result *r, int j)
{
    return r->probe[j];
}
double get_late(const struct exp_result *r, int j)
{
    return r->late.accuracy[j];
}
double get_late_mean(const struct exp_result *r, int j)
{
    (void)j;
    return r->late.mean_accuracy;
}
double get_probe_mean(const struct exp_result *r, int j)
{
    (void)j;
    double s = 0;
    for (int i = 0; i < r->n_relations; i++)
        s += r->probe[i] / r->n_relations;
    return s;
}
double get_cue_same(const struct exp_result *r, int j)
{
    return r->cue[j][0];
}
double get_cue_other(const struct exp_result *r, int j)
{
    return r->cue[j][1];
}
double get_same_share(const struct exp_result *r, int j)
{
    (void)j;
    return r->same_class_share;
}
double get_role0(const struct exp_result *r, int j)
{
    return r->role[0][j];
}
double get_sharp(const struct exp_result *r, int j)
{
    (void)j;
    return r->sharp;
}
double get_heavy_share(const struct exp_result *r, int j)
{
    return r->heaviest_share[j];
}
double get_acc_heavy(const struct exp_result *r, int j)
{
    return r->acc_heaviest[j];
}
double get_acc_other(const struct exp_result *r, int j)
{
    return r->acc_other[j];
}
/* the mean accuracy with all but k heads removed (prune[h - k]) */
double get_prune_keep(const struct exp_result *r, int k)
{
    return r->prune[r->n_heads - k];
}
/* the ablation, zeroed (lost) or mean-ablated (lost_mean), per relation
 * j: what the head that matters most costs (its owner), and the most any
 * other head costs */
static int owner_of(const double lost[][EXP_R], int h, int j)
{
    int o = 0;
    for (int i = 1; i < h; i++)
        if (lost[i][j] > lost[o][j])
            o = i;
    return o;
}
static double other_max(const double lost[][EXP_R], int h, int j)
{
    int o = owner_of(lost, h, j);
    double m = -1;
    for (int i = 0; i < h; i++)
        if (i != o)
            m = fmax(m, lost[i][j]);
    return m;
}
double get_owner_mean(const struct exp_result *r, int j)
{
    return r->lost_mean[owner_of(r->lost_mean, r->n_heads, j)][j];
}
double get_other_zero(const struct exp_result *r, int j)
{
    return other_max(r->lost, r->n_heads, j);
}
double get_other_mean(const struct exp_result *r, int j)
{
    return other_max(r->lost_mean, r->n_heads, j);
}
/* 1 when the R relations have R different owners under mean-ablation */
double get_distinct_mean(const struct exp_result *r, int j)
{
    (void)j;
    for (int q = 0; q < r->n_relations; q++)
        for (int p = 0; p < q; p++)
            if (owner_of(r->lost_mean, r->n_heads, p) ==
                owner_of(r->lost_mean, r->n_heads, q))
                return 0;
    return 1;
}

double get_loss_drop(const struct exp_result *r, int j)
{
    (void)j; /* the last tenth's mean loss over the tenth before it */
    int n = r->n_points, w = n / 10 ? n / 10 : 1;
    double a = 0, b = 0;
    for (int p = n - w; p < n; p++)
        a += r->loss_curve[p];
    for (int p = n - 2 * w; p < n - w; p++)
        b += r->loss_curve[p];
    return b > 0 ? a / b : 1;
}

/* The most a head other than a relation's owner costs it, zeroed (*oz)
 * and mean-ablated (*om), over the R relations and the seeds of this
 * task, heads and scale (the mean over seeds of the largest over
 * relations would hide a seed's exception). */
void other_loss_max(const struct exp_result *res, int n, int task, int heads,
                    float scale, int R, double *oz, double *om)
{
    *oz = -1, *om = -1;
    for (int q = 0; q < n; q++)
        if (res[q].task == task && res[q].n_heads == heads &&
            res[q].score_scale == scale)
            for (int j = 0; j < R; j++) {
                *oz = fmax(*oz, get_other_zero(&res[q], j));
                *om = fmax(*om, get_other_mean(&res[q], j));
            }
}
