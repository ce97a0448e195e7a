/*
 * bench/libm_exp.h: forced in front of every file (-include) of the
 * benchmark's control build, which measures what fast_expf() buys:
 * fast.h is read first, as usual, and every later call of fast_expf()
 * in the code becomes a call of the C library's expf(), which the
 * compiler cannot turn into vector code. Nothing else changes.
 */
#ifndef BENCH_LIBM_EXP_H
#define BENCH_LIBM_EXP_H
#include "fast.h"

#include <math.h>

#define fast_expf(x) expf(x)
#endif
