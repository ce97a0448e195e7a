/*
 * main.c: chapter 5's experiment, `make experiment`.
 *
 *   experiment [--seeds N] [--heads 1,2,4,8,16] [--workers W]
 *              [--impl NAME] [--reference DIR] RESULTS_DIR [DATA_DIR]
 *
 * Trains the same attention-only network (experiment.h) over N seeds:
 *   - on the position task, with each head count of --heads, all with the
 *     same parameters, and a control: 1 head whose scores are scaled as
 *     4 heads' are (1/sqrt(d_model/4) instead of 1/sqrt(d_model));
 *   - on the content task, with 1 and 2 heads;
 *   - the protocol's controls: the grid each head count chooses its
 *     learning rate and vo_init from, 1 and 2 heads trained 4x longer,
 *     and depth: 1 head in 2 and in 4 stacked layers (experiment.h's
 *     n_layers), each with the same grid, scored on the same sequences.
 * Every network is trained by one worker process from its own seed, so
 * the numbers do not depend on W. Then it writes:
 *   RESULTS_DIR/results.csv   one row per network of the position task
 *   RESULTS_DIR/content.csv   one row per network of the content task
 *   RESULTS_DIR/controls.csv  one row per control network: trained 4x
 *                             longer, or 1 head in 2 or 4 layers
 * (columns: impl,heads,scale,seed,params,mean_accuracy, one acc_ per
 * relation, final_loss, then layers,steps,lr,vo_init: how it was
 * trained, the chosen setting)
 *   RESULTS_DIR/table.txt     the tables it prints
 * and, when DATA_DIR is given, the book's data (data.c: numbers only,
 * ch5.values, CSV and .dat files), from which tools/runs/plotdata/ch5.c
 * makes the chapter's tables and gnuplot scripts.
 * With --reference DIR it also prints the table of DIR/results.csv (the
 * reference run) beside this one and flags every configuration whose
 * accuracy differs from it by more than the spread across seeds.
 * Tables go to stdout, progress to stderr, and so does the wall time:
 * it is never written into the book's data.
 * The options, the worker processes, the progress lines and the CSV
 * files are the runner's (tools/runs/runner.h), which chapter 6's run
 * (tools/runs/kvexp/main.c) shares. The rest of the program: driver.h.
 *
 * Dimension letters: T = tokens, S = symbols, R = relations, h = heads.
 */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>

/* The protocol's settings (driver.h): the depth control's layers, and
 * the grid every head count chooses its learning rate and vo_init from.
 * 0.01 was in the grid too, and the poorest for every head count; it was
 * dropped to keep the run within its time (see the chapter). */
const int depth_layers[N_DEPTH] = {2, 4};
const float grid_lr[N_LR] = {2e-2f, 4e-2f};
const float grid_vo[N_VO] = {1.0f, 8.0f};

/* The configurations: the position task's head counts, the scale
 * control, and the content task's 1 and 2 heads, into cf. Returns how
 * many. */
static int configurations(const int *heads, int n_heads, struct config *cf)
{
    static char labels[MAX_CONFIG][32];
    int n_cf = 0;
    for (int i = 0; i < n_heads; i++) {
        snprintf(labels[i], sizeof labels[i], "%d head%s", heads[i],
                 heads[i] > 1 ? "s" : "");
        cf[n_cf++] =
            (struct config){EXP_TASK_POSITION, heads[i], 1.0f, labels[i]};
    }
    /* 1 head scored as 4 heads are: q.k / sqrt(d_model / 4) */
    cf[n_cf++] =
        (struct config){EXP_TASK_POSITION, 1, 2.0f, "1 head, 4-head scale"};
    cf[n_cf++] = (struct config){EXP_TASK_CONTENT, 1, 1.0f, "content, 1 head"};
    cf[n_cf++] = (struct config){EXP_TASK_CONTENT, 2, 1.0f, "content, 2 heads"};
    return n_cf;
}

/* The head counts of --heads (1, 2, 4, 8, 16 without it) into heads,
 * each a divisor of d_model. Returns how many. */
static int head_counts(struct run *run, const char *arg, int d_model,
                       int *heads)
{
    static const int book[5] = {1, 2, 4, 8, 16};
    int n = 5;
    for (int i = 0; i < n; i++)
        heads[i] = book[i];
    if (arg)
        n = run_parse_ints(run, "HEADS", arg, heads, MAX_CONFIG - 1, 1,
                           EXP_MAX_HEADS);
    for (int i = 0; i < n; i++)
        if (d_model % heads[i] != 0)
            run_fail(run, 2,
                     "%d heads cannot split d_model = %d: a head count must "
                     "divide %d (HEADS=%s)",
                     heads[i], d_model, d_model, arg);
    return n;
}

/* The tables, computed from the CSV files just written (or the
 * reference's, with --reference), on stdout and in RESULTS_DIR/table.txt.
 * Returns 0, or 1 when a file cannot be read back. */
static int tables(const char *results_dir, const char *impl,
                  const char *reference, struct outcome *o)
{
    o->n_pos = read_csv(results_dir, "results.csv", EXP_R, o->s, MAX_CONFIG);
    o->n_con = read_csv(results_dir, "content.csv", 2, o->sc, MAX_CONFIG);
    if (o->n_pos <= 0 || o->n_con <= 0) {
        fprintf(stderr, PROG ": cannot read back %s/results.csv\n",
                results_dir);
        return 1;
    }
    struct summary rs[MAX_CONFIG], rc[MAX_CONFIG];
    int n_rs = 0, n_rc = 0;
    if (reference) {
        n_rs = read_csv(reference, "results.csv", EXP_R, rs, MAX_CONFIG);
        n_rc = read_csv(reference, "content.csv", 2, rc, MAX_CONFIG);
        if (n_rs <= 0 || n_rc <= 0) {
            fprintf(stderr, PROG ": cannot read the reference run in %s\n",
                    reference);
            return 1;
        }
    }
    FILE *tab = data_open(PROG, results_dir, "table.txt");
    for (int pass = 0; pass < 2; pass++) {
        FILE *out = pass ? tab : stdout;
        print_tables(out, impl, o);
        if (reference)
            print_comparison(out, o, rs, n_rs, rc, n_rc);
    }
    data_close(PROG, tab);
    return 0;
}

int main(int argc, char **argv)
{
    struct run run = {.prog = PROG,
                      .usage = "[--seeds N] [--heads 1,2,4,8,16] "
                               "[--workers W] [--impl NAME] "
                               "[--reference DIR] RESULTS_DIR [DATA_DIR]",
                      .hint = "make test CH=5 shows where",
                      .seeds = 5};
    const char *impl = "solutions", *reference = NULL, *heads_arg = NULL;
    const struct run_opt opt[] = {
        {"--heads", "HEADS", &heads_arg, NULL, 0, 0},
        {"--impl", "IMPL", &impl, NULL, 0, 0},
        {"--reference", "REFERENCE", &reference, NULL, 0, 0}};
    int a = run_args(&run, argc, argv, opt, 3, 1, 2);
    const char *results_dir = argv[a],
               *data_dir = a + 1 < argc ? argv[a + 1] : NULL;

    static struct outcome o; /* zeroed: the sums start from 0 */
    o.seeds = run.seeds;
    o.c0 = exp_default_config(1);
    int heads[MAX_CONFIG];
    const int n_heads = head_counts(&run, heads_arg, o.c0.d_model, heads);
    struct config cf[MAX_CONFIG + 2];
    o.n_cf = configurations(heads, n_heads, cf);
    o.cf = cf;

    run_grid(&run, heads, n_heads, &o);
    plan_test(&run, n_heads, &o);
    run_test(&run, &o);
    write_csvs(&run, results_dir, impl, &o);
    if (tables(results_dir, impl, reference, &o) != 0)
        return 1;
    if (data_dir)
        write_data(&run, data_dir, &o);
    exp_eval_set_free(&o.e);
    free(o.xcfg);
    free(o.xres);
    free(o.xparams);
    free(o.cfg);
    free(o.res);
    return 0;
}
