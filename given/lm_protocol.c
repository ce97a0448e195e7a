/*
 * lm_protocol.c: chapter 8's protocol (lm_protocol.h): a network trained
 * on the corpus's batches with K/V heads shared or not, scored on
 * held-out windows, and its learning rate chosen from a ladder. Not an
 * exercise: the model's passes and the optimiser are the student's and
 * the given model's (gpt.h); this is the order they are called in.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm_protocol.h"

#include "corpus.h"
#include "gpt.h"
#include "kit.h"
#include "rng.h"

#include <stdlib.h>
#include <time.h>

void lm_batches_seed(struct rng *r, unsigned long long seed)
{
    rng_seed(r, seed * 7919ULL + 17);
}

void lm_train_batch(const struct corpus_data *d, struct rng *r, int B, int T,
                    int *x, int *y)
{
    const int span = d->split_n[SPLIT_TRAIN] - T - 1;
    for (int b = 0; b < B; b++) {
        const long at = d->split_first[SPLIT_TRAIN] + rng_int(r, span);
        for (int t = 0; t < T; t++) {
            x[b * T + t] = d->token[at + t];
            y[b * T + t] = d->token[at + t + 1];
        }
    }
}

/* @listing lm_kv_share */
/* gpt_train_step() with g K/V heads: the same steps, with gpt_kv_share()
 * between them. With g = h it is gpt_train_step() itself. */
int lm_train_step(struct gpt_model *m, const struct gpt_train_config *tc,
                  int step, const int *x, const int *y, int B, int T, int g,
                  float *loss)
{
    if (g == m->cfg.n_heads)
        return gpt_train_step(m, tc, step, x, y, B, T, loss, NULL);
    int rc = gpt_forward(m, x, y, B, T);
    if (rc != KIT_OK)
        return rc;
    *loss = m->loss;
    gpt_zero_grad(m);
    if ((rc = gpt_backward(m)) != KIT_OK)
        return rc;
    if ((rc = gpt_kv_share(m, g, GPT_KV_GATHER)) != KIT_OK)
        return rc;
    gpt_clip_grads(m, tc->clip);
    gpt_adamw_step(m, tc, gpt_lr_at(tc, step));
    return gpt_kv_share(m, g, GPT_KV_COPY);
}
/* @end lm_kv_share */

/* @listing lm_eval_loss */
int lm_eval_loss(struct gpt_model *m, const int *x, const int *y, int n, int T,
                 float *loss)
{
    double sum = 0;
    m->after_attention = NULL;
    for (int s = 0; s < n; s += m->cfg.B) {
        const int B = n - s < m->cfg.B ? n - s : m->cfg.B;
        const size_t at = (size_t)s * T;
        int rc = gpt_forward(m, x + at, y + at, B, T);
        if (rc != KIT_OK)
            return rc;
        sum += (double)m->loss * B;
    }
    *loss = (float)(sum / n);
    return KIT_OK;
}
/* @end lm_eval_loss */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* @listing lm_train */
int lm_train(struct gpt_model *m, const struct corpus_data *d,
             const struct lm_plan *p, float *val_curve, int *curve_tokens,
             int *n_points, double *train_s)
{
    const int steps = p->steps, P = p->points, B = p->B, T = p->T;
    struct gpt_train_config tc = gpt_default_train(steps);
    tc.lr = p->lr, tc.lr_min = p->lr / 10;
    struct rng rng;
    lm_batches_seed(&rng, p->seed); /* the batches: the seed's own */
    int *x = malloc((size_t)B * T * sizeof *x);
    int *y = malloc((size_t)B * T * sizeof *y);
    int rc = x && y ? KIT_OK : KIT_E_NOMEM;
    if (rc == KIT_OK)
        rc = lm_eval_loss(m, p->val_x, p->val_y, p->n_val, T, &val_curve[0]);
    curve_tokens[0] = 0;
    *n_points = 1;
    const double t0 = now_s();
    for (int step = 0; step < p->last && rc == KIT_OK; step++) {
        float loss;
        lm_train_batch(d, &rng, B, T, x, y);
        rc = lm_train_step(m, &tc, step, x, y, B, T, p->kv_heads, &loss);
        const int q = *n_points; /* the next point, after step steps*q/P */
        if (rc == KIT_OK && q <= P && step + 1 == (int)((long)steps * q / P)) {
            rc =
                lm_eval_loss(m, p->val_x, p->val_y, p->n_val, T, &val_curve[q]);
            curve_tokens[q] = (step + 1) * B * T;
            (*n_points)++;
        }
    }
    *train_s = now_s() - t0;
    free(x), free(y);
    return rc;
}
/* @end lm_train */

/* @listing lm_best_rate */
int lm_best_rate(const float *val_loss, const int *trained, int n_lr, int *lo,
                 int *hi)
{
    int b = -1;
    *lo = *hi = -1;
    for (int i = 0; i < n_lr; i++) {
        if (!trained[i])
            continue;
        if (*lo < 0)
            *lo = i;
        *hi = i;
        if (b < 0 || val_loss[i] < val_loss[b])
            b = i;
    }
    return b;
}

int lm_next_rate(int best, int lo, int hi, int n_lr)
{
    return best == lo && lo > 0          ? lo - 1
           : best == hi && hi < n_lr - 1 ? hi + 1
                                         : -1;
}
/* @end lm_best_rate */
