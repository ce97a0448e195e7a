/*
 * tables.c: the run's CSV files (driver.h), written through a temporary
 * file and a rename, so a failed run never leaves half a file, and read
 * back for the tables it prints on stdout and into table.txt: the mean
 * +- sd tables, the grid, the long runs, the depth control, the
 * ablations, and with --reference the student's run beside the
 * reference's.
 */
#include "driver.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "1 head", "1 head, 4 layers" */
const char *name_of(int heads, int layers, char *buf, size_t n)
{
    snprintf(buf, n, "%d head%s", heads, heads > 1 ? "s" : "");
    if (layers > 1)
        snprintf(buf + strlen(buf), n - strlen(buf), ", %d layers", layers);
    return buf;
}

/* The depth control's costs: the KV cache a layer keeps per token at
 * inference is a key and a value of d_model floats each, whatever the
 * head count; the layers run one after the other. */
int kv_floats(int layers, int d_model)
{
    return 2 * d_model * layers;
}

/* ---------------------------------------------------------------------
 * The CSV files: written through a temporary file and a rename, so a
 * failed run never leaves half a file; read back for the tables.
 * ------------------------------------------------------------------- */

const char *const csv_key[2][EXP_R] = {
    {"previous", "two_back", "first", "second"},
    {"previous", "same_class", "", ""}};

/* one row per network of the task: impl,heads,scale,seed,params,
 * mean_accuracy,acc_<relation> for each of its R relations,final_loss,
 * then how it was trained: layers,steps,lr,vo_init (cfg[k], res[k]'s).
 * With task -1, the controls' file: the position task's columns, for
 * the networks of xcfg, whose scores are xres and parameter counts
 * xparams (results and cfg unused). */
static void write_csv(const struct run *run, const char *dir, const char *name,
                      const char *impl, int task, const struct exp_result *res,
                      const struct exp_config *cfg, int n,
                      const struct exp_score *xres, const int *xparams)
{
    const int R = exp_task_relations(task < 0 ? EXP_TASK_POSITION : task);
    enum { N_TRAINED = 4 }; /* layers, steps, lr, vo_init */
    struct run_col col[5 + EXP_R + 1 + N_TRAINED] = {{"heads", 0},
                                                     {"scale", 4},
                                                     {"seed", 0},
                                                     {"params", 0},
                                                     {"mean_accuracy", 6}};
    char names[EXP_R][32];
    for (int r = 0; r < R; r++) {
        snprintf(names[r], sizeof names[r], "acc_%s",
                 csv_key[task < 0 ? EXP_TASK_POSITION : task][r]);
        col[5 + r] = (struct run_col){names[r], 6};
    }
    col[5 + R] = (struct run_col){"final_loss", 6};
    col[6 + R] = (struct run_col){"layers", 0};
    col[7 + R] = (struct run_col){"steps", 0};
    col[8 + R] = (struct run_col){"lr", 4};
    col[9 + R] = (struct run_col){"vo_init", 2};
    struct run_csv csv;
    run_csv_open(&csv, run, dir, name, "impl", col, 6 + R + N_TRAINED);
    for (int k = 0; k < n; k++) {
        if (task >= 0 && res[k].task != task)
            continue;
        const struct exp_config *c = &cfg[k];
        const struct exp_score *sc = task < 0 ? &xres[k] : &res[k].score;
        const double scale =
            (double)c->score_scale / sqrt((double)c->d_model / c->n_heads);
        double v[5 + EXP_R + 1 + N_TRAINED] = {
            c->n_heads, scale, (double)c->seed,
            task < 0 ? xparams[k] : res[k].n_params, sc->mean_accuracy};
        for (int j = 0; j < R; j++)
            v[5 + j] = sc->accuracy[j];
        v[5 + R] = sc->loss;
        v[6 + R] = c->n_layers > 1 ? c->n_layers : 1;
        v[7 + R] = c->steps;
        v[8 + R] = c->lr;
        v[9 + R] = c->vo_init;
        run_csv_row(&csv, impl, v);
    }
    run_csv_close(&csv);
}

/* Read DIR/NAME back: one summary per (heads, scale), in the order they
 * first appear. Returns how many, or -1 when the file cannot be read. */
int read_csv(const char *dir, const char *name, int R, struct summary *sum,
             int max)
{
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = max <= MAX_CONFIG ? fopen(path, "r") : NULL;
    if (!f)
        return -1;
    int n = 0;
    struct run_sum acc[MAX_CONFIG][EXP_R + 2];
    memset(acc, 0, sizeof acc);
    memset(sum, 0, (size_t)max * sizeof *sum);
    if (!fgets(line, sizeof line, f)) { /* the header */
        fclose(f);
        return -1;
    }
    for (int row = 2; fgets(line, sizeof line, f); row++) {
        /* impl,heads,scale,seed,params,mean,acc_1..acc_R,final_loss,...:
         * every number whole (run_read_row), or the program stops */
        double v[EXP_R + 2];
        int heads, params;
        double scale;
        char why[128];
        int ok = run_read_row(why, sizeof why, line, "*ifnif+", &heads, &scale,
                              &params, &v[R]);
        char *p = line;
        for (int skip = 0; ok && skip < 6; skip++) {
            p = strchr(p, ',');
            if (!p) {
                snprintf(why, sizeof why, "fewer than %d fields", 8 + R);
                ok = 0;
            } else
                p++;
        }
        for (int r = 0; ok && r <= R; r++) { /* acc_1..acc_R, final_loss */
            char field[64];
            size_t len = strcspn(p, ",\r\n");
            snprintf(field, sizeof field, "%.*s", (int)len, p);
            ok = len < sizeof field &&
                 run_read_double(field, &v[r < R ? r : R + 1]);
            if (!ok)
                snprintf(why, sizeof why, "field %d is '%s', not a number",
                         7 + r, field);
            p += len + (p[len] == ',');
        }
        if (!ok)
            run_bad_row(PROG, path, row, why, NULL);
        int k = 0;
        while (k < n &&
               !(sum[k].heads == heads && fabs(sum[k].scale - scale) < 1e-6))
            k++;
        if (k == n) {
            if (n == max)
                continue;
            sum[n].heads = heads, sum[n].scale = scale;
            sum[n].params = params;
            n++;
        }
        sum[k].n++;
        for (int j = 0; j < R + 2; j++)
            run_sum_add(&acc[k][j], v[j]);
    }
    fclose(f);
    for (int k = 0; k < n; k++)
        for (int j = 0; j < R + 2; j++) {
            struct run_stats st = run_sum_stats(&acc[k][j]);
            sum[k].mean[j] = st.mean, sum[k].sd[j] = st.sd;
        }
    return n;
}

/* "1 head", "4 heads", "1 head, 4-head scale" */
const char *label_of(const struct summary *s, char *buf, size_t n)
{
    double own = 1 / sqrt(32.0 / s->heads);
    double as_heads = 32.0 * s->scale * s->scale; /* whose own scale it is */
    if (fabs(s->scale - own) < 1e-4)
        snprintf(buf, n, "%d head%s", s->heads, s->heads > 1 ? "s" : "");
    else if (fabs(as_heads - round(as_heads)) < 0.05 && as_heads >= 1)
        snprintf(buf, n, "%d head%s, %.0f-head scale", s->heads,
                 s->heads > 1 ? "s" : "", as_heads);
    else
        snprintf(buf, n, "%d head%s, scale 1/sqrt(%.0f)", s->heads,
                 s->heads > 1 ? "s" : "", 1 / (s->scale * s->scale));
    return buf;
}

static void print_table(FILE *f, const char *title, int task,
                        const struct summary *s, int n)
{
    const int R = exp_task_relations(task);
    char buf[64];
    fprintf(f, "%s\n", title);
    fprintf(f, "%-24s %6s", "network", "params");
    for (int r = 0; r < R; r++)
        fprintf(f, " %13s", exp_relation_name(task, r));
    fprintf(f, " %13s %15s\n", "mean", "final loss");
    for (int k = 0; k < n; k++) {
        fprintf(f, "%-24s %6d", label_of(&s[k], buf, sizeof buf), s[k].params);
        for (int j = 0; j <= R; j++) {
            int col = j < R ? j : R;
            fprintf(f, " %5.1f +- %4.1f%%", 100 * s[k].mean[col],
                    100 * s[k].sd[col]);
        }
        fprintf(f, " %6.3f +- %5.3f\n", s[k].mean[R + 1], s[k].sd[R + 1]);
    }
}

/* The grid (validation accuracy, the chosen cell marked) and the long
 * runs, for stdout and table.txt. */
static void print_protocol(FILE *f, const struct outcome *o)
{
    fprintf(f,
            "The grid: mean accuracy on the validation sequences, seed "
            "%llu, * the chosen setting:\n%-16s",
            GRID_SEED, "network");
    for (int g = 0; g < N_GRID; g++) {
        char cell[32];
        snprintf(cell, sizeof cell, "lr %g vo %g", (double)grid_lr[g / N_VO],
                 (double)grid_vo[g % N_VO]);
        fprintf(f, " %15s", cell);
    }
    fprintf(f, "\n");
    for (int i = 0; i < o->n_choice; i++) {
        const struct choice *c = &o->choice[i];
        char name[32];
        fprintf(f, "%-16s", name_of(c->heads, c->layers, name, sizeof name));
        for (int g = 0; g < N_GRID; g++)
            fprintf(f, "         %5.1f%%%c", 100 * c->val_acc[g],
                    g == c->chosen ? '*' : ' ');
        fprintf(f, "\n");
    }
    const struct longrun *g_long = o->lng;
    if (o->n_long)
        fprintf(f,
                "\nTrained %dx longer (chosen settings, the first %d "
                "seed%s, test sequences):\n",
                LONG_FACTOR, LONG_SEEDS, LONG_SEEDS > 1 ? "s" : "");
    for (int k = 0; k < o->n_long; k++)
        fprintf(f,
                "%d head%s: %5.1f%% after %dx the steps, %5.1f%% after "
                "%dx (loss %.3f, %.3f)\n",
                g_long[k].heads, g_long[k].heads > 1 ? "s" : " ",
                100 * g_long[k].acc_short, 1, 100 * g_long[k].acc_long,
                LONG_FACTOR, g_long[k].loss_short, g_long[k].loss_long);
    if (o->n_depth)
        fprintf(f,
                "\nDepth as a control (test sequences, mean +- sd over "
                "the seeds; KV cache: floats per token):\n%-16s %6s %6s "
                "%6s %8s %8s %8s %8s %15s\n",
                "network", "layers", "params", "KV", "previous", "two back",
                "first", "second", "mean");
    for (int k = 0; k < o->n_depth; k++) {
        const struct depth *q = &o->depth[k];
        char name[32];
        fprintf(f, "%-16s %6d %6d %6d",
                name_of(q->heads, q->layers, name, sizeof name), q->layers,
                q->params, kv_floats(q->layers, 32));
        for (int r = 0; r < EXP_R; r++)
            fprintf(f, " %7.1f%%", 100 * q->acc[r].mean);
        fprintf(f, " %6.1f +- %4.1f%%\n", 100 * q->acc[EXP_R].mean,
                100 * q->acc[EXP_R].sd);
    }
}

/* ---------------------------------------------------------------------
 * The student's run beside the reference
 * ------------------------------------------------------------------- */

/* Print both tables' means side by side; flag every configuration whose
 * mean accuracy differs by more than the spread across seeds (the larger
 * of the two sds, and at least 1 point). Returns how many it flagged. */
static int compare(FILE *f, int task, const struct summary *mine, int n,
                   const struct summary *ref, int n_ref)
{
    const int R = exp_task_relations(task);
    char buf[64];
    int flagged = 0;
    fprintf(f, "%-24s %16s %16s\n", "network", "your code", "reference");
    for (int k = 0; k < n; k++) {
        int j = 0;
        while (j < n_ref && !(ref[j].heads == mine[k].heads &&
                              fabs(ref[j].scale - mine[k].scale) < 1e-4))
            j++;
        fprintf(f, "%-24s %7.1f +- %4.1f%%",
                label_of(&mine[k], buf, sizeof buf), 100 * mine[k].mean[R],
                100 * mine[k].sd[R]);
        if (j == n_ref) {
            fprintf(f, "   (not in the reference run)\n");
            continue;
        }
        fprintf(f, " %7.1f +- %4.1f%%", 100 * ref[j].mean[R],
                100 * ref[j].sd[R]);
        double spread = fmax(fmax(mine[k].sd[R], ref[j].sd[R]), 0.01);
        double diff = mine[k].mean[R] - ref[j].mean[R];
        if (fabs(diff) > spread) {
            flagged++;
            fprintf(f, "   <- DIFFERS by %.1f points", 100 * diff);
        }
        fprintf(f, "\n");
    }
    return flagged;
}

/* The two ablations side by side, for stdout and table.txt: per head
 * count of the position task, over the seeds, what the owner of each
 * relation costs it zeroed and mean-ablated, and the most any other
 * head costs any relation in any seed. */
static void print_ablation(FILE *f, const struct outcome *o)
{
    const struct exp_result *res = o->res;
    const int n = o->n;
    fprintf(f, "\nAblation, zeroed / mean-ablated (points lost, mean over the "
               "seeds; owner: the head that costs the relation most):\n");
    fprintf(f, "%-10s", "network");
    for (int r = 0; r < EXP_R; r++)
        fprintf(f, " %13s", exp_relation_name(EXP_TASK_POSITION, r));
    fprintf(f, " %15s\n", "any other head");
    for (int k = 0; k < o->n_cf; k++) {
        const struct config *c = &o->cf[k];
        if (c->task != EXP_TASK_POSITION || c->heads < 2 ||
            c->score_scale != 1.0f)
            continue;
        fprintf(f, "%-10s", c->label);
        for (int j = 0; j < EXP_R; j++) {
            struct run_stats z = over_seeds(res, n, c->task, c->heads, 1.0f,
                                            exp_owner_loss, j),
                             m = over_seeds(res, n, c->task, c->heads, 1.0f,
                                            get_owner_mean, j);
            fprintf(f, "   %5.1f/%5.1f", 100 * z.mean, 100 * m.mean);
        }
        double oz, om;
        other_loss_max(res, n, c->task, c->heads, 1.0f, EXP_R, &oz, &om);
        fprintf(f, "     %5.1f/%5.1f\n", 100 * oz, 100 * om);
    }
}

/* results.csv and content.csv, the tables' networks of each task, and
 * controls.csv, the controls' */
void write_csvs(const struct run *run, const char *dir, const char *impl,
                const struct outcome *o)
{
    write_csv(run, dir, "results.csv", impl, EXP_TASK_POSITION, o->res, o->cfg,
              o->n, NULL, NULL);
    write_csv(run, dir, "content.csv", impl, EXP_TASK_CONTENT, o->res, o->cfg,
              o->n, NULL, NULL);
    write_csv(run, dir, "controls.csv", impl, -1, NULL, o->xcfg, o->n_x,
              o->xres, o->xparams);
}

/* Every table of the run, from o's summaries (the CSV files as written)
 * and measures. */
void print_tables(FILE *f, const char *impl, const struct outcome *o)
{
    char title[160];
    snprintf(title, sizeof title,
             "Position task (%s), mean +- sd over %d seeds (%llu..%llu), "
             "d_model %d, %d steps:",
             impl, o->seeds, RUN_FIRST_SEED, RUN_FIRST_SEED + o->seeds - 1,
             o->c0.d_model, o->c0.steps);
    print_table(f, title, EXP_TASK_POSITION, o->s, o->n_pos);
    fprintf(f, "\n");
    print_table(f,
                "Content task: the previous token and the latest "
                "earlier token of the same class:",
                EXP_TASK_CONTENT, o->sc, o->n_con);
    fprintf(f, "\n");
    print_protocol(f, o);
    print_ablation(f, o);
}

/* The run beside the reference's summaries, rs and rc (position and
 * content task), and what a difference suggests. Returns how many
 * configurations it flagged. */
int print_comparison(FILE *f, const struct outcome *o, const struct summary *rs,
                     int n_rs, const struct summary *rc, int n_rc)
{
    fprintf(f, "\nYour code beside the reference solutions (mean "
               "accuracy, the same seeds and settings):\n");
    fprintf(f, "Position task:\n");
    int flagged = compare(f, EXP_TASK_POSITION, o->s, o->n_pos, rs, n_rs);
    fprintf(f, "Content task:\n");
    flagged += compare(f, EXP_TASK_CONTENT, o->sc, o->n_con, rc, n_rc);
    if (flagged)
        fprintf(f,
                "\n%d configuration%s differ%s from the reference "
                "by more than the spread across seeds (the larger "
                "standard deviation, at least 1 point). Where your "
                "chapter 1-4 tests pass, this suggests a gradient "
                "the finite-difference tests let through (a term "
                "lost in one head or one block of a weight, say; "
                "make test CH=5 checks the whole network's), or a "
                "forward pass that differs from the reference at "
                "larger T than the tests use. Look at "
                "mha_backward() first.\n",
                flagged, flagged > 1 ? "s" : "", flagged > 1 ? "" : "s");
    else
        fprintf(f, "\nEvery configuration agrees with the "
                   "reference within the spread across seeds: "
                   "your code reproduces the experiment.\n");
    return flagged;
}
