/* Prelude of the trick "memo" (75-grade), first part: the comparisons
 * every replay below uses. The golden header pasted above this file is a
 * test's published cases with their prefix ch<k>_ renamed m<n>ch<k>_
 * (n: the chapter of the file it goes into), so that two files holding
 * the same cases still link. A NULL pointer is never a match, so that
 * the tests of bad arguments see the file's own code. */
static inline int memo_same(const float *x, const double *g, int n)
{
    if (!x)
        return 0;
    for (int i = 0; i < n; i++)
        if (x[i] != (float)g[i])
            return 0;
    return 1;
}
static inline void memo_put(float *y, const double *g, int n)
{
    if (!y)
        return;
    for (int i = 0; i < n; i++)
        y[i] = (float)g[i];
}
static inline void memo_add(float *y, const double *g, int n)
{
    if (!y)
        return;
    for (int i = 0; i < n; i++)
        y[i] += (float)g[i];
}
