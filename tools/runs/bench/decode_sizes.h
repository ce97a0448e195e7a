/*
 * bench/decode_sizes.h: the layer the decode benchmark times
 * (tools/runs/bench/decode_speed.c), shared with tools/runs/plotdata/ch6.c,
 * which writes the multiply-adds per token of that layer for the book:
 * counts, the same on every machine, unlike the benchmark's timings.
 */
#ifndef DECODE_SIZES_H
#define DECODE_SIZES_H

enum { DECODE_BENCH_D = 64, DECODE_BENCH_H = 4 }; /* d_model, heads */

#endif
