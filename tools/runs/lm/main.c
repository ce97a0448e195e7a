/*
 * main.c: chapter 8's experiment, `make lm-experiment`: the small GPT
 * (gpt.h) trained on the Brown corpus (corpus.h) with 1 to 16 heads at
 * the same size, each head count tuned the same way, and what its heads
 * do (heads_lm.h).
 *
 *   lm-experiment [--size smoke|book|full] [--seeds N] [--workers W]
 *                 [--heads 1,2,4,8,16] [--lrs 1.5e-3,3e-3,6e-3]
 *                 [--tokens N] [--corpus FILE] [--impl NAME] RESULTS_DIR
 *
 * The protocol, the same for every head count:
 *   1. tuning: seed 1 (RUN_FIRST_SEED) is trained at every learning rate
 *      of the grid, with the same token budget and the same batches;
 *      the rate with the lowest validation loss (on seed 1 alone) is
 *      chosen;
 *   2. the chosen rate is trained on seeds 2 .. N as well (seed 1's
 *      network is the tuning run's own, saved and reloaded, not trained
 *      again), and every one of those networks is scored once on the
 *      test set;
 *   3. seed 1's network of every head count is measured on validation
 *      text: each head's offset profile, its relation scores beside the
 *      best fixed offset, mean ablation per tag class, its weights on
 *      the lesson's sentence, and a few generated lines.
 * Seed s draws the same batches for every configuration, so networks
 * of one seed differ only in their heads and learning rate.
 *
 * Written into RESULTS_DIR (every file through a temporary file and a
 * rename, so an interrupted run leaves the previous ones whole):
 *   tuning.csv        one row per tuning network: its validation loss
 *   results.csv       one row per final network: validation and test loss
 *   table.txt         the tables printed
 *   curves.dat        validation loss against tokens seen, mean and sd
 *                     over seeds, one column pair per head count
 *   curves_tuning.dat the same for every (head count, rate), seed 1
 *   offsets.csv       every head's offset profile and Voita's criterion
 *   relations.csv     every head's relation scores, baseline, margin
 *   ablation.csv      every head's loss increase per tag class
 *   ablation_hH.dat   the same as a head x class table, for gnuplot
 *   sentence/sentence_hH_lL_iI.dat  each head's weights on the sentence
 *   generated.txt     the generated lines
 *   models/hH_lrK.bin the tuning networks' parameters
 * Tables go to stdout; progress, wall times and peak memory to stderr.
 *
 * Dimension letters: as gpt.h (V, T, C, L, B, h); N = sequences of an
 * evaluation set, K = the largest offset measured, R = relations,
 * NC = tag classes, S = tokens of the sentence.
 */
#define _POSIX_C_SOURCE 200809L

#include "corpus.h"
#include "datafile.h"
#include "gpt.h"
#include "heads_lm.h"
#include "rng.h"
#include "runner.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define PROG "lm-experiment"

/* The model: everything but the head count is fixed. */
#define LM_C        64 /* d_model */
#define LM_L        2  /* blocks */
#define LM_T        64 /* context */
#define LM_B        8  /* sequences per training batch */
#define LM_EVAL_B   16 /* sequences per forward pass when evaluating */
#define LM_K        8  /* offsets 0 .. K in the profiles */
#define LM_TOP_K    40 /* generation: the top-k */
#define LM_TEMP     0.8f
#define LM_GEN_NEW  20 /* tokens generated per line */
#define LM_GEN_SEED 7ULL

#define MAX_HC     8  /* head counts */
#define MAX_LR     5  /* learning rates in the grid */
#define MAX_H      16 /* heads in one block */
#define MAX_HL     (LM_L * MAX_H)
#define MAX_POINTS 17 /* points of a learning curve, the start included */
#define MAX_S      16 /* tokens of the sentence */
#define N_GEN      3
#define R          HEADS_N_RELATIONS
#define NC         TAG_N_CLASSES

static const char *const sentence =
    "The delivery truck, which was late, blocked the narrow street.";
static const char *const prompts[N_GEN] = {"The", "He said that",
                                           "In the city"};
static const char *const rel_key[R] = {"noun_det", "noun_adj", "prep_obj",
                                       "verb_subj", "noun_poss"};

/* ---------------------------------------------------------------------
 * The sizes: what --size picks
 * ------------------------------------------------------------------- */

struct size {
    const char *name;
    int seeds, n_heads, heads[MAX_HC], n_lr;
    float lr[MAX_LR];
    int tokens;                       /* per network */
    int points;                       /* validation points after the start */
    int n_val, n_test, n_meas, n_abl; /* sequences of T tokens */
};

static const struct size sizes[] = {
    {"smoke", 2, 2, {1, 4}, 2, {3e-3f, 1e-2f}, 2048, 2, 8, 8, 8, 4},
    {"book",
     3,
     5,
     {1, 2, 4, 8, 16},
     3,
     {1.5e-3f, 3e-3f, 6e-3f},
     32768,
     8,
     64,
     128,
     64,
     24},
    {"full",
     5,
     5,
     {1, 2, 4, 8, 16},
     3,
     {1.5e-3f, 3e-3f, 6e-3f},
     98304,
     12,
     128,
     512,
     128,
     48},
};

/* ---------------------------------------------------------------------
 * The run's context and one network's result
 * ------------------------------------------------------------------- */

/* A set of N windows of T + 1 tokens: x (N, T), y (N, T) one ahead. */
struct windows {
    int n;
    int *x, *y;
    unsigned char *y_class; /* (N, T) the tag class of each target */
    const char **x_tag;     /* (N, T) the Brown tag of each input token */
};

struct lm {
    const struct corpus_data *d;
    struct size sz;
    const char *models_dir;
    int threads;
    int phase;          /* 1: tuning, 2: the chosen rates over seeds */
    int chosen[MAX_HC]; /* phase 2: the rate chosen for each head count */
    struct windows val, test, meas;
    int n_cases[R], *word[R], *related[R]; /* the relations in meas */
    int n_sent, sent[MAX_S];
    int n_prompt[N_GEN], prompt[N_GEN][8];
};

struct result {
    int heads, lr_index, seed_index, n_params, steps, tokens, measured;
    float lr;
    int n_points;
    int curve_tokens[MAX_POINTS];
    float val_curve[MAX_POINTS];
    float val_loss, test_loss;
    double train_s;
    long peak_kb; /* the worker's peak resident memory so far */
    /* measured networks only; head l*h + i */
    float mean_w[MAX_HL][LM_K + 2], top_share[MAX_HL][LM_K + 2];
    float rel_score[MAX_HL][R], rel_base[R];
    int rel_k[R];
    float abl_base[NC], abl_loss[MAX_HL][NC];
    int abl_count[NC];
    int n_sent;
    float sent_w[MAX_HL][MAX_S * MAX_S];
    int gen[N_GEN][8 + LM_GEN_NEW];
};

static struct gpt_config model_config(const struct lm *lm, int heads)
{
    return (struct gpt_config){.V = lm->d->V,
                               .T = LM_T,
                               .C = LM_C,
                               .L = LM_L,
                               .n_heads = heads,
                               .B = LM_EVAL_B};
}

/* ---------------------------------------------------------------------
 * The data
 * ------------------------------------------------------------------- */

/* n windows spread evenly over split s, starting `phase` (0 or 1) half
 * a spacing in, so that two sets of one split do not share a window */
static void windows_init(const struct run *run, struct windows *w,
                         const struct corpus_data *d, int s, int n, int phase)
{
    w->n = n;
    w->x = run_calloc(run, n * LM_T, sizeof *w->x);
    w->y = run_calloc(run, n * LM_T, sizeof *w->y);
    w->y_class = run_calloc(run, n * LM_T, sizeof *w->y_class);
    w->x_tag = run_calloc(run, n * LM_T, sizeof *w->x_tag);
    const long span = d->split_n[s] - LM_T - 1;
    if (span < n)
        run_fail(run, 1, "the corpus's %s split is too small for %d windows",
                 s == SPLIT_VALID ? "validation" : "test", n);
    for (int i = 0; i < n; i++) {
        long at = d->split_first[s] + (2L * i + phase) * span / (2L * n);
        for (int t = 0; t < LM_T; t++) {
            const long p = at + t;
            w->x[i * LM_T + t] = d->token[p];
            w->y[i * LM_T + t] = d->token[p + 1];
            w->y_class[i * LM_T + t] = d->tag_cl[d->tag[p + 1]];
            w->x_tag[i * LM_T + t] = d->tags[d->tag[p]];
        }
    }
}

static void windows_free(struct windows *w)
{
    free(w->x), free(w->y), free(w->y_class), free((void *)w->x_tag);
}

/* B training windows of seed's stream: x, y (B, T) */
static void train_batch(const struct corpus_data *d, struct rng *r, int *x,
                        int *y)
{
    const int span = d->split_n[SPLIT_TRAIN] - LM_T - 1;
    for (int b = 0; b < LM_B; b++) {
        const long at = d->split_first[SPLIT_TRAIN] + rng_int(r, span);
        for (int t = 0; t < LM_T; t++) {
            x[b * LM_T + t] = d->token[at + t];
            y[b * LM_T + t] = d->token[at + t + 1];
        }
    }
}

/* The mean loss per token over the windows w. */
static int eval_loss(struct gpt_model *m, const struct windows *w, float *loss)
{
    double sum = 0;
    m->ablation = NULL;
    for (int s = 0; s < w->n; s += m->cfg.B) {
        const int B = w->n - s < m->cfg.B ? w->n - s : m->cfg.B;
        const size_t at = (size_t)s * LM_T;
        int rc = gpt_forward(m, w->x + at, w->y + at, B, LM_T);
        if (rc != KIT_OK)
            return rc;
        sum += (double)m->loss * B;
    }
    *loss = (float)(sum / w->n);
    return KIT_OK;
}

/* ---------------------------------------------------------------------
 * The tuning networks' parameters, saved and reloaded
 * ------------------------------------------------------------------- */

#define PARAMS_MAGIC "LMPARAM1"

static void model_path(const struct lm *lm, int heads, int lr_index, char *buf,
                       size_t n)
{
    snprintf(buf, n, "%s/h%d_lr%d.bin", lm->models_dir, heads, lr_index);
}

static int save_params(const struct gpt_model *m, const char *path)
{
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return KIT_E_INPUT;
    const int head[6] = {m->cfg.V, m->cfg.T,       m->cfg.C,
                         m->cfg.L, m->cfg.n_heads, m->n_params};
    int ok = fwrite(PARAMS_MAGIC, 8, 1, f) == 1 &&
             fwrite(head, sizeof head, 1, f) == 1 &&
             fwrite(m->params, sizeof *m->params, (size_t)m->n_params, f) ==
                 (size_t)m->n_params;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0)
        return KIT_E_INPUT;
    return KIT_OK;
}

static int load_params(struct gpt_model *m, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return KIT_E_INPUT;
    char magic[8];
    int head[6];
    const int want[6] = {m->cfg.V, m->cfg.T,       m->cfg.C,
                         m->cfg.L, m->cfg.n_heads, m->n_params};
    int ok = fread(magic, 8, 1, f) == 1 && !memcmp(magic, PARAMS_MAGIC, 8) &&
             fread(head, sizeof head, 1, f) == 1 &&
             !memcmp(head, want, sizeof head) &&
             fread(m->params, sizeof *m->params, (size_t)m->n_params, f) ==
                 (size_t)m->n_params;
    fclose(f);
    return ok ? KIT_OK : KIT_E_INPUT;
}

/* ---------------------------------------------------------------------
 * One network: train, score, measure
 * ------------------------------------------------------------------- */

/* Train m from its initial weights at rate lr on seed's batches; the
 * validation loss at the start and at sz.points even steps after it. */
static int train(struct gpt_model *m, const struct lm *lm, float lr,
                 unsigned long long seed, struct result *r)
{
    const int steps = r->steps, P = lm->sz.points;
    struct gpt_train_config tc = gpt_default_train(steps);
    tc.lr = lr, tc.lr_min = lr / 10;
    struct rng rng;
    rng_seed(&rng, seed * 7919ULL + 17); /* the batches: seed's own */
    int *x = malloc((size_t)LM_B * LM_T * sizeof *x);
    int *y = malloc((size_t)LM_B * LM_T * sizeof *y);
    int rc = x && y ? KIT_OK : KIT_E_NOMEM;
    if (rc == KIT_OK)
        rc = eval_loss(m, &lm->val, &r->val_curve[0]);
    r->n_points = 1;
    const double t0 = run_now();
    for (int step = 0; step < steps && rc == KIT_OK; step++) {
        float loss;
        train_batch(lm->d, &rng, x, y);
        rc = gpt_train_step(m, &tc, step, x, y, LM_B, LM_T, &loss, NULL);
        const int p = r->n_points;
        if (rc == KIT_OK && p <= P && step + 1 == (int)((long)steps * p / P)) {
            rc = eval_loss(m, &lm->val, &r->val_curve[p]);
            r->curve_tokens[p] = (step + 1) * LM_B * LM_T;
            r->n_points++;
        }
    }
    r->train_s = run_now() - t0;
    r->val_loss = r->val_curve[r->n_points - 1];
    free(x), free(y);
    return rc;
}

/* Every head's weights on the measurement windows, both blocks: A (L*h,
 * N, T, T), head l*h + i at A + (l*h + i)*N*T*T. */
static int head_weights(struct gpt_model *m, const struct windows *w, float *A)
{
    const int L = m->cfg.L, h = m->cfg.n_heads, N = w->n, T = LM_T;
    const size_t TT = (size_t)T * T;
    float *concat = malloc((size_t)T * m->cfg.C * sizeof *concat);
    float *weights = malloc((size_t)h * TT * sizeof *weights);
    int rc = concat && weights ? KIT_OK : KIT_E_NOMEM;
    m->ablation = NULL;
    for (int s = 0; s < N && rc == KIT_OK; s += m->cfg.B) {
        const int B = N - s < m->cfg.B ? N - s : m->cfg.B;
        rc = gpt_forward(m, w->x + (size_t)s * T, NULL, B, T);
        for (int l = 0; l < L && rc == KIT_OK; l++)
            for (int b = 0; b < B && rc == KIT_OK; b++) {
                rc = heads_block_concat(m, l, b, concat, weights);
                for (int i = 0; i < h && rc == KIT_OK; i++)
                    memcpy(A + ((size_t)(l * h + i) * N + s + b) * TT,
                           weights + i * TT, TT * sizeof *A);
            }
    }
    free(concat), free(weights);
    return rc;
}

/* The offset profiles, the relation scores, the ablation scan, the
 * sentence and the generated lines of one trained network. */
static int measure(struct gpt_model *m, const struct lm *lm, struct result *r)
{
    const int L = m->cfg.L, h = m->cfg.n_heads, N = lm->meas.n, T = LM_T;
    const int d_head = m->cfg.C / h;
    const size_t TT = (size_t)T * T;
    float *A = malloc((size_t)L * h * N * TT * sizeof *A);
    float *means = malloc((size_t)L * h * d_head * sizeof *means);
    float *loss = malloc((size_t)L * h * NC * sizeof *loss);
    int rc = A && means && loss ? KIT_OK : KIT_E_NOMEM;
    /* 1. where each head looks, and whether it finds the relations */
    if (rc == KIT_OK)
        rc = head_weights(m, &lm->meas, A);
    for (int k = 0; k < L * h && rc == KIT_OK; k++) {
        const float *A_k = A + (size_t)k * N * TT;
        rc =
            head_offset_profile(A_k, N, T, LM_K, r->mean_w[k], r->top_share[k]);
        for (int q = 0; q < R && rc == KIT_OK; q++)
            if (lm->n_cases[q] > 0)
                rc = relation_score(A_k, N, T, lm->word[q], lm->related[q],
                                    lm->n_cases[q], &r->rel_score[k][q],
                                    &r->rel_base[q], &r->rel_k[q]);
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
    /* 3. the sentence: every head's weights */
    const int S = lm->n_sent;
    r->n_sent = S;
    if (rc == KIT_OK)
        rc = gpt_forward(m, lm->sent, NULL, 1, S);
    for (int l = 0; l < L && rc == KIT_OK; l++) {
        float concat[MAX_S * LM_C], weights[MAX_H * MAX_S * MAX_S];
        rc = heads_block_concat(m, l, 0, concat, weights);
        for (int i = 0; i < h && rc == KIT_OK; i++)
            memcpy(r->sent_w[l * h + i], weights + (size_t)i * S * S,
                   (size_t)S * S * sizeof *weights);
    }
    /* 4. a few lines, from the same seed */
    for (int g = 0; g < N_GEN && rc == KIT_OK; g++) {
        memcpy(r->gen[g], lm->prompt[g], sizeof lm->prompt[g]);
        rc = gpt_generate(m, r->gen[g], lm->n_prompt[g], LM_GEN_NEW, LM_TEMP,
                          LM_TOP_K, LM_GEN_SEED + (unsigned long long)g);
    }
    r->measured = rc == KIT_OK;
    free(A), free(means), free(loss);
    return rc;
}

/* job k of the phase: which head count, rate and seed it is */
static void job_of(const struct lm *lm, int k, int *hc, int *lr, int *s)
{
    if (lm->phase == 1)
        *hc = k / lm->sz.n_lr, *lr = k % lm->sz.n_lr, *s = 0;
    else
        *hc = k / lm->sz.seeds, *s = k % lm->sz.seeds, *lr = lm->chosen[*hc];
}

static int network_run(int k, void *result, void *ctx)
{
    const struct lm *lm = ctx;
    struct result *r = result;
    int hc, li, s;
    job_of(lm, k, &hc, &li, &s);
#ifdef _OPENMP
    omp_set_num_threads(lm->threads);
#endif
    const struct gpt_config cfg = model_config(lm, lm->sz.heads[hc]);
    struct gpt_model m;
    const unsigned long long seed = RUN_FIRST_SEED + (unsigned long long)s;
    int rc = gpt_init(&m, &cfg, seed);
    if (rc != KIT_OK)
        return rc;
    r->heads = cfg.n_heads, r->lr_index = li, r->seed_index = s;
    r->lr = lm->sz.lr[li], r->n_params = m.n_params;
    r->steps = lm->sz.tokens / (LM_B * LM_T);
    r->tokens = r->steps * LM_B * LM_T;
    char path[600];
    model_path(lm, cfg.n_heads, li, path, sizeof path);
    if (lm->phase == 2 && s == 0) /* the tuning run's own network */
        rc = load_params(&m, path);
    else
        rc = train(&m, lm, r->lr, seed, r);
    if (rc == KIT_OK && lm->phase == 1)
        rc = save_params(&m, path);
    if (rc == KIT_OK && lm->phase == 2) {
        rc = eval_loss(&m, &lm->test, &r->test_loss);
        if (rc == KIT_OK && s == 0)
            rc = measure(&m, lm, r);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r->peak_kb = ru.ru_maxrss;
    gpt_free(&m);
    return rc;
}

static void network_name(int k, char *buf, size_t n, void *ctx)
{
    const struct lm *lm = ctx;
    int hc, li, s;
    job_of(lm, k, &hc, &li, &s);
    const int h = lm->sz.heads[hc];
    snprintf(buf, n, "%s, %d head%s, lr %.1e, seed %llu%s",
             lm->phase == 1 ? "tuning" : "final", h, h > 1 ? "s" : "",
             (double)lm->sz.lr[li], RUN_FIRST_SEED + (unsigned long long)s,
             lm->phase == 2 && s == 0 ? " (the tuning network, measured)" : "");
}

static void network_score(const void *result, char *buf, size_t n)
{
    const struct result *r = result;
    if (r->test_loss > 0)
        snprintf(buf, n, "test %.3f nats, %.0f s training, peak %.0f MB",
                 (double)r->test_loss, r->train_s, r->peak_kb / 1024.0);
    else
        snprintf(buf, n,
                 "validation %.3f nats after %d tokens, %.0f s, "
                 "peak %.0f MB",
                 (double)r->val_loss, r->tokens, r->train_s,
                 r->peak_kb / 1024.0);
}

/* ---------------------------------------------------------------------
 * Writing the results
 * ------------------------------------------------------------------- */

/* A text file written as DIR/NAME.tmp and renamed to DIR/NAME on
 * closing, as the CSV files are. */
struct out {
    FILE *f;
    char tmp[1100], path[1100];
};

static FILE *out_open(struct out *o, const char *dir, const char *name)
{
    char tmp[80];
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    snprintf(o->tmp, sizeof o->tmp, "%s/%s", dir, tmp);
    snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
    return o->f = data_open(PROG, dir, tmp);
}

static void out_close(struct out *o)
{
    data_close(PROG, o->f);
    if (rename(o->tmp, o->path) != 0) {
        fprintf(stderr, PROG ": cannot rename %s to %s\n", o->tmp, o->path);
        exit(1);
    }
}

static void make_dir(const struct run *run, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        run_fail(run, 1, "cannot create the folder %s", dir);
}

static double overall(const float *loss, const int *count)
{
    double s = 0;
    long n = 0;
    for (int c = 0; c < NC; c++)
        s += (double)loss[c] * count[c], n += count[c];
    return n ? s / n : 0;
}

/* the heaviest-weight offset of head k and its share (0 .. K) */
static int best_offset(const struct result *r, int k, float *share)
{
    int best = 0;
    for (int j = 1; j <= LM_K; j++)
        if (r->top_share[k][j] > r->top_share[k][best])
            best = j;
    *share = r->top_share[k][best];
    return best;
}

static void write_offsets(const struct run *run, const char *dir,
                          const struct result *const *meas, int n_meas)
{
    struct run_col col[3 + 2 * (LM_K + 2) + 3];
    char names[2 * (LM_K + 2)][24];
    int nc = 0;
    col[nc++] = (struct run_col){"heads", 0};
    col[nc++] = (struct run_col){"block", 0};
    col[nc++] = (struct run_col){"head", 0};
    for (int j = 0; j < 2 * (LM_K + 2); j++) {
        const int k = j % (LM_K + 2);
        if (k == LM_K + 1)
            snprintf(names[j], sizeof names[j], "%s_first",
                     j < LM_K + 2 ? "mean_w" : "top");
        else
            snprintf(names[j], sizeof names[j], "%s_%d",
                     j < LM_K + 2 ? "mean_w" : "top", k);
        col[nc++] = (struct run_col){names[j], 4};
    }
    col[nc++] = (struct run_col){"best_offset", 0};
    col[nc++] = (struct run_col){"best_share", 4};
    col[nc++] = (struct run_col){"positional", 0};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "offsets.csv", NULL, col, nc);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int k = 0; k < LM_L * r->heads; k++) {
            double v[3 + 2 * (LM_K + 2) + 3];
            int j = 0;
            v[j++] = r->heads, v[j++] = k / r->heads, v[j++] = k % r->heads;
            for (int c = 0; c < LM_K + 2; c++)
                v[j++] = r->mean_w[k][c];
            for (int c = 0; c < LM_K + 2; c++)
                v[j++] = r->top_share[k][c];
            float share;
            v[j++] = best_offset(r, k, &share);
            v[j++] = share;
            v[j++] = share >= HEADS_POSITIONAL;
            run_csv_row(&csv, NULL, v);
        }
    }
    run_csv_close(&csv);
}

static void write_relations(const struct run *run, const struct lm *lm,
                            const char *dir, const struct result *const *meas,
                            int n_meas)
{
    static const struct run_col col[] = {
        {"heads", 0}, {"block", 0},    {"head", 0},   {"cases", 0},
        {"score", 4}, {"baseline", 4}, {"best_k", 0}, {"margin", 4}};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "relations.csv", "relation", col, 8);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int rel = 0; rel < R; rel++)
            for (int k = 0; k < LM_L * r->heads; k++) {
                const double v[8] = {r->heads,
                                     k / r->heads,
                                     k % r->heads,
                                     lm->n_cases[rel],
                                     r->rel_score[k][rel],
                                     r->rel_base[rel],
                                     r->rel_k[rel],
                                     r->rel_score[k][rel] - r->rel_base[rel]};
                run_csv_row(&csv, rel_key[rel], v);
            }
    }
    run_csv_close(&csv);
}

static void write_ablation(const struct run *run, const char *dir,
                           const struct result *const *meas, int n_meas)
{
    static const struct run_col col[] = {
        {"heads", 0}, {"block", 0},   {"head", 0},    {"targets", 0},
        {"base", 4},  {"ablated", 4}, {"increase", 4}};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "ablation.csv", "class", col, 7);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int k = 0; k < LM_L * r->heads; k++) {
            const double all = overall(r->abl_loss[k], r->abl_count);
            const double base = overall(r->abl_base, r->abl_count);
            int n_all = 0;
            for (int c = 0; c < NC; c++)
                n_all += r->abl_count[c];
            const double v[7] = {r->heads, k / r->heads, k % r->heads, n_all,
                                 base,     all,          all - base};
            run_csv_row(&csv, "all", v);
            for (int c = 0; c < NC; c++) {
                const double w[7] = {r->heads,
                                     k / r->heads,
                                     k % r->heads,
                                     r->abl_count[c],
                                     r->abl_base[c],
                                     r->abl_loss[k][c],
                                     r->abl_loss[k][c] - r->abl_base[c]};
                run_csv_row(&csv, corpus_tag_class_name(c), w);
            }
        }
        /* the head x class table of this head count, for gnuplot's
         * `matrix rowheaders columnheaders` */
        char name[64];
        snprintf(name, sizeof name, "ablation_h%d.dat", r->heads);
        struct out o;
        FILE *f = out_open(&o, dir, name);
        fprintf(f, "head\\class all");
        for (int c = 0; c < NC; c++)
            fprintf(f, " %s", corpus_tag_class_name(c));
        fprintf(f, "\n");
        for (int k = 0; k < LM_L * r->heads; k++) {
            fprintf(f, "%d.%d %.4f", k / r->heads, k % r->heads,
                    overall(r->abl_loss[k], r->abl_count) -
                        overall(r->abl_base, r->abl_count));
            for (int c = 0; c < NC; c++)
                fprintf(f, " %.4f",
                        (double)(r->abl_loss[k][c] - r->abl_base[c]));
            fprintf(f, "\n");
        }
        out_close(&o);
    }
    run_csv_close(&csv);
}

static void write_sentence(const struct run *run, const struct lm *lm,
                           const char *dir, const struct result *const *meas,
                           int n_meas)
{
    char sdir[512];
    snprintf(sdir, sizeof sdir, "%s/sentence", dir);
    make_dir(run, sdir);
    const int S = lm->n_sent;
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int k = 0; k < LM_L * r->heads; k++) {
            char name[64];
            snprintf(name, sizeof name, "sentence_h%d_l%d_i%d.dat", r->heads,
                     k / r->heads, k % r->heads);
            struct out o;
            FILE *f = out_open(&o, sdir, name);
            fprintf(f, "query\\key");
            for (int j = 0; j < S; j++)
                fprintf(f, " %s", lm->d->vocab[lm->sent[j]]);
            fprintf(f, "\n");
            for (int t = 0; t < S; t++) {
                fprintf(f, "%s", lm->d->vocab[lm->sent[t]]);
                for (int j = 0; j < S; j++)
                    fprintf(f, " %.4f", (double)r->sent_w[k][t * S + j]);
                fprintf(f, "\n");
            }
            out_close(&o);
        }
    }
}

/* curves.dat: tokens, then mean and sd over seeds per head count */
static void write_curves(const struct lm *lm, const char *dir,
                         const struct result *fin, const struct result *tune)
{
    const int S = lm->sz.seeds, H = lm->sz.n_heads, n_lr = lm->sz.n_lr;
    struct out o;
    FILE *f = out_open(&o, dir, "curves.dat");
    fprintf(f,
            "# validation loss (nats per token) against tokens seen, at "
            "the chosen rate; mean and sd over %d seeds for:",
            S);
    for (int hc = 0; hc < H; hc++)
        fprintf(f, " [%d heads, lr %.1e]", lm->sz.heads[hc],
                (double)lm->sz.lr[lm->chosen[hc]]);
    fprintf(f, "\n");
    for (int p = 0; p < fin[0].n_points; p++) {
        fprintf(f, "%d", fin[0].curve_tokens[p]);
        for (int hc = 0; hc < H; hc++) {
            struct run_sum sum = {0};
            for (int s = 0; s < S; s++)
                run_sum_add(&sum, fin[hc * S + s].val_curve[p]);
            struct run_stats st = run_sum_stats(&sum);
            fprintf(f, " %.4f %.4f", st.mean, st.sd);
        }
        fprintf(f, "\n");
    }
    out_close(&o);
    f = out_open(&o, dir, "curves_tuning.dat");
    fprintf(f, "# validation loss against tokens seen, seed %llu, for:",
            RUN_FIRST_SEED);
    for (int k = 0; k < H * n_lr; k++)
        fprintf(f, " [%d heads, lr %.1e]", tune[k].heads, (double)tune[k].lr);
    fprintf(f, "\n");
    for (int p = 0; p < tune[0].n_points; p++) {
        fprintf(f, "%d", tune[0].curve_tokens[p]);
        for (int k = 0; k < H * n_lr; k++)
            fprintf(f, " %.4f", (double)tune[k].val_curve[p]);
        fprintf(f, "\n");
    }
    out_close(&o);
}

/* the token ids of gen as words: "the jury said ..." */
static void print_words(FILE *f, const struct corpus_data *d, const int *ids,
                        int n)
{
    for (int t = 0; t < n; t++)
        fprintf(f, "%s%s", t ? " " : "", d->vocab[ids[t]]);
}

/* ---------------------------------------------------------------------
 * The tables
 * ------------------------------------------------------------------- */

static void print_tables(FILE *f, const struct lm *lm, const char *impl,
                         const struct result *tune, const struct result *fin,
                         const struct result *const *meas, int n_meas,
                         int best_hc)
{
    const int S = lm->sz.seeds, H = lm->sz.n_heads, n_lr = lm->sz.n_lr;
    fprintf(f,
            "Chapter 8 (%s, size %s): V %d, d_model %d, %d blocks, context "
            "%d, batch %d x %d tokens; %d parameters for every head count.\n"
            "Each network saw %d tokens (%d steps). Learning rate chosen per "
            "head count from {",
            impl, lm->sz.name, lm->d->V, LM_C, LM_L, LM_T, LM_B, LM_T,
            fin[0].n_params, fin[0].tokens, fin[0].steps);
    for (int i = 0; i < n_lr; i++)
        fprintf(f, "%s%.1e", i ? ", " : "", (double)lm->sz.lr[i]);
    fprintf(f,
            "} by the validation loss of seed %llu (%d windows of %d "
            "tokens);\nthe chosen rate then trained on %d seeds and scored "
            "once on the test set (%d windows, %d tokens).\n\n",
            RUN_FIRST_SEED, lm->val.n, LM_T, S, lm->test.n, lm->test.n * LM_T);
    fprintf(f, "%-8s %8s", "heads", "d_head");
    for (int i = 0; i < n_lr; i++)
        fprintf(f, "  val@%-7.1e", (double)lm->sz.lr[i]);
    fprintf(f, " %9s %20s %18s %8s\n", "chosen", "test loss (nats)",
            "perplexity", "params");
    for (int hc = 0; hc < H; hc++) {
        fprintf(f, "%-8d %8d", lm->sz.heads[hc], LM_C / lm->sz.heads[hc]);
        for (int i = 0; i < n_lr; i++)
            fprintf(f, "  %12.3f", (double)tune[hc * n_lr + i].val_loss);
        struct run_sum loss = {0}, ppl = {0};
        for (int s = 0; s < S; s++) {
            run_sum_add(&loss, fin[hc * S + s].test_loss);
            run_sum_add(&ppl, exp(fin[hc * S + s].test_loss));
        }
        struct run_stats a = run_sum_stats(&loss), b = run_sum_stats(&ppl);
        fprintf(f, " %9.1e %11.3f +- %5.3f %10.1f +- %5.1f %8d\n",
                (double)lm->sz.lr[lm->chosen[hc]], a.mean, a.sd, b.mean, b.sd,
                fin[hc * S].n_params);
    }
    fprintf(f,
            "(test loss and perplexity: mean +- sd over seeds %llu..%llu; "
            "the best many-head count by mean validation loss: %d)\n",
            RUN_FIRST_SEED, RUN_FIRST_SEED + S - 1,
            best_hc >= 0 ? lm->sz.heads[best_hc] : 0);

    /* relations */
    fprintf(f,
            "\nRelations (Clark et al.): share of cases whose heaviest weight "
            "is on the related word, seed %llu's networks,\n%d validation "
            "windows; the best head of each head count beside the best "
            "fixed offset (margin = head - baseline):\n",
            RUN_FIRST_SEED, lm->meas.n);
    fprintf(f, "%-27s %5s %12s", "relation", "cases", "baseline");
    for (int q = 0; q < n_meas; q++)
        fprintf(f, " %10dh %6s", meas[q]->heads, "margin");
    fprintf(f, "\n");
    for (int rel = 0; rel < R; rel++) {
        if (n_meas == 0)
            break;
        char base[32];
        snprintf(base, sizeof base, "%.3f (k=%d)",
                 (double)meas[0]->rel_base[rel], meas[0]->rel_k[rel]);
        fprintf(f, "%-27s %5d %12s", heads_relation_name(rel), lm->n_cases[rel],
                base);
        for (int q = 0; q < n_meas; q++) {
            const struct result *r = meas[q];
            int best = 0;
            for (int k = 1; k < LM_L * r->heads; k++)
                if (r->rel_score[k][rel] > r->rel_score[best][rel])
                    best = k;
            char who[24];
            snprintf(who, sizeof who, "%.3f (%d.%d)",
                     (double)r->rel_score[best][rel], best / r->heads,
                     best % r->heads);
            fprintf(f, " %11s %+6.3f", who,
                    (double)(r->rel_score[best][rel] - r->rel_base[rel]));
        }
        fprintf(f, "\n");
    }
    fprintf(f, "(each head count's best head, named (block.head); "
               "baseline: the share of cases whose related word is k "
               "back)\n");

    /* positional heads and ablation */
    fprintf(f,
            "\nPositional heads (Voita et al.: one offset 0..%d takes the "
            "heaviest weight in >= %.0f%% of rows) and mean ablation (%d "
            "windows):\n",
            LM_K, 100 * HEADS_POSITIONAL, lm->sz.n_abl);
    fprintf(f, "%-6s %-34s %-12s %s\n", "heads",
            "positional (block.head@offset)", "first-token",
            "ablation: the largest loss increase (nats)");
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        char pos[256] = "", first[64] = "";
        int n_pos = 0, n_first = 0;
        size_t used = 0;
        for (int k = 0; k < LM_L * r->heads; k++) {
            float share;
            int off = best_offset(r, k, &share);
            if (share >= HEADS_POSITIONAL) {
                n_pos++;
                if (used < sizeof pos - 16)
                    used += (size_t)snprintf(pos + used, sizeof pos - used,
                                             "%s%d.%d@%d", used ? " " : "",
                                             k / r->heads, k % r->heads, off);
            }
            n_first += r->top_share[k][LM_K + 1] >= HEADS_POSITIONAL;
        }
        snprintf(first, sizeof first, "%d", n_first);
        int worst = 0;
        double base = overall(r->abl_base, r->abl_count), top = -1e9;
        for (int k = 0; k < LM_L * r->heads; k++) {
            double inc = overall(r->abl_loss[k], r->abl_count) - base;
            if (inc > top)
                top = inc, worst = k;
        }
        int cls = 0;
        for (int c = 1; c < NC; c++)
            if (r->abl_loss[worst][c] - r->abl_base[c] >
                r->abl_loss[worst][cls] - r->abl_base[cls])
                cls = c;
        char head_pos[300];
        snprintf(head_pos, sizeof head_pos, "%d of %d%s%s", n_pos,
                 LM_L * r->heads, n_pos ? ": " : "", pos);
        fprintf(f, "%-6d %-34s %-12s %d.%d: %+.3f overall, %+.3f on %s\n",
                r->heads, head_pos, first, worst / r->heads, worst % r->heads,
                top, (double)(r->abl_loss[worst][cls] - r->abl_base[cls]),
                corpus_tag_class_name(cls));
    }

    /* generated lines */
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        if (r->heads != 1 && (best_hc < 0 || r->heads != lm->sz.heads[best_hc]))
            continue;
        fprintf(f,
                "\nGenerated, %d head%s (temperature %.1f, top-%d, seed "
                "%llu):\n",
                r->heads, r->heads > 1 ? "s" : "", (double)LM_TEMP, LM_TOP_K,
                LM_GEN_SEED);
        for (int g = 0; g < N_GEN; g++) {
            fprintf(f, "  ");
            print_words(f, lm->d, r->gen[g], lm->n_prompt[g] + LM_GEN_NEW);
            fprintf(f, "\n");
        }
    }
}

/* ---------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------- */

/* --lrs "2e-3,5e-3": numbers from 1e-5 to 1 */
static int parse_lrs(const struct run *run, const char *s, float *out)
{
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf)
        run_fail(run, 2, "LRS is too long ('%.40s...')", s);
    int n = 0;
    for (char *tok = strtok(buf, ", "); tok; tok = strtok(NULL, ", ")) {
        char *end;
        errno = 0;
        double v = strtod(tok, &end);
        if (*end != '\0' || errno != 0 || !(v >= 1e-5 && v <= 1))
            run_fail(run, 2,
                     "LRS must be learning rates from 1e-5 to 1, not '%s'",
                     tok);
        if (n == MAX_LR)
            run_fail(run, 2, "LRS lists more than %d rates ('%s')", MAX_LR, s);
        out[n++] = (float)v;
    }
    if (n == 0)
        run_fail(run, 2, "LRS lists no rate ('%s')", s);
    return n;
}

int main(int argc, char **argv)
{
    struct run run = {
        .prog = PROG,
        .usage = "[--size smoke|book|full] [--seeds N] [--workers W] "
                 "[--heads 1,2,4,8,16] [--lrs 1.5e-3,3e-3,6e-3] "
                 "[--tokens N] [--corpus FILE] [--impl NAME] RESULTS_DIR",
        .hint = "make test CH=8 shows where",
        .seeds = 0};
    const char *size_arg = "book", *heads_arg = NULL, *lrs_arg = NULL;
    const char *corpus_path = "build/ch8/brown.bin", *impl = "solutions";
    int tokens = 0;
    const struct run_opt opt[] = {
        {"--size", "SIZE", &size_arg, NULL, 0, 0},
        {"--heads", "HEADS", &heads_arg, NULL, 0, 0},
        {"--lrs", "LRS", &lrs_arg, NULL, 0, 0},
        {"--tokens", "TOKENS", NULL, &tokens, LM_B * LM_T, 100000000},
        {"--corpus", "CORPUS", &corpus_path, NULL, 0, 0},
        {"--impl", "IMPL", &impl, NULL, 0, 0}};
    int a = run_args(&run, argc, argv, opt, 6, 1, 1);
    const char *dir = argv[a];

    /* the size, then the options over it */
    struct lm lm = {0};
    int z = 0;
    while (z < 3 && strcmp(sizes[z].name, size_arg) != 0)
        z++;
    if (z == 3)
        run_fail(&run, 2, "SIZE must be smoke, book or full, not '%s'",
                 size_arg);
    lm.sz = sizes[z];
    if (run.seeds)
        lm.sz.seeds = run.seeds;
    run.seeds = lm.sz.seeds;
    if (heads_arg)
        lm.sz.n_heads = run_parse_ints(&run, "HEADS", heads_arg, lm.sz.heads,
                                       MAX_HC, 1, MAX_H);
    if (lrs_arg)
        lm.sz.n_lr = parse_lrs(&run, lrs_arg, lm.sz.lr);
    if (tokens)
        lm.sz.tokens = tokens;
    for (int i = 0; i < lm.sz.n_heads; i++)
        if (LM_C % lm.sz.heads[i] != 0)
            run_fail(&run, 2,
                     "%d heads cannot split d_model = %d: a head count must "
                     "divide %d (HEADS=%s)",
                     lm.sz.heads[i], LM_C, LM_C, heads_arg);

    /* the corpus */
    struct corpus_data d;
    char err[CORPUS_ERR_LEN];
    if (corpus_load(&d, corpus_path, err) != KIT_OK)
        run_fail(&run, 1, "cannot read the corpus: %s%s", err,
                 strstr(err, "make corpus")
                     ? ""
                     : "; run make corpus again (make deps installs the "
                       "Brown corpus it reads)");
    lm.d = &d;
    for (int i = 0; i < lm.sz.n_heads; i++) {
        const struct gpt_config cfg = model_config(&lm, lm.sz.heads[i]);
        char why[160];
        if (gpt_check_config(&cfg, why, sizeof why) != KIT_OK)
            run_fail(&run, 2, "%d heads: %s", lm.sz.heads[i], why);
    }
    windows_init(&run, &lm.val, &d, SPLIT_VALID, lm.sz.n_val, 0);
    windows_init(&run, &lm.meas, &d, SPLIT_VALID, lm.sz.n_meas, 1);
    windows_init(&run, &lm.test, &d, SPLIT_TEST, lm.sz.n_test, 0);
    for (int rel = 0; rel < R; rel++) {
        int n = 0;
        for (int s = 0; s < lm.meas.n; s++)
            n += heads_relation_cases(lm.meas.x_tag + (size_t)s * LM_T, LM_T,
                                      rel, 0, NULL, NULL, 0);
        lm.word[rel] = run_calloc(&run, n, sizeof(int));
        lm.related[rel] = run_calloc(&run, n, sizeof(int));
        int at = 0;
        for (int s = 0; s < lm.meas.n; s++)
            at += heads_relation_cases(lm.meas.x_tag + (size_t)s * LM_T, LM_T,
                                       rel, s * LM_T, lm.word[rel] + at,
                                       lm.related[rel] + at, n - at);
        lm.n_cases[rel] = n;
    }
    lm.n_sent = corpus_encode(&d, sentence, lm.sent, MAX_S);
    if (lm.n_sent <= 0 || lm.n_sent > MAX_S)
        run_fail(&run, 1, "the sentence has %d tokens (at most %d)", lm.n_sent,
                 MAX_S);
    for (int g = 0; g < N_GEN; g++) {
        lm.n_prompt[g] = corpus_encode(&d, prompts[g], lm.prompt[g], 8);
        if (lm.n_prompt[g] <= 0 || lm.n_prompt[g] > 8)
            run_fail(&run, 1, "the prompt '%s' does not encode", prompts[g]);
    }

    /* workers x threads = the cores */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    const int H = lm.sz.n_heads, S = lm.sz.seeds, n_lr = lm.sz.n_lr;
    int busy = run.workers < H * n_lr ? run.workers : H * n_lr;
    lm.threads = (int)(cores / busy) > 1 ? (int)(cores / busy) : 1;
    char models[512];
    if (strlen(dir) > 400)
        run_fail(&run, 2, "RESULTS_DIR is too long (%zu characters)",
                 strlen(dir));
    snprintf(models, sizeof models, "%s/models", dir);
    make_dir(&run, dir);
    make_dir(&run, models);
    lm.models_dir = models;
    fprintf(stderr, PROG ": size %s, heads", lm.sz.name);
    for (int i = 0; i < H; i++)
        fprintf(stderr, "%s%d", i ? "," : " ", lm.sz.heads[i]);
    fprintf(stderr,
            ", %d rates, %d seeds, %d tokens per network; %d "
            "worker%s x %d thread%s\n",
            n_lr, S, lm.sz.tokens, busy, busy > 1 ? "s" : "", lm.threads,
            lm.threads > 1 ? "s" : "");
    const double t0 = run_now();

    /* 1. tuning: every rate on seed 1 */
    struct result *tune = run_calloc(&run, H * n_lr, sizeof *tune);
    struct run_jobs jobs = {sizeof(struct result), network_run, network_name,
                            network_score, &lm};
    lm.phase = 1;
    run.seeds = 1;
    fprintf(stderr, PROG ": tuning (the learning rate, on seed %llu)\n",
            RUN_FIRST_SEED);
    run_jobs(&run, H * n_lr, &jobs, tune);
    for (int hc = 0; hc < H; hc++) {
        lm.chosen[hc] = 0;
        for (int i = 1; i < n_lr; i++)
            if (tune[hc * n_lr + i].val_loss <
                tune[hc * n_lr + lm.chosen[hc]].val_loss)
                lm.chosen[hc] = i;
    }

    /* 2. the chosen rates over seeds, scored once on the test set */
    struct result *fin = run_calloc(&run, H * S, sizeof *fin);
    lm.phase = 2;
    run.seeds = S;
    fprintf(stderr,
            PROG ": the chosen rates over %d seeds, then the test "
                 "set\n",
            S);
    run_jobs(&run, H, &jobs, fin);
    for (int hc = 0; hc < H; hc++) { /* seed 1's curve is its tuning run's */
        struct result *f = &fin[hc * S];
        const struct result *t = &tune[hc * n_lr + lm.chosen[hc]];
        f->n_points = t->n_points, f->val_loss = t->val_loss;
        f->train_s = t->train_s;
        memcpy(f->curve_tokens, t->curve_tokens, sizeof f->curve_tokens);
        memcpy(f->val_curve, t->val_curve, sizeof f->val_curve);
    }
    const double wall = run_now() - t0;

    /* the best many-head count, by the mean validation loss over seeds */
    int best_hc = -1;
    double best_val = 0;
    for (int hc = 0; hc < H; hc++) {
        if (lm.sz.heads[hc] == 1)
            continue;
        double v = 0;
        for (int s = 0; s < S; s++)
            v += fin[hc * S + s].val_loss / S;
        if (best_hc < 0 || v < best_val)
            best_hc = hc, best_val = v;
    }

    /* the files */
    static const struct run_col tcol[] = {
        {"heads", 0},  {"lr", 6},       {"seed", 0},  {"params", 0},
        {"tokens", 0}, {"val_loss", 5}, {"chosen", 0}};
    struct run_csv csv;
    run_csv_open(&csv, &run, dir, "tuning.csv", "impl", tcol, 7);
    for (int k = 0; k < H * n_lr; k++) {
        const struct result *r = &tune[k];
        const double v[7] = {
            r->heads,  r->lr,       (double)RUN_FIRST_SEED,         r->n_params,
            r->tokens, r->val_loss, lm.chosen[k / n_lr] == k % n_lr};
        run_csv_row(&csv, impl, v);
    }
    run_csv_close(&csv);
    static const struct run_col rcol[] = {
        {"heads", 0},   {"lr", 6},       {"seed", 0},      {"params", 0},
        {"tokens", 0},  {"val_loss", 5}, {"test_loss", 5}, {"test_ppl", 3},
        {"train_s", 1}, {"peak_mb", 1}};
    run_csv_open(&csv, &run, dir, "results.csv", "impl", rcol, 10);
    for (int k = 0; k < H * S; k++) {
        const struct result *r = &fin[k];
        const double v[10] = {r->heads,
                              r->lr,
                              (double)(RUN_FIRST_SEED + r->seed_index),
                              r->n_params,
                              r->tokens,
                              r->val_loss,
                              r->test_loss,
                              exp(r->test_loss),
                              r->train_s,
                              r->peak_kb / 1024.0};
        run_csv_row(&csv, impl, v);
    }
    run_csv_close(&csv);
    write_curves(&lm, dir, fin, tune);
    const struct result *meas[MAX_HC];
    int n_meas = 0;
    for (int hc = 0; hc < H; hc++)
        if (fin[hc * S].measured)
            meas[n_meas++] = &fin[hc * S];
    write_offsets(&run, dir, meas, n_meas);
    write_relations(&run, &lm, dir, meas, n_meas);
    write_ablation(&run, dir, meas, n_meas);
    write_sentence(&run, &lm, dir, meas, n_meas);
    struct out o;
    FILE *g = out_open(&o, dir, "generated.txt");
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < N_GEN; k++) {
            fprintf(g, "%d heads: ", meas[q]->heads);
            print_words(g, &d, meas[q]->gen[k], lm.n_prompt[k] + LM_GEN_NEW);
            fprintf(g, "\n");
        }
    out_close(&o);
    FILE *tab = out_open(&o, dir, "table.txt");
    print_tables(tab, &lm, impl, tune, fin, meas, n_meas, best_hc);
    out_close(&o);
    print_tables(stdout, &lm, impl, tune, fin, meas, n_meas, best_hc);

    long peak = 0;
    for (int k = 0; k < H * S; k++)
        peak = fin[k].peak_kb > peak ? fin[k].peak_kb : peak;
    for (int k = 0; k < H * n_lr; k++)
        peak = tune[k].peak_kb > peak ? tune[k].peak_kb : peak;
    printf("\nWall time %.1f s (%.1f min) for %d networks trained (%d "
           "tuning + %d more seeds), %d tokens each; peak memory of a "
           "training process %.0f MB.\n",
           wall, wall / 60, H * n_lr + H * (S - 1), H * n_lr, H * (S - 1),
           fin[0].tokens, peak / 1024.0);
    printf("(written: %s/table.txt, tuning.csv, results.csv, curves.dat, "
           "offsets.csv, relations.csv, ablation.csv, sentence/, "
           "generated.txt)\n",
           dir);
    for (int rel = 0; rel < R; rel++)
        free(lm.word[rel]), free(lm.related[rel]);
    windows_free(&lm.val), windows_free(&lm.meas), windows_free(&lm.test);
    free(tune), free(fin);
    corpus_data_free(&d);
    return 0;
}
