/*
 * gpt.h: chapter 8, a small GPT-shaped language model, trained in C.
 *
 * The model reads a batch of B sequences of T token ids and, at every
 * position, scores the V tokens that could come next. It is built on the
 * student's own attention: chapter 7's mha_forward_flash() (causal) and
 * chapter 4's mha_backward(), with chapter 7's matmul_fast() for the
 * plain products. Everything in this header is
 * given code (given/gpt.c) except LayerNorm's two passes, the chapter's
 * exercises (at the end). On the starter stubs every function that runs
 * the model passes on their KIT_E_TODO.
 *
 * The network, for tokens x (B, T):
 *   X_0    = W_te[x] + W_pe                       (B, T, C)
 *   for each block l = 0 .. L-1:
 *     X   += MultiHead(LN1(X))       causal, per sequence, no biases
 *     X   += GELU(LN2(X) W_fc + b_fc) W_proj + b_proj      MLP, width 4C
 *   logits = LN_f(X) W_te^T                       (B, T, V), tied output
 *   loss   = mean over the B*T positions of -log softmax(logits)[target]
 * LayerNorm: y = (x - mean) / sqrt(var + 1e-5) * g + b, per row of C.
 * GELU: the tanh approximation GPT-2 uses.
 *
 * Dimension letters used in every shape comment:
 *   B = sequences in a batch, T = tokens per sequence (the context),
 *   C = d_model, the width of the residual stream, F = 4C, the MLP's
 *   width, V = vocabulary size, L = blocks (layers), h = heads,
 *   N = rows (positions) of a row-wise operation, usually B*T,
 *   P = trainable parameters.
 *
 * All arrays are flat, row-major and caller-allocated (see kit.h),
 * except the model's own blocks, which gpt_init() allocates. Backward
 * passes ADD into their d_ buffers, as in grad.h.
 */
#ifndef GPT_H
#define GPT_H

#include "kit.h"
#include "mha.h"
#include "rng.h"

#include <stddef.h>

/* ---------------------------------------------------------------------
 * The configuration
 * ------------------------------------------------------------------- */

/* Every size of one model. */
struct gpt_config {
    int V;       /* vocabulary size, > 0                              */
    int T;       /* context: the longest sequence, > 0                */
    int C;       /* d_model, > 0                                      */
    int L;       /* blocks, > 0                                       */
    int n_heads; /* h, > 0, divides C                                 */
    int B;       /* the most sequences one batch holds (activations)  */
};

/* The chapter's sizes, the ones the book counts (tools/runs/plotdata/ch8.c)
 * and make lm-train starts from: V 8192, T 64, C 64, L 2, 4 heads, B 16. */
struct gpt_config gpt_default_config(void);

/* KIT_OK when cfg describes a model that can exist; otherwise
 * KIT_E_NULL, KIT_E_SIZE (a size <= 0, or so large that a product of two
 * sizes passes INT_MAX) or KIT_E_HEADS (n_heads does not divide C). When
 * why is not NULL, it receives one line naming the problem ("n_heads = 3
 * does not divide d_model C = 64"), or "" when there is none. */
int gpt_check_config(const struct gpt_config *cfg, char *why, size_t size);

/* ---------------------------------------------------------------------
 * The parameters: one block, laid out from one table
 * ------------------------------------------------------------------- */

/* The parameter tensors, in the order of the block. The per-block
 * tensors hold all L blocks, one after the other: W_q is (L, C, C), and
 * block l's W_q starts at W_q + l*C*C. */
enum gpt_tensor {
    GPT_WTE,    /* (V, C)    token embedding, also the output     */
    GPT_WPE,    /* (T, C)    position embedding                   */
    GPT_LN1_G,  /* (L, C)    LN1's gain                           */
    GPT_LN1_B,  /* (L, C)    LN1's bias                           */
    GPT_W_Q,    /* (L, C, C) attention, as in mha.h               */
    GPT_W_K,    /* (L, C, C)                                      */
    GPT_W_V,    /* (L, C, C)                                      */
    GPT_W_O,    /* (L, C, C)                                      */
    GPT_LN2_G,  /* (L, C)    LN2's gain                           */
    GPT_LN2_B,  /* (L, C)    LN2's bias                           */
    GPT_W_FC,   /* (L, C, F) the MLP's first layer                */
    GPT_B_FC,   /* (L, F)                                         */
    GPT_W_PROJ, /* (L, F, C) the MLP's second layer               */
    GPT_B_PROJ, /* (L, C)                                         */
    GPT_LNF_G,  /* (C)       the final LayerNorm's gain           */
    GPT_LNF_B,  /* (C)                                            */
    GPT_N_TENSORS
};

/* The name of tensor k ("W_q"), "?" when out of range. */
const char *gpt_tensor_name(int k);

/* How many floats tensor k holds for cfg (0 when k is out of range), and
 * whether AdamW's weight decay applies to it (the matrices and the
 * embeddings, not the biases and gains). */
int gpt_tensor_size(const struct gpt_config *cfg, int k);
int gpt_tensor_decays(int k);

/* Pointers into one block of floats, one per tensor. */
struct gpt_params {
    float *t[GPT_N_TENSORS]; /* t[GPT_W_Q] is (L, C, C), and so on */
};

/* Block l's attention weights, pointed into p (for mha_forward()). */
struct mha_weights gpt_block_attn(const struct gpt_params *p,
                                  const struct gpt_config *cfg, int l);

/* ---------------------------------------------------------------------
 * The model
 * ------------------------------------------------------------------- */

/* What the forward pass keeps for the backward pass, for up to cfg.B
 * sequences. Per block l, the tensors marked (L, ...) hold block l at
 * offset l * (their per-block size). */
struct gpt_acts {
    float *x0;       /* (B, T, C)    X_0, the embeddings              */
    float *ln1;      /* (L, B, T, C) LN1's output                     */
    float *ln1_mean; /* (L, B, T)                                     */
    float *ln1_rstd; /* (L, B, T)    1 / sqrt(var + eps)              */
    float *attn;     /* (L, B, T, C) MultiHead(LN1(X))                */
    float *x_mid;    /* (L, B, T, C) X after the attention's residual */
    float *ln2;      /* (L, B, T, C)                                  */
    float *ln2_mean; /* (L, B, T)                                     */
    float *ln2_rstd; /* (L, B, T)                                     */
    float *fc;       /* (L, B, T, F) LN2(X) W_fc + b_fc, before GELU  */
    float *gelu;     /* (L, B, T, F) GELU(fc)                         */
    float *x_out;    /* (L, B, T, C) X after block l                  */
    float *lnf;      /* (B, T, C)    LN_f's output                    */
    float *lnf_mean; /* (B, T)                                        */
    float *lnf_rstd; /* (B, T)                                        */
    float *logits;   /* (B, T, V)    the logits; after a forward pass
                      *              with targets, d loss / d logits,
                      *              written in their place            */
    float *losses;   /* (B, T)       -log softmax(logits)[target]     */
};

/* An optional callback on each block's attention output, which the
 * model offers any caller (chapter 8's ablations are one, heads_lm.h).
 * When m->after_attention is set, gpt_forward() calls it for every block
 * l = 0 .. L-1 and every sequence of the batch, right after block l's
 * attention, with ctx = m->hook_ctx: ln1 (T, C) is the attention's input
 * (LN1(X)), attn (T, C) its output, which the callback may change before
 * the residual connection adds it. A status other than KIT_OK stops the
 * forward pass, which returns it. gpt_backward() refuses a forward pass
 * made with a callback (KIT_E_SIZE): it is for measuring the loss. */
struct gpt_model;
typedef int (*gpt_attention_hook)(void *ctx, const struct gpt_model *m,
                                  int block, const float *ln1, float *attn,
                                  int T);

struct gpt_model {
    struct gpt_config cfg;
    struct mha_config attn_cfg; /* {C, n_heads, causal = 1}           */
    int n_params;               /* P                                  */
    float *params;              /* (P) every trainable number         */
    float *grads;               /* (P) d loss / d params, same layout */
    float *adam_m;              /* (P) AdamW's first moment           */
    float *adam_v;              /* (P) AdamW's second moment          */
    int adam_t;                 /* AdamW steps taken                  */
    struct gpt_params p;        /* views into params                  */
    struct gpt_params g;        /* the same views into grads          */
    int n_acts;                 /* floats the activations hold        */
    float *act_block;           /* one block for every activation     */
    struct gpt_acts a;          /* views into act_block               */
    float *d_x;                 /* (B, T, C) the backward pass's d X  */
    float *d_ln;                /* (B, T, C) d of a LayerNorm's output */
    float *d_f;                 /* (2, B, T, F) the MLP's scratch     */
    float *scratch;             /* transposes, products: C (B*T + V
                                 * ceil(B*T / 256)) floats         */
    float *d_attn;              /* the attention's backward pass:
                                 * projections, gradients, each
                                 * sequence's heads                  */
    int B, T;                   /* the last forward pass's batch      */
    const int *x;               /* (B, T) and its tokens, not owned   */
    const int *targets;         /* (B, T) and targets, or NULL        */
    float loss;                 /* its mean loss (0 without targets)  */
    gpt_attention_hook after_attention; /* NULL (gpt_init's), or a hook */
    void *hook_ctx;                     /* its ctx, not owned            */
    int ablated; /* the last forward pass called a hook (the name is
                  * chapter 8's, whose ablations are hooks) */
};

/* Check cfg, allocate m (parameters, gradients, AdamW's state, the
 * activations for cfg.B sequences) and draw the starting weights from
 * seed, as GPT-2 does: every matrix and embedding normal with standard
 * deviation 0.02, W_o and W_proj 0.02 / sqrt(2L) (they add into the
 * residual stream 2L times), biases 0, gains 1. Calls the student's
 * mha_check_config() on {C, n_heads} first, then gpt_check_config().
 * Returns KIT_OK, an error of either (the stub's KIT_E_TODO included),
 * or KIT_E_NOMEM; on an error m holds nothing to free. */
int gpt_init(struct gpt_model *m, const struct gpt_config *cfg,
             unsigned long long seed);

/* Free what gpt_init() allocated. */
void gpt_free(struct gpt_model *m);

/* The forward pass on tokens x (B, T_used), 0 < B <= cfg.B and
 * 0 < T_used <= cfg.T, every token in 0 .. V-1. With targets (B, T_used)
 * it also computes the loss, m->loss and m->a.losses; targets NULL is
 * inference (logits only). m keeps pointers to x and targets until the
 * backward pass. Returns KIT_OK, KIT_E_NULL, KIT_E_SIZE (a size or a
 * token out of range) or an error of the student's code. */
int gpt_forward(struct gpt_model *m, const int *x, const int *targets, int B,
                int T_used);

/* Set every gradient to 0. */
void gpt_zero_grad(struct gpt_model *m);

/* The backward pass of the last forward pass (which needs targets):
 * grads += d loss / d params. KIT_E_SIZE when the forward pass had no
 * targets. */
int gpt_backward(struct gpt_model *m);

/* ---------------------------------------------------------------------
 * Training: AdamW, the learning rate's schedule, gradient clipping
 * ------------------------------------------------------------------- */

struct gpt_train_config {
    float lr;           /* the peak learning rate                      */
    float lr_min;       /* where the cosine decay ends                 */
    int warmup;         /* steps of linear warm-up, >= 0               */
    int steps;          /* steps in all: the cosine ends at the last   */
    float beta1, beta2; /* AdamW's moments: 0.9 and 0.95, as GPT-2     */
    float eps;          /* 1e-8                                        */
    float weight_decay; /* decoupled, on the tensors that decay: 0.1   */
    float clip;         /* the gradients' global norm at most this; 0 = off */
};

/* The defaults above, with lr 1e-3, lr_min 1e-4, warmup 10% of steps. */
struct gpt_train_config gpt_default_train(int steps);

/* The learning rate at step (0-based):
 *   step < warmup:  lr * (step + 1) / warmup
 *   then:           lr_min + (lr - lr_min) * (1 + cos(pi * f)) / 2,
 *                   f = (step - warmup) / (steps - 1 - warmup), in 0..1
 * past the last step, lr_min. */
float gpt_lr_at(const struct gpt_train_config *tc, int step);

/* AdamW on n parameters p (n) with gradients g (n) and moments m, v (n),
 * at step t (1-based), PyTorch's torch.optim.AdamW exactly:
 *   p -= lr * wd * p                               (decoupled decay)
 *   m  = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2
 *   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) */
void adamw_update(float *p, const float *g, float *m, float *v, int n, int t,
                  float lr, float beta1, float beta2, float eps, float wd);

/* The gradients' global norm, sqrt(sum of every grad^2); when clip > 0
 * and the norm exceeds it, every gradient is scaled by clip / norm.
 * Returns the norm before clipping. */
float gpt_clip_grads(struct gpt_model *m, float clip);

/* One AdamW step of every tensor at learning rate lr (weight decay only
 * on the tensors that decay). */
void gpt_adamw_step(struct gpt_model *m, const struct gpt_train_config *tc,
                    float lr);

/* Grouped-query attention (chapter 6) on the model's full-size W_k and
 * W_v: with g K/V heads (g divides n_heads), query head i reads the keys
 * and values of the first head of its group, i - i % (n_heads / g). The
 * model keeps a copy of those columns for every head; gpt_kv_share()
 * keeps the copies equal and counts each shared number once:
 *   GPT_KV_GATHER (after gpt_backward()): each copy's gradient is added
 *     into the group's first head's columns and zeroed, so that clipping
 *     and AdamW see one gradient per shared number: the sum over the
 *     heads that read it, d loss / d (the shared number);
 *   GPT_KV_COPY (after gpt_init() and after every AdamW step): the first
 *     head's columns are copied into the others'.
 * With g = n_heads it changes nothing. KIT_E_NULL for a NULL model,
 * KIT_E_HEADS when g is not a divisor of n_heads (g <= 0 included),
 * KIT_E_SIZE for a mode that is neither; nothing is changed then. */
enum { GPT_KV_GATHER, GPT_KV_COPY };
int gpt_kv_share(struct gpt_model *m, int g, int mode);

/* One training step on x, targets (B, T_used): forward, zero the
 * gradients, backward, clip, AdamW at gpt_lr_at(tc, step). *loss gets the
 * loss before the step, *norm (may be NULL) the gradients' norm. */
int gpt_train_step(struct gpt_model *m, const struct gpt_train_config *tc,
                   int step, const int *x, const int *targets, int B,
                   int T_used, float *loss, float *norm);

/* ---------------------------------------------------------------------
 * Generation
 * ------------------------------------------------------------------- */

/* Pick the next token from one row of logits (V): divide by temperature,
 * keep the top_k largest (top_k <= 0 or >= V keeps all), softmax, draw
 * one with r. temperature <= 0 picks the argmax (ties: the lowest id).
 * probs (V) is scratch. Returns the token id. */
int gpt_sample_token(const float *logits, float *probs, int V,
                     float temperature, int top_k, struct rng *r);

/* Continue the n_prompt tokens of out (n_prompt + n_new, n_prompt >= 1)
 * with n_new sampled tokens, each from the model's logits at the last
 * position of the last cfg.T tokens. The same seed gives the same
 * tokens. Returns KIT_OK, KIT_E_NULL, KIT_E_SIZE or an error of the
 * forward pass. Overwrites m's activations (batch 1). */
int gpt_generate(struct gpt_model *m, int *out, int n_prompt, int n_new,
                 float temperature, int top_k, unsigned long long seed);

/* ---------------------------------------------------------------------
 * The pieces, given code, each tested against PyTorch
 * ------------------------------------------------------------------- */

/* y = GELU(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), and its
 * backward d_x += GELU'(x) d_y.  x, y, d_y, d_x (n). */
void gelu_forward(const float *x, float *y, int n);
void gelu_backward(const float *x, const float *d_y, float *d_x, int n);

/* out = in W + b.  in (N, n_in), W (n_in, n_out), b (n_out) or NULL,
 * out (N, n_out). Built on the student's matmul_fast() (chapter 7). */
int linear_forward(const float *in, const float *W, const float *b, float *out,
                   int N, int n_in, int n_out);

/* linear_forward() backward: d_in += d_out W^T, d_W += in^T d_out,
 * d_b += the column sums of d_out (d_b NULL when b was). Built on the
 * student's matmul_fast(), with W and in transposed into scratch it
 * allocates (KIT_E_NOMEM when it cannot). Shapes as in
 * linear_forward(). */
int linear_backward(const float *in, const float *W, const float *d_out,
                    float *d_in, float *d_W, float *d_b, int N, int n_in,
                    int n_out);

/* The MLP, per row: out = GELU(x W_fc + b_fc) W_proj + b_proj.
 * x (N, C), W_fc (C, F), b_fc (F), W_proj (F, C), b_proj (C), fc and
 * gelu (N, F) what the backward pass needs, out (N, C); F = 4C. */
int mlp_forward(const float *x, const float *W_fc, const float *b_fc,
                const float *W_proj, const float *b_proj, float *fc,
                float *gelu, float *out, int N, int C);

/* mlp_forward() backward, adding into d_x (N, C), d_W_fc (C, F), d_b_fc
 * (F), d_W_proj (F, C), d_b_proj (C). scratch (2, N, F) is overwritten. */
int mlp_backward(const float *x, const float *W_fc, const float *W_proj,
                 const float *fc, const float *gelu, const float *d_out,
                 float *scratch, float *d_x, float *d_W_fc, float *d_b_fc,
                 float *d_W_proj, float *d_b_proj, int N, int C);

/* Cross-entropy, row by row: probs = softmax(logits), losses[i] =
 * -log probs[i][targets[i]]. logits, probs (N, V), targets, losses (N).
 * KIT_E_SIZE when a target is not in 0 .. V-1. */
int crossentropy_forward(const float *logits, const int *targets, float *probs,
                         float *losses, int N, int V);

/* The mean loss's gradient: d_logits[i][j] += scale * (probs[i][j] -
 * (j == targets[i])), with scale = 1/N for the mean over N rows.
 * probs, d_logits (N, V), targets (N). */
int crossentropy_backward(const float *probs, const int *targets,
                          float *d_logits, float scale, int N, int V);

/* ---------------------------------------------------------------------
 * Chapter 8: the exercises (starter/ch8_lm.c)
 * ------------------------------------------------------------------- */

/* LayerNorm over each row of x, with eps = GPT_LN_EPS:
 *   mean[i] = sum_c x[i][c] / C
 *   rstd[i] = 1 / sqrt(sum_c (x[i][c] - mean[i])^2 / C + eps)
 *   y[i][c] = (x[i][c] - mean[i]) * rstd[i] * g[c] + b[c]
 * x, y (N, C), g, b (C), mean, rstd (N): kept for the backward pass.
 * Returns KIT_OK; KIT_E_NULL for a NULL pointer; KIT_E_SIZE when N or C
 * <= 0; on an error it writes nothing. */
#define GPT_LN_EPS 1e-5f
int layernorm_forward(const float *x, const float *g, const float *b, float *y,
                      float *mean, float *rstd, int N, int C);

/* layernorm_forward() backward. With xhat = (x - mean) * rstd:
 *   d_b[c]    += sum_i d_y[i][c]
 *   d_g[c]    += sum_i d_y[i][c] * xhat[i][c]
 *   d_x[i][c] += rstd[i] * (dxh[c] - mean_c(dxh) - xhat[i][c] *
 *                mean_c(dxh * xhat)),     dxh = d_y[i] * g
 * x, d_y, d_x (N, C), g, d_g, d_b (C), mean, rstd (N) as the forward
 * pass wrote them. Adds into d_x, d_g and d_b. Returns as the forward
 * pass does. */
int layernorm_backward(const float *x, const float *g, const float *mean,
                       const float *rstd, const float *d_y, float *d_x,
                       float *d_g, float *d_b, int N, int C);

#endif
