/*
 * datafile.h: what the data writers (tools/runs/plotdata/, tools/runs/experiment/)
 * share. They run the reference code and write the files the figures and
 * the book read; any failure stops them with a message, so a broken run
 * can never leave a figure drawn from stale or half-written data.
 */
#ifndef DATAFILE_H
#define DATAFILE_H

#include <stdio.h>

/* Open DIR/NAME for writing. On failure print "PROG: cannot write PATH"
 * and exit(1). Never returns NULL. */
FILE *data_open(const char *prog, const char *dir, const char *name);

/* Close f; if anything written to it was lost (a full disk, say), print
 * "PROG: cannot write a data file" and exit(1). */
void data_close(const char *prog, FILE *f);

/* Write DIR/NAME: a (T, T) weight map w as "row col weight" lines, a
 * blank line after each row, as gnuplot's `with image` reads it. */
void data_write_map(const char *prog, const char *dir, const char *name,
                    const float *w, int T);

/* Write DIR/NAME: gnuplot commands that label positions 0 .. n-1 of both
 * axes with labels[0 .. n-1], the x labels turned by `rotate` degrees. */
void data_write_tics(const char *prog, const char *dir, const char *name,
                     const char *const *labels, int n, int rotate);

/* Unless status is KIT_OK, print "PROG: WHAT failed: <reason>" and
 * exit(1). */
void data_check(const char *prog, int status, const char *what);

#endif
