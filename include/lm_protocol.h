/*
 * lm_protocol.h: chapter 8, the protocol of the run on real English: how
 * one network is trained on the corpus's training split, how it is
 * scored on held-out windows, and how its learning rate is chosen from a
 * ladder of rates. Given code (given/lm_protocol.c); the experiment
 * (tools/runs/lm/) calls it for every configuration and seed, the same
 * way for each, so that networks that differ in their heads differ in
 * nothing else.
 *
 * The protocol, as the chapter tells it:
 *   1. every configuration is trained on seed 1 at every rate of a grid,
 *      on the same token budget and the same batches (lm_train());
 *   2. while its best rate (lm_best_rate(): the lowest validation loss)
 *      is the lowest or the highest it has tried, it is trained at the
 *      next rate of the ladder beyond it (lm_next_rate());
 *   3. the chosen rate is trained on the other seeds, and every final
 *      network is scored once on the test windows (lm_eval_loss()).
 *
 * Dimension letters as gpt.h: B = sequences per batch, T = tokens per
 * sequence, n = windows of an evaluation set, h = query heads, g = K/V
 * heads (g divides h; g = h: every head its own). Windows are flat,
 * row-major (n, T): x the tokens, y the same one ahead. All arrays are
 * caller-allocated (see kit.h).
 */
#ifndef LM_PROTOCOL_H
#define LM_PROTOCOL_H

#include "corpus.h"
#include "gpt.h"
#include "kit.h"
#include "rng.h"

/* The seed of the batches of seed `seed`: every configuration draws the
 * same batches for one seed, so that networks of one seed differ only in
 * their heads and their rate. */
void lm_batches_seed(struct rng *r, unsigned long long seed);

/* B training windows drawn with r from the training split of d, each at
 * a uniformly drawn start: x, y (B, T), y one token ahead of x. */
void lm_train_batch(const struct corpus_data *d, struct rng *r, int B, int T,
                    int *x, int *y);

/* One step of training on x, y (B, T) with g K/V heads:
 * gpt_train_step() with g = h; with g < h, the same steps with
 * gpt_kv_share() between them (the gradients of each group's copies of
 * K and V gathered into one, then copied back after the update), so
 * that the group's heads keep reading one K and one V. *loss: the
 * batch's loss before the step. Returns KIT_OK or an error of the
 * model's passes. */
int lm_train_step(struct gpt_model *m, const struct gpt_train_config *tc,
                  int step, const int *x, const int *y, int B, int T, int g,
                  float *loss);

/* The mean loss per token of m over n windows x, y (n, T), in forward
 * passes of at most m->cfg.B windows (without the ablation hook: m's
 * after_attention is unset first). Returns KIT_OK or an error of the
 * forward pass. */
int lm_eval_loss(struct gpt_model *m, const int *x, const int *y, int n, int T,
                 float *loss);

/* One network's training (lm_train()). */
struct lm_plan {
    int B, T;     /* sequences per batch, tokens per sequence           */
    int steps;    /* the schedule's length (its warm-up and decay)      */
    int last;     /* the steps taken: steps, or fewer to stop early     */
    int points;   /* P: validation points after the start               */
    float lr;     /* the peak rate; the cosine decays to lr / 10        */
    int kv_heads; /* g: K/V heads (g = h: every head its own)           */
    unsigned long long seed;  /* the batches' (lm_batches_seed())        */
    const int *val_x, *val_y; /* the validation windows (n_val, T)      */
    int n_val;
};

/* Train m from its weights at p's rate on p's seed's batches, with
 * gpt_default_train(p->steps)'s schedule at that rate, for p->last
 * steps. The validation loss (lm_eval_loss()) at the start and at P
 * even steps: point q = 1 .. P after step steps * q / P (the points
 * past p->last are not reached). val_curve, curve_tokens (P + 1): each
 * point's loss and the tokens seen by then; *n_points: the points
 * reached; *train_s: the wall time of the steps, in seconds (the
 * evaluations included, not the first). Returns KIT_OK, KIT_E_NOMEM or
 * an error of the model's passes. */
int lm_train(struct gpt_model *m, const struct corpus_data *d,
             const struct lm_plan *p, float *val_curve, int *curve_tokens,
             int *n_points, double *train_s);

/* The rate of a ladder of n_lr rates (lowest first) with the lowest
 * validation loss among those trained (trained[i] != 0), the lower rate
 * on a tie; val_loss (n_lr). *lo, *hi: the lowest and the highest rate
 * trained. Returns -1 (and *lo = *hi = -1) when none was trained. */
int lm_best_rate(const float *val_loss, const int *trained, int n_lr, int *lo,
                 int *hi);

/* The rate to try next after lm_best_rate() gave best, lo and hi: the
 * one below lo when best is lo, the one above hi when best is hi, or -1
 * when best has a rate tried on each side or is the ladder's end. */
int lm_next_rate(int best, int lo, int hi, int n_lr);

#endif
