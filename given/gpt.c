/*
 * gpt.c: chapter 8, a small GPT trained in C (gpt.h).
 * Given code, read in chapter 8: the model's memory, its forward and
 * backward passes, AdamW with its schedule and clipping, and sampling.
 * Attention is the student's: mha_forward() (chapter 3, causal) and
 * mha_backward() (chapter 4); the products are matmul(), matmul_bt()
 * (chapter 1) and matmul_backward() (chapter 4); LayerNorm is this
 * chapter's exercise (layernorm_forward, layernorm_backward). Any error
 * they return is passed on, so on the starter stubs every pass here
 * fails at once with KIT_E_TODO.
 *
 * What this file will not do: fuse kernels, use threads of its own, or
 * keep a KV cache for generation. The code follows the maths in the
 * order gpt.h writes it.
 *
 * Dimension letters (see gpt.h):
 *   B = sequences, T = tokens per sequence, C = d_model, F = 4C,
 *   V = vocabulary, L = blocks, h = heads, N = B*T rows, P = parameters.
 */
#include "gpt.h"

#include "attention.h"
#include "grad.h"
#include "heads_lm.h"
#include "rng.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
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
 * The configuration
 * ------------------------------------------------------------------- */

/* @listing gpt_check_config */
/* Every size positive, h divides C, every product of two sizes the
 * code forms below INT_MAX; why gets one line on the first problem. */
int gpt_check_config(const struct gpt_config *c, char *why, size_t size)
{
    char line[160] = "";
    int status = KIT_OK;
    if (!c) {
        snprintf(line, sizeof line, "the configuration is NULL");
        status = KIT_E_NULL;
    } else if (c->V <= 0 || c->T <= 0 || c->C <= 0 || c->L <= 0 ||
               c->n_heads <= 0 || c->B <= 0) {
        snprintf(line, sizeof line,
                 "every size must be positive: V = %d, T = %d, C = %d, "
                 "L = %d, n_heads = %d, B = %d",
                 c->V, c->T, c->C, c->L, c->n_heads, c->B);
        status = KIT_E_SIZE;
    } else if (c->C % c->n_heads != 0) {
        snprintf(line, sizeof line,
                 "n_heads = %d does not divide d_model C = %d: every head "
                 "needs C / n_heads columns",
                 c->n_heads, c->C);
        status = KIT_E_HEADS;
    } else {
        /* the largest arrays: (L, B*T, 4C) activations, (B*T, V) logits,
         * (V, C) embeddings, (L, C, 4C) weights */
        const long long N = (long long)c->B * c->T, F = 4LL * c->C;
        if (N * F * c->L >= INT_MAX || N * c->V >= INT_MAX ||
            (long long)c->V * c->C >= INT_MAX || F * c->C * c->L >= INT_MAX ||
            (long long)c->T * c->T * c->n_heads >= INT_MAX) {
            snprintf(line, sizeof line,
                     "too large: B*T*V = %lld or L*B*T*4C = %lld passes "
                     "INT_MAX",
                     N * c->V, N * F * c->L);
            status = KIT_E_SIZE;
        }
    }
    if (why && size > 0)
        snprintf(why, size, "%s", line);
    return status;
}
/* @end gpt_check_config */

/* ---------------------------------------------------------------------
 * The parameters: one table, one block
 * ------------------------------------------------------------------- */

/* @listing gpt_tensor_table */
/* What each tensor is: its name, whether it decays, and its size as a
 * product of the config's sizes: n_L * n_a * n_b with each n one of the
 * letters below, or 1. */
enum { D_1, D_V, D_T, D_C, D_F, D_L };
static const struct {
    const char *name;
    int decays;
    int dims[3]; /* multiplied: the tensor's number of floats */
} TENSORS[GPT_N_TENSORS] = {
    [GPT_WTE] = {"W_te", 1, {D_V, D_C, D_1}},
    [GPT_WPE] = {"W_pe", 1, {D_T, D_C, D_1}},
    [GPT_LN1_G] = {"ln1_g", 0, {D_L, D_C, D_1}},
    [GPT_LN1_B] = {"ln1_b", 0, {D_L, D_C, D_1}},
    [GPT_W_Q] = {"W_q", 1, {D_L, D_C, D_C}},
    [GPT_W_K] = {"W_k", 1, {D_L, D_C, D_C}},
    [GPT_W_V] = {"W_v", 1, {D_L, D_C, D_C}},
    [GPT_W_O] = {"W_o", 1, {D_L, D_C, D_C}},
    [GPT_LN2_G] = {"ln2_g", 0, {D_L, D_C, D_1}},
    [GPT_LN2_B] = {"ln2_b", 0, {D_L, D_C, D_1}},
    [GPT_W_FC] = {"W_fc", 1, {D_L, D_C, D_F}},
    [GPT_B_FC] = {"b_fc", 0, {D_L, D_F, D_1}},
    [GPT_W_PROJ] = {"W_proj", 1, {D_L, D_F, D_C}},
    [GPT_B_PROJ] = {"b_proj", 0, {D_L, D_C, D_1}},
    [GPT_LNF_G] = {"lnf_g", 0, {D_C, D_1, D_1}},
    [GPT_LNF_B] = {"lnf_b", 0, {D_C, D_1, D_1}},
};
/* @end gpt_tensor_table */

const char *gpt_tensor_name(int k)
{
    return k >= 0 && k < GPT_N_TENSORS ? TENSORS[k].name : "?";
}

int gpt_tensor_decays(int k)
{
    return k >= 0 && k < GPT_N_TENSORS && TENSORS[k].decays;
}

int gpt_tensor_size(const struct gpt_config *c, int k)
{
    if (!c || k < 0 || k >= GPT_N_TENSORS)
        return 0;
    const int value[] = {[D_1] = 1,    [D_V] = c->V,     [D_T] = c->T,
                         [D_C] = c->C, [D_F] = 4 * c->C, [D_L] = c->L};
    int n = 1;
    for (int j = 0; j < 3; j++)
        n *= value[TENSORS[k].dims[j]];
    return n;
}

/* @listing gpt_point_params */
/* Point p's tensors into block, one after the other in the table's
 * order. Returns the floats they cover, P. block NULL: count only. */
static int point_params(struct gpt_params *p, float *block,
                        const struct gpt_config *c)
{
    int P = 0;
    for (int k = 0; k < GPT_N_TENSORS; k++) {
        p->t[k] = block ? block + P : NULL;
        P += gpt_tensor_size(c, k);
    }
    return P;
}
/* @end gpt_point_params */

struct mha_weights gpt_block_attn(const struct gpt_params *p,
                                  const struct gpt_config *c, int l)
{
    const int CC = c->C * c->C;
    struct mha_weights w = {p->t[GPT_W_Q] + l * CC, p->t[GPT_W_K] + l * CC,
                            p->t[GPT_W_V] + l * CC, p->t[GPT_W_O] + l * CC};
    return w;
}

/* @listing gpt_point_acts */
/* The activations for B sequences of T tokens, from one table, into
 * one block. Returns the floats they cover. block NULL: count only. */
static int point_acts(struct gpt_acts *a, float *block, int B, int T,
                      const struct gpt_config *c)
{
    const int N = B * T, L = c->L, C = c->C, F = 4 * c->C, V = c->V;
    struct {
        float **view;
        int n;
    } table[] = {
        {&a->x0, N * C},       {&a->ln1, L * N * C},  {&a->ln1_mean, L * N},
        {&a->ln1_rstd, L * N}, {&a->attn, L * N * C}, {&a->x_mid, L * N * C},
        {&a->ln2, L * N * C},  {&a->ln2_mean, L * N}, {&a->ln2_rstd, L * N},
        {&a->fc, L * N * F},   {&a->gelu, L * N * F}, {&a->x_out, L * N * C},
        {&a->lnf, N * C},      {&a->lnf_mean, N},     {&a->lnf_rstd, N},
        {&a->logits, N * V},   {&a->probs, N * V},    {&a->losses, N},
    };
    int used = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        *table[i].view = block ? block + used : NULL;
        used += table[i].n;
    }
    return used;
}
/* @end gpt_point_acts */

void gpt_free(struct gpt_model *m)
{
    if (!m)
        return;
    free(m->params);
    free(m->grads);
    free(m->adam_m);
    free(m->adam_v);
    free(m->act_block);
    free(m->d_x);
    free(m->weights);
    memset(m, 0, sizeof *m);
}

/* Fill x (n) with normal numbers of standard deviation sd. */
static void fill_normal(struct rng *r, float *x, int n, float sd)
{
    for (int i = 0; i < n; i++)
        x[i] = sd * (float)rng_normal(r);
}

/* @listing gpt_init */
/* Check cfg, lay out and allocate, draw GPT-2's starting weights. */
int gpt_init(struct gpt_model *m, const struct gpt_config *cfg,
             unsigned long long seed)
{
    if (!m || !cfg)
        return KIT_E_NULL;
    memset(m, 0, sizeof *m);
    /* the student's chapter 3 check of the attention's sizes first, as
     * mha_forward() will make it; then the rest of the model's */
    m->attn_cfg = (struct mha_config){cfg->C, cfg->n_heads, 1};
    TRY(mha_check_config(&m->attn_cfg));
    TRY(gpt_check_config(cfg, NULL, 0));
    m->cfg = *cfg;

    /* 1. count, then allocate: parameters, gradients, AdamW's moments,
     *    the activations, the backward pass's scratch */
    struct gpt_acts counted;
    const int P = point_params(&m->p, NULL, cfg);
    const int A = point_acts(&counted, NULL, cfg->B, cfg->T, cfg);
    const size_t NC = (size_t)cfg->B * cfg->T * cfg->C;
    m->n_params = P;
    m->n_acts = A;
    m->params = calloc((size_t)P, sizeof(float));
    m->grads = calloc((size_t)P, sizeof(float));
    m->adam_m = calloc((size_t)P, sizeof(float));
    m->adam_v = calloc((size_t)P, sizeof(float));
    m->act_block = calloc((size_t)A, sizeof(float));
    m->d_x = calloc(NC * 10, sizeof(float)); /* d_x, d_ln, d_f (2, 4C) */
    m->weights = calloc((size_t)cfg->n_heads * cfg->T * cfg->T, sizeof(float));
    if (!m->params || !m->grads || !m->adam_m || !m->adam_v || !m->act_block ||
        !m->d_x || !m->weights) {
        gpt_free(m);
        return KIT_E_NOMEM;
    }
    point_params(&m->p, m->params, cfg);
    point_params(&m->g, m->grads, cfg);
    m->d_ln = m->d_x + NC;
    m->d_f = m->d_ln + NC;

    /* 2. GPT-2's starting weights: N(0, 0.02); the two projections that
     *    add into the residual stream scaled by 1/sqrt(2L); gains 1 */
    struct rng r;
    rng_seed(&r, seed);
    const float sd = 0.02f, sd_res = 0.02f / sqrtf(2.0f * (float)cfg->L);
    for (int k = 0; k < GPT_N_TENSORS; k++) {
        float *t = m->p.t[k];
        const int n = gpt_tensor_size(cfg, k);
        if (k == GPT_LN1_G || k == GPT_LN2_G || k == GPT_LNF_G)
            for (int i = 0; i < n; i++)
                t[i] = 1.0f;
        else if (k == GPT_W_O || k == GPT_W_PROJ)
            fill_normal(&r, t, n, sd_res);
        else if (TENSORS[k].decays) /* the other matrices, embeddings */
            fill_normal(&r, t, n, sd);
        /* biases stay 0 */
    }
    return KIT_OK;
}
/* @end gpt_init */

/* ---------------------------------------------------------------------
 * The pieces: GELU, a linear layer, the MLP, cross-entropy
 * ------------------------------------------------------------------- */

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */
#define GELU_A 0.044715f

/* @listing gelu */
/* y = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3). */
void gelu_forward(const float *x, float *y, int n)
{
    for (int i = 0; i < n; i++) {
        float u = GELU_K * (x[i] + GELU_A * x[i] * x[i] * x[i]);
        y[i] = 0.5f * x[i] * (1.0f + tanhf(u));
    }
}

/* dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx,
 * du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2). */
void gelu_backward(const float *x, const float *d_y, float *d_x, int n)
{
    for (int i = 0; i < n; i++) {
        float u = GELU_K * (x[i] + GELU_A * x[i] * x[i] * x[i]);
        float th = tanhf(u);
        float du = GELU_K * (1.0f + 3.0f * GELU_A * x[i] * x[i]);
        float dy_dx = 0.5f * (1.0f + th) + 0.5f * x[i] * (1.0f - th * th) * du;
        d_x[i] += dy_dx * d_y[i];
    }
}
/* @end gelu */

/* @listing linear */
/* out = in W + b.  in (N, n_in), W (n_in, n_out), b (n_out), out (N, n_out). */
int linear_forward(const float *in, const float *W, const float *b, float *out,
                   int N, int n_in, int n_out)
{
    TRY(matmul(in, W, out, N, n_in, n_out)); /* the student's chapter 1 */
    if (b)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < n_out; j++)
                out[i * n_out + j] += b[j];
    return KIT_OK;
}

/* d_in += d_out W^T, d_W += in^T d_out, d_b += sum over rows of d_out. */
int linear_backward(const float *in, const float *W, const float *d_out,
                    float *d_in, float *d_W, float *d_b, int N, int n_in,
                    int n_out)
{
    /* out = in W: the student's chapter 4 */
    TRY(matmul_backward(in, W, d_out, d_in, d_W, N, n_in, n_out));
    /* out += b: every row adds b, so b collects every row's gradient */
    if (d_b)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < n_out; j++)
                d_b[j] += d_out[i * n_out + j];
    return KIT_OK;
}
/* @end linear */

/* @listing mlp */
/* out = GELU(x W_fc + b_fc) W_proj + b_proj.
 * x, out (N, C); fc, gelu (N, F), F = 4C. */
int mlp_forward(const float *x, const float *W_fc, const float *b_fc,
                const float *W_proj, const float *b_proj, float *fc,
                float *gelu, float *out, int N, int C)
{
    if (!x || !W_fc || !b_fc || !W_proj || !b_proj || !fc || !gelu || !out)
        return KIT_E_NULL;
    const int F = 4 * C;
    /* 1. fc = x W_fc + b_fc */
    TRY(linear_forward(x, W_fc, b_fc, fc, N, C, F));
    /* 2. gelu = GELU(fc) */
    gelu_forward(fc, gelu, N * F);
    /* 3. out = gelu W_proj + b_proj */
    return linear_forward(gelu, W_proj, b_proj, out, N, F, C);
}

/* mlp_forward() backward, steps 3 to 1. scratch (2, N, F): d_gelu, d_fc. */
int mlp_backward(const float *x, const float *W_fc, const float *W_proj,
                 const float *fc, const float *gelu, const float *d_out,
                 float *scratch, float *d_x, float *d_W_fc, float *d_b_fc,
                 float *d_W_proj, float *d_b_proj, int N, int C)
{
    if (!x || !W_fc || !W_proj || !fc || !gelu || !d_out || !scratch || !d_x ||
        !d_W_fc || !d_b_fc || !d_W_proj || !d_b_proj)
        return KIT_E_NULL;
    if (N <= 0 || C <= 0)
        return KIT_E_SIZE;
    const int F = 4 * C;
    float *d_gelu = scratch, *d_fc = scratch + (size_t)N * F; /* (N, F) */
    memset(scratch, 0, 2 * (size_t)N * F * sizeof(float));
    /* 3. out = gelu W_proj + b_proj */
    TRY(linear_backward(gelu, W_proj, d_out, d_gelu, d_W_proj, d_b_proj, N, F,
                        C));
    /* 2. gelu = GELU(fc) */
    gelu_backward(fc, d_gelu, d_fc, N * F);
    /* 1. fc = x W_fc + b_fc */
    return linear_backward(x, W_fc, d_fc, d_x, d_W_fc, d_b_fc, N, C, F);
}
/* @end mlp */

/* @listing crossentropy */
/* probs = softmax(logits) per row, losses[i] = -log probs[i][targets[i]].
 * logits, probs (N, V); targets, losses (N). */
int crossentropy_forward(const float *logits, const int *targets, float *probs,
                         float *losses, int N, int V)
{
    if (!logits || !targets || !probs || !losses)
        return KIT_E_NULL;
    if (N <= 0 || V <= 0)
        return KIT_E_SIZE;
    for (int i = 0; i < N; i++)
        if (targets[i] < 0 || targets[i] >= V)
            return KIT_E_SIZE;
    for (int i = 0; i < N; i++) {
        const float *z = logits + (size_t)i * V;
        float *p = probs + (size_t)i * V;
        /* 1. the row's max, subtracted so that exp() cannot overflow */
        float max = z[0];
        for (int j = 1; j < V; j++)
            max = z[j] > max ? z[j] : max;
        /* 2. exp and the sum, in double */
        double sum = 0;
        for (int j = 0; j < V; j++) {
            p[j] = expf(z[j] - max);
            sum += p[j];
        }
        /* 3. normalise; -log p[target] = log(sum) - (z[target] - max) */
        for (int j = 0; j < V; j++)
            p[j] = (float)(p[j] / sum);
        losses[i] = (float)(log(sum) - (double)(z[targets[i]] - max));
    }
    return KIT_OK;
}

/* d_logits[i][j] += scale * (probs[i][j] - (j == targets[i])). */
int crossentropy_backward(const float *probs, const int *targets,
                          float *d_logits, float scale, int N, int V)
{
    if (!probs || !targets || !d_logits)
        return KIT_E_NULL;
    if (N <= 0 || V <= 0)
        return KIT_E_SIZE;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < V; j++) {
            size_t k = (size_t)i * V + j;
            d_logits[k] += scale * (probs[k] - (j == targets[i] ? 1.0f : 0));
        }
    return KIT_OK;
}
/* @end crossentropy */

/* ---------------------------------------------------------------------
 * The forward pass
 * ------------------------------------------------------------------- */

/* Block l's pointers, for the current batch of N rows. */
struct block_view {
    const float *x_in; /* (N, C) the block's input          */
    float *ln1, *ln1_mean, *ln1_rstd, *attn, *x_mid;
    float *ln2, *ln2_mean, *ln2_rstd, *fc, *gelu, *x_out;
};

static struct block_view block_view(const struct gpt_model *m, int l)
{
    const struct gpt_acts *a = &m->a;
    const int N = m->B * m->T, NC = N * m->cfg.C, NF = 4 * NC;
    struct block_view v = {
        l == 0 ? a->x0 : a->x_out + (l - 1) * NC,
        a->ln1 + l * NC,
        a->ln1_mean + l * N,
        a->ln1_rstd + l * N,
        a->attn + l * NC,
        a->x_mid + l * NC,
        a->ln2 + l * NC,
        a->ln2_mean + l * N,
        a->ln2_rstd + l * N,
        a->fc + l * NF,
        a->gelu + l * NF,
        a->x_out + l * NC,
    };
    return v;
}

/* @listing gpt_forward */
/* logits = LN_f(blocks(W_te[x] + W_pe)) W_te^T; the mean loss if
 * targets.  x, targets (B, T_used). */
int gpt_forward(struct gpt_model *m, const int *x, const int *targets, int B,
                int T_used)
{
    if (!m || !x)
        return KIT_E_NULL;
    const struct gpt_config *c = &m->cfg;
    if (B <= 0 || B > c->B || T_used <= 0 || T_used > c->T)
        return KIT_E_SIZE;
    if (m->ablation && (m->ablation->block < 0 || m->ablation->block >= c->L))
        return KIT_E_SIZE;
    const int T = T_used, N = B * T, C = c->C, V = c->V;
    for (int i = 0; i < N; i++)
        if (x[i] < 0 || x[i] >= V)
            return KIT_E_SIZE;
    m->B = B, m->T = T, m->x = x, m->targets = targets, m->loss = 0;
    m->ablated = m->ablation != NULL;
    point_acts(&m->a, m->act_block, B, T, c); /* packed for this batch */
    const struct gpt_params *p = &m->p;
    struct gpt_acts *a = &m->a;

    /* 1. X_0 = W_te[x] + W_pe: a token's row plus its position's row */
    for (int i = 0; i < N; i++)
        for (int k = 0; k < C; k++)
            a->x0[i * C + k] =
                p->t[GPT_WTE][x[i] * C + k] + p->t[GPT_WPE][(i % T) * C + k];

    for (int l = 0; l < c->L; l++) {
        struct block_view v = block_view(m, l);
        struct mha_weights w = gpt_block_attn(p, c, l);
        const float *ln1_g = p->t[GPT_LN1_G] + l * C;
        const float *ln1_b = p->t[GPT_LN1_B] + l * C;
        const float *ln2_g = p->t[GPT_LN2_G] + l * C;
        const float *ln2_b = p->t[GPT_LN2_B] + l * C;
        /* 2. attn = MultiHead(LN1(X)), one sequence at a time, causal */
        TRY(layernorm_forward(v.x_in, ln1_g, ln1_b, v.ln1, v.ln1_mean,
                              v.ln1_rstd, N, C));
        for (int b = 0; b < B; b++) {
            TRY(mha_forward(&m->attn_cfg, &w, v.ln1 + b * T * C,
                            v.attn + b * T * C, m->weights, T));
            /* chapter 8's hook: one head replaced by its mean */
            if (m->ablation && m->ablation->block == l)
                TRY(heads_apply_ablation(m, v.ln1 + b * T * C,
                                         v.attn + b * T * C, T));
        }
        /* 3. X_mid = X + attn: the first residual connection */
        for (int i = 0; i < N * C; i++)
            v.x_mid[i] = v.x_in[i] + v.attn[i];
        /* 4. X_out = X_mid + MLP(LN2(X_mid)): the second */
        TRY(layernorm_forward(v.x_mid, ln2_g, ln2_b, v.ln2, v.ln2_mean,
                              v.ln2_rstd, N, C));
        TRY(mlp_forward(v.ln2, p->t[GPT_W_FC] + l * C * 4 * C,
                        p->t[GPT_B_FC] + l * 4 * C,
                        p->t[GPT_W_PROJ] + l * 4 * C * C,
                        p->t[GPT_B_PROJ] + l * C, v.fc, v.gelu, v.x_out, N, C));
        for (int i = 0; i < N * C; i++)
            v.x_out[i] += v.x_mid[i];
    }

    /* 5. the final LayerNorm */
    const float *x_last = a->x_out + (c->L - 1) * N * C;
    TRY(layernorm_forward(x_last, p->t[GPT_LNF_G], p->t[GPT_LNF_B], a->lnf,
                          a->lnf_mean, a->lnf_rstd, N, C));
    /* 6. logits = LN_f(X) W_te^T: the output shares the token embedding */
    TRY(matmul_bt(a->lnf, p->t[GPT_WTE], a->logits, N, C, V));
    /* 7. loss = mean over the N positions of -log softmax[target] */
    if (!targets)
        return KIT_OK;
    TRY(crossentropy_forward(a->logits, targets, a->probs, a->losses, N, V));
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += a->losses[i];
    m->loss = (float)(sum / N);
    return KIT_OK;
}
/* @end gpt_forward */

void gpt_zero_grad(struct gpt_model *m)
{
    memset(m->grads, 0, (size_t)m->n_params * sizeof(float));
}

/* ---------------------------------------------------------------------
 * The backward pass
 * ------------------------------------------------------------------- */

/* @listing gpt_backward */
/* gpt_forward() backward, step for step in reverse: grads += d loss. */
int gpt_backward(struct gpt_model *m)
{
    if (!m)
        return KIT_E_NULL;
    if (!m->targets || m->B <= 0 || m->ablated)
        return KIT_E_SIZE; /* no forward pass with targets to undo */
    const struct gpt_config *c = &m->cfg;
    const int B = m->B, T = m->T, N = B * T, C = c->C, V = c->V;
    const struct gpt_params *p = &m->p, *g = &m->g;
    struct gpt_acts *a = &m->a;
    float *d_x = m->d_x, *d_ln = m->d_ln;
    const size_t NC = (size_t)N * C;

    /* 7. loss = mean of losses: d_logits = (probs - onehot) / N. The
     *    logits are not needed any more: d_logits takes their place */
    float *d_logits = a->logits;
    memset(d_logits, 0, (size_t)N * V * sizeof(float));
    TRY(crossentropy_backward(a->probs, m->targets, d_logits, 1.0f / N, N, V));
    /* 6. logits = LN_f(X) W_te^T:
     *    d_lnf = d_logits W_te (N, C), written into d_ln;
     *    d_W_te += d_logits^T lnf (V, C), matmul_backward()'s rule
     *    d_B += A^T d_C with A = d_logits, d_C = lnf (its B, W_te, is
     *    only read for d_A, which is not asked for) */
    TRY(matmul(d_logits, p->t[GPT_WTE], d_ln, N, V, C));
    TRY(matmul_backward(d_logits, p->t[GPT_WTE], a->lnf, NULL, g->t[GPT_WTE], N,
                        V, C));
    /* 5. the final LayerNorm: d_x = d X after the last block */
    const float *x_last = a->x_out + (c->L - 1) * N * C;
    memset(d_x, 0, NC * sizeof(float));
    TRY(layernorm_backward(x_last, p->t[GPT_LNF_G], a->lnf_mean, a->lnf_rstd,
                           d_ln, d_x, g->t[GPT_LNF_G], g->t[GPT_LNF_B], N, C));

    for (int l = c->L - 1; l >= 0; l--) {
        struct block_view v = block_view(m, l);
        struct mha_weights w = gpt_block_attn(p, c, l);
        struct mha_weights d_w = gpt_block_attn(g, c, l);
        /* 4. X_out = X_mid + MLP(LN2(X_mid)): d_x reaches X_mid both
         *    directly (it stays in d_x) and through the MLP and LN2
         *    (layernorm_backward adds into d_x) */
        memset(d_ln, 0, NC * sizeof(float));
        TRY(mlp_backward(
            v.ln2, p->t[GPT_W_FC] + l * C * 4 * C,
            p->t[GPT_W_PROJ] + l * 4 * C * C, v.fc, v.gelu, d_x, m->d_f, d_ln,
            g->t[GPT_W_FC] + l * C * 4 * C, g->t[GPT_B_FC] + l * 4 * C,
            g->t[GPT_W_PROJ] + l * 4 * C * C, g->t[GPT_B_PROJ] + l * C, N, C));
        TRY(layernorm_backward(v.x_mid, p->t[GPT_LN2_G] + l * C, v.ln2_mean,
                               v.ln2_rstd, d_ln, d_x, g->t[GPT_LN2_G] + l * C,
                               g->t[GPT_LN2_B] + l * C, N, C));
        /* 3. and 2. X_mid = X + MultiHead(LN1(X)): the same two ways */
        memset(d_ln, 0, NC * sizeof(float));
        for (int b = 0; b < B; b++)
            TRY(mha_backward(&m->attn_cfg, &w, v.ln1 + b * T * C,
                             d_x + b * T * C, d_ln + b * T * C, &d_w, T));
        TRY(layernorm_backward(v.x_in, p->t[GPT_LN1_G] + l * C, v.ln1_mean,
                               v.ln1_rstd, d_ln, d_x, g->t[GPT_LN1_G] + l * C,
                               g->t[GPT_LN1_B] + l * C, N, C));
    }

    /* 1. X_0 = W_te[x] + W_pe: each row's gradient goes back to the token
     *    and the position it came from */
    for (int i = 0; i < N; i++)
        for (int k = 0; k < C; k++) {
            g->t[GPT_WTE][m->x[i] * C + k] += d_x[i * C + k];
            g->t[GPT_WPE][(i % T) * C + k] += d_x[i * C + k];
        }
    m->targets = NULL; /* the logits are gone: one backward per forward */
    return KIT_OK;
}
/* @end gpt_backward */

/* ---------------------------------------------------------------------
 * Training
 * ------------------------------------------------------------------- */

struct gpt_train_config gpt_default_train(int steps)
{
    struct gpt_train_config tc = {1e-3f, 1e-4f, steps / 10, steps, 0.9f,
                                  0.95f, 1e-8f, 0.1f,       1.0f};
    return tc;
}

#define PI 3.14159265358979323846

/* @listing gpt_lr_at */
/* Linear warm-up to lr, then a cosine from lr down to lr_min. */
float gpt_lr_at(const struct gpt_train_config *tc, int step)
{
    if (step < tc->warmup)
        return tc->lr * (float)(step + 1) / (float)tc->warmup;
    const int span = tc->steps - 1 - tc->warmup;
    if (step >= tc->steps - 1 || span <= 0)
        return step >= tc->steps - 1 && span > 0 ? tc->lr_min : tc->lr;
    const double f = (double)(step - tc->warmup) / span;
    return tc->lr_min +
           (float)((tc->lr - tc->lr_min) * 0.5 * (1.0 + cos(PI * f)));
}
/* @end gpt_lr_at */

/* @listing adamw_update */
/* Decoupled decay, then Adam with bias correction, as torch's AdamW. */
void adamw_update(float *p, const float *g, float *m, float *v, int n, int t,
                  float lr, float beta1, float beta2, float eps, float wd)
{
    const float c1 = 1.0f - powf(beta1, (float)t);
    const float c2 = 1.0f - powf(beta2, (float)t);
    for (int i = 0; i < n; i++) {
        p[i] -= lr * wd * p[i]; /* the decay, apart from the gradient */
        m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        float m_hat = m[i] / c1, v_hat = v[i] / c2;
        p[i] -= lr * m_hat / (sqrtf(v_hat) + eps);
    }
}
/* @end adamw_update */

/* @listing gpt_clip_grads */
/* norm = sqrt(sum g^2); above clip, every g *= clip / norm. */
float gpt_clip_grads(struct gpt_model *m, float clip)
{
    double sum = 0;
    for (int i = 0; i < m->n_params; i++)
        sum += (double)m->grads[i] * m->grads[i];
    const float norm = (float)sqrt(sum);
    if (clip > 0 && norm > clip) {
        const float s = clip / (norm + 1e-6f); /* as torch's clip_grad_norm_ */
        for (int i = 0; i < m->n_params; i++)
            m->grads[i] *= s;
    }
    return norm;
}
/* @end gpt_clip_grads */

void gpt_adamw_step(struct gpt_model *m, const struct gpt_train_config *tc,
                    float lr)
{
    m->adam_t++;
    for (int k = 0; k < GPT_N_TENSORS; k++) {
        const int at = (int)(m->p.t[k] - m->params);
        adamw_update(m->params + at, m->grads + at, m->adam_m + at,
                     m->adam_v + at, gpt_tensor_size(&m->cfg, k), m->adam_t, lr,
                     tc->beta1, tc->beta2, tc->eps,
                     gpt_tensor_decays(k) ? tc->weight_decay : 0.0f);
    }
}

/* @listing gpt_train_step */
/* forward, backward, clip, one AdamW step at the schedule's rate. */
int gpt_train_step(struct gpt_model *m, const struct gpt_train_config *tc,
                   int step, const int *x, const int *targets, int B,
                   int T_used, float *loss, float *norm)
{
    if (!m || !tc || !x || !targets || !loss)
        return KIT_E_NULL;
    TRY(gpt_forward(m, x, targets, B, T_used));
    *loss = m->loss;
    gpt_zero_grad(m);
    TRY(gpt_backward(m));
    float n = gpt_clip_grads(m, tc->clip);
    if (norm)
        *norm = n;
    gpt_adamw_step(m, tc, gpt_lr_at(tc, step));
    return KIT_OK;
}
/* @end gpt_train_step */

/* ---------------------------------------------------------------------
 * Generation
 * ------------------------------------------------------------------- */

static int descending(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

/* @listing gpt_sample_token */
/* softmax(logits / temperature) over the top_k largest; draw one. */
int gpt_sample_token(const float *logits, float *probs, int V,
                     float temperature, int top_k, struct rng *r)
{
    int best = 0;
    for (int j = 1; j < V; j++)
        if (logits[j] > logits[best])
            best = j;
    if (temperature <= 0)
        return best; /* greedy */
    /* 1. the k-th largest logit is the cut: below it, probability 0 */
    float cut = -INFINITY;
    if (top_k > 0 && top_k < V) {
        memcpy(probs, logits, (size_t)V * sizeof(float));
        qsort(probs, (size_t)V, sizeof(float), descending);
        cut = probs[top_k - 1];
    }
    /* 2. softmax of logits / temperature over what is kept */
    double sum = 0;
    for (int j = 0; j < V; j++) {
        probs[j] = logits[j] >= cut
                       ? expf((logits[j] - logits[best]) / temperature)
                       : 0.0f;
        sum += probs[j];
    }
    /* 3. walk the cumulative sum up to a uniform draw */
    double u = rng_uniform(r) * sum, acc = 0;
    for (int j = 0; j < V; j++) {
        acc += probs[j];
        if (probs[j] > 0 && u < acc)
            return j;
    }
    return best; /* u landed on the rounding at the very end */
}
/* @end gpt_sample_token */

/* @listing gpt_generate */
/* out (n_prompt + n_new): each new token from the logits at the last of
 * the last T tokens. */
int gpt_generate(struct gpt_model *m, int *out, int n_prompt, int n_new,
                 float temperature, int top_k, unsigned long long seed)
{
    if (!m || !out)
        return KIT_E_NULL;
    if (n_prompt <= 0 || n_new < 0)
        return KIT_E_SIZE;
    const int V = m->cfg.V;
    float *probs = malloc((size_t)V * sizeof *probs);
    if (!probs)
        return KIT_E_NOMEM;
    struct rng r;
    rng_seed(&r, seed);
    int status = KIT_OK;
    for (int n = n_prompt; n < n_prompt + n_new && status == KIT_OK; n++) {
        const int t = n < m->cfg.T ? n : m->cfg.T; /* the window */
        status = gpt_forward(m, out + n - t, NULL, 1, t);
        if (status == KIT_OK)
            out[n] = gpt_sample_token(m->a.logits + (size_t)(t - 1) * V, probs,
                                      V, temperature, top_k, &r);
    }
    free(probs);
    return status;
}
/* @end gpt_generate */
