/*
 * experiment.h: chapter 5, the experiment. One head against many.
 *
 * A small attention-only network, trained in C with Adam, on a task that
 * needs several tokens read at once. This is given code, not an
 * exercise: it is built on the student's chapters 1 to 4 (matmul,
 * mha_forward, mha_backward, matmul_backward), so it runs only when those
 * are written. On the starter stubs every function here returns the
 * stub's KIT_E_TODO.
 *
 * The task. A sequence of T symbols drawn uniformly from S = 16. At every
 * position t the network must name four tokens, one per relation:
 *   EXP_PREV    x[t-1], the previous token
 *   EXP_BACK2   x[t-2], the token two back
 *   EXP_FIRST   x[0],   the first token
 *   EXP_SECOND  x[1],   the second token
 * A relation whose source position is not in 0..t (x[t-2] at t < 2, x[1]
 * at t = 0) is left out of the loss and of the accuracy.
 *
 * The network, for one sequence x (T):
 *   X      = E_tok[x] + E_pos               X (T, d_model)
 *   A      = mha_forward(X)   (causal)      A (T, d_model)
 *   H      = X + A            (residual)    H (T, d_model)
 *   logits = H W_r + b_r                    logits (T, R*S)
 *   loss   = mean over valid (t, r) of cross-entropy(logits[t][r], target)
 * Column block r*S .. r*S+S-1 of logits scores the S symbols for relation
 * r.
 *
 * Dimension letters:
 *   T = tokens per sequence, S = symbols, R = relations (4),
 *   d_model = embedding width, h = heads, N = sequences in a batch,
 *   P = number of trainable parameters.
 */
#ifndef EXPERIMENT_H
#define EXPERIMENT_H

#include "mha.h"
#include "rng.h"

enum exp_relation { EXP_PREV, EXP_BACK2, EXP_FIRST, EXP_SECOND, EXP_R };

/* Everything that defines one run. Two runs with the same config give
 * bit-identical numbers. */
struct exp_config {
    int n_symbols;           /* S, symbols in the alphabet */
    int T;                   /* tokens per sequence, at least 3 */
    int d_model;             /* embedding width */
    int n_heads;             /* h, must divide d_model */
    int batch;               /* N, sequences per training step */
    int steps;               /* training steps */
    float lr;                /* Adam's learning rate */
    float lr_final;          /* the rate decays linearly to this by the end */
    float emb_init;          /* E_tok, E_pos start uniform in +-emb_init */
    float qk_init;           /* W_q, W_k uniform in +-qk_init / sqrt(d_model) */
    float vo_init;           /* W_v, W_o uniform in +-vo_init / sqrt(d_model) */
    unsigned long long seed; /* the weights and the training data */
};

/* The network, its gradients and Adam's state. Every trainable number
 * lives in one block, params (P); grads, adam_m and adam_v have the same
 * layout, so Adam is one loop over P numbers. */
struct exp_model {
    struct exp_config cfg;
    struct mha_config attn_cfg; /* {d_model, n_heads, causal = 1} */
    int n_params;               /* P */
    float *params;              /* (P) every trainable number */
    float *grads;               /* (P) d loss / d params */
    float *adam_m;              /* (P) Adam's running mean of grads */
    float *adam_v;              /* (P) Adam's running mean of grads^2 */
    int adam_t;                 /* Adam steps taken */
    /* views into params */
    float *E_tok;            /* (S, d_model) token embeddings */
    float *E_pos;            /* (T, d_model) position embeddings */
    struct mha_weights attn; /* four (d_model, d_model) matrices */
    float *W_r;              /* (d_model, R*S) readout */
    float *b_r;              /* (R*S) readout bias */
    /* the same views into grads */
    float *d_E_tok, *d_E_pos, *d_W_r, *d_b_r;
    struct mha_weights d_attn;
    /* scratch for one sequence */
    float *X, *A, *H; /* (T, d_model) each */
    float *logits;    /* (T, R*S) */
    float *d_logits;  /* (T, R*S) */
    float *d_H, *d_X; /* (T, d_model) each */
    float *weights;   /* (h, T, T) the heads' weights */
};

/* What a run of exp_evaluate() counts. */
struct exp_score {
    double loss;            /* mean cross-entropy over valid (t, r) */
    double accuracy[EXP_R]; /* per relation, a fraction in 0..1 */
    double mean_accuracy;   /* mean of the four accuracies */
};

/* The configuration the book's run uses, for n_heads heads. Only the
 * head count differs between the runs it compares. */
struct exp_config exp_default_config(int n_heads);

/* The position relation r reads at position t: t-1, t-2, 0 or 1; or -1
 * when that position is not in 0..t (the relation is left out there). */
int exp_source(int r, int t);

/* A short name for relation r: "previous", "two back", "first",
 * "second". */
const char *exp_relation_name(int r);

/* Fill x (N, T) with symbols uniform in 0..S-1 from the generator r. */
void exp_make_batch(struct rng *r, int *x, int N, int T, int S);

/* Check cfg, allocate m and give it its starting weights from cfg->seed.
 * The starting weights do not depend on n_heads: the runs being compared
 * start from the same numbers. Calls the student's mha_check_config().
 * Returns KIT_OK, KIT_E_NULL, KIT_E_SIZE, KIT_E_HEADS, KIT_E_NOMEM or the
 * stub's KIT_E_TODO; on error m holds nothing to free. */
int exp_model_init(struct exp_model *m, const struct exp_config *cfg);

/* Free what exp_model_init() allocated. */
void exp_model_free(struct exp_model *m);

/* Forward pass on one sequence x (T). Leaves X, A, H, logits and the
 * heads' weights (h, T, T) in m's scratch. Adds to *loss_sum the
 * cross-entropy summed over the valid (t, r), and to correct (R) and
 * counted (R) how many argmax predictions were right, out of how many.
 * Any of loss_sum, correct, counted may be NULL. */
int exp_forward(struct exp_model *m, const int *x, double *loss_sum,
                long *correct, long *counted);

/* Backward pass for the sequence exp_forward() just saw: adds
 * scale * d(summed loss)/d(params) into m->grads. */
int exp_backward(struct exp_model *m, const int *x, float scale);

/* One Adam step on every parameter, with learning rate lr:
 *   m = b1 m + (1-b1) g,  v = b2 v + (1-b2) g^2,
 *   p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps). */
void exp_adam_step(struct exp_model *m, float lr);

/* One training step on the batch x (N, T): the mean loss over every valid
 * (sequence, t, r), its gradient, and one Adam step. *loss gets the mean
 * loss before the step. */
int exp_train_step(struct exp_model *m, const int *x, int N, float lr,
                   float *loss);

/* Train for cfg.steps steps on fresh random batches (from cfg.seed).
 * losses (steps) receives each step's mean loss; it may be NULL. */
int exp_train(struct exp_model *m, float *losses);

/* Loss and accuracy on the fixed sequences x (N, T), no training. */
int exp_evaluate(struct exp_model *m, const int *x, int N,
                 struct exp_score *score);

#endif
