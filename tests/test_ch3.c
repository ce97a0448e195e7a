/*
 * test_ch3.c: chapter 3 tests, multi-head attention.
 *
 * Every comparison is against PyTorch's torch.nn.MultiheadAttention
 * (tests/golden/ch3_golden.h), against a small implementation in double
 * written here, or against the layer itself run another way. The double
 * code also computes what each classic mistake would produce, so that a
 * failure can name the mistake.
 *
 * Dimension letters: T = tokens, d_model = embedding width,
 * h = n_heads, d_head = d_model / n_heads.
 */
#include "attention.h"
#include "heads.h"
#include "kit_test.h"
#include "mha.h"
#include "rng.h"
#include "sentence.h"

#include "golden/ch3_golden.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * The right layer and the classic mistakes, in double
 * ------------------------------------------------------------------- */

enum variant {
    RIGHT,
    SCALE_D_MODEL, /* scores / sqrt(d_model) instead of / sqrt(d_head)  */
    INTERLEAVED,   /* head i takes columns i, i+h, i+2h, ...            */
    CONCAT_ORDER,  /* head i written into block h-1-i                   */
    NO_W_O,        /* out = concat, W_o never applied                   */
    ALL_HEAD0,     /* every head uses head 0's columns                  */
    NO_CAUSAL,     /* the causal flag ignored                           */
    NO_SCALE,      /* the scores not scaled at all                      */
    SCALE_DHEAD,   /* scores / d_head (scaled twice by 1/sqrt(d_head))  */
    W_O_T,         /* out = concat W_o^T                                */
    W_T,           /* W_q, W_k, W_v read in PyTorch's (out, in) layout  */
    OFF_I,         /* head i at column offset i, not i*d_head           */
    WEIGHTS_OFF,   /* head i's weights written at i*T, not i*T*T         */
    CONCAT_INTER,  /* concat written interleaved: column c*h + i        */
    K_FROM_WQ,     /* K computed with W_q                               */
    Q_FROM_WK,     /* Q computed with W_k                               */
    V_FROM_WK,     /* V computed with W_k                               */
    KQ_HEAD,       /* a head's scores K Q^T instead of Q K^T            */
    CAUSAL_INV,    /* the causal flag inverted                          */
    WEIGHTS_HEAD0, /* every head's weights written to block 0           */
    LAST_HEAD,     /* the loop over heads stopping one short            */
    FIRST_HEAD,    /* the loop over heads starting at 1                 */
    Q_HEAD0,       /* every head's queries from head 0's columns        */
    DIAG_HIDDEN,   /* the causal mask hiding the diagonal too (j >= t)  */
    N_VARIANTS
};

/* The names are what tests/mutants/ch3.tsv looks for in the messages. */
static const char *const mistake_name[N_VARIANTS] = {
    "",
    "scores scaled by 1/sqrt(d_model) instead of 1/sqrt(d_head)",
    "heads sliced interleaved (head i took columns i, i+h, i+2h, ...) "
    "instead of the contiguous block i*d_head .. (i+1)*d_head-1",
    "heads concatenated in the wrong order (head i's output is not in "
    "columns i*d_head .. (i+1)*d_head-1 of concat)",
    "W_o forgotten: the output is the bare concatenation of the heads",
    "every head using head 0's weights (the head index is not used when "
    "slicing W_q, W_k, W_v)",
    "the causal flag ignored (query t sees keys after t)",
    "a missing 1/sqrt(d_head) scale",
    "scores scaled by 1/d_head instead of 1/sqrt(d_head)",
    "W_o used transposed (out = concat W_o^T)",
    "W_q, W_k and W_v read transposed, in PyTorch's (out, in) layout "
    "(Q = X W_q^T)",
    "head i's columns starting at column i instead of i*d_head",
    "head i's weights written at offset i*T instead of i*T*T",
    "the concatenation written interleaved (head i's column c at c*h + i "
    "instead of i*d_head + c)",
    "K computed with W_q instead of W_k",
    "Q computed with W_k instead of W_q",
    "V computed with W_k instead of W_v",
    "K Q^T in place of Q K^T in the heads' scores",
    "the causal flag inverted (masked when it is off, unmasked when on)",
    "every head's weights written to head 0's block (weights + i*T*T "
    "forgotten)",
    "the loop over heads stopping one short, so the last head is never "
    "computed",
    "the loop over heads starting at 1, so head 0 is never computed",
    "every head's queries taken from head 0's columns of W_q (the head "
    "index is not used for the queries: mha_forward slicing W_q with 0 "
    "instead of i, or mha_forward_fused reading q_t with the head offset "
    "missing), while keys and values use head i's own",
    "the causal mask hiding the diagonal as well (j >= t masked instead of "
    "j > t), so a token cannot see itself and row 0 of every head has no "
    "key left: 0/0 = NaN",
};
static const char *const mistake_advice[N_VARIANTS] = {
    "",
    "Each head is an attention of width d_head: divide its scores by "
    "sqrtf((float)d_head), d_head = d_model / n_heads.",
    "Head i owns columns i*d_head + c for c = 0 .. d_head-1 (mha.h).",
    "Write head i's (T, d_head) output at column offset i*d_head.",
    "Finish with out = concat W_o: matmul(concat, W_o, out, T, d_model, "
    "d_model).",
    "Pass the loop's head index i when cutting out W_q^i, W_k^i, W_v^i.",
    "When cfg->causal is set, use causal_attention() (chapter 2), or mask "
    "j > t with -INFINITY before the softmax.",
    "Each head is an attention of width d_head: divide its scores by "
    "sqrtf((float)d_head).",
    "The scale is 1/sqrt(d_head), applied once. Dividing by d_head, or "
    "scaling Q_i or K_i yourself before attention() (which divides by "
    "sqrt(d_k) already), gives 1/d_head.",
    "out = concat W_o: W_o[r][c] is W_o[r * d_model + c], which "
    "matmul(concat, W_o, out, T, d_model, d_model) reads.",
    "mha.h stores W as (d_model in, d_model out), by rows: Q = X W, "
    "W[r][c] at W[r * d_model + c]. PyTorch's weight is the transpose.",
    "Head i's columns are i*d_head .. (i+1)*d_head - 1: the offset is "
    "i * d_head.",
    "weights is (n_heads, T, T): head i's T x T block starts at "
    "weights + i*T*T.",
    "Head i's output fills the contiguous columns i*d_head .. "
    "(i+1)*d_head - 1 of concat: concat[t * d_model + i * d_head + c].",
    "K_i = X W_k^i: slice W_k for the keys.",
    "Q_i = X W_q^i: slice W_q for the queries.",
    "V_i = X W_v^i: slice W_v for the values.",
    "weights_i[t][j] is query t against key j: q_t . k_j, Q_i first.",
    "Mask (causal_attention(), or j > t set to -INFINITY) exactly when "
    "cfg->causal is non-zero.",
    "weights is (n_heads, T, T): head i writes its T x T block at "
    "weights + i*T*T.",
    "Loop over every head, i = 0 .. n_heads-1: while i < n_heads.",
    "Heads are numbered from 0: loop over i = 0 .. n_heads-1.",
    "Head i's queries are its own columns i*d_head .. (i+1)*d_head-1 of "
    "W_q, as its keys and values are: pass i when slicing W_q, or in the "
    "fused form add the head's offset i*d_head to Q's row as to K's and "
    "V's.",
    "Mask only the future, j > t: start the masking loop at j = t + 1. "
    "Query t may always see key t itself.",
};

struct layer { /* one layer's inputs, in double */
    int T, d_model, n_heads, causal;
    const double *X;   /* (T, d_model) */
    const double *W_q; /* (d_model, d_model) */
    const double *W_k; /* (d_model, d_model) */
    const double *W_v; /* (d_model, d_model) */
    const double *W_o; /* (d_model, d_model) */
};

/* Column of the fused matrices that head i's column c reads. */
static int fused_col(enum variant v, int i, int c, int n_heads, int d_head)
{
    switch (v) {
    case INTERLEAVED: return c * n_heads + i;
    case ALL_HEAD0: return c;
    case OFF_I: return i + c;
    default: return i * d_head + c;
    }
}

/* Column of Q that head i's column c reads: its own but for Q_HEAD0. */
static int query_col(enum variant v, int i, int c, int n_heads, int d_head)
{
    return v == Q_HEAD0 ? c : fused_col(v, i, c, n_heads, d_head);
}

/* The layer as a variant computes it.
 * out (T, d_model), weights (n_heads, T, T). */
static void variant_mha(enum variant v, const struct layer *L, double *out,
                        double *weights)
{
    const int T = L->T, d = L->d_model, h = L->n_heads, dh = d / h;
    const int causal =
        v == CAUSAL_INV ? !L->causal : L->causal && v != NO_CAUSAL;
    const double scale = v == NO_SCALE ? 1.0
                         : v == SCALE_DHEAD
                             ? 1.0 / dh
                             : 1.0 / sqrt(v == SCALE_D_MODEL ? d : dh);
    double *P = kit_alloc(sizeof(double) * (size_t)T * d * 3);
    double *concat = kit_alloc(sizeof(double) * (size_t)T * d);
    double *w_buf = kit_alloc(sizeof(double) * (size_t)T * T);
    double *Q = P, *K = P + T * d, *V = P + 2 * T * d; /* (T, d) each */
    const double *W_k = v == K_FROM_WQ ? L->W_q : L->W_k;
    const double *W_q = v == Q_FROM_WK ? L->W_k : L->W_q;
    const double *W_v = v == V_FROM_WK ? L->W_k : L->W_v;
    for (int t = 0; t < T; t++)
        for (int c = 0; c < d; c++) {
            double q = 0, k = 0, vv = 0;
            for (int r = 0; r < d; r++) {
                int at = v == W_T ? c * d + r : r * d + c;
                q += L->X[t * d + r] * W_q[at];
                k += L->X[t * d + r] * W_k[at];
                vv += L->X[t * d + r] * W_v[at];
            }
            Q[t * d + c] = q, K[t * d + c] = k, V[t * d + c] = vv;
        }
    /* entries no head writes keep the NaN the tests poison buffers with */
    for (int k = 0; k < h * T * T; k++)
        weights[k] = NAN;
    const int first = v == FIRST_HEAD, last = v == LAST_HEAD ? h - 1 : h;
    for (int i = first; i < last; i++) {
        double *w_i = w_buf;
        int block = v == CONCAT_ORDER ? h - 1 - i : i;
        for (int t = 0; t < T; t++) {
            double max = -INFINITY, sum = 0;
            for (int j = 0; j < T; j++) {
                double s = 0;
                for (int c = 0; c < dh; c++) {
                    int col = fused_col(v, i, c, h, dh);
                    int qcol = query_col(v, i, c, h, dh);
                    s += v == KQ_HEAD ? K[t * d + col] * Q[j * d + col]
                                      : Q[t * d + qcol] * K[j * d + col];
                }
                const int hidden = v == DIAG_HIDDEN ? j >= t : j > t;
                w_i[t * T + j] = (causal && hidden) ? -INFINITY : s * scale;
                if (w_i[t * T + j] > max)
                    max = w_i[t * T + j];
            }
            for (int j = 0; j < T; j++)
                sum += (w_i[t * T + j] = exp(w_i[t * T + j] - max));
            for (int j = 0; j < T; j++)
                w_i[t * T + j] /= sum;
            for (int c = 0; c < dh; c++) {
                double s = 0;
                for (int j = 0; j < T; j++)
                    s += w_i[t * T + j] * V[j * d + fused_col(v, i, c, h, dh)];
                int col = v == CONCAT_INTER ? c * h + i
                          : v == OFF_I      ? i + c
                                            : block * dh + c;
                concat[t * d + col] = s;
            }
        }
        /* head i's block, where this variant writes it */
        double *dst =
            v == WEIGHTS_HEAD0
                ? weights
                : weights + (size_t)i * (v == WEIGHTS_OFF ? T : T * T);
        memcpy(dst, w_i, sizeof(double) * (size_t)T * T);
    }
    for (int t = 0; t < T; t++)
        for (int c = 0; c < d; c++) {
            double s = 0;
            for (int r = 0; r < d; r++)
                s += concat[t * d + r] *
                     L->W_o[v == W_O_T ? c * d + r : r * d + c];
            out[t * d + c] = v == NO_W_O ? concat[t * d + c] : s;
        }
    free(P);
    free(concat);
    free(w_buf);
}

/* Every mistake's output and weights, and the tables that name them.
 * out[v] (T, d_model), weights[v] (n_heads, T, T). */
struct mistakes {
    double *out[N_VARIANTS], *weights[N_VARIANTS];
    struct kit_mistake m_out[N_VARIANTS - 1], m_weights[N_VARIANTS - 1];
};

static void mistakes_build(struct mistakes *M, const struct layer *L)
{
    size_t n_out = (size_t)L->T * L->d_model;
    size_t n_w = (size_t)L->n_heads * L->T * L->T;
    for (int v = 0; v < N_VARIANTS; v++) {
        M->out[v] = kit_alloc(sizeof(double) * n_out);
        M->weights[v] = kit_alloc(sizeof(double) * n_w);
        variant_mha((enum variant)v, L, M->out[v], M->weights[v]);
        if (v == RIGHT)
            continue;
        /* with OFF_I, columns past (h-1) + d_head of concat are never
         * written, so out holds whatever the scratch memory held */
        int unknowable =
            (v == OFF_I && L->n_heads > 1 && L->n_heads < L->d_model) ||
            v == LAST_HEAD || v == FIRST_HEAD; /* a block of concat unset */
        M->m_out[v - 1] = (struct kit_mistake){
            mistake_name[v], mistake_advice[v], unknowable ? NULL : M->out[v]};
        M->m_weights[v - 1] = (struct kit_mistake){
            mistake_name[v], mistake_advice[v], M->weights[v]};
    }
}

static void mistakes_free(struct mistakes *M)
{
    for (int v = 0; v < N_VARIANTS; v++) {
        free(M->out[v]);
        free(M->weights[v]);
    }
}

/* ---------------------------------------------------------------------
 * Helpers: float copies of weights, random layers
 * ------------------------------------------------------------------- */

typedef int (*forward_fn)(const struct mha_config *, const struct mha_weights *,
                          const float *, float *, float *, int);

static void weights_from_double(struct mha_weights *w, const struct layer *L)
{
    size_t n = (size_t)L->d_model * L->d_model;
    /* guarded (kit_guarded()): a read or a write outside is named */
    w->W_q = kit_guarded(n, "w.W_q", "d_model*d_model");
    w->W_k = kit_guarded(n, "w.W_k", "d_model*d_model");
    w->W_v = kit_guarded(n, "w.W_v", "d_model*d_model");
    w->W_o = kit_guarded(n, "w.W_o", "d_model*d_model");
    kit_to_float(L->W_q, w->W_q, n);
    kit_to_float(L->W_k, w->W_k, n);
    kit_to_float(L->W_v, w->W_v, n);
    kit_to_float(L->W_o, w->W_o, n);
}

static void weights_free(struct mha_weights *w)
{
    kit_output_free(w->W_q), kit_output_free(w->W_k);
    kit_output_free(w->W_v), kit_output_free(w->W_o);
}

/* forward() on guarded buffers: X and the weights as the caller has them
 * (random_layer()'s are kit_guarded() ones), out (T, d_model) and att
 * (n_heads, T, T) in kit_guarded() buffers, NaN on entry, then copied
 * into the caller's. Returns 1 when it returned KIT_OK and wrote inside
 * every guarded buffer. */
static int guarded_forward(forward_fn forward, const char *call,
                           const struct mha_config *cfg,
                           const struct mha_weights *w, const float *X,
                           float *out, float *att, int T)
{
    const size_t n_out = (size_t)T * cfg->d_model;
    const size_t n_att = (size_t)cfg->n_heads * T * T;
    float *o = kit_guarded(n_out, "out", "T*d_model");
    float *a = kit_guarded(n_att, "weights", "n_heads*T*T");
    int ok = KIT_EXPECT_STATUS(call, forward(cfg, w, X, o, a, T), KIT_OK) &&
             KIT_EXPECT_GUARDS(call);
    memcpy(out, o, n_out * sizeof *out), memcpy(att, a, n_att * sizeof *att);
    kit_output_free(o), kit_output_free(a);
    return ok;
}

/* A random layer in float (w, X) and the same numbers in double (L). */
struct random_layer {
    struct layer L;
    struct mha_weights w;
    float *X; /* (T, d_model) */
    double *buf;
};

static void random_layer(struct random_layer *R, int T, int d_model,
                         int n_heads, int causal, unsigned long long seed)
{
    struct rng r;
    rng_seed(&r, seed);
    size_t nx = (size_t)T * d_model, nw = (size_t)d_model * d_model;
    R->X = kit_guarded(nx, "X", "T*d_model");
    float *tmp = kit_alloc((nx + 4 * nw) * sizeof(float));
    rng_fill(&r, tmp, (int)(nx + 4 * nw), -1.0f, 1.0f);
    R->buf = kit_alloc((nx + 4 * nw) * sizeof(double));
    kit_to_double(tmp, R->buf, nx + 4 * nw);
    memcpy(R->X, tmp, nx * sizeof(float));
    free(tmp);
    R->L = (struct layer){T,
                          d_model,
                          n_heads,
                          causal,
                          R->buf,
                          R->buf + nx,
                          R->buf + nx + nw,
                          R->buf + nx + 2 * nw,
                          R->buf + nx + 3 * nw};
    weights_from_double(&R->w, &R->L);
}

static void random_layer_free(struct random_layer *R)
{
    weights_free(&R->w);
    kit_output_free(R->X);
    free(R->buf);
}

static const char *fn_name(forward_fn f)
{
    return f == mha_forward ? "mha_forward" : "mha_forward_fused";
}

/* ---------------------------------------------------------------------
 * Configurations and head slices
 * ------------------------------------------------------------------- */

KIT_TEST(mha_check_config_errors,
         "mha_check_config: good configs pass, impossible ones get the "
         "documented error")
{
    struct mha_config ok = {16, 4, 0}, one = {5, 1, 1}, all = {4, 4, 0};
    if (!KIT_EXPECT_STATUS("mha_check_config({16, 4})", mha_check_config(&ok),
                           KIT_OK))
        return;
    KIT_EXPECT_STATUS("mha_check_config({5, 1})", mha_check_config(&one),
                      KIT_OK);
    KIT_EXPECT_STATUS("mha_check_config({4, 4})", mha_check_config(&all),
                      KIT_OK);
    const struct {
        struct mha_config cfg;
        int want;
        const char *what;
    } bad[] = {
        {{10, 4, 0}, KIT_E_HEADS, "mha_check_config({d_model 10, 4 heads})"},
        {{16, 3, 1}, KIT_E_HEADS, "mha_check_config({d_model 16, 3 heads})"},
        {{4, 8, 0}, KIT_E_HEADS, "mha_check_config({d_model 4, 8 heads})"},
        {{16, 0, 0}, KIT_E_SIZE, "mha_check_config({d_model 16, 0 heads})"},
        {{16, -2, 0}, KIT_E_SIZE, "mha_check_config({d_model 16, -2 heads})"},
        {{0, 4, 0}, KIT_E_SIZE, "mha_check_config({d_model 0, 4 heads})"},
        {{-8, 4, 0}, KIT_E_SIZE, "mha_check_config({d_model -8, 4 heads})"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        KIT_EXPECT_STATUS(bad[k].what, mha_check_config(&bad[k].cfg),
                          bad[k].want);
    KIT_EXPECT_STATUS("mha_check_config(NULL)", mha_check_config(NULL),
                      KIT_E_NULL);
}

/* One impossible mha_head_slice call: the documented error, and nothing
 * written into W_i (n floats, guarded). Returns 1 when both hold. */
static int slice_error(const char *call, const float *W, float *W_i, size_t n,
                       int d_model, int n_heads, int i, int want)
{
    if (W_i)
        kit_poison(W_i, n);
    if (!KIT_EXPECT_STATUS(call, mha_head_slice(W, W_i, d_model, n_heads, i),
                           want))
        return 0;
    int clean = 1;
    for (size_t k = 0; W_i && k < n; k++)
        clean &= isnan(W_i[k]) != 0;
    return KIT_CHECK(clean,
                     "%s returned the error but wrote into W_i; on error "
                     "write nothing",
                     call) &&
           (!W_i || KIT_EXPECT_IN_BOUNDS(call, "W_i", W_i, n));
}

/* mha_head_slice(W, W_i, 6, 3, i) for each head i, W (6, 6), into the
 * guarded W_i (6, 2), against the block of W each head must get, naming
 * the interleaved and transposed readings by what they give from W.
 * after follows each call in the messages. Returns 1 when every head's
 * block is right. The published case and its hidden twin both come
 * here. */
static int expect_head_blocks(const float *W, float *W_i, const char *after)
{
    enum { D = 6, H = 3, DH = D / H };
    for (int i = 0; i < H; i++) {
        double want[D * DH], interleaved[D * DH], transposed[D * DH];
        for (int r = 0; r < D; r++)
            for (int c = 0; c < DH; c++) {
                want[r * DH + c] = W[r * D + i * DH + c];
                interleaved[r * DH + c] = W[r * D + c * H + i];
                transposed[r * DH + c] = W[(i * DH + c) * D + r];
            }
        const struct kit_mistake m[] = {
            {mistake_name[INTERLEAVED], mistake_advice[INTERLEAVED],
             interleaved},
            {mistake_name[W_T], mistake_advice[W_T], transposed}};
        char call[240];
        snprintf(call, sizeof call, "mha_head_slice(W, W_i, 6, 3, %d)%s", i,
                 after);
        kit_poison(W_i, D * DH);
        if (!KIT_EXPECT_STATUS(call, mha_head_slice(W, W_i, D, H, i), KIT_OK) ||
            !KIT_EXPECT_IN_BOUNDS(call, "W_i", W_i, D * DH) ||
            !KIT_EXPECT_TENSOR(call, W_i, want, D, DH, 0, m, 2))
            return 0;
    }
    return 1;
}

KIT_TEST(mha_head_slice_blocks,
         "mha_head_slice: head i gets the contiguous column block i")
{
    enum { D = 6, H = 3, DH = D / H };
    float W[D * D];
    float *W_i = kit_guarded(D * DH, "W_i", "d_model*d_head");
    for (int r = 0; r < D; r++)
        for (int c = 0; c < D; c++)
            W[r * D + c] = (float)(10 * r + c); /* W[r][c] = "rc" */
    if (!expect_head_blocks(W, W_i, ""))
        goto done;
    /* errors, and nothing written, checked after each call */
    const struct {
        const float *W;
        float *W_i;
        int n_heads, i, want;
        const char *call;
    } bad[] = {
        {W, W_i, H, 3, KIT_E_HEADS,
         "mha_head_slice(W, W_i, 6, 3, 3): no head 3"},
        {W, W_i, H, -1, KIT_E_HEADS, "mha_head_slice(W, W_i, 6, 3, -1)"},
        {W, W_i, 4, 0, KIT_E_HEADS,
         "mha_head_slice(W, W_i, 6, 4, 0): 4 does not divide 6"},
        {W, W_i, 0, 0, KIT_E_SIZE, "mha_head_slice(W, W_i, 6, 0, 0)"},
        {NULL, W_i, H, 0, KIT_E_NULL, "mha_head_slice(NULL, W_i, 6, 3, 0)"},
        {W, NULL, H, 0, KIT_E_NULL, "mha_head_slice(W, NULL, 6, 3, 0)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        slice_error(bad[k].call, bad[k].W, bad[k].W_i, D * DH, D,
                    bad[k].n_heads, bad[k].i, bad[k].want);
    /* The published W can be recognised and each head's block returned,
     * so once every check above passes the same heads are taken from a
     * hidden W (kit_test.h: drawn from kit_hidden_seed(), which grading
     * draws anew) of 36 distinct entries in [-1, 1), so that every
     * reading of the wrong entries is seen, judged by the blocks of W
     * themselves (an exact copy: tolerance 0). */
    if (kit_current_failed())
        goto done;
    const unsigned long long seed = kit_hidden_seed();
    struct rng r;
    rng_seed(&r, seed ^ 0x736c63ULL);
    float Wh[D * D];
    for (int k = 0; k < D * D; k++) {
        int fresh;
        do {
            Wh[k] = rng_range(&r, -1.0f, 1.0f);
            fresh = 1;
            for (int j = 0; j < k; j++)
                fresh &= Wh[j] != Wh[k];
        } while (!fresh);
    }
    char after[160];
    snprintf(after, sizeof after,
             ", on a hidden W (seed %llu; KIT_HIDDEN_SEED=%llu make test CH=3 "
             "runs it again)",
             seed, seed);
    expect_head_blocks(Wh, W_i, after);
done:
    kit_output_free(W_i);
}

/* ---------------------------------------------------------------------
 * PyTorch's golden values
 * ------------------------------------------------------------------- */

/* One golden case through one forward function, with one mask: 1 when
 * it passes. */
static int golden_one(forward_fn forward, int causal,
                      const struct ch3_golden_case *g)
{
    {
        const int T = g->T, d = g->d_model, h = g->n_heads;
        struct layer L = {T,      d,      h,      causal, g->X,
                          g->W_q, g->W_k, g->W_v, g->W_o};
        struct mha_config cfg = {d, h, causal};
        struct mha_weights w;
        weights_from_double(&w, &L);
        float *X = kit_guarded((size_t)T * d, "X", "T*d_model");
        const size_t n_out = (size_t)T * d, n_att = (size_t)h * T * T;
        float *out = kit_guarded(n_out, "out", "T*d_model");
        float *att = kit_guarded(n_att, "weights", "n_heads*T*T");
        kit_to_float(g->X, X, (size_t)T * d);
        struct mistakes M;
        mistakes_build(&M, &L);
        const struct kit_shape w_shape = {
            T, 0, "head", {{"d_head", d / h}, {"d_model", d}, {"n_heads", h}}};
        const struct kit_shape o_shape = {
            0, 0, "head", {{"d_head", d / h}, {"d_model", d}, {"n_heads", h}}};
        char call[320];
        snprintf(call, sizeof call,
                 "%s(case \"%s\": T %d, d_model %d, %d heads, causal %d)",
                 fn_name(forward), g->name, T, d, h, causal);
        int ok = KIT_EXPECT_STATUS(call, forward(&cfg, &w, X, out, att, T),
                                   KIT_OK) &&
                 KIT_EXPECT_GUARDS(call);
        if (ok) {
            char what[360];
            snprintf(what, sizeof what, "%s weights (head, query, key)", call);
            ok = KIT_EXPECT_TENSOR_SHAPED(what, att, g->weights[causal], h * T,
                                          T, &w_shape, 1e-5, M.m_weights,
                                          N_VARIANTS - 1);
        }
        if (ok) {
            /* the weights are right: only a mistake whose weights are
             * right too can explain a wrong out */
            for (int v = 1; v < N_VARIANTS; v++)
                for (size_t k = 0; k < n_att; k++) {
                    double a = M.weights[v][k], b = g->weights[causal][k];
                    if (!(fabs(a - b) <= 1e-5 + 1e-5 * fabs(b))) {
                        M.m_out[v - 1].value = NULL;
                        break;
                    }
                }
            char what[360];
            snprintf(what, sizeof what, "%s out", call);
            ok = KIT_EXPECT_TENSOR_SHAPED(what, out, g->out[causal], T, d,
                                          &o_shape, 1e-5, M.m_out,
                                          N_VARIANTS - 1);
        }
        mistakes_free(&M);
        weights_free(&w);
        kit_output_free(X), kit_output_free(out), kit_output_free(att);
        return ok;
    }
}

/* Every golden case through one forward function, with one mask; then
 * the hidden cases (kit_test.h), drawn from the seed and judged by
 * variant_mha(RIGHT, ...). */
static void golden_cases(forward_fn forward, int causal)
{
    size_t n_cases = sizeof ch3_golden_cases / sizeof ch3_golden_cases[0];
    for (size_t k = 0; k < n_cases; k++)
        if (!golden_one(forward, causal, &ch3_golden_cases[k]))
            return;
    struct rng r;
    unsigned long long seed = kit_hidden_seed();
    rng_seed(&r, seed);
    static const int widths[] = {4, 6, 8, 12};
    for (int c = 0; c < KIT_HIDDEN_CASES; c++) {
        /* At least 2 positions, 2 heads and 2 columns per head: with
         * one of each, a wrong concatenation or scale can look right. */
        int T = 2 + rng_int(&r, 6), d = widths[rng_int(&r, 4)], h;
        do
            h = 2 + rng_int(&r, d / 2 - 1);
        while (d % h != 0);
        struct random_layer R;
        random_layer(&R, T, d, h, causal, seed + 7919ULL * (unsigned)c);
        double *o = kit_alloc(sizeof(double) * (size_t)T * d);
        double *a = kit_alloc(sizeof(double) * (size_t)h * T * T);
        variant_mha(RIGHT, &R.L, o, a);
        char name[160];
        snprintf(name, sizeof name,
                 "hidden %d of seed %llu; the published cases pass; "
                 "KIT_HIDDEN_SEED=%llu make test CH=3 runs it again",
                 c + 1, seed, seed);
        struct ch3_golden_case g = {name,    T,       d,       h,
                                    R.L.X,   R.L.W_q, R.L.W_k, R.L.W_v,
                                    R.L.W_o, {o, o},  {a, a}};
        int ok = golden_one(forward, causal, &g);
        free(o), free(a);
        random_layer_free(&R);
        if (!ok)
            return;
    }
}

KIT_TEST(mha_forward_golden,
         "mha_forward: out and per-head weights equal PyTorch's "
         "MultiheadAttention (T=1, n_heads=d_model, T!=d_model, ...)")
{
    golden_cases(mha_forward, 0);
}

KIT_TEST(mha_forward_golden_causal,
         "mha_forward, causal: out and weights equal PyTorch's with the "
         "causal mask")
{
    golden_cases(mha_forward, 1);
}

KIT_TEST(mha_fused_golden,
         "mha_forward_fused: out and per-head weights equal PyTorch's")
{
    golden_cases(mha_forward_fused, 0);
}

KIT_TEST(mha_fused_golden_causal,
         "mha_forward_fused, causal: out and weights equal PyTorch's with "
         "the causal mask")
{
    golden_cases(mha_forward_fused, 1);
}

/* ---------------------------------------------------------------------
 * The two forms, and the output projection
 * ------------------------------------------------------------------- */

KIT_TEST(mha_fused_equals_loop,
         "the fused form and the loop over heads give the same out and "
         "weights")
{
    enum { T = 9, D = 16, H = 4 };
    for (int causal = 0; causal <= 1; causal++) {
        struct random_layer R;
        random_layer(&R, T, D, H, causal, 301 + causal);
        struct mha_config cfg = {D, H, causal};
        float out_loop[T * D], att_loop[H * T * T];
        float out_fused[T * D], att_fused[H * T * T];
        double want_out[T * D], want_att[H * T * T];
        kit_poison(out_loop, T * D), kit_poison(att_loop, H * T * T);
        kit_poison(out_fused, T * D), kit_poison(att_fused, H * T * T);
        int ok = guarded_forward(mha_forward,
                                 "mha_forward(T 9, d_model 16, 4 heads)", &cfg,
                                 &R.w, R.X, out_loop, att_loop, T);
        ok =
            ok && guarded_forward(mha_forward_fused,
                                  "mha_forward_fused(T 9, d_model 16, 4 heads)",
                                  &cfg, &R.w, R.X, out_fused, att_fused, T);
        if (ok) {
            kit_to_double(out_loop, want_out, T * D);
            kit_to_double(att_loop, want_att, H * T * T);
            const struct kit_shape shape = {T, 0, "head", {{"d_head", D / H}}};
            ok = KIT_EXPECT_TENSOR_SHAPED(causal ? "mha_forward_fused weights "
                                                   "against mha_forward's "
                                                   "(causal)"
                                                 : "mha_forward_fused weights "
                                                   "against mha_forward's",
                                          att_fused, want_att, H * T, T, &shape,
                                          1e-5, NULL, 0) &&
                 KIT_EXPECT_TENSOR(causal ? "mha_forward_fused out against "
                                            "mha_forward's (causal)"
                                          : "mha_forward_fused out against "
                                            "mha_forward's",
                                   out_fused, want_out, T, D, 1e-5, NULL, 0);
        }
        random_layer_free(&R);
        if (!ok)
            return;
    }
}

KIT_TEST(mha_wo_sum_over_heads,
         "concat(heads) W_o equals the sum over heads of head_i W_o[rows of "
         "block i]")
{
    enum { T = 7, D = 12, H = 3, DH = D / H };
    struct random_layer R;
    random_layer(&R, T, D, H, 0, 411);
    struct mha_config cfg = {D, H, 0};
    float out[T * D], att[H * T * T], part[T * D];
    double sum[T * D] = {0}, concat_only[T * D];
    kit_poison(out, T * D);
    int ok =
        guarded_forward(mha_forward, "mha_forward(T 7, d_model 12, 3 heads)",
                        &cfg, &R.w, R.X, out, att, T);
    /* head i alone: keep only W_o's row block i, so out_i = head_i W_o^i */
    float *W_o = R.w.W_o, W_oi[D * D];
    for (int i = 0; ok && i < H; i++) {
        for (int r = 0; r < D; r++)
            for (int c = 0; c < D; c++)
                W_oi[r * D + c] = r / DH == i ? W_o[r * D + c] : 0.0f;
        R.w.W_o = W_oi;
        kit_poison(part, T * D);
        ok = guarded_forward(mha_forward,
                             "mha_forward with W_o cut to row block i", &cfg,
                             &R.w, R.X, part, att, T);
        for (int k = 0; k < T * D; k++)
            sum[k] += part[k];
    }
    R.w.W_o = W_o;
    if (ok) {
        /* what W_o forgotten gives: the concatenation itself */
        struct layer L = R.L;
        double att_d[H * T * T];
        variant_mha(NO_W_O, &L, concat_only, att_d);
        const struct kit_mistake m[] = {
            {mistake_name[NO_W_O], mistake_advice[NO_W_O], concat_only}};
        KIT_EXPECT_TENSOR("mha_forward out against the sum over heads i of "
                          "head_i W_o[rows i*d_head..]",
                          out, sum, T, D, 1e-5, m, 1);
    }
    random_layer_free(&R);
}

KIT_TEST(mha_one_head_is_attention,
         "n_heads = 1: the layer is chapter 1 (or 2) attention followed by "
         "W_o")
{
    enum { T = 6, D = 8 };
    for (int causal = 0; causal <= 1; causal++) {
        struct random_layer R;
        random_layer(&R, T, D, 1, causal, 521 + causal);
        struct mha_config cfg = {D, 1, causal};
        float out[T * D], att[T * T];
        float Q[T * D], K[T * D], V[T * D], head[T * D], w1[T * T], o1[T * D];
        double want_out[T * D], want_att[T * T];
        kit_poison(out, T * D), kit_poison(att, T * T);
        int ok = guarded_forward(mha_forward,
                                 causal ? "mha_forward(1 head, causal)"
                                        : "mha_forward(1 head)",
                                 &cfg, &R.w, R.X, out, att, T);
        /* the same with the chapter 1 and 2 functions */
        ok = ok &&
             KIT_EXPECT_STATUS("matmul (chapter 1)",
                               matmul(R.X, R.w.W_q, Q, T, D, D), KIT_OK) &&
             KIT_EXPECT_STATUS("matmul (chapter 1)",
                               matmul(R.X, R.w.W_k, K, T, D, D), KIT_OK) &&
             KIT_EXPECT_STATUS("matmul (chapter 1)",
                               matmul(R.X, R.w.W_v, V, T, D, D), KIT_OK) &&
             KIT_EXPECT_STATUS(causal ? "causal_attention (chapter 2)"
                                      : "attention (chapter 1)",
                               (causal ? causal_attention
                                       : attention)(Q, K, V, head, w1, T, D, D),
                               KIT_OK) &&
             KIT_EXPECT_STATUS("matmul (chapter 1)",
                               matmul(head, R.w.W_o, o1, T, D, D), KIT_OK);
        if (ok) {
            kit_to_double(w1, want_att, T * T);
            kit_to_double(o1, want_out, T * D);
            ok = KIT_EXPECT_TENSOR("mha_forward(1 head) weights against "
                                   "attention()'s",
                                   att, want_att, T, T, 1e-5, NULL, 0) &&
                 KIT_EXPECT_TENSOR("mha_forward(1 head) out against "
                                   "attention() then W_o",
                                   out, want_out, T, D, 1e-5, NULL, 0);
        }
        random_layer_free(&R);
        if (!ok)
            return;
    }
}

/* ---------------------------------------------------------------------
 * Heads are independent; edge shapes
 * ------------------------------------------------------------------- */

/* Changing head 2's W_q changes head 2's weights, and no other head's.
 * When that fails, the weights before and after the change are compared
 * with what each classic mistake gives before and after: a mistake is
 * named only when both match. */
static void independence(forward_fn forward)
{
    enum { T = 7, D = 16, H = 4, DH = D / H };
    struct random_layer R;
    random_layer(&R, T, D, H, 0, 631);
    struct mha_config cfg = {D, H, 0};
    float out[T * D], before[H * T * T], after[H * T * T];
    kit_poison(before, H * T * T);
    char call[80];
    snprintf(call, sizeof call, "%s(T 7, d_model 16, 4 heads)",
             fn_name(forward));
    int ok = guarded_forward(forward, call, &cfg, &R.w, R.X, out, before, T);
    /* new numbers in W_q's column block 2, in float and in double */
    double *W_q2 = kit_alloc(sizeof(double) * D * D);
    memcpy(W_q2, R.L.W_q, sizeof(double) * D * D);
    for (int r = 0; r < D; r++)
        for (int c = 2 * DH; c < 3 * DH; c++) {
            R.w.W_q[r * D + c] = -2.0f * R.w.W_q[r * D + c] + 0.3f;
            W_q2[r * D + c] = R.w.W_q[r * D + c];
        }
    kit_poison(after, H * T * T);
    ok = ok && guarded_forward(forward, call, &cfg, &R.w, R.X, out, after, T);
    /* the property, in plain words */
    char what[240] = "";
    for (int i = 0; ok && i < H && !what[0]; i++) {
        const float *b = before + i * T * T, *a = after + i * T * T;
        double moved = 0;
        for (int k = 0; k < T * T; k++)
            moved = fmax(moved, fabs((double)a[k] - b[k]));
        if (i == 2 && !(moved > 1e-3))
            snprintf(what, sizeof what,
                     "%s: head 2's weights did not change when head 2's W_q "
                     "(columns 8..11) did",
                     fn_name(forward));
        else if (i != 2 && !(moved == 0))
            snprintf(what, sizeof what,
                     "%s: head %d's weights moved (by up to %.3g) when only "
                     "head 2's W_q (columns 8..11) changed",
                     fn_name(forward), i, moved);
    }
    if (ok && what[0]) {
        struct layer L2 = R.L;
        L2.W_q = W_q2;
        struct mistakes M1, M2;
        mistakes_build(&M1, &R.L);
        mistakes_build(&M2, &L2);
        /* a mistake fits only if it gives both the weights before and
         * the weights after */
        for (int v = 1; v < N_VARIANTS; v++) {
            const struct kit_mistake one = M1.m_weights[v - 1];
            if (!one.value)
                continue;
            int fits = 1;
            for (int k = 0; k < H * T * T && fits; k++) {
                double w = one.value[k], g = before[k];
                fits =
                    isnan(w) ? isnan(g) : fabs(g - w) <= 1e-5 + 1e-5 * fabs(w);
            }
            if (!fits)
                M2.m_weights[v - 1].value = NULL;
        }
        const struct kit_shape shape = {
            T, 0, "head", {{"d_head", DH}, {"d_model", D}}};
        char c1[300], c2[300];
        snprintf(c1, sizeof c1, "%s; the weights before the change", what);
        snprintf(c2, sizeof c2, "%s; the weights after the change", what);
        if (KIT_EXPECT_TENSOR_SHAPED(c1, before, M1.weights[RIGHT], H * T, T,
                                     &shape, 1e-5, M1.m_weights,
                                     N_VARIANTS - 1) &&
            KIT_EXPECT_TENSOR_SHAPED(c2, after, M2.weights[RIGHT], H * T, T,
                                     &shape, 1e-5, M2.m_weights,
                                     N_VARIANTS - 1))
            KIT_CHECK(0, "%s.", what);
        mistakes_free(&M1);
        mistakes_free(&M2);
    }
    free(W_q2);
    random_layer_free(&R);
}

KIT_TEST(mha_heads_independent,
         "mha_forward: changing head 2's W_q leaves the other heads' "
         "weights unchanged")
{
    independence(mha_forward);
}

KIT_TEST(mha_fused_heads_independent,
         "mha_forward_fused: changing head 2's W_q leaves the other heads' "
         "weights unchanged")
{
    independence(mha_forward_fused);
}

KIT_TEST(mha_t1_weights_are_one,
         "T = 1: every head's only weight is 1 and out = x W_v W_o, in both "
         "forms")
{
    enum { D = 8, H = 4 };
    struct random_layer R;
    random_layer(&R, 1, D, H, 1, 741);
    struct mha_config cfg = {D, H, 1};
    forward_fn fns[2] = {mha_forward, mha_forward_fused};
    double ones[H] = {1, 1, 1, 1}, want[D];
    for (int c = 0; c < D; c++) {
        double s = 0;
        for (int m = 0; m < D; m++) {
            double v = 0; /* (x W_v)[m] */
            for (int r = 0; r < D; r++)
                v += R.L.X[r] * R.L.W_v[r * D + m];
            s += v * R.L.W_o[m * D + c];
        }
        want[c] = s;
    }
    for (int f = 0; f < 2; f++) {
        float out[D], att[H];
        kit_poison(out, D), kit_poison(att, H);
        char call[80];
        snprintf(call, sizeof call, "%s(T 1, d_model 8, 4 heads)",
                 fn_name(fns[f]));
        if (!KIT_EXPECT_STATUS(call, fns[f](&cfg, &R.w, R.X, out, att, 1),
                               KIT_OK) ||
            !KIT_EXPECT_TENSOR(call, att, ones, H, 1, 1e-6, NULL, 0) ||
            !KIT_EXPECT_TENSOR(call, out, want, 1, D, 1e-5, NULL, 0))
            break;
    }
    random_layer_free(&R);
}

/* ---------------------------------------------------------------------
 * Impossible calls
 * ------------------------------------------------------------------- */

static int untouched(const float *x, int n)
{
    for (int k = 0; k < n; k++)
        if (!isnan(x[k]))
            return 0;
    return 1;
}

/* One impossible call of forward: the documented status and, whenever it
 * returns an error, nothing written into out (T, d_model) or weights
 * (n_att floats), both guarded and poisoned here first. */
struct bad_call {
    const struct mha_config *cfg;
    const struct mha_weights *w;
    const float *X;
    int out, att; /* 0: pass NULL instead of the buffer */
    int T, want;
    const char *what; /* the arguments, for the message */
    const char *why;  /* what is wrong with them, or "" */
};

static void forward_error(forward_fn forward, const struct bad_call *b,
                          float *out, size_t n_out, float *att, size_t n_att)
{
    char call[200];
    snprintf(call, sizeof call, "%s(%s)%s", fn_name(forward), b->what, b->why);
    kit_poison(out, n_out), kit_poison(att, n_att);
    kit_about_to_call(call);
    int rc = forward(b->cfg, b->w, b->X, b->out ? out : NULL,
                     b->att ? att : NULL, b->T);
    KIT_EXPECT_STATUS(call, rc, b->want);
    if (rc == KIT_OK)
        return;
    KIT_CHECK(untouched(out, (int)n_out) && untouched(att, (int)n_att),
              "%s returned an error but wrote into out or weights; on error "
              "write nothing: check every argument before the first write",
              call);
    KIT_EXPECT_IN_BOUNDS(call, "out", out, n_out);
    KIT_EXPECT_IN_BOUNDS(call, "weights", att, n_att);
}

static void forward_errors(forward_fn forward)
{
    enum { T = 3, D = 6 };
    struct random_layer R;
    random_layer(&R, T, D, 2, 0, 851);
    /* weights sized for the most heads any call below names */
    const size_t n_out = T * D, n_att = 6 * T * T;
    float *out = kit_guarded(n_out, "out", "T*d_model");
    float *att = kit_guarded(n_att, "weights", "n_heads*T*T");
    char call[160];
    struct mha_config good = {D, 2, 0};
    snprintf(call, sizeof call, "%s(cfg {d_model 6, n_heads 2}, T 3)",
             fn_name(forward));
    if (!KIT_EXPECT_STATUS(call, forward(&good, &R.w, R.X, out, att, T),
                           KIT_OK))
        goto done;
    const struct mha_config c4 = {D, 4, 0}, c5 = {D, 5, 1}, c0 = {D, 0, 0};
    const struct mha_config cm3 = {D, -3, 0}, d0 = {0, 2, 0}, dm6 = {-6, 2, 0};
    struct mha_weights holes = R.w;
    holes.W_o = NULL;
    const struct bad_call bad[] = {
        {&c4, &R.w, R.X, 1, 1, T, KIT_E_HEADS,
         "cfg {d_model 6, n_heads 4}, w, X, out, weights, T 3",
         " (4 does not divide 6)"},
        {&c5, &R.w, R.X, 1, 1, T, KIT_E_HEADS,
         "cfg {d_model 6, n_heads 5, causal 1}, w, X, out, weights, T 3", ""},
        {&c0, &R.w, R.X, 1, 1, T, KIT_E_SIZE,
         "cfg {d_model 6, n_heads 0}, w, X, out, weights, T 3", ""},
        {&cm3, &R.w, R.X, 1, 1, T, KIT_E_SIZE,
         "cfg {d_model 6, n_heads -3}, w, X, out, weights, T 3", ""},
        {&d0, &R.w, R.X, 1, 1, T, KIT_E_SIZE,
         "cfg {d_model 0, n_heads 2}, w, X, out, weights, T 3", ""},
        {&dm6, &R.w, R.X, 1, 1, T, KIT_E_SIZE,
         "cfg {d_model -6, n_heads 2}, w, X, out, weights, T 3", ""},
        {&good, &R.w, R.X, 1, 1, 0, KIT_E_SIZE,
         "cfg {d_model 6, n_heads 2}, w, X, out, weights, T 0", ""},
        {NULL, &R.w, R.X, 1, 1, T, KIT_E_NULL,
         "cfg NULL, w, X, out, weights, T 3", ""},
        {&good, NULL, R.X, 1, 1, T, KIT_E_NULL,
         "cfg {d_model 6, n_heads 2}, w NULL, X, out, weights, T 3", ""},
        {&good, &R.w, NULL, 1, 1, T, KIT_E_NULL,
         "cfg {d_model 6, n_heads 2}, w, X NULL, out, weights, T 3", ""},
        {&good, &R.w, R.X, 0, 1, T, KIT_E_NULL,
         "cfg {d_model 6, n_heads 2}, w, X, out NULL, weights, T 3", ""},
        {&good, &R.w, R.X, 1, 0, T, KIT_E_NULL,
         "cfg {d_model 6, n_heads 2}, w, X, out, weights NULL, T 3", ""},
        {&good, &holes, R.X, 1, 1, T, KIT_E_NULL,
         "cfg {d_model 6, n_heads 2}, w with W_o NULL, X, out, weights, T 3",
         ""},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        forward_error(forward, &bad[k], out, n_out, att, n_att);
done:
    kit_output_free(out), kit_output_free(att);
    random_layer_free(&R);
}

KIT_TEST(mha_forward_errors,
         "mha_forward: impossible configs and NULLs get the documented "
         "error, never a crash")
{
    forward_errors(mha_forward);
}

KIT_TEST(mha_fused_errors,
         "mha_forward_fused: impossible configs and NULLs get the "
         "documented error, never a crash")
{
    forward_errors(mha_forward_fused);
}

/* ---------------------------------------------------------------------
 * The chapter's figure: the hand-built heads on the example sentence
 * ------------------------------------------------------------------- */

KIT_TEST(mha_sentence_heads,
         "the hand-built heads (given/heads.c) on the example sentence: "
         "\"street\" finds narrow, narrow, blocked and truck")
{
    enum { T = SENTENCE_T, D = SENTENCE_D, H = HEADS_N };
    struct mha_config cfg = {D, H, 0};
    struct mha_weights w;
    if (!KIT_CHECK(mha_weights_alloc(&w, &cfg) == KIT_OK &&
                       heads_build(&w) == KIT_OK,
                   "could not build the hand-built heads"))
        return;
    float *X = kit_guarded(T * D, "X", "T*d_model");
    float *out = kit_guarded(T * D, "out", "T*d_model");
    float *att = kit_guarded(H * T * T, "weights", "n_heads*T*T");
    sentence_embedding(X);
    kit_poison(att, H * T * T);
    static const char call[] = "mha_forward(the sentence, 4 hand-built heads)";
    int ok = KIT_EXPECT_STATUS(call, mha_forward(&cfg, &w, X, out, att, T),
                               KIT_OK) &&
             KIT_EXPECT_GUARDS(call);
    if (ok) {
        /* the whole map, against the double layer */
        double Xd[T * D], want_out[T * D], want_att[H * T * T];
        double *Wd = kit_alloc(sizeof(double) * 4 * D * D);
        kit_to_double(X, Xd, T * D);
        kit_to_double(w.W_q, Wd, D * D);
        kit_to_double(w.W_k, Wd + D * D, D * D);
        kit_to_double(w.W_v, Wd + 2 * D * D, D * D);
        kit_to_double(w.W_o, Wd + 3 * D * D, D * D);
        struct layer L = {
            T, D, H, 0, Xd, Wd, Wd + D * D, Wd + 2 * D * D, Wd + 3 * D * D};
        variant_mha(RIGHT, &L, want_out, want_att);
        free(Wd);
        const struct kit_shape shape = {T, 0, "head", {{"d_head", D / H}}};
        ok =
            KIT_EXPECT_TENSOR_SHAPED("mha_forward(the sentence) weights", att,
                                     want_att, H * T, T, &shape, 1e-5, NULL, 0);
    }
    /* the row of "street": each head's favourite key */
    const int want_key[H] = {8, 8, 6, 2}; /* narrow narrow blocked truck */
    for (int i = 0; ok && i < H; i++) {
        const float *row = att + (i * T + T - 1) * T;
        int best = 0;
        for (int j = 1; j < T; j++)
            best = row[j] > row[best] ? j : best;
        /* head 3 ties "delivery" and "truck": either is its favourite */
        int hit = best == want_key[i] || (i == 3 && best == 1);
        ok = KIT_CHECK(hit,
                       "head %d (%s): \"street\" attends most to \"%s\", "
                       "expected \"%s\"",
                       i, heads_relation[i], sentence_tokens[best],
                       sentence_tokens[want_key[i]]);
    }
    kit_output_free(X), kit_output_free(out), kit_output_free(att);
    mha_weights_free(&w);
    /* The sentence and its heads are published: once they pass, the same
     * shape (T, d_model, 4 heads) on hidden numbers, judged as the
     * golden cases are, so that code which recognises the sentence and
     * returns its answer gains nothing. */
    if (!ok || kit_current_failed())
        return;
    const unsigned long long seed = kit_hidden_seed();
    struct random_layer R;
    random_layer(&R, T, D, H, 0, seed ^ 0x73656e74ULL);
    double *o = kit_alloc(sizeof(double) * T * D);
    double *a = kit_alloc(sizeof(double) * H * T * T);
    variant_mha(RIGHT, &R.L, o, a);
    char name[200];
    snprintf(name, sizeof name,
             "the sentence's shape on hidden numbers (seed %llu; "
             "KIT_HIDDEN_SEED=%llu make test CH=3 runs it again)",
             seed, seed);
    struct ch3_golden_case g = {name,    T,       D,       H,
                                R.L.X,   R.L.W_q, R.L.W_k, R.L.W_v,
                                R.L.W_o, {o, o},  {a, a}};
    golden_one(mha_forward, 0, &g);
    free(o), free(a);
    random_layer_free(&R);
}

/* ---------------------------------------------------------------------
 * Out of memory: every allocation failing in turn
 * ------------------------------------------------------------------- */

static int oom_all_nan(const float *x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!isnan(x[k]))
            return 0;
    return 1;
}

struct oom3 {
    int fused, T;
    struct mha_config cfg;
    struct mha_weights w;
    float *X, *out, *att; /* (T, d_model); guarded (T, d_model), (h, T, T) */
    size_t n_out, n_att;
};

static void oom3_prepare(void *ctx)
{
    struct oom3 *o = ctx;
    kit_poison(o->out, o->n_out), kit_poison(o->att, o->n_att);
}

static int oom3_run(void *ctx)
{
    struct oom3 *o = ctx;
    return (o->fused ? mha_forward_fused : mha_forward)(&o->cfg, &o->w, o->X,
                                                        o->out, o->att, o->T);
}

static int oom3_unchanged(void *ctx, char *why, size_t n_why)
{
    struct oom3 *o = ctx;
    if (oom_all_nan(o->out, o->n_out) && oom_all_nan(o->att, o->n_att))
        return 1;
    snprintf(why, n_why, "it wrote into out or weights");
    return 0;
}

KIT_TEST(mha_out_of_memory,
         "mha_forward and mha_forward_fused: each allocation failing in turn "
         "gives KIT_E_NOMEM, frees what was taken, writes nothing")
{
    enum { T = 4, D = 8, H = 2 };
    const char *calls[] = {
        "mha_forward(T 4, d_model 8, 2 heads, causal)",
        "mha_forward_fused(T 4, d_model 8, 2 heads, causal)"};
    for (int fused = 0; fused <= 1; fused++) {
        struct oom3 o = {fused,
                         T,
                         {D, H, 1},
                         {0},
                         NULL,
                         NULL,
                         NULL,
                         (size_t)T * D,
                         (size_t)H * T * T};
        if (!KIT_CHECK(mha_weights_alloc(&o.w, &o.cfg) == KIT_OK &&
                           mha_weights_randomize(&o.w, &o.cfg, 331) == KIT_OK,
                       "could not allocate the layer's weights"))
            return;
        struct rng r;
        rng_seed(&r, 332);
        o.X = kit_alloc(sizeof(float) * T * D);
        rng_fill(&r, o.X, T * D, -1.0f, 1.0f);
        o.out = kit_guarded(o.n_out, "out", "T*d_model");
        o.att = kit_guarded(o.n_att, "weights", "n_heads*T*T");
        const struct kit_nomem t = {calls[fused], oom3_prepare, oom3_run,
                                    oom3_unchanged, &o};
        const int ok = KIT_EXPECT_NOMEM(&t);
        kit_output_free(o.out), kit_output_free(o.att);
        free(o.X);
        mha_weights_free(&o.w);
        if (!ok)
            return;
    }
}

static const struct kit_test *const ch3_tests[] = {
    &mha_check_config_errors,
    &mha_head_slice_blocks,
    &mha_forward_golden,
    &mha_forward_golden_causal,
    &mha_fused_golden,
    &mha_fused_golden_causal,
    &mha_fused_equals_loop,
    &mha_wo_sum_over_heads,
    &mha_one_head_is_attention,
    &mha_heads_independent,
    &mha_fused_heads_independent,
    &mha_t1_weights_are_one,
    &mha_forward_errors,
    &mha_fused_errors,
    &mha_sentence_heads,
    &mha_out_of_memory,
    NULL, /* keep one test per line */
};
KIT_CHAPTER(ch3_tests)
