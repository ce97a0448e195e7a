/*
 * runner.h: what the experiment drivers share: chapter 5's
 * (tools/runs/experiment/main.c) and chapter 6's (tools/runs/kvexp/main.c).
 *
 * A driver's run is a list of jobs, configurations x seeds: job k is
 * configuration k / seeds with seed number k % seeds (seed RUN_FIRST_SEED
 * + k % seeds). The runner reads the options every driver takes
 * (--seeds, --workers) and the driver's own, runs the jobs on worker
 * processes (pool.h) with one progress line each on stderr, writes CSV
 * files of named numbers through a temporary file and a rename (an
 * interrupted run leaves the previous file whole), and gives means and
 * sample standard deviations over seeds.
 *
 * Every error is one line, "PROG: what went wrong", and ends the program
 * (exit 2 for a bad argument, 1 for a failed run or write).
 */
#ifndef RUNNER_H
#define RUNNER_H

#include "experiment.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_FIRST_SEED 2017ULL /* seed number s is RUN_FIRST_SEED + s */
#define RUN_MAX_SEEDS  100     /* --seeds may ask for at most this many */

/* ---------------------------------------------------------------------
 * Numbers read from text: an argument, a field of a CSV file a run wrote
 * or the kit committed. Every reader of the runs' files uses these
 * (tools/runs/plotdata/ includes this header for them alone): a number is
 * the whole field or an error, never its prefix ("5.0x776" is not 5.0),
 * and never infinite or NaN.
 * ------------------------------------------------------------------- */

/* s, the whole of it, as a finite number into *v: 1, or 0. */
static inline int run_read_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(x))
        return 0;
    *v = x;
    return 1;
}

/* s, the whole of it, as a whole number into *v: 1, or 0. */
static inline int run_read_long(const char *s, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0)
        return 0;
    *v = x;
    return 1;
}

/* One row of a CSV file, its fields read by types, a letter each:
 *   's'  text, into a char buffer of the size given after it (char *, int)
 *   'i'  a whole number into an int *;  'l'  into a long *
 *   'f'  a finite number into a double *
 *   'n'  a finite number, not kept;     '*'  any text, not kept
 * and a final '+': more fields may follow, unread (without it the row
 * has exactly as many fields as types has letters). The line's "\n" or
 * "\r\n" ends it. Returns 1; or 0 with why (n_why chars) saying which
 * field is wrong: "field 8 is '5.0x776', not a number". */
static inline int run_read_row(char *why, size_t n_why, const char *line,
                               const char *types, ...)
{
    char buf[4096];
    size_t len = strcspn(line, "\r\n");
    if (len >= sizeof buf) {
        snprintf(why, n_why, "a row longer than %zu characters",
                 sizeof buf - 1);
        return 0;
    }
    memcpy(buf, line, len);
    buf[len] = '\0';
    const size_t n_types = strcspn(types, "+");
    const int more = types[n_types] == '+';
    va_list ap;
    va_start(ap, types);
    char *field = buf;
    int ok = 1;
    size_t k = 0;
    for (; ok && field && k < n_types; k++) {
        char *comma = strchr(field, ',');
        if (comma)
            *comma = '\0';
        double d = 0;
        long l = 0;
        const char t = types[k];
        if (t == 's') {
            char *to = va_arg(ap, char *);
            int size = va_arg(ap, int);
            ok = field[0] != '\0' && (int)strlen(field) < size;
            if (ok)
                memcpy(to, field, strlen(field) + 1);
        } else if (t == 'i' || t == 'l') {
            ok = run_read_long(field, &l) &&
                 (t == 'l' || (l >= INT_MIN && l <= INT_MAX));
            if (t == 'i') {
                int *to = va_arg(ap, int *);
                if (ok)
                    *to = (int)l;
            } else {
                long *to = va_arg(ap, long *);
                if (ok)
                    *to = l;
            }
        } else if (t == 'f' || t == 'n') {
            ok = run_read_double(field, &d);
            if (t == 'f') {
                double *to = va_arg(ap, double *);
                if (ok)
                    *to = d;
            }
        }
        if (!ok)
            snprintf(why, n_why, "field %zu is '%.40s', not %s", k + 1, field,
                     t == 's'               ? "a name"
                     : t == 'f' || t == 'n' ? "a number"
                                            : "a whole number");
        field = comma ? comma + 1 : NULL;
    }
    va_end(ap);
    if (ok && (k < n_types || (field && !more))) {
        size_t n = k;
        for (; field; n++) {
            char *comma = strchr(field, ',');
            field = comma ? comma + 1 : NULL;
        }
        snprintf(why, n_why, "%zu fields, not %s%zu", n,
                 more ? "at least " : "", n_types);
        ok = 0;
    }
    return ok;
}

/* Print "PROG: PATH, line LINE: WHY" (and " (HINT)" unless hint is
 * NULL) on stderr and exit(1): a row of a file a run wrote or the kit
 * committed is not what run_read_row() or its reader wants. */
static inline void run_bad_row(const char *prog, const char *path, int line,
                               const char *why, const char *hint)
{
    fprintf(stderr, "%s: %s, line %d: %s%s%s%s\n", prog, path, line, why,
            hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
    exit(1);
}

/* ---------------------------------------------------------------------
 * The program and its options
 * ------------------------------------------------------------------- */

struct run {
    const char *prog;  /* "experiment": the first word of every message */
    const char *usage; /* the arguments, "[--seeds N] ... RESULTS_DIR" */
    const char *hint;  /* said when a worker dies ("make test CH=5 ..."),
                          or NULL */
    int seeds;         /* --seeds N; the caller sets the default */
    int workers;       /* --workers W; run_args() defaults it to the cores */
    int n_jobs;        /* set by run_jobs(): configurations x seeds */
    double t_start;    /* when run_jobs() started (run_now()) */
};

/* One option of a driver's own: "--heads 1,2,4" into *text, or
 * "--lr-steps 3" into *number (a whole number lo .. hi), or a flag (what
 * NULL): "--resume" alone, which sets *number to 1. */
struct run_opt {
    const char *name;  /* "--heads" */
    const char *what;  /* what the errors call it: "HEADS"; NULL: a flag */
    const char **text; /* a text option's value goes here, or */
    int *number;       /* a number option's here */
    int lo, hi;
};

/* Read argv: --seeds, --workers and the n_opt options of opt, each
 * followed by its value (a flag by none), then from min_pos to max_pos arguments. Returns
 * the index in argv of the first of those. A bad value, an unknown
 * option or the wrong number of arguments ends the program with one
 * line. */
int run_args(struct run *r, int argc, char **argv, const struct run_opt *opt,
             int n_opt, int min_pos, int max_pos);

/* s as a whole number lo .. hi, or end the program with "PROG: WHAT must
 * be a whole number from lo to hi, not 's'". */
int run_parse_int(const struct run *r, const char *what, const char *s, int lo,
                  int hi);

/* s as a list of whole numbers lo .. hi separated by commas or spaces,
 * at most max of them, none twice, into out; returns how many (at
 * least 1). */
int run_parse_ints(const struct run *r, const char *what, const char *s,
                   int *out, int max, int lo, int hi);

/* Print "usage: PROG USAGE" and exit(2). */
void run_usage(const struct run *r);

/* Print "PROG: " and the message, and exit(status). */
void run_fail(const struct run *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* n zeroed items of size bytes, or end the program with "PROG: out of
 * memory". */
void *run_calloc(const struct run *r, int n, size_t size);

/* Seconds on a monotonic clock. */
double run_now(void);

/* ---------------------------------------------------------------------
 * The jobs
 * ------------------------------------------------------------------- */

struct run_jobs {
    size_t size; /* bytes of one job's result */
    /* job k into result (zeroed first): KIT_OK or an error */
    int (*run)(int k, void *result, void *ctx);
    /* what job k is, for the progress lines and the errors: "position
     * task, 2 heads, seed 2017" */
    void (*name)(int k, char *buf, size_t n, void *ctx);
    /* a finished job's headline number, "100.0%", or NULL */
    void (*score)(const void *result, char *buf, size_t n);
    void *ctx;
    /* what job k costs, in any unit (its estimated CPU time), or NULL:
     * the jobs then start in the order of their costs, the dearest
     * first, so that no worker sits idle at the end while another
     * finishes a long job (NULL: in job order). The results do not
     * depend on it. */
    double (*cost)(int k, void *ctx);
};

/* Run n_configs x r->seeds jobs on r->workers processes into results
 * (that many results of jobs->size bytes; job k's at k, whatever order
 * they ran in), with a line on stderr before, one per finished job (its
 * name, its score, the time so far and an estimate of the time left)
 * and one after (the wall time). If any job fails, say which (the first
 * in job order) and why, and exit(1). */
void run_jobs(struct run *r, int n_configs, const struct run_jobs *jobs,
              void *results);

/* Chapter 5's networks: cfg[k] trained and measured on e into res[k]
 * (experiment.h's exp_run_one), as run_jobs() jobs, the dearest first
 * (run_network_cost). */
void run_networks(struct run *r, int n_configs, const struct exp_config *cfg,
                  const struct exp_eval_set *e, struct exp_result *res);

/* What training the network of c costs, roughly in seconds of one core:
 * its steps x batch sequences x layers, a sequence costing more with
 * more heads (each head has its own T x T attention). Only the order of
 * the costs matters (run_jobs' cost). measured: 1 when exp_measure()
 * runs on it after training (one forward pass per head and ablated
 * sequence, on top of the evaluation). */
double run_network_cost(const struct exp_config *c, int measured);

/* What run_networks' progress lines call the network of c: "position
 * task, 1 head, 4-head scale, seed 2017". */
void run_network_name(const struct exp_config *c, char *buf, size_t n);

/* Chapter 5's evaluation sequences, which every experiment measures on. */
#define RUN_N_EVAL  1000 /* fresh sequences the accuracy is measured on */
#define RUN_N_PROBE 500  /* sequences the linear probe is fitted on */
#define RUN_N_ABL   200  /* sequences each ablation is measured on */
void run_eval_set(const struct run *r, struct exp_eval_set *e,
                  const struct exp_config *c0);

/* ---------------------------------------------------------------------
 * CSV files of named numbers
 * ------------------------------------------------------------------- */

struct run_col {
    const char *name; /* the header's name for it: "mean_accuracy" */
    int decimals;     /* how it is printed: 0 for a whole number */
};

struct run_csv {
    const struct run *r;
    FILE *f;
    const struct run_col *col;
    int n_col, text; /* text: the rows start with a text column */
    char tmp[1024], path[1024];
};

/* Start DIR/NAME (written as DIR/NAME.tmp until run_csv_close()): a
 * header of text_col (a first column of text, or NULL for none) and the
 * n_col columns' names. */
void run_csv_open(struct run_csv *c, const struct run *r, const char *dir,
                  const char *name, const char *text_col,
                  const struct run_col *col, int n_col);

/* One row: text (when the file has a text column), then v (n_col). */
void run_csv_row(struct run_csv *c, const char *text, const double *v);

/* Close the file and rename it to DIR/NAME. */
void run_csv_close(struct run_csv *c);

/* ---------------------------------------------------------------------
 * Over seeds
 * ------------------------------------------------------------------- */

/* A running sum: run_sum_add() each value, then run_sum_stats(). */
struct run_sum {
    int n;
    double sum, sq;
};

struct run_stats {
    double mean, sd; /* sd: the sample standard deviation (n - 1) */
};

void run_sum_add(struct run_sum *s, double x);
struct run_stats run_sum_stats(const struct run_sum *s); /* 0, 0 if n = 0 */

/* ---------------------------------------------------------------------
 * The heads' maps
 * ------------------------------------------------------------------- */

/* Write DIR/NAME: a trained head's (T, T) weights w on the shown
 * sequence, with the symbols as row and column headers ("A", "B", ...),
 * for gnuplot's `matrix rowheaders columnheaders`. */
void run_write_map(const struct run *r, const char *dir, const char *name,
                   const float *w, int T, const int *shown);

/* The letter that stands for symbol s in the maps and the tables. */
char run_symbol(int s);

#endif
