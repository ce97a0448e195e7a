/*
 * rng.c: splitmix64, a tiny generator with good statistics (rng.h).
 * Given code.
 */
#include "rng.h"

#include <math.h>

void rng_seed(struct rng *r, unsigned long long seed)
{
    r->state = seed;
}

unsigned long long rng_next(struct rng *r)
{
    unsigned long long z = (r->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double rng_uniform(struct rng *r)
{
    /* the top 53 bits, as a double in [0, 1) */
    return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

float rng_range(struct rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)rng_uniform(r);
}

double rng_normal(struct rng *r)
{
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

int rng_int(struct rng *r, int n)
{
    return (int)(rng_uniform(r) * n);
}

void rng_fill(struct rng *r, float *x, int n, float lo, float hi)
{
    for (int i = 0; i < n; i++)
        x[i] = rng_range(r, lo, hi);
}
