/*
 * corpus.c: the Brown corpus read from its word/tag files, given a
 * vocabulary, split by text, and saved to and loaded from one binary
 * file (corpus.h). Given code, read in chapter 8.
 *
 * What it will not do: download anything (tools/corpus/fetch.sh does),
 * or check the corpus's sha256 sums (tools/corpus/verify.sh does).
 *
 * Dimension letters: N = tokens, n_texts = texts, V = vocabulary size,
 * n_tags = distinct tags, n_words = distinct lowercased words.
 */
#define _POSIX_C_SOURCE 200809L /* opendir, readdir, strdup */
#include "corpus.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * Errors: one line in the caller's buffer
 * ------------------------------------------------------------------- */

/* Write the message into err (if any) and return code. */
static int fail(char *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, CORPUS_ERR_LEN, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* The name after the last '/' of a path. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* ---------------------------------------------------------------------
 * Interned strings: each distinct string once, found by an FNV-1a hash
 * in an open-addressed table of n_slots (a power of two) slots.
 * ------------------------------------------------------------------- */

struct strtab {
    char **s;    /* (n) the strings, in the order first seen */
    int n, cap;  /* strings held, room in s                  */
    int *slot;   /* (n_slots) index into s, or -1            */
    int n_slots; /* a power of two, more than 2 * n          */
};

/* The growth state behind a corpus_raw (its priv). */
struct raw_priv {
    struct strtab words, tags;
    int tok_cap, text_cap;
};

/* FNV-1a hash of the len bytes at p. */
static uint32_t fnv1a(const char *p, int len)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < len; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

/* The slot where (p, len) is, or the empty slot where it would go. */
static int strtab_find(const struct strtab *t, const char *p, int len)
{
    int i = (int)(fnv1a(p, len) & (uint32_t)(t->n_slots - 1));
    while (t->slot[i] >= 0) {
        const char *s = t->s[t->slot[i]];
        if ((int)strlen(s) == len && memcmp(s, p, (size_t)len) == 0)
            break;
        i = (i + 1) & (t->n_slots - 1);
    }
    return i;
}

/* Double the table's slots (at least 1024) and rehash. */
static int strtab_grow_slots(struct strtab *t)
{
    int n_slots = t->n_slots ? 2 * t->n_slots : 1024;
    int *slot = malloc((size_t)n_slots * sizeof *slot);
    if (!slot)
        return KIT_E_NOMEM;
    free(t->slot);
    t->slot = slot;
    t->n_slots = n_slots;
    for (int i = 0; i < n_slots; i++)
        slot[i] = -1;
    for (int k = 0; k < t->n; k++)
        slot[strtab_find(t, t->s[k], (int)strlen(t->s[k]))] = k;
    return KIT_OK;
}

/* The id of (p, len), added if new: an id >= 0, or KIT_E_NOMEM. */
static int strtab_intern(struct strtab *t, const char *p, int len)
{
    if (2 * (t->n + 1) >= t->n_slots && strtab_grow_slots(t) != KIT_OK)
        return KIT_E_NOMEM;
    int i = strtab_find(t, p, len);
    if (t->slot[i] >= 0)
        return t->slot[i];
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 256;
        char **s = realloc(t->s, (size_t)cap * sizeof *s);
        if (!s)
            return KIT_E_NOMEM;
        t->s = s;
        t->cap = cap;
    }
    char *copy = malloc((size_t)len + 1);
    if (!copy)
        return KIT_E_NOMEM;
    memcpy(copy, p, (size_t)len);
    copy[len] = '\0';
    t->s[t->n] = copy;
    t->slot[i] = t->n;
    return t->n++;
}

static void strtab_free(struct strtab *t)
{
    for (int k = 0; k < t->n; k++)
        free(t->s[k]);
    free(t->s);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------------
 * Tags and the split rule
 * ------------------------------------------------------------------- */

/* Whether s is one of the NULL-terminated list. */
static int one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

/* Whether s starts with one of the NULL-terminated list. */
static int starts_one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strncmp(s, *list, strlen(*list)) == 0)
            return 1;
    return 0;
}

/* tag's base, upper case, into b (64 chars): no "FW-", nothing from the
 * first '+', no "-TL", "-HL", "-NC", and no final '*' or '$' (negation,
 * possession) unless that is all there is. */
static void tag_base(const char *tag, char *b)
{
    int n = 0;
    if ((tag[0] == 'f' || tag[0] == 'F') && (tag[1] == 'w' || tag[1] == 'W') &&
        tag[2] == '-')
        tag += 3;
    for (; tag[n] && tag[n] != '+' && n < 63; n++)
        b[n] = (tag[n] >= 'a' && tag[n] <= 'z') ? (char)(tag[n] - 32) : tag[n];
    b[n] = '\0';
    for (int again = 1; again;) {
        again = 0;
        if (n > 3 &&
            (strcmp(b + n - 3, "-TL") == 0 || strcmp(b + n - 3, "-HL") == 0 ||
             strcmp(b + n - 3, "-NC") == 0))
            b[n -= 3] = '\0', again = 1;
        else if (n > 1 && (b[n - 1] == '*' || b[n - 1] == '$'))
            b[--n] = '\0', again = 1;
    }
}

int corpus_tag_class(const char *tag)
{
    static const char *const punct[] = {".",  ",",  ":",  "(", ")",
                                        "--", "``", "''", "'", NULL};
    static const char *const det[] = {"AT",  "DT",  "DTI", "DTS", "DTX",
                                      "ABN", "ABX", "AP",  NULL};
    static const char *const adj[] = {"JJ", "JJR", "JJS", "JJT", NULL};
    static const char *const noun[] = {"NN", "NP", "NR", NULL};
    static const char *const verb[] = {"VB", "BE", "HV", "DO", "MD", NULL};
    static const char *const pron[] = {"PP", "PN", "WP", NULL};
    char b[64];
    if (!tag)
        return TAG_OTHER;
    tag_base(tag, b);
    if (one_of(b, punct))
        return TAG_PUNCT;
    if (one_of(b, det))
        return TAG_DET;
    if (one_of(b, adj))
        return TAG_ADJ;
    if (strcmp(b, "IN") == 0)
        return TAG_PREP;
    if (starts_one_of(b, noun))
        return TAG_NOUN;
    if (starts_one_of(b, verb))
        return TAG_VERB;
    if (starts_one_of(b, pron))
        return TAG_PRON;
    return TAG_OTHER;
}

const char *corpus_tag_class_name(int cls)
{
    static const char *const names[TAG_N_CLASSES] = {
        "det", "adj", "noun", "prep", "verb", "pron", "punct", "other"};
    return cls >= 0 && cls < TAG_N_CLASSES ? names[cls] : "unknown";
}

/* The 15 genre letters of the Brown corpus, A. PRESS: REPORTAGE ...
 * R. HUMOR (there are no genres I, O and Q). */
static const char genres[] = "abcdefghjklmnpr";

int corpus_split_of(const char *id)
{
    if (!id || strlen(id) != 4 || id[0] != 'c' || !id[1] ||
        !strchr(genres, id[1]) || id[2] < '0' || id[2] > '9' || id[3] < '0' ||
        id[3] > '9')
        return KIT_E_INPUT;
    int n = (id[2] - '0') * 10 + (id[3] - '0');
    if (n % 10 == 2)
        return SPLIT_VALID;
    if (n % 10 == 3)
        return SPLIT_TEST;
    return SPLIT_TRAIN;
}

/* ---------------------------------------------------------------------
 * Reading one file
 * ------------------------------------------------------------------- */

/* A token in a file's buffer: the word is p[0 .. slash-1], the tag
 * p[slash+1 .. len-1]. */
struct span {
    const char *p;
    int len, slash, line;
};

/* The number of bytes of the UTF-8 character at p (n bytes left), or 0
 * when they are not UTF-8 (a stray continuation byte, an overlong form,
 * a surrogate, past U+10FFFF, cut short). */
static int utf8_len(const unsigned char *p, size_t n)
{
    int len = p[0] < 0x80   ? 1
              : p[0] < 0xC2 ? 0
              : p[0] < 0xE0 ? 2
              : p[0] < 0xF0 ? 3
              : p[0] < 0xF5 ? 4
                            : 0;
    if (len == 0 || (size_t)len > n)
        return 0;
    for (int i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] > 0x9F) ||
        (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] > 0x8F))
        return 0;
    return len;
}

/* Check that buf (n bytes) is text: no NUL byte, valid UTF-8. */
static int check_text(const char *path, const char *buf, size_t n, char *err)
{
    int line = 1;
    for (size_t i = 0; i < n;) {
        const unsigned char *u = (const unsigned char *)buf + i;
        if (u[0] == 0)
            return fail(err, KIT_E_INPUT,
                        "%s:%d: a NUL byte: this is not a text file", path,
                        line);
        int len = utf8_len(u, n - i);
        if (len == 0)
            return fail(err, KIT_E_INPUT,
                        "%s:%d: byte 0x%02X is not UTF-8 text", path, line,
                        u[0]);
        line += u[0] == '\n';
        i += (size_t)len;
    }
    return KIT_OK;
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
           ch == '\v';
}

/* The next whitespace-separated token of buf from *pos, with its line
 * (*line is kept up to date). Returns 0 at the end. */
static int next_span(const char *buf, size_t n, size_t *pos, int *line,
                     struct span *t)
{
    size_t i = *pos;
    for (; i < n && is_space(buf[i]); i++)
        *line += buf[i] == '\n';
    if (i == n)
        return 0;
    size_t start = i;
    t->slash = -1;
    for (; i < n && !is_space(buf[i]); i++)
        if (buf[i] == '/')
            t->slash = (int)(i - start);
    t->p = buf + start;
    t->len = (int)(i - start);
    t->line = *line;
    *pos = i;
    return 1;
}

/* Check every token of buf: each has a word and a tag. */
static int check_tokens(const char *path, const char *buf, size_t n, char *err)
{
    size_t pos = 0;
    int line = 1, count = 0;
    struct span t;
    while (next_span(buf, n, &pos, &line, &t)) {
        int show = t.len > 40 ? 40 : t.len;
        if (t.slash < 0 || t.slash == t.len - 1)
            return fail(err, KIT_E_INPUT,
                        "%s:%d: the token \"%.*s\" has no tag (want word/tag)",
                        path, t.line, show, t.p);
        if (t.slash == 0)
            return fail(err, KIT_E_INPUT,
                        "%s:%d: the token \"%.*s\" has no word (want "
                        "word/tag)",
                        path, t.line, show, t.p);
        if (t.len > 1000)
            return fail(err, KIT_E_INPUT,
                        "%s:%d: a token of %d bytes: not a word/tag token",
                        path, t.line, t.len);
        count++;
    }
    if (count == 0)
        return fail(err, KIT_E_INPUT, "%s: empty: no word/tag token in it",
                    path);
    return KIT_OK;
}

/* Read the whole file into a malloc'ed buffer: *n bytes. */
static int slurp(const char *path, char **buf, size_t *n, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, KIT_E_INPUT, "%s: cannot be opened", path);
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    for (size_t got = 1; b && got > 0;) {
        if (len == cap) {
            char *more = realloc(b, cap *= 2);
            if (!more)
                free(b);
            b = more;
            if (!b)
                break;
        }
        got = fread(b + len, 1, cap - len, f);
        len += got;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b)
        return fail(err, KIT_E_NOMEM, "%s: out of memory reading it", path);
    if (bad) {
        free(b);
        return fail(err, KIT_E_INPUT, "%s: cannot be read", path);
    }
    *buf = b;
    *n = len;
    return KIT_OK;
}

void corpus_raw_init(struct corpus_raw *c)
{
    memset(c, 0, sizeof *c);
}

void corpus_raw_free(struct corpus_raw *c)
{
    struct raw_priv *pv = c->priv;
    if (pv) {
        strtab_free(&pv->words);
        strtab_free(&pv->tags);
        free(pv);
    }
    free(c->texts);
    free(c->word);
    free(c->tag);
    memset(c, 0, sizeof *c);
}

/* Room for one more text and for extra more tokens. */
static int raw_reserve(struct corpus_raw *c, int extra)
{
    struct raw_priv *pv = c->priv;
    if (c->n_texts == pv->text_cap) {
        int cap = pv->text_cap ? 2 * pv->text_cap : 64;
        struct corpus_text *t = realloc(c->texts, (size_t)cap * sizeof *t);
        if (!t)
            return KIT_E_NOMEM;
        c->texts = t;
        pv->text_cap = cap;
    }
    if (c->n_tokens + extra > pv->tok_cap) {
        int cap = pv->tok_cap ? pv->tok_cap : 1 << 16;
        while (cap < c->n_tokens + extra)
            cap *= 2;
        int *w = realloc(c->word, (size_t)cap * sizeof *w);
        if (w)
            c->word = w;
        int *g = w ? realloc(c->tag, (size_t)cap * sizeof *g) : NULL;
        if (!g)
            return KIT_E_NOMEM;
        c->tag = g;
        pv->tok_cap = cap;
    }
    return KIT_OK;
}

/* Intern the word (lowercased) and the tag (upper-cased) of t, and
 * append the token. */
static int append_token(struct corpus_raw *c, const struct span *t)
{
    struct raw_priv *pv = c->priv;
    char buf[1001];
    for (int i = 0; i < t->len; i++) {
        char ch = t->p[i];
        int in_word = i < t->slash;
        if (in_word && ch >= 'A' && ch <= 'Z')
            ch = (char)(ch + 32);
        if (!in_word && ch >= 'a' && ch <= 'z')
            ch = (char)(ch - 32);
        buf[i] = ch;
    }
    int w = strtab_intern(&pv->words, buf, t->slash);
    int g = strtab_intern(&pv->tags, buf + t->slash + 1, t->len - t->slash - 1);
    if (w < 0 || g < 0)
        return KIT_E_NOMEM;
    c->word[c->n_tokens] = w;
    c->tag[c->n_tokens] = g;
    c->n_tokens++;
    return KIT_OK;
}

/* Append every token of buf (already checked) as text id. */
static int append_text(struct corpus_raw *c, const char *id, const char *buf,
                       size_t n)
{
    struct corpus_text *text = &c->texts[c->n_texts];
    memset(text, 0, sizeof *text);
    strcpy(text->id, id);
    text->split = corpus_split_of(id);
    text->first = c->n_tokens;
    size_t pos = 0;
    int line = 1;
    struct span t;
    while (next_span(buf, n, &pos, &line, &t))
        if (append_token(c, &t) != KIT_OK)
            return KIT_E_NOMEM;
    text->n_tokens = c->n_tokens - text->first;
    c->n_texts++;
    struct raw_priv *pv = c->priv;
    c->words = pv->words.s, c->n_words = pv->words.n;
    c->tags = pv->tags.s, c->n_tags = pv->tags.n;
    return KIT_OK;
}

/* The number of whitespace-separated tokens in buf (an upper bound on
 * what append_text() adds). */
static int count_spans(const char *buf, size_t n)
{
    size_t pos = 0;
    int line = 1, count = 0;
    struct span t;
    while (next_span(buf, n, &pos, &line, &t))
        count++;
    return count;
}

/* Whether a text id is already in c. */
static int has_text(const struct corpus_raw *c, const char *id)
{
    for (int k = 0; k < c->n_texts; k++)
        if (strcmp(c->texts[k].id, id) == 0)
            return 1;
    return 0;
}

int corpus_read_file(struct corpus_raw *c, const char *path, char *err)
{
    if (!c || !path)
        return fail(err, KIT_E_NULL, "corpus_read_file: a NULL argument");
    const char *id = base_name(path);
    if (corpus_split_of(id) < 0)
        return fail(err, KIT_E_INPUT,
                    "%s: not a Brown text name (c, a genre letter of %s, "
                    "two digits: ca01)",
                    path, genres);
    if (has_text(c, id))
        return fail(err, KIT_E_INPUT, "%s: text %s is read twice", path, id);
    if (!c->priv && !(c->priv = calloc(1, sizeof(struct raw_priv))))
        return fail(err, KIT_E_NOMEM, "%s: out of memory", path);
    char *buf = NULL;
    size_t n = 0;
    int rc = slurp(path, &buf, &n, err);
    if (rc != KIT_OK)
        return rc;
    rc = check_text(path, buf, n, err);
    if (rc == KIT_OK)
        rc = check_tokens(path, buf, n, err);
    if (rc == KIT_OK && n > (size_t)1 << 30)
        rc = fail(err, KIT_E_INPUT, "%s: larger than 1 GiB", path);
    if (rc == KIT_OK && (rc = raw_reserve(c, count_spans(buf, n))) != KIT_OK)
        fail(err, rc, "%s: out of memory", path);
    if (rc == KIT_OK && (rc = append_text(c, id, buf, n)) != KIT_OK)
        fail(err, rc, "%s: out of memory", path);
    free(buf);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir that are text ids, sorted: *names (n), malloc'ed. */
static int list_texts(const char *dir, char ***names, int *n, char *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return fail(err, KIT_E_INPUT, "%s: cannot open the folder", dir);
    int cap = 0, rc = KIT_OK;
    char **v = NULL;
    *n = 0;
    for (struct dirent *e; rc == KIT_OK && (e = readdir(d));) {
        if (corpus_split_of(e->d_name) < 0)
            continue;
        if (*n == cap) {
            char **more =
                realloc(v, (size_t)(cap = cap ? 2 * cap : 512) * sizeof *v);
            if (!more) {
                rc = KIT_E_NOMEM;
                break;
            }
            v = more;
        }
        if (!(v[*n] = strdup(e->d_name)))
            rc = KIT_E_NOMEM;
        else
            (*n)++;
    }
    closedir(d);
    if (rc == KIT_OK && *n == 0)
        rc = fail(err, KIT_E_INPUT,
                  "%s: no Brown text file (ca01 ... cr09) in it", dir);
    if (rc == KIT_E_NOMEM)
        fail(err, rc, "%s: out of memory listing it", dir);
    if (*n > 1)
        qsort(v, (size_t)*n, sizeof *v, cmp_str);
    *names = v;
    return rc;
}

int corpus_read_dir(struct corpus_raw *c, const char *dir, char *err)
{
    if (!c || !dir)
        return fail(err, KIT_E_NULL, "corpus_read_dir: a NULL argument");
    char **names = NULL;
    int n = 0;
    int rc = list_texts(dir, &names, &n, err);
    for (int k = 0; rc == KIT_OK && k < n; k++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, names[k]) >=
            (int)sizeof path)
            rc = fail(err, KIT_E_INPUT, "%s: the path is too long", dir);
        else
            rc = corpus_read_file(c, path, err);
    }
    for (int k = 0; k < n; k++)
        free(names[k]);
    free(names);
    return rc;
}

/* ---------------------------------------------------------------------
 * The vocabulary and the tokenised corpus
 * ------------------------------------------------------------------- */

static const char *const split_names[SPLIT_N] = {"training", "validation",
                                                 "test"};

/* A word of the training split with its count, for sorting. */
struct word_count {
    int count;
    int id;
    const char *word;
};

/* Most frequent first, ties in byte order. */
static int cmp_count(const void *a, const void *b)
{
    const struct word_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->word, y->word);
}

/* By split, then by id. */
static int cmp_text(const void *a, const void *b)
{
    const struct corpus_text *x = a, *y = b;
    if (x->split != y->split)
        return x->split - y->split;
    return strcmp(x->id, y->id);
}

/* The training split's distinct words, most frequent first: *wc
 * (*n_distinct), malloc'ed. */
static int count_training_words(const struct corpus_raw *c,
                                struct word_count **wc, int *n_distinct)
{
    struct word_count *v = calloc((size_t)c->n_words + 1, sizeof *v);
    if (!v)
        return KIT_E_NOMEM;
    for (int k = 0; k < c->n_texts; k++) {
        const struct corpus_text *t = &c->texts[k];
        if (t->split == SPLIT_TRAIN)
            for (int i = t->first; i < t->first + t->n_tokens; i++)
                v[c->word[i]].count++;
    }
    int n = 0;
    for (int w = 0; w < c->n_words; w++)
        if (v[w].count > 0)
            v[n++] = (struct word_count){v[w].count, w, c->words[w]};
    qsort(v, (size_t)n, sizeof *v, cmp_count);
    *wc = v;
    *n_distinct = n;
    return KIT_OK;
}

/* A malloc'ed copy of s, or NULL. */
static char *copy_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    return p ? memcpy(p, s, n) : NULL;
}

/* Allocate d's arrays for V words, n_tags tags, n_texts texts and N
 * tokens, zero-filled. */
static int data_alloc(struct corpus_data *d, int V, int n_tags, int n_texts,
                      int N)
{
    memset(d, 0, sizeof *d);
    d->V = V, d->n_tags = n_tags, d->n_texts = n_texts, d->n_tokens = N;
    d->vocab = calloc((size_t)V, sizeof *d->vocab);
    d->tags = calloc((size_t)n_tags, sizeof *d->tags);
    d->tag_cl = calloc((size_t)n_tags, 1);
    d->texts = calloc((size_t)n_texts, sizeof *d->texts);
    d->token = calloc((size_t)N, sizeof *d->token);
    d->tag = calloc((size_t)N, sizeof *d->tag);
    if (!d->vocab || !d->tags || !d->tag_cl || !d->texts || !d->token ||
        !d->tag)
        return KIT_E_NOMEM;
    return KIT_OK;
}

void corpus_data_free(struct corpus_data *d)
{
    if (!d)
        return;
    for (int v = 0; d->vocab && v < d->V; v++)
        free(d->vocab[v]);
    for (int g = 0; d->tags && g < d->n_tags; g++)
        free(d->tags[g]);
    free(d->vocab);
    free(d->tags);
    free(d->tag_cl);
    free(d->texts);
    free(d->token);
    free(d->tag);
    memset(d, 0, sizeof *d);
}

/* d's vocabulary from the sorted counts, and map[w] = the vocabulary id
 * of raw word w (CORPUS_UNK for those left out). */
static int fill_vocab(struct corpus_data *d, const struct word_count *wc,
                      int *map, int n_words)
{
    for (int w = 0; w < n_words; w++)
        map[w] = CORPUS_UNK;
    if (!(d->vocab[CORPUS_UNK] = copy_str(CORPUS_UNK_WORD)))
        return KIT_E_NOMEM;
    for (int v = 1; v < d->V; v++) {
        map[wc[v - 1].id] = v;
        if (!(d->vocab[v] = copy_str(wc[v - 1].word)))
            return KIT_E_NOMEM;
    }
    return KIT_OK;
}

/* d's tags, their classes, texts in split order, tokens, and splits. */
static int fill_tokens(struct corpus_data *d, const struct corpus_raw *c,
                       const int *map)
{
    for (int g = 0; g < c->n_tags; g++) {
        if (!(d->tags[g] = copy_str(c->tags[g])))
            return KIT_E_NOMEM;
        d->tag_cl[g] = (unsigned char)corpus_tag_class(c->tags[g]);
    }
    memcpy(d->texts, c->texts, (size_t)c->n_texts * sizeof *d->texts);
    qsort(d->texts, (size_t)d->n_texts, sizeof *d->texts, cmp_text);
    int at = 0;
    for (int k = 0; k < d->n_texts; k++) {
        struct corpus_text *t = &d->texts[k];
        for (int i = 0; i < t->n_tokens; i++) {
            d->token[at + i] = map[c->word[t->first + i]];
            d->tag[at + i] = c->tag[t->first + i];
        }
        if (d->split_n[t->split] == 0)
            d->split_first[t->split] = at;
        d->split_n[t->split] += t->n_tokens;
        t->first = at;
        at += t->n_tokens;
    }
    return KIT_OK;
}

/* KIT_OK when each split of c has at least one text. */
static int check_splits(const struct corpus_raw *c, char *err)
{
    int has[SPLIT_N] = {0};
    for (int k = 0; k < c->n_texts; k++)
        has[c->texts[k].split] = 1;
    for (int s = 0; s < SPLIT_N; s++)
        if (!has[s])
            return fail(err, KIT_E_INPUT,
                        "the %s split is empty: the split rule puts texts "
                        "numbered ..%d there, and there are none",
                        split_names[s],
                        s == SPLIT_VALID  ? 2
                        : s == SPLIT_TEST ? 3
                                          : 1);
    return KIT_OK;
}

int corpus_build(const struct corpus_raw *c, int V, struct corpus_data *d,
                 char *err)
{
    if (!c || !d)
        return fail(err, KIT_E_NULL, "corpus_build: a NULL argument");
    memset(d, 0, sizeof *d);
    if (V < 2 || V > CORPUS_MAX_VOCAB)
        return fail(err, KIT_E_SIZE,
                    "a vocabulary of %d tokens is impossible: it must be 2 "
                    "to %d (the unknown token and at least one word)",
                    V, CORPUS_MAX_VOCAB);
    if (c->n_tags > 65535)
        return fail(err, KIT_E_SIZE,
                    "%d distinct tags: the corpus file holds at most 65535",
                    c->n_tags);
    int rc = check_splits(c, err);
    if (rc != KIT_OK)
        return rc;
    struct word_count *wc = NULL;
    int n_distinct = 0;
    int *map = malloc(((size_t)c->n_words + 1) * sizeof *map);
    if (!map || count_training_words(c, &wc, &n_distinct) != KIT_OK)
        rc = fail(err, KIT_E_NOMEM, "corpus_build: out of memory");
    else if (n_distinct < V - 1)
        rc = fail(err, KIT_E_SIZE,
                  "a vocabulary of %d tokens needs %d distinct words in the "
                  "training split, which has only %d: ask for at most %d",
                  V, V - 1, n_distinct, n_distinct + 1);
    else if (data_alloc(d, V, c->n_tags, c->n_texts, c->n_tokens) != KIT_OK ||
             fill_vocab(d, wc, map, c->n_words) != KIT_OK ||
             fill_tokens(d, c, map) != KIT_OK)
        rc = fail(err, KIT_E_NOMEM, "corpus_build: out of memory");
    free(wc);
    free(map);
    if (rc != KIT_OK)
        corpus_data_free(d);
    return rc;
}

int corpus_token_id(const struct corpus_data *d, const char *word)
{
    char low[1001];
    if (!d || !word || strlen(word) > 1000)
        return CORPUS_UNK;
    int n = 0;
    for (; word[n]; n++)
        low[n] =
            (word[n] >= 'A' && word[n] <= 'Z') ? (char)(word[n] + 32) : word[n];
    low[n] = '\0';
    for (int v = 1; v < d->V; v++) /* a linear search: for a few words */
        if (strcmp(d->vocab[v], low) == 0)
            return v;
    return CORPUS_UNK;
}

int corpus_encode(const struct corpus_data *d, const char *text, int *ids,
                  int max_ids)
{
    static const char punct[] = ".,;:!?()\"";
    if (!d || !text || (!ids && max_ids > 0))
        return KIT_E_NULL;
    int n = 0;
    for (const char *p = text; *p;) {
        if (is_space(*p)) {
            p++;
            continue;
        }
        size_t len = 1; /* a punctuation mark, or the first of a word */
        while (!strchr(punct, *p) && p[len] && !is_space(p[len]) &&
               !strchr(punct, p[len]))
            len++;
        char word[1001];
        size_t keep = len > 1000 ? 1000 : len;
        memcpy(word, p, keep);
        word[keep] = '\0';
        if (n < max_ids)
            ids[n] = corpus_token_id(d, word);
        n++;
        p += len;
    }
    return n;
}

double corpus_coverage(const struct corpus_data *d, int s)
{
    if (!d || s < 0 || s >= SPLIT_N || d->split_n[s] == 0)
        return 0.0;
    int known = 0;
    for (int i = 0; i < d->split_n[s]; i++)
        known += d->token[d->split_first[s] + i] != CORPUS_UNK;
    return (double)known / d->split_n[s];
}

/* ---------------------------------------------------------------------
 * The binary file, little-endian:
 *   "BRWNTOK1", u32 version, u32 V, n_tags, n_texts, N,
 *   u32 split_first[3], split_n[3],
 *   V x (u16 length, bytes), n_tags x (u16 length, bytes, u8 class),
 *   n_texts x (8 bytes id, u8 split, u32 first, u32 n_tokens),
 *   N x u16 token, N x u16 tag, and nothing after.
 * Beside it, PATH.sum: the checksum of every byte (SUM_FORMAT).
 * ------------------------------------------------------------------- */

static void put_u16(FILE *f, unsigned v)
{
    fputc((int)(v & 0xFF), f);
    fputc((int)((v >> 8) & 0xFF), f);
}

static void put_u32(FILE *f, uint32_t v)
{
    put_u16(f, v & 0xFFFF);
    put_u16(f, v >> 16);
}

/* A u16 length, then the bytes of s. */
static void put_str(FILE *f, const char *s)
{
    size_t n = strlen(s);
    put_u16(f, (unsigned)n);
    fwrite(s, 1, n, f);
}

/* The header: magic, version, the sizes, the splits. */
static void put_header(FILE *f, const struct corpus_data *d)
{
    fwrite(CORPUS_BIN_MAGIC, 1, 8, f);
    put_u32(f, CORPUS_BIN_VERSION);
    put_u32(f, (uint32_t)d->V);
    put_u32(f, (uint32_t)d->n_tags);
    put_u32(f, (uint32_t)d->n_texts);
    put_u32(f, (uint32_t)d->n_tokens);
    for (int s = 0; s < SPLIT_N; s++)
        put_u32(f, (uint32_t)d->split_first[s]);
    for (int s = 0; s < SPLIT_N; s++)
        put_u32(f, (uint32_t)d->split_n[s]);
}

/* The checksum beside the file: PATH.sum, one line "fnv1a64 HASH BYTES"
 * (FNV-1a, 64 bits, over every byte of the file), written by
 * corpus_save() and checked by corpus_load(), so that a file damaged in
 * place (bytes overwritten with ids still in range) is not read as a
 * corpus. */
#define SUM_FORMAT "fnv1a64 %016" PRIx64 " %ld\n"

static void fnv64(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ b[i]) * UINT64_C(1099511628211);
}
#define FNV64_START UINT64_C(14695981039346656037)

static void sum_path(char *buf, size_t n, const char *path)
{
    snprintf(buf, n, "%s.sum", path);
}

/* Hash the file just written and write PATH.sum. */
static int save_sum(const char *path, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, KIT_E_INPUT, "%s: cannot be read back", path);
    uint64_t h = FNV64_START;
    long size = 0;
    char buf[1 << 16];
    for (size_t got; (got = fread(buf, 1, sizeof buf, f)) > 0;)
        fnv64(&h, buf, got), size += (long)got;
    fclose(f);
    char sp[4096];
    sum_path(sp, sizeof sp, path);
    FILE *o = fopen(sp, "w");
    if (!o)
        return fail(err, KIT_E_INPUT, "%s: cannot be written", sp);
    fprintf(o, SUM_FORMAT, h, size);
    int bad = ferror(o);
    if (fclose(o) != 0 || bad)
        return fail(err, KIT_E_INPUT, "%s: cannot be written (a full disk?)",
                    sp);
    return KIT_OK;
}

int corpus_save(const struct corpus_data *d, const char *path, char *err)
{
    if (!d || !path)
        return fail(err, KIT_E_NULL, "corpus_save: a NULL argument");
    FILE *f = fopen(path, "wb");
    if (!f)
        return fail(err, KIT_E_INPUT, "%s: cannot be written", path);
    put_header(f, d);
    for (int v = 0; v < d->V; v++)
        put_str(f, d->vocab[v]);
    for (int g = 0; g < d->n_tags; g++) {
        put_str(f, d->tags[g]);
        fputc(d->tag_cl[g], f);
    }
    for (int k = 0; k < d->n_texts; k++) {
        char id[8] = {0};
        memcpy(id, d->texts[k].id, strlen(d->texts[k].id));
        fwrite(id, 1, 8, f);
        fputc(d->texts[k].split, f);
        put_u32(f, (uint32_t)d->texts[k].first);
        put_u32(f, (uint32_t)d->texts[k].n_tokens);
    }
    for (int i = 0; i < d->n_tokens; i++)
        put_u16(f, (unsigned)d->token[i]);
    for (int i = 0; i < d->n_tokens; i++)
        put_u16(f, (unsigned)d->tag[i]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return fail(err, KIT_E_INPUT, "%s: cannot be written (a full disk?)",
                    path);
    return save_sum(path, err);
}

/* A reader that stops at the first problem, keeping its message. */
struct reader {
    FILE *f;
    const char *path;
    char *err;
    int rc;     /* KIT_OK until something is wrong */
    long off;   /* bytes read so far */
    uint64_t h; /* their FNV-1a hash (SUM_FORMAT) */
};

/* n bytes into p; on a short read, the reader fails as truncated. */
static void get_bytes(struct reader *r, void *p, size_t n, const char *what)
{
    if (r->rc != KIT_OK)
        return;
    if (fread(p, 1, n, r->f) != n)
        r->rc = fail(r->err, KIT_E_INPUT,
                     "%s: truncated at byte %ld (reading %s): make it again "
                     "with make corpus",
                     r->path, r->off, what);
    else
        fnv64(&r->h, p, n);
    r->off += (long)n;
}

static uint32_t get_u16(struct reader *r, const char *what)
{
    unsigned char b[2] = {0, 0};
    get_bytes(r, b, 2, what);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8;
}

static uint32_t get_u32(struct reader *r, const char *what)
{
    uint32_t lo = get_u16(r, what);
    return lo | get_u16(r, what) << 16;
}

/* The reader fails with this message (the file is malformed). */
static void bad(struct reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void bad(struct reader *r, const char *fmt, ...)
{
    if (r->rc != KIT_OK)
        return;
    char what[CORPUS_ERR_LEN - 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    r->rc = fail(r->err, KIT_E_INPUT, "%s: not a valid corpus file: %s",
                 r->path, what);
}

/* A u16-length string, 1 to 1000 bytes with no NUL, malloc'ed. */
static char *get_str(struct reader *r, const char *what)
{
    uint32_t n = get_u16(r, what);
    if (r->rc == KIT_OK && (n == 0 || n > 1000))
        bad(r, "%s has length %u", what, (unsigned)n);
    char *s = r->rc == KIT_OK ? malloc(n + 1) : NULL;
    if (!s)
        return NULL;
    get_bytes(r, s, n, what);
    s[n] = '\0';
    if (r->rc == KIT_OK && strlen(s) != n)
        bad(r, "%s holds a NUL byte", what);
    return s;
}

/* The header into d's sizes, checked; then d's arrays allocated. */
static void load_header(struct reader *r, struct corpus_data *d)
{
    char magic[8] = {0};
    get_bytes(r, magic, 8, "the magic");
    if (r->rc == KIT_OK && memcmp(magic, CORPUS_BIN_MAGIC, 8) != 0)
        bad(r, "it does not start with %s", CORPUS_BIN_MAGIC);
    uint32_t version = get_u32(r, "the version");
    if (r->rc == KIT_OK && version != CORPUS_BIN_VERSION)
        bad(r, "version %u, and this code reads version %d", (unsigned)version,
            CORPUS_BIN_VERSION);
    uint32_t V = get_u32(r, "V"), n_tags = get_u32(r, "n_tags");
    uint32_t n_texts = get_u32(r, "n_texts"), N = get_u32(r, "N");
    if (r->rc == KIT_OK &&
        (V < 2 || V > CORPUS_MAX_VOCAB || n_tags < 1 || n_tags > 65535 ||
         n_texts < 1 || n_texts > 100000 || N < 1 || N > (1u << 30)))
        bad(r, "sizes out of range (V %u, %u tags, %u texts, %u tokens)",
            (unsigned)V, (unsigned)n_tags, (unsigned)n_texts, (unsigned)N);
    uint32_t sf[SPLIT_N], sn[SPLIT_N];
    for (int s = 0; s < SPLIT_N; s++)
        sf[s] = get_u32(r, "the splits");
    for (int s = 0; s < SPLIT_N; s++)
        sn[s] = get_u32(r, "the splits");
    if (r->rc != KIT_OK)
        return;
    if (data_alloc(d, (int)V, (int)n_tags, (int)n_texts, (int)N) != KIT_OK) {
        r->rc = fail(r->err, KIT_E_NOMEM, "%s: out of memory", r->path);
        return;
    }
    for (int s = 0; s < SPLIT_N; s++)
        d->split_first[s] = (int)sf[s], d->split_n[s] = (int)sn[s];
}

/* The vocabulary and the tags with their classes. */
static void load_strings(struct reader *r, struct corpus_data *d)
{
    for (int v = 0; r->rc == KIT_OK && v < d->V; v++)
        d->vocab[v] = get_str(r, "a vocabulary word");
    if (r->rc == KIT_OK && strcmp(d->vocab[CORPUS_UNK], CORPUS_UNK_WORD) != 0)
        bad(r, "token 0 is \"%s\", not %s", d->vocab[0], CORPUS_UNK_WORD);
    for (int g = 0; r->rc == KIT_OK && g < d->n_tags; g++) {
        d->tags[g] = get_str(r, "a tag");
        get_bytes(r, &d->tag_cl[g], 1, "a tag class");
        if (r->rc == KIT_OK && d->tag_cl[g] >= TAG_N_CLASSES)
            bad(r, "tag %s has class %d", d->tags[g], d->tag_cl[g]);
    }
}

/* The texts: ids that name their split, in order, covering the tokens
 * end to end, and each split's range as the header says. */
static void load_texts(struct reader *r, struct corpus_data *d)
{
    int at = 0, first[SPLIT_N] = {-1, -1, -1}, n[SPLIT_N] = {0};
    for (int k = 0; r->rc == KIT_OK && k < d->n_texts; k++) {
        struct corpus_text *t = &d->texts[k];
        get_bytes(r, t->id, 8, "a text id");
        unsigned char split = 0;
        get_bytes(r, &split, 1, "a text's split");
        t->split = split;
        t->first = (int)get_u32(r, "a text's first token");
        t->n_tokens = (int)get_u32(r, "a text's length");
        if (r->rc != KIT_OK)
            break;
        t->id[7] = '\0';
        if (corpus_split_of(t->id) != t->split)
            bad(r, "text %d (\"%.7s\") is not a text id of split %d", k, t->id,
                t->split);
        else if (k > 0 && cmp_text(&d->texts[k - 1], t) >= 0)
            bad(r, "text %s is out of order (by split, then id)", t->id);
        else if (t->first != at || t->n_tokens < 1 ||
                 t->n_tokens > d->n_tokens - at)
            bad(r, "text %s covers tokens %d + %d, not from %d", t->id,
                t->first, t->n_tokens, at);
        if (first[t->split] < 0)
            first[t->split] = at;
        n[t->split] += t->n_tokens;
        at += t->n_tokens;
    }
    if (r->rc == KIT_OK && at != d->n_tokens)
        bad(r, "the texts hold %d tokens, the header says %d", at, d->n_tokens);
    for (int s = 0; r->rc == KIT_OK && s < SPLIT_N; s++)
        if (n[s] != d->split_n[s] || (n[s] && first[s] != d->split_first[s]))
            bad(r, "the %s split is not where the header says", split_names[s]);
}

/* The tokens and tags, each id in range, and then the end of the file. */
static void load_tokens(struct reader *r, struct corpus_data *d)
{
    for (int i = 0; r->rc == KIT_OK && i < d->n_tokens; i++)
        if ((d->token[i] = (int)get_u16(r, "the tokens")) >= d->V)
            bad(r, "token %d has id %d, past the vocabulary (%d)", i,
                d->token[i], d->V);
    for (int i = 0; r->rc == KIT_OK && i < d->n_tokens; i++)
        if ((d->tag[i] = (int)get_u16(r, "the tags")) >= d->n_tags)
            bad(r, "token %d has tag %d, past the tags (%d)", i, d->tag[i],
                d->n_tags);
    if (r->rc == KIT_OK && fgetc(r->f) != EOF)
        bad(r, "bytes after the end at byte %ld", r->off);
}

/* The whole file read, its hash and size against PATH.sum's. */
static void check_sum(struct reader *r)
{
    if (r->rc != KIT_OK)
        return;
    char sp[4096], line[128], want[128];
    sum_path(sp, sizeof sp, r->path);
    FILE *f = fopen(sp, "r");
    int ok = f && fgets(line, sizeof line, f);
    if (f)
        fclose(f);
    if (!ok) {
        r->rc = fail(r->err, KIT_E_INPUT,
                     "%s: its checksum %s is missing: make it again with "
                     "make corpus",
                     r->path, sp);
        return;
    }
    snprintf(want, sizeof want, SUM_FORMAT, r->h, r->off);
    if (strcmp(line, want) != 0)
        r->rc = fail(r->err, KIT_E_INPUT,
                     "%s: damaged (its bytes differ from the checksum %s "
                     "written with it): make it again with make corpus",
                     r->path, sp);
}

int corpus_load(struct corpus_data *d, const char *path, char *err)
{
    if (!d || !path)
        return fail(err, KIT_E_NULL, "corpus_load: a NULL argument");
    memset(d, 0, sizeof *d);
    struct reader r = {fopen(path, "rb"), path, err, KIT_OK, 0, FNV64_START};
    if (!r.f)
        return fail(err, KIT_E_INPUT,
                    "%s: missing: make it with make corpus (after make deps)",
                    path);
    load_header(&r, d);
    load_strings(&r, d);
    load_texts(&r, d);
    load_tokens(&r, d);
    fclose(r.f);
    check_sum(&r);
    if (r.rc != KIT_OK)
        corpus_data_free(d);
    return r.rc;
}
