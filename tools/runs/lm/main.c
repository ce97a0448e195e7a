/*
 * main.c: chapter 8's experiment, `make lm-experiment`: the small GPT
 * (gpt.h) trained on the Brown corpus (corpus.h) with 1 to 16 heads at
 * the same size, and with query heads sharing fewer K/V heads (chapter
 * 6's grouped-query attention), each configuration tuned the same way,
 * and what its heads do (heads_lm.h).
 *
 *   lm-experiment [--size smoke|book|long|full] [--seeds N] [--workers W]
 *                 [--heads 1,2,4,8,16] [--lrs 7e-3,1.4e-2] [--kv 4,2,1|none]
 *                 [--tokens N] [--corpus FILE] [--impl NAME]
 *                 [--data DIR] [--reference DIR] [--stop TOKENS]
 *                 RESULTS_DIR
 *   lm-experiment --roles CHECKPOINTS --lrs LR [...] RESULTS_DIR
 *   lm-experiment --remeasure RUN_DIR [--size ...] RESULTS_DIR
 *   lm-experiment --resume [...] RESULTS_DIR
 *
 * --resume keeps every network that an earlier run into the same
 * RESULTS_DIR finished with the same settings (its parameters in
 * models/, and beside them NAME.bin.train: what its training depended on,
 * its validation curve and its wall time; load_record()), and trains
 * only the others, so that a run too long for one sitting can be
 * stopped and started again, losing only the networks under way. The
 * code is not among the settings: after changing it, delete models/.
 *
 * --remeasure RUN_DIR measures the heads of every final network of a
 * finished run (every configuration, every seed, at the rates its
 * tuning.csv chose): seed 1's networks are reloaded from RUN_DIR/models,
 * the other seeds' too where a run kept them, and trained again
 * otherwise (the same batches, so the same networks: their test losses
 * must match RUN_DIR/results.csv within 0.002 nats, or it fails). It
 * writes seed_heads.csv and seed_heads.values, nothing else.
 *
 * --stop TOKENS (with --lrs) trains the tuning networks of the rates
 * given on their whole run's schedule but stops each after TOKENS
 * tokens, and writes their validation curves so far (curves_tuning.dat)
 * and baselines.csv, nothing else: the first points of a long run,
 * which tools/runs/lm/curves_compare.sh sets beside a reference's.
 *
 * The configurations: every head count of the size (its own K/V per
 * head), then sz.gqa_h query heads reading each K/V head count of
 * sz.kv (gpt_kv_share()). The protocol, the same for every configuration:
 *   1. tuning: seed 1 (RUN_FIRST_SEED) is trained at every learning rate
 *      of the grid (sz.lr[sz.lr_lo .. sz.lr_hi]), with the same token
 *      budget and the same batches; then, while the best rate so far is
 *      the lowest or the highest the configuration has tried, at the
 *      next rate beyond it on the ladder sz.lr (half or twice the rate),
 *      until the best has a worse rate on each side or is the ladder's
 *      end; the rate with the lowest validation loss (on seed 1 alone) is
 *      chosen;
 *   2. the chosen rate is trained on seeds 2 .. N as well (seed 1's
 *      network is the tuning run's own, saved and reloaded, not trained
 *      again), and every one of those networks is scored once on the
 *      test set;
 *   3. every final network's heads are summed up (seed_heads.csv), and
 *      seed 1's network of every head count is measured on validation
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
 *                     over seeds, one column pair per configuration
 *   curves_tuning.dat the same for every (configuration, rate), seed 1
 *   offsets.csv       every head's offset profile and Voita's criterion
 *   relations.csv     every head's relation scores, baseline, margin
 *   ablation.csv      every head's loss increase per tag class
 *   ablation_hH.dat   the same as a head x class table, for gnuplot
 *   sentence/sentence_hH_lL_iI.dat  each head's weights on the sentence
 *   sentence/ablation_hH.dat  the sentence's loss at each predicted word,
 *                     and its increase with each head mean-ablated
 *   tag_profiles.csv  every head's weight from each tag class to each
 *   tag_baselines.csv the same for a uniform head and fixed offsets
 *   generated.txt     the generated lines
 *   compare.txt       with --reference: this run beside REF's results
 *   seed_heads.csv    every final network's heads summed up (all seeds)
 *   models/hH_gG_lrK.bin the tuning networks' parameters, and
 *   models/hH_gG_lrK_sS.bin the other seeds' final networks'
 * With --data DIR, also the book's tables, values and plot data
 * (write_book_data()). Tables go to stdout; progress, wall times and
 * peak memory to stderr.
 *
 * Dimension letters: as gpt.h (V, T, C, L, B, h); g = K/V heads,
 * N = sequences of an evaluation set, K = the largest offset measured,
 * R = relations, NC = tag classes, S = tokens of the sentence.
 */
#define _POSIX_C_SOURCE 200809L

#include "corpus.h"
#include "datafile.h"
#include "gpt.h"
#include "heads_lm.h"
#include "ngram.h"
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

#define MAX_HC     8 /* head counts */
#define MAX_KV     4 /* K/V head counts beside the query heads' own */
#define MAX_CFG    (MAX_HC + MAX_KV)
#define MAX_LR     6  /* learning rates on the ladder */
#define MAX_H      16 /* heads in one block */
#define MAX_HL     (LM_L * MAX_H)
#define MAX_POINTS 17 /* points of a learning curve, the start included */
#define MAX_S      16 /* tokens of the sentence */
#define N_GEN      3
#define SENT_HEADS 4 /* the sentence's maps: chapter 3 built 4 heads */
#define R          HEADS_N_RELATIONS
#define NC         TAG_N_CLASSES

static const char *const sentence =
    "The delivery truck, which was late, blocked the narrow street.";
static const char *const prompts[N_GEN] = {"The", "He said that",
                                           "In the city"};
static const char *const ngram_name[NGRAM_MAX_ORDER] = {"unigram", "bigram",
                                                        "trigram"};
static const char *const rel_key[R] = {"noun_det", "noun_adj", "prep_obj",
                                       "verb_subj", "noun_poss"};

/* ---------------------------------------------------------------------
 * The sizes: what --size picks
 * ------------------------------------------------------------------- */

struct size {
    const char *name;
    int seeds, n_heads, heads[MAX_HC], n_lr;
    int gqa_h, n_kv, kv[MAX_KV]; /* gqa_h query heads sharing kv[i] K/V */
    /* the ladder of rates a configuration may try, lowest first, and
     * the grid every configuration tries first: lr[lr_lo .. lr_hi] */
    float lr[MAX_LR];
    int lr_lo, lr_hi;
    int tokens;                       /* per network */
    int points;                       /* validation points after the start */
    int n_val, n_test, n_meas, n_abl; /* sequences of T tokens */
};

static const struct size sizes[] = {
    {.name = "smoke",
     .seeds = 2,
     .n_heads = 2,
     .heads = {1, 4},
     .n_lr = 4,
     .lr = {1e-3f, 3e-3f, 1e-2f, 3e-2f},
     .lr_lo = 1,
     .lr_hi = 2,
     .gqa_h = 4,
     .n_kv = 1,
     .kv = {1},
     .tokens = 2048,
     .points = 2,
     .n_val = 8,
     .n_test = 8,
     .n_meas = 8,
     .n_abl = 4},
    {.name = "book",
     .seeds = 3,
     .n_heads = 3,
     .heads = {1, 4, 16},
     .n_lr = 6,
     .lr = {1.75e-3f, 3.5e-3f, 7e-3f, 1.4e-2f, 2.8e-2f, 5.6e-2f},
     .lr_lo = 2,
     .lr_hi = 3,
     .gqa_h = 4,
     .n_kv = 1,
     .kv = {1},
     .tokens = 131072,
     .points = 8,
     .n_val = 64,
     .n_test = 128,
     .n_meas = 64,
     .n_abl = 24},
    {.name = "long", /* the reference run the book prints */
     .seeds = 3,
     .n_heads = 3,
     .heads = {1, 4, 16},
     .n_lr = 6,
     .lr = {1.75e-3f, 3.5e-3f, 7e-3f, 1.4e-2f, 2.8e-2f, 5.6e-2f},
     .lr_lo = 1,
     .lr_hi = 2,
     .gqa_h = 4,
     .n_kv = 1,
     .kv = {1},
     .tokens = 8388608,
     .points = 16,
     .n_val = 128,
     .n_test = 512,
     .n_meas = 128,
     .n_abl = 48},
    {.name = "full", /* the long run's budget, every head count */
     .seeds = 3,
     .n_heads = 5,
     .heads = {1, 2, 4, 8, 16},
     .n_lr = 6,
     .lr = {1.75e-3f, 3.5e-3f, 7e-3f, 1.4e-2f, 2.8e-2f, 5.6e-2f},
     .lr_lo = 1,
     .lr_hi = 2,
     .gqa_h = 8,
     .n_kv = 3,
     .kv = {4, 2, 1},
     .tokens = 8388608,
     .points = 16,
     .n_val = 128,
     .n_test = 512,
     .n_meas = 128,
     .n_abl = 48},
};

/* ---------------------------------------------------------------------
 * The run's context and one network's result
 * ------------------------------------------------------------------- */

/* A set of N windows of T + 1 tokens: x (N, T), y (N, T) one ahead. */
struct windows {
    int n;
    int *x, *y;
    unsigned char *y_class; /* (N, T) the tag class of each target */
    unsigned char *x_class; /* (N, T) the tag class of each input token */
    const char **x_tag;     /* (N, T) the Brown tag of each input token */
};

/* an n-gram baseline's losses on the networks' windows */
struct baseline {
    int order;
    long train_tokens;
    double val, test;
};

struct lm {
    const struct corpus_data *d;
    struct baseline base[NGRAM_MAX_ORDER]; /* unigram, bigram, trigram */
    int stop; /* --stop: stop after this many tokens (0: at the end) */
    int base_gen[N_GEN][8 + LM_GEN_NEW]; /* the trigram's lines */
    struct size sz;
    const char *models_dir;
    int threads;
    int resume; /* --resume: networks an earlier run finished are kept */
    /* 1: tuning, 2: the chosen rates over seeds, 3: --remeasure (phase
     * 2's networks again, reloaded where kept, for their heads) */
    int phase;
    /* the configurations: the head counts (g = h), then sz.gqa_h query
     * heads with each K/V head count of sz.kv (g < h) */
    int n_cfg, cfg_h[MAX_CFG], cfg_g[MAX_CFG];
    int chosen[MAX_CFG]; /* phase 2: the rate chosen for each */
    /* phase 1: job k trains configuration job_hc[k] at rate job_lr[k] */
    int job_hc[MAX_CFG * MAX_LR], job_lr[MAX_CFG * MAX_LR];
    struct windows val, test, meas;
    int n_cases[R], *word[R], *related[R]; /* the relations in meas */
    /* the hard cases: those whose related word is not at the relation's
     * most common offset, mode_k[q], where no fixed offset can be right
     * for most of them */
    int mode_k[R], n_hard[R], *hword[R], *hrelated[R];
    /* the tag profiles' baselines on meas (tag_profile()): queries of
     * each class, and the mass a uniform causal head and a head fixed at
     * offset k = 0 .. LM_K would put from each class on each */
    long tag_q[NC];
    float tag_uni[NC * NC], tag_off[LM_K + 1][NC * NC];
    int n_sent, sent[MAX_S];
    int n_prompt[N_GEN], prompt[N_GEN][8];
};

#define MAX_CKPT 32
/* the weaker rule for a positional head: one offset takes the heaviest
 * weight in a majority of the rows that have it */
#define ROLES_WEAK 0.5f

struct roles_point {
    int tokens;
    float val_loss;
    int n_voita, n_weak;  /* positional heads by each rule */
    float top_share;      /* the largest share of one offset, any head */
    float off1_w;         /* the largest mean weight at offset 1 */
    float margin[R];      /* each relation's best head's margin */
    float hard_margin[R]; /* the same on the hard cases */
    double train_s;
};

struct result {
    int heads, kv_heads, lr_index, seed_index, n_params, steps, tokens;
    int measured;
    int trained; /* a tuning network that was trained (phase 1) */
    int kept;    /* --resume: read from an earlier run, not trained */
    float lr;
    int n_points;
    int curve_tokens[MAX_POINTS];
    float val_curve[MAX_POINTS];
    float val_loss, test_loss;
    double train_s;
    long peak_kb; /* the worker's peak resident memory so far */
    /* measured networks only; head l*h + i */
    float mean_w[MAX_HL][LM_K + 2], top_share[MAX_HL][LM_K + 2];
    float row_max[MAX_HL]; /* the mean of a row's heaviest weight */
    float rel_score[MAX_HL][R], rel_base[R];
    int rel_k[R];
    float hard_score[MAX_HL][R], hard_base[R]; /* on the hard cases */
    int hard_k[R];
    float abl_base[NC], abl_loss[MAX_HL][NC];
    int abl_count[NC];
    float tag_mass[MAX_HL][NC * NC]; /* tag_profile() */
    int n_sent;
    float sent_w[MAX_HL][MAX_S * MAX_S];
    /* the sentence's loss at each predicted word (position t predicts
     * word t + 1), as it is and with each head mean-ablated */
    float sent_base[MAX_S], sent_abl[MAX_HL][MAX_S];
    int gen[N_GEN][8 + LM_GEN_NEW];
    /* phase 2 and --remeasure: every network's heads, summed up as the
     * roles run sums up a checkpoint (roles_measure()) */
    struct roles_point heads_sum;
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
    w->x_class = run_calloc(run, n * LM_T, sizeof *w->x_class);
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
            w->x_class[i * LM_T + t] = d->tag_cl[d->tag[p]];
            w->x_tag[i * LM_T + t] = d->tags[d->tag[p]];
        }
    }
}

static void windows_free(struct windows *w)
{
    free(w->x), free(w->y), free(w->y_class), free(w->x_class);
    free((void *)w->x_tag);
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

/* @listing lm_kv_share */
/* gpt_train_step() with g K/V heads: the same steps, with gpt_kv_share()
 * between them. With g = h it is gpt_train_step() itself. */
static int train_step(struct gpt_model *m, const struct gpt_train_config *tc,
                      int step, const int *x, const int *y, int g, float *loss)
{
    if (g == m->cfg.n_heads)
        return gpt_train_step(m, tc, step, x, y, LM_B, LM_T, loss, NULL);
    int rc = gpt_forward(m, x, y, LM_B, LM_T);
    if (rc != KIT_OK)
        return rc;
    *loss = m->loss;
    gpt_zero_grad(m);
    if ((rc = gpt_backward(m)) != KIT_OK)
        return rc;
    if ((rc = gpt_kv_share(m, g, GPT_KV_GATHER)) != KIT_OK)
        return rc;
    gpt_clip_grads(m, tc->clip);
    gpt_adamw_step(m, tc, gpt_lr_at(tc, step));
    return gpt_kv_share(m, g, GPT_KV_COPY);
}
/* @end lm_kv_share */

/* 1 when every head's K/V columns equal its group's first head's, as
 * gpt_kv_share() keeps them; checked after every training run. */
static int kv_copies_equal(const struct gpt_model *m, int g)
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
static int unique_params(const struct gpt_model *m, int g)
{
    const int C = m->cfg.C, h = m->cfg.n_heads;
    return m->n_params - 2 * m->cfg.L * C * (h - g) * (C / h);
}

/* The mean loss per token over the windows w. */
static int eval_loss(struct gpt_model *m, const struct windows *w, float *loss)
{
    double sum = 0;
    m->after_attention = NULL;
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

static void model_path(const struct lm *lm, int heads, int g, int lr_index,
                       char *buf, size_t n)
{
    snprintf(buf, n, "%s/h%d_g%d_lr%d.bin", lm->models_dir, heads, g, lr_index);
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

/* What a saved network's training was, beside its parameters (PATH.train),
 * for --resume: a first line that names everything its training depended
 * on, then its wall time and its validation curve. A network is kept
 * only if that line is the one its training would have now; the code is
 * not in it (delete the models to train again after changing it). */
static void record_key(const struct lm *lm, const struct result *r, char *buf,
                       size_t n)
{
    snprintf(buf, n,
             "lm-network 1: V %d train %d val %d tokens %d steps %d "
             "points %d lr %a seed %llu heads %d kv %d B %d T %d C %d L %d",
             lm->d->V, lm->d->split_n[SPLIT_TRAIN], lm->val.n, r->tokens,
             r->steps, lm->sz.points, (double)r->lr,
             RUN_FIRST_SEED + (unsigned long long)r->seed_index, r->heads,
             r->kv_heads, LM_B, LM_T, LM_C, LM_L);
}

static int save_record(const struct lm *lm, const struct result *r,
                       const char *path)
{
    char key[300], file[700], tmp[710];
    record_key(lm, r, key, sizeof key);
    snprintf(file, sizeof file, "%s.train", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return KIT_E_INPUT;
    fprintf(f, "%s\ntrain_s %.17g points %d\n", key, r->train_s, r->n_points);
    for (int p = 0; p < r->n_points; p++)
        fprintf(f, "%d %.9g\n", r->curve_tokens[p], (double)r->val_curve[p]);
    const int ok = !ferror(f);
    if (fclose(f) != 0 || !ok || rename(tmp, file) != 0)
        return KIT_E_INPUT;
    return KIT_OK;
}

/* The record of path, if it is this network's: its curve and wall time
 * into r. */
static int load_record(const struct lm *lm, struct result *r, const char *path)
{
    char key[300], line[400], file[700];
    record_key(lm, r, key, sizeof key);
    snprintf(file, sizeof file, "%s.train", path);
    FILE *f = fopen(file, "r");
    if (!f)
        return KIT_E_INPUT;
    int ok = fgets(line, sizeof line, f) != NULL;
    line[strcspn(line, "\n")] = 0;
    ok = ok && strcmp(line, key) == 0 && fgets(line, sizeof line, f);
    char *w[4] = {NULL};
    for (int k = 0; ok && k < 4; k++)
        ok = (w[k] = strtok(k ? NULL : line, " \n")) != NULL;
    long n = 0, tokens = 0;
    double x = 0;
    ok = ok && !strcmp(w[0], "train_s") && !strcmp(w[2], "points") &&
         run_read_double(w[1], &r->train_s) && run_read_long(w[3], &n) &&
         n >= 1 && n <= MAX_POINTS && !strtok(NULL, " \n");
    r->n_points = ok ? (int)n : 0;
    for (int p = 0; ok && p < r->n_points; p++) { /* "tokens loss" */
        char *a = fgets(line, sizeof line, f) ? strtok(line, " \n") : NULL;
        char *b = a ? strtok(NULL, " \n") : NULL;
        ok = b && !strtok(NULL, " \n") && run_read_long(a, &tokens) &&
             run_read_double(b, &x) && tokens >= 0 && tokens <= INT_MAX;
        r->curve_tokens[p] = (int)tokens, r->val_curve[p] = (float)x;
    }
    fclose(f);
    if (!ok)
        return KIT_E_INPUT;
    r->val_loss = r->val_curve[r->n_points - 1];
    return KIT_OK;
}

/* ---------------------------------------------------------------------
 * One network: train, score, measure
 * ------------------------------------------------------------------- */

/* Train m from its initial weights at rate lr on seed's batches; the
 * validation loss at the start and at sz.points even steps after it. */
static int train(struct gpt_model *m, const struct lm *lm, float lr, int g,
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
    /* --stop: the schedule stays the whole run's, the loop ends early */
    const int last = lm->stop && lm->stop / (LM_B * LM_T) < steps
                         ? lm->stop / (LM_B * LM_T)
                         : steps;
    for (int step = 0; step < last && rc == KIT_OK; step++) {
        float loss;
        train_batch(lm->d, &rng, x, y);
        rc = train_step(m, &tc, step, x, y, g, &loss);
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
    m->after_attention = NULL;
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
/* A head's profile over tag classes on windows w, from its weights A
 * (N, T, T): mass[cf * NC + ct] = the mean, over the queries whose own
 * token has class cf, of the weight they put on keys of class ct (so
 * each cf's row sums to 1). The queries are those with LM_K + 1 keys or
 * more, as in the offset profiles. With A NULL, the same for a head
 * that has no preference, k < 0: each of a query's i + 1 keys weighs
 * 1 / (i + 1) (uniform); or that always looks k back, k = 0 .. LM_K.
 * Those are the baselines a head's profile is read against: a head
 * that puts more on nouns than the uniform head only because nouns tend
 * to stand one before the query does what the offset-1 head does.
 * q, if not NULL, gets the count of queries of each class (NC). */
static void tag_profile(const float *A, const struct windows *w, int k,
                        float *mass, long *q)
{
    const int T = LM_T;
    double sum[NC * NC] = {0};
    long n_q[NC] = {0};
    for (int n = 0; n < w->n; n++) {
        const unsigned char *cl = w->x_class + (size_t)n * T;
        for (int i = LM_K; i < T; i++) {
            const int cf = cl[i];
            n_q[cf]++;
            if (A) {
                const float *row = A + ((size_t)n * T + i) * T;
                for (int j = 0; j <= i; j++)
                    sum[cf * NC + cl[j]] += row[j];
            } else if (k >= 0)
                sum[cf * NC + cl[i - k]] += 1;
            else
                for (int j = 0; j <= i; j++)
                    sum[cf * NC + cl[j]] += 1.0 / (i + 1);
        }
    }
    for (int c = 0; c < NC * NC; c++)
        mass[c] = n_q[c / NC] ? (float)(sum[c] / n_q[c / NC]) : 0.0f;
    if (q)
        memcpy(q, n_q, sizeof n_q);
}

/* What each head does to the lesson's sentence: the loss at each word
 * it predicts (position t predicts word t + 1), as it is (base, S - 1)
 * and with head k mean-ablated (abl[k], S - 1). One call of
 * heads_ablation_scan() per position, that position as class 0 and the
 * others as class 1. */
static int sentence_ablation(struct gpt_model *m, const struct lm *lm,
                             const float *means, float *base,
                             float (*abl)[MAX_S])
{
    const int S = lm->n_sent, HL = m->cfg.L * m->cfg.n_heads;
    float *loss = malloc((size_t)HL * NC * sizeof *loss);
    if (!loss)
        return KIT_E_NOMEM;
    unsigned char cls[MAX_S];
    float b[NC];
    int count[NC], rc = KIT_OK;
    for (int t = 0; t + 1 < S && rc == KIT_OK; t++) {
        for (int j = 0; j + 1 < S; j++)
            cls[j] = j == t ? 0 : 1;
        rc = heads_ablation_scan(m, lm->sent, lm->sent + 1, cls, 1, S - 1,
                                 means, loss, b, count);
        base[t] = b[0];
        for (int k = 0; k < HL && rc == KIT_OK; k++)
            abl[k][t] = loss[(size_t)k * NC];
    }
    free(loss);
    return rc;
}

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
        /* how sharp its rows are, from the row with LM_K + 1 keys on:
         * the mean of each row's heaviest weight */
        double sum = 0;
        for (int n = 0; n < N; n++)
            for (int i = LM_K; i < T; i++) {
                const float *row = A_k + (size_t)n * TT + (size_t)i * T;
                float top = 0;
                for (int j = 0; j <= i; j++)
                    top = row[j] > top ? row[j] : top;
                sum += top;
            }
        r->row_max[k] = (float)(sum / ((double)N * (T - LM_K)));
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
        tag_profile(A_k, &lm->meas, 0, r->tag_mass[k], NULL);
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
    if (rc == KIT_OK)
        rc = sentence_ablation(m, lm, means, r->sent_base, r->sent_abl);
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

/* The rate of the ladder with configuration hc's lowest validation loss
 * among those it was trained at (the lower rate on a tie); *lo and *hi:
 * the lowest and highest rate it was trained at */
static int best_rate(const struct lm *lm, const struct result *tune, int hc,
                     int *lo, int *hi)
{
    const int n_lr = lm->sz.n_lr;
    int b = -1;
    *lo = *hi = -1;
    for (int i = 0; i < n_lr; i++) {
        const struct result *r = &tune[hc * n_lr + i];
        if (!r->trained)
            continue;
        if (*lo < 0)
            *lo = i;
        *hi = i;
        if (b < 0 || r->val_loss < tune[hc * n_lr + b].val_loss)
            b = i;
    }
    return b;
}

/* "1 head", "16 heads", "4 query heads on 1 K/V head" */
static void cfg_label(const struct lm *lm, int hc, char *buf, size_t n)
{
    const int h = lm->cfg_h[hc], g = lm->cfg_g[hc];
    if (g == h)
        snprintf(buf, n, "%d head%s", h, h > 1 ? "s" : "");
    else
        snprintf(buf, n, "%d query heads on %d K/V head%s", h, g,
                 g > 1 ? "s" : "");
}

/* whether any configuration was trained at rate i of the ladder */
static int rate_used(const struct lm *lm, const struct result *tune, int i)
{
    for (int hc = 0; hc < lm->n_cfg; hc++)
        if (tune[hc * lm->sz.n_lr + i].trained)
            return 1;
    return 0;
}

/* the tuning networks trained */
static int n_tuned(const struct lm *lm, const struct result *tune)
{
    int n = 0;
    for (int k = 0; k < lm->n_cfg * lm->sz.n_lr; k++)
        n += tune[k].trained;
    return n;
}

/* job k of the phase: which head count, rate and seed it is */
static void job_of(const struct lm *lm, int k, int *hc, int *lr, int *s)
{
    if (lm->phase == 1)
        *hc = lm->job_hc[k], *lr = lm->job_lr[k], *s = 0;
    else
        *hc = k / lm->sz.seeds, *s = k % lm->sz.seeds, *lr = lm->chosen[*hc];
}

static int roles_measure(struct gpt_model *m, const struct lm *lm,
                         struct roles_point *p, float *A);

/* A final network's parameters (seeds after the first): kept, so that
 * --remeasure reads them instead of training them again */
static void seed_path(const struct lm *lm, int heads, int g, int lr_index,
                      int s, char *buf, size_t n)
{
    snprintf(buf, n, "%s/h%d_g%d_lr%d_s%d.bin", lm->models_dir, heads, g,
             lr_index, s);
}

/* phase 2 and 3: the network's heads over the measurement windows, as
 * numbers only (roles_measure()) */
static int heads_summary(struct gpt_model *m, const struct lm *lm,
                         struct result *r)
{
    float *A = malloc((size_t)m->cfg.L * m->cfg.n_heads * lm->meas.n * LM_T *
                      LM_T * sizeof *A);
    int rc = A ? roles_measure(m, lm, &r->heads_sum, A) : KIT_E_NOMEM;
    free(A);
    return rc;
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
    const struct gpt_config cfg = model_config(lm, lm->cfg_h[hc]);
    const int g = lm->cfg_g[hc];
    struct gpt_model m;
    const unsigned long long seed = RUN_FIRST_SEED + (unsigned long long)s;
    int rc = gpt_init(&m, &cfg, seed);
    if (rc != KIT_OK)
        return rc;
    if (g < cfg.n_heads)
        gpt_kv_share(&m, g, GPT_KV_COPY);
    r->heads = cfg.n_heads, r->kv_heads = g, r->lr_index = li;
    r->seed_index = s, r->lr = lm->sz.lr[li],
    r->n_params = unique_params(&m, g);
    r->steps = lm->sz.tokens / (LM_B * LM_T);
    r->tokens = r->steps * LM_B * LM_T;
    if (lm->stop && lm->stop < r->tokens) /* --stop: the tokens it trains */
        r->tokens = lm->stop / (LM_B * LM_T) * LM_B * LM_T;
    char path[600], spath[600];
    model_path(lm, cfg.n_heads, g, li, path, sizeof path);
    seed_path(lm, cfg.n_heads, g, li, s, spath, sizeof spath);
    int trained = 0;
    /* --resume: a network an earlier run of these settings finished */
    const char *own = lm->phase == 1 ? path : spath;
    const int keep = lm->resume && !lm->stop && (lm->phase == 1 || s > 0) &&
                     load_record(lm, r, own) == KIT_OK &&
                     load_params(&m, own) == KIT_OK;
    if (lm->phase >= 2 && s == 0) /* the tuning run's own network */
        rc = load_params(&m, path);
    else if (lm->phase == 3 && load_params(&m, spath) == KIT_OK)
        rc = KIT_OK; /* --remeasure: a seed's network, kept */
    else if (keep)
        rc = KIT_OK, r->kept = 1;
    else
        rc = train(&m, lm, r->lr, g, seed, r), trained = 1;
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
        rc = eval_loss(&m, &lm->test, &r->test_loss);
        if (rc == KIT_OK && lm->phase == 2 && s == 0 && g == cfg.n_heads)
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

static void network_name(int k, char *buf, size_t n, void *ctx)
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

static void network_score(const void *result, char *buf, size_t n)
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
        {"heads", 0},      {"block", 0},         {"head", 0},
        {"cases", 0},      {"score", 4},         {"baseline", 4},
        {"best_k", 0},     {"margin", 4},        {"hard_cases", 0},
        {"hard_score", 4}, {"hard_baseline", 4}, {"hard_margin", 4}};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "relations.csv", "relation", col, 12);
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        for (int rel = 0; rel < R; rel++)
            for (int k = 0; k < LM_L * r->heads; k++) {
                const double v[12] = {r->heads,
                                      k / r->heads,
                                      k % r->heads,
                                      lm->n_cases[rel],
                                      r->rel_score[k][rel],
                                      r->rel_base[rel],
                                      r->rel_k[rel],
                                      r->rel_score[k][rel] - r->rel_base[rel],
                                      lm->n_hard[rel],
                                      r->hard_score[k][rel],
                                      r->hard_base[rel],
                                      r->hard_score[k][rel] -
                                          r->hard_base[rel]};
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
        /* the loss at each predicted word, and its increase when each
         * head is mean-ablated: a row per word, a column per head */
        char name[64];
        snprintf(name, sizeof name, "ablation_h%d.dat", r->heads);
        struct out o;
        FILE *f = out_open(&o, sdir, name);
        fprintf(f, "word loss");
        for (int k = 0; k < LM_L * r->heads; k++)
            fprintf(f, " %d.%d", k / r->heads, k % r->heads);
        fprintf(f, "\n");
        for (int t = 0; t + 1 < S; t++) {
            fprintf(f, "%s %.4f", lm->d->vocab[lm->sent[t + 1]],
                    (double)r->sent_base[t]);
            for (int k = 0; k < LM_L * r->heads; k++)
                fprintf(f, " %.4f",
                        (double)(r->sent_abl[k][t] - r->sent_base[t]));
            fprintf(f, "\n");
        }
        out_close(&o);
    }
}

/* curves.dat: tokens, then mean and sd over seeds per head count */
static void write_curves(const struct lm *lm, const char *dir,
                         const struct result *fin)
{
    const int S = lm->sz.seeds, H = lm->n_cfg;
    struct out o;
    FILE *f = out_open(&o, dir, "curves.dat");
    fprintf(f,
            "# validation loss (nats per token) against tokens seen, at "
            "the chosen rate; mean and sd over %d seeds for:",
            S);
    for (int hc = 0; hc < H; hc++)
        fprintf(f, " [%d heads, %d K/V, lr %g]", lm->cfg_h[hc], lm->cfg_g[hc],
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
}

/* The tuning networks' validation curves (seed 1), each column headed
 * by its configuration and rate: DIR/curves_tuning.dat. */
static void write_tuning_curves(const struct lm *lm, const char *dir,
                                const struct result *tune)
{
    const int H = lm->n_cfg, n_lr = lm->sz.n_lr;
    struct out o;
    FILE *f = out_open(&o, dir, "curves_tuning.dat");
    fprintf(f, "# validation loss against tokens seen, seed %llu, for:",
            RUN_FIRST_SEED);
    for (int k = 0; k < H * n_lr; k++)
        if (tune[k].trained)
            fprintf(f, " [%d heads, %d K/V, lr %g]", tune[k].heads,
                    tune[k].kv_heads, (double)tune[k].lr);
    fprintf(f, "\n");
    const struct result *t0 = &tune[lm->chosen[0]]; /* a trained one */
    for (int p = 0; p < t0->n_points; p++) {
        fprintf(f, "%d", t0->curve_tokens[p]);
        for (int k = 0; k < H * n_lr; k++)
            if (tune[k].trained)
                fprintf(f, " %.4f", (double)tune[k].val_curve[p]);
        fprintf(f, "\n");
    }
    out_close(&o);
}

/* Every measured head's tag profile (tag_profile()), one row per head
 * and pair of classes: tag_profiles.csv; and the baselines, one row per
 * pair: the queries of the class, the uniform head's mass and each
 * fixed offset's: tag_baselines.csv. */
static void write_tag_profiles(const struct lm *lm, const char *dir,
                               const struct result *const *meas, int n_meas)
{
    struct out o;
    FILE *f = out_open(&o, dir, "tag_baselines.csv");
    fprintf(f, "from,to,queries,uniform");
    for (int k = 0; k <= LM_K; k++)
        fprintf(f, ",offset_%d", k);
    fprintf(f, "\n");
    for (int c = 0; c < NC * NC; c++) {
        fprintf(f, "%s,%s,%ld,%.4f", corpus_tag_class_name(c / NC),
                corpus_tag_class_name(c % NC), lm->tag_q[c / NC],
                (double)lm->tag_uni[c]);
        for (int k = 0; k <= LM_K; k++)
            fprintf(f, ",%.4f", (double)lm->tag_off[k][c]);
        fprintf(f, "\n");
    }
    out_close(&o);
    f = out_open(&o, dir, "tag_profiles.csv");
    fprintf(f, "heads,block,head,from,to,mass\n");
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < LM_L * meas[q]->heads; k++)
            for (int c = 0; c < NC * NC; c++)
                fprintf(f, "%d,%d,%d,%s,%s,%.4f\n", meas[q]->heads,
                        k / meas[q]->heads, k % meas[q]->heads,
                        corpus_tag_class_name(c / NC),
                        corpus_tag_class_name(c % NC),
                        (double)meas[q]->tag_mass[k][c]);
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
    const int S = lm->sz.seeds, H = lm->n_cfg, n_lr = lm->sz.n_lr;
    fprintf(f,
            "Chapter 8 (%s, size %s): V %d, d_model %d, %d blocks, context "
            "%d, batch %d x %d tokens; %d parameters for every head count.\n"
            "Each network saw %d tokens (%d steps). Learning rate chosen per "
            "head count by the validation loss of seed %llu (%d windows of %d "
            "tokens)\nfrom the grid {",
            impl, lm->sz.name, lm->d->V, LM_C, LM_L, LM_T, LM_B, LM_T,
            fin[0].n_params, fin[0].tokens, fin[0].steps, RUN_FIRST_SEED,
            lm->val.n, LM_T);
    for (int i = lm->sz.lr_lo; i <= lm->sz.lr_hi; i++)
        fprintf(f, "%s%g", i > lm->sz.lr_lo ? ", " : "", (double)lm->sz.lr[i]);
    fprintf(f, "}, then one rate further along {");
    for (int i = 0; i < n_lr; i++)
        fprintf(f, "%s%g", i ? ", " : "", (double)lm->sz.lr[i]);
    fprintf(f,
            "} while the best was the lowest or highest tried (- : not "
            "tried);\nthe chosen rate then trained on %d seeds and scored "
            "once on the test set (%d windows, %d tokens).\n\n",
            S, lm->test.n, lm->test.n * LM_T);
    fprintf(f, "%-8s %8s", "heads", "d_head");
    for (int i = 0; i < n_lr; i++)
        if (rate_used(lm, tune, i))
            fprintf(f, "  val@%-8g", (double)lm->sz.lr[i]);
    fprintf(f, " %9s %20s %18s %8s\n", "chosen", "test loss (nats)",
            "perplexity", "params");
    for (int hc = 0; hc < H; hc++) {
        if (lm->cfg_g[hc] != lm->cfg_h[hc])
            continue; /* the K/V table's */
        fprintf(f, "%-8d %8d", lm->cfg_h[hc], LM_C / lm->cfg_h[hc]);
        for (int i = 0; i < n_lr; i++) {
            const struct result *t = &tune[hc * n_lr + i];
            if (t->trained)
                fprintf(f, "  %12.3f", (double)t->val_loss);
            else if (rate_used(lm, tune, i))
                fprintf(f, "  %12s", "-");
        }
        struct run_sum loss = {0}, ppl = {0};
        for (int s = 0; s < S; s++) {
            run_sum_add(&loss, fin[hc * S + s].test_loss);
            run_sum_add(&ppl, exp(fin[hc * S + s].test_loss));
        }
        struct run_stats a = run_sum_stats(&loss), b = run_sum_stats(&ppl);
        fprintf(f, " %9g %11.3f +- %5.3f %10.1f +- %5.1f %8d\n",
                (double)lm->sz.lr[lm->chosen[hc]], a.mean, a.sd, b.mean, b.sd,
                fin[hc * S].n_params);
    }
    fprintf(f,
            "(test loss and perplexity: mean +- sd over seeds %llu..%llu; "
            "the best many-head count by mean validation loss: %d)\n",
            RUN_FIRST_SEED, RUN_FIRST_SEED + S - 1,
            best_hc >= 0 ? lm->cfg_h[best_hc] : 0);
    fprintf(f,
            "\nThe n-gram baselines (interpolated modified Kneser-Ney, "
            "estimated on all %ld training tokens,\nscored on the same "
            "windows):\n%-8s %12s %20s %18s\n",
            lm->base[0].train_tokens, "model", "validation", "test loss (nats)",
            "perplexity");
    for (int k = 0; k < NGRAM_MAX_ORDER; k++)
        fprintf(f, "%-8s %12.3f %20.3f %18.1f\n", ngram_name[k],
                lm->base[k].val, lm->base[k].test, exp(lm->base[k].test));

    /* K/V sharing: sz.gqa_h query heads, its own row among the head
     * counts included */
    if (lm->sz.n_kv > 0) {
        fprintf(f,
                "\nK/V sharing (chapter 6's grouped-query attention): %d "
                "query heads reading g K/V heads, tuned and scored the "
                "same way:\n",
                lm->sz.gqa_h);
        fprintf(f, "%-8s %9s %20s %18s %8s %16s\n", "K/V", "chosen",
                "test loss (nats)", "perplexity", "params",
                "cache bytes/token");
        for (int hc = 0; hc < H; hc++) {
            if (lm->cfg_h[hc] != lm->sz.gqa_h)
                continue;
            struct run_sum loss = {0}, ppl = {0};
            for (int s = 0; s < S; s++) {
                run_sum_add(&loss, fin[hc * S + s].test_loss);
                run_sum_add(&ppl, exp(fin[hc * S + s].test_loss));
            }
            struct run_stats a = run_sum_stats(&loss), b = run_sum_stats(&ppl);
            /* K and V, g heads of d_head floats, in every block */
            const int bytes = 2 * LM_L * lm->cfg_g[hc] * (LM_C / lm->sz.gqa_h) *
                              (int)sizeof(float);
            fprintf(f, "%-8d %9g %11.3f +- %5.3f %10.1f +- %5.1f %8d %16d\n",
                    lm->cfg_g[hc], (double)lm->sz.lr[lm->chosen[hc]], a.mean,
                    a.sd, b.mean, b.sd, fin[hc * S].n_params, bytes);
        }
        fprintf(f,
                "(mean +- sd over the same seeds; cache bytes per token: "
                "K and V, g heads of d_head floats, %d blocks)\n",
                LM_L);
    }

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
        if (r->heads != 1 && (best_hc < 0 || r->heads != lm->cfg_h[best_hc]))
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
 * The student's run beside the reference's: --reference DIR
 * ------------------------------------------------------------------- */

/* Print, for every configuration, this run's mean test loss beside the
 * one in REF/results.csv (the reference solutions' run of the same size),
 * and flag a difference larger than the larger of the two standard
 * deviations over seeds. Returns how many were flagged, or -1 when the
 * reference cannot be read. */
static int compare_reference(FILE *out, const struct lm *lm,
                             const struct result *fin, const char *ref)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/results.csv", ref);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(out,
                "\n(no reference run in %s: make lm-experiment "
                "IMPL=solutions%s writes it)\n",
                ref, strcmp(lm->sz.name, "book") ? " LM_SIZE=..." : "");
        return -1;
    }
    const int S = lm->sz.seeds;
    struct run_sum sums[MAX_CFG];
    memset(sums, 0, sizeof sums);
    char line[512], why[128];
    for (int row = 0; fgets(line, sizeof line, f); row++) {
        int h, g;
        long tokens;
        double test;
        if (row == 0)
            continue; /* the header */
        if (!run_read_row(why, sizeof why, line, "*ii***l*f+", &h, &g, &tokens,
                          &test)) {
            fprintf(out, "\n(the reference run's %s, line %d: %s)\n", path,
                    row + 1, why);
            fclose(f);
            return -1;
        }
        for (int hc = 0; hc < lm->n_cfg; hc++)
            if (lm->cfg_h[hc] == h && lm->cfg_g[hc] == g &&
                tokens == fin[0].tokens)
                run_sum_add(&sums[hc], test);
    }
    fclose(f);
    fprintf(out,
            "\nYour run beside the reference's (%s), test loss in nats, mean "
            "+- sd over seeds:\n%-16s %20s %20s %9s\n",
            path, "configuration", "yours", "reference", "flag");
    int flagged = 0;
    for (int hc = 0; hc < lm->n_cfg; hc++) {
        struct run_sum mine = {0};
        for (int s = 0; s < S; s++)
            run_sum_add(&mine, fin[hc * S + s].test_loss);
        struct run_stats a = run_sum_stats(&mine), b = run_sum_stats(&sums[hc]);
        char name[40];
        if (lm->cfg_g[hc] == lm->cfg_h[hc])
            snprintf(name, sizeof name, "%d head%s", lm->cfg_h[hc],
                     lm->cfg_h[hc] > 1 ? "s" : "");
        else
            snprintf(name, sizeof name, "%d q, %d K/V", lm->cfg_h[hc],
                     lm->cfg_g[hc]);
        if (sums[hc].n == 0) {
            fprintf(out, "%-16s %11.3f +- %5.3f %20s\n", name, a.mean, a.sd,
                    "(not in the reference)");
            continue;
        }
        const double tol = a.sd > b.sd ? a.sd : b.sd;
        const int bad = fabs(a.mean - b.mean) > tol;
        flagged += bad;
        fprintf(out, "%-16s %11.3f +- %5.3f %11.3f +- %5.3f %9s\n", name,
                a.mean, a.sd, b.mean, b.sd, bad ? "DIFFERS" : "ok");
    }
    fprintf(out,
            "(flagged: a difference larger than the larger sd. The same "
            "build gives the same numbers on every run, but correct code "
            "built differently can differ in its last bits, and so by a few "
            "hundredths of a nat after training: a flag says your code most "
            "likely computes something else than the reference; make test "
            "CH=N shows where.)\n");
    return flagged;
}

/* ---------------------------------------------------------------------
 * The book's data: --data DIR
 * ------------------------------------------------------------------- */

/* mean and sd over seeds of configuration hc's test losses (perplexity
 * too when ppl is not NULL) */
static struct run_stats test_stats(const struct lm *lm,
                                   const struct result *fin, int hc,
                                   struct run_stats *ppl)
{
    struct run_sum loss = {0}, p = {0};
    for (int s = 0; s < lm->sz.seeds; s++) {
        run_sum_add(&loss, fin[hc * lm->sz.seeds + s].test_loss);
        run_sum_add(&p, exp(fin[hc * lm->sz.seeds + s].test_loss));
    }
    if (ppl)
        *ppl = run_sum_stats(&p);
    return run_sum_stats(&loss);
}

/* The best head (l*h + i) of r on relation rel, by its score. */
static int best_head(const struct result *r, int rel)
{
    int best = 0;
    for (int k = 1; k < LM_L * r->heads; k++)
        if (r->rel_score[k][rel] > r->rel_score[best][rel])
            best = k;
    return best;
}

/* A head's tag-profile margin (tag_profile()): over the pairs of classes
 * whose query class has at least TAG_MIN_QUERIES queries, the largest
 * excess of its mass over the best fixed offset's for the same pair;
 * *pair gets that pair (from * NC + to) and *k the offset. */
#define TAG_MIN_QUERIES 100
#define TAG_MARGIN      0.05 /* a head that beats every offset by this */
static float tag_margin(const struct lm *lm, const struct result *r, int head,
                        int *pair, int *k)
{
    float best = -1;
    for (int c = 0; c < NC * NC; c++) {
        if (lm->tag_q[c / NC] < TAG_MIN_QUERIES)
            continue;
        int kb = 0;
        for (int j = 1; j <= LM_K; j++)
            kb = lm->tag_off[j][c] > lm->tag_off[kb][c] ? j : kb;
        const float m = r->tag_mass[head][c] - lm->tag_off[kb][c];
        if (m > best)
            best = m, *pair = c, *k = kb;
    }
    return best;
}

/* The book's data on the tag profiles and on what each head does to the
 * sentence: ch8_tags.md (per measured head count: its heads that beat
 * every fixed offset on some pair of classes by TAG_MARGIN, and the one
 * that beats them most) and ch8_sent_ablation.md (per head count: the
 * head whose mean ablation raises the sentence's loss most, and the word
 * it costs most), with their numbers as values in ch8tags.values. */
static void write_book_tags(const struct lm *lm, const char *dir,
                            const struct result *const *meas, int n_meas)
{
    struct out o, ov, os;
    FILE *f = out_open(&o, dir, "ch8_tags.md");
    FILE *v = out_open(&ov, dir, "ch8tags.values");
    FILE *g = out_open(&os, dir, "ch8_sent_ablation.md");
    fprintf(v, "ch8tags.min_queries=%d\nch8tags.margin=%.2f\n", TAG_MIN_QUERIES,
            TAG_MARGIN);
    fprintf(f,
            "| heads | heads beating every offset by %.2f | head | from "
            "| to | its weight | uniform | best offset | margin |\n"
            "|---:|---:|---:|:--|:--|---:|---:|---:|---:|\n",
            TAG_MARGIN);
    fprintf(g, "| heads | head | sentence loss, + | word most hurt | "
               "its loss, + |\n|---:|---:|---:|:--|---:|\n");
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        int n_beat = 0, top = 0, top_pair = 0, top_k = 0;
        float top_m = -1;
        for (int k = 0; k < LM_L * r->heads; k++) {
            int pair = 0, kb = 0;
            const float m = tag_margin(lm, r, k, &pair, &kb);
            n_beat += m >= TAG_MARGIN;
            if (m > top_m)
                top_m = m, top = k, top_pair = pair, top_k = kb;
        }
        fprintf(f,
                "| %d | %d of %d | %d.%d | %s | %s | %.2f | %.2f | %.2f "
                "(%d back) | %+.2f |\n",
                r->heads, n_beat, LM_L * r->heads, top / r->heads,
                top % r->heads, corpus_tag_class_name(top_pair / NC),
                corpus_tag_class_name(top_pair % NC),
                (double)r->tag_mass[top][top_pair],
                (double)lm->tag_uni[top_pair],
                (double)lm->tag_off[top_k][top_pair], top_k, (double)top_m);
        fprintf(v, "ch8tags.n_beat_h%d=%d\nch8tags.top_margin_h%d=%.3f\n",
                r->heads, n_beat, r->heads, (double)top_m);
        /* the sentence: the head whose ablation costs it most in all */
        int worst = 0, word = 0;
        double worst_sum = -1e9;
        for (int k = 0; k < LM_L * r->heads; k++) {
            double sum = 0;
            for (int t = 0; t + 1 < r->n_sent; t++)
                sum += r->sent_abl[k][t] - r->sent_base[t];
            if (sum > worst_sum)
                worst_sum = sum, worst = k;
        }
        for (int t = 1; t + 1 < r->n_sent; t++)
            if (r->sent_abl[worst][t] - r->sent_base[t] >
                r->sent_abl[worst][word] - r->sent_base[word])
                word = t;
        fprintf(g, "| %d | %d.%d | %+.3f | %s | %.2f, %+.3f |\n", r->heads,
                worst / r->heads, worst % r->heads, worst_sum,
                lm->d->vocab[lm->sent[word + 1]], (double)r->sent_base[word],
                (double)(r->sent_abl[worst][word] - r->sent_base[word]));
        fprintf(v, "ch8tags.sent_cost_h%d=%.3f\n", r->heads, worst_sum);
    }
    out_close(&os);
    out_close(&ov);
    out_close(&o);
}

/* @listing lm_book_data */
/* What the chapter prints and draws, from this run: into DIR,
 *   ch8run.values         every number the prose quotes (key=value)
 *   ch8run_measured.values the wall time and peak memory ('# measured':
 *                         machine-dependent, never compared between runs)
 *   ch8_sent.values       how many heads the sentence's maps show
 *   ch8_heads.md          the head-count table, ch8_kv.md the K/V one
 *   ch8_relations.md      each relation's best head per head count
 *   ch8_positional.md     positional heads and the largest ablation
 *   ch8_sharp.md          every head's mean heaviest weight
 *   ch8_generated.md      the generated lines, as code blocks
 *   ch8_curves.dat/.gpi   validation loss against tokens, per head count
 *   ch8_offsets.dat       every head's mean weight by offset (a matrix)
 *   ch8_relations.dat     each relation's baseline and best scores
 *   ch8_ablation.dat      the best many-head count's head x class table
 *   ch8_sent.gpi, ch8_sent_{one,many}_lL_iI.dat  the sentence's maps:
 *                         1 head, and SENT_HEADS heads (or the best)
 *   ch8_street.dat        the row of "street" of every measured head */
static void write_book_data(const char *impl, const struct lm *lm,
                            const char *dir, const struct result *tune,
                            const struct result *fin,
                            const struct result *const *meas, int n_meas,
                            int best_hc, double wall, long peak_kb)
{
    const int S = lm->sz.seeds, H = lm->n_cfg, n_lr = lm->sz.n_lr;
    struct out o;
    FILE *f = out_open(&o, dir, "ch8run.values");
    fprintf(f, "ch8run.size=%s\nch8run.impl=%s\n", lm->sz.name, impl);
    fprintf(f, "ch8run.tokens=%d\nch8run.steps=%d\nch8run.batch=%d\n",
            fin[0].tokens, fin[0].steps, LM_B);
    fprintf(f,
            "ch8run.seeds=%d\nch8run.seed_first=%llu\nch8run.seed_last=%llu\n",
            S, RUN_FIRST_SEED, RUN_FIRST_SEED + S - 1);
    fprintf(f, "ch8run.grid=");
    for (int i = lm->sz.lr_lo; i <= lm->sz.lr_hi; i++)
        fprintf(f, "%s%g", i > lm->sz.lr_lo ? ", " : "", (double)lm->sz.lr[i]);
    fprintf(f, "\nch8run.ladder=");
    for (int i = 0; i < n_lr; i++)
        fprintf(f, "%s%g", i ? ", " : "", (double)lm->sz.lr[i]);
    fprintf(f, "\nch8run.n_lr=%d\nch8run.n_tuned=%d\n", n_lr,
            n_tuned(lm, tune));
    /* the configurations whose choice is the ladder's end: a rate beyond
     * it was never tried */
    int n_end = 0;
    for (int hc = 0; hc < H; hc++)
        n_end += lm->chosen[hc] == 0 || lm->chosen[hc] == n_lr - 1;
    fprintf(f, "ch8run.n_edge=%d\nch8run.edge_list=", n_end);
    if (n_end == 0)
        fprintf(f, "none");
    for (int hc = 0, q = 0; hc < H; hc++) {
        if (lm->chosen[hc] != 0 && lm->chosen[hc] != n_lr - 1)
            continue;
        char label[64];
        cfg_label(lm, hc, label, sizeof label);
        q++;
        fprintf(f, "%s%s (%g)",
                q == 1       ? ""
                : q == n_end ? " and "
                             : ", ",
                label, (double)lm->sz.lr[lm->chosen[hc]]);
    }
    fprintf(f, "\n");
    fprintf(f, "ch8run.heads=");
    for (int hc = 0, n = 0; hc < H; hc++)
        if (lm->cfg_g[hc] == lm->cfg_h[hc])
            fprintf(f, "%s%d", n++ ? ", " : "", lm->cfg_h[hc]);
    fprintf(f, "\nch8run.networks=%d\n", n_tuned(lm, tune) + H * (S - 1));
    fprintf(f, "ch8run.val_windows=%d\nch8run.val_tokens=%d\n", lm->val.n,
            lm->val.n * LM_T);
    fprintf(f, "ch8run.test_windows=%d\nch8run.test_tokens=%d\n", lm->test.n,
            lm->test.n * LM_T);
    fprintf(f, "ch8run.meas_windows=%d\nch8run.abl_windows=%d\n", lm->meas.n,
            lm->sz.n_abl < lm->meas.n ? lm->sz.n_abl : lm->meas.n);
    fprintf(f, "ch8run.params=%d\n", fin[0].n_params);
    /* how close each choice was: the chosen rate's lead over the next
     * best rate tried, against the sd over seeds of the validation loss
     * at the chosen rate */
    int n_close = 0;
    for (int hc = 0; hc < H; hc++) {
        double second = INFINITY;
        for (int i = 0; i < n_lr; i++)
            if (i != lm->chosen[hc] && tune[hc * n_lr + i].trained &&
                tune[hc * n_lr + i].val_loss < second)
                second = tune[hc * n_lr + i].val_loss;
        struct run_sum v = {0};
        for (int s = 0; s < S; s++)
            run_sum_add(&v, fin[hc * S + s].val_loss);
        n_close += second - tune[hc * n_lr + lm->chosen[hc]].val_loss <
                   run_sum_stats(&v).sd;
    }
    fprintf(f, "ch8run.n_close=%d\nch8run.n_cfg=%d\n", n_close, H);
    const long train_n = lm->d->split_n[SPLIT_TRAIN];
    fprintf(f, "ch8run.train_tokens=%ld\nch8run.pass_pct=%.0f\n", train_n,
            100.0 * fin[0].tokens / (double)train_n);
    for (int k = 0; k < NGRAM_MAX_ORDER; k++)
        fprintf(f, "ch8run.%s_val=%.3f\nch8run.%s_test=%.3f\n", ngram_name[k],
                lm->base[k].val, ngram_name[k], lm->base[k].test);
    /* one head against the best many-head count */
    int one = -1;
    for (int hc = 0; hc < H; hc++)
        if (lm->cfg_h[hc] == 1)
            one = hc;
    if (one >= 0 && best_hc >= 0) {
        struct run_stats a = test_stats(lm, fin, one, NULL);
        struct run_stats b = test_stats(lm, fin, best_hc, NULL);
        const double gap = a.mean - b.mean, spread = a.sd + b.sd;
        fprintf(f, "ch8run.best_heads=%d\n", lm->cfg_h[best_hc]);
        fprintf(f, "ch8run.loss_one=%.3f\nch8run.sd_one=%.3f\n", a.mean, a.sd);
        fprintf(f, "ch8run.loss_best=%.3f\nch8run.sd_best=%.3f\n", b.mean,
                b.sd);
        fprintf(f, "ch8run.gap=%.3f\nch8run.gap_spread=%.3f\n", gap, spread);
        fprintf(f, "ch8run.ppl_ratio=%.3f\n", exp(gap));
        /* paired by seed: a seed trains every configuration on the same
         * batches from the same starting numbers, so the difference of
         * one seed's two networks is free of what the seed itself adds */
        struct run_sum d = {0};
        double lo = 1e9, hi = -1e9;
        int n_pos = 0;
        for (int s = 0; s < S; s++) {
            const double g =
                fin[one * S + s].test_loss - fin[best_hc * S + s].test_loss;
            run_sum_add(&d, g);
            lo = fmin(lo, g), hi = fmax(hi, g), n_pos += g > 0;
        }
        const struct run_stats ds = run_sum_stats(&d);
        fprintf(f, "ch8run.paired_sd=%.3f\nch8run.paired_min=%.3f\n", ds.sd,
                lo);
        fprintf(f, "ch8run.paired_max=%.3f\nch8run.paired_n_pos=%d\n", hi,
                n_pos);
        /* what the difference's sd would be if the two networks of a
         * seed were independent draws: the yardstick for the pairing */
        fprintf(f, "ch8run.unpaired_sd=%.3f\n",
                sqrt(a.sd * a.sd + b.sd * b.sd));
        /* the curves: the point where the two are furthest apart */
        int at = 1;
        double widest = -1e9;
        for (int p = 1; p < fin[0].n_points; p++) {
            double d = 0;
            for (int s = 0; s < S; s++)
                d += (fin[one * S + s].val_curve[p] -
                      fin[best_hc * S + s].val_curve[p]) /
                     S;
            if (d > widest)
                widest = d, at = p;
        }
        fprintf(f, "ch8run.widest_tokens=%d\nch8run.widest_gap=%.3f\n",
                fin[0].curve_tokens[at], widest);
        fprintf(f, "ch8run.widest_at_end=%d\n", at == fin[0].n_points - 1);
    }
    /* every head count's test loss, and 16 narrow heads against 4 */
    int h4 = -1, h16 = -1;
    for (int hc = 0; hc < H; hc++) {
        if (lm->cfg_g[hc] != lm->cfg_h[hc])
            continue;
        struct run_stats a = test_stats(lm, fin, hc, NULL);
        fprintf(f, "ch8run.loss_h%d=%.3f\nch8run.sd_h%d=%.3f\n", lm->cfg_h[hc],
                a.mean, lm->cfg_h[hc], a.sd);
        h4 = lm->cfg_h[hc] == 4 ? hc : h4;
        h16 = lm->cfg_h[hc] == 16 ? hc : h16;
    }
    if (h4 >= 0 && h16 >= 0) {
        struct run_stats a = test_stats(lm, fin, h4, NULL);
        struct run_stats b = test_stats(lm, fin, h16, NULL);
        const double d = b.mean - a.mean, spread = a.sd + b.sd;
        fprintf(f,
                "ch8run.h16_minus_h4=%.3f\nch8run.h4_minus_h16=%.3f\n"
                "ch8run.h16_h4_spread=%.3f\n",
                d, -d, spread);
    }
    /* relations: the best margin of any head of any head count */
    double top = -1e9;
    int top_rel = 0, top_q = 0, n_pos_rel = 0;
    for (int rel = 0; rel < R; rel++) {
        int found = 0;
        for (int q = 0; q < n_meas; q++) {
            const int k = best_head(meas[q], rel);
            const double m =
                meas[q]->rel_score[k][rel] - meas[q]->rel_base[rel];
            found |= m > 0;
            if (m > top)
                top = m, top_rel = rel, top_q = q;
        }
        n_pos_rel += found;
    }
    if (n_meas > 0) {
        const int k = best_head(meas[top_q], top_rel);
        fprintf(f, "ch8run.rel_positive=%d\nch8run.rel_n=%d\n", n_pos_rel, R);
        fprintf(f, "ch8run.rel_top_margin=%+.3f\nch8run.rel_top_name=%s\n", top,
                heads_relation_name(top_rel));
        fprintf(f, "ch8run.rel_top_heads=%d\nch8run.rel_top_head=%d.%d\n",
                meas[top_q]->heads, k / meas[top_q]->heads,
                k % meas[top_q]->heads);
    }
    /* where the heads look: positional heads, and the strongest pull of
     * one offset in any head */
    int n_heads = 0, n_positional = 0, top_off = 0, top_k = 0, top_m = 0;
    float top_share = -1;
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < LM_L * meas[q]->heads; k++) {
            float share;
            const int off = best_offset(meas[q], k, &share);
            n_heads++, n_positional += share >= HEADS_POSITIONAL;
            if (share > top_share)
                top_share = share, top_off = off, top_k = k, top_m = q;
        }
    fprintf(f, "ch8run.heads_measured=%d\nch8run.positional=%d\n", n_heads,
            n_positional);
    /* the mean weight by offset, over every measured head */
    double w[LM_K + 2] = {0};
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < LM_L * meas[q]->heads; k++)
            for (int j = 0; j < LM_K + 2; j++)
                w[j] += meas[q]->mean_w[k][j] / (n_heads ? n_heads : 1);
    fprintf(f,
            "ch8run.w_self=%.3f\nch8run.w_prev=%.3f\nch8run.w_far=%.3f\n"
            "ch8run.w_first=%.3f\nch8run.w_far_k=%d\n",
            w[0], w[1], w[LM_K], w[LM_K + 1], LM_K);
    /* how sharp the rows are: a row's heaviest weight, averaged */
    double sharp_sum = 0, even = 0; /* even: the same for uniform rows */
    int n_sharp = 0;
    for (int i = LM_K; i < LM_T; i++)
        even += 1.0 / (i + 1);
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < LM_L * meas[q]->heads; k++)
            sharp_sum += meas[q]->row_max[k],
                n_sharp += meas[q]->row_max[k] > 0.5f;
    fprintf(f,
            "ch8run.row_max_mean=%.2f\nch8run.row_max_sharp=%d\n"
            "ch8run.row_max_from=%d\nch8run.row_max_even=%.3f\n",
            n_heads ? sharp_sum / n_heads : 0.0, n_sharp, LM_K + 1,
            even / (LM_T - LM_K));
    if (n_meas > 0)
        fprintf(f,
                "ch8run.top_share=%.2f\nch8run.top_offset=%d\n"
                "ch8run.top_share_heads=%d\nch8run.top_share_head=%d.%d\n",
                top_share, top_off, meas[top_m]->heads,
                top_k / meas[top_m]->heads, top_k % meas[top_m]->heads);
    /* ablation: the costliest head of each head count, and of the best
     * many-head count */
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        const double base = overall(r->abl_base, r->abl_count);
        double worst = -1e9;
        for (int k = 0; k < LM_L * r->heads; k++) {
            const double inc = overall(r->abl_loss[k], r->abl_count) - base;
            worst = inc > worst ? inc : worst;
        }
        fprintf(f, "ch8run.abl_max_h%d=%.3f\n", r->heads, worst);
        if (best_hc >= 0 && r->heads == lm->cfg_h[best_hc])
            fprintf(f, "ch8run.abl_max_best=%.3f\n", worst);
    }
    /* the sentence: the most that any measured head gives "blocked"
     * and "narrow" from the row of "street" */
    int at_street = -1, at_blocked = -1, at_narrow = -1;
    for (int t = 0; t < lm->n_sent; t++) {
        const char *wd = lm->d->vocab[lm->sent[t]];
        at_street = strcmp(wd, "street") ? at_street : t;
        at_blocked = strcmp(wd, "blocked") ? at_blocked : t;
        at_narrow = strcmp(wd, "narrow") ? at_narrow : t;
    }
    if (at_street >= 0 && at_blocked >= 0 && at_narrow >= 0) {
        float to_blocked = 0, to_narrow = 0;
        int one_word = 0; /* heads that give one word more than 0.9 */
        for (int q = 0; q < n_meas; q++) {
            const struct result *r = meas[q];
            for (int k = 0; k < LM_L * r->heads; k++) {
                const float *row = r->sent_w[k] + at_street * lm->n_sent;
                float top = 0;
                for (int j = 0; j <= at_street; j++)
                    top = row[j] > top ? row[j] : top;
                one_word += top > 0.9f;
                to_blocked =
                    row[at_blocked] > to_blocked ? row[at_blocked] : to_blocked;
                to_narrow =
                    row[at_narrow] > to_narrow ? row[at_narrow] : to_narrow;
            }
        }
        fprintf(f,
                "ch8run.street_blocked=%.2f\nch8run.street_narrow=%.2f\n"
                "ch8run.street_even=%.3f\nch8run.street_words=%d\n"
                "ch8run.street_one_word=%d\n",
                to_blocked, to_narrow, 1.0 / (at_street + 1), at_street + 1,
                one_word);
    }
    /* K/V sharing: the fewest K/V heads against the query heads' own */
    int own = -1, fewest = -1;
    for (int hc = 0; hc < H; hc++) {
        if (lm->cfg_h[hc] != lm->sz.gqa_h || lm->sz.n_kv == 0)
            continue;
        if (lm->cfg_g[hc] == lm->cfg_h[hc])
            own = hc;
        else if (fewest < 0 || lm->cfg_g[hc] < lm->cfg_g[fewest])
            fewest = hc;
    }
    if (own >= 0 && fewest >= 0) {
        struct run_stats a = test_stats(lm, fin, own, NULL);
        struct run_stats b = test_stats(lm, fin, fewest, NULL);
        const double cost = b.mean - a.mean, spread = a.sd + b.sd;
        fprintf(f, "ch8run.kv_query=%d\nch8run.kv_fewest=%d\n", lm->sz.gqa_h,
                lm->cfg_g[fewest]);
        fprintf(f, "ch8run.kv_cost=%+.3f\nch8run.kv_spread=%.3f\n", cost,
                spread);
        fprintf(f, "ch8run.kv_cost_abs=%.3f\n", fabs(cost));
        fprintf(f, "ch8run.kv_saving=%d\n", lm->sz.gqa_h / lm->cfg_g[fewest]);
    }
    out_close(&o);
    /* the run's wall time and memory: machine-dependent, so marked as a
     * benchmark's (tools/checks/76-reproducible.sh does not compare them) */
    f = out_open(&o, dir, "ch8run_measured.values");
    fprintf(f, "# measured: this machine's wall time and peak memory\n");
    fprintf(f, "ch8run.wall_min=%.1f\nch8run.peak_mb=%.0f\n", wall / 60,
            peak_kb / 1024.0);
    out_close(&o);

    /* the head-count table */
    f = out_open(&o, dir, "ch8_heads.md");
    fprintf(f, "| heads | d_head |");
    for (int i = 0; i < n_lr; i++)
        if (rate_used(lm, tune, i))
            fprintf(f, " lr %g |", (double)lm->sz.lr[i]);
    fprintf(f, " chosen | test loss (nats) |\n|---:|---:|");
    for (int i = 0; i < n_lr; i++)
        if (rate_used(lm, tune, i))
            fprintf(f, "---:|");
    fprintf(f, "---:|---:|\n");
    for (int hc = 0; hc < H; hc++) {
        if (lm->cfg_g[hc] != lm->cfg_h[hc])
            continue;
        fprintf(f, "| %d | %d |", lm->cfg_h[hc], LM_C / lm->cfg_h[hc]);
        for (int i = 0; i < n_lr; i++) {
            const struct result *t = &tune[hc * n_lr + i];
            if (t->trained)
                fprintf(f, i == lm->chosen[hc] ? " **%.3f** |" : " %.3f |",
                        (double)t->val_loss);
            else if (rate_used(lm, tune, i))
                fprintf(f, " – |");
        }
        struct run_stats a = test_stats(lm, fin, hc, NULL);
        fprintf(f, " %g | %.3f ± %.3f |\n", (double)lm->sz.lr[lm->chosen[hc]],
                a.mean, a.sd);
    }
    for (int k = 0; k < NGRAM_MAX_ORDER; k++) { /* the baselines' rows */
        fprintf(f, "| %s | – |", ngram_name[k]);
        for (int i = 0; i < n_lr; i++)
            if (rate_used(lm, tune, i))
                fprintf(f, " – |");
        fprintf(f, " – | %.3f |\n", lm->base[k].test);
    }
    out_close(&o);
    if (lm->sz.n_kv > 0) {
        f = out_open(&o, dir, "ch8_kv.md");
        fprintf(f, "| K/V heads | chosen lr | test loss (nats) | perplexity | "
                   "parameters | cache bytes per token |\n"
                   "|---:|---:|---:|---:|---:|---:|\n");
        for (int hc = 0; hc < H; hc++) {
            if (lm->cfg_h[hc] != lm->sz.gqa_h)
                continue;
            struct run_stats ppl, a = test_stats(lm, fin, hc, &ppl);
            fprintf(f, "| %d | %g | %.3f ± %.3f | %.1f ± %.1f | %d | %d |\n",
                    lm->cfg_g[hc], (double)lm->sz.lr[lm->chosen[hc]], a.mean,
                    a.sd, ppl.mean, ppl.sd, fin[hc * S].n_params,
                    2 * LM_L * lm->cfg_g[hc] * (LM_C / lm->sz.gqa_h) *
                        (int)sizeof(float));
        }
        out_close(&o);
    }
    /* relations */
    f = out_open(&o, dir, "ch8_relations.md");
    fprintf(f, "| relation | cases | best fixed offset |");
    for (int q = 0; q < n_meas; q++)
        fprintf(f, " %d head%s: best head, margin |", meas[q]->heads,
                meas[q]->heads > 1 ? "s" : "");
    fprintf(f, "\n|:---|---:|---:|");
    for (int q = 0; q < n_meas; q++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    FILE *g = NULL;
    struct out og;
    g = out_open(&og, dir, "ch8_relations.dat");
    fprintf(g, "# relation, baseline share, then each measured head count's "
               "best head's share:");
    for (int q = 0; q < n_meas; q++)
        fprintf(g, " %d", meas[q]->heads);
    fprintf(g, "\n");
    for (int rel = 0; rel < R && n_meas > 0; rel++) {
        fprintf(f, "| %s | %d | %.2f (%d back) |", heads_relation_name(rel),
                lm->n_cases[rel], (double)meas[0]->rel_base[rel],
                meas[0]->rel_k[rel]);
        fprintf(g, "\"%s\" %.4f", heads_relation_name(rel),
                (double)meas[0]->rel_base[rel]);
        for (int q = 0; q < n_meas; q++) {
            const struct result *r = meas[q];
            const int k = best_head(r, rel);
            fprintf(f, " %.2f (%d.%d), %+.2f |", (double)r->rel_score[k][rel],
                    k / r->heads, k % r->heads,
                    (double)(r->rel_score[k][rel] - r->rel_base[rel]));
            fprintf(g, " %.4f", (double)r->rel_score[k][rel]);
        }
        fprintf(f, "\n");
        fprintf(g, "\n");
    }
    out_close(&og);
    out_close(&o);
    /* positional heads, ablation */
    f = out_open(&o, dir, "ch8_positional.md");
    fprintf(f, "| heads | heads in all | positional | the strongest offset "
               "(share of rows) | costliest head when mean-ablated |\n"
               "|---:|---:|---:|---:|---:|\n");
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        int n_pos = 0, strong = 0;
        float strong_share = -1;
        for (int k = 0; k < LM_L * r->heads; k++) {
            float share;
            best_offset(r, k, &share);
            n_pos += share >= HEADS_POSITIONAL;
            if (share > strong_share)
                strong_share = share, strong = k;
        }
        float sh;
        const int off = best_offset(r, strong, &sh);
        const double base = overall(r->abl_base, r->abl_count);
        double worst = -1e9;
        int wk = 0;
        for (int k = 0; k < LM_L * r->heads; k++) {
            const double inc = overall(r->abl_loss[k], r->abl_count) - base;
            if (inc > worst)
                worst = inc, wk = k;
        }
        fprintf(
            f, "| %d | %d | %d | %d.%d: %d back (%.2f) | %d.%d: %+.3f nats |\n",
            r->heads, LM_L * r->heads, n_pos, strong / r->heads,
            strong % r->heads, off, (double)sh, wk / r->heads, wk % r->heads,
            worst);
    }
    out_close(&o);
    /* how sharp each head's rows are: its mean heaviest weight, one row
     * of the table per network and block, heads above 0.5 in bold */
    f = out_open(&o, dir, "ch8_sharp.md");
    fprintf(f, "| heads | block | each head's mean heaviest weight, head 0 "
               "first |\n|--:|--:|:------------------------------------|\n");
    for (int q = 0; q < n_meas; q++)
        for (int l = 0; l < LM_L; l++) {
            const struct result *r = meas[q];
            fprintf(f, "| %d | %d |", r->heads, l);
            for (int i = 0; i < r->heads; i++) {
                const float v = r->row_max[l * r->heads + i];
                fprintf(f, v > 0.5f ? " **%.2f**" : " %.2f", (double)v);
            }
            fprintf(f, " |\n");
        }
    out_close(&o);
    /* generated lines */
    f = out_open(&o, dir, "ch8_generated.md");
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        if (r->heads != 1 && (best_hc < 0 || r->heads != lm->cfg_h[best_hc]))
            continue;
        fprintf(f, "%d head%s:\n\n```text\n", r->heads,
                r->heads > 1 ? "s" : "");
        for (int k = 0; k < N_GEN; k++) {
            print_words(f, lm->d, r->gen[k], lm->n_prompt[k] + LM_GEN_NEW);
            fprintf(f, "\n");
        }
        fprintf(f, "```\n\n");
    }
    out_close(&o);
    /* the curves of the head counts */
    f = out_open(&o, dir, "ch8_curves.dat");
    g = out_open(&og, dir, "ch8_curves.gpi");
    fprintf(f, "# tokens, then mean and sd of the validation loss per head "
               "count\n");
    fprintf(g,
            "# the columns of ch8_curves.dat\nn_curves = 0\nlabels = \"\"\n");
    int n_curves = 0;
    for (int hc = 0; hc < H; hc++)
        if (lm->cfg_g[hc] == lm->cfg_h[hc])
            fprintf(g, "labels = labels.\" %d\"\n", lm->cfg_h[hc]), n_curves++;
    fprintf(g, "n_curves = %d\n", n_curves);
    for (int p = 0; p < fin[0].n_points; p++) {
        fprintf(f, "%d", fin[0].curve_tokens[p]);
        for (int hc = 0; hc < H; hc++) {
            if (lm->cfg_g[hc] != lm->cfg_h[hc])
                continue;
            struct run_sum sum = {0};
            for (int s = 0; s < S; s++)
                run_sum_add(&sum, fin[hc * S + s].val_curve[p]);
            struct run_stats st = run_sum_stats(&sum);
            fprintf(f, " %.4f %.4f", st.mean, st.sd);
        }
        fprintf(f, "\n");
    }
    out_close(&og);
    out_close(&o);
    /* every head's mean weight by offset, for `matrix rowheaders
     * columnheaders` */
    f = out_open(&o, dir, "ch8_offsets.dat");
    fprintf(f, "head\\offset");
    for (int j = 0; j <= LM_K; j++)
        fprintf(f, " %d", j);
    fprintf(f, " first\n");
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < LM_L * meas[q]->heads; k++) {
            fprintf(f, "%dh:%d.%d", meas[q]->heads, k / meas[q]->heads,
                    k % meas[q]->heads);
            for (int j = 0; j < LM_K + 2; j++)
                fprintf(f, " %.4f", (double)meas[q]->mean_w[k][j]);
            fprintf(f, "\n");
        }
    out_close(&o);
    /* the ablation heatmap: the best many-head network */
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        if (best_hc < 0 || r->heads != lm->cfg_h[best_hc])
            continue;
        f = out_open(&o, dir, "ch8_ablation.dat");
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
    /* the sentence's maps: the 1-head network and the one with as many
     * heads as chapter 3 built by hand (SENT_HEADS), else the best
     * many-head one; and the row of "street" of every measured head */
    int many = -1;
    for (int q = 0; q < n_meas; q++)
        if (meas[q]->heads == SENT_HEADS)
            many = q;
    for (int q = 0; q < n_meas && many < 0; q++)
        if (best_hc >= 0 && meas[q]->heads == lm->cfg_h[best_hc])
            many = q;
    f = out_open(&o, dir, "ch8_sent.values");
    fprintf(f, "ch8run.sent_heads=%d\n", many >= 0 ? meas[many]->heads : 0);
    out_close(&o);
    f = out_open(&o, dir, "ch8_sent.gpi");
    fprintf(f,
            "# the sentence maps: ch8_sent_one_l*_i0.dat and, for the network "
            "of `many` heads,\n# ch8_sent_many_l*_i*.dat; the ablation's: "
            "`ablated` heads\nmany = %d\nablated = %d\nn_words = %d\n",
            many >= 0 ? meas[many]->heads : 0,
            best_hc >= 0 ? lm->cfg_h[best_hc] : 0, lm->n_sent);
    out_close(&o);
    const int Sn = lm->n_sent;
    for (int q = 0; q < n_meas; q++) {
        const struct result *r = meas[q];
        if (r->heads != 1 && q != many)
            continue;
        for (int k = 0; k < LM_L * r->heads; k++) {
            char name[64];
            snprintf(name, sizeof name, "ch8_sent_%s_l%d_i%d.dat",
                     r->heads == 1 ? "one" : "many", k / r->heads,
                     k % r->heads);
            f = out_open(&o, dir, name);
            fprintf(f, "query\\key");
            for (int j = 0; j < Sn; j++)
                fprintf(f, " %s", lm->d->vocab[lm->sent[j]]);
            fprintf(f, "\n");
            for (int t = 0; t < Sn; t++) {
                fprintf(f, "%s", lm->d->vocab[lm->sent[t]]);
                for (int j = 0; j < Sn; j++)
                    fprintf(f, " %.4f", (double)r->sent_w[k][t * Sn + j]);
                fprintf(f, "\n");
            }
            out_close(&o);
        }
    }
    int street = -1;
    for (int t = 0; t < Sn; t++)
        street = strcmp(lm->d->vocab[lm->sent[t]], "street") ? street : t;
    if (street >= 0) {
        f = out_open(&o, dir, "ch8_street.dat");
        fprintf(f, "head\\key");
        for (int j = 0; j <= street; j++)
            fprintf(f, " %s", lm->d->vocab[lm->sent[j]]);
        fprintf(f, "\n");
        for (int q = 0; q < n_meas; q++)
            for (int k = 0; k < LM_L * meas[q]->heads; k++) {
                fprintf(f, "%dh:%d.%d", meas[q]->heads, k / meas[q]->heads,
                        k % meas[q]->heads);
                for (int j = 0; j <= street; j++)
                    fprintf(f, " %.4f",
                            (double)meas[q]->sent_w[k][street * Sn + j]);
                fprintf(f, "\n");
            }
        out_close(&o);
    }
    write_book_tags(lm, dir, meas, n_meas);
}
/* @end lm_book_data */

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

/* ---------------------------------------------------------------------
 * The n-gram baselines (ngram.h): the simplest models of the same tokens
 * ------------------------------------------------------------------- */

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
static void baselines_run(const struct run *run, struct lm *lm)
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
        if (ngram_window_loss(&m, lm->val.x, lm->val.y, lm->val.n, LM_T,
                              &b->val) != KIT_OK ||
            ngram_window_loss(&m, lm->test.x, lm->test.y, lm->test.n, LM_T,
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

static void write_baselines(const struct run *run, const struct lm *lm,
                            const char *dir)
{
    static const struct run_col col[] = {{"order", 0},
                                         {"train_tokens", 0},
                                         {"val_loss", 5},
                                         {"test_loss", 5},
                                         {"test_ppl", 3}};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "baselines.csv", "model", col, 5);
    for (int k = 0; k < NGRAM_MAX_ORDER; k++) {
        const struct baseline *b = &lm->base[k];
        const double v[5] = {b->order, (double)b->train_tokens, b->val, b->test,
                             exp(b->test)};
        run_csv_row(&csv, ngram_name[k], v);
    }
    run_csv_close(&csv);
}

/* ---------------------------------------------------------------------
 * Roles as they appear (--roles P): one long network per head count,
 * measured at P checkpoints
 * ------------------------------------------------------------------- */

struct roles_result {
    int heads, n;
    struct roles_point p[MAX_CKPT];
    struct result final; /* the last checkpoint's network, measured */
};

/* The checkpoints: step s_c = steps * (c / P)^2, c = 1 .. P, denser
 * early, where the loss moves fastest (repeats dropped). */
static int roles_steps(int steps, int P, int *at)
{
    int n = 0;
    for (int c = 1; c <= P; c++) {
        const int s = (int)((double)steps * c * c / ((double)P * P) + 0.5);
        if (s >= 1 && (n == 0 || s > at[n - 1]))
            at[n++] = s;
    }
    return n;
}

static int roles_measure(struct gpt_model *m, const struct lm *lm,
                         struct roles_point *p, float *A)
{
    const int L = m->cfg.L, h = m->cfg.n_heads, N = lm->meas.n, T = LM_T;
    const size_t TT = (size_t)T * T;
    int rc = eval_loss(m, &lm->val, &p->val_loss);
    if (rc == KIT_OK)
        rc = head_weights(m, &lm->meas, A);
    p->n_voita = p->n_weak = 0;
    p->top_share = p->off1_w = 0;
    for (int q = 0; q < R; q++)
        p->margin[q] = p->hard_margin[q] = -1;
    for (int k = 0; k < L * h && rc == KIT_OK; k++) {
        struct result one; /* only its first head's columns are used */
        const float *A_k = A + (size_t)k * N * TT;
        rc = head_offset_profile(A_k, N, T, LM_K, one.mean_w[0],
                                 one.top_share[0]);
        float share;
        if (rc == KIT_OK)
            best_offset(&one, 0, &share);
        if (rc != KIT_OK)
            break;
        p->n_voita += share >= HEADS_POSITIONAL;
        p->n_weak += share >= ROLES_WEAK;
        p->top_share = share > p->top_share ? share : p->top_share;
        p->off1_w = one.mean_w[0][1] > p->off1_w ? one.mean_w[0][1] : p->off1_w;
        for (int q = 0; q < R && rc == KIT_OK; q++) {
            float score, base;
            int off;
            if (lm->n_cases[q] == 0)
                continue;
            rc = relation_score(A_k, N, T, lm->word[q], lm->related[q],
                                lm->n_cases[q], &score, &base, &off);
            if (rc == KIT_OK && score - base > p->margin[q])
                p->margin[q] = score - base;
            if (rc == KIT_OK && lm->n_hard[q] > 0)
                rc = relation_score(A_k, N, T, lm->hword[q], lm->hrelated[q],
                                    lm->n_hard[q], &score, &base, &off);
            if (rc == KIT_OK && lm->n_hard[q] > 0 &&
                score - base > p->hard_margin[q])
                p->hard_margin[q] = score - base;
        }
    }
    return rc;
}

static int roles_job(int k, void *result, void *ctx)
{
    const struct lm *lm = ctx;
    struct roles_result *rr = result;
#ifdef _OPENMP
    omp_set_num_threads(lm->threads);
#endif
    const struct gpt_config cfg = model_config(lm, lm->sz.heads[k]);
    struct gpt_model m;
    int rc = gpt_init(&m, &cfg, RUN_FIRST_SEED);
    if (rc != KIT_OK)
        return rc;
    const int steps = lm->sz.tokens / (LM_B * LM_T);
    int at[MAX_CKPT];
    const int n_at = roles_steps(steps, lm->sz.points, at);
    struct gpt_train_config tc = gpt_default_train(steps);
    tc.lr = lm->sz.lr[0], tc.lr_min = tc.lr / 10;
    struct rng rng;
    rng_seed(&rng, RUN_FIRST_SEED * 7919ULL + 17); /* as train()'s */
    int *x = malloc((size_t)LM_B * LM_T * sizeof *x);
    int *y = malloc((size_t)LM_B * LM_T * sizeof *y);
    float *A = malloc((size_t)LM_L * cfg.n_heads * lm->meas.n * LM_T * LM_T *
                      sizeof *A);
    rc = x && y && A ? KIT_OK : KIT_E_NOMEM;
    rr->heads = cfg.n_heads;
    double t_train = 0;
    const int last = lm->stop ? lm->stop / (LM_B * LM_T) : steps;
    for (int step = 0, c = 0; step < last && rc == KIT_OK; step++) {
        float loss;
        const double t0 = run_now();
        train_batch(lm->d, &rng, x, y);
        rc = train_step(&m, &tc, step, x, y, cfg.n_heads, &loss);
        t_train += run_now() - t0;
        if (rc == KIT_OK && c < n_at && step + 1 == at[c]) {
            struct roles_point *p = &rr->p[rr->n++];
            p->tokens = (step + 1) * LM_B * LM_T;
            p->train_s = t_train;
            rc = roles_measure(&m, lm, p, A);
            fprintf(stderr,
                    PROG ": %d head%s, %d tokens: validation %.3f, "
                         "positional %d (%d by the weak rule)\n",
                    cfg.n_heads, cfg.n_heads > 1 ? "s" : "", p->tokens,
                    (double)p->val_loss, p->n_voita, p->n_weak);
            c++;
        }
    }
    if (rc == KIT_OK && rr->n == 0)
        rc = KIT_E_SIZE; /* --stop before the first checkpoint */
    if (rc == KIT_OK) {
        rr->final.heads = cfg.n_heads, rr->final.kv_heads = cfg.n_heads;
        rr->final.val_loss = rr->p[rr->n - 1].val_loss;
        rc = eval_loss(&m, &lm->test, &rr->final.test_loss);
    }
    if (rc == KIT_OK)
        rc = measure(&m, lm, &rr->final);
    char path[600]; /* kept, to measure again without training */
    snprintf(path, sizeof path, "%s/roles_h%d.bin", lm->models_dir,
             cfg.n_heads);
    if (rc == KIT_OK)
        rc = save_params(&m, path);
    free(x), free(y), free(A);
    gpt_free(&m);
    return rc;
}

/* run.values: what produced roles.csv, for the book (the command, the
 * machine, the wall time); the reference run's is committed with it */
static void roles_write_run(const struct lm *lm, const char *dir, int argc,
                            char **argv, double wall, int workers)
{
    struct out o;
    FILE *f = out_open(&o, dir, "run.values");
    fprintf(f, "# lm-experiment --roles: what produced roles.csv\n"
               "ch8roles.command=lm-experiment");
    for (int i = 1; i < argc; i++)
        fprintf(f, " %s", argv[i]);
    char cpu[160] = "unknown";
    FILE *c = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (c && fgets(line, sizeof line, c))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
            cpu[strcspn(cpu, "\n")] = 0;
            break;
        }
    if (c)
        fclose(c);
    struct rusage self, kids; /* the workers are child processes */
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    const double cpu_s =
        (double)self.ru_utime.tv_sec + (double)kids.ru_utime.tv_sec +
        (double)(self.ru_utime.tv_usec + kids.ru_utime.tv_usec) / 1e6;
    double load = 0; /* how busy the machine was at the end */
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        char buf[128];
        char *w = fgets(buf, sizeof buf, la) ? strtok(buf, " ") : NULL;
        if (!w || !run_read_double(w, &load))
            load = 0;
        fclose(la);
    }
    fprintf(f,
            "\nch8roles.cpu=%s\nch8roles.cores=%ld\nch8roles.workers=%d\n"
            "ch8roles.threads=%d\nch8roles.wall_min=%.1f\n"
            "ch8roles.cpu_min=%.0f\nch8roles.load_end=%.1f\n"
            "ch8roles.lr=%g\nch8roles.checkpoints=%d\n"
            "ch8roles.train_tokens=%d\n",
            cpu, sysconf(_SC_NPROCESSORS_ONLN), workers, lm->threads, wall / 60,
            cpu_s / 60, load, (double)lm->sz.lr[0], lm->sz.points,
            lm->d->split_n[SPLIT_TRAIN]);
    out_close(&o);
}

static void roles_name(int k, char *buf, size_t n, void *ctx)
{
    const struct lm *lm = ctx;
    snprintf(buf, n, "roles, %d head%s, lr %g, %d tokens", lm->sz.heads[k],
             lm->sz.heads[k] > 1 ? "s" : "", (double)lm->sz.lr[0],
             lm->sz.tokens);
}

static void roles_score(const void *result, char *buf, size_t n)
{
    const struct roles_result *rr = result;
    snprintf(buf, n, "validation %.3f, test %.3f nats",
             (double)rr->final.val_loss, (double)rr->final.test_loss);
}

static double roles_cost(int k, void *ctx)
{
    const struct lm *lm = ctx;
    return lm->sz.heads[k]; /* more heads, more T x T maps */
}

/* R columns, PREFIX + each relation's key ("margin_noun_det", ...),
 * appended to col at *nc; names holds their R names */
static void relation_cols(struct run_col *col, int *nc, char (*names)[24],
                          const char *prefix)
{
    for (int q = 0; q < R; q++) {
        snprintf(names[q], sizeof names[q], "%s%s", prefix, rel_key[q]);
        col[(*nc)++] = (struct run_col){names[q], 4};
    }
}

/* roles.csv: one row per (head count, checkpoint); and the final
 * networks' offsets, relations and ablation as the protocol writes them */
static void roles_write(const struct run *run, const struct lm *lm,
                        const char *dir, const struct roles_result *rr)
{
    struct run_col col[8 + 2 * R];
    char names[2 * R][24];
    int nc = 0;
    col[nc++] = (struct run_col){"heads", 0};
    col[nc++] = (struct run_col){"tokens", 0};
    col[nc++] = (struct run_col){"val_loss", 5};
    col[nc++] = (struct run_col){"positional_voita", 0};
    col[nc++] = (struct run_col){"positional_weak", 0};
    col[nc++] = (struct run_col){"top_share", 4};
    col[nc++] = (struct run_col){"offset1_weight", 4};
    relation_cols(col, &nc, names, "margin_");
    col[nc++] = (struct run_col){"train_s", 1};
    /* after train_s: older files end there */
    relation_cols(col, &nc, names + R, "hard_margin_");
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "roles.csv", NULL, col, nc);
    for (int k = 0; k < lm->sz.n_heads; k++)
        for (int c = 0; c < rr[k].n; c++) {
            const struct roles_point *p = &rr[k].p[c];
            double v[8 + 2 * R];
            int j = 0;
            v[j++] = rr[k].heads, v[j++] = p->tokens, v[j++] = p->val_loss;
            v[j++] = p->n_voita, v[j++] = p->n_weak, v[j++] = p->top_share;
            v[j++] = p->off1_w;
            for (int q = 0; q < R; q++)
                v[j++] = p->margin[q];
            v[j++] = p->train_s;
            for (int q = 0; q < R; q++)
                v[j++] = p->hard_margin[q];
            run_csv_row(&csv, NULL, v);
        }
    run_csv_close(&csv);
    const struct result *meas[MAX_HC];
    for (int k = 0; k < lm->sz.n_heads; k++)
        meas[k] = &rr[k].final;
    write_offsets(run, dir, meas, lm->sz.n_heads);
    write_relations(run, lm, dir, meas, lm->sz.n_heads);
    write_ablation(run, dir, meas, lm->sz.n_heads);
    write_sentence(run, lm, dir, meas, lm->sz.n_heads);
    write_tag_profiles(lm, dir, meas, lm->sz.n_heads);
}

/* seed_heads.csv: one row per final network (every configuration, every
 * seed): its test loss and its heads summed up as roles.csv sums up a
 * checkpoint: the positional heads by each rule, the largest share of
 * one offset, and each relation's best head's margin over the best
 * fixed offset, on all cases and on the hard ones */
static void write_seed_heads(const struct run *run, const struct lm *lm,
                             const char *dir, const struct result *fin)
{
    struct run_col col[8 + 2 * R];
    char names[2 * R][24];
    int nc = 0;
    col[nc++] = (struct run_col){"heads", 0};
    col[nc++] = (struct run_col){"kv_heads", 0};
    col[nc++] = (struct run_col){"lr", 6};
    col[nc++] = (struct run_col){"seed", 0};
    col[nc++] = (struct run_col){"test_loss", 5};
    col[nc++] = (struct run_col){"positional_voita", 0};
    col[nc++] = (struct run_col){"positional_weak", 0};
    col[nc++] = (struct run_col){"top_share", 4};
    relation_cols(col, &nc, names, "margin_");
    relation_cols(col, &nc, names + R, "hard_margin_");
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "seed_heads.csv", NULL, col, nc);
    for (int k = 0; k < lm->n_cfg * lm->sz.seeds; k++) {
        const struct result *r = &fin[k];
        const struct roles_point *p = &r->heads_sum;
        double v[8 + 2 * R];
        int j = 0;
        v[j++] = r->heads, v[j++] = r->kv_heads, v[j++] = r->lr;
        v[j++] = (double)(RUN_FIRST_SEED + r->seed_index);
        v[j++] = r->test_loss, v[j++] = p->n_voita, v[j++] = p->n_weak;
        v[j++] = p->top_share;
        for (int q = 0; q < R; q++)
            v[j++] = p->margin[q];
        for (int q = 0; q < R; q++)
            v[j++] = p->hard_margin[q];
        run_csv_row(&csv, NULL, v);
    }
    run_csv_close(&csv);
}

/* --remeasure RUN: the chosen rate of every configuration, from RUN's
 * tuning.csv, into lm->chosen; and each final network's test loss, from
 * RUN's results.csv, into want (H x S); a missing one ends the program */
static void remeasure_read(const struct run *run, struct lm *lm,
                           const char *from, float *want)
{
    const int S = lm->sz.seeds;
    for (int k = 0; k < lm->n_cfg * S; k++)
        want[k] = -1;
    for (int hc = 0; hc < lm->n_cfg; hc++)
        lm->chosen[hc] = -1;
    char path[1100], line[512];
    snprintf(path, sizeof path, "%s/tuning.csv", from);
    FILE *f = fopen(path, "r");
    if (!f)
        run_fail(run, 1, "--remeasure: cannot read %s (a finished run's)",
                 path);
    char why[128];
    for (int row = 0; fgets(line, sizeof line, f); row++) {
        int h, g, chosen;
        long tokens;
        double lr;
        if (row == 0)
            continue; /* the header */
        if (!run_read_row(why, sizeof why, line, "*iif**l*i", &h, &g, &lr,
                          &tokens, &chosen))
            run_fail(run, 1, "--remeasure: %s, line %d: %s", path, row + 1,
                     why);
        if (!chosen)
            continue; /* a rate not chosen */
        if (tokens != lm->sz.tokens)
            run_fail(run, 1,
                     "--remeasure: %s trained %d tokens a network, this "
                     "size %d: give the run's --size",
                     path, (int)tokens, lm->sz.tokens);
        for (int hc = 0; hc < lm->n_cfg; hc++)
            for (int i = 0; i < lm->sz.n_lr; i++)
                if (lm->cfg_h[hc] == h && lm->cfg_g[hc] == g &&
                    fabs(lm->sz.lr[i] - lr) < 1e-3 * lr)
                    lm->chosen[hc] = i;
    }
    fclose(f);
    char name[64];
    for (int hc = 0; hc < lm->n_cfg; hc++)
        if (lm->chosen[hc] < 0) {
            cfg_label(lm, hc, name, sizeof name);
            run_fail(run, 1,
                     "--remeasure: %s chose no rate of this size's ladder "
                     "for %s",
                     path, name);
        }
    snprintf(path, sizeof path, "%s/results.csv", from);
    if (!(f = fopen(path, "r")))
        run_fail(run, 1, "--remeasure: cannot read %s", path);
    for (int row = 0; fgets(line, sizeof line, f); row++) {
        int h, g;
        long seed;
        double test;
        if (row == 0)
            continue; /* the header */
        if (!run_read_row(why, sizeof why, line, "*ii*l***f+", &h, &g, &seed,
                          &test))
            run_fail(run, 1, "--remeasure: %s, line %d: %s", path, row + 1,
                     why);
        const long s = seed - (long)RUN_FIRST_SEED;
        for (int hc = 0; hc < lm->n_cfg; hc++)
            if (lm->cfg_h[hc] == h && lm->cfg_g[hc] == g && s >= 0 && s < S)
                want[hc * S + s] = (float)test;
    }
    fclose(f);
    for (int k = 0; k < lm->n_cfg * S; k++)
        if (want[k] < 0) {
            cfg_label(lm, k / S, name, sizeof name);
            run_fail(run, 1,
                     "--remeasure: %s has no test loss for %s, seed %llu: "
                     "give the run's --seeds",
                     path, name, RUN_FIRST_SEED + (unsigned long long)(k % S));
        }
}

/* what main() allocated for the run: the relations' cases, the
 * windows, the corpus */
static void lm_free(struct lm *lm, struct corpus_data *d)
{
    for (int rel = 0; rel < R; rel++)
        free(lm->word[rel]), free(lm->related[rel]), free(lm->hword[rel]),
            free(lm->hrelated[rel]);
    windows_free(&lm->val), windows_free(&lm->meas), windows_free(&lm->test);
    corpus_data_free(d);
}

static double remeasure_cost(int k, void *ctx)
{
    const struct lm *lm = ctx;
    int hc, li, s;
    job_of(lm, k, &hc, &li, &s);
    /* seed 1's network is reloaded; the others are trained unless kept */
    return (s == 0 ? 0.05 : 1.0) * (8 + lm->cfg_h[hc]);
}

int main(int argc, char **argv)
{
    struct run run = {
        .prog = PROG,
        .usage =
            "[--size smoke|book|long|full] [--seeds N] [--workers W] "
            "[--heads 1,2,4,8,16] [--lrs 1.5e-3,3e-3,6e-3] [--kv 4,2,1|none] "
            "[--data DIR] [--reference DIR] "
            "[--tokens N] [--corpus FILE] [--impl NAME] "
            "[--stop TOKENS] [--remeasure RUN_DIR] [--resume] RESULTS_DIR",
        .hint = "make test CH=8 shows where",
        .seeds = 0};
    const char *size_arg = "book", *heads_arg = NULL, *lrs_arg = NULL;
    const char *kv_arg = NULL, *data_arg = NULL, *ref_arg = NULL;
    const char *remeasure = NULL;
    const char *corpus_path = "build/ch8/brown.bin", *impl = "solutions";
    int tokens = 0, roles = 0, stop = 0, resume = 0;
    const struct run_opt opt[] = {
        {"--roles", "CHECKPOINTS", NULL, &roles, 1, MAX_CKPT},
        {"--stop", "STOP", NULL, &stop, LM_B * LM_T, 100000000},
        {"--size", "SIZE", &size_arg, NULL, 0, 0},
        {"--heads", "HEADS", &heads_arg, NULL, 0, 0},
        {"--lrs", "LRS", &lrs_arg, NULL, 0, 0},
        {"--kv", "KV", &kv_arg, NULL, 0, 0},
        {"--data", "DATA_DIR", &data_arg, NULL, 0, 0},
        {"--reference", "REF_DIR", &ref_arg, NULL, 0, 0},
        {"--tokens", "TOKENS", NULL, &tokens, LM_B * LM_T, 100000000},
        {"--corpus", "CORPUS", &corpus_path, NULL, 0, 0},
        {"--impl", "IMPL", &impl, NULL, 0, 0},
        {"--remeasure", "RUN_DIR", &remeasure, NULL, 0, 0},
        {"--resume", NULL, NULL, &resume, 0, 0}};
    int a = run_args(&run, argc, argv, opt, 13, 1, 1);
    const char *dir = argv[a];

    /* the size, then the options over it */
    struct lm lm = {0};
    int z = 0;
    const int n_sizes = (int)(sizeof sizes / sizeof sizes[0]);
    while (z < n_sizes && strcmp(sizes[z].name, size_arg) != 0)
        z++;
    if (z == n_sizes)
        run_fail(&run, 2, "SIZE must be smoke, book, long or full, not '%s'",
                 size_arg);
    lm.sz = sizes[z];
    if (run.seeds)
        lm.sz.seeds = run.seeds;
    run.seeds = lm.sz.seeds;
    if (heads_arg)
        lm.sz.n_heads = run_parse_ints(&run, "HEADS", heads_arg, lm.sz.heads,
                                       MAX_HC, 1, MAX_H);
    if (lrs_arg) { /* every rate listed is tried: no further ones */
        lm.sz.n_lr = parse_lrs(&run, lrs_arg, lm.sz.lr);
        lm.sz.lr_lo = 0, lm.sz.lr_hi = lm.sz.n_lr - 1;
    }
    if (tokens)
        lm.sz.tokens = tokens;
    if (roles && (lm.sz.n_lr != 1 || !lrs_arg))
        run_fail(&run, 2, "--roles trains at one rate: give it as --lrs");
    if (stop && !roles && !lrs_arg)
        run_fail(&run, 2,
                 "--stop trains the rates it is given and no others: give "
                 "them as --lrs");
    if (remeasure && (roles || stop || lrs_arg || data_arg || ref_arg))
        run_fail(&run, 2,
                 "--remeasure reads a finished run's rates and networks: "
                 "give it the run's --size, --heads, --kv, --seeds and "
                 "--corpus only");
    if (remeasure && strlen(remeasure) > 400)
        run_fail(&run, 2, "RUN_DIR is too long (%zu characters)",
                 strlen(remeasure));
    if (stop && stop > lm.sz.tokens)
        run_fail(&run, 2, "--stop %d is past the run's %d tokens", stop,
                 lm.sz.tokens);
    lm.stop = stop;
    lm.resume = resume;
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
    if (kv_arg && strcmp(kv_arg, "none") == 0)
        lm.sz.n_kv = 0; /* no configuration shares K/V heads */
    else if (kv_arg)
        lm.sz.n_kv = run_parse_ints(&run, "KV", kv_arg, lm.sz.kv, MAX_KV, 0,
                                    lm.sz.gqa_h);
    /* the configurations: every head count, then the K/V sharing ones */
    for (int i = 0; i < lm.sz.n_heads; i++)
        lm.cfg_h[lm.n_cfg] = lm.cfg_g[lm.n_cfg] = lm.sz.heads[i], lm.n_cfg++;
    int has_gqa_h = 0; /* the K/V table's g = h row is a head count's */
    for (int i = 0; i < lm.n_cfg; i++)
        has_gqa_h |= lm.cfg_h[i] == lm.sz.gqa_h;
    if (lm.sz.n_kv > 0 && !has_gqa_h)
        lm.cfg_h[lm.n_cfg] = lm.cfg_g[lm.n_cfg] = lm.sz.gqa_h, lm.n_cfg++;
    for (int i = 0; i < lm.sz.n_kv; i++) {
        if (lm.sz.kv[i] == 0 || lm.sz.gqa_h % lm.sz.kv[i] != 0 ||
            lm.sz.kv[i] == lm.sz.gqa_h)
            run_fail(&run, 2,
                     "KV must list K/V head counts that divide %d and are "
                     "smaller than it (%d query heads share them), not %d",
                     lm.sz.gqa_h, lm.sz.gqa_h, lm.sz.kv[i]);
        lm.cfg_h[lm.n_cfg] = lm.sz.gqa_h, lm.cfg_g[lm.n_cfg] = lm.sz.kv[i];
        lm.n_cfg++;
    }
    for (int i = 0; i < lm.n_cfg; i++) {
        const struct gpt_config cfg = model_config(&lm, lm.cfg_h[i]);
        char why[160];
        if (gpt_check_config(&cfg, why, sizeof why) != KIT_OK)
            run_fail(&run, 2, "%d heads: %s", lm.cfg_h[i], why);
    }
    float *want = NULL; /* --remeasure: the run's test losses */
    if (remeasure) {
        want = run_calloc(&run, lm.n_cfg * lm.sz.seeds, sizeof *want);
        remeasure_read(&run, &lm, remeasure, want);
    }
    windows_init(&run, &lm.val, &d, SPLIT_VALID, lm.sz.n_val, 0);
    windows_init(&run, &lm.meas, &d, SPLIT_VALID, lm.sz.n_meas, 1);
    windows_init(&run, &lm.test, &d, SPLIT_TEST, lm.sz.n_test, 0);
    tag_profile(NULL, &lm.meas, -1, lm.tag_uni, lm.tag_q);
    for (int k = 0; k <= LM_K; k++)
        tag_profile(NULL, &lm.meas, k, lm.tag_off[k], NULL);
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
        /* the most common offset, and the cases not at it */
        int count[LM_T] = {0}, mode = 0;
        for (int c = 0; c < n; c++)
            count[lm.word[rel][c] - lm.related[rel][c]]++;
        for (int k = 1; k < LM_T; k++)
            mode = count[k] > count[mode] ? k : mode;
        lm.mode_k[rel] = mode;
        lm.hword[rel] = run_calloc(&run, n, sizeof(int));
        lm.hrelated[rel] = run_calloc(&run, n, sizeof(int));
        for (int c = 0; c < n; c++)
            if (lm.word[rel][c] - lm.related[rel][c] != mode) {
                lm.hword[rel][lm.n_hard[rel]] = lm.word[rel][c];
                lm.hrelated[rel][lm.n_hard[rel]++] = lm.related[rel][c];
            }
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

    baselines_run(&run, &lm);

    /* workers x threads = the cores */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    if (roles) { /* --roles P: the long networks, measured as they train */
        if (strlen(dir) > 400)
            run_fail(&run, 2, "RESULTS_DIR is too long (%zu characters)",
                     strlen(dir));
        lm.sz.points = roles;
        char models[512];
        snprintf(models, sizeof models, "%s/models", dir);
        make_dir(&run, dir);
        make_dir(&run, models);
        lm.models_dir = models;
        const int busy =
            run.workers < lm.sz.n_heads ? run.workers : lm.sz.n_heads;
        lm.threads = (int)(cores / busy) > 1 ? (int)(cores / busy) : 1;
        make_dir(&run, dir);
        struct roles_result *rr = run_calloc(&run, lm.sz.n_heads, sizeof *rr);
        struct run_jobs rj = {sizeof *rr,  roles_job, roles_name,
                              roles_score, &lm,       roles_cost};
        run.seeds = 1;
        const double t0 = run_now();
        run_jobs(&run, lm.sz.n_heads, &rj, rr);
        const double wall = run_now() - t0;
        write_baselines(&run, &lm, dir);
        roles_write(&run, &lm, dir, rr);
        roles_write_run(&lm, dir, argc, argv, wall, busy);
        printf("Roles run: %d head counts, %d tokens each at lr %g, %d "
               "checkpoints; wall time %.1f min on %d worker%s x %d "
               "thread%s.\n(written: %s/roles.csv, baselines.csv, "
               "offsets.csv, relations.csv, ablation.csv, sentence/)\n",
               lm.sz.n_heads, lm.sz.tokens, (double)lm.sz.lr[0], roles,
               wall / 60, busy, busy > 1 ? "s" : "", lm.threads,
               lm.threads > 1 ? "s" : "", dir);
        free(rr);
        lm_free(&lm, &d);
        return 0;
    }
    const int H = lm.n_cfg, S = lm.sz.seeds, n_lr = lm.sz.n_lr;
    if (remeasure) { /* every final network of a finished run, measured */
        char models[512];
        snprintf(models, sizeof models, "%s/models", remeasure);
        lm.models_dir = models;
        make_dir(&run, dir);
        const int busy = run.workers < H * S ? run.workers : H * S;
        lm.threads = (int)(cores / busy) > 1 ? (int)(cores / busy) : 1;
        lm.phase = 3;
        run.seeds = S;
        struct result *fin = run_calloc(&run, H * S, sizeof *fin);
        struct run_jobs rj = {sizeof *fin,   network_run, network_name,
                              network_score, &lm,         remeasure_cost};
        const double t0 = run_now();
        run_jobs(&run, H, &rj, fin);
        const double wall = run_now() - t0;
        double worst = 0;
        printf("Remeasured: %s's %d final networks (the rates its tuning "
               "chose), test loss then and now:\n",
               remeasure, H * S);
        for (int k = 0; k < H * S; k++) {
            char name[64];
            cfg_label(&lm, k / S, name, sizeof name);
            const double d = fabs(fin[k].test_loss - want[k]);
            worst = d > worst ? d : worst;
            printf("  %-30s seed %llu: %.5f, now %.5f\n", name,
                   RUN_FIRST_SEED + (unsigned long long)(k % S),
                   (double)want[k], (double)fin[k].test_loss);
        }
        write_seed_heads(&run, &lm, dir, fin);
        struct out o;
        FILE *v = out_open(&o, dir, "seed_heads.values");
        fprintf(v, "# lm-experiment --remeasure: what produced seed_heads.csv\n"
                   "ch8seeds.command=lm-experiment");
        for (int i = 1; i < argc; i++)
            fprintf(v, " %s", argv[i]);
        fprintf(v,
                "\nch8seeds.wall_min=%.1f\nch8seeds.workers=%d\n"
                "ch8seeds.max_test_diff=%.5f\n",
                wall / 60, busy, worst);
        out_close(&o);
        printf("Wall time %.1f min; the largest test-loss difference from "
               "the run's is %.5f nats.\n(written: %s/seed_heads.csv, "
               "seed_heads.values)\n",
               wall / 60, worst, dir);
        if (worst > 0.002)
            run_fail(&run, 1,
                     "the networks trained again differ from %s's by %.4f "
                     "nats in test loss (more than 0.002): they are not the "
                     "run's networks, and their heads are not its heads",
                     remeasure, worst);
        free(fin), free(want);
        lm_free(&lm, &d);
        return 0;
    }
    const int n_grid = H * (lm.sz.lr_hi - lm.sz.lr_lo + 1); /* first jobs */
    int busy = run.workers < n_grid ? run.workers : n_grid;
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
        fprintf(stderr, "%s%d", i ? "," : " ", lm.cfg_h[i]);
    if (lm.sz.n_kv)
        fprintf(stderr, " (the last %d sharing", lm.sz.n_kv);
    for (int i = 0; i < lm.sz.n_kv; i++)
        fprintf(stderr, " %d", lm.sz.kv[i]);
    if (lm.sz.n_kv)
        fprintf(stderr, " K/V heads)");
    fprintf(stderr,
            ", a grid of %d rates (a ladder of %d), %d seeds, %d tokens per "
            "network; %d worker%s x %d thread%s\n",
            lm.sz.lr_hi - lm.sz.lr_lo + 1, n_lr, S, lm.sz.tokens, busy,
            busy > 1 ? "s" : "", lm.threads, lm.threads > 1 ? "s" : "");
    const double t0 = run_now();

    /* 1. tuning on seed 1: the grid, then, for every configuration whose
     *    best rate is the lowest or the highest it has tried, the next
     *    rate of the ladder beyond it, until its best rate has a tried
     *    rate on each side or is the ladder's end */
    struct result *tune = run_calloc(&run, H * n_lr, sizeof *tune);
    struct result *batch = run_calloc(&run, H * n_lr, sizeof *batch);
    struct run_jobs jobs = {sizeof(struct result), network_run, network_name,
                            network_score,         &lm,         NULL};
    lm.phase = 1;
    run.seeds = 1;
    int n_jobs = 0;
    for (int hc = 0; hc < H; hc++)
        for (int i = lm.sz.lr_lo; i <= lm.sz.lr_hi; i++)
            lm.job_hc[n_jobs] = hc, lm.job_lr[n_jobs++] = i;
    fprintf(stderr, PROG ": tuning (the learning rate, on seed %llu)\n",
            RUN_FIRST_SEED);
    for (int round = 0; n_jobs > 0; round++) {
        if (round > 0)
            fprintf(stderr,
                    PROG ": %d configuration%s chose the lowest or highest "
                         "rate tried: one rate further\n",
                    n_jobs, n_jobs > 1 ? "s" : "");
        memset(batch, 0, (size_t)n_jobs * sizeof *batch);
        run_jobs(&run, n_jobs, &jobs, batch);
        for (int k = 0; k < n_jobs; k++)
            tune[lm.job_hc[k] * n_lr + lm.job_lr[k]] = batch[k];
        n_jobs = 0;
        for (int hc = 0; hc < H; hc++) {
            int lo, hi;
            const int b = best_rate(&lm, tune, hc, &lo, &hi);
            const int next = b == lo && lo > 0          ? lo - 1
                             : b == hi && hi < n_lr - 1 ? hi + 1
                                                        : -1;
            if (next >= 0)
                lm.job_hc[n_jobs] = hc, lm.job_lr[n_jobs++] = next;
        }
    }
    free(batch);
    for (int hc = 0; hc < H; hc++) {
        int lo, hi;
        lm.chosen[hc] = best_rate(&lm, tune, hc, &lo, &hi);
    }
    if (lm.stop) { /* --stop: the tuning networks' first points only */
        write_baselines(&run, &lm, dir);
        write_tuning_curves(&lm, dir, tune);
        printf("Stopped run: %d network%s, each stopped after %d of its %d "
               "tokens; wall time %.1f min.\n(written: "
               "%s/curves_tuning.dat, baselines.csv)\n",
               n_tuned(&lm, tune), n_tuned(&lm, tune) > 1 ? "s" : "", lm.stop,
               lm.sz.tokens, (run_now() - t0) / 60, dir);
        free(tune);
        lm_free(&lm, &d);
        return 0;
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
        if (lm.cfg_h[hc] == 1 || lm.cfg_g[hc] != lm.cfg_h[hc])
            continue;
        double v = 0;
        for (int s = 0; s < S; s++)
            v += fin[hc * S + s].val_loss / S;
        if (best_hc < 0 || v < best_val)
            best_hc = hc, best_val = v;
    }

    /* the files */
    static const struct run_col tcol[] = {
        {"heads", 0},  {"kv_heads", 0}, {"lr", 6},       {"seed", 0},
        {"params", 0}, {"tokens", 0},   {"val_loss", 5}, {"chosen", 0}};
    struct run_csv csv;
    run_csv_open(&csv, &run, dir, "tuning.csv", "impl", tcol, 8);
    for (int k = 0; k < H * n_lr; k++) {
        const struct result *r = &tune[k];
        if (!r->trained)
            continue;
        const double v[8] = {r->heads,    r->kv_heads,
                             r->lr,       (double)RUN_FIRST_SEED,
                             r->n_params, r->tokens,
                             r->val_loss, lm.chosen[k / n_lr] == k % n_lr};
        run_csv_row(&csv, impl, v);
    }
    run_csv_close(&csv);
    static const struct run_col rcol[] = {
        {"heads", 0},    {"kv_heads", 0}, {"lr", 6},       {"seed", 0},
        {"params", 0},   {"tokens", 0},   {"val_loss", 5}, {"test_loss", 5},
        {"test_ppl", 3}, {"train_s", 1},  {"peak_mb", 1}};
    run_csv_open(&csv, &run, dir, "results.csv", "impl", rcol, 11);
    for (int k = 0; k < H * S; k++) {
        const struct result *r = &fin[k];
        const double v[11] = {r->heads,
                              r->kv_heads,
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
    write_baselines(&run, &lm, dir);
    write_curves(&lm, dir, fin);
    write_tuning_curves(&lm, dir, tune);
    write_seed_heads(&run, &lm, dir, fin);
    const struct result *meas[MAX_HC];
    int n_meas = 0;
    for (int hc = 0; hc < H; hc++)
        if (fin[hc * S].measured)
            meas[n_meas++] = &fin[hc * S];
    write_offsets(&run, dir, meas, n_meas);
    write_relations(&run, &lm, dir, meas, n_meas);
    write_ablation(&run, dir, meas, n_meas);
    write_sentence(&run, &lm, dir, meas, n_meas);
    write_tag_profiles(&lm, dir, meas, n_meas);
    struct out o;
    FILE *g = out_open(&o, dir, "generated.txt");
    for (int q = 0; q < n_meas; q++)
        for (int k = 0; k < N_GEN; k++) {
            fprintf(g, "%d heads: ", meas[q]->heads);
            print_words(g, &d, meas[q]->gen[k], lm.n_prompt[k] + LM_GEN_NEW);
            fprintf(g, "\n");
        }
    for (int k = 0; k < N_GEN; k++) { /* the same prompts, the trigram */
        fprintf(g, "trigram: ");
        print_words(g, &d, lm.base_gen[k], lm.n_prompt[k] + LM_GEN_NEW);
        fprintf(g, "\n");
    }
    out_close(&o);
    FILE *tab = out_open(&o, dir, "table.txt");
    print_tables(tab, &lm, impl, tune, fin, meas, n_meas, best_hc);
    out_close(&o);
    print_tables(stdout, &lm, impl, tune, fin, meas, n_meas, best_hc);
    if (ref_arg) {
        FILE *cmp = out_open(&o, dir, "compare.txt");
        compare_reference(cmp, &lm, fin, ref_arg);
        out_close(&o);
        compare_reference(stdout, &lm, fin, ref_arg);
    }

    long peak = 0;
    for (int k = 0; k < H * S; k++)
        peak = fin[k].peak_kb > peak ? fin[k].peak_kb : peak;
    for (int k = 0; k < H * n_lr; k++)
        peak = tune[k].peak_kb > peak ? tune[k].peak_kb : peak;
    if (data_arg) {
        make_dir(&run, data_arg);
        write_book_data(impl, &lm, data_arg, tune, fin, meas, n_meas, best_hc,
                        wall, peak);
    }
    printf("\nWall time %.1f s (%.1f min) for %d networks trained (%d "
           "tuning + %d more seeds), %d tokens each; peak memory of a "
           "training process %.0f MB.\n",
           wall, wall / 60, n_tuned(&lm, tune) + H * (S - 1),
           n_tuned(&lm, tune), H * (S - 1), fin[0].tokens, peak / 1024.0);
    int kept = 0;
    double train_sum = 0;
    for (int k = 0; k < H * n_lr; k++) {
        kept += tune[k].kept;
        train_sum += tune[k].trained ? tune[k].train_s : 0;
    }
    for (int k = 0; k < H * S; k++) { /* seed 1's are the tuning's */
        kept += k % S > 0 && fin[k].kept;
        train_sum += k % S > 0 ? fin[k].train_s : 0;
    }
    if (kept)
        printf("Resumed: %d of those networks were kept from an earlier run "
               "(--resume), so the wall time above is this run's part only. "
               "Every network's training, summed: %.1f s (%.1f min) of one "
               "core.\n",
               kept, train_sum, train_sum / 60);
    printf("(written: %s/table.txt, tuning.csv, results.csv, curves.dat, "
           "offsets.csv, relations.csv, ablation.csv, seed_heads.csv, "
           "sentence/, generated.txt)\n",
           dir);
    free(tune), free(fin);
    lm_free(&lm, &d);
    return 0;
}
