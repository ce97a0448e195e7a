/*
 * datafile.c: opening output files and stopping on errors, for the data
 * writers (datafile.h). Given code.
 */
#include "datafile.h"
#include "kit.h"

#include <stdlib.h>

FILE *data_open(const char *prog, const char *dir, const char *name)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        fprintf(stderr, "%s: the path %s/%s is too long\n", prog, dir, name);
        exit(1);
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s\n", prog, path);
        exit(1);
    }
    return f;
}

void data_close(const char *prog, FILE *f)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "%s: cannot write a data file\n", prog);
        exit(1);
    }
}

void data_check(const char *prog, int status, const char *what)
{
    if (status != KIT_OK) {
        fprintf(stderr, "%s: %s failed: %s\n", prog, what,
                kit_strerror(status));
        exit(1);
    }
}

void data_write_map(const char *prog, const char *dir, const char *name,
                    const float *w, int T)
{
    FILE *f = data_open(prog, dir, name);
    for (int i = 0; i < T; i++) {
        for (int j = 0; j < T; j++)
            fprintf(f, "%d %d %.6f\n", i, j, w[i * T + j]);
        fprintf(f, "\n");
    }
    data_close(prog, f);
}

void data_write_tics(const char *prog, const char *dir, const char *name,
                     const char *const *labels, int n, int rotate)
{
    FILE *f = data_open(prog, dir, name);
    for (int axis = 0; axis < 2; axis++) {
        fprintf(f, "set %ctics (", axis ? 'y' : 'x');
        for (int t = 0; t < n; t++)
            fprintf(f, "%s\"%s\" %d", t ? ", " : "", labels[t], t);
        if (axis)
            fprintf(f, ")\n");
        else
            fprintf(f, ") rotate by %d right\n", rotate);
    }
    data_close(prog, f);
}
