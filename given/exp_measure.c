/*
 * exp_measure.c: measuring trained networks, and training many of them on
 * several processes (experiment.h). Given code, used by chapter 5's
 * program (tools/runs/experiment/main.c) and by chapter 6's experiment.
 *
 * What is measured, on one trained network:
 *   - the accuracy per relation on fresh sequences, and on the positions
 *     where the R relations read R different tokens ("distinct");
 *   - each head's mean weight on each relation's token there, and how
 *     sharp a head's rows are (its largest weight);
 *   - a linear probe: least squares from the layer's output A_t alone to
 *     the one-hot target of each relation;
 *   - for head 0: how often each relation's token is the heaviest of the
 *     R tokens, and the accuracy on that relation then and otherwise;
 *   - ablation: each head knocked out in turn (its rows of W_o zeroed, the
 *     same as zeroing its columns of the concatenation), the accuracy lost
 *     per relation; the same with the head's output replaced by its mean
 *     (mean-ablation); and a pruning curve, the least important head
 *     first.
 *
 * Dimension letters: T = tokens, S = symbols, R = relations, h = heads,
 * d = d_model, N = sequences, F = d + 1 probe features.
 */
#include "experiment.h"
#include "pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * The evaluation sequences
 * ------------------------------------------------------------------- */

int exp_eval_set_init(struct exp_eval_set *e, int T, int S, int n_eval,
                      int n_probe, int n_abl, unsigned long long seed)
{
    if (!e)
        return KIT_E_NULL;
    memset(e, 0, sizeof *e);
    if (T <= 0 || S <= 0 || S > 32 || n_eval <= 0 || n_probe <= 0 ||
        n_abl <= 0 || n_abl > n_eval)
        return KIT_E_SIZE;
    e->T = T, e->S = S;
    e->n_eval = n_eval, e->n_probe = n_probe, e->n_abl = n_abl;
    e->eval = malloc((size_t)(n_eval * T) * sizeof(int));
    e->probe = malloc((size_t)(n_probe * T) * sizeof(int));
    if (!e->eval || !e->probe) {
        exp_eval_set_free(e);
        return KIT_E_NOMEM;
    }
    struct rng r;
    rng_seed(&r, seed);
    exp_make_batch(&r, e->eval, n_eval, T, S);
    rng_seed(&r, seed ^ 0x9E3779B97F4A7C15ULL); /* the probe's own stream */
    exp_make_batch(&r, e->probe, n_probe, T, S);
    /* the shown sequence: the first with T different symbols, so that
     * every label of its maps names one position */
    for (int n = 0; n < n_eval; n++) {
        unsigned seen = 0, ok = 1; /* a bit per symbol, S <= 32 */
        for (int t = 0; t < T && ok; t++) {
            unsigned bit = 1u << e->eval[n * T + t];
            ok = !(seen & bit);
            seen |= bit;
        }
        if (ok) {
            e->shown = n;
            break;
        }
    }
    return KIT_OK;
}

void exp_eval_set_free(struct exp_eval_set *e)
{
    if (!e)
        return;
    free(e->eval);
    free(e->probe);
    memset(e, 0, sizeof *e);
}

/* ---------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------- */

/* Fill src (R) with the positions the R relations read at t; return 1
 * when all are valid and all different, the positions where a network
 * must gather R tokens from R places ("distinct"). */
static int distinct(const struct exp_model *m, const int *x, int t, int *src)
{
    const int R = m->n_relations;
    int ok = 1;
    for (int r = 0; r < R; r++) {
        src[r] = exp_source_in(&m->cfg, x, r, t);
        ok = ok && src[r] >= 0;
        for (int q = 0; q < r; q++)
            ok = ok && src[q] != src[r];
    }
    return ok;
}

static int argmax(const float *z, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (z[i] > z[best])
            best = i;
    return best;
}

/* Solve (G) w = b for the symmetric positive definite G (F, F), in
 * place, by Cholesky; b (F, S) is overwritten with w. 0 on success. */
static int cholesky_solve(double *G, double *b, int F, int S)
{
    for (int j = 0; j < F; j++) {
        double s = G[j * F + j];
        for (int k = 0; k < j; k++)
            s -= G[j * F + k] * G[j * F + k];
        if (!(s > 0))
            return 1;
        G[j * F + j] = sqrt(s);
        for (int i = j + 1; i < F; i++) {
            double v = G[i * F + j];
            for (int k = 0; k < j; k++)
                v -= G[i * F + k] * G[j * F + k];
            G[i * F + j] = v / G[j * F + j];
        }
    }
    for (int c = 0; c < S; c++) { /* L y = b, then L^T w = y */
        for (int i = 0; i < F; i++) {
            double v = b[i * S + c];
            for (int k = 0; k < i; k++)
                v -= G[i * F + k] * b[k * S + c];
            b[i * S + c] = v / G[i * F + i];
        }
        for (int i = F - 1; i >= 0; i--) {
            double v = b[i * S + c];
            for (int k = i + 1; k < F; k++)
                v -= G[k * F + i] * b[k * S + c];
            b[i * S + c] = v / G[i * F + i];
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------
 * The probe: least squares from A_t (and a constant 1) to the one-hot
 * target of each relation, fitted at the distinct positions of the probe
 * set. W (R, F, S) gets the fitted readouts.
 * ------------------------------------------------------------------- */

static int fit_probe(struct exp_model *m, const struct exp_eval_set *e,
                     double *W)
{
    const int T = m->cfg.T, d = m->cfg.d_model, S = m->cfg.n_symbols;
    const int R = m->n_relations, F = d + 1;
    double *G = calloc((size_t)(F * F), sizeof(double));
    double *f = calloc((size_t)F, sizeof(double));
    int src[EXP_R];
    if (!G || !f) {
        free(G), free(f);
        return KIT_E_NOMEM;
    }
    memset(W, 0, (size_t)(R * F * S) * sizeof(double));
    int status = KIT_OK;
    for (int n = 0; n < e->n_probe && status == KIT_OK; n++) {
        const int *x = e->probe + n * T;
        status = exp_forward(m, x, NULL, NULL, NULL);
        for (int t = 0; t < T && status == KIT_OK; t++) {
            if (!distinct(m, x, t, src))
                continue;
            for (int c = 0; c < d; c++)
                f[c] = m->A[t * d + c];
            f[d] = 1;
            for (int i = 0; i < F; i++)
                for (int j = 0; j < F; j++)
                    G[i * F + j] += f[i] * f[j];
            for (int r = 0; r < R; r++) /* F^T Y: one column per symbol */
                for (int i = 0; i < F; i++)
                    W[(r * F + i) * S + x[src[r]]] += f[i];
        }
    }
    if (status == KIT_OK) {
        /* a touch of ridge keeps G invertible when A has a dead direction
         */
        double tr = 0;
        for (int i = 0; i < F; i++)
            tr += G[i * F + i];
        for (int i = 0; i < F; i++)
            G[i * F + i] += 1e-6 * tr / F + 1e-12;
        double *L = malloc((size_t)(F * F) * sizeof(double));
        if (!L)
            status = KIT_E_NOMEM;
        for (int r = 0; r < R && status == KIT_OK; r++) {
            memcpy(L, G, (size_t)(F * F) * sizeof(double));
            if (cholesky_solve(L, W + r * F * S, F, S))
                memset(W + r * F * S, 0, (size_t)(F * S) * sizeof(double));
        }
        free(L);
    }
    free(G), free(f);
    return status;
}

/* ---------------------------------------------------------------------
 * One pass over the evaluation set
 * ------------------------------------------------------------------- */

static int measure(struct exp_model *m, const struct exp_eval_set *e,
                   const double *W, struct exp_result *res)
{
    const int T = m->cfg.T, d = m->cfg.d_model, S = m->cfg.n_symbols;
    const int R = m->n_relations, h = m->cfg.n_heads, RS = R * S, F = d + 1;
    long late_right[EXP_R] = {0}, late_n = 0, probe_right[EXP_R] = {0};
    long heavy_n[EXP_R] = {0}, heavy_right[EXP_R] = {0},
         other_right[EXP_R] = {0};
    long cue_n[2] = {0, 0}, cue_right[EXP_R][2] = {{0}};
    const int content = m->cfg.task == EXP_TASK_CONTENT;
    double sharp = 0;
    int src[EXP_R];
    double *z = malloc((size_t)S * sizeof(double));
    if (!z)
        return KIT_E_NOMEM;
    long correct[EXP_R] = {0}, counted[EXP_R] = {0}, total = 0;
    double loss = 0;
    int status = KIT_OK;
    for (int n = 0; n < e->n_eval && status == KIT_OK; n++) {
        const int *x = e->eval + n * T;
        status = exp_forward(m, x, &loss, correct, counted);
        for (int t = 0; t < T && status == KIT_OK; t++) {
            if (!distinct(m, x, t, src))
                continue;
            late_n++;
            /* does the class tell x[t-1] from the other token? */
            const int cue = content && exp_class(&m->cfg, x[t - 1]) !=
                                           exp_class(&m->cfg, x[t]);
            cue_n[cue]++;
            for (int i = 0; i < h; i++) {
                const float *row = m->weights + (i * T + t) * T;
                sharp += row[argmax(row, t + 1)];
                for (int r = 0; r < R; r++)
                    res->role[i][r] += row[src[r]];
            }
            /* which relation's token is heaviest in head 0's row */
            const float *row0 = m->weights + t * T;
            int heavy = 0;
            for (int r = 1; r < R; r++)
                if (row0[src[r]] > row0[src[heavy]])
                    heavy = r;
            for (int r = 0; r < R; r++) {
                int right = argmax(m->logits + t * RS + r * S, S) == x[src[r]];
                late_right[r] += right;
                cue_right[r][cue] += right;
                heavy_n[r] += heavy == r;
                heavy_right[r] += heavy == r && right;
                other_right[r] += heavy != r && right;
                /* the probe's guess from A_t */
                const double *w = W + r * F * S;
                for (int s = 0; s < S; s++)
                    z[s] = w[d * S + s];
                for (int c = 0; c < d; c++) {
                    double a = m->A[t * d + c];
                    for (int s = 0; s < S; s++)
                        z[s] += a * w[c * S + s];
                }
                int best = 0;
                for (int s = 1; s < S; s++)
                    if (z[s] > z[best])
                        best = s;
                probe_right[r] += best == x[src[r]];
            }
        }
    }
    free(z);
    if (status != KIT_OK)
        return status;
    double nn = late_n ? (double)late_n : 1;
    memset(&res->score, 0, sizeof res->score);
    memset(&res->late, 0, sizeof res->late);
    for (int r = 0; r < R; r++) { /* as exp_evaluate() counts */
        res->score.accuracy[r] =
            counted[r] ? (double)correct[r] / (double)counted[r] : 0;
        res->score.mean_accuracy += res->score.accuracy[r] / R;
        total += counted[r];
    }
    res->score.loss = total ? loss / (double)total : 0;
    for (int r = 0; r < R; r++) {
        res->late.accuracy[r] = late_right[r] / nn;
        res->late.mean_accuracy += res->late.accuracy[r] / R;
        res->probe[r] = probe_right[r] / nn;
        res->heaviest_share[r] = heavy_n[r] / nn;
        res->acc_heaviest[r] =
            heavy_n[r] ? (double)heavy_right[r] / (double)heavy_n[r] : 0;
        res->acc_other[r] =
            late_n > heavy_n[r]
                ? (double)other_right[r] / (double)(late_n - heavy_n[r])
                : 0;
        for (int i = 0; i < h; i++)
            res->role[i][r] /= nn;
        for (int c = 0; c < 2; c++)
            res->cue[r][c] =
                cue_n[c] ? (double)cue_right[r][c] / (double)cue_n[c] : 0;
    }
    res->same_class_share = content ? cue_n[0] / nn : 0;
    res->sharp = sharp / (nn * h);
    return KIT_OK;
}

/* The n sequences x (n, T) through the network as it is (m->heads_off
 * as set): their score, as exp_evaluate() counts it, and every
 * sequence's logits into logits (n, T, R*S). */
static int forward_all(struct exp_model *m, const int *x, int n, float *logits,
                       struct exp_score *score)
{
    const int T = m->cfg.T, R = m->n_relations;
    const int TRS = T * R * m->cfg.n_symbols;
    long correct[EXP_R] = {0}, counted[EXP_R] = {0};
    double sum = 0;
    for (int k = 0; k < n; k++) {
        int status = exp_forward(m, x + k * T, &sum, correct, counted);
        if (status != KIT_OK)
            return status;
        memcpy(logits + k * TRS, m->logits, (size_t)TRS * sizeof(float));
    }
    exp_score_counts(score, R, correct, counted, sum);
    return KIT_OK;
}

/* @listing exp_mean_ablate */
/* Mean-ablation of one head, on the n sequences x (n, T): the accuracy
 * per relation, into acc (R), when the head's output o_i (its columns of
 * the concatenation) is replaced at each position t by its mean at t
 * over the n sequences. The logits are linear in o_i (o_i W_o's rows of
 * head i, then the residual sum, then W_r), so replacing o_i by its mean
 * adds to the logits of the zeroed network the mean of what o_i added:
 *   logits_mean = logits_zeroed + mean over sequences of
 *                                 (logits_all - logits_zeroed)   (T, R*S)
 * base (n, T, R*S) holds every sequence's logits with all heads on,
 * zeroed (n, T, R*S) the same with head i zeroed (the zero-ablation's,
 * computed once for both); shift (T, R*S) is scratch. */
static void mean_ablate(const struct exp_model *m, const int *x, int n,
                        const float *base, const float *zeroed, double *shift,
                        double *acc)
{
    const int T = m->cfg.T, S = m->cfg.n_symbols, R = m->n_relations;
    const int TRS = T * R * S;
    long right[EXP_R] = {0}, counted[EXP_R] = {0};
    /* 1. the mean of what head i adds */
    memset(shift, 0, (size_t)TRS * sizeof(double));
    for (int k = 0; k < n; k++)
        for (int j = 0; j < TRS; j++)
            shift[j] += (base[k * TRS + j] - zeroed[k * TRS + j]) / n;
    /* 2. score the zeroed logits plus the mean, as exp_evaluate() does */
    for (int k = 0; k < n; k++)
        for (int t = 0; t < T; t++)
            for (int r = 0; r < R; r++) {
                int src = exp_source_in(&m->cfg, x + k * T, r, t);
                if (src < 0)
                    continue;
                const int at = (t * R + r) * S;
                int best = 0;
                double top = zeroed[k * TRS + at] + shift[at];
                for (int s = 1; s < S; s++) {
                    double z = zeroed[k * TRS + at + s] + shift[at + s];
                    if (z > top)
                        top = z, best = s;
                }
                right[r] += best == x[k * T + src];
                counted[r]++;
            }
    for (int r = 0; r < R; r++)
        acc[r] = counted[r] ? (double)right[r] / (double)counted[r] : 0;
}
/* @end exp_mean_ablate */

/* Ablation (zeroed and mean-ablated) and pruning, on the first n_abl
 * evaluation sequences: one pass with every head on, one per head
 * zeroed (which the mean-ablation reuses), one per pruning step. */
static int ablate(struct exp_model *m, const struct exp_eval_set *e,
                  struct exp_result *res)
{
    const int h = m->cfg.n_heads, R = m->n_relations, T = m->cfg.T;
    const int TRS = T * R * m->cfg.n_symbols, n = e->n_abl;
    struct exp_score base, cut;
    double importance[EXP_MAX_HEADS] = {0}, acc[EXP_R] = {0};
    float *logits = malloc((size_t)(2 * n * TRS) * sizeof(float));
    double *shift = malloc((size_t)TRS * sizeof(double));
    if (!logits || !shift) {
        free(logits), free(shift);
        return KIT_E_NOMEM;
    }
    float *zeroed = logits + n * TRS;
    m->heads_off = 0; /* all heads on */
    int status = forward_all(m, e->eval, n, logits, &base);
    for (int i = 0; i < h && status == KIT_OK; i++) {
        m->heads_off = 1ULL << i;
        status = forward_all(m, e->eval, n, zeroed, &cut);
        if (status != KIT_OK)
            break;
        importance[i] = 0;
        for (int r = 0; r < R; r++) {
            res->lost[i][r] = base.accuracy[r] - cut.accuracy[r];
            importance[i] += res->lost[i][r];
        }
        mean_ablate(m, e->eval, n, logits, zeroed, shift, acc);
        for (int r = 0; r < R; r++)
            res->lost_mean[i][r] = base.accuracy[r] - acc[r];
    }
    free(logits), free(shift);
    /* the least important first; ties by head number */
    for (int i = 0; i < h; i++)
        res->prune_order[i] = i;
    for (int i = 1; i < h; i++)
        for (int j = i; j > 0; j--) {
            int a = res->prune_order[j - 1], b = res->prune_order[j];
            if (importance[b] < importance[a]) {
                res->prune_order[j - 1] = b;
                res->prune_order[j] = a;
            }
        }
    res->prune[0] = base.mean_accuracy;
    m->heads_off = 0;
    for (int k = 1; k <= h && status == KIT_OK; k++) {
        m->heads_off |= 1ULL << res->prune_order[k - 1];
        status = exp_evaluate(m, e->eval, e->n_abl, &cut);
        res->prune[k] = cut.mean_accuracy;
    }
    m->heads_off = 0;
    return status;
}

int exp_measure(struct exp_model *m, const struct exp_eval_set *e,
                struct exp_result *res)
{
    if (!m || !e || !res)
        return KIT_E_NULL;
    const int T = m->cfg.T, h = m->cfg.n_heads;
    if (h > EXP_MAX_HEADS || T > EXP_MAX_T || T != e->T ||
        m->cfg.n_symbols != e->S)
        return KIT_E_SIZE;
    const int F = m->cfg.d_model + 1, R = m->n_relations, S = m->cfg.n_symbols;
    double *W = malloc((size_t)(R * F * S) * sizeof(double));
    if (!W)
        return KIT_E_NOMEM;
    memset(res->role, 0, sizeof res->role);
    int status = fit_probe(m, e, W);
    if (status == KIT_OK)
        status = measure(m, e, W, res);
    free(W);
    if (status == KIT_OK)
        status = ablate(m, e, res);
    if (status == KIT_OK)
        status = exp_forward(m, e->eval + e->shown * T, NULL, NULL, NULL);
    if (status == KIT_OK)
        for (int i = 0; i < h; i++)
            memcpy(res->maps[i], m->weights + i * T * T,
                   (size_t)(T * T) * sizeof(float));
    return status;
}

/* ---------------------------------------------------------------------
 * One network, start to finish
 * ------------------------------------------------------------------- */

int exp_run_one(const struct exp_config *cfg, const struct exp_eval_set *e,
                struct exp_result *res)
{
    if (!cfg || !e || !res)
        return KIT_E_NULL;
    memset(res, 0, sizeof *res);
    res->task = cfg->task;
    res->n_heads = cfg->n_heads;
    res->n_relations = exp_task_relations(cfg->task);
    res->T = cfg->T;
    res->score_scale = cfg->score_scale;
    res->seed = cfg->seed;
    if (cfg->n_heads > EXP_MAX_HEADS || cfg->T > EXP_MAX_T || cfg->T != e->T ||
        cfg->n_symbols != e->S)
        return res->status = KIT_E_SIZE;

    struct exp_model m;
    int status = exp_model_init(&m, cfg);
    if (status != KIT_OK)
        return res->status = status;
    res->n_params = m.n_params;
    const int steps = cfg->steps;
    float *losses = calloc((size_t)(steps > 0 ? steps : 1), sizeof(float));
    if (!losses)
        status = KIT_E_NOMEM;
    if (status == KIT_OK)
        status = exp_train(&m, losses);
    if (status == KIT_OK) { /* the loss curve, means of `smooth` steps */
        int smooth = (steps + EXP_MAX_POINTS - 1) / EXP_MAX_POINTS;
        res->smooth = smooth < 10 ? 10 : smooth;
        res->n_points = steps / res->smooth;
        for (int p = 0; p < res->n_points; p++) {
            double sum = 0;
            for (int s = 0; s < res->smooth; s++)
                sum += losses[p * res->smooth + s];
            res->loss_curve[p] = (float)(sum / res->smooth);
        }
    }
    if (status == KIT_OK)
        status = exp_measure(&m, e, res);
    free(losses);
    exp_model_free(&m);
    return res->status = status;
}

/* ---------------------------------------------------------------------
 * Many networks, on several processes
 * ------------------------------------------------------------------- */

/* Each network is one job of pool.h, which runs them on worker
 * processes: job k trains and measures network k. */
struct run_many {
    const struct exp_config *cfg;
    const struct exp_eval_set *e;
    void (*progress)(int k, const struct exp_result *r);
};

static int run_job(int k, void *result, void *ctx)
{
    const struct run_many *m = ctx;
    return exp_run_one(&m->cfg[k], m->e, result);
}

static void run_done(int k, int status, const void *result, void *ctx)
{
    (void)status;
    const struct run_many *m = ctx;
    if (m->progress)
        m->progress(k, result);
}

_Static_assert((int)EXP_E_WORKER == (int)POOL_E_WORKER,
               "a dead worker's status");

int exp_run_many(const struct exp_config *cfg, int n,
                 const struct exp_eval_set *e, int workers,
                 struct exp_result *res,
                 void (*progress)(int k, const struct exp_result *r))
{
    if (!cfg || !e || !res)
        return KIT_E_NULL;
    if (n <= 0)
        return KIT_E_SIZE;
    int *status = malloc((size_t)n * sizeof *status);
    if (!status)
        return KIT_E_NOMEM;
    struct run_many m = {cfg, e, progress};
    int first =
        pool_run(n, workers, sizeof *res, res, status, run_job, run_done, &m);
    for (int k = 0; k < n; k++) /* a dead worker left its result empty */
        if (status[k] == POOL_E_WORKER)
            res[k].status = EXP_E_WORKER;
    free(status);
    return first;
}

/* ---------------------------------------------------------------------
 * Summaries shared by the experiments (declared in experiment.h)
 * ------------------------------------------------------------------- */

/* the largest mean weight a head gives relation j's token */
double exp_top_weight(const struct exp_result *r, int j)
{
    double best = 0;
    for (int i = 0; i < r->n_heads; i++)
        best = fmax(best, r->role[i][j]);
    return best;
}
/* the largest accuracy a single head's removal costs relation j */
double exp_owner_loss(const struct exp_result *r, int j)
{
    double best = 0;
    for (int i = 0; i < r->n_heads; i++)
        best = fmax(best, r->lost[i][j]);
    return best;
}
/* 1 when the R relations have R different owners (the head whose
 * removal costs each most) */
double exp_owners_distinct(const struct exp_result *r, int j)
{
    (void)j;
    int owner[EXP_R];
    for (int q = 0; q < r->n_relations; q++) {
        owner[q] = 0;
        for (int i = 1; i < r->n_heads; i++)
            if (r->lost[i][q] > r->lost[owner[q]][q])
                owner[q] = i;
        for (int p = 0; p < q; p++)
            if (owner[p] == owner[q])
                return 0;
    }
    return 1;
}
