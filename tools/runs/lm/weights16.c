/*
 * weights16.c: a network of chapter 8's experiment (lm.h) kept as a
 * file of its own, the form its committed run's final networks are kept
 * in (tools/runs/lm/reference/long/weights/), so that a new measure of
 * their heads never needs them trained again. A file holds every
 * parameter in 32-bit floats, as trained (about 2.5 MB a network), or
 * (half) its embeddings W_te and W_pe, four fifths of the parameters,
 * in 16-bit ones (about 1.46 MB). The committed networks are whole:
 * rounding every parameter to 16 bits moved single relation cases of
 * the heads' scores (a head's heaviest weight landing on another word),
 * and so did rounding the embeddings alone, each enough to change a
 * measure in its third decimal; in 32 bits every measure is the run's.
 * make lm-weights-check measures them again and sets every measure
 * beside the committed run's, to 3 decimals.
 *
 * The numbers are IEEE 754 binary16 (1 sign bit, 5 exponent bits, 10
 * fraction bits: 3 significant decimals, up to 65504), converted here
 * bit by bit in portable C, without the compiler's _Float16: a float is
 * rounded to the nearest 16-bit value, a tie to the one with an even
 * last bit, and a value that would round beyond 65504, an infinity or
 * a NaN is refused, never written. Every value is written little-endian
 * whatever the machine's order. f16_selftest() checks the conversion on
 * its edge cases (zeros, subnormals, the largest finite value, ties)
 * and on the round trip of every finite 16-bit value; --pack and
 * --weights run it before they read or write a file.
 *
 * The file, NAME.f16:
 *   "LMPARAMM"             8 bytes
 *   V T C L n_heads kv_heads n_params seed
 *                          8 x uint32, little-endian
 *   lr                     the learning rate, a float32's bits, uint32
 *   n_half                 uint32: how many of the parameters, from the
 *                          first, are in 16 bits: 0, or the
 *                          embeddings' V C + T C (no other count is
 *                          read)
 *   params                 n_half x binary16, then n_params - n_half x
 *                          float32, each little-endian, in gpt_model's
 *                          order (gpt.h: W_te, W_pe, then the blocks)
 * and nothing after: a file of any other length is refused. kv_heads is
 * the K/V heads the query heads share (n_heads when none do); the seed
 * (2017 ...) and the rate say which of the run's networks it is.
 * load_params() (resume.c) reads these files as well as its own 32-bit
 * ones, by their first 8 bytes, so --remeasure and --resume read either.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HEAD_WORDS 10
#define HEAD_BYTES (8 + 4 * HEAD_WORDS)

/* ---------------------------------------------------------------------
 * The conversion
 * ------------------------------------------------------------------- */

int f16_from_float(float x, uint16_t *out)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    const uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
    const int e = (int)((b >> 23) & 0xffu); /* float's biased exponent */
    const uint32_t frac = b & 0x7fffffu;
    if (e == 0xff) /* an infinity or a NaN */
        return KIT_E_INPUT;
    if (e == 0) { /* zero or a float subnormal: below half of 2^-24 */
        *out = sign;
        return KIT_OK;
    }
    const uint32_t m = frac | 0x800000u; /* 24 bits: x = m 2^(e - 150) */
    uint32_t h, rem, half;
    if (e >= 113) { /* 2^-14 and up: a normal 16-bit value, 13 bits off */
        h = ((uint32_t)(e - 112) << 10) | (frac >> 13);
        rem = frac & 0x1fffu, half = 0x1000u;
    } else {                       /* a 16-bit subnormal: m in units of 2^-24 */
        const int shift = 126 - e; /* 14 .. 125 */
        if (shift > 25) {          /* below 2^-25: rounds to zero */
            *out = sign;
            return KIT_OK;
        }
        h = m >> shift;
        rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    }
    if (rem > half || (rem == half && (h & 1u)))
        h++; /* a carry into the exponent is the next binade, as it should */
    if (h >= 0x7c00u) /* beyond 65504: it would be an infinity */
        return KIT_E_INPUT;
    *out = (uint16_t)(sign | h);
    return KIT_OK;
}

float f16_to_float(uint16_t h)
{
    const int e = (h >> 10) & 0x1f;
    const uint32_t frac = h & 0x3ffu;
    if (e == 0) { /* zero or subnormal: frac 2^-24, exact in a float */
        const float v = ldexpf((float)frac, -24);
        return (h & 0x8000u) ? -v : v;
    }
    /* e == 31 (infinity, NaN) is never written; read_params16() refuses it
     * before it gets here */
    const uint32_t b = ((uint32_t)(h & 0x8000u) << 16) |
                       ((uint32_t)(e - 15 + 127) << 23) | (frac << 13);
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* The edge cases: a float, and the 16-bit value it must become (or 0
 * with bad = 1: refused) */
struct f16_case {
    float x;
    uint16_t h;
    int bad;
};

int f16_selftest(char *why, size_t n)
{
    const float sub = ldexpf(1, -24); /* the smallest 16-bit subnormal */
    const float one_ulp = ldexpf(1, -10);
    const struct f16_case c[] = {
        {0.0f, 0x0000, 0},
        {-0.0f, 0x8000, 0},
        {1.0f, 0x3c00, 0},
        {-2.0f, 0xc000, 0},
        {0.5f, 0x3800, 0},
        {65504.0f, 0x7bff, 0},       /* the largest finite */
        {-65504.0f, 0xfbff, 0},      /* and its negative */
        {65519.99f, 0x7bff, 0},      /* just below the tie with 65536 */
        {65520.0f, 0, 1},            /* the tie: to even is 65536, too large */
        {1e6f, 0, 1},                /* too large */
        {-1e6f, 0, 1},               /* too large, negative */
        {ldexpf(1, -14), 0x0400, 0}, /* the smallest normal */
        {sub, 0x0001, 0},            /* the smallest subnormal */
        {-sub, 0x8001, 0},
        {1023 * sub, 0x03ff, 0},       /* the largest subnormal */
        {sub / 2, 0x0000, 0},          /* a tie: to even, 0 */
        {sub / 2 * 1.001f, 0x0001, 0}, /* above the tie */
        {3 * sub / 2, 0x0002, 0},      /* a tie: to even, 2 */
        {5 * sub / 2, 0x0002, 0},      /* a tie: to even, 2 */
        {1023.5f * sub, 0x0400, 0},    /* a tie into the normals */
        {sub / 4, 0x0000, 0},          /* far below: zero */
        {1e-40f, 0x0000, 0},           /* a float subnormal: zero */
        {-1e-40f, 0x8000, 0},
        {1 + one_ulp / 2, 0x3c00, 0},         /* a tie: to even, down */
        {1 + 3 * one_ulp / 2, 0x3c02, 0},     /* a tie: to even, up */
        {1 + one_ulp / 2 * 1.01f, 0x3c01, 0}, /* just above a tie */
        {2 - one_ulp / 4, 0x4000, 0},         /* rounds up to 2 */
        {0.1f, 0x2e66, 0},
        {-3.14159265f, 0xc248, 0},
    };
    const int n_case = (int)(sizeof c / sizeof c[0]);
    for (int i = 0; i < n_case; i++) {
        uint16_t h = 0;
        const int rc = f16_from_float(c[i].x, &h);
        if (c[i].bad ? rc == KIT_OK : rc != KIT_OK || h != c[i].h) {
            snprintf(why, n,
                     "the 16-bit conversion of %.9g gave %s0x%04x, not "
                     "%s0x%04x",
                     (double)c[i].x, rc == KIT_OK ? "" : "an error, ",
                     (unsigned)h, c[i].bad ? "an error, " : "",
                     (unsigned)c[i].h);
            return KIT_E_INPUT;
        }
    }
    uint16_t h;
    if (f16_from_float(NAN, &h) == KIT_OK ||
        f16_from_float(INFINITY, &h) == KIT_OK ||
        f16_from_float(-INFINITY, &h) == KIT_OK) {
        snprintf(why, n, "the 16-bit conversion took a NaN or an infinity");
        return KIT_E_INPUT;
    }
    /* every finite 16-bit value back and forth: itself again */
    for (uint32_t v = 0; v <= 0xffffu; v++) {
        if ((v & 0x7c00u) == 0x7c00u)
            continue; /* infinities and NaNs */
        const float x = f16_to_float((uint16_t)v);
        if (f16_from_float(x, &h) != KIT_OK || h != v) {
            snprintf(why, n,
                     "the 16-bit value 0x%04x read as %.9g is written "
                     "back as 0x%04x",
                     (unsigned)v, (double)x, (unsigned)h);
            return KIT_E_INPUT;
        }
    }
    snprintf(why, n,
             "the 16-bit conversion's self-test: %d edge cases and every "
             "finite value's round trip, ok",
             n_case + 3);
    return KIT_OK;
}

/* ---------------------------------------------------------------------
 * The file
 * ------------------------------------------------------------------- */

void weights16_path(const char *dir, int heads, int g, unsigned long long seed,
                    char *buf, size_t n)
{
    snprintf(buf, n, "%s/h%d_g%d_s%llu.f16", dir, heads, g, seed);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* "PATH: " and the message into why, if why; returns KIT_E_INPUT */
static int bad(char *why, size_t n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bad(char *why, size_t n, const char *path, const char *fmt, ...)
{
    if (why && n > 0) {
        int k = snprintf(why, n, "%s: ", path);
        if (k >= 0 && (size_t)k < n) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(why + k, n - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return KIT_E_INPUT;
}

/* how many of m's parameters, from the first, are kept in 16 bits: the
 * embeddings W_te and W_pe */
static int half_count(const struct gpt_config *cfg)
{
    return gpt_tensor_size(cfg, GPT_WTE) + gpt_tensor_size(cfg, GPT_WPE);
}

/* the file's length: its header, n_half 2-byte and P - n_half 4-byte
 * parameters */
static long file_bytes(long P, long n_half)
{
    return HEAD_BYTES + 2 * n_half + 4 * (P - n_half);
}

int save_params16(const struct gpt_model *m, int kv_heads,
                  unsigned long long seed, float lr, int half, const char *path,
                  char *why, size_t n)
{
    const size_t P = (size_t)m->n_params;
    const size_t H = half ? (size_t)half_count(&m->cfg) : 0;
    const size_t bytes = (size_t)file_bytes((long)P, (long)H);
    unsigned char *buf = malloc(bytes);
    if (!buf)
        return KIT_E_NOMEM;
    memcpy(buf, PARAMS16_MAGIC, 8);
    uint32_t lr_bits;
    memcpy(&lr_bits, &lr, sizeof lr_bits);
    const uint32_t head[HEAD_WORDS] = {(uint32_t)m->cfg.V,
                                       (uint32_t)m->cfg.T,
                                       (uint32_t)m->cfg.C,
                                       (uint32_t)m->cfg.L,
                                       (uint32_t)m->cfg.n_heads,
                                       (uint32_t)kv_heads,
                                       (uint32_t)m->n_params,
                                       (uint32_t)seed,
                                       lr_bits,
                                       (uint32_t)H};
    for (int i = 0; i < HEAD_WORDS; i++)
        put32(buf + 8 + 4 * i, head[i]);
    unsigned char *q = buf + HEAD_BYTES;
    for (size_t i = 0; i < P; i++) {
        uint16_t h;
        uint32_t b;
        memcpy(&b, &m->params[i], sizeof b);
        if (!isfinite(m->params[i]) ||
            (i < H && f16_from_float(m->params[i], &h) != KIT_OK)) {
            free(buf);
            return bad(why, n, path,
                       "parameter %zu is %g, which no %d-bit float holds "
                       "(%s)",
                       i, (double)m->params[i], i < H ? 16 : 32,
                       isfinite(m->params[i]) ? "beyond 65504"
                                              : "not a finite number");
        }
        if (i < H)
            q[0] = (unsigned char)(h & 0xff), q[1] = (unsigned char)(h >> 8),
            q += 2;
        else
            put32(q, b), q += 4;
    }
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(buf, bytes, 1, f) == 1;
    ok = f && fclose(f) == 0 && ok;
    free(buf);
    if (!ok || rename(tmp, path) != 0)
        return bad(why, n, path, "cannot write it: %s", strerror(errno));
    return KIT_OK;
}

/* the parameters after the header: n_half 16-bit ones, then float32s,
 * into params; a value no file is written with (an infinity, a NaN)
 * refused */
static int read_body(FILE *f, const struct params16_head *hd, float *params,
                     const char *path, char *why, size_t n)
{
    const size_t bytes =
        (size_t)file_bytes(hd->n_params, hd->n_half) - HEAD_BYTES;
    unsigned char *buf = malloc(bytes);
    const int ok = buf && fread(buf, bytes, 1, f) == 1;
    if (!ok) {
        free(buf);
        return buf ? bad(why, n, path, "cannot read its parameters")
                   : KIT_E_NOMEM;
    }
    const unsigned char *q = buf;
    for (int i = 0; i < hd->n_params; i++) {
        if (i < hd->n_half) {
            const uint16_t h = (uint16_t)(q[0] | q[1] << 8);
            q += 2;
            params[i] = f16_to_float(h);
        } else {
            const uint32_t b = get32(q);
            q += 4;
            memcpy(&params[i], &b, sizeof b);
        }
        if (!isfinite(params[i])) {
            free(buf);
            return bad(why, n, path,
                       "parameter %d is an infinity or a NaN, which is "
                       "never written: damaged",
                       i);
        }
    }
    free(buf);
    return KIT_OK;
}

int read_params16(const char *path, struct params16_head *hd, float *params,
                  int max_params, char *why, size_t n)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return bad(why, n, path, "cannot open it: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return bad(why, n, path, "not a file");
    FILE *f = fopen(path, "rb");
    if (!f)
        return bad(why, n, path, "cannot open it: %s", strerror(errno));
    unsigned char head[HEAD_BYTES];
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    rewind(f);
    if (size < HEAD_BYTES || fread(head, HEAD_BYTES, 1, f) != 1) {
        fclose(f);
        return bad(why, n, path,
                   "%ld bytes, shorter than a kept network's header "
                   "(%d): truncated",
                   size, HEAD_BYTES);
    }
    if (memcmp(head, PARAMS16_MAGIC, 8) != 0) {
        char magic[9];
        for (int i = 0; i < 8; i++)
            magic[i] = head[i] >= 32 && head[i] < 127 ? (char)head[i] : '?';
        magic[8] = 0;
        fclose(f);
        return bad(why, n, path,
                   "begins \"%s\", not \"" PARAMS16_MAGIC
                   "\": not a network with 16-bit embeddings",
                   magic);
    }
    uint32_t w[HEAD_WORDS];
    for (int i = 0; i < HEAD_WORDS; i++)
        w[i] = get32(head + 8 + 4 * i);
    *hd = (struct params16_head){(int)w[0], (int)w[1], (int)w[2],
                                 (int)w[3], (int)w[4], (int)w[5],
                                 (int)w[6], (int)w[9], (unsigned long long)w[7],
                                 0};
    memcpy(&hd->lr, &w[8], sizeof hd->lr);
    /* sizes a network of the kit can have: each positive and below 2^28,
     * the heads dividing the width and the K/V heads the heads, the
     * 16-bit ones the embeddings */
    int sane = 1;
    for (int i = 0; i < 7; i++)
        sane = sane && w[i] >= 1 && w[i] < (1u << 28);
    sane = sane && w[2] % w[4] == 0 && w[4] % w[5] == 0 && isfinite(hd->lr) &&
           hd->lr > 0 &&
           (w[9] == 0 || (uint64_t)w[9] == ((uint64_t)w[0] + w[1]) * w[2]) &&
           w[9] < w[6];
    if (!sane) {
        fclose(f);
        return bad(why, n, path,
                   "its header holds no network's sizes (V %u, T %u, C %u, "
                   "L %u, %u heads on %u K/V heads, %u parameters of which "
                   "%u in 16 bits, lr %g)",
                   w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[9],
                   (double)hd->lr);
    }
    const long want = file_bytes(w[6], w[9]);
    if (size != want) {
        fclose(f);
        return bad(why, n, path,
                   "%ld bytes, not the %ld its header says (%d, %u "
                   "parameters of 2 bytes and %u of 4): %s",
                   size, want, HEAD_BYTES, w[9], w[6] - w[9],
                   size < want ? "truncated" : "bytes after the last one");
    }
    if (!params) { /* the header only */
        fclose(f);
        return KIT_OK;
    }
    if (hd->n_params != max_params) {
        fclose(f);
        return bad(why, n, path,
                   "%d parameters, not the %d of the network read into",
                   hd->n_params, max_params);
    }
    const int rc = read_body(f, hd, params, path, why, n);
    fclose(f);
    return rc;
}

int load_params16(struct gpt_model *m, const char *path, char *why, size_t n)
{
    struct params16_head hd;
    float *p = malloc((size_t)m->n_params * sizeof *p);
    if (!p)
        return KIT_E_NOMEM;
    int rc = read_params16(path, &hd, p, m->n_params, why, n);
    if (rc == KIT_OK &&
        (hd.V != m->cfg.V || hd.T != m->cfg.T || hd.C != m->cfg.C ||
         hd.L != m->cfg.L || hd.n_heads != m->cfg.n_heads))
        rc = bad(why, n, path,
                 "a network of V %d, T %d, C %d, L %d, %d heads, not the "
                 "V %d, T %d, C %d, L %d, %d heads asked for",
                 hd.V, hd.T, hd.C, hd.L, hd.n_heads, m->cfg.V, m->cfg.T,
                 m->cfg.C, m->cfg.L, m->cfg.n_heads);
    if (rc == KIT_OK) {
        memcpy(m->params, p, (size_t)m->n_params * sizeof *p);
        if (!kv_copies_equal(m, hd.kv_heads))
            rc = bad(why, n, path,
                     "its header says %d heads share %d K/V heads, but the "
                     "K/V columns are not their group's copies",
                     hd.n_heads, hd.kv_heads);
    }
    free(p);
    return rc;
}
