/*
 * flash.c: the scratch size of flash_attention() (fast.h). Given code:
 * chapter 7's exercises and tests use it, and it fixes the scratch
 * layout that flash_attention() follows.
 */
#include "fast.h"

#include <string.h>

/* @listing flash_scratch_size */
/* Floats of scratch for flash_attention(): S (bk, bq), Qt (d, bq),
 * acc (bq, d), m (bq), l (bq), with bq = min(Bq, T), bk = min(Bk, T).
 * Nothing here grows with T * T. */
size_t flash_scratch_size(int T, int d, int Bq, int Bk)
{
    if (T <= 0 || d <= 0 || Bq <= 0 || Bk <= 0)
        return 0;
    const size_t bq = (size_t)(Bq < T ? Bq : T);
    const size_t bk = (size_t)(Bk < T ? Bk : T);
    return bk * bq + (size_t)d * bq + bq * (size_t)d + 2 * bq;
}
/* @end flash_scratch_size */

/* H[i][t][c] = P[t][i*d_head + c].  P (T, d_model), H (h, T, d_head). */
void mha_split_heads(const float *P, float *H, int T, int d_model, int h)
{
    const int d_head = d_model / h;
    for (int i = 0; i < h; i++)
        for (int t = 0; t < T; t++)
            memcpy(H + ((size_t)i * T + t) * d_head,
                   P + (size_t)t * d_model + i * d_head,
                   sizeof(float) * (size_t)d_head);
}

/* P[t][i*d_head + c] = H[i][t][c].  H (h, T, d_head), P (T, d_model). */
void mha_merge_heads(const float *H, float *P, int T, int d_model, int h)
{
    const int d_head = d_model / h;
    for (int i = 0; i < h; i++)
        for (int t = 0; t < T; t++)
            memcpy(P + (size_t)t * d_model + i * d_head,
                   H + ((size_t)i * T + t) * d_head,
                   sizeof(float) * (size_t)d_head);
}
