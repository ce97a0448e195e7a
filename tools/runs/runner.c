/*
 * runner.c: what the experiment drivers share (runner.h): options, jobs
 * on worker processes with progress lines, CSV files, means over seeds.
 */
#define _POSIX_C_SOURCE 200809L

#include "runner.h"
#include "datafile.h"
#include "pool.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUN_MAX_WORKERS 64

/* ---------------------------------------------------------------------
 * The program and its options
 * ------------------------------------------------------------------- */

double run_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void run_usage(const struct run *r)
{
    fprintf(stderr, "usage: %s %s\n", r->prog, r->usage);
    exit(2);
}

void run_fail(const struct run *r, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", r->prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(status);
}

void *run_calloc(const struct run *r, int n, size_t size)
{
    void *p = calloc((size_t)(n > 0 ? n : 1), size);
    if (!p)
        run_fail(r, 1, "out of memory for %d items of %zu bytes", n, size);
    return p;
}

int run_parse_int(const struct run *r, const char *what, const char *s, int lo,
                  int hi)
{
    long v = 0;
    if (!run_read_long(s, &v) || v < lo || v > hi)
        run_fail(r, 2, "%s must be a whole number from %d to %d, not '%s'",
                 what, lo, hi, s);
    return (int)v;
}

int run_parse_ints(const struct run *r, const char *what, const char *s,
                   int *out, int max, int lo, int hi)
{
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf)
        run_fail(r, 2, "%s is too long ('%.40s...')", what, s);
    int n = 0;
    for (char *tok = strtok(buf, ", "); tok; tok = strtok(NULL, ", ")) {
        if (n == max)
            run_fail(r, 2, "%s lists more than %d numbers ('%s')", what, max,
                     s);
        out[n] = run_parse_int(r, what, tok, lo, hi);
        for (int j = 0; j < n; j++)
            if (out[j] == out[n])
                run_fail(r, 2, "%s lists %d twice ('%s'): give each once", what,
                         out[n], s);
        n++;
    }
    if (n == 0)
        run_fail(r, 2, "%s lists no number ('%s')", what, s);
    return n;
}

int run_args(struct run *r, int argc, char **argv, const struct run_opt *opt,
             int n_opt, int min_pos, int max_pos)
{
    r->workers = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (r->workers < 1)
        r->workers = 1;
    int a = 1;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a += 2) {
        const char *name = argv[a], *value = a + 1 < argc ? argv[a + 1] : "";
        int f = 0;
        while (f < n_opt && (opt[f].what || strcmp(name, opt[f].name) != 0))
            f++;
        if (f < n_opt) { /* a flag: no value */
            *opt[f].number = 1;
            a--;
            continue;
        }
        if (a + 1 >= argc)
            run_fail(r, 2, "%s needs a value (usage: %s %s)", name, r->prog,
                     r->usage);
        if (!strcmp(name, "--seeds")) {
            r->seeds = run_parse_int(r, "SEEDS", value, 1, RUN_MAX_SEEDS);
            continue;
        }
        if (!strcmp(name, "--workers")) {
            r->workers = run_parse_int(r, "WORKERS", value, 1, RUN_MAX_WORKERS);
            continue;
        }
        int i = 0;
        while (i < n_opt && strcmp(name, opt[i].name) != 0)
            i++;
        if (i == n_opt)
            run_fail(r, 2, "unknown option '%s' (usage: %s %s)", name, r->prog,
                     r->usage);
        if (opt[i].text)
            *opt[i].text = value;
        else
            *opt[i].number =
                run_parse_int(r, opt[i].what, value, opt[i].lo, opt[i].hi);
    }
    if (argc - a < min_pos || argc - a > max_pos)
        run_usage(r);
    return a;
}

/* ---------------------------------------------------------------------
 * The jobs
 * ------------------------------------------------------------------- */

struct progress {
    struct run *r;
    const struct run_jobs *jobs;
    const int *order; /* (n) the pool's job k is the driver's order[k] */
    int done;
};

/* "40 s", "3.5 min" */
static void duration(char *buf, size_t n, double s)
{
    if (s < 100)
        snprintf(buf, n, "%.0f s", s);
    else
        snprintf(buf, n, "%.1f min", s / 60);
}

static void job_done(int k, int status, const void *result, void *ctx)
{
    struct progress *p = ctx;
    const struct run_jobs *j = p->jobs;
    char name[160], score[64] = "", so_far[32], left[32];
    j->name(p->order[k], name, sizeof name, j->ctx);
    if (status != KIT_OK)
        snprintf(score, sizeof score, "failed");
    else if (j->score)
        j->score(result, score, sizeof score);
    p->done++;
    double t = run_now() - p->r->t_start;
    duration(so_far, sizeof so_far, t);
    /* the time left, as if the jobs still to come took as long as the
     * ones so far */
    duration(left, sizeof left, t / p->done * (p->r->n_jobs - p->done));
    fprintf(stderr, "  [%d/%d] %s: %s (%s", p->done, p->r->n_jobs, name, score,
            so_far);
    if (p->done < p->r->n_jobs)
        fprintf(stderr, ", about %s left", left);
    fprintf(stderr, ")\n");
}

/* pool.h's job and done hooks take one context: the progress, which
 * holds the driver's */
static int job_run(int k, void *result, void *ctx)
{
    const struct progress *p = ctx;
    return p->jobs->run(p->order[k], result, p->jobs->ctx);
}

/* order (n): the jobs by cost, the dearest first, ties in job order;
 * 0 .. n-1 without a cost */
static void order_by_cost(int *order, int n, const struct run_jobs *jobs,
                          double *cost)
{
    for (int k = 0; k < n; k++) {
        order[k] = k;
        cost[k] = jobs->cost ? jobs->cost(k, jobs->ctx) : 0;
    }
    for (int i = 1; i < n; i++) /* insertion: stable */
        for (int j = i; j > 0 && cost[order[j]] > cost[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

void run_jobs(struct run *r, int n_configs, const struct run_jobs *jobs,
              void *results)
{
    const int n = n_configs * r->seeds;
    int *status = run_calloc(r, n, sizeof *status); /* 0: KIT_OK */
    int *order = run_calloc(r, n, sizeof *order);
    double *cost = run_calloc(r, n, sizeof *cost);
    /* the pool fills its job k's result at k: job order[k]'s, moved to
     * order[k] after */
    unsigned char *ran = run_calloc(r, n, jobs->size), *out = results;
    order_by_cost(order, n, jobs, cost);
    r->n_jobs = n;
    const int w = r->workers < n ? r->workers : n;
    if (r->seeds > 1)
        fprintf(stderr,
                "  training %d networks (%d configurations x %d seeds) on "
                "%d worker%s",
                n, n_configs, r->seeds, w, w > 1 ? "s" : "");
    else
        fprintf(stderr, "  training %d network%s on %d worker%s", n,
                n > 1 ? "s" : "", w, w > 1 ? "s" : "");
    fprintf(stderr, "%s ...\n", jobs->cost ? ", the longest first" : "");
    r->t_start = run_now();
    struct progress p = {r, jobs, order, 0};
    int first =
        pool_run(n, r->workers, jobs->size, ran, status, job_run, job_done, &p);
    double total = run_now() - r->t_start;
    /* back in job order: the results and the statuses */
    int *by_job = run_calloc(r, n, sizeof *by_job);
    for (int k = 0; k < n; k++) {
        memcpy(out + (size_t)order[k] * jobs->size,
               ran + (size_t)k * jobs->size, jobs->size);
        by_job[order[k]] = status[k];
    }
    free(ran), free(order), free(cost), free(status);
    status = by_job;
    if (first != KIT_OK) {
        int k = 0; /* the first failure in job order */
        while (k < n && status[k] == KIT_OK)
            k++;
        if (k < n)
            first = status[k];
        char name[160] = "starting the jobs"; /* the pool failed */
        if (k < n)
            jobs->name(k, name, sizeof name, jobs->ctx);
        if (first == POOL_E_WORKER)
            run_fail(r, 1,
                     "%s: its worker process died (a crash in the code it "
                     "runs%s%s)",
                     name, r->hint ? "; " : "", r->hint ? r->hint : "");
        run_fail(r, 1, "%s: %s", name, kit_strerror(first));
    }
    free(status);
    fprintf(stderr, "  %d network%s in %.1f s wall on %d worker%s\n", n,
            n > 1 ? "s" : "", total, w, w > 1 ? "s" : "");
}

/* Chapter 5's networks as jobs */

struct networks {
    const struct exp_config *cfg;
    const struct exp_eval_set *e;
};

static int network_run(int k, void *result, void *ctx)
{
    const struct networks *nw = ctx;
    return exp_run_one(&nw->cfg[k], nw->e, result);
}

/* "position task, 1 head, 4-head scale, seed 2017",
 * "position task, 4 heads, 2 K/V heads, seed 2017" */
void run_network_name(const struct exp_config *c, char *buf, size_t n)
{
    char kv[32] = "", scale[32] = "";
    if (c->layer == &exp_gqa_layer)
        snprintf(kv, sizeof kv, ", %d K/V head%s", c->n_kv_heads,
                 c->n_kv_heads > 1 ? "s" : "");
    if (c->score_scale != 1.0f) /* score_scale^2 heads' own scale */
        snprintf(scale, sizeof scale, ", %.0f-head scale",
                 (double)(c->score_scale * c->score_scale));
    snprintf(buf, n, "%s task, %d head%s%s%s, seed %llu",
             c->task == EXP_TASK_CONTENT ? "content" : "position", c->n_heads,
             c->n_heads > 1 ? "s" : "", kv, scale, c->seed);
}

static void network_name(int k, char *buf, size_t n, void *ctx)
{
    const struct networks *nw = ctx;
    run_network_name(&nw->cfg[k], buf, n);
}

static void network_score(const void *result, char *buf, size_t n)
{
    const struct exp_result *r = result;
    snprintf(buf, n, "%.1f%%", 100 * r->score.mean_accuracy);
}

/* Training: per step, batch sequences forward and backward through
 * every layer, a head adding an eighth of a one-head layer's cost (the
 * projections are the same for any head count); measured: about
 * n_probe + n_eval + (1 + 2 h) n_abl forward passes more, a third of a
 * training pass each. 6e-5 s is a sequence's pass through a one-head
 * layer on one core of the book's machine. */
double run_network_cost(const struct exp_config *c, int measured)
{
    const double layers = c->n_layers > 1 ? c->n_layers : 1;
    const double seq = 6e-5 * layers * (1 + c->n_heads / 8.0);
    double passes = (double)c->steps * c->batch;
    if (measured)
        passes +=
            (RUN_N_PROBE + RUN_N_EVAL + (1 + 2 * c->n_heads) * RUN_N_ABL) / 3.0;
    return seq * passes;
}

static double network_cost(int k, void *ctx)
{
    const struct networks *nw = ctx;
    return run_network_cost(&nw->cfg[k], 1);
}

void run_networks(struct run *r, int n_configs, const struct exp_config *cfg,
                  const struct exp_eval_set *e, struct exp_result *res)
{
    struct networks nw = {cfg, e};
    struct run_jobs jobs = {sizeof *res,   network_run, network_name,
                            network_score, &nw,         network_cost};
    run_jobs(r, n_configs, &jobs, res);
}

void run_eval_set(const struct run *r, struct exp_eval_set *e,
                  const struct exp_config *c0)
{
    data_check(r->prog,
               exp_eval_set_init(e, c0->T, c0->n_symbols, RUN_N_EVAL,
                                 RUN_N_PROBE, RUN_N_ABL, c0->seed + 12345),
               "drawing the evaluation sequences");
}

/* ---------------------------------------------------------------------
 * CSV files of named numbers
 * ------------------------------------------------------------------- */

void run_csv_open(struct run_csv *c, const struct run *r, const char *dir,
                  const char *name, const char *text_col,
                  const struct run_col *col, int n_col)
{
    *c = (struct run_csv){
        .r = r, .col = col, .n_col = n_col, .text = text_col != NULL};
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    snprintf(c->tmp, sizeof c->tmp, "%s/%s", dir, tmp);
    snprintf(c->path, sizeof c->path, "%s/%s", dir, name);
    c->f = data_open(r->prog, dir, tmp);
    if (text_col)
        fprintf(c->f, "%s", text_col);
    for (int j = 0; j < n_col; j++)
        fprintf(c->f, "%s%s", j || text_col ? "," : "", col[j].name);
    fprintf(c->f, "\n");
}

void run_csv_row(struct run_csv *c, const char *text, const double *v)
{
    if (c->text)
        fprintf(c->f, "%s", text);
    for (int j = 0; j < c->n_col; j++)
        fprintf(c->f, "%s%.*f", j || c->text ? "," : "", c->col[j].decimals,
                v[j]);
    fprintf(c->f, "\n");
}

void run_csv_close(struct run_csv *c)
{
    data_close(c->r->prog, c->f);
    c->f = NULL;
    if (rename(c->tmp, c->path) != 0)
        run_fail(c->r, 1, "cannot rename %s to %s", c->tmp, c->path);
}

/* ---------------------------------------------------------------------
 * Over seeds
 * ------------------------------------------------------------------- */

void run_sum_add(struct run_sum *s, double x)
{
    s->sum += x, s->sq += x * x, s->n++;
}

struct run_stats run_sum_stats(const struct run_sum *s)
{
    struct run_stats st = {0, 0};
    if (s->n == 0)
        return st;
    st.mean = s->sum / s->n;
    double var = s->n > 1 ? (s->sq - s->n * st.mean * st.mean) / (s->n - 1) : 0;
    st.sd = var > 0 ? sqrt(var) : 0;
    return st;
}

/* ---------------------------------------------------------------------
 * The heads' maps
 * ------------------------------------------------------------------- */

char run_symbol(int s)
{
    return (char)('A' + s);
}

void run_write_map(const struct run *r, const char *dir, const char *name,
                   const float *w, int T, const int *shown)
{
    FILE *f = data_open(r->prog, dir, name);
    fprintf(f, "query\\key");
    for (int j = 0; j < T; j++)
        fprintf(f, " %c", run_symbol(shown[j]));
    fprintf(f, "\n");
    for (int t = 0; t < T; t++) {
        fprintf(f, "%c", run_symbol(shown[t]));
        for (int j = 0; j < T; j++)
            fprintf(f, " %.4f", w[t * T + j]);
        fprintf(f, "\n");
    }
    data_close(r->prog, f);
}
