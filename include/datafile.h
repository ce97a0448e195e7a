/*
 * datafile.h: what the data writers (tools/plotdata/, tools/experiment/)
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

/* Unless status is KIT_OK, print "PROG: WHAT failed: <reason>" and
 * exit(1). */
void data_check(const char *prog, int status, const char *what);

#endif
