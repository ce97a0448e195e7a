/*
 * links_lm.c: chapter 8's relations from a real parser's links
 * (links_lm.h): the links read and checked against the corpus, their
 * cases on windows, and the cheap explanations of a head that finds
 * them. Not an exercise.
 *
 * Dimension letters (see links_lm.h): N = windows, T = tokens per
 * window, n_links = links between two tokens, n_cases = cases.
 */
#define _POSIX_C_SOURCE 200809L

#include "links_lm.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* Each relation: its key, its name, the family of its link, and for a
 * path of two links the family of the second, which joins the first's
 * left token (a verb) as its own right token. */
static const struct {
    const char *key, *name, *fam, *fam2;
} relations[LINKS_N_RELATIONS] = {
    [LINKS_REL_D] = {"D", "noun -> determiner", "D", NULL},
    [LINKS_REL_A] = {"A", "noun -> adjective", "A", NULL},
    [LINKS_REL_S] = {"S", "verb -> subject", "S", NULL},
    [LINKS_REL_O] = {"O", "object -> verb", "O", NULL},
    [LINKS_REL_J] = {"J", "object -> preposition", "J", NULL},
    [LINKS_REL_OS] = {"OS", "object -> its verb's subject", "O", "S"},
    [LINKS_REL_MV] = {"MV", "modifier -> verb", "MV", NULL},
    [LINKS_REL_M] = {"M", "modifier -> noun", "M", NULL},
    [LINKS_REL_X] = {"X", "punctuation", "X", NULL},
    [LINKS_REL_SJ] = {"SJ", "conjoined nouns", "SJ", NULL},
    [LINKS_REL_I] = {"I", "infinitive -> modal or to", "I", NULL},
    [LINKS_REL_AN] = {"AN", "noun -> noun modifier", "AN", NULL},
    [LINKS_REL_P] = {"P", "predicate -> verb", "P", NULL},
    [LINKS_REL_CO] = {"CO", "subject -> opener", "CO", NULL},
    [LINKS_REL_CV] = {"CV", "verb -> its clause's conjunction", "CV", NULL},
    [LINKS_REL_C] = {"C", "subject -> conjunction", "C", NULL},
    [LINKS_REL_VJ] = {"VJ", "conjoined verbs", "VJ", NULL},
    [LINKS_REL_G] = {"G", "proper noun -> proper noun", "G", NULL},
    [LINKS_REL_E] = {"E", "verb -> adverb", "E", NULL},
    [LINKS_REL_W] = {"W", "clause head -> word before", "W", NULL},
    [LINKS_REL_R] = {"R", "relative pronoun -> noun", "R", NULL},
    [LINKS_REL_B] = {"B", "verb -> noun it relates to", "B", NULL},
    [LINKS_REL_ZZZ] = {"ZZZ", "quotation mark -> word before", "ZZZ", NULL},
    [LINKS_REL_WV] = {"WV", "verb -> word opening its clause", "WV", NULL},
    [LINKS_REL_IDIOM] = {"_", "within an idiom", "_", NULL},
    [LINKS_REL_MX] = {"MX", "apposition -> noun", "MX", NULL},
};

const char *links_relation_name(int rel)
{
    return rel >= 0 && rel < LINKS_N_RELATIONS ? relations[rel].name : "?";
}

const char *links_relation_key(int rel)
{
    return rel >= 0 && rel < LINKS_N_RELATIONS ? relations[rel].key : "?";
}

void links_init(struct links *lk)
{
    if (lk)
        memset(lk, 0, sizeof *lk);
}

void links_free(struct links *lk)
{
    if (!lk)
        return;
    free(lk->left), free(lk->right), free(lk->family);
    links_init(lk);
}

/* ---------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------- */

/* The label's family into fam: its leading capitals, "_" for an idiom's
 * link (as tools/runs/links/links.c's family_of()). */
static void family_of(const char *label, char *fam)
{
    size_t i = 0;
    if (label[0] == '_') {
        strcpy(fam, "_");
        return;
    }
    while (i + 1 < LINKS_FAMILY_LEN && isupper((unsigned char)label[i])) {
        fam[i] = label[i];
        i++;
    }
    fam[i] = '\0';
}

/* A token index: -1 or 0 .. n - 1; 0 when it is not one. */
static int read_index(const char *s, int n, int *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < -1 || v >= n)
        return 0;
    *out = (int)v;
    return 1;
}

/* A link being sorted. */
struct row {
    int left, right;
    char family[LINKS_FAMILY_LEN];
};

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->right != y->right)
        return x->right < y->right ? -1 : 1;
    if (x->left != y->left)
        return x->left < y->left ? -1 : 1;
    return strcmp(x->family, y->family);
}

static int fail(struct links *lk, char *err, int code, const char *path,
                long line, const char *why)
{
    if (err)
        snprintf(err, LINKS_ERR_LEN, "%s:%ld: %s", path, line, why);
    links_free(lk);
    return code;
}

int links_read(struct links *lk, const char *path, const struct corpus_data *d,
               char *err)
{
    if (!lk || !path || !d)
        return KIT_E_NULL;
    links_init(lk);
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(lk, err, KIT_E_INPUT, path, 0,
                    "cannot be read (make build/ch8/links.tsv writes it)");
    int cap = 0, t = -1, rc = KIT_OK;
    char line[512], why[256] = "";
    long ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') {
            snprintf(why, sizeof why, "a line that is too long or unended");
            rc = KIT_E_INPUT;
            break;
        }
        line[len - 1] = '\0';
        if (ln == 1) {
            if (strcmp(line, "split\ttext\tsentence\tleft\tright\tlabel") !=
                0) {
                snprintf(why, sizeof why,
                         "the header is not split, text, sentence, left, "
                         "right, label");
                rc = KIT_E_INPUT;
                break;
            }
            continue;
        }
        char *col[6], *save = NULL;
        int nc = 0;
        for (char *s = strtok_r(line, "\t", &save); s && nc < 7;
             s = strtok_r(NULL, "\t", &save))
            if (nc < 6)
                col[nc++] = s;
            else
                nc++;
        if (nc != 6) {
            snprintf(why, sizeof why, "%d columns, not 6", nc);
            rc = KIT_E_INPUT;
            break;
        }
        if (t < 0 || strcmp(d->texts[t].id, col[1]) != 0) {
            t = -1;
            for (int k = 0; k < d->n_texts && t < 0; k++)
                if (strcmp(d->texts[k].id, col[1]) == 0)
                    t = k;
        }
        const int want = strcmp(col[0], "valid") == 0  ? SPLIT_VALID
                         : strcmp(col[0], "test") == 0 ? SPLIT_TEST
                                                       : -1;
        if (t < 0 || want < 0 || d->texts[t].split != want) {
            snprintf(why, sizeof why,
                     "the text %.8s is not a %.8s text of the corpus", col[1],
                     col[0]);
            rc = KIT_E_INPUT;
            break;
        }
        int l = 0, r = 0;
        const int n_tok = d->texts[t].n_tokens;
        if (!read_index(col[3], n_tok, &l) || !read_index(col[4], n_tok, &r) ||
            (l >= 0 && r >= 0 && l > r)) {
            snprintf(why, sizeof why,
                     "the tokens %.12s, %.12s are not -1 or within %s's %d "
                     "tokens, left <= right",
                     col[3], col[4], col[1], n_tok);
            rc = KIT_E_INPUT;
            break;
        }
        if (l < 0 || r < 0 || l == r)
            continue; /* a wall, or the two parts of one token */
        if (lk->n == cap) {
            cap = cap ? 2 * cap : 4096;
            int *nl = realloc(lk->left, (size_t)cap * sizeof *nl);
            if (nl)
                lk->left = nl;
            int *nr = realloc(lk->right, (size_t)cap * sizeof *nr);
            if (nr)
                lk->right = nr;
            char(*nf)[LINKS_FAMILY_LEN] =
                realloc(lk->family, (size_t)cap * sizeof *nf);
            if (nf)
                lk->family = nf;
            if (!nl || !nr || !nf) {
                rc = KIT_E_NOMEM;
                snprintf(why, sizeof why, "out of memory");
                break;
            }
        }
        lk->left[lk->n] = d->texts[t].first + l;
        lk->right[lk->n] = d->texts[t].first + r;
        family_of(col[5], lk->family[lk->n]);
        if (lk->family[lk->n][0] == '\0') {
            snprintf(why, sizeof why, "the label %.20s has no family", col[5]);
            rc = KIT_E_INPUT;
            break;
        }
        lk->n++;
    }
    if (rc == KIT_OK && ferror(f))
        snprintf(why, sizeof why, "a read error"), rc = KIT_E_INPUT;
    if (rc == KIT_OK && ln == 0)
        snprintf(why, sizeof why, "an empty file"), rc = KIT_E_INPUT;
    fclose(f);
    if (rc != KIT_OK)
        return fail(lk, err, rc, path, ln, why);
    /* sort by right, left, family */
    struct row *rows = malloc((size_t)(lk->n > 0 ? lk->n : 1) * sizeof *rows);
    if (!rows)
        return fail(lk, err, KIT_E_NOMEM, path, ln, "out of memory");
    for (int i = 0; i < lk->n; i++) {
        rows[i].left = lk->left[i], rows[i].right = lk->right[i];
        memcpy(rows[i].family, lk->family[i], LINKS_FAMILY_LEN);
    }
    qsort(rows, (size_t)lk->n, sizeof *rows, cmp_row);
    for (int i = 0; i < lk->n; i++) {
        lk->left[i] = rows[i].left, lk->right[i] = rows[i].right;
        memcpy(lk->family[i], rows[i].family, LINKS_FAMILY_LEN);
    }
    free(rows);
    return KIT_OK;
}

/* ---------------------------------------------------------------------
 * Cases on windows
 * ------------------------------------------------------------------- */

/* The first link whose right token is at least tok. */
static int first_right(const struct links *lk, long tok)
{
    int lo = 0, hi = lk->n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (lk->right[mid] < tok)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A growing list of pairs (word, related), in-window positions. */
struct pairs {
    int n, cap;
    int *p; /* (2 * cap) */
};

static int pairs_add(struct pairs *ps, int w, int r)
{
    if (ps->n == ps->cap) {
        const int cap = ps->cap ? 2 * ps->cap : 256;
        int *np = realloc(ps->p, (size_t)cap * 2 * sizeof *np);
        if (!np)
            return KIT_E_NOMEM;
        ps->p = np, ps->cap = cap;
    }
    ps->p[2 * ps->n] = w, ps->p[2 * ps->n + 1] = r;
    ps->n++;
    return KIT_OK;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The distinct pairs of one family (and, for a path, the second
 * family's links into the first's left token) within window [a, a+T),
 * sorted, into ps. */
static int window_pairs(const struct links *lk, const char *fam,
                        const char *fam2, long a, int T, struct pairs *ps)
{
    ps->n = 0;
    for (int i = first_right(lk, a); i < lk->n && lk->right[i] < a + T; i++) {
        if (lk->left[i] < a || strcmp(lk->family[i], fam) != 0)
            continue;
        if (!fam2) {
            if (pairs_add(ps, (int)(lk->right[i] - a),
                          (int)(lk->left[i] - a)) != KIT_OK)
                return KIT_E_NOMEM;
            continue;
        }
        const int v = lk->left[i]; /* the verb: the second link's right */
        for (int j = first_right(lk, v); j < lk->n && lk->right[j] == v; j++)
            if (lk->left[j] >= a && strcmp(lk->family[j], fam2) == 0 &&
                pairs_add(ps, (int)(lk->right[i] - a),
                          (int)(lk->left[j] - a)) != KIT_OK)
                return KIT_E_NOMEM;
    }
    qsort(ps->p, (size_t)ps->n, 2 * sizeof *ps->p, cmp_pair);
    int m = 0;
    for (int c = 0; c < ps->n; c++)
        if (m == 0 || ps->p[2 * c] != ps->p[2 * (m - 1)] ||
            ps->p[2 * c + 1] != ps->p[2 * (m - 1) + 1]) {
            ps->p[2 * m] = ps->p[2 * c], ps->p[2 * m + 1] = ps->p[2 * c + 1];
            m++;
        }
    ps->n = m;
    return KIT_OK;
}

static int cases_of(const struct links *lk, const char *fam, const char *fam2,
                    const long *first, int N, int T, int *word, int *related,
                    int max_cases)
{
    struct pairs ps = {0, 0, NULL};
    int n = 0;
    for (int w = 0; w < N; w++) {
        if (window_pairs(lk, fam, fam2, first[w], T, &ps) != KIT_OK) {
            free(ps.p);
            return KIT_E_NOMEM;
        }
        for (int c = 0; c < ps.n; c++, n++)
            if (n < max_cases)
                word[n] = w * T + ps.p[2 * c],
                related[n] = w * T + ps.p[2 * c + 1];
    }
    free(ps.p);
    return n;
}

int links_family_cases(const struct links *lk, const char *family,
                       const long *first, int N, int T)
{
    if (!lk || !family || !first)
        return KIT_E_NULL;
    if (N <= 0 || T <= 0)
        return KIT_E_SIZE;
    return cases_of(lk, family, NULL, first, N, T, NULL, NULL, 0);
}

int links_relation_cases(const struct links *lk, int rel, const long *first,
                         int N, int T, int *word, int *related, int max_cases)
{
    if (!lk || !first || (max_cases > 0 && (!word || !related)))
        return KIT_E_NULL;
    if (N <= 0 || T <= 0 || max_cases < 0 || rel < 0 ||
        rel >= LINKS_N_RELATIONS)
        return KIT_E_SIZE;
    return cases_of(lk, relations[rel].fam, relations[rel].fam2, first, N, T,
                    word, related, max_cases);
}

/* ---------------------------------------------------------------------
 * The cheap explanations
 * ------------------------------------------------------------------- */

int links_baselines(const int *word, const int *related, int n_cases,
                    const unsigned char *x_class, int N, int T,
                    unsigned char *hard, struct links_baseline *b)
{
    if (!b || (n_cases > 0 && (!word || !related || !x_class)))
        return KIT_E_NULL;
    if (N <= 0 || T <= 0 || n_cases < 0)
        return KIT_E_SIZE;
    for (int c = 0; c < n_cases; c++)
        if (word[c] < 0 || word[c] >= N * T || related[c] < 0 ||
            related[c] > word[c] || related[c] / T != word[c] / T)
            return KIT_E_SIZE;
    int *count = calloc((size_t)T, sizeof *count);
    if (!count)
        return KIT_E_NOMEM;
    for (int c = 0; c < n_cases; c++)
        count[word[c] - related[c]]++;
    int k = 0;
    for (int j = 1; j < T; j++)
        if (count[j] > count[k])
            k = j;
    long class_hit = 0;
    int n_hard = 0;
    for (int c = 0; c < n_cases; c++) {
        const int start = word[c] / T * T, cls = x_class[related[c]];
        int near = -1;
        for (int j = word[c] - 1; j >= start && near < 0; j--)
            if (x_class[j] == cls)
                near = j;
        const int by_class = near == related[c];
        const int is_hard = !by_class && word[c] - related[c] != k;
        class_hit += by_class;
        n_hard += is_hard;
        if (hard)
            hard[c] = (unsigned char)is_hard;
    }
    b->n_cases = n_cases;
    b->offset_k = k;
    b->offset_base = n_cases ? (float)count[k] / (float)n_cases : 0.0f;
    b->class_base = n_cases ? (float)class_hit / (float)n_cases : 0.0f;
    b->n_hard = n_hard;
    free(count);
    return KIT_OK;
}

/* Binomial(n, p)'s distribution function: cdf (n + 1), cdf[k] = P(X <= k),
 * from its terms in logs; the last is 1. */
static void binomial_cdf(int n, double p, double *cdf)
{
    double s = 0;
    for (int k = 0; k <= n; k++) {
        double term;
        if (p <= 0)
            term = k == 0;
        else if (p >= 1)
            term = k == n;
        else
            term = exp(lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) +
                       k * log(p) + (n - k) * log1p(-p));
        s += term;
        cdf[k] = s;
    }
    cdf[n] = 1.0;
}

/* The smallest k with u < cdf[k]. */
static int binomial_draw(const double *cdf, int n, double u)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (u < cdf[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* mean and 95th percentile of v (n), which it sorts */
static void mean_p95(float *v, int n, float *mean, float *p95)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    int at = (int)ceil(0.95 * n) - 1;
    *mean = (float)(s / n);
    *p95 = v[at < 0 ? 0 : at];
}

int links_best_of_null(const int *n_cases, const float *p, int n_rel,
                       int n_heads, int draws, unsigned long long seed,
                       float *mean, float *p95, float *all_mean, float *all_p95)
{
    if (!n_cases || !p || !mean || !p95 || !all_mean || !all_p95)
        return KIT_E_NULL;
    if (n_rel <= 0 || n_heads <= 0 || draws <= 0)
        return KIT_E_SIZE;
    long total = 0;
    for (int r = 0; r < n_rel; r++) {
        if (n_cases[r] < 0 || !(p[r] >= 0 && p[r] <= 1))
            return KIT_E_SIZE;
        total += n_cases[r] + 1;
    }
    double *cdf = malloc((size_t)total * sizeof *cdf);
    long *at = malloc((size_t)n_rel * sizeof *at);
    float *best = malloc((size_t)draws * (size_t)(n_rel + 1) * sizeof *best);
    if (!cdf || !at || !best) {
        free(cdf), free(at), free(best);
        return KIT_E_NOMEM;
    }
    long o = 0;
    for (int r = 0; r < n_rel; r++) {
        at[r] = o;
        binomial_cdf(n_cases[r], p[r], cdf + o);
        o += n_cases[r] + 1;
    }
    struct rng g;
    rng_seed(&g, seed);
    /* best[r * draws + t]: relation r's best head in draw t; row n_rel:
     * the best over all */
    for (int t = 0; t < draws; t++) {
        float all = -INFINITY;
        for (int r = 0; r < n_rel; r++) {
            float m = -INFINITY;
            for (int i = 0; i < n_heads; i++) {
                const double u = rng_uniform(&g);
                const int x = binomial_draw(cdf + at[r], n_cases[r], u);
                const float s =
                    n_cases[r] ? (float)x / (float)n_cases[r] - p[r] : 0.0f;
                m = s > m ? s : m;
            }
            best[(size_t)r * draws + t] = m;
            all = m > all ? m : all;
        }
        best[(size_t)n_rel * draws + t] = all;
    }
    for (int r = 0; r < n_rel; r++)
        mean_p95(best + (size_t)r * draws, draws, &mean[r], &p95[r]);
    mean_p95(best + (size_t)n_rel * draws, draws, all_mean, all_p95);
    free(cdf), free(at), free(best);
    return KIT_OK;
}
