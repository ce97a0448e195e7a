/*
 * heads_lm.c: chapter 8's measurements of the trained model's heads,
 * the given part (heads_lm.h): relation cases from Brown's tags, the
 * heads' outputs recomputed from a forward pass, the ablation hook it
 * sets on the model (gpt.h's after_attention), and the driver that
 * ablates every head in turn and measures the loss per tag class. Not an exercise: the exercises
 * (head_offset_profile, relation_score, mean_ablate_head) are in the
 * student's ch8_lm.c.
 *
 * Dimension letters (see heads_lm.h and gpt.h):
 *   N = sequences, T = tokens per sequence, C = d_model, h = heads,
 *   d_head = C / h, L = blocks.
 */
#include "heads_lm.h"

#include "attention.h"
#include "corpus.h"
#include "gpt.h"
#include "mha.h"

#include <stdlib.h>
#include <string.h>

#define TRY(call)                                                              \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != KIT_OK)                                                     \
            return rc_;                                                        \
    } while (0)

/* ---------------------------------------------------------------------
 * Relation cases from Brown's tags
 * ------------------------------------------------------------------- */

static const char *const relation_names[HEADS_N_RELATIONS] = {
    "noun -> determiner", "noun -> adjective", "object -> preposition",
    "verb -> subject pronoun", "noun -> possessive pronoun"};

const char *heads_relation_name(int rel)
{
    return rel >= 0 && rel < HEADS_N_RELATIONS ? relation_names[rel] : "?";
}

/* The core of a Brown tag, upper case, into b (16 chars): no "FW-"
 * prefix, nothing from the first '+' or '-' ("PPSS+MD" is "PPSS",
 * "NN-TL" is "NN"). NULL is "". */
static void tag_core(const char *tag, char *b)
{
    int n = 0;
    if (tag && (tag[0] == 'f' || tag[0] == 'F') &&
        (tag[1] == 'w' || tag[1] == 'W') && tag[2] == '-')
        tag += 3;
    for (; tag && tag[n] && tag[n] != '+' && tag[n] != '-' && n < 15; n++)
        b[n] = (tag[n] >= 'a' && tag[n] <= 'z') ? (char)(tag[n] - 32) : tag[n];
    b[n] = '\0';
}

/* What the rules ask of one token. */
struct tok {
    int cls;    /* enum corpus_tag_class */
    int poss;   /* PP$: his, their       */
    int subj;   /* PPS, PPSS (+ ...)     */
    int adverb; /* RB..., and "not" (*)  */
};

static struct tok tok_of(const char *tag)
{
    char b[16];
    tag_core(tag, b);
    struct tok t = {corpus_tag_class(tag), strcmp(b, "PP$") == 0,
                    strncmp(b, "PPS", 3) == 0,
                    strncmp(b, "RB", 2) == 0 || strcmp(b, "*") == 0};
    return t;
}

/* Record case (w, r) as the n-th, if there is room. */
static void emit(int *word, int *related, int max_cases, int n, int w, int r)
{
    if (n < max_cases)
        word[n] = w, related[n] = r;
}

/* @listing heads_relation_cases */
/* The cases of relation rel in one sequence of T tags; the rules are
 * written out in heads_lm.h. */
int heads_relation_cases(const char *const *tags, int T, int rel, int offset,
                         int *word, int *related, int max_cases)
{
    if (!tags || (max_cases > 0 && (!word || !related)))
        return KIT_E_NULL;
    if (T <= 0 || max_cases < 0 || rel < 0 || rel >= HEADS_N_RELATIONS)
        return KIT_E_SIZE;
    int n = 0;
    for (int i = 0; i < T; i++) {
        const struct tok ti = tok_of(tags[i]);
        int j;
        switch (rel) {
        case HEADS_REL_NOUN_DET: /* back over adjectives, determiners */
            if (ti.cls != TAG_NOUN)
                break;
            for (j = i - 1; j >= 0; j--) {
                const int c = tok_of(tags[j]).cls;
                if (c == TAG_DET) {
                    emit(word, related, max_cases, n++, offset + i, offset + j);
                    break;
                }
                if (c != TAG_ADJ)
                    break;
            }
            break;
        case HEADS_REL_NOUN_ADJ: /* back over a compound's nouns */
            if (ti.cls != TAG_NOUN)
                break;
            for (j = i - 1; j >= 0 && tok_of(tags[j]).cls == TAG_NOUN; j--)
                ;
            if (j >= 0 && tok_of(tags[j]).cls == TAG_ADJ)
                emit(word, related, max_cases, n++, offset + i, offset + j);
            break;
        case HEADS_REL_PREP_OBJ: /* forward over det, adj, PP$ */
            if (ti.cls != TAG_PREP)
                break;
            for (j = i + 1; j < T; j++) {
                const struct tok tj = tok_of(tags[j]);
                if (tj.cls != TAG_DET && tj.cls != TAG_ADJ && !tj.poss)
                    break;
            }
            if (j >= T)
                break;
            if (tok_of(tags[j]).cls == TAG_PRON) {
                emit(word, related, max_cases, n++, offset + j, offset + i);
            } else if (tok_of(tags[j]).cls == TAG_NOUN) {
                while (j + 1 < T && tok_of(tags[j + 1]).cls == TAG_NOUN)
                    j++; /* the compound's last noun is its head */
                emit(word, related, max_cases, n++, offset + j, offset + i);
            }
            break;
        case HEADS_REL_VERB_SUBJ: /* back over verbs, adverbs, "not" */
            if (ti.cls != TAG_VERB)
                break;
            for (j = i - 1; j >= 0; j--) {
                const struct tok tj = tok_of(tags[j]);
                if (tj.cls != TAG_VERB && !tj.adverb)
                    break;
            }
            if (j >= 0 && tok_of(tags[j]).subj)
                emit(word, related, max_cases, n++, offset + i, offset + j);
            break;
        case HEADS_REL_NOUN_POSS: /* back over adjectives */
            if (ti.cls != TAG_NOUN)
                break;
            for (j = i - 1; j >= 0 && tok_of(tags[j]).cls == TAG_ADJ; j--)
                ;
            if (j >= 0 && tok_of(tags[j]).poss)
                emit(word, related, max_cases, n++, offset + i, offset + j);
            break;
        }
    }
    return n;
}
/* @end heads_relation_cases */

/* ---------------------------------------------------------------------
 * The heads' outputs, and the ablation hook
 * ------------------------------------------------------------------- */

/* concat (T, C): head i's block is A_i V_i, with V = ln1 W_v (V is
 * scratch, (T, C)) and A_i = weights + i*T*T. */
static int concat_from_weights(const float *weights, const float *ln1,
                               const float *W_v, float *V, float *concat, int T,
                               int C, int h)
{
    const int d_head = C / h;
    TRY(matmul(ln1, W_v, V, T, C, C));
    for (int i = 0; i < h; i++) {
        const float *A_i = weights + (size_t)i * T * T;
        for (int t = 0; t < T; t++)
            for (int c = 0; c < d_head; c++) {
                double sum = 0.0;
                for (int j = 0; j < T; j++) /* j > t: weight 0 */
                    sum += (double)A_i[t * T + j] * V[j * C + i * d_head + c];
                concat[t * C + i * d_head + c] = (float)sum;
            }
    }
    return KIT_OK;
}

int heads_block_concat(const struct gpt_model *m, int l, int b, float *concat,
                       float *weights)
{
    if (!m || !concat || !weights)
        return KIT_E_NULL;
    if (m->B <= 0 || l < 0 || l >= m->cfg.L || b < 0 || b >= m->B)
        return KIT_E_SIZE;
    const int T = m->T, C = m->cfg.C, N = m->B * m->T;
    const float *ln1 = m->a.ln1 + ((size_t)l * N + (size_t)b * T) * C;
    struct mha_weights w = gpt_block_attn(&m->p, &m->cfg, l);
    float *scratch = malloc(2 * (size_t)T * C * sizeof *scratch);
    if (!scratch)
        return KIT_E_NOMEM;
    /* the student's layer once more, for its weights (its output,
     * already in m->a.attn, goes to scratch) */
    int rc = mha_forward(&m->attn_cfg, &w, ln1, scratch, weights, T);
    if (rc == KIT_OK)
        rc = concat_from_weights(weights, ln1, w.W_v, scratch + (size_t)T * C,
                                 concat, T, C, m->cfg.n_heads);
    free(scratch);
    return rc;
}

/* @listing heads_apply_ablation */
/* The hook, for every block: in block ab->block, out += (concat' -
 * concat) W_o, concat' = concat with the head's block replaced by its
 * mean: out becomes concat' W_o. */
int heads_apply_ablation(void *ctx, const struct gpt_model *m, int block,
                         const float *ln1, float *out, int T)
{
    const struct gpt_ablation *ab = ctx;
    if (!m || !ab || !ab->mean || !ln1 || !out)
        return KIT_E_NULL;
    const int C = m->cfg.C, h = m->cfg.n_heads;
    if (ab->block < 0 || ab->block >= m->cfg.L || ab->head < 0 ||
        ab->head >= h || T <= 0)
        return KIT_E_SIZE;
    if (block != ab->block)
        return KIT_OK; /* another block: its output stays */
    const size_t TC = (size_t)T * C;
    struct mha_weights w = gpt_block_attn(&m->p, &m->cfg, ab->block);
    float *V = malloc((4 * TC + (size_t)h * T * T) * sizeof *V);
    if (!V)
        return KIT_E_NOMEM;
    float *concat = V + TC, *delta = concat + TC, *change = delta + TC;
    float *weights = change + TC; /* (h, T, T) */
    /* 1. the heads' outputs, from the weights of the student's layer
     * (run once more: the model's fast path keeps no weights) */
    int rc = mha_forward(&m->attn_cfg, &w, ln1, change, weights, T);
    if (rc == KIT_OK)
        rc = concat_from_weights(weights, ln1, w.W_v, V, concat, T, C, h);
    /* 2. the student's ablation on a copy; 3. what it changed */
    if (rc == KIT_OK) {
        memcpy(delta, concat, TC * sizeof *delta);
        rc = mean_ablate_head(delta, ab->mean, T, C, h, ab->head);
    }
    if (rc == KIT_OK) {
        for (size_t k = 0; k < TC; k++)
            delta[k] -= concat[k];
        /* 4. through W_o, into the layer's output */
        rc = matmul(delta, w.W_o, change, T, C, C);
    }
    if (rc == KIT_OK)
        for (size_t k = 0; k < TC; k++)
            out[k] += change[k];
    free(V);
    return rc;
}
/* @end heads_apply_ablation */

void heads_set_ablation(struct gpt_model *m, const struct gpt_ablation *ab)
{
    m->after_attention = ab ? heads_apply_ablation : NULL;
    m->hook_ctx = (void *)ab; /* the hook only reads it */
}

const struct gpt_ablation *heads_ablation_of(const struct gpt_model *m)
{
    return m->after_attention == heads_apply_ablation ? m->hook_ctx : NULL;
}

/* ---------------------------------------------------------------------
 * The driver: every head's mean, and the loss without each head
 * ------------------------------------------------------------------- */

int heads_means(struct gpt_model *m, const int *x, int n_seq, int T,
                float *means)
{
    if (!m || !x || !means)
        return KIT_E_NULL;
    if (n_seq <= 0 || T <= 0 || T > m->cfg.T || m->cfg.B <= 0)
        return KIT_E_SIZE;
    const int L = m->cfg.L, C = m->cfg.C;
    double *sum = calloc((size_t)L * C, sizeof *sum); /* (L, h, d_head) */
    float *concat = malloc((size_t)T * C * sizeof *concat);
    float *weights = malloc((size_t)m->cfg.n_heads * T * T * sizeof *weights);
    int rc = sum && concat && weights ? KIT_OK : KIT_E_NOMEM;
    heads_set_ablation(m, NULL);
    for (int s = 0; s < n_seq && rc == KIT_OK; s += m->cfg.B) {
        const int B = n_seq - s < m->cfg.B ? n_seq - s : m->cfg.B;
        rc = gpt_forward(m, x + (size_t)s * T, NULL, B, T);
        for (int l = 0; l < L && rc == KIT_OK; l++)
            for (int b = 0; b < B && rc == KIT_OK; b++) {
                rc = heads_block_concat(m, l, b, concat, weights);
                /* head i's block of concat is columns i*d_head.., so
                 * (L, h, d_head) is (L, C): add up the rows */
                for (int t = 0; rc == KIT_OK && t < T; t++)
                    for (int c = 0; c < C; c++)
                        sum[(size_t)l * C + c] += concat[(size_t)t * C + c];
            }
    }
    if (rc == KIT_OK)
        for (int k = 0; k < L * C; k++)
            means[k] = (float)(sum[k] / ((double)n_seq * T));
    free(sum);
    free(concat);
    free(weights);
    return rc;
}

/* The loss summed per target class over the n_seq sequences, with
 * m's hook as it is: sum (TAG_N_CLASSES) += . */
static int class_losses(struct gpt_model *m, const int *x, const int *targets,
                        const unsigned char *cls, int n_seq, int T, double *sum)
{
    for (int s = 0; s < n_seq; s += m->cfg.B) {
        const int B = n_seq - s < m->cfg.B ? n_seq - s : m->cfg.B;
        const size_t at = (size_t)s * T;
        TRY(gpt_forward(m, x + at, targets + at, B, T));
        for (int k = 0; k < B * T; k++)
            sum[cls[at + k]] += m->a.losses[k];
    }
    return KIT_OK;
}

/* @listing heads_ablation_scan */
/* The loss per class of the predicted word, without each head in turn
 * (its mean in its place), and without ablation. */
int heads_ablation_scan(struct gpt_model *m, const int *x, const int *targets,
                        const unsigned char *target_class, int n_seq, int T,
                        const float *means, float *loss, float *base,
                        int *count)
{
    if (!m || !x || !targets || !target_class || !means || !loss || !base ||
        !count)
        return KIT_E_NULL;
    if (n_seq <= 0 || T <= 0 || T > m->cfg.T || m->cfg.B <= 0)
        return KIT_E_SIZE;
    const size_t n = (size_t)n_seq * T;
    for (size_t k = 0; k < n; k++)
        if (target_class[k] >= TAG_N_CLASSES)
            return KIT_E_SIZE;
    const int L = m->cfg.L, h = m->cfg.n_heads, d_head = m->cfg.C / h;
    const int NC = TAG_N_CLASSES;
    int n_c[TAG_N_CLASSES] = {0};
    for (size_t k = 0; k < n; k++)
        n_c[target_class[k]]++;
    /* 1. the loss with every head: the baseline */
    double sum[TAG_N_CLASSES] = {0};
    heads_set_ablation(m, NULL);
    TRY(class_losses(m, x, targets, target_class, n_seq, T, sum));
    for (int c = 0; c < NC; c++) {
        base[c] = n_c[c] ? (float)(sum[c] / n_c[c]) : 0.0f;
        count[c] = n_c[c];
    }
    /* 2. each head in turn replaced by its mean */
    for (int l = 0; l < L; l++)
        for (int i = 0; i < h; i++) {
            struct gpt_ablation ab = {l, i,
                                      means + ((size_t)l * h + i) * d_head};
            memset(sum, 0, sizeof sum);
            heads_set_ablation(m, &ab);
            int rc = class_losses(m, x, targets, target_class, n_seq, T, sum);
            heads_set_ablation(m, NULL);
            if (rc != KIT_OK)
                return rc;
            for (int c = 0; c < NC; c++)
                loss[((size_t)l * h + i) * NC + c] =
                    n_c[c] ? (float)(sum[c] / n_c[c]) : 0.0f;
        }
    return KIT_OK;
}
/* @end heads_ablation_scan */

/* ---------------------------------------------------------------------
 * The run's measures: every head's weights, how sharp they are, the
 * tag profiles, the lesson's sentence
 * ------------------------------------------------------------------- */

int heads_weights(struct gpt_model *m, const int *x, int n_seq, int T, float *A)
{
    if (!m || !x || !A)
        return KIT_E_NULL;
    const int L = m->cfg.L, h = m->cfg.n_heads, N = n_seq;
    const size_t TT = (size_t)T * T;
    float *concat = malloc((size_t)T * m->cfg.C * sizeof *concat);
    float *weights = malloc((size_t)h * TT * sizeof *weights);
    int rc = concat && weights ? KIT_OK : KIT_E_NOMEM;
    m->after_attention = NULL;
    for (int s = 0; s < N && rc == KIT_OK; s += m->cfg.B) {
        const int B = N - s < m->cfg.B ? N - s : m->cfg.B;
        rc = gpt_forward(m, x + (size_t)s * T, NULL, B, T);
        for (int l = 0; l < L && rc == KIT_OK; l++)
            for (int b = 0; b < B && rc == KIT_OK; b++) {
                rc = heads_block_concat(m, l, b, concat, weights);
                for (int i = 0; i < h && rc == KIT_OK; i++)
                    memcpy(A + ((size_t)(l * h + i) * N + s + b) * TT,
                           weights + i * TT, TT * sizeof *A);
            }
    }
    free(concat), free(weights);
    return rc;
}

float heads_row_max(const float *A, int N, int T, int K)
{
    const size_t TT = (size_t)T * T;
    double sum = 0;
    for (int n = 0; n < N; n++)
        for (int i = K; i < T; i++) {
            const float *row = A + (size_t)n * TT + (size_t)i * T;
            float top = 0;
            for (int j = 0; j <= i; j++)
                top = row[j] > top ? row[j] : top;
            sum += top;
        }
    return (float)(sum / ((double)N * (T - K)));
}

/* @listing heads_tag_profile */
void heads_tag_profile(const float *A, const unsigned char *x_class, int N,
                       int T, int K, int k, float *mass, long *q)
{
    enum { NC = TAG_N_CLASSES };
    double sum[NC * NC] = {0};
    long n_q[NC] = {0};
    for (int n = 0; n < N; n++) {
        const unsigned char *cl = x_class + (size_t)n * T;
        for (int i = K; i < T; i++) {
            const int cf = cl[i];
            n_q[cf]++;
            if (A) {
                const float *row = A + ((size_t)n * T + i) * T;
                for (int j = 0; j <= i; j++)
                    sum[cf * NC + cl[j]] += row[j];
            } else if (k >= 0)
                sum[cf * NC + cl[i - k]] += 1;
            else
                for (int j = 0; j <= i; j++)
                    sum[cf * NC + cl[j]] += 1.0 / (i + 1);
        }
    }
    for (int c = 0; c < NC * NC; c++)
        mass[c] = n_q[c / NC] ? (float)(sum[c] / n_q[c / NC]) : 0.0f;
    if (q)
        memcpy(q, n_q, sizeof n_q);
}
/* @end heads_tag_profile */

int heads_sentence_weights(struct gpt_model *m, const int *sent, int S,
                           float *w)
{
    if (!m || !sent || !w)
        return KIT_E_NULL;
    const int L = m->cfg.L, h = m->cfg.n_heads;
    float *concat = malloc((size_t)S * m->cfg.C * sizeof *concat);
    float *weights = malloc((size_t)h * S * S * sizeof *weights);
    int rc = concat && weights ? KIT_OK : KIT_E_NOMEM;
    if (rc == KIT_OK)
        rc = gpt_forward(m, sent, NULL, 1, S);
    for (int l = 0; l < L && rc == KIT_OK; l++) {
        rc = heads_block_concat(m, l, 0, concat, weights);
        for (int i = 0; i < h && rc == KIT_OK; i++)
            memcpy(w + (size_t)(l * h + i) * S * S, weights + (size_t)i * S * S,
                   (size_t)S * S * sizeof *w);
    }
    free(concat), free(weights);
    return rc;
}

int heads_sentence_ablation(struct gpt_model *m, const int *sent, int S,
                            const float *means, float *base, float *abl,
                            int stride)
{
    if (!m || !sent || !means || !base || !abl)
        return KIT_E_NULL;
    if (S < 2 || stride < S - 1)
        return KIT_E_SIZE;
    const int HL = m->cfg.L * m->cfg.n_heads, NC = TAG_N_CLASSES;
    float *loss = malloc((size_t)HL * NC * sizeof *loss);
    unsigned char *cls = malloc((size_t)S);
    int rc = loss && cls ? KIT_OK : KIT_E_NOMEM;
    float b[TAG_N_CLASSES];
    int count[TAG_N_CLASSES];
    for (int t = 0; t + 1 < S && rc == KIT_OK; t++) {
        for (int j = 0; j + 1 < S; j++)
            cls[j] = j == t ? 0 : 1;
        rc = heads_ablation_scan(m, sent, sent + 1, cls, 1, S - 1, means, loss,
                                 b, count);
        base[t] = b[0];
        for (int k = 0; k < HL && rc == KIT_OK; k++)
            abl[(size_t)k * stride + t] = loss[(size_t)k * NC];
    }
    free(loss), free(cls);
    return rc;
}
