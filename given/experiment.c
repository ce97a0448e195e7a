/*
 * experiment.c: chapter 5, one head against many (experiment.h).
 * Given code, read in chapter 5: the model, its training loop, Adam and
 * the data. It calls the student's code from chapters 1 to 4 (matmul,
 * mha_check_config, mha_forward, matmul_backward, mha_backward) and
 * passes on any error they return, so on the starter stubs every call
 * here fails at once with KIT_E_TODO.
 *
 * What this file will not do: batch sequences into one big product, or
 * use threads. One sequence at a time, in the order the maths is written,
 * is fast enough for this small network.
 *
 * Dimension letters (see experiment.h):
 *   T = tokens, S = symbols, R = relations, d_model = embedding width,
 *   h = heads, N = sequences in a batch, P = parameters.
 */
#include "experiment.h"
#include "attention.h"
#include "grad.h"
#include "test_hooks.h" /* what the tests call beside the API */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Stop at the first error and pass it on. */
#define TRY(call)                                                              \
    do {                                                                       \
        int status_ = (call);                                                  \
        if (status_ != KIT_OK)                                                 \
            return status_;                                                    \
    } while (0)

/* ---------------------------------------------------------------------
 * The task
 * ------------------------------------------------------------------- */

/* @listing exp_default_config */
/* The book's defaults. Its run (tools/runs/experiment/main.c) keeps all
 * but lr and vo_init, which it chooses for each head count from a grid. */
struct exp_config exp_default_config(int n_heads)
{
    struct exp_config c;
    memset(&c, 0, sizeof c);
    c.task = EXP_TASK_POSITION;
    c.n_symbols = 16;
    c.n_classes = 4;
    c.T = 10;
    c.d_model = 32;
    c.n_heads = n_heads;
    c.n_kv_heads = 0;     /* every head its own keys and values */
    c.n_layers = 1;       /* one attention layer */
    c.score_scale = 1.0f; /* scores q.k / sqrt(d_head), as in chapter 1 */
    c.batch = 16;
    c.steps = 1000;
    c.lr = 2e-2f;
    c.lr_final = 1e-3f;
    c.emb_init = 1.0f;
    c.qk_init = 1.0f;
    c.vo_init = 8.0f;
    c.seed = 2017;
    c.layer = NULL; /* chapter 3's mha_forward() */
    return c;
}
/* @end exp_default_config */

struct exp_config exp_content_config(int n_heads)
{
    struct exp_config c = exp_default_config(n_heads);
    c.task = EXP_TASK_CONTENT;
    return c;
}

int exp_task_relations(int task)
{
    return task == EXP_TASK_POSITION ? EXP_R : task == EXP_TASK_CONTENT ? 2 : 0;
}

/* @listing exp_source */
/* source(r, t) = t-1, t-2, 0 or 1, or -1 when not in 0..t. */
int exp_source(int r, int t)
{
    static const int back[EXP_R] = {1, 2, -1, -1};  /* relative: t - back */
    static const int fixed[EXP_R] = {-1, -1, 0, 1}; /* absolute position */
    int s = back[r] > 0 ? t - back[r] : fixed[r];
    return (s >= 0 && s <= t) ? s : -1;
}
/* @end exp_source */

int exp_class(const struct exp_config *cfg, int s)
{
    return s / (cfg->n_symbols / cfg->n_classes);
}

/* @listing exp_source_in */
/* The content task: t-1, or the latest j < t-1 whose symbol is in x[t]'s
 * class; -1 when there is none. */
int exp_source_in(const struct exp_config *cfg, const int *x, int r, int t)
{
    if (cfg->task == EXP_TASK_POSITION)
        return exp_source(r, t);
    if (r == EXP_PREV)
        return t >= 1 ? t - 1 : -1;
    for (int j = t - 2; j >= 0; j--) /* the most recent first */
        if (exp_class(cfg, x[j]) == exp_class(cfg, x[t]))
            return j;
    return -1;
}
/* @end exp_source_in */

const char *exp_relation_name(int task, int r)
{
    static const char *const position[EXP_R] = {"previous", "two back", "first",
                                                "second"};
    static const char *const content[2] = {"previous", "same class"};
    if (r < 0 || r >= exp_task_relations(task))
        return "?";
    return task == EXP_TASK_POSITION ? position[r] : content[r];
}

/* x (N, T): every symbol uniform in 0..S-1. */
void exp_make_batch(struct rng *r, int *x, int N, int T, int S)
{
    for (int i = 0; i < N * T; i++)
        x[i] = rng_int(r, S);
}

/* ---------------------------------------------------------------------
 * The model's memory
 * ------------------------------------------------------------------- */

/* Chapter 3's multi-head layer, the default. */
static int mha_check(const struct exp_config *c)
{
    struct mha_config ac = {c->d_model, c->n_heads, 1};
    return mha_check_config(&ac); /* the student's chapter 3 check */
}

static int mha_kv_width(const struct exp_config *c)
{
    return c->d_model;
}

static int mha_fwd(const struct exp_config *c, const struct mha_weights *w,
                   const float *X, float *out, float *weights, int T)
{
    struct mha_config ac = {c->d_model, c->n_heads, 1};
    return mha_forward(&ac, w, X, out, weights, T);
}

static int mha_bwd(const struct exp_config *c, const struct mha_weights *w,
                   const float *X, const float *d_out, float *d_X,
                   struct mha_weights *d_w, int T)
{
    struct mha_config ac = {c->d_model, c->n_heads, 1};
    return mha_backward(&ac, w, X, d_out, d_X, d_w, T);
}

static const struct exp_layer mha_layer = {"multi-head", mha_check,
                                           mha_kv_width, mha_fwd, mha_bwd};

/* L = cfg.n_layers, 0 meaning 1. */
static int layers_of(const struct exp_config *c)
{
    return c->n_layers > 1 ? c->n_layers : 1;
}

/* @listing exp_stack */
/* The depth control: L layers of chapter 3's, each with its own residual,
 *   H_0 = X,  H_l = H_{l-1} + MultiHead_l(H_{l-1}),  l = 1 .. L.
 * The stack's output A is what the layers add, H_L - X, so that
 * exp_forward()'s H = X + A is H_L. Layer l's weights are block l of
 * each matrix (L, d_model, d_model). The layers' inputs H_0 .. H_{L-1}
 * stay in m->layer_in (L, T, d_model) for the backward pass; m->weights
 * gets the last layer's. */
static struct mha_weights layer_block(const struct mha_weights *w, int l, int d)
{
    struct mha_weights b = {w->W_q + l * d * d, w->W_k + l * d * d,
                            w->W_v + l * d * d, w->W_o + l * d * d};
    return b;
}

static int stack_forward(struct exp_model *m)
{
    const int L = m->cfg.n_layers, n = m->cfg.T * m->cfg.d_model;
    memcpy(m->layer_in, m->X, (size_t)n * sizeof(float)); /* H_0 = X */
    for (int l = 0; l < L; l++) {
        struct mha_weights b = layer_block(&m->used, l, m->cfg.d_model);
        float *H = m->layer_in + l * n, *next = H + n;
        TRY(mha_forward(&m->attn_cfg, &b, H, m->A, m->weights, m->cfg.T));
        for (int i = 0; i < n; i++) /* H_l, or at the end A = H_L - X */
            if (l + 1 < L)
                next[i] = H[i] + m->A[i];
            else
                m->A[i] = H[i] + m->A[i] - m->X[i];
    }
    return KIT_OK;
}

/* Backward, the layers in reverse: with g = d loss / d H_l,
 * d loss / d H_{l-1} = g + (layer l's backward of g), which is
 * mha_backward() adding into a copy of g. d_X holds d_H already (the
 * residual's copy), and A = H_L - X: so d_X += d loss / d H_0 - d_H. */
static int stack_backward(struct exp_model *m)
{
    const int L = m->cfg.n_layers, d = m->cfg.d_model, n = m->cfg.T * d;
    float *g = m->layer_in + L * n, *g_prev = g + n; /* (T, d) each */
    memcpy(g, m->d_H, (size_t)n * sizeof(float));    /* d loss / d H_L */
    for (int l = L - 1; l >= 0; l--) {
        struct mha_weights b = layer_block(&m->used, l, d);
        struct mha_weights db = layer_block(&m->d_used, l, d);
        memcpy(g_prev, g, (size_t)n * sizeof(float)); /* the residual */
        TRY(mha_backward(&m->attn_cfg, &b, m->layer_in + l * n, g, g_prev, &db,
                         m->cfg.T));
        memcpy(g, g_prev, (size_t)n * sizeof(float));
    }
    for (int i = 0; i < n; i++)
        m->d_X[i] += g[i] - m->d_H[i];
    return KIT_OK;
}
/* @end exp_stack */

static const struct exp_layer *layer_of(const struct exp_config *c)
{
    return c->layer ? c->layer : &mha_layer;
}

/* @listing exp_layout */
/* Hand out the next n floats of a block (NULL when counting only). */
static float *take(float *block, int *used, int n)
{
    float *p = block ? block + *used : NULL;
    *used += n;
    return p;
}

/* Point the views into one block laid out as: E_tok, E_pos, W_q, W_k,
 * W_v, W_o, W_r, b_r. Returns how many floats they cover: P. */
static int lay_out(float *block, const struct exp_config *c, float **E_tok,
                   float **E_pos, struct mha_weights *w, float **W_r,
                   float **b_r)
{
    int P = 0, d = c->d_model, RS = exp_task_relations(c->task) * c->n_symbols;
    int kv = layer_of(c)->kv_width(c); /* d_model for multi-head attention */
    int L = layers_of(c);              /* 1 but in the depth control */
    *E_tok = take(block, &P, c->n_symbols * d);
    *E_pos = take(block, &P, c->T * d);
    w->W_q = take(block, &P, L * d * d); /* the same for every n_heads */
    w->W_k = take(block, &P, L * d * kv);
    w->W_v = take(block, &P, L * d * kv);
    w->W_o = take(block, &P, L * d * d);
    *W_r = take(block, &P, d * RS);
    *b_r = take(block, &P, RS);
    return P;
}
/* @end exp_layout */

void exp_model_free(struct exp_model *m)
{
    if (!m)
        return;
    free(m->params);
    free(m->grads);
    free(m->adam_m);
    free(m->adam_v);
    free(m->X);
    memset(m, 0, sizeof *m);
}

/* @listing exp_model_init */
int exp_model_layout(struct exp_model *m, const struct exp_config *cfg)
{
    if (!m || !cfg)
        return KIT_E_NULL;
    memset(m, 0, sizeof *m);
    const int R = exp_task_relations(cfg->task);
    m->cfg = *cfg;
    m->attn_cfg = (struct mha_config){cfg->d_model, cfg->n_heads, 1};
    m->n_relations = R;

    /* 1. count the parameters, piece by piece, with a dry run of the
     *    layout over a NULL block */
    float *E, *Pe, *Wr, *br;
    struct mha_weights w;
    int P = lay_out(NULL, cfg, &E, &Pe, &w, &Wr, &br);
    m->n_params = P;

    /* 2. one block each for the parameters, gradients and Adam's state */
    int d = cfg->d_model, T = cfg->T, RS = R * cfg->n_symbols;
    int scratch = 5 * T * d + 2 * T * RS + cfg->n_heads * T * T + 4 * d * d;
    int L = layers_of(cfg); /* a stack keeps its layers' inputs, and two */
    scratch += L > 1 ? (L + 2) * T * d : 0; /* rows of gradients */
    m->params = calloc((size_t)P, sizeof(float));
    m->grads = calloc((size_t)P, sizeof(float));
    m->adam_m = calloc((size_t)P, sizeof(float));
    m->adam_v = calloc((size_t)P, sizeof(float));
    m->X = calloc((size_t)scratch, sizeof(float));
    m->n_scratch = scratch;
    if (!m->params || !m->grads || !m->adam_m || !m->adam_v || !m->X) {
        exp_model_free(m);
        return KIT_E_NOMEM;
    }
    lay_out(m->params, cfg, &m->E_tok, &m->E_pos, &m->attn, &m->W_r, &m->b_r);
    lay_out(m->grads, cfg, &m->d_E_tok, &m->d_E_pos, &m->d_attn, &m->d_W_r,
            &m->d_b_r);
    m->A = m->X + T * d;
    m->H = m->A + T * d;
    m->d_H = m->H + T * d;
    m->d_X = m->d_H + T * d;
    m->logits = m->d_X + T * d;
    m->d_logits = m->logits + T * RS;
    m->weights = m->d_logits + T * RS;
    m->W_q_used = m->weights + cfg->n_heads * T * T;
    m->W_o_used = m->W_q_used + d * d;
    m->d_W_q_used = m->W_o_used + d * d;
    m->d_W_o_used = m->d_W_q_used + d * d;
    m->layer_in = L > 1 ? m->d_W_o_used + d * d : NULL;

    return KIT_OK;
}

/* Check cfg, lay out P parameters, draw them from cfg->seed. */
int exp_model_init(struct exp_model *m, const struct exp_config *cfg)
{
    if (!m || !cfg)
        return KIT_E_NULL;
    memset(m, 0, sizeof *m);
    const int R = exp_task_relations(cfg->task);
    if (R == 0 || cfg->n_symbols <= 0 || cfg->T < 3 || cfg->batch <= 0 ||
        cfg->steps < 0 || !(cfg->score_scale > 0))
        return KIT_E_SIZE;
    if (cfg->task == EXP_TASK_CONTENT &&
        (cfg->n_classes <= 0 || cfg->n_symbols % cfg->n_classes != 0))
        return KIT_E_SIZE;
    if (cfg->n_layers < 0 ||
        (cfg->n_layers > 1 && (cfg->layer != NULL || cfg->score_scale != 1.0f)))
        return KIT_E_SIZE; /* a stack is of chapter 3's layer, as it is */
    TRY(layer_of(cfg)->check(cfg)); /* mha_check_config() by default */
    TRY(exp_model_layout(m, cfg));
    /* 3. starting weights, uniform in [-a, a]; they do not depend on
     *    n_heads, so the runs being compared start from the same numbers */
    const int d = cfg->d_model, T = cfg->T, L = layers_of(cfg);
    const int kv = layer_of(cfg)->kv_width(cfg), RS = R * cfg->n_symbols;
    struct rng r;
    rng_seed(&r, cfg->seed);
    const float e = cfg->emb_init, s = 1.0f / sqrtf((float)d);
    const float qk = cfg->qk_init * s, vo = cfg->vo_init * s;
    rng_fill(&r, m->E_tok, cfg->n_symbols * d, -e, e);
    rng_fill(&r, m->E_pos, T * d, -e, e);
    rng_fill(&r, m->attn.W_q, L * d * d, -qk, qk);
    rng_fill(&r, m->attn.W_k, L * d * kv, -qk, qk);
    rng_fill(&r, m->attn.W_v, L * d * kv, -vo, vo);
    rng_fill(&r, m->attn.W_o, L * d * d, -vo, vo);
    rng_fill(&r, m->W_r, d * RS, -s, s); /* b_r stays 0 */
    return KIT_OK;
}
/* @end exp_model_init */

/* ---------------------------------------------------------------------
 * Forward and backward, one sequence at a time
 * ------------------------------------------------------------------- */

/* @listing exp_used_weights */
/* The weights the layer is handed: W_q times score_scale, and W_o with
 * the rows of every knocked-out head zeroed (head i's output meets only
 * rows i*d_head .. (i+1)*d_head - 1). Without either switch, the
 * parameters themselves. */
static void use_weights(struct exp_model *m)
{
    const int d = m->cfg.d_model, d_head = d / m->cfg.n_heads;
    m->used = m->attn;
    if (m->cfg.score_scale != 1.0f) {
        for (int i = 0; i < d * d; i++)
            m->W_q_used[i] = m->cfg.score_scale * m->attn.W_q[i];
        m->used.W_q = m->W_q_used;
    }
    if (m->heads_off) {
        for (int row = 0; row < d; row++) {
            int off = (int)((m->heads_off >> (row / d_head)) & 1);
            for (int c = 0; c < d; c++)
                m->W_o_used[row * d + c] = off ? 0 : m->attn.W_o[row * d + c];
        }
        m->used.W_o = m->W_o_used;
    }
}
/* @end exp_used_weights */

/* @listing exp_forward */
/* logits = (X + MultiHead(X)) W_r + b_r, X = E_tok[x] + E_pos;
 * loss = sum over valid (t, r) of -log softmax(logits[t][r])[target].
 * x (T). */
int exp_forward(struct exp_model *m, const int *x, double *loss_sum,
                long *correct, long *counted)
{
    if (!m || !x)
        return KIT_E_NULL;
    if (m->heads_off && layers_of(&m->cfg) > 1)
        return KIT_E_SIZE; /* knocking out heads: one layer only */
    const int T = m->cfg.T, d = m->cfg.d_model, S = m->cfg.n_symbols;
    const int R = m->n_relations, RS = R * S;
    /* 1. X = E_tok[x] + E_pos */
    for (int t = 0; t < T; t++)
        for (int c = 0; c < d; c++)
            m->X[t * d + c] = m->E_tok[x[t] * d + c] + m->E_pos[t * d + c];
    /* 2. A = MultiHead(X), causal: mha_forward() unless cfg.layer says */
    use_weights(m);
    if (layers_of(&m->cfg) > 1) /* the depth control: L layers */
        TRY(stack_forward(m));
    else
        TRY(layer_of(&m->cfg)->forward(&m->cfg, &m->used, m->X, m->A,
                                       m->weights, T));
    /* 3. H = X + A: the residual connection */
    for (int i = 0; i < T * d; i++)
        m->H[i] = m->X[i] + m->A[i];
    /* 4. logits = H W_r + b_r */
    TRY(matmul(m->H, m->W_r, m->logits, T, d, RS));
    for (int t = 0; t < T; t++)
        for (int j = 0; j < RS; j++)
            m->logits[t * RS + j] += m->b_r[j];
    /* 5. per valid (t, r): softmax over S symbols, cross-entropy and the
     *    argmax. d_logits keeps p - onehot for the backward pass. */
    for (int t = 0; t < T; t++) {
        for (int r = 0; r < R; r++) {
            const float *z = m->logits + t * RS + r * S;
            float *g = m->d_logits + t * RS + r * S;
            int src = exp_source_in(&m->cfg, x, r, t);
            if (src < 0) { /* not in the loss: no gradient either */
                memset(g, 0, (size_t)S * sizeof(float));
                continue;
            }
            int target = x[src], best = 0;
            float max = z[0];
            for (int s = 1; s < S; s++)
                if (z[s] > max)
                    max = z[s], best = s;
            double sum = 0;
            for (int s = 0; s < S; s++) { /* g holds exp(z - max) a moment */
                double e = exp((double)(z[s] - max));
                g[s] = (float)e;
                sum += e;
            }
            for (int s = 0; s < S; s++)
                g[s] = (float)(g[s] / sum) - (s == target);
            if (loss_sum) /* -log p[target] */
                *loss_sum += log(sum) - (double)(z[target] - max);
            if (correct)
                correct[r] += (best == target);
            if (counted)
                counted[r] += 1;
        }
    }
    return KIT_OK;
}
/* @end exp_forward */

/* @listing exp_backward */
/* exp_forward() backward, step for step in reverse:
 * grads += scale * d loss / d params.  x (T). */
int exp_backward(struct exp_model *m, const int *x, float scale)
{
    if (!m || !x)
        return KIT_E_NULL;
    const int T = m->cfg.T, d = m->cfg.d_model;
    const int RS = m->n_relations * m->cfg.n_symbols;
    /* 5. d loss / d logits = scale * (softmax - onehot), 0 where left out */
    for (int i = 0; i < T * RS; i++)
        m->d_logits[i] *= scale;
    /* 4. logits = H W_r + b_r */
    memset(m->d_H, 0, (size_t)(T * d) * sizeof(float));
    TRY(matmul_backward(m->H, m->W_r, m->d_logits, m->d_H, m->d_W_r, T, d, RS));
    for (int t = 0; t < T; t++)
        for (int j = 0; j < RS; j++)
            m->d_b_r[j] += m->d_logits[t * RS + j];
    /* 3. H = X + A: both branches receive d_H */
    memcpy(m->d_X, m->d_H, (size_t)(T * d) * sizeof(float));
    /* 2. A = MultiHead(X): adds into d_X and into the layer's gradients;
     *    through a changed W_q or W_o, by way of their own gradients */
    m->d_used = m->d_attn;
    if (m->used.W_q != m->attn.W_q) {
        memset(m->d_W_q_used, 0, (size_t)(d * d) * sizeof(float));
        m->d_used.W_q = m->d_W_q_used;
    }
    if (m->used.W_o != m->attn.W_o) {
        memset(m->d_W_o_used, 0, (size_t)(d * d) * sizeof(float));
        m->d_used.W_o = m->d_W_o_used;
    }
    if (layers_of(&m->cfg) > 1) /* the depth control: L layers */
        TRY(stack_backward(m));
    else
        TRY(layer_of(&m->cfg)->backward(&m->cfg, &m->used, m->X, m->d_H, m->d_X,
                                        &m->d_used, T));
    if (m->d_used.W_q != m->d_attn.W_q) /* W_q used = score_scale * W_q */
        for (int i = 0; i < d * d; i++)
            m->d_attn.W_q[i] += m->cfg.score_scale * m->d_W_q_used[i];
    if (m->d_used.W_o != m->d_attn.W_o) { /* a zeroed row: no gradient */
        const int d_head = d / m->cfg.n_heads;
        for (int row = 0; row < d; row++)
            if (!((m->heads_off >> (row / d_head)) & 1))
                for (int c = 0; c < d; c++)
                    m->d_attn.W_o[row * d + c] += m->d_W_o_used[row * d + c];
    }
    /* 1. X = E_tok[x] + E_pos: each row goes back where it came from */
    for (int t = 0; t < T; t++)
        for (int c = 0; c < d; c++) {
            m->d_E_tok[x[t] * d + c] += m->d_X[t * d + c];
            m->d_E_pos[t * d + c] += m->d_X[t * d + c];
        }
    return KIT_OK;
}
/* @end exp_backward */

struct probe {
    struct exp_model *m;
    const int *x;
    double *losses;
};

static int probe_pass(void *ctx, int j)
{
    struct probe *q = ctx;
    q->losses[j] = 0;
    return exp_forward(q->m, q->x, &q->losses[j], NULL, NULL);
}

int exp_loss_probe(struct exp_model *m, const int *x, int n, const int *index,
                   const float *value, double *losses)
{
    if (!m || !m->params || !x || !losses)
        return KIT_E_NULL;
    struct probe q = {m, x, losses};
    return kit_param_probe(m->params, m->n_params, n, index, value, probe_pass,
                           &q);
}

/* ---------------------------------------------------------------------
 * Training
 * ------------------------------------------------------------------- */

/* @listing exp_adam_step */
/* p -= lr * m_hat / (sqrt(v_hat) + eps), for each of the P parameters. */
void exp_adam_step(struct exp_model *m, float lr)
{
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    m->adam_t++;
    const float c1 = 1.0f - powf(b1, (float)m->adam_t);
    const float c2 = 1.0f - powf(b2, (float)m->adam_t);
    for (int i = 0; i < m->n_params; i++) {
        float g = m->grads[i];
        m->adam_m[i] = b1 * m->adam_m[i] + (1.0f - b1) * g;
        m->adam_v[i] = b2 * m->adam_v[i] + (1.0f - b2) * g * g;
        float m_hat = m->adam_m[i] / c1, v_hat = m->adam_v[i] / c2;
        m->params[i] -= lr * m_hat / (sqrtf(v_hat) + eps);
    }
}
/* @end exp_adam_step */

/* How many (t, r) pairs of the batch x (N, T) count in the loss. */
static int valid_pairs(const struct exp_model *m, const int *x, int N)
{
    int n = 0;
    for (int k = 0; k < N; k++)
        for (int t = 0; t < m->cfg.T; t++)
            for (int r = 0; r < m->n_relations; r++)
                n += exp_source_in(&m->cfg, x + k * m->cfg.T, r, t) >= 0;
    return n;
}

/* @listing exp_train_step */
/* loss = mean over the batch x (N, T); grads = its gradient; one Adam
 * step. */
int exp_train_step(struct exp_model *m, const int *x, int N, float lr,
                   float *loss)
{
    if (!m || !x || !loss)
        return KIT_E_NULL;
    if (N <= 0)
        return KIT_E_SIZE;
    const int T = m->cfg.T;
    /* the loss is a mean over every valid (sequence, t, r) */
    const int pairs = valid_pairs(m, x, N);
    const float scale = pairs > 0 ? 1.0f / (float)pairs : 0.0f;
    double sum = 0;
    memset(m->grads, 0, (size_t)m->n_params * sizeof(float));
    for (int n = 0; n < N; n++) {
        TRY(exp_forward(m, x + n * T, &sum, NULL, NULL));
        TRY(exp_backward(m, x + n * T, scale));
    }
    *loss = (float)(sum * scale);
    exp_adam_step(m, lr);
    return KIT_OK;
}
/* @end exp_train_step */

/* @listing exp_train */
/* cfg.steps training steps on fresh batches. losses (steps). */
int exp_train(struct exp_model *m, float *losses)
{
    if (!m)
        return KIT_E_NULL;
    const struct exp_config *c = &m->cfg;
    int *x = malloc((size_t)(c->batch * c->T) * sizeof(int));
    if (!x)
        return KIT_E_NOMEM;
    struct rng data;
    rng_seed(&data, c->seed ^ 0x5DEECE66DULL); /* its own stream */
    int status = KIT_OK;
    for (int step = 0; step < c->steps && status == KIT_OK; step++) {
        /* the learning rate falls linearly from lr to lr_final */
        float f = c->steps > 1 ? (float)step / (float)(c->steps - 1) : 0;
        float lr = c->lr + f * (c->lr_final - c->lr);
        float loss = 0;
        exp_make_batch(&data, x, c->batch, c->T, c->n_symbols);
        status = exp_train_step(m, x, c->batch, lr, &loss);
        if (losses)
            losses[step] = loss;
    }
    free(x);
    return status;
}
/* @end exp_train */

/* Loss and per-relation accuracy on x (N, T), without training. */
int exp_evaluate(struct exp_model *m, const int *x, int N,
                 struct exp_score *score)
{
    if (!m || !x || !score)
        return KIT_E_NULL;
    if (N <= 0)
        return KIT_E_SIZE;
    long correct[EXP_R] = {0}, counted[EXP_R] = {0};
    double sum = 0;
    for (int n = 0; n < N; n++)
        TRY(exp_forward(m, x + n * m->cfg.T, &sum, correct, counted));
    exp_score_counts(score, m->n_relations, correct, counted, sum);
    return KIT_OK;
}

void exp_score_counts(struct exp_score *score, int R, const long *correct,
                      const long *counted, double loss_sum)
{
    long total = 0;
    memset(score, 0, sizeof *score);
    for (int r = 0; r < R; r++) {
        score->accuracy[r] =
            counted[r] ? (double)correct[r] / (double)counted[r] : 0;
        score->mean_accuracy += score->accuracy[r] / R;
        total += counted[r];
    }
    score->loss = total ? loss_sum / (double)total : 0;
}
