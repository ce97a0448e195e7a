/*
 * network.c: one network of chapter 8's experiment (lm.h): trained by
 * the protocol (lm_protocol.h), scored, its heads measured (heads_lm.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#ifdef _OPENMP
#include <omp.h>
#endif

struct gpt_config model_config(const struct lm *lm, int heads)
{
    return (struct gpt_config){.V = lm->d->V,
                               .T = lm->sz.T,
                               .C = lm->sz.C,
                               .L = lm->sz.L,
                               .n_heads = heads,
                               .B = LM_EVAL_B};
}

/* 1 when every head's K/V columns equal its group's first head's, as
 * gpt_kv_share() keeps them; checked after every training run. */
int kv_copies_equal(const struct gpt_model *m, int g)
{
    const int C = m->cfg.C, h = m->cfg.n_heads, d = C / h, group = h / g;
    const int tensors[2] = {GPT_W_K, GPT_W_V};
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < m->cfg.L; l++)
            for (int r = 0; r < C; r++)
                for (int i = 0; i < h; i++) {
                    const float *w =
                        m->p.t[tensors[k]] + (size_t)l * C * C + (size_t)r * C;
                    if (memcmp(w + i * d, w + (i - i % group) * d,
                               (size_t)d * sizeof *w) != 0)
                        return 0;
                }
    return 1;
}

/* The parameters a model with g K/V heads trains: gpt.c's count less the
 * copies gpt_kv_share() keeps equal. */
int unique_params(const struct gpt_model *m, int g)
{
    const int C = m->cfg.C, h = m->cfg.n_heads;
    return m->n_params - 2 * m->cfg.L * C * (h - g) * (C / h);
}

/* The offset profiles, the relation scores, the ablation scan, the
 * sentence and the generated lines of one trained network (heads_lm.h's
 * measures), into r. */
int measure(struct gpt_model *m, const struct lm *lm, struct result *r)
{
    const int L = m->cfg.L, h = m->cfg.n_heads, N = lm->meas.n, T = lm->sz.T;
    const int d_head = m->cfg.C / h, S = lm->n_sent;
    const size_t TT = (size_t)T * T;
    float *A = malloc((size_t)L * h * N * TT * sizeof *A);
    float *means = malloc((size_t)L * h * d_head * sizeof *means);
    float *loss = malloc((size_t)L * h * NC * sizeof *loss);
    float *sw = malloc((size_t)L * h * S * S * sizeof *sw);
    int rc = A && means && loss && sw ? KIT_OK : KIT_E_NOMEM;
    /* 1. where each head looks, and whether it finds the relations */
    if (rc == KIT_OK)
        rc = heads_weights(m, lm->meas.x, N, T, A);
    for (int k = 0; k < L * h && rc == KIT_OK; k++) {
        const float *A_k = A + (size_t)k * N * TT;
        rc =
            head_offset_profile(A_k, N, T, LM_K, r->mean_w[k], r->top_share[k]);
        r->row_max[k] = heads_row_max(A_k, N, T, LM_K);
        for (int q = 0; q < R && rc == KIT_OK; q++)
            if (lm->n_cases[q] > 0)
                rc = relation_score(A_k, N, T, lm->word[q], lm->related[q],
                                    lm->n_cases[q], &r->rel_score[k][q],
                                    &r->rel_base[q], &r->rel_k[q]);
        for (int q = 0; q < R && rc == KIT_OK; q++)
            if (lm->n_hard[q] > 0)
                rc = relation_score(A_k, N, T, lm->hword[q], lm->hrelated[q],
                                    lm->n_hard[q], &r->hard_score[k][q],
                                    &r->hard_base[q], &r->hard_k[q]);
        heads_tag_profile(A_k, lm->meas.x_class, N, T, LM_K, 0, r->tag_mass[k],
                          NULL);
    }
    /* 2. the loss without each head, per class of the predicted word,
     * on the first n_abl windows */
    const int n_abl = lm->sz.n_abl < N ? lm->sz.n_abl : N;
    if (rc == KIT_OK)
        rc = heads_means(m, lm->meas.x, n_abl, T, means);
    if (rc == KIT_OK)
        rc = heads_ablation_scan(m, lm->meas.x, lm->meas.y, lm->meas.y_class,
                                 n_abl, T, means, loss, r->abl_base,
                                 r->abl_count);
    for (int k = 0; k < L * h && rc == KIT_OK; k++)
        memcpy(r->abl_loss[k], loss + (size_t)k * NC, NC * sizeof *loss);
    /* 3. the sentence: every head's weights, and its loss without each */
    r->n_sent = S;
    if (rc == KIT_OK)
        rc = heads_sentence_weights(m, lm->sent, S, sw);
    for (int k = 0; k < L * h && rc == KIT_OK; k++)
        memcpy(r->sent_w[k], sw + (size_t)k * S * S,
               (size_t)S * S * sizeof *sw);
    if (rc == KIT_OK)
        rc = heads_sentence_ablation(m, lm->sent, S, means, r->sent_base,
                                     &r->sent_abl[0][0], MAX_S);
    /* 4. a few lines, from the same seed */
    for (int g = 0; g < N_GEN && rc == KIT_OK; g++) {
        memcpy(r->gen[g], lm->prompt[g], sizeof lm->prompt[g]);
        rc = gpt_generate(m, r->gen[g], lm->n_prompt[g], LM_GEN_NEW, LM_TEMP,
                          LM_TOP_K, LM_GEN_SEED + (unsigned long long)g);
    }
    r->measured = rc == KIT_OK;
    free(A), free(means), free(loss), free(sw);
    return rc;
}

/* The rate of the ladder with configuration hc's lowest validation loss
 * among those it was trained at (the lower rate on a tie); *lo and *hi:
 * the lowest and highest rate it was trained at */
int best_rate(const struct lm *lm, const struct result *tune, int hc, int *lo,
              int *hi)
{
    const int n_lr = lm->sz.n_lr;
    float loss[MAX_LR];
    int trained[MAX_LR];
    for (int i = 0; i < n_lr; i++)
        loss[i] = tune[hc * n_lr + i].val_loss,
        trained[i] = tune[hc * n_lr + i].trained;
    return lm_best_rate(loss, trained, n_lr, lo, hi);
}

/* "1 head", "16 heads", "4 query heads on 1 K/V head" */
void cfg_label(const struct lm *lm, int hc, char *buf, size_t n)
{
    const int h = lm->cfg_h[hc], g = lm->cfg_g[hc];
    if (g == h)
        snprintf(buf, n, "%d head%s", h, h > 1 ? "s" : "");
    else
        snprintf(buf, n, "%d query heads on %d K/V head%s", h, g,
                 g > 1 ? "s" : "");
}

/* whether any configuration was trained at rate i of the ladder */
int rate_used(const struct lm *lm, const struct result *tune, int i)
{
    for (int hc = 0; hc < lm->n_cfg; hc++)
        if (tune[hc * lm->sz.n_lr + i].trained)
            return 1;
    return 0;
}

/* the tuning networks trained */
int n_tuned(const struct lm *lm, const struct result *tune)
{
    int n = 0;
    for (int k = 0; k < lm->n_cfg * lm->sz.n_lr; k++)
        n += tune[k].trained;
    return n;
}

/* job k of the phase: which head count, rate and seed it is */
void job_of(const struct lm *lm, int k, int *hc, int *lr, int *s)
{
    if (lm->phase == 1)
        *hc = lm->job_hc[k], *lr = lm->job_lr[k], *s = 0;
    else
        *hc = k / lm->sz.seeds, *s = k % lm->sz.seeds, *lr = lm->chosen[*hc];
}

/* phase 2 and 3: the network's heads over the measurement windows, as
 * numbers only (roles_measure()) */
int heads_summary(struct gpt_model *m, const struct lm *lm, struct result *r)
{
    float *A = malloc((size_t)m->cfg.L * m->cfg.n_heads * lm->meas.n *
                      lm->sz.T * lm->sz.T * sizeof *A);
    int rc = A ? roles_measure(m, lm, &r->heads_sum, A) : KIT_E_NOMEM;
    free(A);
    return rc;
}

/* Train m at r's rate on seed's batches (lm_train()): its validation
 * curve, wall time and last validation loss into r. */
static int train(struct gpt_model *m, const struct lm *lm, int g,
                 unsigned long long seed, struct result *r)
{
    const int steps = r->steps, per = lm->sz.B * lm->sz.T;
    /* --stop: the schedule stays the whole run's, the loop ends early */
    const struct lm_plan p = {
        .B = lm->sz.B,
        .T = lm->sz.T,
        .steps = steps,
        .last = lm->stop && lm->stop / per < steps ? lm->stop / per : steps,
        .points = lm->sz.points,
        .lr = r->lr,
        .kv_heads = g,
        .seed = seed,
        .val_x = lm->val.x,
        .val_y = lm->val.y,
        .n_val = lm->val.n};
    const int rc = lm_train(m, lm->d, &p, r->val_curve, r->curve_tokens,
                            &r->n_points, &r->train_s);
    r->val_loss = r->val_curve[r->n_points - 1];
    return rc;
}

int network_run(int k, void *result, void *ctx)
{
    const struct lm *lm = ctx;
    struct result *r = result;
    int hc, li, s;
    job_of(lm, k, &hc, &li, &s);
#ifdef _OPENMP
    omp_set_num_threads(lm->threads);
#endif
    const struct gpt_config cfg = model_config(lm, lm->cfg_h[hc]);
    const int g = lm->cfg_g[hc];
    struct gpt_model m;
    const unsigned long long seed = RUN_FIRST_SEED + (unsigned long long)s;
    int rc = gpt_init(&m, &cfg, seed);
    if (rc != KIT_OK)
        return rc;
    if (g < cfg.n_heads)
        gpt_kv_share(&m, g, GPT_KV_COPY);
    r->L = cfg.L, r->heads = cfg.n_heads, r->kv_heads = g, r->lr_index = li;
    r->seed_index = s, r->lr = lm->sz.lr[li],
    r->n_params = unique_params(&m, g);
    r->steps = lm->sz.tokens / (lm->sz.B * lm->sz.T);
    r->tokens = r->steps * lm->sz.B * lm->sz.T;
    if (lm->stop && lm->stop < r->tokens) /* --stop: the tokens it trains */
        r->tokens = lm->stop / (lm->sz.B * lm->sz.T) * lm->sz.B * lm->sz.T;
    char path[600], spath[600];
    model_path(lm, cfg.n_heads, g, li, path, sizeof path);
    seed_path(lm, cfg.n_heads, g, li, s, spath, sizeof spath);
    int trained = 0;
    /* --resume: a network an earlier run of these settings finished */
    const char *own = lm->phase == 1 ? path : spath;
    const int keep = lm->resume && !lm->stop && (lm->phase == 1 || s > 0) &&
                     load_record(lm, r, own) == KIT_OK &&
                     load_params(&m, own, NULL, 0) == KIT_OK;
    char why[1400];
    if (lm->weights_dir) { /* --weights: the run's 16-bit files, only */
        weights16_path(lm->weights_dir, cfg.n_heads, g, seed, path,
                       sizeof path);
        if ((rc = load_params(&m, path, why, sizeof why)) != KIT_OK)
            fprintf(stderr, PROG ": %s\n", why);
    } else if (lm->phase >= 2 && s == 0) /* the tuning run's own network */
        rc = load_params(&m, path, NULL, 0);
    else if (lm->phase == 3 && load_params(&m, spath, NULL, 0) == KIT_OK)
        rc = KIT_OK; /* --remeasure: a seed's network, kept */
    else if (keep)
        rc = KIT_OK, r->kept = 1;
    else
        rc = train(&m, lm, g, seed, r), trained = 1;
    if (rc == KIT_OK && !kv_copies_equal(&m, g)) {
        fprintf(stderr,
                PROG ": %d query heads on %d K/V heads: the shared "
                     "K/V columns came apart in training\n",
                cfg.n_heads, g);
        rc = KIT_E_SIZE;
    }
    if (rc == KIT_OK && lm->phase == 1 && !lm->stop && trained)
        rc = save_params(&m, path);
    if (rc == KIT_OK && lm->phase >= 2 && s > 0 && trained)
        rc = save_params(&m, spath);
    if (rc == KIT_OK && trained && !lm->stop && lm->phase <= 2)
        rc = save_record(lm, r, own);
    r->trained = lm->phase == 1;
    if (rc == KIT_OK && lm->phase >= 2) {
        rc = lm_eval_loss(&m, lm->test.x, lm->test.y, lm->test.n, lm->sz.T,
                          &r->test_loss);
        if (rc == KIT_OK && (lm->phase == 2 || lm->weights_dir) && s == 0 &&
            g == cfg.n_heads)
            rc = measure(&m, lm, r);
        if (rc == KIT_OK)
            rc = heads_summary(&m, lm, r);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r->peak_kb = ru.ru_maxrss;
    gpt_free(&m);
    return rc;
}

void network_name(int k, char *buf, size_t n, void *ctx)
{
    const struct lm *lm = ctx;
    int hc, li, s;
    job_of(lm, k, &hc, &li, &s);
    const int h = lm->cfg_h[hc], g = lm->cfg_g[hc];
    char kv[32] = "";
    if (g < h)
        snprintf(kv, sizeof kv, " sharing %d K/V head%s", g, g > 1 ? "s" : "");
    snprintf(buf, n, "%s, %d head%s%s, lr %g, seed %llu%s",
             lm->phase == 1   ? "tuning"
             : lm->phase == 2 ? "final"
                              : "remeasured",
             h, h > 1 ? "s" : "", kv, (double)lm->sz.lr[li],
             RUN_FIRST_SEED + (unsigned long long)s,
             lm->phase == 2 && s == 0 ? " (the tuning network, measured)" : "");
}

void network_score(const void *result, char *buf, size_t n)
{
    const struct result *r = result;
    if (r->test_loss > 0)
        snprintf(buf, n, "test %.3f nats, %.0f s training%s, peak %.0f MB",
                 (double)r->test_loss, r->train_s, r->kept ? " (kept)" : "",
                 r->peak_kb / 1024.0);
    else if (r->kept)
        snprintf(buf, n, "validation %.3f nats after %d tokens, kept (%.0f s)",
                 (double)r->val_loss, r->tokens, r->train_s);
    else
        snprintf(buf, n,
                 "validation %.3f nats after %d tokens, %.0f s, "
                 "peak %.0f MB",
                 (double)r->val_loss, r->tokens, r->train_s,
                 r->peak_kb / 1024.0);
}

/* the best many-head count, by the mean validation loss over seeds */
int best_many(const struct lm *lm, const struct result *fin)
{
    const int S = lm->sz.seeds;
    int best_hc = -1;
    double best_val = 0;
    for (int hc = 0; hc < lm->n_cfg; hc++) {
        if (lm->cfg_h[hc] == 1 || lm->cfg_g[hc] != lm->cfg_h[hc])
            continue;
        double v = 0;
        for (int s = 0; s < S; s++)
            v += fin[hc * S + s].val_loss / S;
        if (best_hc < 0 || v < best_val)
            best_hc = hc, best_val = v;
    }
    return best_hc;
}
