/*
 * explore.c: --explore-dump WEIGHTS_FILE OUT.json (lm.h): what the C
 * forward pass computes for one kept network, on fixed inputs, for the
 * head explorer (tools/explorer/) to be checked against: the page runs
 * the same kept weights through its own JavaScript forward pass, and
 * tools/checks/explorer.js compares the two.
 *
 * The network is WEIGHTS_FILE, a kept file of weights16.c (the form
 * the kit keeps its networks in and the page embeds), read with
 * load_params(); its sizes are its header's, and its vocabulary and
 * context must be the run's (--size, --corpus). The inputs:
 *   "parsed"   "the delivery truck blocked the narrow street", the
 *              lesson's sentence as the parser links it (chapter 8)
 *   "lesson"   the lesson's sentence itself (setup.c), 13 tokens
 *   "test N"   the first EXPLORE_WINDOWS test windows of the size
 *              (lm->test; fewer when the size has fewer), T tokens each
 * and for each:
 *   ids             its tokens (vocabulary ids)
 *   attention       every head's weights, (L*h, S, S), block l's head i
 *                   at (l*h + i)*S*S (heads_weights())
 *   logits          every position's logits (S, V), gpt_forward()
 *                   without targets
 *   loss            the mean, over positions 0 .. S-2, of -log
 *                   softmax(logits)[the next token of the input]
 *   ablated_logits, ablated_loss
 *                   the same with block EXPLORE_BLOCK's head
 *                   EXPLORE_HEAD mean-ablated (heads_set_ablation(), as
 *                   parsed.c's ablate_chosen() does)
 * and once: the means of every head's output over every position of
 * the measurement windows (heads_means(), lm->meas), (L, h, d_head), the
 * ones the mean-ablation uses and the explorer embeds; the vocabulary
 * (V words, id order, "<unk>" first).
 *
 * The arrays of floats are written as base64 of their float32 values,
 * little-endian whatever the machine's order ("f32le:" before the
 * base64): exact, and under half the size of the 9 significant digits
 * a float32 needs in decimal (the logits of 20 windows of 64 tokens at
 * V 8192 are 10 million numbers).
 * Integers are JSON numbers. The file is written through OUT.json.tmp
 * and a rename, as the run's CSV files are.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXPLORE_WINDOWS 20
#define EXPLORE_BLOCK   0
#define EXPLORE_HEAD    0

static const char *const parsed_sentence =
    "the delivery truck blocked the narrow street";

/* n floats as "f32le:BASE64", a JSON string */
static void put_f32(FILE *f, const float *x, size_t n)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char buf[3];
    int have = 0;
    fputs("\"f32le:", f);
    for (size_t k = 0; k < n; k++) {
        uint32_t b;
        memcpy(&b, &x[k], sizeof b);
        for (int j = 0; j < 4; j++) {
            buf[have++] = (unsigned char)(b >> (8 * j));
            if (have == 3) {
                const uint32_t v =
                    (uint32_t)buf[0] << 16 | (uint32_t)buf[1] << 8 | buf[2];
                fputc(b64[v >> 18], f), fputc(b64[(v >> 12) & 63], f);
                fputc(b64[(v >> 6) & 63], f), fputc(b64[v & 63], f);
                have = 0;
            }
        }
    }
    if (have > 0) {
        const uint32_t v =
            (uint32_t)buf[0] << 16 | (uint32_t)(have > 1 ? buf[1] : 0) << 8;
        fputc(b64[v >> 18], f), fputc(b64[(v >> 12) & 63], f);
        fputc(have > 1 ? b64[(v >> 6) & 63] : '=', f), fputc('=', f);
    }
    fputc('"', f);
}

/* s as a JSON string */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* The mean loss over positions 0 .. S-2 of logits (S, V), each
 * predicting the next token of ids, in double */
static double next_loss(const float *logits, const int *ids, int S, int V)
{
    double sum = 0;
    for (int t = 0; t + 1 < S; t++) {
        const float *row = logits + (size_t)t * V;
        float mx = row[0];
        for (int v = 1; v < V; v++)
            mx = row[v] > mx ? row[v] : mx;
        double z = 0;
        for (int v = 0; v < V; v++)
            z += exp((double)row[v] - mx);
        sum += log(z) + mx - row[ids[t + 1]];
    }
    return S > 1 ? sum / (S - 1) : 0;
}

/* One input's object: its weights, its logits as they are and with the
 * head ablated (ab), its losses; logits (S, V) and A (L*h, S, S) are
 * scratch */
static int dump_input(FILE *f, struct gpt_model *m, const char *name,
                      const int *ids, int S, const struct gpt_ablation *ab,
                      float *A, float *logits)
{
    const int V = m->cfg.V, H = m->cfg.L * m->cfg.n_heads;
    int rc = heads_weights(m, ids, 1, S, A);
    if (rc != KIT_OK)
        return rc;
    fprintf(f, "{\"name\": ");
    put_str(f, name);
    fprintf(f, ", \"S\": %d, \"ids\": [", S);
    for (int t = 0; t < S; t++)
        fprintf(f, "%s%d", t ? ", " : "", ids[t]);
    fprintf(f, "],\n  \"attention\": ");
    put_f32(f, A, (size_t)H * S * S);
    for (int k = 0; k < 2; k++) { /* as it is, then ablated */
        heads_set_ablation(m, k ? ab : NULL);
        rc = gpt_forward(m, ids, NULL, 1, S);
        heads_set_ablation(m, NULL);
        if (rc != KIT_OK)
            return rc;
        memcpy(logits, m->a.logits, (size_t)S * V * sizeof *logits);
        fprintf(f, ",\n  \"%slogits\": ", k ? "ablated_" : "");
        put_f32(f, logits, (size_t)S * V);
        fprintf(f, ",\n  \"%sloss\": %.9g", k ? "ablated_" : "",
                next_loss(logits, ids, S, V));
    }
    fprintf(f, "}");
    return KIT_OK;
}

static int dump(FILE *f, const struct lm *lm, struct gpt_model *m,
                const struct params16_head *hd, const char *weights)
{
    const struct gpt_config *cfg = &m->cfg;
    const int T = cfg->T, h = cfg->n_heads, d_head = cfg->C / h;
    const int H = cfg->L * h;
    float *means = malloc((size_t)H * d_head * sizeof *means);
    float *A = malloc((size_t)H * T * T * sizeof *A);
    float *logits = malloc((size_t)T * cfg->V * sizeof *logits);
    int rc = means && A && logits ? KIT_OK : KIT_E_NOMEM;
    if (rc == KIT_OK)
        rc = heads_means(m, lm->meas.x, lm->meas.n, lm->sz.T, means);
    const struct gpt_ablation ab = {EXPLORE_BLOCK, EXPLORE_HEAD,
                                    means + (EXPLORE_BLOCK * h + EXPLORE_HEAD) *
                                                d_head};
    fprintf(f, "{\"format\": \"lm-explore-dump 1\",\n\"weights\": ");
    put_str(f, weights);
    fprintf(f,
            ",\n\"V\": %d, \"T\": %d, \"C\": %d, \"L\": %d, \"n_heads\": %d, "
            "\"kv_heads\": %d, \"seed\": %llu, \"size\": ",
            cfg->V, T, cfg->C, cfg->L, h, hd->kv_heads, hd->seed);
    put_str(f, lm->sz.name);
    fprintf(f,
            ",\n\"ablation\": {\"block\": %d, \"head\": %d},\n"
            "\"means_windows\": %d,\n\"means\": ",
            EXPLORE_BLOCK, EXPLORE_HEAD, lm->meas.n);
    if (rc == KIT_OK)
        put_f32(f, means, (size_t)H * d_head);
    fprintf(f, ",\n\"vocab\": [");
    for (int v = 0; v < cfg->V; v++) {
        fputs(v ? (v % 16 ? ", " : ",\n") : "", f);
        put_str(f, lm->d->vocab[v]);
    }
    fprintf(f, "],\n\"inputs\": [\n");
    int ids[MAX_T];
    const int n_parsed = corpus_encode(lm->d, parsed_sentence, ids, MAX_T);
    if (rc == KIT_OK)
        rc = dump_input(f, m, "parsed", ids, n_parsed, &ab, A, logits);
    fprintf(f, ",\n");
    if (rc == KIT_OK)
        rc = dump_input(f, m, "lesson", lm->sent, lm->n_sent, &ab, A, logits);
    const int n_win =
        lm->test.n < EXPLORE_WINDOWS ? lm->test.n : EXPLORE_WINDOWS;
    for (int w = 0; w < n_win && rc == KIT_OK; w++) {
        char name[32];
        snprintf(name, sizeof name, "test %d", w + 1);
        fprintf(f, ",\n");
        rc = dump_input(f, m, name, lm->test.x + (size_t)w * T, T, &ab, A,
                        logits);
    }
    fprintf(f, "\n]}\n");
    free(means), free(A), free(logits);
    return rc;
}

void explore_main(struct run *run, const struct lm *lm, const char *weights,
                  const char *out)
{
    struct params16_head hd = {0};
    char why[600];
    FILE *f = fopen(weights, "rb");
    char magic[8] = {0};
    const int is16 =
        f && fread(magic, 8, 1, f) == 1 && !memcmp(magic, PARAMS16_MAGIC, 8);
    if (f)
        fclose(f);
    if (!is16)
        run_fail(run, 1,
                 "--explore-dump: %s is not a kept network (weights16.c) "
                 "(--pack writes them)",
                 weights);
    if (read_params16(weights, &hd, NULL, 0, why, sizeof why) != KIT_OK)
        run_fail(run, 1, "--explore-dump: %s", why);
    if (hd.V != lm->d->V || hd.T != lm->sz.T)
        run_fail(run, 1,
                 "--explore-dump: %s is a network of V %d and context %d; "
                 "the corpus has V %d and size %s a context of %d",
                 weights, hd.V, hd.T, lm->d->V, lm->sz.name, lm->sz.T);
    const struct gpt_config cfg = {.V = hd.V,
                                   .T = hd.T,
                                   .C = hd.C,
                                   .L = hd.L,
                                   .n_heads = hd.n_heads,
                                   .B = LM_EVAL_B};
    struct gpt_model m;
    int rc = gpt_init(&m, &cfg, hd.seed);
    if (rc != KIT_OK)
        run_fail(run, 1, "--explore-dump: %s: %s", weights, kit_strerror(rc));
    if (hd.kv_heads < hd.n_heads)
        gpt_kv_share(&m, hd.kv_heads, GPT_KV_COPY);
    if (load_params(&m, weights, why, sizeof why) != KIT_OK)
        run_fail(run, 1, "--explore-dump: %s", why);
    struct out o = {0};
    snprintf(o.path, sizeof o.path, "%s", out);
    snprintf(o.tmp, sizeof o.tmp, "%s.tmp", out);
    o.f = fopen(o.tmp, "w");
    if (!o.f)
        run_fail(run, 1, "--explore-dump: cannot write %s", o.tmp);
    rc = dump(o.f, lm, &m, &hd, weights);
    gpt_free(&m);
    if (rc != KIT_OK) {
        fclose(o.f);
        remove(o.tmp);
        run_fail(run, 1, "--explore-dump: %s: %s", weights, kit_strerror(rc));
    }
    out_close(&o);
    fprintf(stderr,
            PROG ": %s: %d head%s a block, the inputs' weights and logits\n",
            out, hd.n_heads, hd.n_heads > 1 ? "s" : "");
}
