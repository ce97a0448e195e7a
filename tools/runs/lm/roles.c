/*
 * roles.c: --roles P, chapter 8's roles as they appear (lm.h): one long
 * network per head count, measured at P checkpoints.
 */
#define _POSIX_C_SOURCE 200809L

#include "lm.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The checkpoints: step s_c = steps * (c / P)^2, c = 1 .. P, denser
 * early, where the loss moves fastest (repeats dropped). */
static int roles_steps(int steps, int P, int *at)
{
    int n = 0;
    for (int c = 1; c <= P; c++) {
        const int s = (int)((double)steps * c * c / ((double)P * P) + 0.5);
        if (s >= 1 && (n == 0 || s > at[n - 1]))
            at[n++] = s;
    }
    return n;
}

int roles_measure(struct gpt_model *m, const struct lm *lm,
                  struct roles_point *p, float *A)
{
    const int L = m->cfg.L, h = m->cfg.n_heads, N = lm->meas.n, T = lm->sz.T;
    const size_t TT = (size_t)T * T;
    int rc = lm_eval_loss(m, lm->val.x, lm->val.y, lm->val.n, T, &p->val_loss);
    if (rc == KIT_OK)
        rc = heads_weights(m, lm->meas.x, N, T, A);
    p->n_voita = p->n_weak = 0;
    p->top_share = p->off1_w = 0;
    for (int q = 0; q < R; q++)
        p->margin[q] = p->hard_margin[q] = -1;
    for (int k = 0; k < L * h && rc == KIT_OK; k++) {
        struct result one; /* only its first head's columns are used */
        const float *A_k = A + (size_t)k * N * TT;
        rc = head_offset_profile(A_k, N, T, LM_K, one.mean_w[0],
                                 one.top_share[0]);
        float share;
        if (rc == KIT_OK)
            best_offset(&one, 0, &share);
        if (rc != KIT_OK)
            break;
        p->n_voita += share >= HEADS_POSITIONAL;
        p->n_weak += share >= ROLES_WEAK;
        p->top_share = share > p->top_share ? share : p->top_share;
        p->off1_w = one.mean_w[0][1] > p->off1_w ? one.mean_w[0][1] : p->off1_w;
        for (int q = 0; q < R && rc == KIT_OK; q++) {
            float score, base;
            int off;
            if (lm->n_cases[q] == 0)
                continue;
            rc = relation_score(A_k, N, T, lm->word[q], lm->related[q],
                                lm->n_cases[q], &score, &base, &off);
            if (rc == KIT_OK && score - base > p->margin[q])
                p->margin[q] = score - base;
            if (rc == KIT_OK && lm->n_hard[q] > 0)
                rc = relation_score(A_k, N, T, lm->hword[q], lm->hrelated[q],
                                    lm->n_hard[q], &score, &base, &off);
            if (rc == KIT_OK && lm->n_hard[q] > 0 &&
                score - base > p->hard_margin[q])
                p->hard_margin[q] = score - base;
        }
    }
    return rc;
}

static int roles_job(int k, void *result, void *ctx)
{
    const struct lm *lm = ctx;
    struct roles_result *rr = result;
#ifdef _OPENMP
    omp_set_num_threads(lm->threads);
#endif
    const struct gpt_config cfg = model_config(lm, lm->sz.heads[k]);
    struct gpt_model m;
    int rc = gpt_init(&m, &cfg, RUN_FIRST_SEED);
    if (rc != KIT_OK)
        return rc;
    const int steps = lm->sz.tokens / (lm->sz.B * lm->sz.T);
    int at[MAX_CKPT];
    const int n_at = roles_steps(steps, lm->sz.points, at);
    struct gpt_train_config tc = gpt_default_train(steps);
    tc.lr = lm->sz.lr[0], tc.lr_min = tc.lr / 10;
    struct rng rng;
    lm_batches_seed(&rng, RUN_FIRST_SEED); /* as lm_train()'s */
    int *x = malloc((size_t)lm->sz.B * lm->sz.T * sizeof *x);
    int *y = malloc((size_t)lm->sz.B * lm->sz.T * sizeof *y);
    float *A = malloc((size_t)lm->sz.L * cfg.n_heads * lm->meas.n * lm->sz.T *
                      lm->sz.T * sizeof *A);
    rc = x && y && A ? KIT_OK : KIT_E_NOMEM;
    rr->heads = cfg.n_heads;
    double t_train = 0;
    const int last = lm->stop ? lm->stop / (lm->sz.B * lm->sz.T) : steps;
    for (int step = 0, c = 0; step < last && rc == KIT_OK; step++) {
        float loss;
        const double t0 = run_now();
        lm_train_batch(lm->d, &rng, lm->sz.B, lm->sz.T, x, y);
        rc = lm_train_step(&m, &tc, step, x, y, lm->sz.B, lm->sz.T, cfg.n_heads,
                           &loss);
        t_train += run_now() - t0;
        if (rc == KIT_OK && c < n_at && step + 1 == at[c]) {
            struct roles_point *p = &rr->p[rr->n++];
            p->tokens = (step + 1) * lm->sz.B * lm->sz.T;
            p->train_s = t_train;
            rc = roles_measure(&m, lm, p, A);
            fprintf(stderr,
                    PROG ": %d head%s, %d tokens: validation %.3f, "
                         "positional %d (%d by the weak rule)\n",
                    cfg.n_heads, cfg.n_heads > 1 ? "s" : "", p->tokens,
                    (double)p->val_loss, p->n_voita, p->n_weak);
            c++;
        }
    }
    if (rc == KIT_OK && rr->n == 0)
        rc = KIT_E_SIZE; /* --stop before the first checkpoint */
    if (rc == KIT_OK) {
        rr->final.L = cfg.L, rr->final.heads = cfg.n_heads,
        rr->final.kv_heads = cfg.n_heads;
        rr->final.val_loss = rr->p[rr->n - 1].val_loss;
        rc = lm_eval_loss(&m, lm->test.x, lm->test.y, lm->test.n, lm->sz.T,
                          &rr->final.test_loss);
    }
    if (rc == KIT_OK)
        rc = measure(&m, lm, &rr->final);
    char path[600]; /* kept, to measure again without training */
    snprintf(path, sizeof path, "%s/roles_h%d.bin", lm->models_dir,
             cfg.n_heads);
    if (rc == KIT_OK)
        rc = save_params(&m, path);
    free(x), free(y), free(A);
    gpt_free(&m);
    return rc;
}

/* run.values: what produced roles.csv, for the book (the command, the
 * machine, the wall time); the reference run's is committed with it */
static void roles_write_run(const struct lm *lm, const char *dir, int argc,
                            char **argv, double wall, int workers)
{
    struct out o;
    FILE *f = out_open(&o, dir, "run.values");
    fprintf(f, "# lm-experiment --roles: what produced roles.csv\n"
               "ch8roles.command=lm-experiment");
    for (int i = 1; i < argc; i++)
        fprintf(f, " %s", argv[i]);
    char cpu[160] = "unknown";
    FILE *c = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (c && fgets(line, sizeof line, c))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
            cpu[strcspn(cpu, "\n")] = 0;
            break;
        }
    if (c)
        fclose(c);
    struct rusage self, kids; /* the workers are child processes */
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    const double cpu_s =
        (double)self.ru_utime.tv_sec + (double)kids.ru_utime.tv_sec +
        (double)(self.ru_utime.tv_usec + kids.ru_utime.tv_usec) / 1e6;
    double load = 0; /* how busy the machine was at the end */
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        char buf[128];
        char *w = fgets(buf, sizeof buf, la) ? strtok(buf, " ") : NULL;
        if (!w || !run_read_double(w, &load))
            load = 0;
        fclose(la);
    }
    fprintf(f,
            "\nch8roles.cpu=%s\nch8roles.cores=%ld\nch8roles.workers=%d\n"
            "ch8roles.threads=%d\nch8roles.wall_min=%.1f\n"
            "ch8roles.cpu_min=%.0f\nch8roles.load_end=%.1f\n"
            "ch8roles.lr=%g\nch8roles.checkpoints=%d\n"
            "ch8roles.train_tokens=%d\n",
            cpu, sysconf(_SC_NPROCESSORS_ONLN), workers, lm->threads, wall / 60,
            cpu_s / 60, load, (double)lm->sz.lr[0], lm->sz.points,
            lm->d->split_n[SPLIT_TRAIN]);
    out_close(&o);
}

static void roles_name(int k, char *buf, size_t n, void *ctx)
{
    const struct lm *lm = ctx;
    snprintf(buf, n, "roles, %d head%s, lr %g, %d tokens", lm->sz.heads[k],
             lm->sz.heads[k] > 1 ? "s" : "", (double)lm->sz.lr[0],
             lm->sz.tokens);
}

static void roles_score(const void *result, char *buf, size_t n)
{
    const struct roles_result *rr = result;
    snprintf(buf, n, "validation %.3f, test %.3f nats",
             (double)rr->final.val_loss, (double)rr->final.test_loss);
}

static double roles_cost(int k, void *ctx)
{
    const struct lm *lm = ctx;
    return lm->sz.heads[k]; /* more heads, more T x T maps */
}

/* roles.csv: one row per (head count, checkpoint); and the final
 * networks' offsets, relations and ablation as the protocol writes them */
static void roles_write(const struct run *run, const struct lm *lm,
                        const char *dir, const struct roles_result *rr)
{
    struct run_col col[8 + 2 * R];
    char names[2 * R][24];
    int nc = 0;
    col[nc++] = (struct run_col){"heads", 0};
    col[nc++] = (struct run_col){"tokens", 0};
    col[nc++] = (struct run_col){"val_loss", 5};
    col[nc++] = (struct run_col){"positional_voita", 0};
    col[nc++] = (struct run_col){"positional_weak", 0};
    col[nc++] = (struct run_col){"top_share", 4};
    col[nc++] = (struct run_col){"offset1_weight", 4};
    relation_cols(col, &nc, names, "margin_");
    col[nc++] = (struct run_col){"train_s", 1};
    /* after train_s: older files end there */
    relation_cols(col, &nc, names + R, "hard_margin_");
    struct run_csv csv;
    run_csv_open(&csv, run, dir, "roles.csv", NULL, col, nc);
    for (int k = 0; k < lm->sz.n_heads; k++)
        for (int c = 0; c < rr[k].n; c++) {
            const struct roles_point *p = &rr[k].p[c];
            double v[8 + 2 * R];
            int j = 0;
            v[j++] = rr[k].heads, v[j++] = p->tokens, v[j++] = p->val_loss;
            v[j++] = p->n_voita, v[j++] = p->n_weak, v[j++] = p->top_share;
            v[j++] = p->off1_w;
            for (int q = 0; q < R; q++)
                v[j++] = p->margin[q];
            v[j++] = p->train_s;
            for (int q = 0; q < R; q++)
                v[j++] = p->hard_margin[q];
            run_csv_row(&csv, NULL, v);
        }
    run_csv_close(&csv);
    const struct result *meas[MAX_HC];
    for (int k = 0; k < lm->sz.n_heads; k++)
        meas[k] = &rr[k].final;
    write_offsets(run, dir, meas, lm->sz.n_heads);
    write_relations(run, lm, dir, meas, lm->sz.n_heads);
    write_ablation(run, dir, meas, lm->sz.n_heads);
    write_sentence(run, lm, dir, meas, lm->sz.n_heads);
    write_tag_profiles(lm, dir, meas, lm->sz.n_heads);
}

/* --roles P: the networks of every head count of lm's size trained at
 * its one rate and measured at P checkpoints, into dir (roles.csv and
 * the final networks' files, run.values); cores: the machine's */
void roles_main(struct run *run, struct lm *lm, const char *dir, int roles,
                int argc, char **argv, long cores)
{
    if (strlen(dir) > 400)
        run_fail(run, 2, "RESULTS_DIR is too long (%zu characters)",
                 strlen(dir));
    lm->sz.points = roles;
    char models[512];
    snprintf(models, sizeof models, "%s/models", dir);
    make_dir(run, dir);
    make_dir(run, models);
    lm->models_dir = models;
    const int busy =
        run->workers < lm->sz.n_heads ? run->workers : lm->sz.n_heads;
    lm->threads = (int)(cores / busy) > 1 ? (int)(cores / busy) : 1;
    make_dir(run, dir);
    struct roles_result *rr = run_calloc(run, lm->sz.n_heads, sizeof *rr);
    struct run_jobs rj = {sizeof *rr,  roles_job, roles_name,
                          roles_score, lm,        roles_cost};
    run->seeds = 1;
    const double t0 = run_now();
    run_jobs(run, lm->sz.n_heads, &rj, rr);
    const double wall = run_now() - t0;
    write_baselines(run, lm, dir);
    roles_write(run, lm, dir, rr);
    roles_write_run(lm, dir, argc, argv, wall, busy);
    printf("Roles run: %d head counts, %d tokens each at lr %g, %d "
           "checkpoints; wall time %.1f min on %d worker%s x %d "
           "thread%s.\n(written: %s/roles.csv, baselines.csv, "
           "offsets.csv, relations.csv, ablation.csv, sentence/)\n",
           lm->sz.n_heads, lm->sz.tokens, (double)lm->sz.lr[0], roles,
           wall / 60, busy, busy > 1 ? "s" : "", lm->threads,
           lm->threads > 1 ? "s" : "", dir);
    free(rr);
}
