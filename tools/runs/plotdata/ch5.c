/*
 * plotdata/ch5.c: chapter 5's tables and gnuplot scripts, made from the
 * data its experiment wrote (tools/runs/experiment/data.c, `make
 * experiment`, which runs before this program: the plots' data stamp
 * depends on it). Nothing here trains or measures: a heading changes
 * here, and `make book` shows it without a run.
 *
 *   usage: ch5 OUTDIR
 *
 * Reads from OUTDIR, and writes there:
 *   ch5_results.csv  -> ch5_results.md (the position task's mean +- sd
 *                       table), ch5_accuracy.dat (the error-bar figure's
 *                       data), ch5_misc.gpi (the loss curves' and the
 *                       pruning curves' titles)
 *   ch5_content.csv  -> ch5_content.md (the content task's table)
 *   ch5_grid.csv     -> ch5_grid.md (the grid, the chosen cell in bold)
 *   ch5_depth.csv    -> ch5_depth.md (the depth control), when the run
 *                       had its rows
 *   ch5_heads_roles.csv -> ch5_heads.gpi (each map's title: the head's
 *                       mean weight on each relation's token)
 *   ch5_content_roles.csv, ch5_shown.csv -> ch5_content.gpi (the same,
 *                       and the shown sequence's classes)
 * The CSV files hold every number in full, so the tables print what the
 * run measured.
 *
 * Dimension letters: R = relations, h = heads.
 */
#include "../runner.h" /* run_read_double(): every number whole, or an error */
#include "datafile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PROG     "ch5"
#define MAX_COL  16 /* heads,scale,params,seeds + mean,sd of R + 2 */
#define MAX_ROWS 64
#define D_MODEL  32 /* the network's width, as label_of() has always read it */

/* A CSV file of numbers under a header line. */
struct table {
    int n_rows, n_col;
    double v[MAX_ROWS][MAX_COL];
};

/* DIR/NAME into t: n_col numbers a row. Returns 1; 0 when the file is
 * absent and optional; stops the program on any other fault. */
static int read_table(const char *dir, const char *name, int n_col,
                      struct table *t, int optional)
{
    char path[1024], line[4096], why[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f && optional)
        return 0;
    if (!f) {
        fprintf(stderr,
                PROG ": cannot read %s (make experiment IMPL=solutions "
                     "writes it)\n",
                path);
        exit(1);
    }
    t->n_rows = 0, t->n_col = n_col;
    int row = 1;
    if (!fgets(line, sizeof line, f)) /* the header */
        run_bad_row(PROG, path, row, "no header", NULL);
    while (fgets(line, sizeof line, f)) {
        row++;
        if (t->n_rows == MAX_ROWS)
            run_bad_row(PROG, path, row, "too many rows", NULL);
        line[strcspn(line, "\r\n")] = '\0';
        char *field = line;
        int k = 0;
        for (; field && k < MAX_COL; k++) {
            char *comma = strchr(field, ',');
            if (comma)
                *comma = '\0';
            if (!run_read_double(field, &t->v[t->n_rows][k])) {
                snprintf(why, sizeof why, "field %d is '%.40s', not a number",
                         k + 1, field);
                run_bad_row(PROG, path, row, why, NULL);
            }
            field = comma ? comma + 1 : NULL;
        }
        if (k != n_col || field) {
            snprintf(why, sizeof why, "not %d fields", n_col);
            run_bad_row(PROG, path, row, why, NULL);
        }
        t->n_rows++;
    }
    fclose(f);
    return 1;
}

/* ---------------------------------------------------------------------
 * The mean +- sd tables (ch5_results.csv, ch5_content.csv: heads, scale,
 * params, seeds, then the mean and sd of each of the R relations, of the
 * mean accuracy and of the final loss)
 * ------------------------------------------------------------------- */

enum { S_HEADS, S_SCALE, S_PARAMS, S_SEEDS, S_FIRST };
#define S_MEAN(j) (S_FIRST + 2 * (j))
#define S_SD(j)   (S_FIRST + 2 * (j) + 1)

/* whether a row's scale is its head count's own, 1/sqrt(d_head) */
static int own_scale(const double *row)
{
    return fabs(row[S_SCALE] - 1 / sqrt(D_MODEL / row[S_HEADS])) < 1e-4;
}

/* "1 head", "4 heads", "1 head, 4-head scale" */
static const char *label_of(const double *row, char *buf, size_t n)
{
    const int h = (int)row[S_HEADS];
    const double scale = row[S_SCALE];
    double as_heads = D_MODEL * scale * scale; /* whose own scale it is */
    if (own_scale(row))
        snprintf(buf, n, "%d head%s", h, h > 1 ? "s" : "");
    else if (fabs(as_heads - round(as_heads)) < 0.05 && as_heads >= 1)
        snprintf(buf, n, "%d head%s, %.0f-head scale", h, h > 1 ? "s" : "",
                 as_heads);
    else
        snprintf(buf, n, "%d head%s, scale 1/sqrt(%.0f)", h, h > 1 ? "s" : "",
                 1 / (scale * scale));
    return buf;
}

/* The book's table of a task of R relations: mean +- sd. */
static void write_mean_table(const char *dir, const char *name,
                             const char *heading, int R, const struct table *t)
{
    char buf[64];
    FILE *f = data_open(PROG, dir, name);
    fprintf(f, "%s\n|:---|", heading);
    for (int r = 0; r < R + 2; r++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int k = 0; k < t->n_rows; k++) {
        const double *s = t->v[k];
        fprintf(f, "| %s |", label_of(s, buf, sizeof buf));
        for (int j = 0; j < R; j++)
            fprintf(f, " %.1f ± %.1f |", 100 * s[S_MEAN(j)], 100 * s[S_SD(j)]);
        fprintf(f, " **%.1f ± %.1f** | %.3f ± %.3f |\n", 100 * s[S_MEAN(R)],
                100 * s[S_SD(R)], s[S_MEAN(R + 1)], s[S_SD(R + 1)]);
    }
    data_close(PROG, f);
}

/* The error-bar figure's data: per configuration of the position task,
 * the mean and sd of each relation and of the mean. */
static void write_accuracy(const char *dir, const struct table *t)
{
    FILE *f = data_open(PROG, dir, "ch5_accuracy.dat");
    fprintf(f,
            "# label, then mean and sd for: previous, two back, first, "
            "second, mean (fractions), over %d seeds\n",
            t->n_rows ? (int)t->v[0][S_SEEDS] : 0);
    for (int k = 0; k < t->n_rows; k++) {
        const double *s = t->v[k];
        char buf[64];
        label_of(s, buf, sizeof buf);
        if (s[S_HEADS] == 1 && strchr(buf, ','))
            snprintf(buf, sizeof buf, "1 head,\\n4-head scale");
        fprintf(f, "\"%s\"", buf);
        for (int j = 0; j <= EXP_R; j++)
            fprintf(f, " %.5f %.5f", s[S_MEAN(j)], s[S_SD(j)]);
        fprintf(f, "\n");
    }
    data_close(PROG, f);
}

/* What ch5_loss.gp and ch5_prune.gp need to know: the loss curves'
 * columns (every configuration of the position task, in the run's order)
 * and the pruning curves' blocks (those of several heads at their own
 * scale), with their titles. */
static void write_misc(const char *dir, const struct table *t)
{
    FILE *g = data_open(PROG, dir, "ch5_misc.gpi");
    int col = 0, block = 0;
    for (int k = 0; k < t->n_rows; k++) {
        const double *s = t->v[k];
        char label[64];
        label_of(s, label, sizeof label);
        fprintf(g, "loss_title_%d = \"%s\"\n", col++, label);
        if (s[S_HEADS] >= 2 && own_scale(s))
            fprintf(g, "prune_title_%d = \"%s\"\nprune_heads_%d = %d\n", block,
                    label, block, (int)s[S_HEADS]),
                block++;
    }
    fprintf(g, "loss_columns = %d\nprune_blocks = %d\n", col, block);
    data_close(PROG, g);
}

/* ---------------------------------------------------------------------
 * The protocol's tables
 * ------------------------------------------------------------------- */

/* "1 head", "1 head, 4 layers" */
static const char *name_of(int heads, int layers, char *buf, size_t n)
{
    snprintf(buf, n, "%d head%s", heads, heads > 1 ? "s" : "");
    if (layers > 1)
        snprintf(buf + strlen(buf), n - strlen(buf), ", %d layers", layers);
    return buf;
}

/* ch5_grid.csv: heads, layers, lr, vo_init, validation accuracy and
 * loss, chosen (1 or 0); a row per cell, the cells of a grid row in
 * turn. The book's grid table: a row per grid row, the chosen cell in
 * bold. */
enum { G_HEADS, G_LAYERS, G_LR, G_VO, G_ACC, G_LOSS, G_CHOSEN, G_COLS };
static void write_grid(const char *dir, const struct table *t)
{
    int cells = 1; /* a grid row's cells: until the network changes */
    while (cells < t->n_rows && t->v[cells][G_HEADS] == t->v[0][G_HEADS] &&
           t->v[cells][G_LAYERS] == t->v[0][G_LAYERS])
        cells++;
    FILE *f = data_open(PROG, dir, "ch5_grid.md");
    fprintf(f, "| network |");
    for (int g = 0; g < cells; g++)
        fprintf(f, " $\\eta$ %g, `vo_init` %g |", t->v[g][G_LR], t->v[g][G_VO]);
    fprintf(f, " chosen |\n|:---|");
    for (int g = 0; g <= cells; g++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int i = 0; i + cells <= t->n_rows; i += cells) {
        const double *c = t->v[i], *chosen = c;
        char name[32];
        fprintf(f, "| %s |",
                name_of((int)c[G_HEADS], (int)c[G_LAYERS], name, sizeof name));
        for (int g = 0; g < cells; g++) {
            const double *cell = t->v[i + g];
            fprintf(f, cell[G_CHOSEN] ? " **%.1f** |" : " %.1f |",
                    100 * cell[G_ACC]);
            if (cell[G_CHOSEN])
                chosen = cell;
        }
        fprintf(f, " $\\eta$ %g, %g |\n", chosen[G_LR], chosen[G_VO]);
    }
    data_close(PROG, f);
}

/* ch5_depth.csv: heads, layers, params, KV floats per token, the mean
 * accuracy of each relation, the mean accuracy and its sd. */
enum { D_HEADS, D_LAYERS, D_PARAMS, D_KV, D_REL, D_COLS = D_REL + EXP_R + 2 };
static void write_depth(const char *dir, const struct table *t)
{
    FILE *f = data_open(PROG, dir, "ch5_depth.md");
    fprintf(f, "| network | layers | params | KV floats "
               "| previous | two back | first | second | mean |\n"
               "|:---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < t->n_rows; k++) {
        const double *q = t->v[k];
        char name[32];
        fprintf(f, "| %s | %d | %d | %d |",
                name_of((int)q[D_HEADS], (int)q[D_LAYERS], name, sizeof name),
                (int)q[D_LAYERS], (int)q[D_PARAMS], (int)q[D_KV]);
        for (int r = 0; r < EXP_R; r++) /* the means; the sd is the mean's */
            fprintf(f, " %.1f |", 100 * q[D_REL + r]);
        fprintf(f, " **%.1f ± %.1f** |\n", 100 * q[D_REL + EXP_R],
                100 * q[D_REL + EXP_R + 1]);
    }
    data_close(PROG, f);
}

/* ---------------------------------------------------------------------
 * The maps' titles
 * ------------------------------------------------------------------- */

/* A title per panel of the maps STEM_hH_iI.dat, into the .gpi file g,
 * from STEM_roles.csv (heads, head, its mean weight on each of the R
 * relations' token): the head, and its weight on each relation's token
 * under the relation's short name, two a line. */
static void write_titles(const char *dir, const char *stem, FILE *g, int R,
                         const char *const *short_name)
{
    char name[64];
    snprintf(name, sizeof name, "%s_roles.csv", stem);
    struct table t;
    read_table(dir, name, 2 + R, &t, 0);
    for (int k = 0; k < t.n_rows; k++) {
        const int h = (int)t.v[k][0], i = (int)t.v[k][1];
        fprintf(g, "title_%s_h%d_i%d = \"%d head%s: head %d", stem, h, i, h,
                h > 1 ? "s" : "", i);
        for (int j = 0; j < R; j++)
            fprintf(g, "%s%s %.2f", j % 2 ? "  " : "\\n", short_name[j],
                    t.v[k][2 + j]);
        fprintf(g, "\"\n");
    }
}

static void write_gpi(const char *dir)
{
    static const char *const position[EXP_R] = {"t-1", "t-2", "x0", "x1"};
    static const char *const content[2] = {"t-1", "same class"};
    FILE *g = data_open(PROG, dir, "ch5_heads.gpi");
    write_titles(dir, "ch5_heads", g, EXP_R, position);
    data_close(PROG, g);
    g = data_open(PROG, dir, "ch5_content.gpi");
    write_titles(dir, "ch5_content", g, 2, content);
    /* the shown sequence's classes, for the caption: ch5_shown.csv is t,
     * symbol, class; a symbol's letter is run_symbol()'s */
    struct table t;
    read_table(dir, "ch5_shown.csv", 3, &t, 0);
    fprintf(g, "classes = \"");
    for (int k = 0; k < t.n_rows; k++)
        fprintf(g, "%s%c:%d", k ? " " : "", 'A' + (int)t.v[k][1],
                (int)t.v[k][2]);
    fprintf(g, "\"\n");
    data_close(PROG, g);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    static struct table t;
    read_table(dir, "ch5_results.csv", S_FIRST + 2 * (EXP_R + 2), &t, 0);
    write_mean_table(dir, "ch5_results.md",
                     "| network | previous | two back | first | second "
                     "| mean | loss |",
                     EXP_R, &t);
    write_accuracy(dir, &t);
    write_misc(dir, &t);
    read_table(dir, "ch5_content.csv", S_FIRST + 2 * (2 + 2), &t, 0);
    write_mean_table(dir, "ch5_content.md",
                     "| network | previous | same class | mean | loss |", 2,
                     &t);
    read_table(dir, "ch5_grid.csv", G_COLS, &t, 0);
    write_grid(dir, &t);
    if (read_table(dir, "ch5_depth.csv", D_COLS, &t, 1))
        write_depth(dir, &t);
    write_gpi(dir);
    return 0;
}
