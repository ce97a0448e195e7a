/* fontsizes.c: the size at which a figure's PDF prints its lettering.
 *
 *   fontsizes [-v] FILE.pdf...
 *
 * prints, for each file, "FILE SMALLEST" where SMALLEST is the smallest
 * glyph size, in points (1/72 in), at which the file shows any text: the
 * font size of Tf, times the scale of the text matrix (Tm), times the
 * scale of every cm in force (q/Q nest them). The scale is the length of
 * the text's vertical unit vector through those matrices, so a rotated
 * label measures as it reads. With -v it also lists each size drawn and
 * how many strings are shown at it. A file that shows no text prints
 * "none".
 *
 * It reads what cairo (gnuplot's pdfcairo) and pdfTeX write: the page
 * content and form XObjects are uncompressed or Flate streams, each
 * measured on its own with the page's unit matrix (a form drawn under a
 * scaling cm of its caller would be missed; neither writer does that for
 * text). Font programs, images and object streams are skipped.
 *
 * Built by tools/checks/72-book-print.sh (cc ... -lz); exit status 2 on
 * a file it cannot read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAXSIZES 256
#define MAXDEPTH 64
#define MAXNUM   16

static double sizes[MAXSIZES];
static int counts[MAXSIZES];
static int nsizes;

static void record(double pt)
{
    double r = floor(pt * 100.0 + 0.5) / 100.0;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] == r) {
            counts[i]++;
            return;
        }
    if (nsizes < MAXSIZES) {
        sizes[nsizes] = r;
        counts[nsizes++] = 1;
    }
}

/* a 2x3 PDF matrix [a b c d e f] */
typedef struct {
    double m[6];
} mat;

static mat mul(mat x, mat y) /* x then y: x * y */
{
    mat r;
    r.m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2];
    r.m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];
    r.m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2];
    r.m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];
    r.m[4] = x.m[4] * y.m[0] + x.m[5] * y.m[2] + y.m[4];
    r.m[5] = x.m[4] * y.m[1] + x.m[5] * y.m[3] + y.m[5];
    return r;
}

static const mat unit = {{1, 0, 0, 1, 0, 0}};

/* Walks one content stream's operators. */
static void scan(const unsigned char *s, size_t n)
{
    mat ctm[MAXDEPTH];
    int depth = 0;
    mat tm = unit;
    double fs = 0, num[MAXNUM];
    int nnum = 0;
    ctm[0] = unit;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == '%') { /* comment */
            while (i < n && s[i] != '\n' && s[i] != '\r')
                i++;
        } else if (c == '(') { /* string: skip, with nesting and escapes */
            int level = 0;
            for (; i < n; i++) {
                if (s[i] == '\\') {
                    i++;
                } else if (s[i] == '(') {
                    level++;
                } else if (s[i] == ')' && --level == 0) {
                    i++;
                    break;
                }
            }
            continue;
        } else if (c == '<' && i + 1 < n && s[i + 1] == '<') {
            i += 2;
            continue;
        } else if (c == '<') { /* hex string */
            while (i < n && s[i] != '>')
                i++;
        } else if (c == '[' || c == ']' || c == '>' || c == '{' || c == '}') {
            /* array brackets: TJ's operand; numbers inside are kerns */
            if (c == '[')
                nnum = 0;
        } else if (c == '/') { /* a name */
            i++;
            while (i < n && !strchr(" \t\r\n\f/[]()<>{}%", s[i]))
                i++;
            continue;
        } else if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
            char buf[64];
            size_t k = 0;
            while (i < n && k < sizeof buf - 1 &&
                   ((s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
                    s[i] == '+' || s[i] == '.'))
                buf[k++] = (char)s[i++];
            buf[k] = 0;
            if (nnum == MAXNUM) {
                memmove(num, num + 1, (MAXNUM - 1) * sizeof *num);
                nnum--;
            }
            num[nnum++] = atof(buf);
            continue;
        } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                   c == '\'' || c == '"' || c == '*') {
            char op[8];
            size_t k = 0;
            while (i < n && k < sizeof op - 1 &&
                   ((s[i] >= 'A' && s[i] <= 'Z') ||
                    (s[i] >= 'a' && s[i] <= 'z') || s[i] == '\'' ||
                    s[i] == '"' || s[i] == '*'))
                op[k++] = (char)s[i++];
            op[k] = 0;
            if (!strcmp(op, "q")) {
                if (depth + 1 < MAXDEPTH) {
                    ctm[depth + 1] = ctm[depth];
                    depth++;
                }
            } else if (!strcmp(op, "Q")) {
                if (depth > 0)
                    depth--;
            } else if (!strcmp(op, "cm") && nnum >= 6) {
                mat x;
                memcpy(x.m, num + nnum - 6, sizeof x.m);
                ctm[depth] = mul(x, ctm[depth]);
            } else if (!strcmp(op, "BT")) {
                tm = unit;
            } else if (!strcmp(op, "Tm") && nnum >= 6) {
                memcpy(tm.m, num + nnum - 6, sizeof tm.m);
            } else if (!strcmp(op, "Tf") && nnum >= 1) {
                fs = num[nnum - 1];
            } else if (!strcmp(op, "Tj") || !strcmp(op, "TJ") ||
                       !strcmp(op, "'") || !strcmp(op, "\"")) {
                /* the text's vertical unit (0, fs) through Tm, then the CTM */
                mat t = mul(tm, ctm[depth]);
                double y = fabs(fs) * hypot(t.m[2], t.m[3]);
                record(y);
            }
            nnum = 0;
            continue;
        }
        i++;
    }
}

static unsigned char *inflate_all(const unsigned char *in, size_t n,
                                  size_t *outn)
{
    size_t cap = n * 8 + 1024;
    unsigned char *out = malloc(cap);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (!out || inflateInit(&z) != Z_OK) {
        free(out);
        return NULL;
    }
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    int r;
    do {
        if (z.total_out == cap) {
            cap *= 2;
            unsigned char *p = realloc(out, cap);
            if (!p) {
                free(out);
                inflateEnd(&z);
                return NULL;
            }
            out = p;
        }
        z.next_out = out + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out);
        r = inflate(&z, Z_NO_FLUSH);
    } while (r == Z_OK);
    *outn = z.total_out;
    inflateEnd(&z);
    if (r != Z_STREAM_END && r != Z_BUF_ERROR) {
        free(out);
        return NULL;
    }
    return out;
}

/* Finds s in [p, end), like memmem. */
static const unsigned char *find(const unsigned char *p,
                                 const unsigned char *end, const char *s)
{
    size_t k = strlen(s);
    for (; p + k <= end; p++)
        if (!memcmp(p, s, k))
            return p;
    return NULL;
}

static int has(const unsigned char *p, const unsigned char *end, const char *s)
{
    return find(p, end, s) != NULL;
}

static int measure(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)len + 1);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "%s: cannot read\n", path);
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    const unsigned char *end = buf + len, *p = buf;
    int streams = 0;
    while ((p = find(p, end, "stream")) != NULL) {
        /* "endstream" also holds "stream": only a keyword after ">>" opens one */
        const unsigned char *d = p;
        while (d > buf && (d[-1] == ' ' || d[-1] == '\r' || d[-1] == '\n'))
            d--;
        if (d - buf < 2 || d[-1] != '>' || d[-2] != '>') {
            p += 6;
            continue;
        }
        /* the stream's dictionary: back to its "obj" */
        const unsigned char *dict = d;
        while (dict > buf &&
               !(dict[0] == 'o' && dict + 3 <= end && !memcmp(dict, "obj", 3)))
            dict--;
        const unsigned char *data = p + 6;
        if (data < end && *data == '\r')
            data++;
        if (data < end && *data == '\n')
            data++;
        const unsigned char *stop = find(data, end, "endstream");
        if (!stop)
            break;
        p = stop + 9;
        if (has(dict, d, "/Length1") || has(dict, d, "/Length2") ||
            has(dict, d, "/ObjStm") || has(dict, d, "/XRef") ||
            has(dict, d, "/Metadata") || has(dict, d, "/FunctionType") ||
            has(dict, d, "/Image") || has(dict, d, "/FontFile") ||
            has(dict, d, "/CIDFontType0C") || has(dict, d, "/Type1C") ||
            has(dict, d, "/OpenType") || has(dict, d, "/ICCBased") ||
            has(dict, d, "/N 3") || has(dict, d, "/N 4"))
            continue;
        if (has(dict, d, "/Subtype") && !has(dict, d, "/Form"))
            continue;
        streams++;
        if (has(dict, d, "/FlateDecode")) {
            size_t n;
            unsigned char *text = inflate_all(data, (size_t)(stop - data), &n);
            if (text) {
                scan(text, n);
                free(text);
            }
        } else if (!has(dict, d, "/Filter")) {
            scan(data, (size_t)(stop - data));
        }
    }
    free(buf);
    return streams;
}

int main(int argc, char **argv)
{
    int verbose = 0, bad = 0;
    int a = 1;
    if (a < argc && !strcmp(argv[a], "-v")) {
        verbose = 1;
        a++;
    }
    if (a >= argc) {
        fprintf(stderr, "usage: fontsizes [-v] FILE.pdf...\n");
        return 2;
    }
    for (; a < argc; a++) {
        nsizes = 0;
        if (measure(argv[a]) < 0) {
            bad = 1;
            continue;
        }
        double least = 0;
        for (int i = 0; i < nsizes; i++)
            if (i == 0 || sizes[i] < least)
                least = sizes[i];
        if (nsizes == 0)
            printf("%s none\n", argv[a]);
        else
            printf("%s %.2f\n", argv[a], least);
        if (verbose)
            for (int i = 0; i < nsizes; i++)
                printf("  %.2f pt: %d string(s)\n", sizes[i], counts[i]);
    }
    return bad ? 2 : 0;
}
