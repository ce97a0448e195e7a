/*
 * lm.h: what the files of chapter 8's experiment (tools/runs/lm/: main.c
 * and its parts) share: the run's sizes, its context (struct lm), one
 * network's result (struct result), and the functions of each part:
 *   network.c    one network: trained (lm_protocol.h), scored, measured
 *                (heads_lm.h)
 *   setup.c      the windows, relations, sentence and prompts the run
 *                reads from the corpus, and the n-gram baselines
 *   write.c      the CSV and data files of the measured heads, and the
 *                run's closing summary
 *   resume.c     the networks' parameters and records, saved and
 *                reloaded (--resume, --remeasure)
 *   roles.c      --roles: roles as they appear
 *   remeasure.c  --remeasure: every final network's heads again, from
 *                the run's models or (--weights) its 16-bit files;
 *                --pack: those files written
 *   weights16.c  a network in 16-bit floats: the conversion, the file
 *   sizes.c      the sizes --size picks (their width, depth, context,
 *                batch and tokens: sizes.tsv)
 *   parsed.c     --parsed: a finished run's heads on the parser's
 *                relations (links_lm.h)
 *   explore.c    --explore-dump: one kept network's weights and logits
 *                on the head explorer's inputs (tools/explorer/)
 *   findhead.c   --find-head: one network's heads on one relation,
 *                measured with the student's own chapter 8 functions
 * main.c says what the run does and writes.
 *
 * Dimension letters: as gpt.h (V, T, C, L, B, h); g = K/V heads,
 * N = sequences of an evaluation set, K = the largest offset measured,
 * R = relations, NC = tag classes, S = tokens of the sentence.
 */
#ifndef LM_H
#define LM_H

#include "corpus.h"
#include "datafile.h"
#include "gpt.h"
#include "heads_lm.h"
#include "links_lm.h"
#include "lm_protocol.h"
#include "ngram.h"
#include "rng.h"
#include "runner.h"

#include <stdint.h>
#include <stdio.h>

#define PROG "lm-experiment"

/* The model's width, depth and context and the training batch are a
 * size's (sizes.tsv, struct size); the rest is fixed. */
#define LM_SIZES    "tools/runs/lm/sizes.tsv" /* --sizes FILE */
#define LM_EVAL_B   16 /* sequences per forward pass when evaluating */
#define LM_K        8  /* offsets 0 .. K in the profiles */
#define LM_TOP_K    40 /* generation: the top-k */
#define LM_TEMP     0.8f
#define LM_GEN_NEW  20 /* tokens generated per line */
#define LM_GEN_SEED 7ULL

#define MAX_HC  8 /* head counts */
#define MAX_KV  4 /* K/V head counts beside the query heads' own */
#define MAX_CFG (MAX_HC + MAX_KV)
#define MAX_LR  6  /* learning rates on the ladder */
#define MAX_H   16 /* heads in one block */
/* the largest depth and context of a size (sizes.tsv), which size the
 * measures' arrays: every row of the table is checked against them when
 * the run starts */
#define MAX_L      2  /* blocks */
#define MAX_T      64 /* tokens of context */
#define MAX_HL     (MAX_L * MAX_H)
#define MAX_POINTS 17 /* points of a learning curve, the start included */
#define MAX_S      16 /* tokens of the sentence */
#define N_GEN      3
#define SENT_HEADS 4 /* the sentence's maps: chapter 3 built 4 heads */
#define R          HEADS_N_RELATIONS
#define NC         TAG_N_CLASSES

/* the lesson's sentence, the prompts, the baselines' names, the
 * relations' keys in the CSV files (setup.c) */
extern const char *const sentence;
extern const char *const prompts[N_GEN];
extern const char *const ngram_name[NGRAM_MAX_ORDER];
extern const char *const rel_key[R];

/* ---------------------------------------------------------------------
 * The sizes: what --size picks
 * ------------------------------------------------------------------- */

struct size {
    const char *name;
    /* sizes.tsv's row: d_model, blocks, context, windows per training
     * batch */
    int C, L, T, B;
    int seeds, n_heads, heads[MAX_HC], n_lr;
    int gqa_h, n_kv, kv[MAX_KV]; /* gqa_h query heads sharing kv[i] K/V */
    /* the ladder of rates a configuration may try, lowest first, and
     * the grid every configuration tries first: lr[lr_lo .. lr_hi] */
    float lr[MAX_LR];
    int lr_lo, lr_hi;
    int tokens;                       /* per network (sizes.tsv) */
    int points;                       /* validation points after the start */
    int n_val, n_test, n_meas, n_abl; /* sequences of T tokens */
};

/* the size named name (sizes.c), or NULL: its protocol only, without
 * sizes.tsv's row */
const struct size *size_find(const char *name);

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
    long *first; /* (N) the corpus index of each window's first token */
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
    /* --weights: the final networks are read from this folder's 16-bit
     * files (weights16_path()), none trained, and seed 1's measured */
    const char *weights_dir;
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
    int L; /* blocks: the network has L * heads heads */
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

struct roles_result {
    int heads, n;
    struct roles_point p[MAX_CKPT];
    struct result final; /* the last checkpoint's network, measured */
};

/* A text file written as DIR/NAME.tmp and renamed to DIR/NAME on
 * closing, as the CSV files are. */
struct out {
    FILE *f;
    char tmp[1100], path[1100];
};

/* the options (main.c) */
struct lm_opts {
    const char *size, *heads, *lrs, *kv, *data, *ref, *remeasure, *corpus;
    const char *impl, *sizes, *pack, *weights;
    const char *parsed, *links; /* --parsed RUN_DIR, --links FILE */
    const char *explore;        /* --explore-dump WEIGHTS_FILE */
    const char *find_head;      /* --find-head REL */
    int tokens, roles, stop, resume;
};

/* sizes.c: the size, sizes.tsv's row of it, then the options over
 * them, into lm */
void size_options(struct run *run, const struct lm_opts *o, struct lm *lm);

/* network.c: one network */
struct gpt_config model_config(const struct lm *lm, int heads);
int kv_copies_equal(const struct gpt_model *m, int g);
int unique_params(const struct gpt_model *m, int g);
int measure(struct gpt_model *m, const struct lm *lm, struct result *r);
int best_rate(const struct lm *lm, const struct result *tune, int hc, int *lo,
              int *hi);
void cfg_label(const struct lm *lm, int hc, char *buf, size_t n);
int rate_used(const struct lm *lm, const struct result *tune, int i);
int n_tuned(const struct lm *lm, const struct result *tune);
void job_of(const struct lm *lm, int k, int *hc, int *lr, int *s);
int heads_summary(struct gpt_model *m, const struct lm *lm, struct result *r);
int network_run(int k, void *result, void *ctx);
void network_name(int k, char *buf, size_t n, void *ctx);
void network_score(const void *result, char *buf, size_t n);
int best_many(const struct lm *lm, const struct result *fin);

/* setup.c: the corpus's windows, the baselines */
void windows_init(const struct run *run, struct windows *w,
                  const struct corpus_data *d, int s, int n, int T, int phase);
void windows_free(struct windows *w);
int parse_lrs(const struct run *run, const char *s, float *out);
void lm_setup(const struct run *run, struct lm *lm,
              const struct corpus_data *d);
void baselines_run(const struct run *run, struct lm *lm);
void lm_free(struct lm *lm, struct corpus_data *d);
void configurations(struct run *run, const char *kv_arg, struct lm *lm);
void run_start(struct run *run, struct lm *lm, const char *dir, long cores);

/* book.c: the tables (table.txt), the run beside a reference
 * (compare.txt), the heads' heaviest weights (row_max.csv) and --data's
 * values and plot data; print_words: ids as words, "the jury said ..." */
void print_words(FILE *f, const struct corpus_data *d, const int *ids, int n);
void print_tables(FILE *f, const struct lm *lm, const char *impl,
                  const struct result *tune, const struct result *fin,
                  const struct result *const *meas, int n_meas, int best_hc);
int compare_reference(FILE *out, const struct lm *lm, const struct result *fin,
                      const char *ref);
void write_row_max(const struct run *run, const char *dir,
                   const struct result *const *meas, int n_meas);
/* seed 1's measured networks of fin into meas, and all the files above
 * that measure their heads (offsets ... row_max) into dir: how many */
int write_measured(const struct run *run, const struct lm *lm, const char *dir,
                   const struct result *fin, const struct result **meas);
void write_book_data(const char *impl, const struct lm *lm, const char *dir,
                     const struct result *tune, const struct result *fin,
                     const struct result *const *meas, int n_meas, int best_hc,
                     double wall, long peak_kb);

/* write.c: the files */
FILE *out_open(struct out *o, const char *dir, const char *name);
void out_close(struct out *o);
void make_dir(const struct run *run, const char *dir);
double overall(const float *loss, const int *count);
int best_offset(const struct result *r, int k, float *share);
void write_offsets(const struct run *run, const char *dir,
                   const struct result *const *meas, int n_meas);
void write_relations(const struct run *run, const struct lm *lm,
                     const char *dir, const struct result *const *meas,
                     int n_meas);
/* the wall time, the networks trained and kept, the files (stdout) */
void summary(const struct lm *lm, const char *dir, const struct result *tune,
             const struct result *fin, double wall, long peak);
void write_ablation_table(const char *dir, const char *name,
                          const struct result *r);
void write_ablation(const struct run *run, const char *dir,
                    const struct result *const *meas, int n_meas);
void write_sentence(const struct run *run, const struct lm *lm, const char *dir,
                    const struct result *const *meas, int n_meas);
void write_curves(const struct lm *lm, const char *dir,
                  const struct result *fin);
void write_tuning_curves(const struct lm *lm, const char *dir,
                         const struct result *tune);
void write_tag_profiles(const struct lm *lm, const char *dir,
                        const struct result *const *meas, int n_meas);
void write_baselines(const struct run *run, const struct lm *lm,
                     const char *dir);
void relation_cols(struct run_col *col, int *nc, char (*names)[24],
                   const char *prefix);
void write_stopped(const struct run *run, const struct lm *lm, const char *dir,
                   const struct result *tune, double t0);
void write_seed_heads(const struct run *run, const struct lm *lm,
                      const char *dir, const struct result *fin);

/* resume.c: networks saved and reloaded */
void model_path(const struct lm *lm, int heads, int g, int lr_index, char *buf,
                size_t n);
void seed_path(const struct lm *lm, int heads, int g, int lr_index, int s,
               char *buf, size_t n);
int save_params(const struct gpt_model *m, const char *path);
int load_params(struct gpt_model *m, const char *path, char *why, size_t n);
int save_record(const struct lm *lm, const struct result *r, const char *path);
int load_record(const struct lm *lm, struct result *r, const char *path);

/* roles.c: --roles */
int roles_measure(struct gpt_model *m, const struct lm *lm,
                  struct roles_point *p, float *A);
void roles_main(struct run *run, struct lm *lm, const char *dir, int roles,
                int argc, char **argv, long cores);

/* remeasure.c: --remeasure, --pack */
void read_chosen(const struct run *run, struct lm *lm, const char *from,
                 const char *opt);
float *remeasure_want(const struct run *run, struct lm *lm, const char *from);
void remeasure_main(struct run *run, struct lm *lm, const char *dir,
                    const char *from, float *want, int argc, char **argv,
                    long cores);
void pack_main(struct run *run, struct lm *lm, const char *dir,
               const char *from);

/* weights16.c: a network kept in a file: "LMPARAMM", then V T C L
 * n_heads kv_heads n_params seed, the rate's float32 bits and n_half as
 * uint32, then the parameters, the first n_half (0, or the embeddings'
 * with half = 1) in 16-bit floats (IEEE binary16), the rest in 32-bit
 * ones, little-endian */
#define PARAMS16_MAGIC "LMPARAMM"
struct params16_head {
    int V, T, C, L, n_heads, kv_heads, n_params, n_half;
    unsigned long long seed;
    float lr;
};
/* x rounded to the nearest 16-bit float (a tie to even) into *h: KIT_OK,
 * or KIT_E_INPUT for a NaN, an infinity or a value beyond 65504 */
int f16_from_float(float x, uint16_t *h);
float f16_to_float(uint16_t h);
/* the conversion's edge cases and round trips: KIT_OK and a line that
 * says so, or KIT_E_INPUT and the first case wrong, into why */
int f16_selftest(char *why, size_t n);
/* DIR/hH_gG_sSEED.f16 */
void weights16_path(const char *dir, int heads, int g, unsigned long long seed,
                    char *buf, size_t n);
/* These return KIT_OK, or an error and one line into why (if not NULL)
 * that names the file and what is wrong with it. */
int save_params16(const struct gpt_model *m, int kv_heads,
                  unsigned long long seed, float lr, int half, const char *path,
                  char *why, size_t n);
/* the header into *hd and (if params) the parameters, of which the
 * file must hold max_params */
int read_params16(const char *path, struct params16_head *hd, float *params,
                  int max_params, char *why, size_t n);
/* into m, whose sizes the file's must be; its K/V heads must be copies
 * as its header says */
int load_params16(struct gpt_model *m, const char *path, char *why, size_t n);

/* parsed.c: --parsed RUN_DIR: seed 1's network of every configuration
 * of the finished run RUN_DIR, reloaded, its heads scored on the
 * relations of the links in links_path (links_lm.h); parsed.csv into
 * dir */
void parsed_main(struct run *run, struct lm *lm, const char *dir,
                 const char *from, const char *links_path);

/* explore.c: --explore-dump WEIGHTS_FILE: the network of that 16-bit
 * file run on the explorer's inputs (the lesson's sentence, the first
 * test windows): every head's weights and every position's logits, as
 * they are and with block 0's head 0 mean-ablated, the means and the
 * vocabulary, as JSON into out */
void explore_main(struct run *run, const struct lm *lm, const char *weights,
                  const char *out);
/* The best-of-N null's draws and seed (links_best_of_null()), and the
 * test windows whose weights are held at once */
#define PARSED_DRAWS 10000
#define PARSED_SEED  20190801ULL
#define PARSED_CHUNK 64

/* One relation's cases on one set of windows (links_relation_cases():
 * flat positions), which of them are hard, and their baselines. */
struct rcases {
    int n, *word, *related;
    unsigned char *hard; /* (n) 1 for a hard case */
    struct links_baseline b;
};

/* One relation's row: its best head on meas, scored on test, and what
 * mean-ablating it costs there (parsed.c's step 3). */
struct parsed_row {
    int head; /* l*h + i */
    float meas_score, meas_margin, test_score, test_margin, hard_score;
    float null_p95;
    int word_positions;
    double loss_word_next, abl_inc_word_next, loss_all, abl_inc_all;
};

/* relation rel's cases on windows w (T tokens each) into c; a failure
 * ends the program with one line */
void cases_on(const struct run *run, const struct links *lk, int rel,
              const struct windows *w, int T, struct rcases *c);
void rcases_free(struct rcases *c);
/* the links of links_path read (a failure ends the program with one
 * line that starts with opt), and the cases of relations q0 .. q0+n-1 on
 * lm's measurement and test windows into meas, test (n each) */
void links_cases(const struct run *run, const struct lm *lm,
                 const char *links_path, const char *opt, int q0, int n,
                 struct rcases *meas, struct rcases *test);
/* the 95th percentile of the best margin over the offset that n_heads
 * heads with no skill beyond it reach on c's cases by chance
 * (links_best_of_null(), PARSED_DRAWS draws, seed PARSED_SEED) */
int null_p95(const struct rcases *c, int n_heads, float *p95);
/* each head out[q].head (q < n_rows) mean-ablated on lm's test windows,
 * its mean from the measurement windows (heads_means(),
 * heads_set_ablation()): the loss's increase at the later words of
 * test[q]'s cases and at every position into out[q]; m's hook is left
 * unset. KIT_OK or an error of the forward pass. */
int ablate_chosen(const struct lm *lm, struct gpt_model *m,
                  const struct rcases *test, struct parsed_row *out,
                  int n_rows);

/* findhead.c: --find-head REL --weights DIR: seed 1's network of the
 * largest head count (DIR/hH_gH_sSEED.f16), every head scored on
 * relation REL with the student's relation_score() and
 * head_offset_profile(), the best on the measurement windows scored
 * once on the test windows and mean-ablated, and a verdict */
/* REL's relation (links_relation_key()), or the program ends with one
 * line listing the keys */
int findhead_relation(const struct run *run, const char *key);
/* the weights file the run reads into path, checked to exist (or one
 * line saying where the weights come from) */
void findhead_path(const struct run *run, const struct lm *lm, char *path,
                   size_t n);
void findhead_main(struct run *run, struct lm *lm, const char *key,
                   const char *impl, const char *links_path);

#endif
