/*
 * sizes_tsv.h: the reader of sizes.tsv, the table of chapter 8's sizes
 * (a row per size: its width, depth, context, batch and token budget),
 * shared by the driver (sizes.c) and the book's tables
 * (tools/runs/plotdata/ch8_tables.c). Include runner.h first.
 */
#ifndef SIZES_TSV_H
#define SIZES_TSV_H

#include <stdio.h>
#include <string.h>

/* the header row, the columns in their order */
#define SIZES_TSV_HEADER "size\td_model\tlayers\tcontext\tbatch\ttokens"
#define SIZES_TSV_MAX    16 /* rows */

struct size_row {
    char name[32];
    int C, L, T, B; /* d_model, blocks, context, windows per step */
    int tokens;     /* per network */
};

/* Every row of the table at path into rows (at most SIZES_TSV_MAX):
 * their count, or 0 with why (n_why chars) saying what is wrong and on
 * which line. Lines starting with '#' are comments; every value is a
 * whole number of at least 1, every name different. */
static inline int sizes_tsv_read(const char *path, struct size_row *rows,
                                 char *why, size_t n_why)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, n_why, "%s: cannot read it", path);
        return 0;
    }
    char line[512];
    int n = 0, lineno = 0, header = 0, ok = 1;
    while (ok && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#')
            continue;
        if (!header) {
            header = 1;
            if (strcmp(line, SIZES_TSV_HEADER) != 0) {
                snprintf(why, n_why,
                         "%s, line %d: the header is not the columns "
                         "size, d_model, layers, context, batch, tokens "
                         "(one tab between them)",
                         path, lineno);
                ok = 0;
            }
            continue;
        }
        if (n == SIZES_TSV_MAX) {
            snprintf(why, n_why, "%s: more than %d sizes", path, SIZES_TSV_MAX);
            ok = 0;
            break;
        }
        for (char *c = line; *c; c++) /* run_read_row() reads commas */
            *c = *c == '\t' ? ',' : *c == ',' ? ';' : *c;
        struct size_row *z = &rows[n];
        char err[200];
        if (!run_read_row(err, sizeof err, line, "siiiii", z->name,
                          (int)sizeof z->name, &z->C, &z->L, &z->T, &z->B,
                          &z->tokens)) {
            snprintf(why, n_why, "%s, line %d: %s", path, lineno, err);
            ok = 0;
        } else if (z->C < 1 || z->L < 1 || z->T < 1 || z->B < 1 ||
                   z->tokens < 1) {
            snprintf(why, n_why, "%s, line %d: a size below 1", path, lineno);
            ok = 0;
        }
        for (int k = 0; ok && k < n; k++)
            if (strcmp(rows[k].name, z->name) == 0) {
                snprintf(why, n_why, "%s, line %d: size '%s' twice", path,
                         lineno, z->name);
                ok = 0;
            }
        n += ok;
    }
    fclose(f);
    if (ok && n == 0) {
        snprintf(why, n_why, "%s: no sizes", path);
        ok = 0;
    }
    return ok ? n : 0;
}

/* the row named name, or NULL */
static inline const struct size_row *sizes_tsv_find(const struct size_row *rows,
                                                    int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (strcmp(rows[k].name, name) == 0)
            return &rows[k];
    return NULL;
}

#endif
