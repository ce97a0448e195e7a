/*
 * setup.c: what chapter 8's experiment reads from the corpus before it
 * trains (lm.h): the evaluation windows, the relations' cases, the
 * sentence and the prompts; and the n-gram baselines.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sentence =
    "The delivery truck, which was late, blocked the narrow street.";
const char *const prompts[N_GEN] = {"The", "He said that", "In the city"};
const char *const ngram_name[NGRAM_MAX_ORDER] = {"unigram", "bigram",
                                                 "trigram"};
const char *const rel_key[R] = {"noun_det", "noun_adj", "prep_obj", "verb_subj",
                                "noun_poss"};

/* n windows of T tokens spread evenly over split s, starting `phase`
 * (0 or 1) half a spacing in, so that two sets of one split do not
 * share a window */
void windows_init(const struct run *run, struct windows *w,
                  const struct corpus_data *d, int s, int n, int T, int phase)
{
    w->n = n;
    w->x = run_calloc(run, n * T, sizeof *w->x);
    w->y = run_calloc(run, n * T, sizeof *w->y);
    w->y_class = run_calloc(run, n * T, sizeof *w->y_class);
    w->x_class = run_calloc(run, n * T, sizeof *w->x_class);
    w->x_tag = run_calloc(run, n * T, sizeof *w->x_tag);
    w->first = run_calloc(run, n, sizeof *w->first);
    const long span = d->split_n[s] - T - 1;
    if (span < n)
        run_fail(run, 1, "the corpus's %s split is too small for %d windows",
                 s == SPLIT_VALID ? "validation" : "test", n);
    for (int i = 0; i < n; i++) {
        long at = d->split_first[s] + (2L * i + phase) * span / (2L * n);
        w->first[i] = at;
        for (int t = 0; t < T; t++) {
            const long p = at + t;
            w->x[i * T + t] = d->token[p];
            w->y[i * T + t] = d->token[p + 1];
            w->y_class[i * T + t] = d->tag_cl[d->tag[p + 1]];
            w->x_class[i * T + t] = d->tag_cl[d->tag[p]];
            w->x_tag[i * T + t] = d->tags[d->tag[p]];
        }
    }
}

void windows_free(struct windows *w)
{
    free(w->x), free(w->y), free(w->y_class), free(w->x_class);
    free((void *)w->x_tag), free(w->first);
}

/* --lrs "2e-3,5e-3": numbers from 1e-5 to 1 */
int parse_lrs(const struct run *run, const char *s, float *out)
{
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf)
        run_fail(run, 2, "LRS is too long ('%.40s...')", s);
    int n = 0;
    for (char *tok = strtok(buf, ", "); tok; tok = strtok(NULL, ", ")) {
        double v = 0;
        if (!run_read_double(tok, &v) || !(v >= 1e-5 && v <= 1))
            run_fail(run, 2,
                     "LRS must be learning rates from 1e-5 to 1, not '%s'",
                     tok);
        if (n == MAX_LR)
            run_fail(run, 2, "LRS lists more than %d rates ('%s')", MAX_LR, s);
        for (int j = 0; j < n; j++)
            if (out[j] == (float)v)
                run_fail(run, 2, "LRS lists %s twice ('%s'): give each once",
                         tok, s);
        out[n++] = (float)v;
    }
    if (n == 0)
        run_fail(run, 2, "LRS lists no rate ('%s')", s);
    return n;
}

/* The n_prompt tokens of out continued by n_new drawn from m, as
 * gpt_generate() draws from a network: the log-probabilities of the next
 * token as its logits, the same temperature, top-k, sampler and seed. */
static int ngram_generate(const struct ngram_model *m, int *out, int n_prompt,
                          int n_new, unsigned long long seed)
{
    float *logits = malloc((size_t)m->V * sizeof *logits);
    float *probs = malloc((size_t)m->V * sizeof *probs);
    if (!logits || !probs) {
        free(logits), free(probs);
        return KIT_E_NOMEM;
    }
    struct rng r;
    rng_seed(&r, seed);
    for (int n = n_prompt; n < n_prompt + n_new; n++) {
        for (int w = 0; w < m->V; w++)
            logits[w] = (float)log(ngram_prob(m, out, n, w));
        out[n] = gpt_sample_token(logits, probs, m->V, LM_TEMP, LM_TOP_K, &r);
    }
    free(logits), free(probs);
    return KIT_OK;
}

/* Each order estimated on the whole training split, scored on the same
 * validation and test windows as the networks; the trigram continues the
 * prompts, as the networks do. */
void baselines_run(const struct run *run, struct lm *lm)
{
    const struct corpus_data *d = lm->d;
    const double t0 = run_now();
    for (int k = 0; k < NGRAM_MAX_ORDER; k++) {
        struct ngram_model m;
        char why[160];
        struct baseline *b = &lm->base[k];
        if (ngram_fit(&m, k + 1, d->V, d->token + d->split_first[SPLIT_TRAIN],
                      d->split_n[SPLIT_TRAIN], NULL, why, sizeof why) != KIT_OK)
            run_fail(run, 1, "the %s baseline: %s", ngram_name[k], why);
        b->order = k + 1, b->train_tokens = m.n_train;
        if (ngram_window_loss(&m, lm->val.x, lm->val.y, lm->val.n, lm->sz.T,
                              &b->val) != KIT_OK ||
            ngram_window_loss(&m, lm->test.x, lm->test.y, lm->test.n, lm->sz.T,
                              &b->test) != KIT_OK)
            run_fail(run, 1, "the %s baseline cannot score the windows",
                     ngram_name[k]);
        for (int g = 0; g < N_GEN && k == NGRAM_MAX_ORDER - 1; g++) {
            memcpy(lm->base_gen[g], lm->prompt[g], sizeof lm->prompt[g]);
            if (ngram_generate(&m, lm->base_gen[g], lm->n_prompt[g], LM_GEN_NEW,
                               LM_GEN_SEED + (unsigned)g) != KIT_OK)
                run_fail(run, 1, "out of memory");
        }
        ngram_free(&m);
    }
    fprintf(stderr,
            PROG ": n-gram baselines (Kneser-Ney, %ld training tokens): "
                 "validation %.3f, %.3f, %.3f nats (%.1f s)\n",
            lm->base[0].train_tokens, lm->base[0].val, lm->base[1].val,
            lm->base[2].val, run_now() - t0);
}

/* what main() allocated for the run: the relations' cases, the
 * windows, the corpus */
void lm_free(struct lm *lm, struct corpus_data *d)
{
    for (int rel = 0; rel < R; rel++)
        free(lm->word[rel]), free(lm->related[rel]), free(lm->hword[rel]),
            free(lm->hrelated[rel]);
    windows_free(&lm->val), windows_free(&lm->meas), windows_free(&lm->test);
    corpus_data_free(d);
}

/* What the run reads from the corpus d before it trains: the validation,
 * measurement and test windows, the tag profiles' baselines, every
 * relation's cases and hard cases in the measurement windows, the
 * sentence and the prompts, encoded */
void lm_setup(const struct run *run, struct lm *lm, const struct corpus_data *d)
{
    windows_init(run, &lm->val, d, SPLIT_VALID, lm->sz.n_val, lm->sz.T, 0);
    windows_init(run, &lm->meas, d, SPLIT_VALID, lm->sz.n_meas, lm->sz.T, 1);
    windows_init(run, &lm->test, d, SPLIT_TEST, lm->sz.n_test, lm->sz.T, 0);
    heads_tag_profile(NULL, lm->meas.x_class, lm->meas.n, lm->sz.T, LM_K, -1,
                      lm->tag_uni, lm->tag_q);
    for (int k = 0; k <= LM_K; k++)
        heads_tag_profile(NULL, lm->meas.x_class, lm->meas.n, lm->sz.T, LM_K, k,
                          lm->tag_off[k], NULL);
    for (int rel = 0; rel < R; rel++) {
        int n = 0;
        for (int s = 0; s < lm->meas.n; s++)
            n += heads_relation_cases(lm->meas.x_tag + (size_t)s * lm->sz.T,
                                      lm->sz.T, rel, 0, NULL, NULL, 0);
        lm->word[rel] = run_calloc(run, n, sizeof(int));
        lm->related[rel] = run_calloc(run, n, sizeof(int));
        int at = 0;
        for (int s = 0; s < lm->meas.n; s++)
            at += heads_relation_cases(lm->meas.x_tag + (size_t)s * lm->sz.T,
                                       lm->sz.T, rel, s * lm->sz.T,
                                       lm->word[rel] + at,
                                       lm->related[rel] + at, n - at);
        lm->n_cases[rel] = n;
        /* the most common offset, and the cases not at it */
        int count[MAX_T] = {0}, mode = 0;
        for (int c = 0; c < n; c++)
            count[lm->word[rel][c] - lm->related[rel][c]]++;
        for (int k = 1; k < lm->sz.T; k++)
            mode = count[k] > count[mode] ? k : mode;
        lm->mode_k[rel] = mode;
        lm->hword[rel] = run_calloc(run, n, sizeof(int));
        lm->hrelated[rel] = run_calloc(run, n, sizeof(int));
        for (int c = 0; c < n; c++)
            if (lm->word[rel][c] - lm->related[rel][c] != mode) {
                lm->hword[rel][lm->n_hard[rel]] = lm->word[rel][c];
                lm->hrelated[rel][lm->n_hard[rel]++] = lm->related[rel][c];
            }
    }
    lm->n_sent = corpus_encode(d, sentence, lm->sent, MAX_S);
    if (lm->n_sent <= 0 || lm->n_sent > MAX_S)
        run_fail(run, 1, "the sentence has %d tokens (at most %d)", lm->n_sent,
                 MAX_S);
    for (int g = 0; g < N_GEN; g++) {
        lm->n_prompt[g] = corpus_encode(d, prompts[g], lm->prompt[g], 8);
        if (lm->n_prompt[g] <= 0 || lm->n_prompt[g] > 8)
            run_fail(run, 1, "the prompt '%s' does not encode", prompts[g]);
    }
}

/* The configurations: every head count, then the K/V sharing ones. */
void configurations(struct run *run, const char *kv_arg, struct lm *lm)
{
    if (kv_arg && strcmp(kv_arg, "none") == 0)
        lm->sz.n_kv = 0; /* no configuration shares K/V heads */
    else if (kv_arg)
        lm->sz.n_kv = run_parse_ints(run, "KV", kv_arg, lm->sz.kv, MAX_KV, 0,
                                     lm->sz.gqa_h);
    for (int i = 0; i < lm->sz.n_heads; i++)
        lm->cfg_h[lm->n_cfg] = lm->cfg_g[lm->n_cfg] = lm->sz.heads[i],
        lm->n_cfg++;
    int has_gqa_h = 0; /* the K/V table's g = h row is a head count's */
    for (int i = 0; i < lm->n_cfg; i++)
        has_gqa_h |= lm->cfg_h[i] == lm->sz.gqa_h;
    if (lm->sz.n_kv > 0 && !has_gqa_h)
        lm->cfg_h[lm->n_cfg] = lm->cfg_g[lm->n_cfg] = lm->sz.gqa_h, lm->n_cfg++;
    for (int i = 0; i < lm->sz.n_kv; i++) {
        if (lm->sz.kv[i] == 0 || lm->sz.gqa_h % lm->sz.kv[i] != 0 ||
            lm->sz.kv[i] == lm->sz.gqa_h)
            run_fail(run, 2,
                     "KV must list K/V head counts that divide %d and are "
                     "smaller than it (%d query heads share them), not %d",
                     lm->sz.gqa_h, lm->sz.gqa_h, lm->sz.kv[i]);
        lm->cfg_h[lm->n_cfg] = lm->sz.gqa_h,
        lm->cfg_g[lm->n_cfg] = lm->sz.kv[i];
        lm->n_cfg++;
    }
    for (int i = 0; i < lm->n_cfg; i++) {
        const struct gpt_config cfg = model_config(lm, lm->cfg_h[i]);
        char why[160];
        if (gpt_check_config(&cfg, why, sizeof why) != KIT_OK)
            run_fail(run, 2, "%d heads: %s", lm->cfg_h[i], why);
    }
}

/* workers x threads = the cores; the models' folder; what the run is */
void run_start(struct run *run, struct lm *lm, const char *dir, long cores)
{
    static char models[512];
    const int H = lm->n_cfg, n_grid = H * (lm->sz.lr_hi - lm->sz.lr_lo + 1);
    const int busy = run->workers < n_grid ? run->workers : n_grid;
    lm->threads = (int)(cores / busy) > 1 ? (int)(cores / busy) : 1;
    if (strlen(dir) > 400)
        run_fail(run, 2, "RESULTS_DIR is too long (%zu characters)",
                 strlen(dir));
    snprintf(models, sizeof models, "%s/models", dir);
    make_dir(run, dir);
    make_dir(run, models);
    lm->models_dir = models;
    fprintf(stderr, PROG ": size %s, heads", lm->sz.name);
    for (int i = 0; i < H; i++)
        fprintf(stderr, "%s%d", i ? "," : " ", lm->cfg_h[i]);
    if (lm->sz.n_kv)
        fprintf(stderr, " (the last %d sharing", lm->sz.n_kv);
    for (int i = 0; i < lm->sz.n_kv; i++)
        fprintf(stderr, " %d", lm->sz.kv[i]);
    if (lm->sz.n_kv)
        fprintf(stderr, " K/V heads)");
    fprintf(stderr,
            ", a grid of %d rates (a ladder of %d), %d seeds, %d tokens per "
            "network; %d worker%s x %d thread%s\n",
            lm->sz.lr_hi - lm->sz.lr_lo + 1, lm->sz.n_lr, lm->sz.seeds,
            lm->sz.tokens, busy, busy > 1 ? "s" : "", lm->threads,
            lm->threads > 1 ? "s" : "");
}
