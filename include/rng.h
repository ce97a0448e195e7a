/*
 * rng.h: a small deterministic random number generator (splitmix64).
 * The same seed gives the same numbers on every machine, so tests, plots
 * and experiments can be repeated exactly.
 */
#ifndef RNG_H
#define RNG_H

struct rng {
    unsigned long long state;
};

/* Start a generator from a seed. */
void rng_seed(struct rng *r, unsigned long long seed);

/* Next 64 random bits. */
unsigned long long rng_next(struct rng *r);

/* Uniform in [0, 1). */
double rng_uniform(struct rng *r);

/* Uniform in [lo, hi). */
float rng_range(struct rng *r, float lo, float hi);

/* Standard normal (Box-Muller). */
double rng_normal(struct rng *r);

/* Uniform integer in 0 .. n-1, n > 0. */
int rng_int(struct rng *r, int n);

/* Fill x (n) uniform in [lo, hi). */
void rng_fill(struct rng *r, float *x, int n, float lo, float hi);

#endif
