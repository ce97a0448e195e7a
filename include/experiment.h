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
 * Two tasks. Sequences of T symbols drawn uniformly from S = 16. At every
 * position t the network must name R tokens, one per relation.
 *
 * The position task (EXP_TASK_POSITION, R = 4): the relations depend on
 * positions only.
 *   EXP_PREV    x[t-1], the previous token
 *   EXP_BACK2   x[t-2], the token two back
 *   EXP_FIRST   x[0],   the first token
 *   EXP_SECOND  x[1],   the second token
 *
 * The content task (EXP_TASK_CONTENT, R = 2): one relation by position,
 * one by what the symbols are. The S symbols fall into n_classes classes
 * of S / n_classes consecutive symbols (A-D, E-H, ... for 4 classes).
 *   EXP_PREV        x[t-1], the previous token
 *   EXP_SAME_CLASS  the most recent token x[j] before the previous one,
 *                   j < t-1, of the same class as x[t]
 * When x[t-1] is of x[t]'s class, the two tokens to be named are of the
 * same class, and their symbols alone do not say which is which.
 *
 * A relation whose source is not in 0..t (x[t-2] at t < 2, x[1] at t = 0,
 * no earlier token of the class) is left out of the loss and of the
 * accuracy.
 *
 * The network, for one sequence x (T):
 *   X      = E_tok[x] + E_pos               X (T, d_model)
 *   A      = layer(X)         (causal)      A (T, d_model)
 *   H      = X + A            (residual)    H (T, d_model)
 *   logits = H W_r + b_r                    logits (T, R*S)
 *   loss   = mean over valid (t, r) of cross-entropy(logits[t][r], target)
 * Column block r*S .. r*S+S-1 of logits scores the S symbols for relation
 * r. The layer is chapter 3's mha_forward() unless cfg.layer says
 * otherwise (chapter 6 plugs in grouped-query attention there).
 *
 * Depth, the control of chapter 5 (cfg.n_layers = L > 1, the default
 * layer only): L multi-head layers, each with its own W_q, W_k, W_v, W_o
 * and its own residual,
 *   H_0 = X,  H_l = H_{l-1} + MultiHead_l(H_{l-1}),  l = 1 .. L,
 * and the readout reads H_L. In the formulas above, A is then the sum of
 * what the L layers add, H_L - X. Each of the four attention matrices
 * holds the L layers' blocks one after the other, (L, d_model, d_model).
 * A stack takes no score_scale other than 1 and no heads_off
 * (KIT_E_SIZE): the ablations are of one layer's heads.
 *
 * Two switches change the layer without changing its parameters:
 *   cfg.score_scale  W_q enters the layer multiplied by this number, so
 *                    the scores are score_scale * q.k / sqrt(d_head):
 *                    with 1 head and score_scale 2, the scale of 4 heads
 *                    (1/sqrt(8) at d_model 32). 1 = the layer's own.
 *   m->heads_off     bit i set: head i is knocked out, its columns of the
 *                    concatenation zeroed before W_o. Head i's output
 *                    meets only rows i*d_head .. of W_o, so the model
 *                    zeroes those rows of the W_o it hands the layer.
 *
 * Dimension letters:
 *   T = tokens per sequence, S = symbols, R = relations (4 or 2),
 *   d_model = embedding width, h = heads, N = sequences in a batch,
 *   P = number of trainable parameters.
 */
#ifndef EXPERIMENT_H
#define EXPERIMENT_H

#include "mha.h"
#include "rng.h"

/* The relations. EXP_R is the most a task has (the position task's 4);
 * the content task uses relation 0 (EXP_PREV) and 1 (EXP_SAME_CLASS). */
enum exp_relation { EXP_PREV, EXP_BACK2, EXP_FIRST, EXP_SECOND, EXP_R };
enum { EXP_SAME_CLASS = 1 };

enum exp_task { EXP_TASK_POSITION, EXP_TASK_CONTENT };

struct exp_config;

/* The attention layer of the network. NULL in exp_config means chapter
 * 3's multi-head layer (mha_forward, mha_backward). Another layer (chapter
 * 6's grouped-query attention, say) fills in these four calls. Its
 * weights are the four matrices of struct mha_weights, with W_q and W_o
 * (d_model, d_model) and W_k, W_v (d_model, kv_width(cfg)). forward and
 * backward have mha_forward's and mha_backward's contracts (mha.h,
 * grad.h), weights (n_heads, T, T). */
struct exp_layer {
    const char *name;
    int (*check)(const struct exp_config *cfg); /* KIT_OK or an error */
    int (*kv_width)(const struct exp_config *cfg);
    int (*forward)(const struct exp_config *cfg, const struct mha_weights *w,
                   const float *X, float *out, float *weights, int T);
    int (*backward)(const struct exp_config *cfg, const struct mha_weights *w,
                    const float *X, const float *d_out, float *d_X,
                    struct mha_weights *d_w, int T);
};

/* Chapter 6's grouped-query attention as the network's layer
 * (given/exp_gqa.c): n_heads query heads share cfg.n_kv_heads K/V
 * heads (0 = n_heads), query head i reading K/V head i / (n_heads /
 * n_kv_heads). W_k and W_v are (d_model, n_kv_heads * d_head). Built on
 * mha_forward() and mha_backward() by copying each K/V head's columns
 * once per query head of its group, and adding the copies' gradients
 * back. With n_kv_heads == n_heads it is the multi-head layer. check()
 * adds KIT_E_HEADS (n_kv_heads does not divide n_heads) and KIT_E_SIZE
 * (n_kv_heads < 0) to mha_check_config()'s errors. */
extern const struct exp_layer exp_gqa_layer;

/* Everything that defines one run. Two runs with the same config give
 * bit-identical numbers. */
struct exp_config {
    int task;                /* EXP_TASK_POSITION or EXP_TASK_CONTENT */
    int n_symbols;           /* S, symbols in the alphabet */
    int n_classes;           /* content task: classes, divides S */
    int T;                   /* tokens per sequence, at least 3 */
    int d_model;             /* embedding width */
    int n_heads;             /* h, must divide d_model */
    int n_kv_heads;          /* for a layer that shares K/V heads; 0 = h */
    int n_layers;            /* L attention layers stacked, each with its
                                own residual (below); 0 or 1: one */
    float score_scale;       /* W_q enters the layer times this; 1 = as is */
    int batch;               /* N, sequences per training step */
    int steps;               /* training steps */
    float lr;                /* Adam's learning rate */
    float lr_final;          /* the rate decays linearly to this by the end */
    float emb_init;          /* E_tok, E_pos start uniform in +-emb_init */
    float qk_init;           /* W_q, W_k uniform in +-qk_init / sqrt(d_model) */
    float vo_init;           /* W_v, W_o uniform in +-vo_init / sqrt(d_model) */
    unsigned long long seed; /* the weights and the training data */
    const struct exp_layer *layer; /* NULL: chapter 3's multi-head layer */
};

/* The network, its gradients and Adam's state. Every trainable number
 * lives in one block, params (P); grads, adam_m and adam_v have the same
 * layout, so Adam is one loop over P numbers. */
struct exp_model {
    struct exp_config cfg;
    struct mha_config attn_cfg;   /* {d_model, n_heads, causal = 1} */
    int n_relations;              /* R: 4 or 2, from cfg.task */
    int n_params;                 /* P */
    float *params;                /* (P) every trainable number */
    float *grads;                 /* (P) d loss / d params */
    float *adam_m;                /* (P) Adam's running mean of grads */
    float *adam_v;                /* (P) Adam's running mean of grads^2 */
    int adam_t;                   /* Adam steps taken */
    unsigned long long heads_off; /* bit i: head i knocked out (ablation) */
    /* views into params */
    float *E_tok;            /* (S, d_model) token embeddings */
    float *E_pos;            /* (T, d_model) position embeddings */
    struct mha_weights attn; /* W_q, W_o (d_model, d_model), W_k, W_v
                                (d_model, kv_width); (L, ...) for L
                                stacked layers */
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
    float *layer_in;  /* (L, T, d_model) a stack's layers' inputs, and two
                         rows of gradients (2, T, d_model); NULL for one
                         layer */
    /* the weights the layer saw: attn, or copies changed by score_scale
     * and heads_off; and their gradients */
    struct mha_weights used, d_used;
    float *W_q_used, *W_o_used, *d_W_q_used, *d_W_o_used; /* (d, d) each */
    int n_scratch; /* floats of the one block that holds the scratch, from
                      X to its end */
};

/* What a run of exp_evaluate() counts. */
struct exp_score {
    double loss;            /* mean cross-entropy over valid (t, r) */
    double accuracy[EXP_R]; /* per relation, a fraction in 0..1 */
    double mean_accuracy;   /* mean of the R accuracies */
};

/* The configuration the book's run starts from, for n_heads heads, on
 * the position task. The run chooses lr and vo_init for each head count
 * from a grid; everything else is the same for every network. */
struct exp_config exp_default_config(int n_heads);

/* The same for the content task. */
struct exp_config exp_content_config(int n_heads);

/* R for a task: 4 (position) or 2 (content); 0 for an unknown task. */
int exp_task_relations(int task);

/* The position relation r reads at position t: t-1, t-2, 0 or 1; or -1
 * when that position is not in 0..t (the relation is left out there). */
int exp_source(int r, int t);

/* The class of symbol s: s / (S / n_classes). */
int exp_class(const struct exp_config *cfg, int s);

/* The position relation r of cfg's task reads at position t of the
 * sequence x (T), or -1 when there is none (left out). For the position
 * task exp_source(r, t); for the content task t-1 (r = EXP_PREV) or the
 * most recent j < t-1 with exp_class(x[j]) == exp_class(x[t]). */
int exp_source_in(const struct exp_config *cfg, const int *x, int r, int t);

/* A short name for relation r of a task: "previous", "two back",
 * "first", "second"; "previous", "same class". "?" when out of range. */
const char *exp_relation_name(int task, int r);

/* Fill x (N, T) with symbols uniform in 0..S-1 from the generator r. */
void exp_make_batch(struct rng *r, int *x, int N, int T, int S);

/* Check cfg, allocate m and give it its starting weights from cfg->seed.
 * The starting weights do not depend on n_heads: the runs being compared
 * start from the same numbers. Calls the student's mha_check_config()
 * (or the layer's check). Returns KIT_OK, KIT_E_NULL, KIT_E_SIZE,
 * KIT_E_HEADS, KIT_E_NOMEM or the stub's KIT_E_TODO; on error m holds
 * nothing to free. */
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

/* The score of counts that exp_forward() added up over the relations
 * (R of them): each relation's accuracy correct/counted (0 when none was
 * counted), their mean, and the loss per counted prediction. */
void exp_score_counts(struct exp_score *score, int R, const long *correct,
                      const long *counted, double loss_sum);

/* Loss and accuracy on the fixed sequences x (N, T), no training, with
 * the heads in m->heads_off knocked out. */
int exp_evaluate(struct exp_model *m, const int *x, int N,
                 struct exp_score *score);

/* ---------------------------------------------------------------------
 * Measuring trained networks (given/exp_measure.c), and training
 * many of them on several processes. Chapter 5's program and chapter 6's
 * experiment are built on these.
 * ------------------------------------------------------------------- */

#define EXP_MAX_HEADS  16  /* the most heads exp_measure() reports on */
#define EXP_MAX_T      16  /* the longest sequence whose maps it keeps */
#define EXP_MAX_POINTS 200 /* points of the smoothed loss curve */

/* The sequences a measurement uses, each set from its own seed, the same
 * for every network compared. */
struct exp_eval_set {
    int T, S;
    int n_eval;  /* sequences the accuracy is measured on */
    int n_probe; /* sequences the linear probe is fitted on */
    int n_abl;   /* sequences each ablation is measured on (the first
                    n_abl of the evaluation set) */
    int *eval;   /* (n_eval, T) */
    int *probe;  /* (n_probe, T) */
    int shown;   /* the evaluation sequence whose maps are kept: the first
                    whose symbols are all different */
};

/* Draw the sets for sequences of T symbols from S, from seed. Returns
 * KIT_OK, KIT_E_SIZE or KIT_E_NOMEM. */
int exp_eval_set_init(struct exp_eval_set *e, int T, int S, int n_eval,
                      int n_probe, int n_abl, unsigned long long seed);
void exp_eval_set_free(struct exp_eval_set *e);

/* Everything measured on one trained network. Plain numbers, no
 * pointers: worker processes hand it back through shared memory. */
struct exp_result {
    int status; /* KIT_OK, or the error that stopped the run */
    int task, n_heads, n_relations, n_params, T;
    float score_scale;
    unsigned long long seed;
    struct exp_score score;            /* on the evaluation set */
    struct exp_score late;             /* the same, at positions t >= 4 only */
    double role[EXP_MAX_HEADS][EXP_R]; /* head i's mean weight on the
                                          token relation r reads, t >= 4 */
    double sharp;                      /* a head's largest weight in a row, mean
                                  over heads, rows t >= 4, sequences */
    /* the probe: a least-squares linear readout fitted to the layer's
     * output A_t alone (no residual) on the probe set; its accuracy on
     * the evaluation set, t >= 4 */
    double probe[EXP_R];
    /* when the token relation r reads is the heaviest of the R tokens in
     * head 0's row (t >= 4): how often, and the accuracy on r then and
     * otherwise */
    double heaviest_share[EXP_R], acc_heaviest[EXP_R], acc_other[EXP_R];
    /* ablation, on the first n_abl evaluation sequences: lost[i][r] is
     * relation r's accuracy with every head minus with head i knocked
     * out; prune[k] the mean accuracy with the k least important heads
     * (by the sum of lost[i][.]) knocked out, prune_order[k] the k-th
     * head removed */
    double lost[EXP_MAX_HEADS][EXP_R];
    /* the same with head i's output mean-ablated instead of zeroed:
     * replaced, at each position t, by its mean at t over the n_abl
     * sequences (so the readout's input keeps its average) */
    double lost_mean[EXP_MAX_HEADS][EXP_R];
    /* content task, at the distinct positions: the accuracy per relation
     * where x[t-1] is of another class than x[t] (cue[r][1]: the class
     * tells the two tokens apart) and where it is of the same (cue[r][0]),
     * and the share of positions of the second kind */
    double cue[EXP_R][2], same_class_share;
    double prune[EXP_MAX_HEADS + 1];
    int prune_order[EXP_MAX_HEADS];
    int n_points, smooth;             /* the loss curve: n_points means of */
    float loss_curve[EXP_MAX_POINTS]; /* `smooth` steps each */
    float maps[EXP_MAX_HEADS][EXP_MAX_T * EXP_MAX_T]; /* head i's weights
                                          (T, T) on the shown sequence */
};

/* Measure the network m as it is (trained, or built by hand) on e: every
 * field of *res from score to maps; the caller fills in the rest.
 * Returns KIT_OK, KIT_E_NULL, KIT_E_SIZE (more than EXP_MAX_HEADS heads,
 * T above EXP_MAX_T or not e's), KIT_E_NOMEM or an error of the code it
 * runs. Leaves m->heads_off 0. */
int exp_measure(struct exp_model *m, const struct exp_eval_set *e,
                struct exp_result *res);

/* Train one network from cfg and measure it on e. Everything goes into
 * *res, its status too; returns res->status. KIT_E_SIZE when cfg has more
 * than EXP_MAX_HEADS heads or T does not match e. */
int exp_run_one(const struct exp_config *cfg, const struct exp_eval_set *e,
                struct exp_result *res);

/* exp_run_one() for each of the n configurations, on `workers` worker
 * processes (pool.h), results in order into res (n). The numbers do not
 * depend on `workers`: each network is trained by one process from its
 * own config. workers <= 1 runs them here, in order. If progress is not
 * NULL, it is called in the calling process as each network finishes.
 * Returns KIT_OK, KIT_E_NOMEM, or the first failing network's status. A
 * network whose worker died (a crash in the code it runs) gets status
 * EXP_E_WORKER. */
enum { EXP_E_WORKER = -50 };
int exp_run_many(const struct exp_config *cfg, int n,
                 const struct exp_eval_set *e, int workers,
                 struct exp_result *res,
                 void (*progress)(int k, const struct exp_result *r));

/* Summaries of one trained network's ablation and head weights, shared by
 * chapter 5's and chapter 6's experiments (j: a relation).
 *   exp_top_weight      the largest mean weight a head gives relation j's
 *                       token
 *   exp_owner_loss      the largest accuracy on relation j that removing a
 *                       single head costs
 *   exp_owners_distinct 1 when the relations have as many different owners
 *                       (the head whose removal costs each most) as there
 *                       are relations, else 0 (j is ignored) */
double exp_top_weight(const struct exp_result *r, int j);
double exp_owner_loss(const struct exp_result *r, int j);
double exp_owners_distinct(const struct exp_result *r, int j);

#endif
