/*
 * resume.c: the networks of chapter 8's experiment saved and reloaded
 * (lm.h): their parameters, and beside them what their training was, for
 * --resume; the final networks' too, for --remeasure.
 *
 * --resume keeps every network that an earlier run into the same
 * RESULTS_DIR finished with the same settings (its parameters in
 * models/, and beside them NAME.bin.train: what its training depended on,
 * its validation curve and its wall time; load_record()), and trains
 * only the others, so that a run too long for one sitting can be
 * stopped and started again, losing only the networks under way. The
 * code is not among the settings: after changing it, delete models/.
 *
 * load_params() reads the 16-bit files of weights16.c as well, so
 * --remeasure and --resume take either.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <stdlib.h>
#include <string.h>

#define PARAMS_MAGIC "LMPARAM1"

void model_path(const struct lm *lm, int heads, int g, int lr_index, char *buf,
                size_t n)
{
    snprintf(buf, n, "%s/h%d_g%d_lr%d.bin", lm->models_dir, heads, g, lr_index);
}

/* A final network's parameters (seeds after the first): kept, so that
 * --remeasure reads them instead of training them again */
void seed_path(const struct lm *lm, int heads, int g, int lr_index, int s,
               char *buf, size_t n)
{
    snprintf(buf, n, "%s/h%d_g%d_lr%d_s%d.bin", lm->models_dir, heads, g,
             lr_index, s);
}

int save_params(const struct gpt_model *m, const char *path)
{
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return KIT_E_INPUT;
    const int head[6] = {m->cfg.V, m->cfg.T,       m->cfg.C,
                         m->cfg.L, m->cfg.n_heads, m->n_params};
    int ok = fwrite(PARAMS_MAGIC, 8, 1, f) == 1 &&
             fwrite(head, sizeof head, 1, f) == 1 &&
             fwrite(m->params, sizeof *m->params, (size_t)m->n_params, f) ==
                 (size_t)m->n_params;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0)
        return KIT_E_INPUT;
    return KIT_OK;
}

/* Either format, by its first 8 bytes: this file's 32-bit one, or the
 * 16-bit one of weights16.c (load_params16()). On an error, why (if not
 * NULL) says what is wrong with the file in one line. */
int load_params(struct gpt_model *m, const char *path, char *why, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (why)
            snprintf(why, n, "%s: cannot open it", path);
        return KIT_E_INPUT;
    }
    char magic[8] = {0};
    int head[6];
    const int want[6] = {m->cfg.V, m->cfg.T,       m->cfg.C,
                         m->cfg.L, m->cfg.n_heads, m->n_params};
    if (fread(magic, 8, 1, f) == 1 && !memcmp(magic, PARAMS16_MAGIC, 8)) {
        fclose(f);
        return load_params16(m, path, why, n);
    }
    int ok = !memcmp(magic, PARAMS_MAGIC, 8), sizes = 0;
    ok = ok && fread(head, sizeof head, 1, f) == 1 &&
         (sizes = !memcmp(head, want, sizeof head)) &&
         fread(m->params, sizeof *m->params, (size_t)m->n_params, f) ==
             (size_t)m->n_params &&
         fgetc(f) == EOF;
    fclose(f);
    if (!ok && why)
        snprintf(why, n, "%s: %s", path,
                 memcmp(magic, PARAMS_MAGIC, 8)
                     ? "not a network's parameters (it begins neither "
                       "\"" PARAMS_MAGIC "\" nor \"" PARAMS16_MAGIC "\")"
                 : !sizes ? "its header's sizes are not the network's"
                          : "truncated, or bytes after the parameters");
    return ok ? KIT_OK : KIT_E_INPUT;
}

/* What a saved network's training was, beside its parameters (PATH.train),
 * for --resume: a first line that names everything its training depended
 * on, then its wall time and its validation curve. A network is kept
 * only if that line is the one its training would have now; the code is
 * not in it (delete the models to train again after changing it). */
static void record_key(const struct lm *lm, const struct result *r, char *buf,
                       size_t n)
{
    snprintf(buf, n,
             "lm-network 1: V %d train %d val %d tokens %d steps %d "
             "points %d lr %a seed %llu heads %d kv %d B %d T %d C %d L %d",
             lm->d->V, lm->d->split_n[SPLIT_TRAIN], lm->val.n, r->tokens,
             r->steps, lm->sz.points, (double)r->lr,
             RUN_FIRST_SEED + (unsigned long long)r->seed_index, r->heads,
             r->kv_heads, lm->sz.B, lm->sz.T, lm->sz.C, lm->sz.L);
}

int save_record(const struct lm *lm, const struct result *r, const char *path)
{
    char key[300], file[700], tmp[710];
    record_key(lm, r, key, sizeof key);
    snprintf(file, sizeof file, "%s.train", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return KIT_E_INPUT;
    fprintf(f, "%s\ntrain_s %.17g points %d\n", key, r->train_s, r->n_points);
    for (int p = 0; p < r->n_points; p++)
        fprintf(f, "%d %.9g\n", r->curve_tokens[p], (double)r->val_curve[p]);
    const int ok = !ferror(f);
    if (fclose(f) != 0 || !ok || rename(tmp, file) != 0)
        return KIT_E_INPUT;
    return KIT_OK;
}

/* The record of path, if it is this network's: its curve and wall time
 * into r. */
int load_record(const struct lm *lm, struct result *r, const char *path)
{
    char key[300], line[400], file[700];
    record_key(lm, r, key, sizeof key);
    snprintf(file, sizeof file, "%s.train", path);
    FILE *f = fopen(file, "r");
    if (!f)
        return KIT_E_INPUT;
    int ok = fgets(line, sizeof line, f) != NULL;
    line[strcspn(line, "\n")] = 0;
    ok = ok && strcmp(line, key) == 0 && fgets(line, sizeof line, f);
    char *w[4] = {NULL};
    for (int k = 0; ok && k < 4; k++)
        ok = (w[k] = strtok(k ? NULL : line, " \n")) != NULL;
    long n = 0, tokens = 0;
    double x = 0;
    ok = ok && !strcmp(w[0], "train_s") && !strcmp(w[2], "points") &&
         run_read_double(w[1], &r->train_s) && run_read_long(w[3], &n) &&
         n >= 1 && n <= MAX_POINTS && !strtok(NULL, " \n");
    r->n_points = ok ? (int)n : 0;
    for (int p = 0; ok && p < r->n_points; p++) { /* "tokens loss" */
        char *a = fgets(line, sizeof line, f) ? strtok(line, " \n") : NULL;
        char *b = a ? strtok(NULL, " \n") : NULL;
        ok = b && !strtok(NULL, " \n") && run_read_long(a, &tokens) &&
             run_read_double(b, &x) && tokens >= 0 && tokens <= INT_MAX;
        r->curve_tokens[p] = (int)tokens, r->val_curve[p] = (float)x;
    }
    fclose(f);
    if (!ok)
        return KIT_E_INPUT;
    r->val_loss = r->val_curve[r->n_points - 1];
    return KIT_OK;
}
