/*
 * gpt.c: chapter 8, a small GPT trained in C (gpt.h).
 * Given code, read in chapter 8: the model's memory, its forward and
 * backward passes, AdamW with its schedule and clipping, and sampling.
 * Attention is the student's: mha_forward_flash() (chapter 7, causal)
 * forward and mha_backward() (chapter 4) backward; the products are
 * chapter 7's matmul_fast(), with the transposes it needs done here into
 * scratch; LayerNorm is this chapter's exercise (layernorm_forward,
 * layernorm_backward). Any error they return is passed on, so on the
 * starter stubs every pass here fails at once with KIT_E_TODO.
 *
 * Where the time goes at the book's size (V 8192, C 64): the output
 * layer, logits = LN_f(X) W_te^T, (B*T, 64) x (64, 8192), and its two
 * backward products, each as large as the forward one. So the
 * cross-entropy is fused: one pass over each row of logits turns it, in
 * place, into d loss / d logits, and no (B*T, V) array of probabilities
 * is ever stored, and the output layer works on chunks of rows, one
 * chunk's logits in the cache from their product to the backward pass.
 * The threads are OpenMP's: inside matmul_fast() (the blocks' products),
 * over the chunks of the output layer, and over the sequences of the
 * attention (each chunk's and each sequence's weight gradients apart,
 * summed in order, so the result does not depend on the thread count).
 *
 * What this file will not do: write a product or an attention of its
 * own, or keep a KV cache for generation. The code follows the maths in
 * the order gpt.h writes it.
 *
 * Dimension letters (see gpt.h):
 *   B = sequences, T = tokens per sequence, C = d_model, F = 4C,
 *   V = vocabulary, L = blocks, h = heads, N = B*T rows, P = parameters.
 */
#include "gpt.h"

#include "attention.h"
#include "fast.h"
#include "grad.h"
#include "rng.h"
#include "test_hooks.h" /* what the tests call beside the API */

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

struct gpt_config gpt_default_config(void)
{
    return (struct gpt_config){
        .V = 8192, .T = 64, .C = 64, .L = 2, .n_heads = 4, .B = 16};
}

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
        {&a->logits, N * V},   {&a->losses, N},
    };
    int used = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        *table[i].view = block ? block + used : NULL;
        used += table[i].n;
    }
    return used;
}
/* @end gpt_point_acts */

void gpt_point_acts(struct gpt_model *m)
{
    if (m->B > 0)
        point_acts(&m->a, m->act_block, m->B, m->T, &m->cfg);
    else
        memset(&m->a, 0, sizeof m->a);
}

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
    free(m->scratch);
    free(m->d_attn);
    memset(m, 0, sizeof *m);
}

/* Fill x (n) with normal numbers of standard deviation sd. */
static void fill_normal(struct rng *r, float *x, int n, float sd)
{
    for (int i = 0; i < n; i++)
        x[i] = sd * (float)rng_normal(r);
}

/* The readout (logits = LN_f(X) W_te^T, the loss, and their backward
 * pass) works on chunks of GPT_OUT_ROWS rows of the N, the last one
 * shorter: one chunk's logits (at the default V, 8 MB) stay in the
 * cache from their product through the loss to the two products of the
 * backward pass, and each chunk's share of d W_te is kept apart
 * (readout_backward()). How many chunks: */
#define GPT_OUT_ROWS 256
static int readout_chunks(int N)
{
    return (N + GPT_OUT_ROWS - 1) / GPT_OUT_ROWS;
}

/* The attention's backward pass (attention_backward_batch()) works on
 * each sequence's heads one at a time, in scratch of its own: a head's
 * Q, K, V, output, their four gradients (T, d_head) each, and its
 * weights (T, T). */
static size_t attn_seq_floats(int T, int C, int h)
{
    return 8 * (size_t)T * (C / h) + (size_t)T * T;
}

/* @listing gpt_init */
/* Lay out and allocate m for cfg (already checked), every number 0. */
int gpt_layout(struct gpt_model *m, const struct gpt_config *cfg)
{
    if (!m || !cfg)
        return KIT_E_NULL;
    memset(m, 0, sizeof *m);
    m->attn_cfg = (struct mha_config){cfg->C, cfg->n_heads, 1};
    m->cfg = *cfg;
    /* count, then allocate: parameters, gradients, AdamW's moments, the
     * activations, the backward pass's scratch */
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
    /* W_te^T (C, V) forward; backward, LN_f(X)^T chunk by chunk (C, N)
     * and each chunk's d W_te^T (C, V) (readout_chunks()) */
    m->scratch = calloc((size_t)cfg->C *
                            (cfg->B * cfg->T +
                             readout_chunks(cfg->B * cfg->T) * (size_t)cfg->V),
                        sizeof(float));
    /* the attention's backward pass: nine (N, C), two (C, C), and each
     * sequence's heads' (attn_seq_floats()) */
    m->d_attn = calloc(9 * NC + 2 * (size_t)cfg->C * cfg->C +
                           (size_t)cfg->B *
                               attn_seq_floats(cfg->T, cfg->C, cfg->n_heads),
                       sizeof(float));
    if (!m->params || !m->grads || !m->adam_m || !m->adam_v || !m->act_block ||
        !m->d_x || !m->scratch || !m->d_attn) {
        gpt_free(m);
        return KIT_E_NOMEM;
    }
    point_params(&m->p, m->params, cfg);
    point_params(&m->g, m->grads, cfg);
    m->d_ln = m->d_x + NC;
    m->d_f = m->d_ln + NC;
    return KIT_OK;
}

/* Check cfg, lay out and allocate, draw GPT-2's starting weights. */
int gpt_init(struct gpt_model *m, const struct gpt_config *cfg,
             unsigned long long seed)
{
    if (!m || !cfg)
        return KIT_E_NULL;
    memset(m, 0, sizeof *m);
    /* 1. the student's chapter 3 check of the attention's sizes first, as
     *    mha_forward() will make it; then the rest of the model's */
    const struct mha_config attn = {cfg->C, cfg->n_heads, 1};
    TRY(mha_check_config(&attn));
    TRY(gpt_check_config(cfg, NULL, 0));
    TRY(gpt_layout(m, cfg));

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
/* tanh(u) = 1 - 2 / (exp(2u) + 1), with fast_expf() (fast.h), so that the
 * loops below become vector code (tanhf() is a call per number). Off
 * by a few units in the last place of 1 near u = 0, where the 1 is
 * what counts in 1 + tanh(u); fast_expf()'s clamps give +-1 far out. */
static inline float gelu_tanh(float u)
{
    return 1.0f - 2.0f / (fast_expf(2.0f * u) + 1.0f);
}

/* y = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3). */
void gelu_forward(const float *x, float *y, int n)
{
    for (int i = 0; i < n; i++) {
        float u = GELU_K * (x[i] + GELU_A * x[i] * x[i] * x[i]);
        y[i] = 0.5f * x[i] * (1.0f + gelu_tanh(u));
    }
}

/* dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx,
 * du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2). */
void gelu_backward(const float *x, const float *d_y, float *d_x, int n)
{
    for (int i = 0; i < n; i++) {
        float u = GELU_K * (x[i] + GELU_A * x[i] * x[i] * x[i]);
        float th = gelu_tanh(u);
        float du = GELU_K * (1.0f + 3.0f * GELU_A * x[i] * x[i]);
        float dy_dx = 0.5f * (1.0f + th) + 0.5f * x[i] * (1.0f - th * th) * du;
        d_x[i] += dy_dx * d_y[i];
    }
}
/* @end gelu */

/* ---------------------------------------------------------------------
 * The products: chapter 7's matmul_fast() and the transposes it needs
 * ------------------------------------------------------------------- */

/* @listing gpt_transpose */
/* At = A^T.  A (rows, cols), At (cols, rows). In square tiles, so that
 * the rows read and the rows written both stay in the cache. */
static void transpose(const float *A, float *At, int rows, int cols)
{
    enum { TILE = 32 };
    for (int i0 = 0; i0 < rows; i0 += TILE)
        for (int j0 = 0; j0 < cols; j0 += TILE) {
            const int i1 = i0 + TILE < rows ? i0 + TILE : rows;
            const int j1 = j0 + TILE < cols ? j0 + TILE : cols;
            for (int j = j0; j < j1; j++) /* writes along At's rows */
                for (int i = i0; i < i1; i++)
                    At[(size_t)j * rows + i] = A[(size_t)i * cols + j];
        }
}

/* Y += X^T.  X (rows, cols), Y (cols, rows): a backward pass adds. */
static void add_transposed(const float *X, float *Y, int rows, int cols)
{
    enum { TILE = 32 };
    for (int j0 = 0; j0 < cols; j0 += TILE)
        for (int i0 = 0; i0 < rows; i0 += TILE) {
            const int i1 = i0 + TILE < rows ? i0 + TILE : rows;
            const int j1 = j0 + TILE < cols ? j0 + TILE : cols;
            for (int j = j0; j < j1; j++)
                for (int i = i0; i < i1; i++)
                    Y[(size_t)j * rows + i] += X[(size_t)i * cols + j];
        }
}

/* y += x.  x, y (n). */
static void add_into(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] += x[i];
}
/* @end gpt_transpose */

/* @listing linear */
/* out = in W + b.  in (N, n_in), W (n_in, n_out), b (n_out), out (N, n_out). */
int linear_forward(const float *in, const float *W, const float *b, float *out,
                   int N, int n_in, int n_out)
{
    TRY(matmul_fast(in, W, out, N, n_in, n_out)); /* the student's ch. 7 */
    if (b)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < n_out; j++)
                out[i * n_out + j] += b[j];
    return KIT_OK;
}

/* d_in += d_out W^T, d_W += in^T d_out, d_b += sum over rows of d_out.
 * matmul_fast() overwrites, so each product goes to scratch first. */
int linear_backward(const float *in, const float *W, const float *d_out,
                    float *d_in, float *d_W, float *d_b, int N, int n_in,
                    int n_out)
{
    if (!in || !W || !d_out)
        return KIT_E_NULL;
    if (N <= 0 || n_in <= 0 || n_out <= 0)
        return KIT_E_SIZE;
    /* a transposed operand, then the product: n_in (n_out + N) floats */
    float *scratch = malloc((size_t)n_in * (n_out + N) * sizeof *scratch);
    if (!scratch)
        return KIT_E_NOMEM;
    int status = KIT_OK;
    /* 1. d_in += d_out W^T: W^T (n_out, n_in), the product (N, n_in) */
    float *W_t = scratch, *prod = scratch + (size_t)n_out * n_in;
    if (d_in) {
        transpose(W, W_t, n_in, n_out);
        status = matmul_fast(d_out, W_t, prod, N, n_out, n_in);
        if (status == KIT_OK)
            add_into(d_in, prod, (size_t)N * n_in);
    }
    /* 2. d_W += in^T d_out: in^T (n_in, N), the product (n_in, n_out) */
    float *in_t = scratch, *prod_w = scratch + (size_t)n_in * N;
    if (d_W && status == KIT_OK) {
        transpose(in, in_t, N, n_in);
        status = matmul_fast(in_t, d_out, prod_w, n_in, N, n_out);
        if (status == KIT_OK)
            add_into(d_W, prod_w, (size_t)n_in * n_out);
    }
    free(scratch);
    TRY(status);
    /* out += b: every row adds b, so b collects every row's gradient */
    if (d_b)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < n_out; j++)
                d_b[j] += d_out[i * n_out + j];
    return KIT_OK;
}
/* @end linear */

/* @listing mlp */
/* The MLP works on its rows in chunks of GPT_MLP_ROWS, a chunk per
 * thread at a time, each chunk's products on that thread: one team of
 * threads for the whole MLP, where matmul_fast() on all N rows would
 * wake the team for every block of its sum (about 2 N / 256 times per
 * backward pass), and every wake-up waits for the slowest thread, for
 * milliseconds on a busy machine. Rows are independent, so the forward
 * pass and d_x do not depend on the chunks; the weight gradients are
 * sums over the rows, so each chunk's share goes into an array of its
 * own, and the shares are added in the chunks' order: the result does
 * not depend on the thread count. */
#define GPT_MLP_ROWS 128
static int mlp_chunks(int N)
{
    return (N + GPT_MLP_ROWS - 1) / GPT_MLP_ROWS;
}

/* out = GELU(x W_fc + b_fc) W_proj + b_proj.
 * x, out (N, C); fc, gelu (N, F), F = 4C. */
int mlp_forward(const float *x, const float *W_fc, const float *b_fc,
                const float *W_proj, const float *b_proj, float *fc,
                float *gelu, float *out, int N, int C)
{
    if (!x || !W_fc || !b_fc || !W_proj || !b_proj || !fc || !gelu || !out)
        return KIT_E_NULL;
    if (N <= 0 || C <= 0)
        return KIT_E_SIZE;
    const int F = 4 * C;
    int status = KIT_OK;
#pragma omp parallel for schedule(dynamic)
    for (int q = 0; q < mlp_chunks(N); q++) {
        const int r0 = q * GPT_MLP_ROWS;
        const int n = N - r0 < GPT_MLP_ROWS ? N - r0 : GPT_MLP_ROWS;
        float *fc_q = fc + (size_t)r0 * F, *gelu_q = gelu + (size_t)r0 * F;
        /* 1. fc = x W_fc + b_fc */
        int rc = linear_forward(x + (size_t)r0 * C, W_fc, b_fc, fc_q, n, C, F);
        if (rc == KIT_OK) {
            /* 2. gelu = GELU(fc) */
            gelu_forward(fc_q, gelu_q, n * F);
            /* 3. out = gelu W_proj + b_proj */
            rc = linear_forward(gelu_q, W_proj, b_proj, out + (size_t)r0 * C, n,
                                F, C);
        }
        if (rc != KIT_OK) {
#pragma omp critical(gpt_status)
            status = status == KIT_OK ? rc : status;
        }
    }
    return status;
}

/* mlp_forward() backward, steps 3 to 1. scratch (2, N, F): d_gelu, d_fc.
 * With more than one chunk, the chunks' weight gradients go to arrays
 * of their own first (W_fc, b_fc, W_proj, b_proj in that order). */
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
    const int F = 4 * C, chunks = mlp_chunks(N);
    const size_t share = 2 * (size_t)C * F + F + C; /* one chunk's */
    float *parts = NULL;
    if (chunks > 1 && !(parts = calloc((size_t)chunks * share, sizeof *parts)))
        return KIT_E_NOMEM;
    int status = KIT_OK;
#pragma omp parallel for schedule(dynamic)
    for (int q = 0; q < chunks; q++) {
        const int r0 = q * GPT_MLP_ROWS;
        const int n = N - r0 < GPT_MLP_ROWS ? N - r0 : GPT_MLP_ROWS;
        float *d_gelu = scratch + (size_t)r0 * F;               /* (n, F) */
        float *d_fc = scratch + (size_t)N * F + (size_t)r0 * F; /* (n, F) */
        float *mine = parts ? parts + (size_t)q * share : NULL;
        float *dW_fc = mine ? mine : d_W_fc;
        float *db_fc = mine ? mine + (size_t)C * F : d_b_fc;
        float *dW_proj = mine ? db_fc + F : d_W_proj;
        float *db_proj = mine ? dW_proj + (size_t)F * C : d_b_proj;
        memset(d_gelu, 0, (size_t)n * F * sizeof(float));
        memset(d_fc, 0, (size_t)n * F * sizeof(float));
        /* 3. out = gelu W_proj + b_proj */
        int rc = linear_backward(gelu + (size_t)r0 * F, W_proj,
                                 d_out + (size_t)r0 * C, d_gelu, dW_proj,
                                 db_proj, n, F, C);
        if (rc == KIT_OK) {
            /* 2. gelu = GELU(fc) */
            gelu_backward(fc + (size_t)r0 * F, d_gelu, d_fc, n * F);
            /* 1. fc = x W_fc + b_fc */
            rc = linear_backward(x + (size_t)r0 * C, W_fc, d_fc,
                                 d_x + (size_t)r0 * C, dW_fc, db_fc, n, C, F);
        }
        if (rc != KIT_OK) {
#pragma omp critical(gpt_status)
            status = status == KIT_OK ? rc : status;
        }
    }
    if (parts && status == KIT_OK) { /* the shares, in the chunks' order */
        float *to[4] = {d_W_fc, d_b_fc, d_W_proj, d_b_proj};
        const size_t at[4] = {0, (size_t)C * F, (size_t)C * F + F,
                              2 * (size_t)C * F + F};
        const size_t len[4] = {(size_t)C * F, (size_t)F, (size_t)F * C,
                               (size_t)C};
        for (int q = 0; q < chunks; q++)
            for (int k = 0; k < 4; k++)
                add_into(to[k], parts + (size_t)q * share + at[k], len[k]);
    }
    free(parts);
    return status;
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

/* @listing crossentropy_fused */
/* The model's cross-entropy: crossentropy_forward() and _backward() in
 * one pass over each row, in place. Row i of z (N, V) holds logits and
 * becomes scale * (softmax(z_i) - onehot(targets[i])); losses[i] =
 * -log softmax(z_i)[targets[i]]. No (N, V) array of probabilities.
 * The max and the sum are kept in CE_W lanes (the loops become vector
 * code) and exp() is fast_expf() (fast.h): the exponents are <= 0. */
enum { CE_W = 16 };
static void crossentropy_row(float *z, int target, float *loss, float scale,
                             int V)
{
    /* 1. the row's max */
    float lane[CE_W], max = z[0];
    for (int c = 0; c < CE_W; c++)
        lane[c] = z[0];
    int j = 0;
    for (; j + CE_W <= V; j += CE_W)
        for (int c = 0; c < CE_W; c++)
            lane[c] = z[j + c] > lane[c] ? z[j + c] : lane[c];
    for (; j < V; j++)
        max = z[j] > max ? z[j] : max;
    for (int c = 0; c < CE_W; c++)
        max = lane[c] > max ? lane[c] : max;
    const float z_target = z[target] - max;
    /* 2. z <- exp(z - max), and the sum */
    double sum = 0;
    for (int c = 0; c < CE_W; c++)
        lane[c] = 0;
    for (j = 0; j + CE_W <= V; j += CE_W)
        for (int c = 0; c < CE_W; c++) {
            z[j + c] = fast_expf(z[j + c] - max);
            lane[c] += z[j + c];
        }
    for (; j < V; j++) {
        z[j] = fast_expf(z[j] - max);
        sum += z[j];
    }
    for (int c = 0; c < CE_W; c++)
        sum += lane[c];
    /* 3. -log p[target] = log(sum) - (z[target] - max); then the
     *    gradient: scale * p, and scale less at the target */
    *loss = (float)(log(sum) - (double)z_target);
    const float k = (float)(scale / sum);
    for (j = 0; j < V; j++)
        z[j] *= k;
    z[target] -= scale;
}

/* @end crossentropy_fused */

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

/* @listing gpt_threads */
/* Threads pay for themselves only on enough work: waking a team costs
 * microseconds, and milliseconds on a busy machine, more than a whole
 * pass of a tiny model takes. A pass of fewer than GPT_THREAD_WORK
 * multiply-adds (about N C (V + 12 C L)) runs on one thread; the
 * results are the same either way. threads_begin() returns the count
 * to give back to threads_end(). */
#define GPT_THREAD_WORK 16e6
static int threads_begin(const struct gpt_model *m, int N)
{
    const struct gpt_config *c = &m->cfg;
    const double work = (double)N * c->C * (c->V + 12.0 * c->C * c->L);
    const int before = kit_max_threads();
#ifdef _OPENMP
    if (work < GPT_THREAD_WORK)
        omp_set_num_threads(1);
#endif
    return before;
}

static void threads_end(int before)
{
#ifdef _OPENMP
    omp_set_num_threads(before);
#else
    (void)before;
#endif
}
/* @end gpt_threads */

static int forward_pass(struct gpt_model *m, const int *x, const int *targets,
                        int B, int T_used);
static int backward_pass(struct gpt_model *m);

int gpt_forward(struct gpt_model *m, const int *x, const int *targets, int B,
                int T_used)
{
    if (!m || !x)
        return KIT_E_NULL;
    const int before = threads_begin(m, B * T_used);
    const int status = forward_pass(m, x, targets, B, T_used);
    threads_end(before);
    return status;
}

int gpt_backward(struct gpt_model *m)
{
    if (!m)
        return KIT_E_NULL;
    const int before = threads_begin(m, m->B * m->T);
    const int status = backward_pass(m);
    threads_end(before);
    return status;
}

/* @listing gpt_attention_forward */
/* The attention of the B sequences, one mha_forward_flash() (causal)
 * per sequence, the sequences shared among the threads (inside one,
 * its own products run on that thread).  ln1, attn (B, T, C). */
static int attention_forward_batch(const struct gpt_model *m,
                                   const struct mha_weights *w,
                                   const float *ln1, float *attn)
{
    const size_t TC = (size_t)m->T * m->cfg.C;
    int status = KIT_OK;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < m->B; b++) {
        int rc = mha_forward_flash(&m->attn_cfg, w, ln1 + b * TC, attn + b * TC,
                                   m->T);
        if (rc != KIT_OK) {
#pragma omp critical(gpt_status)
            status = status == KIT_OK ? rc : status;
        }
    }
    return status;
}
/* @end gpt_attention_forward */

/* @listing gpt_readout_forward */
/* Steps 6 and 7 of gpt_forward(), in chunks of GPT_OUT_ROWS rows, a
 * chunk per thread at a time: its logits by matmul_fast() (inside, on
 * that one thread), then, with targets, the fused cross-entropy of its
 * rows while they are still in the cache. Rows are independent, so the
 * result does not depend on the thread count or the chunk size; with
 * fewer chunks than threads the chunks are made smaller.
 * lnf (N, C), wte_t (C, V), logits (N, V); targets, losses (N). */
static int readout_forward(const float *lnf, const float *wte_t,
                           const int *targets, float *logits, float *losses,
                           int N, int C, int V)
{
    const int threads = kit_max_threads();
    int rows = GPT_OUT_ROWS;
    if (readout_chunks(N) < threads)
        rows = (N + threads - 1) / threads;
    const int chunks = (N + rows - 1) / rows;
    int status = KIT_OK;
#pragma omp parallel for schedule(dynamic)
    for (int q = 0; q < chunks; q++) {
        const int r0 = q * rows, n = N - r0 < rows ? N - r0 : rows;
        float *z = logits + (size_t)r0 * V;
        int rc = matmul_fast(lnf + (size_t)r0 * C, wte_t, z, n, C, V);
        if (rc != KIT_OK) {
#pragma omp critical(gpt_status)
            status = status == KIT_OK ? rc : status;
        } else if (targets)
            for (int i = 0; i < n; i++)
                crossentropy_row(z + (size_t)i * V, targets[r0 + i],
                                 &losses[r0 + i], 1.0f / N, V);
    }
    return status;
}
/* @end gpt_readout_forward */

/* @listing gpt_forward */
/* logits = LN_f(blocks(W_te[x] + W_pe)) W_te^T; the mean loss if
 * targets.  x, targets (B, T_used). */
static int forward_pass(struct gpt_model *m, const int *x, const int *targets,
                        int B, int T_used)
{
    if (!m || !x)
        return KIT_E_NULL;
    const struct gpt_config *c = &m->cfg;
    if (B <= 0 || B > c->B || T_used <= 0 || T_used > c->T)
        return KIT_E_SIZE;
    const int T = T_used, N = B * T, C = c->C, V = c->V;
    for (int i = 0; i < N; i++)
        if (x[i] < 0 || x[i] >= V ||
            (targets && (targets[i] < 0 || targets[i] >= V)))
            return KIT_E_SIZE;
    m->B = B, m->T = T, m->x = x, m->targets = targets, m->loss = 0;
    m->ablated = m->after_attention != NULL;
    gpt_point_acts(m); /* packed for this batch */
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
        TRY(attention_forward_batch(m, &w, v.ln1, v.attn));
        /* the caller's hook, if any (chapter 8's ablations) */
        if (m->after_attention)
            for (int b = 0; b < B; b++)
                TRY(m->after_attention(m->hook_ctx, m, l, v.ln1 + b * T * C,
                                       v.attn + b * T * C, T));
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
    /* 6. logits = LN_f(X) W_te^T: the output shares the token embedding,
     *    transposed into scratch for matmul_fast()
     * 7. loss = mean over the N positions of -log softmax[target]; the
     *    same pass leaves d loss / d logits = (probs - onehot) / N in
     *    place of the logits, for the backward pass. Both by
     *    readout_forward(), a chunk of rows at a time */
    float *wte_t = m->scratch; /* (C, V) */
    transpose(p->t[GPT_WTE], wte_t, V, C);
    TRY(readout_forward(a->lnf, wte_t, targets, a->logits, a->losses, N, C, V));
    if (!targets)
        return KIT_OK;
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

/* @listing gpt_attention_backward */
/* The attention's backward pass for the B sequences of the batch. The
 * four projections are products of the whole batch, (N, C) by (C, C), so
 * they run on chapter 7's matmul_fast(); what happens inside each head is
 * chapter 2's causal_attention() again (its weights, for the way back)
 * and chapter 4's attention_backward(), once per sequence and head, the
 * sequences shared among the threads. In the notation of mha_forward():
 *   Q = X W_q, K = X W_k, V = X W_v            (N, C): head i's columns
 *   concat[:, head i] = attention(Q_i, K_i, V_i)   per sequence
 *   out = concat W_o
 * so, backward:
 *   d concat = d out W_o^T;   d W_o += concat^T d out
 *   d Q_i, d K_i, d V_i from attention_backward(), per sequence and head
 *   d W_q += X^T d Q (and K, V);   d X = d Q W_q^T + d K W_k^T + d V W_v^T
 * Every sum over the batch is a product's own inner loop, so the result
 * does not depend on the thread count.  ln1 (X), d_x (d out), d_ln
 * (d X, written) (B, T, C). */
static int attention_backward_batch(struct gpt_model *m,
                                    const struct mha_weights *w,
                                    const float *ln1, const float *d_x,
                                    float *d_ln, struct mha_weights *d_w)
{
    const int B = m->B, T = m->T, C = m->cfg.C, N = B * T;
    const int h = m->cfg.n_heads, d = C / h;
    const size_t NC = (size_t)N * C, CC = (size_t)C * C;
    float *qkv = m->d_attn;      /* (3, N, C) Q, K, V             */
    float *d_qkv = qkv + 3 * NC; /* (3, N, C) d Q, d K, d V (zeroed) */
    float *cat = d_qkv + 3 * NC, *d_cat = cat + NC; /* (N, C) each */
    float *xt = d_cat + NC;             /* (C, N) a transpose             */
    float *wt = xt + NC, *dw = wt + CC; /* (C, C) each         */
    float *seq = dw + CC;               /* per sequence: attn_seq_floats() */
    const size_t per_seq = attn_seq_floats(T, C, h);
    const float *W[3] = {w->W_q, w->W_k, w->W_v};
    float *d_W[3] = {d_w->W_q, d_w->W_k, d_w->W_v};

    /* the forward projections again, and d concat = d out W_o^T */
    for (int k = 0; k < 3; k++)
        TRY(matmul_fast(ln1, W[k], qkv + k * NC, N, C, C));
    transpose(w->W_o, wt, C, C);
    TRY(matmul_fast(d_x, wt, d_cat, N, C, C));
    memset(d_qkv, 0, 3 * NC * sizeof(float));

    /* inside the heads, a sequence per thread at a time */
    int status = KIT_OK;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < B; b++) {
        float *s = seq + (size_t)b * per_seq;
        float *q = s, *k = q + T * d, *v = k + T * d, *o = v + T * d;
        float *d_o = o + T * d, *d_q = d_o + T * d, *d_k = d_q + T * d;
        float *d_v = d_k + T * d, *wts = d_v + T * d; /* (T, T) */
        for (int i = 0; i < h; i++) {
            const size_t at = (size_t)b * T * C + (size_t)i * d;
            for (int t = 0; t < T; t++) /* head i's columns, gathered */
                for (int c = 0; c < d; c++) {
                    const size_t src = at + (size_t)t * C + c;
                    q[t * d + c] = qkv[src];
                    k[t * d + c] = qkv[NC + src];
                    v[t * d + c] = qkv[2 * NC + src];
                    d_o[t * d + c] = d_cat[src];
                }
            memset(d_q, 0, 3 * (size_t)T * d * sizeof(float));
            int rc = causal_attention(q, k, v, o, wts, T, d, d);
            if (rc == KIT_OK)
                rc = attention_backward(q, k, v, wts, d_o, d_q, d_k, d_v, T, d,
                                        d, 1);
            if (rc != KIT_OK) {
#pragma omp critical(gpt_status)
                status = status == KIT_OK ? rc : status;
                break;
            }
            for (int t = 0; t < T; t++) /* and scattered back */
                for (int c = 0; c < d; c++) {
                    const size_t dst = at + (size_t)t * C + c;
                    cat[dst] = o[t * d + c];
                    d_qkv[dst] = d_q[t * d + c];
                    d_qkv[NC + dst] = d_k[t * d + c];
                    d_qkv[2 * NC + dst] = d_v[t * d + c];
                }
        }
    }
    TRY(status);

    /* the weights' gradients, X^T d Q and concat^T d out, and d X */
    transpose(cat, xt, N, C);
    TRY(matmul_fast(xt, d_x, dw, C, N, C));
    add_into(d_w->W_o, dw, CC);
    transpose(ln1, xt, N, C);
    for (int k = 0; k < 3; k++) {
        TRY(matmul_fast(xt, d_qkv + k * NC, dw, C, N, C));
        add_into(d_W[k], dw, CC);
        transpose(W[k], wt, C, C);
        /* d X += d Q W_q^T: into cat, no longer needed, then added */
        TRY(matmul_fast(d_qkv + k * NC, wt, cat, N, C, C));
        add_into(d_ln, cat, NC);
    }
    return KIT_OK;
}
/* @end gpt_attention_backward */

/* @listing gpt_readout_backward */
/* Step 6 of gpt_forward() backward, chunk by chunk (GPT_OUT_ROWS rows of
 * the N, a chunk per thread at a time, each product on that thread):
 *   d_lnf = d_logits W_te (N, C), the chunk's rows;
 *   d_W_te += d_logits^T lnf (V, C), as its transpose lnf^T d_logits
 *   (C, V), so that d_logits is read along its rows.
 * The second is a sum over all N rows: each chunk's share goes into a
 * (C, V) of its own, and the shares are added in the chunks' order, so
 * that the sum does not depend on the thread count. (As one product it
 * would have C rows of output to share among the threads, too few for
 * matmul_fast() to share evenly.)  d_logits (N, V), d_lnf (N, C),
 * d_wte (V, C). */
static int readout_backward(struct gpt_model *m, const float *d_logits,
                            float *d_lnf, float *d_wte)
{
    const int N = m->B * m->T, C = m->cfg.C, V = m->cfg.V;
    const int chunks = readout_chunks(N);
    const size_t CV = (size_t)C * V;
    const float *wte = m->p.t[GPT_WTE];
    float *lnf_t = m->scratch;                /* (C, N), chunk by chunk */
    float *part = m->scratch + (size_t)C * N; /* (chunks, C, V) */
    int status = KIT_OK;
#pragma omp parallel for schedule(dynamic)
    for (int q = 0; q < chunks; q++) {
        const int r0 = q * GPT_OUT_ROWS;
        const int n = N - r0 < GPT_OUT_ROWS ? N - r0 : GPT_OUT_ROWS;
        const float *d_z = d_logits + (size_t)r0 * V;
        float *at = lnf_t + (size_t)C * r0; /* this chunk's (C, n) */
        transpose(m->a.lnf + (size_t)r0 * C, at, n, C);
        int rc = matmul_fast(d_z, wte, d_lnf + (size_t)r0 * C, n, V, C);
        if (rc == KIT_OK)
            rc = matmul_fast(at, d_z, part + (size_t)q * CV, C, n, V);
        if (rc != KIT_OK) {
#pragma omp critical(gpt_status)
            status = status == KIT_OK ? rc : status;
        }
    }
    TRY(status);
    /* the chunks' shares, in order, into chunk 0's, rows of C shared */
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++)
        for (int q = 1; q < chunks; q++)
            add_into(part + (size_t)c * V,
                     part + (size_t)q * CV + (size_t)c * V, (size_t)V);
    add_transposed(part, d_wte, C, V);
    return KIT_OK;
}
/* @end gpt_readout_backward */

/* @listing gpt_backward */
/* gpt_forward() backward, step for step in reverse: grads += d loss. */
static int backward_pass(struct gpt_model *m)
{
    if (!m)
        return KIT_E_NULL;
    if (!m->targets || m->B <= 0 || m->ablated)
        return KIT_E_SIZE; /* no forward pass with targets to undo */
    const struct gpt_config *c = &m->cfg;
    const int B = m->B, T = m->T, N = B * T, C = c->C;
    const struct gpt_params *p = &m->p, *g = &m->g;
    struct gpt_acts *a = &m->a;
    float *d_x = m->d_x, *d_ln = m->d_ln;
    const size_t NC = (size_t)N * C;

    /* 7. loss = mean of losses: the forward pass left d_logits = (probs -
     *    onehot) / N in place of the logits */
    const float *d_logits = a->logits;
    /* 6. logits = LN_f(X) W_te^T:
     *    d_lnf = d_logits W_te (N, C), written into d_ln;
     *    d_W_te += d_logits^T lnf (V, C); both by readout_backward() */
    TRY(readout_backward(m, d_logits, d_ln, g->t[GPT_WTE]));
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
        TRY(attention_backward_batch(m, &w, v.ln1, d_x, d_ln, &d_w));
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

/* @listing gpt_kv_share */
int gpt_kv_share(struct gpt_model *m, int g, int mode)
{
    if (!m || !m->params || !m->grads)
        return KIT_E_NULL;
    const int C = m->cfg.C, h = m->cfg.n_heads;
    if (g <= 0 || g > h || h % g != 0)
        return KIT_E_HEADS;
    if (mode != GPT_KV_GATHER && mode != GPT_KV_COPY)
        return KIT_E_SIZE;
    const int d = C / h, group = h / g;
    const int tensors[2] = {GPT_W_K, GPT_W_V};
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < m->cfg.L; l++) {
            const size_t at = (size_t)l * C * C;
            float *w = (mode == GPT_KV_GATHER ? m->g.t[tensors[k]]
                                              : m->p.t[tensors[k]]) +
                       at;
            for (int r = 0; r < C; r++) /* row r of the (C, C) matrix */
                for (int i = 0; i < h; i++) {
                    if (i % group == 0)
                        continue; /* the group's first head keeps its own */
                    float *mine = w + (size_t)r * C + i * d;
                    float *first = w + (size_t)r * C + (i - i % group) * d;
                    for (int j = 0; j < d; j++) {
                        if (mode == GPT_KV_GATHER)
                            first[j] += mine[j], mine[j] = 0;
                        else
                            mine[j] = first[j];
                    }
                }
        }
    return KIT_OK;
}
/* @end gpt_kv_share */

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

int gpt_train_steps(struct gpt_model *m, const struct gpt_train_config *tc,
                    int first, int n, const int *x, const int *targets, int B,
                    int T_used, float *losses, float *norms)
{
    if (!losses)
        return KIT_E_NULL;
    for (int k = 0; k < n; k++)
        TRY(gpt_train_step(m, tc, first + k, x, targets, B, T_used, &losses[k],
                           norms ? &norms[k] : NULL));
    return KIT_OK;
}

struct probe {
    struct gpt_model *m;
    const int *x, *targets;
    int B, T_used, g;
    float *losses;
};

/* One pass of gpt_loss_probe(): the moved number copied (with g > 0),
 * then the loss. */
static int probe_pass(void *ctx, int j)
{
    struct probe *q = ctx;
    if (q->g > 0)
        gpt_kv_share(q->m, q->g, GPT_KV_COPY);
    const int rc = gpt_forward(q->m, q->x, q->targets, q->B, q->T_used);
    q->losses[j] = q->m->loss;
    return rc;
}

int gpt_loss_probe(struct gpt_model *m, const int *x, const int *targets, int B,
                   int T_used, int g, int n, const int *index,
                   const float *value, float *losses)
{
    if (!m || !m->params || !losses)
        return KIT_E_NULL;
    struct probe q = {m, x, targets, B, T_used, g, losses};
    const int status = kit_param_probe(m->params, m->n_params, n, index, value,
                                       probe_pass, &q);
    if (g > 0 && status != KIT_E_SIZE && status != KIT_E_NULL)
        gpt_kv_share(m, g, GPT_KV_COPY); /* the copies put back too */
    return status;
}

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
