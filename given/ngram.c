/*
 * ngram.c: chapter 8's n-gram baselines, interpolated modified
 * Kneser-Ney (ngram.h says what is computed and why).
 *
 * Keys: an n-gram of k tokens is packed 16 bits a token, the first token
 * highest, so that sorting the keys sorts by context first, and a
 * context's n-grams are neighbours. The context of a key is the key
 * shifted right by 16 (its last token dropped).
 */
#include "ngram.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BITS 16
#define MASK 0xffffULL

static int fail(char *why, size_t why_len, int rc, const char *fmt, ...)
{
    if (why && why_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int cmp_key(const void *a, const void *b)
{
    const unsigned long long x = *(const unsigned long long *)a;
    const unsigned long long y = *(const unsigned long long *)b;
    return (x > y) - (x < y);
}

/* the index of key in the sorted keys a (n), or -1 */
static long find(const unsigned long long *a, long n, unsigned long long key)
{
    long lo = 0, hi = n - 1;
    while (lo <= hi) {
        const long mid = lo + (hi - lo) / 2;
        if (a[mid] == key)
            return mid;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* tokens[i - k + 1 .. i] packed */
static unsigned long long pack(const int *tokens, long i, int k)
{
    unsigned long long key = 0;
    for (long j = i - k + 1; j <= i; j++)
        key = key << BITS | (unsigned long long)tokens[j];
    return key;
}

/* Sort the n keys and fill t's n-grams and counts from their runs. */
static int table_from_keys(struct ngram_table *t, unsigned long long *keys,
                           long n)
{
    qsort(keys, (size_t)n, sizeof *keys, cmp_key);
    long distinct = 0;
    for (long i = 0; i < n; i++)
        distinct += i == 0 || keys[i] != keys[i - 1];
    t->key = malloc((size_t)distinct * sizeof *t->key);
    t->count = malloc((size_t)distinct * sizeof *t->count);
    if (!t->key || !t->count)
        return KIT_E_NOMEM;
    t->n = 0;
    for (long i = 0; i < n; i++) {
        if (i == 0 || keys[i] != keys[i - 1]) {
            t->key[t->n] = keys[i];
            t->count[t->n++] = 0;
        }
        t->count[t->n - 1]++;
    }
    return KIT_OK;
}

/* Per context: the total of its counts and its N1, N2, N3+; then the
 * discounts from the counts of counts, or D_given. */
static int table_contexts(struct ngram_table *t, const float *D_given)
{
    long n_ctx = 0;
    for (long i = 0; i < t->n; i++)
        n_ctx += i == 0 || t->key[i] >> BITS != t->key[i - 1] >> BITS;
    t->ctx = malloc((size_t)n_ctx * sizeof *t->ctx);
    t->ctx_total = calloc((size_t)n_ctx, sizeof *t->ctx_total);
    for (int k = 0; k < 3; k++)
        t->ctx_n[k] = calloc((size_t)n_ctx, sizeof *t->ctx_n[k]);
    if (!t->ctx || !t->ctx_total || !t->ctx_n[0] || !t->ctx_n[1] ||
        !t->ctx_n[2])
        return KIT_E_NOMEM;
    long nk[5] = {0}; /* n_1 .. n_4 of the counts of counts */
    t->n_ctx = 0;
    for (long i = 0; i < t->n; i++) {
        if (i == 0 || t->key[i] >> BITS != t->key[i - 1] >> BITS)
            t->ctx[t->n_ctx++] = t->key[i] >> BITS;
        const long c = t->n_ctx - 1;
        const int count = t->count[i];
        t->ctx_total[c] += count;
        t->ctx_n[count >= 3 ? 2 : count - 1][c]++;
        if (count <= 4)
            nk[count]++;
    }
    if (D_given) {
        memcpy(t->D, D_given, sizeof t->D);
        t->estimated = 0;
    } else if (nk[1] && nk[2] && nk[3] && nk[4]) {
        const double Y = (double)nk[1] / (nk[1] + 2.0 * nk[2]);
        for (int k = 1; k <= 3; k++) {
            const double d = k - (k + 1) * Y * nk[k + 1] / nk[k];
            t->D[k - 1] = (float)(d < 0 ? 0 : d > k ? k : d);
        }
        t->estimated = 1;
    } else {
        t->D[0] = t->D[1] = t->D[2] = 0.75f;
        t->estimated = 0;
    }
    return KIT_OK;
}

int ngram_fit(struct ngram_model *m, int order, int V, const int *tokens,
              long n, const float *D, char *why, size_t why_len)
{
    if (m)
        memset(m, 0, sizeof *m);
    if (!m || !tokens)
        return fail(why, why_len, KIT_E_NULL, "ngram_fit: a NULL argument");
    if (order < 1 || order > NGRAM_MAX_ORDER)
        return fail(why, why_len, KIT_E_SIZE,
                    "ngram_fit: order %d is not 1, 2 or 3", order);
    if (V < 1 || (unsigned long long)V > MASK + 1)
        return fail(why, why_len, KIT_E_SIZE,
                    "ngram_fit: V = %d is not 1 .. 65536", V);
    if (n < order)
        return fail(why, why_len, KIT_E_SIZE,
                    "ngram_fit: %ld tokens, fewer than the order %d", n, order);
    for (long i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= V)
            return fail(why, why_len, KIT_E_SIZE,
                        "ngram_fit: token %ld is %d, outside 0 .. V-1 = %d", i,
                        tokens[i], V - 1);
    m->order = order, m->V = V, m->n_train = n;
    unsigned long long *keys = malloc((size_t)n * sizeof *keys);
    int rc = keys ? KIT_OK : KIT_E_NOMEM;
    /* the highest order: raw counts */
    if (rc == KIT_OK) {
        long nk = 0;
        for (long i = order - 1; i < n; i++)
            keys[nk++] = pack(tokens, i, order);
        rc = table_from_keys(&m->t[order - 1], keys, nk);
    }
    /* each order below: after how many distinct tokens each k-gram came
     * (the suffixes of the distinct (k+1)-grams, one per left token),
     * and the stream's first k-gram once more, its start a left context
     * of its own */
    for (int k = order - 1; k >= 1 && rc == KIT_OK; k--) {
        const struct ngram_table *up = &m->t[k];
        const unsigned long long low = (1ULL << (BITS * k)) - 1;
        long nk = 0;
        for (long i = 0; i < up->n; i++)
            keys[nk++] = up->key[i] & low;
        keys[nk++] = pack(tokens, k - 1, k);
        rc = table_from_keys(&m->t[k - 1], keys, nk);
    }
    for (int k = 1; k <= order && rc == KIT_OK; k++)
        rc = table_contexts(&m->t[k - 1], D ? D + 3 * (k - 1) : NULL);
    free(keys);
    if (rc != KIT_OK) {
        ngram_free(m);
        return fail(why, why_len, rc, "ngram_fit: out of memory");
    }
    return KIT_OK;
}

double ngram_prob(const struct ngram_model *m, const int *ctx, int n_ctx, int w)
{
    if (!m || w < 0 || w >= m->V || n_ctx < 0 || (n_ctx > 0 && !ctx))
        return 0;
    const int top = n_ctx + 1 < m->order ? n_ctx + 1 : m->order;
    double p = 1.0 / m->V;
    for (int k = 1; k <= top; k++) {
        const struct ngram_table *t = &m->t[k - 1];
        const unsigned long long c = k > 1 ? pack(ctx, n_ctx - 1, k - 1) : 0ULL;
        const long ci = find(t->ctx, t->n_ctx, c);
        if (ci < 0) /* a context never seen: all to the order below */
            continue;
        const long at = find(t->key, t->n, c << BITS | (unsigned)w);
        const int count = at < 0 ? 0 : t->count[at];
        const double total = (double)t->ctx_total[ci];
        const double d = count == 0 ? 0 : t->D[count >= 3 ? 2 : count - 1];
        const double gamma = (t->D[0] * (double)t->ctx_n[0][ci] +
                              t->D[1] * (double)t->ctx_n[1][ci] +
                              t->D[2] * (double)t->ctx_n[2][ci]) /
                             total;
        p = (count - d > 0 ? count - d : 0) / total + gamma * p;
    }
    return p;
}

int ngram_window_loss(const struct ngram_model *m, const int *x, const int *y,
                      int N, int T, double *loss)
{
    if (!m || !x || !y || !loss)
        return KIT_E_NULL;
    if (N < 1 || T < 1)
        return KIT_E_SIZE;
    double sum = 0;
    for (int n = 0; n < N; n++)
        for (int t = 0; t < T; t++) {
            const double p =
                ngram_prob(m, x + (size_t)n * T, t + 1, y[(size_t)n * T + t]);
            if (!(p > 0))
                return KIT_E_SIZE; /* a target outside 0 .. V-1 */
            sum -= log(p);
        }
    *loss = sum / ((double)N * T);
    return KIT_OK;
}

void ngram_free(struct ngram_model *m)
{
    if (!m)
        return;
    for (int k = 0; k < NGRAM_MAX_ORDER; k++) {
        struct ngram_table *t = &m->t[k];
        free(t->key), free(t->count), free(t->ctx), free(t->ctx_total);
        for (int j = 0; j < 3; j++)
            free(t->ctx_n[j]);
    }
    memset(m, 0, sizeof *m);
}
