/*
 * test_hooks.h: what the tests and grading's worker call in the given
 * code, and the book never teaches. A student never needs this file: the
 * course's API is include/.
 *
 * Three needs. Grading's worker rebuilds a network from the numbers the
 * judge sends (gpt_layout(), exp_model_layout(), gpt_point_acts()),
 * without calling any of the student's code. The tests take many
 * training steps, or many finite-difference losses, in one call
 * (gpt_train_steps(), gpt_loss_probe(), exp_loss_probe()), so that the
 * judge sends each as one request. kit_param_probe() is the loop the two
 * probes share.
 */
#ifndef KIT_TEST_HOOKS_H
#define KIT_TEST_HOOKS_H

#include "experiment.h"
#include "gpt.h"

/* gpt_init() without its checks and its starting weights: m laid out
 * and allocated for cfg, which must be valid (gpt_check_config()), every
 * number 0. It calls none of the student's code. KIT_OK, KIT_E_NULL or
 * KIT_E_NOMEM; on an error m holds nothing to free. */
int gpt_layout(struct gpt_model *m, const struct gpt_config *cfg);

/* m->a pointed into m->act_block for the batch of the last forward pass
 * (m->B, m->T), as gpt_forward() points it; all NULL when m->B is 0. */
void gpt_point_acts(struct gpt_model *m);

/* n training steps, first .. first + n - 1, each gpt_train_step() on the
 * same batch: losses[k] (n) gets step first + k's loss, norms[k] (n, may
 * be NULL) its norm. Stops at the first error and returns it. */
int gpt_train_steps(struct gpt_model *m, const struct gpt_train_config *tc,
                    int first, int n, const int *x, const int *targets, int B,
                    int T_used, float *losses, float *norms);

/* The loss with one parameter moved, for finite differences: for each
 * j < n, params[index[j]] set to value[j] (with g > 0, then
 * gpt_kv_share(m, g, GPT_KV_COPY), so that its copies move with it), a
 * forward pass on x, targets (B, T_used), losses[j] its m->loss; the
 * parameter is put back (and copied again) before the next. Returns the
 * first forward pass's error, KIT_OK when none; KIT_E_SIZE for an index
 * outside 0 .. P-1, before any pass. m holds the last pass. */
int gpt_loss_probe(struct gpt_model *m, const int *x, const int *targets, int B,
                   int T_used, int g, int n, const int *index,
                   const float *value, float *losses);

/* exp_model_init() without its checks and its starting weights: m laid
 * out and allocated for cfg, which must be valid, every number 0. It
 * calls none of the student's code. KIT_OK, KIT_E_NULL or KIT_E_NOMEM. */
int exp_model_layout(struct exp_model *m, const struct exp_config *cfg);

/* The summed loss of exp_forward() on x (T) with one parameter moved,
 * for finite differences: for each j < n, params[index[j]] set to
 * value[j], losses[j] the summed loss, the parameter put back before the
 * next. Returns the first pass's error, KIT_OK when none; KIT_E_SIZE for
 * an index outside 0 .. P-1, before any pass. */
int exp_loss_probe(struct exp_model *m, const int *x, int n, const int *index,
                   const float *value, double *losses);

/* For finite differences: for each j < n, params[index[j]] set to
 * value[j], pass(ctx, j) called, the parameter put back. KIT_E_SIZE for
 * an index outside 0 .. P-1 (nothing run), KIT_E_NULL for a NULL
 * pointer; else the first pass's error, KIT_OK when none. */
int kit_param_probe(float *params, int P, int n, const int *index,
                    const float *value, int (*pass)(void *ctx, int j),
                    void *ctx);

#endif
