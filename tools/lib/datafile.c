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
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s\n", prog, path);
        exit(1);
    }
    return f;
}

void data_check(const char *prog, int status, const char *what)
{
    if (status != KIT_OK) {
        fprintf(stderr, "%s: %s failed: %s\n", prog, what,
                kit_strerror(status));
        exit(1);
    }
}
