/*
 * test_ch8_model.c: chapter 8's model (gpt.h), for development: the
 * chapter number 9 is a stand-in until these tests join tests/test_ch8.c.
 *
 * The exercise is LayerNorm (layernorm_forward, layernorm_backward); the
 * rest of the model is given code built on the student's chapters 1 to
 * 4. The tests check:
 *   - LayerNorm, the MLP (with GELU) and cross-entropy, forward and
 *     backward, against PyTorch (tests/golden/ch8_golden.h);
 *   - the whole model against a GPT written in PyTorch: the loss, every
 *     parameter's gradient, and two training steps (clipping, AdamW with
 *     decoupled weight decay, warm-up);
 *   - the whole model's gradient against finite differences, for every
 *     parameter tensor, and that a second backward pass adds to it;
 *   - that the model learns one small batch by heart;
 *   - bad configurations, and sampling from a fixed seed.
 * On the starter stubs every test fails at its first status check.
 *
 * Dimension letters (see gpt.h): B = sequences, T = tokens, C = d_model,
 * F = 4C, V = vocabulary, L = blocks, h = heads, N = rows, P = parameters.
 */
#include "gpt.h"
#include "kit_test.h"
#include "rng.h"

#include "golden/ch8_golden.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* float passes against a double reference: ~1e-6 for the pieces */
#define TOL 1e-5
/* the whole model, two layers deep, in float */
#define MODEL_TOL 1e-4

/* The status check of a call into the model. The model's code is given,
 * so a KIT_E_TODO comes from a stub it calls: this chapter's LayerNorm,
 * or an earlier chapter's function. */
static int ready(const char *call, int got)
{
    if (got == KIT_E_TODO)
        return KIT_CHECK(0,
                         "%s returned KIT_E_TODO: the model runs on your "
                         "layernorm_forward() and layernorm_backward() and on "
                         "your code from chapters 1 to 4, and one of them is "
                         "still a starter stub.",
                         call);
    return KIT_EXPECT_STATUS(call, got, KIT_OK);
}

/* The given pieces are tested once the student's LayerNorm runs: the
 * chapter's tests all wait for its exercise. */
static int layernorm_ready(void)
{
    float x[2] = {1, 2}, g[2] = {1, 1}, b[2] = {0, 0}, y[2], mean, rstd;
    return ready("layernorm_forward() on one row of 2",
                 layernorm_forward(x, g, b, y, &mean, &rstd, 1, 2));
}

/* A guarded float copy of n doubles (kit_output); free with
 * kit_output_free. */
static float *from_double(const double *x, int n)
{
    float *f = kit_output((size_t)n);
    kit_to_float(x, f, (size_t)n);
    return f;
}

static float *filled(int n, float v)
{
    float *f = kit_output((size_t)n);
    for (int i = 0; i < n; i++)
        f[i] = v;
    return f;
}

/* ---------------------------------------------------------------------
 * LayerNorm, the exercise
 * ------------------------------------------------------------------- */

enum { LN_N = 5, LN_C = 7 };

KIT_TEST(ln_forward_golden,
         "layernorm_forward: y, mean and rstd equal PyTorch's layer_norm")
{
    static const char call[] =
        "layernorm_forward(x, g, b, y, mean, rstd, 5, 7)";
    float *x = from_double(ch8_ln_x, LN_N * LN_C),
          *g = from_double(ch8_ln_g, LN_C);
    float *b = from_double(ch8_ln_b, LN_C), *y = kit_output(LN_N * LN_C);
    float *mean = kit_output(LN_N), *rstd = kit_output(LN_N);
    /* the classic mistakes, from PyTorch's y: the variance divided by
     * C - 1, and eps outside the square root */
    double unbiased[LN_N * LN_C], eps_out[LN_N * LN_C];
    for (int i = 0; i < LN_N; i++)
        for (int c = 0; c < LN_C; c++) {
            int k = i * LN_C + c;
            double xhat = (ch8_ln_y[k] - ch8_ln_b[c]) / ch8_ln_g[c];
            double var = 1 / (ch8_ln_rstd[i] * ch8_ln_rstd[i]) - 1e-5;
            double r1 = 1 / sqrt(var * LN_C / (LN_C - 1) + 1e-5);
            double r2 = 1 / (sqrt(var) + 1e-5);
            unbiased[k] =
                xhat / ch8_ln_rstd[i] * r1 * ch8_ln_g[c] + ch8_ln_b[c];
            eps_out[k] = xhat / ch8_ln_rstd[i] * r2 * ch8_ln_g[c] + ch8_ln_b[c];
        }
    const struct kit_mistake mistakes[] = {
        {"the variance divided by C - 1 instead of C",
         "LayerNorm's variance is the plain mean of (x - mean)^2 over the "
         "row: divide by C, as torch.nn.LayerNorm does.",
         unbiased},
        {"eps added after the square root",
         "rstd = 1 / sqrt(var + eps): eps goes inside the square root.",
         eps_out}};
    if (KIT_EXPECT_STATUS(call,
                          layernorm_forward(x, g, b, y, mean, rstd, LN_N, LN_C),
                          KIT_OK) &&
        KIT_EXPECT_IN_BOUNDS(call, "y", y, LN_N * LN_C) &&
        KIT_EXPECT_IN_BOUNDS(call, "mean", mean, LN_N) &&
        KIT_EXPECT_IN_BOUNDS(call, "rstd", rstd, LN_N) &&
        KIT_EXPECT_TENSOR("layernorm_forward(...) y vs PyTorch", y, ch8_ln_y,
                          LN_N, LN_C, TOL, mistakes, 2) &&
        KIT_EXPECT_TENSOR("layernorm_forward(...) mean", mean, ch8_ln_mean, 1,
                          LN_N, TOL, NULL, 0))
        KIT_EXPECT_TENSOR("layernorm_forward(...) rstd = 1/sqrt(var + eps)",
                          rstd, ch8_ln_rstd, 1, LN_N, TOL, NULL, 0);
    kit_output_free(x), kit_output_free(g), kit_output_free(b);
    kit_output_free(y), kit_output_free(mean), kit_output_free(rstd);
}

/* Runs layernorm_backward on the golden case with every d_ buffer
 * pre-filled with fill; 1 when d_x, d_g and d_b are right. */
static int ln_backward_check(float fill, const char *call)
{
    const int n = LN_N * LN_C;
    float *x = from_double(ch8_ln_x, n), *g = from_double(ch8_ln_g, LN_C);
    float *mean = from_double(ch8_ln_mean, LN_N);
    float *rstd = from_double(ch8_ln_rstd, LN_N);
    float *d_y = from_double(ch8_ln_d_y, n), *d_x = filled(n, fill);
    float *d_g = filled(LN_C, fill), *d_b = filled(LN_C, fill);
    double want_x[LN_N * LN_C], want_g[LN_C], want_b[LN_C];
    double direct[LN_N * LN_C], over[LN_N * LN_C];
    for (int k = 0; k < n; k++) {
        int i = k / LN_C, c = k % LN_C;
        want_x[k] = ch8_ln_d_x[k] + fill;
        over[k] = ch8_ln_d_x[k];
        /* only the direct path: d_x = rstd * g * d_y */
        direct[k] = fill + ch8_ln_rstd[i] * ch8_ln_g[c] * ch8_ln_d_y[k];
    }
    for (int c = 0; c < LN_C; c++)
        want_g[c] = ch8_ln_d_g[c] + fill, want_b[c] = ch8_ln_d_b[c] + fill;
    const struct kit_mistake mistakes[] = {
        {"only the direct path through xhat (d_x = rstd * g * d_y)",
         "Every x[i][c] also moves the row's mean and its rstd, and so every "
         "output of the row: subtract mean(dxh) and xhat * mean(dxh * xhat) "
         "before multiplying by rstd.",
         direct},
        {"the gradient was overwritten instead of accumulated",
         "A backward pass adds into d_x (d_x[i] += ...): the model's "
         "residual stream already holds a gradient there.",
         fill != 0 ? over : NULL}};
    int ok = KIT_EXPECT_STATUS(call,
                               layernorm_backward(x, g, mean, rstd, d_y, d_x,
                                                  d_g, d_b, LN_N, LN_C),
                               KIT_OK) &&
             KIT_EXPECT_IN_BOUNDS(call, "d_x", d_x, n) &&
             KIT_EXPECT_IN_BOUNDS(call, "d_g", d_g, LN_C) &&
             KIT_EXPECT_IN_BOUNDS(call, "d_b", d_b, LN_C) &&
             KIT_EXPECT_TENSOR("layernorm_backward(...) d_x vs PyTorch", d_x,
                               want_x, LN_N, LN_C, TOL, mistakes, 2) &&
             KIT_EXPECT_TENSOR("layernorm_backward(...) d_g vs PyTorch", d_g,
                               want_g, 1, LN_C, TOL, NULL, 0) &&
             KIT_EXPECT_TENSOR("layernorm_backward(...) d_b vs PyTorch", d_b,
                               want_b, 1, LN_C, TOL, NULL, 0);
    kit_output_free(x), kit_output_free(g), kit_output_free(mean);
    kit_output_free(rstd), kit_output_free(d_y), kit_output_free(d_x);
    kit_output_free(d_g), kit_output_free(d_b);
    return ok;
}

KIT_TEST(ln_backward_golden,
         "layernorm_backward: d_x, d_g, d_b equal PyTorch autograd's")
{
    ln_backward_check(0.0f, "layernorm_backward(x, g, mean, rstd, d_y, ...)");
}

KIT_TEST(ln_backward_accumulates,
         "layernorm_backward: adds into d_x, d_g and d_b, does not overwrite")
{
    ln_backward_check(0.5f, "layernorm_backward(...) with every d_ buffer "
                            "pre-filled with 0.5");
}

KIT_TEST(ln_errors, "layernorm_forward/backward: NULL is KIT_E_NULL, a size "
                    "<= 0 is KIT_E_SIZE, and nothing is written")
{
    float x[4] = {1, 2, 3, 4}, g[2] = {1, 1}, b[2] = {0, 0}, mean[2], rstd[2];
    float y[4] = {7, 7, 7, 7}, d_x[4] = {7, 7, 7, 7}, d_g[2] = {7, 7};
    float d_b[2] = {7, 7};
    if (!KIT_EXPECT_STATUS("layernorm_forward(NULL x, ...)",
                           layernorm_forward(NULL, g, b, y, mean, rstd, 2, 2),
                           KIT_E_NULL) ||
        !KIT_EXPECT_STATUS("layernorm_forward(..., rstd = NULL, ...)",
                           layernorm_forward(x, g, b, y, mean, NULL, 2, 2),
                           KIT_E_NULL) ||
        !KIT_EXPECT_STATUS("layernorm_forward(..., N = 0, C = 2)",
                           layernorm_forward(x, g, b, y, mean, rstd, 0, 2),
                           KIT_E_SIZE) ||
        !KIT_EXPECT_STATUS("layernorm_forward(..., N = 2, C = -1)",
                           layernorm_forward(x, g, b, y, mean, rstd, 2, -1),
                           KIT_E_SIZE) ||
        !KIT_EXPECT_STATUS(
            "layernorm_backward(..., d_g = NULL, ...)",
            layernorm_backward(x, g, mean, rstd, x, d_x, NULL, d_b, 2, 2),
            KIT_E_NULL) ||
        !KIT_EXPECT_STATUS(
            "layernorm_backward(..., N = 2, C = 0)",
            layernorm_backward(x, g, mean, rstd, x, d_x, d_g, d_b, 2, 0),
            KIT_E_SIZE))
        return;
    int untouched = 1;
    for (int i = 0; i < 4; i++)
        untouched &= y[i] == 7 && d_x[i] == 7;
    KIT_CHECK(untouched && d_g[0] == 7 && d_b[0] == 7,
              "a call that returned an error wrote into its outputs: check "
              "the arguments before the first write");
}

/* ---------------------------------------------------------------------
 * The given pieces: the MLP (and GELU), cross-entropy
 * ------------------------------------------------------------------- */

enum { MLP_N = 3, MLP_C = 4, MLP_F = 16 };

KIT_TEST(mlp_golden, "the MLP: fc, GELU (tanh), out and every gradient equal "
                     "PyTorch's")
{
    if (!layernorm_ready())
        return;
    const int NC = MLP_N * MLP_C, NF = MLP_N * MLP_F, CF = MLP_C * MLP_F;
    float *x = from_double(ch8_mlp_x, NC),
          *W_fc = from_double(ch8_mlp_W_fc, CF);
    float *b_fc = from_double(ch8_mlp_b_fc, MLP_F);
    float *W_proj = from_double(ch8_mlp_W_proj, CF);
    float *b_proj = from_double(ch8_mlp_b_proj, MLP_C);
    float *d_out = from_double(ch8_mlp_d_out, NC);
    float *fc = kit_output(NF), *gl = kit_output(NF), *out = kit_output(NC);
    float *scratch = kit_output(2 * NF), *d_x = filled(NC, 0);
    float *d_W_fc = filled(CF, 0), *d_b_fc = filled(MLP_F, 0);
    float *d_W_proj = filled(CF, 0), *d_b_proj = filled(MLP_C, 0);
    if (ready("mlp_forward() (it calls your matmul())",
              mlp_forward(x, W_fc, b_fc, W_proj, b_proj, fc, gl, out, MLP_N,
                          MLP_C)) &&
        KIT_EXPECT_TENSOR("mlp_forward: fc = x W_fc + b_fc", fc, ch8_mlp_fc,
                          MLP_N, MLP_F, TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_forward: GELU(fc)", gl, ch8_mlp_gelu, MLP_N,
                          MLP_F, TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_forward: out", out, ch8_mlp_out, MLP_N, MLP_C,
                          TOL, NULL, 0) &&
        ready("mlp_backward() (it calls your matmul_backward())",
              mlp_backward(x, W_fc, W_proj, fc, gl, d_out, scratch, d_x, d_W_fc,
                           d_b_fc, d_W_proj, d_b_proj, MLP_N, MLP_C)) &&
        KIT_EXPECT_TENSOR("mlp_backward: d_x", d_x, ch8_mlp_d_x, MLP_N, MLP_C,
                          TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_backward: d_W_fc", d_W_fc, ch8_mlp_d_W_fc, MLP_C,
                          MLP_F, TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_backward: d_b_fc (through GELU')", d_b_fc,
                          ch8_mlp_d_b_fc, 1, MLP_F, TOL, NULL, 0) &&
        KIT_EXPECT_TENSOR("mlp_backward: d_W_proj", d_W_proj, ch8_mlp_d_W_proj,
                          MLP_F, MLP_C, TOL, NULL, 0))
        KIT_EXPECT_TENSOR("mlp_backward: d_b_proj", d_b_proj, ch8_mlp_d_b_proj,
                          1, MLP_C, TOL, NULL, 0);
    float *all[] = {x,   W_fc,    b_fc, W_proj, b_proj, d_out,    fc,      gl,
                    out, scratch, d_x,  d_W_fc, d_b_fc, d_W_proj, d_b_proj};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        kit_output_free(all[i]);
}

enum { CE_N = 4, CE_V = 9 };

KIT_TEST(crossentropy_golden, "cross-entropy: probabilities, the mean loss "
                              "and d_logits equal PyTorch's")
{
    if (!layernorm_ready())
        return;
    const int n = CE_N * CE_V;
    float *logits = from_double(ch8_ce_logits, n), *probs = kit_output(n);
    float *losses = kit_output(CE_N), *d_logits = filled(n, 0);
    if (KIT_EXPECT_STATUS("crossentropy_forward()",
                          crossentropy_forward(logits, ch8_ce_targets, probs,
                                               losses, CE_N, CE_V),
                          KIT_OK) &&
        KIT_EXPECT_TENSOR("crossentropy_forward: probs", probs, ch8_ce_probs,
                          CE_N, CE_V, TOL, NULL, 0)) {
        double mean = 0;
        for (int i = 0; i < CE_N; i++)
            mean += losses[i] / (double)CE_N;
        if (KIT_CHECK(fabs(mean - ch8_ce_loss) < TOL,
                      "crossentropy_forward: the mean loss is %.7f, PyTorch "
                      "gives %.7f",
                      mean, ch8_ce_loss) &&
            KIT_EXPECT_STATUS("crossentropy_backward(scale = 1/N)",
                              crossentropy_backward(probs, ch8_ce_targets,
                                                    d_logits, 1.0f / CE_N, CE_N,
                                                    CE_V),
                              KIT_OK))
            KIT_EXPECT_TENSOR("crossentropy_backward: d_logits", d_logits,
                              ch8_ce_d_logits, CE_N, CE_V, TOL, NULL, 0);
    }
    int bad[CE_N] = {0, 1, CE_V, 2};
    KIT_EXPECT_STATUS(
        "crossentropy_forward() with a target of V",
        crossentropy_forward(logits, bad, probs, losses, CE_N, CE_V),
        KIT_E_SIZE);
    kit_output_free(logits), kit_output_free(probs);
    kit_output_free(losses), kit_output_free(d_logits);
}

/* ---------------------------------------------------------------------
 * The whole model against PyTorch
 * ------------------------------------------------------------------- */

static struct gpt_config golden_config(void)
{
    struct gpt_config c = {CH8_V, CH8_T, CH8_C, CH8_L, CH8_H, CH8_B};
    return c;
}

static struct gpt_train_config golden_train(void)
{
    struct gpt_train_config tc = gpt_default_train((int)ch8_train[2]);
    tc.lr = (float)ch8_train[0];
    tc.lr_min = 1e-4f;
    tc.warmup = (int)ch8_train[1];
    tc.beta1 = (float)ch8_train[3], tc.beta2 = (float)ch8_train[4];
    tc.eps = (float)ch8_train[5], tc.weight_decay = (float)ch8_train[6];
    tc.clip = (float)ch8_train[7];
    return tc;
}

/* gpt_init() on the golden case, then PyTorch's parameters loaded. */
static int golden_model(struct gpt_model *m)
{
    struct gpt_config c = golden_config();
    if (!ready("gpt_init(V 11, T 5, C 8, L 2, 2 heads)", gpt_init(m, &c, 1)))
        return 0;
    if (!KIT_CHECK(m->n_params == CH8_P,
                   "the model has %d parameters, PyTorch's %d", m->n_params,
                   CH8_P)) {
        gpt_free(m);
        return 0;
    }
    kit_to_float(ch8_gpt_params0, m->params, CH8_P);
    return 1;
}

/* Compare a (P) block tensor by tensor; the message names the tensor.
 * offset: where each tensor starts in the PyTorch arrays (the same). */
static int expect_tensors(const struct gpt_model *m, const float *got,
                          const double *want, const char *what, double tol)
{
    for (int k = 0; k < GPT_N_TENSORS; k++) {
        const int at = (int)(m->p.t[k] - m->params);
        const int n = gpt_tensor_size(&m->cfg, k), C = m->cfg.C;
        char call[128];
        snprintf(call, sizeof call, "%s of %s (as a (%d, %d) matrix)", what,
                 gpt_tensor_name(k), n / C, C);
        if (!KIT_EXPECT_TENSOR(call, got + at, want + at, n / C, C, tol, NULL,
                               0))
            return 0;
    }
    return 1;
}

KIT_TEST(gpt_golden_grads, "the model: loss and every parameter's gradient "
                           "equal a PyTorch GPT's")
{
    struct gpt_model m;
    if (!golden_model(&m))
        return;
    if (ready("gpt_forward(x, targets, B 2, T 5)",
              gpt_forward(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T)) &&
        KIT_CHECK(fabs(m.loss - ch8_gpt_losses[0]) < MODEL_TOL,
                  "the model's loss is %.7f, PyTorch's %.7f: the forward "
                  "pass differs (LayerNorm, attention or the MLP)",
                  m.loss, ch8_gpt_losses[0])) {
        gpt_zero_grad(&m);
        if (ready("gpt_backward()", gpt_backward(&m)))
            expect_tensors(&m, m.grads, ch8_gpt_grads0,
                           "gpt_backward(): the gradient", MODEL_TOL);
    }
    gpt_free(&m);
}

KIT_TEST(gpt_golden_adamw, "the model: two steps of clipping and AdamW "
                           "(decay, warm-up) equal torch.optim.AdamW's")
{
    struct gpt_model m;
    if (!golden_model(&m))
        return;
    const struct gpt_train_config tc = golden_train();
    for (int step = 0; step < 2; step++) {
        float loss = 0, norm = 0;
        char call[64];
        snprintf(call, sizeof call, "gpt_train_step(step %d)", step);
        if (!ready(call, gpt_train_step(&m, &tc, step, ch8_gpt_x, ch8_gpt_y,
                                        CH8_B, CH8_T, &loss, &norm)) ||
            !KIT_CHECK(fabs(loss - ch8_gpt_losses[step]) < MODEL_TOL &&
                           fabs(norm - ch8_gpt_norms[step]) < MODEL_TOL,
                       "step %d: loss %.7f and gradient norm %.7f, PyTorch "
                       "gives %.7f and %.7f",
                       step, loss, norm, ch8_gpt_losses[step],
                       ch8_gpt_norms[step])) {
            gpt_free(&m);
            return;
        }
    }
    expect_tensors(&m, m.params, ch8_gpt_params2,
                   "after two AdamW steps: the parameters", MODEL_TOL);
    gpt_free(&m);
}

/* ---------------------------------------------------------------------
 * The whole model against finite differences
 * ------------------------------------------------------------------- */

KIT_TEST(gpt_fd_every_tensor,
         "the model: d loss / d (every parameter tensor) matches finite "
         "differences, and a second backward pass adds to it")
{
    enum { PER = 5 };
    struct gpt_model m;
    if (!golden_model(&m))
        return;
    const int N = CH8_B * CH8_T;
    if (!ready("gpt_forward()",
               gpt_forward(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T)))
        goto done;
    gpt_zero_grad(&m);
    if (!ready("gpt_backward()", gpt_backward(&m)))
        goto done;
    float *once = kit_alloc((size_t)m.n_params * sizeof *once);
    memcpy(once, m.grads, (size_t)m.n_params * sizeof *once);
    for (int k = 0; k < GPT_N_TENSORS; k++) {
        const int at = (int)(m.p.t[k] - m.params);
        const int n = gpt_tensor_size(&m.cfg, k);
        for (int j = 0; j < PER; j++) {
            const int i = at + (j * n / PER + 7 * j + 3) % n; /* scattered */
            float *p = &m.params[i], keep = *p;
            *p = keep + 1e-2f;
            float hi = *p;
            gpt_forward(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T);
            double up = m.loss;
            *p = keep - 1e-2f;
            float lo = *p;
            gpt_forward(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T);
            double down = m.loss;
            *p = keep;
            double want = (up - down) / ((double)hi - (double)lo);
            if (!KIT_CHECK(fabs(once[i] - want) <= 2e-3 + 2e-3 * fabs(want),
                           "d loss / d %s[%d] is %.6g, finite differences "
                           "give %.6g (loss averaged over %d positions)",
                           gpt_tensor_name(k), i - at, (double)once[i], want,
                           N)) {
                free(once);
                goto done;
            }
        }
    }
    /* a second forward and backward without zeroing: twice the gradient */
    gpt_forward(&m, ch8_gpt_x, ch8_gpt_y, CH8_B, CH8_T);
    if (ready("gpt_backward() a second time", gpt_backward(&m))) {
        int bad = -1;
        for (int i = 0; i < m.n_params && bad < 0; i++)
            if (fabsf(m.grads[i] - 2 * once[i]) >
                1e-6f + 1e-5f * fabsf(once[i]))
                bad = i;
        KIT_CHECK(bad < 0,
                  "after two backward passes gradient %d is %.7g, not twice "
                  "%.7g: a backward pass must add into the gradients",
                  bad, bad < 0 ? 0.0 : m.grads[bad], bad < 0 ? 0.0 : once[bad]);
    }
    free(once);
done:
    gpt_free(&m);
}

/* ---------------------------------------------------------------------
 * Training, configurations, sampling
 * ------------------------------------------------------------------- */

KIT_TEST(gpt_overfits_one_batch,
         "training: 60 AdamW steps on one batch of 4 x 16 random tokens take "
         "the loss from log V below 0.1; the schedule warms up and decays")
{
    enum { STEPS = 60 };
    const float GOAL = 0.1f;
    struct gpt_config c = {32, 16, 32, 2, 4, 4};
    struct gpt_model m;
    if (!ready("gpt_init(V 32, T 16, C 32, L 2, 4 heads, B 4)",
               gpt_init(&m, &c, 7)))
        return;
    int x[4 * 16], y[4 * 16];
    struct rng r;
    rng_seed(&r, 88);
    for (int i = 0; i < 4 * 16; i++)
        x[i] = rng_int(&r, c.V), y[i] = rng_int(&r, c.V);
    struct gpt_train_config tc = gpt_default_train(STEPS);
    tc.lr = 1e-2f, tc.weight_decay = 0;
    float first = 0, loss = 0;
    for (int step = 0; step < STEPS; step++) {
        if (!ready("gpt_train_step()",
                   gpt_train_step(&m, &tc, step, x, y, 4, 16, &loss, NULL))) {
            gpt_free(&m);
            return;
        }
        if (step == 0)
            first = loss;
    }
    gpt_free(&m);
    if (!KIT_CHECK(fabsf(first - logf((float)c.V)) < 0.2f && loss < GOAL,
                   "the loss went from %.4f (log V = %.4f) to %.4f in %d "
                   "steps; it should fall below %.2f. The pieces tested "
                   "above pass, so look at how they are chained.",
                   first, logf((float)c.V), loss, STEPS, GOAL))
        return;
    /* the schedule: warm-up from lr/warmup, peak, cosine down to lr_min */
    float l0 = gpt_lr_at(&tc, 0), lw = gpt_lr_at(&tc, tc.warmup);
    float lmid = gpt_lr_at(&tc, (tc.warmup + STEPS - 1) / 2);
    float lend = gpt_lr_at(&tc, STEPS - 1);
    KIT_CHECK(fabsf(l0 - tc.lr / tc.warmup) < 1e-7f &&
                  fabsf(lw - tc.lr) < 1e-7f &&
                  fabsf(lmid - (tc.lr + tc.lr_min) / 2) < 2e-4f &&
                  fabsf(lend - tc.lr_min) < 1e-7f,
              "gpt_lr_at: %g at step 0, %g at the warm-up's end, %g half-way, "
              "%g at the end; expected %g, %g, about %g, %g",
              l0, lw, lmid, lend, tc.lr / tc.warmup, tc.lr,
              (tc.lr + tc.lr_min) / 2, tc.lr_min);
}

KIT_TEST(gpt_config_errors,
         "gpt_init: heads that do not divide C give KIT_E_HEADS, sizes <= 0 "
         "KIT_E_SIZE, each named in one line")
{
    static const struct {
        struct gpt_config c;
        int want;
        const char *word; /* the message names the problem */
    } cases[] = {
        {{16, 8, 8, 2, 3, 1}, KIT_E_HEADS, "n_heads = 3"},
        {{0, 8, 8, 2, 2, 1}, KIT_E_SIZE, "V = 0"},
        {{16, 8, 8, 0, 2, 1}, KIT_E_SIZE, "L = 0"},
        {{16, -1, 8, 2, 2, 1}, KIT_E_SIZE, "T = -1"},
        {{16, 8, 8, 2, 2, 0}, KIT_E_SIZE, "B = 0"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct gpt_model m;
        const struct gpt_config *c = &cases[k].c;
        char call[128], why[160];
        snprintf(call, sizeof call,
                 "gpt_init(V %d, T %d, C %d, L %d, %d heads, B %d)", c->V, c->T,
                 c->C, c->L, c->n_heads, c->B);
        int got = gpt_init(&m, c, 1);
        if (got == KIT_OK)
            gpt_free(&m);
        if (got == KIT_E_TODO) {
            ready(call, got);
            return;
        }
        if (!KIT_EXPECT_STATUS(call, got, cases[k].want))
            return;
        int again = gpt_check_config(c, why, sizeof why);
        if (!KIT_CHECK(again == cases[k].want && strstr(why, cases[k].word) &&
                           !strchr(why, '\n'),
                       "gpt_check_config(%s) said \"%s\" (%s); the line "
                       "should name \"%s\"",
                       call, why, kit_status_name(again), cases[k].word))
            return;
    }
}

KIT_TEST(gpt_generate_seeded,
         "sampling: the same seed gives the same tokens; temperature 0 and "
         "top_k 1 pick the argmax; top_k keeps the k best")
{
    enum { PROMPT = 3, NEW = 20 };
    struct gpt_config c = {16, 8, 16, 2, 2, 1};
    struct gpt_model m;
    if (!ready("gpt_init(V 16, T 8, C 16, L 2, 2 heads)", gpt_init(&m, &c, 3)))
        return;
    for (int i = 0; i < m.n_params; i++) /* sharper logits than at init */
        m.params[i] *= 10;
    int a[PROMPT + NEW] = {1, 2, 3}, b[PROMPT + NEW] = {1, 2, 3};
    int greedy[PROMPT + NEW] = {1, 2, 3}, k1[PROMPT + NEW] = {1, 2, 3};
    if (!ready("gpt_generate(seed 5)",
               gpt_generate(&m, a, PROMPT, NEW, 1.0f, 0, 5)) ||
        !ready("gpt_generate(seed 5) again",
               gpt_generate(&m, b, PROMPT, NEW, 1.0f, 0, 5)) ||
        !ready("gpt_generate(temperature 0)",
               gpt_generate(&m, greedy, PROMPT, NEW, 0.0f, 0, 5)) ||
        !ready("gpt_generate(top_k 1)",
               gpt_generate(&m, k1, PROMPT, NEW, 1.0f, 1, 9))) {
        gpt_free(&m);
        return;
    }
    int in_range = 1;
    for (int i = 0; i < PROMPT + NEW; i++)
        in_range &= a[i] >= 0 && a[i] < c.V;
    if (!KIT_CHECK(in_range && !memcmp(a, b, sizeof a),
                   "two runs with seed 5 gave different tokens, or a token "
                   "out of 0..V-1") ||
        !KIT_CHECK(!memcmp(greedy, k1, sizeof a),
                   "top_k = 1 and temperature 0 should both pick the argmax "
                   "at every step")) {
        gpt_free(&m);
        return;
    }
    /* the last row of logits: top_k 3 draws only among its 3 best */
    const float *z = m.a.logits + (size_t)(m.T - 1) * c.V;
    float probs[16];
    struct rng r;
    rng_seed(&r, 1);
    int outside = -1;
    for (int draw = 0; draw < 200 && outside < 0; draw++) {
        int t = gpt_sample_token(z, probs, c.V, 2.0f, 3, &r), above = 0;
        for (int j = 0; j < c.V; j++)
            above += z[j] > z[t];
        if (above >= 3)
            outside = t;
    }
    gpt_free(&m);
    KIT_CHECK(outside < 0,
              "gpt_sample_token(top_k 3) drew token %d, which is "
              "not among the 3 largest logits",
              outside);
}

static const struct kit_test *const ch9_tests[] = {
    &ln_forward_golden,
    &ln_backward_golden,
    &ln_backward_accumulates,
    &ln_errors,
    &mlp_golden,
    &crossentropy_golden,
    &gpt_golden_grads,
    &gpt_golden_adamw,
    &gpt_fd_every_tensor,
    &gpt_overfits_one_batch,
    &gpt_config_errors,
    &gpt_generate_seeded,
    NULL,
};

KIT_CHAPTER(9, "Chapter 8 model (dev)", "ch8_lm.c", ch9_tests)
