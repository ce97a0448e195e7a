/*
 * relations.c: chapter 8's relations from the parser's links
 * (given/links_lm.c), on the windows chapter 8's run measures its heads
 * on, with every cheap explanation of a head that finds them. What
 * `make relations` runs; no network is read.
 *
 *   relations [--size long] [--corpus FILE] [--links FILE] [--draws N]
 *             [--sizes FILE] OUT_DIR
 *
 * The windows are the run's own: lm_setup() (tools/runs/lm/setup.c)
 * builds the size's measurement windows (meas: validation, n_meas of T
 * tokens) and test windows (test: n_test), with windows_init(), which
 * records each window's first token (struct windows, first). For each
 * set it writes OUT_DIR/relations_meas.csv and relations_test.csv and
 * prints them:
 *   relation, key       the relation's name and key (links_lm.h)
 *   cases, hard         its cases in the windows, and the hard ones
 *   offset_k, offset_base  the best fixed offset and its share
 *   class_base          the share the class rule finds
 *   null_mean_hH, null_p95_hH  for each head count H of the size (1, 4,
 *                       16 for long): the best margin over the
 *                       offset baseline that the best of L*H heads shows
 *                       by chance on this relation (links_best_of_null(),
 *                       RELATIONS_DRAWS draws from seed RELATIONS_SEED),
 *                       its mean and 95th percentile
 * and a last row, "any", whose null columns are the best margin over all
 * the relations and heads together (the others left empty).
 *
 * It also checks the list of relations: every family with at least
 * LINKS_MIN_CASES cases in the test windows must be a relation of
 * links_lm.h, and every relation of one family must have that many; it
 * prints the families' counts and stops with status 1 when the list is
 * not exactly those.
 */
#define _POSIX_C_SOURCE 200809L

#include "links_lm.h"
#include "lm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RELATIONS_PROG  "relations"
#define RELATIONS_DRAWS 10000
#define RELATIONS_SEED  20190801ULL /* fixed: the null is the same each run */
#define LR              LINKS_N_RELATIONS

/* One window set's table. */
struct table {
    const char *name; /* "meas", "test" */
    struct links_baseline b[LR];
    float mean[MAX_HC][LR], p95[MAX_HC][LR];
    float all_mean[MAX_HC], all_p95[MAX_HC];
};

static void set_measure(const struct run *run, const struct lm *lm,
                        const struct links *lk, const struct windows *w,
                        int draws, struct table *tab)
{
    const int T = lm->sz.T;
    int n_cases[LR];
    float p[LR];
    for (int rel = 0; rel < LR; rel++) {
        const int n =
            links_relation_cases(lk, rel, w->first, w->n, T, NULL, NULL, 0);
        if (n < 0)
            run_fail(run, 1, "the cases of %s: %s", links_relation_key(rel),
                     kit_strerror(n));
        int *word = run_calloc(run, n > 0 ? n : 1, sizeof *word);
        int *related = run_calloc(run, n > 0 ? n : 1, sizeof *related);
        links_relation_cases(lk, rel, w->first, w->n, T, word, related, n);
        const int rc = links_baselines(word, related, n, w->x_class, w->n, T,
                                       NULL, &tab->b[rel]);
        if (rc != KIT_OK)
            run_fail(run, 1, "the baselines of %s: %s", links_relation_key(rel),
                     kit_strerror(rc));
        n_cases[rel] = n, p[rel] = tab->b[rel].offset_base;
        free(word), free(related);
    }
    for (int i = 0; i < lm->sz.n_heads; i++) {
        const int rc = links_best_of_null(
            n_cases, p, LR, lm->sz.L * lm->sz.heads[i], draws, RELATIONS_SEED,
            tab->mean[i], tab->p95[i], &tab->all_mean[i], &tab->all_p95[i]);
        if (rc != KIT_OK)
            run_fail(run, 1, "the null of %d heads: %s", lm->sz.heads[i],
                     kit_strerror(rc));
    }
}

static void print_table(FILE *f, const struct lm *lm, const struct table *tab)
{
    fprintf(f, "relation,key,cases,hard,offset_k,offset_base,class_base");
    for (int i = 0; i < lm->sz.n_heads; i++)
        fprintf(f, ",null_mean_h%d,null_p95_h%d", lm->sz.heads[i],
                lm->sz.heads[i]);
    fprintf(f, "\n");
    for (int rel = 0; rel < LR; rel++) {
        const struct links_baseline *b = &tab->b[rel];
        fprintf(f, "%s,%s,%d,%d,%d,%.4f,%.4f", links_relation_name(rel),
                links_relation_key(rel), b->n_cases, b->n_hard, b->offset_k,
                b->offset_base, b->class_base);
        for (int i = 0; i < lm->sz.n_heads; i++)
            fprintf(f, ",%.4f,%.4f", tab->mean[i][rel], tab->p95[i][rel]);
        fprintf(f, "\n");
    }
    fprintf(f, "any,any,,,,,");
    for (int i = 0; i < lm->sz.n_heads; i++)
        fprintf(f, ",%.4f,%.4f", tab->all_mean[i], tab->all_p95[i]);
    fprintf(f, "\n");
}

static void write_table(const struct run *run, const struct lm *lm,
                        const char *dir, const struct table *tab)
{
    char tmp[1100], path[1100];
    if (strlen(dir) > 1000)
        run_fail(run, 2, "OUT_DIR is too long (%zu characters)", strlen(dir));
    snprintf(path, sizeof path, "%s/relations_%.8s.csv", dir, tab->name);
    snprintf(tmp, sizeof tmp, "%s/relations_%.8s.csv.tmp", dir, tab->name);
    FILE *f = fopen(tmp, "w");
    if (!f)
        run_fail(run, 1, "cannot write %s", tmp);
    print_table(f, lm, tab);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        run_fail(run, 1, "cannot write %s", path);
}

/* The families' cases in the test windows, against the list of
 * relations: returns how many families break it. */
static int check_families(const struct lm *lm, const struct links *lk,
                          const struct windows *w)
{
    char fam[256][LINKS_FAMILY_LEN];
    int n_fam = 0, bad = 0;
    for (int i = 0; i < lk->n; i++) {
        int k = 0;
        while (k < n_fam && strcmp(fam[k], lk->family[i]) != 0)
            k++;
        if (k == n_fam && n_fam < 256)
            memcpy(fam[n_fam++], lk->family[i], LINKS_FAMILY_LEN);
    }
    printf("families with at least %d cases in the %d test windows:",
           LINKS_MIN_CASES, w->n);
    for (int k = 0; k < n_fam; k++) {
        const int n = links_family_cases(lk, fam[k], w->first, w->n, lm->sz.T);
        int listed = 0;
        for (int rel = 0; rel < LR; rel++)
            listed |= strcmp(links_relation_key(rel), fam[k]) == 0;
        if (n >= LINKS_MIN_CASES)
            printf(" %s %d", fam[k], n);
        if ((n >= LINKS_MIN_CASES) != listed) {
            fprintf(stderr,
                    RELATIONS_PROG ": the family %s has %d cases in the test "
                                   "windows but is %s relation of "
                                   "include/links_lm.h\n",
                    fam[k], n, listed ? "a" : "no");
            bad++;
        }
    }
    printf("\n");
    return bad;
}

int main(int argc, char **argv)
{
    struct run run = {
        .prog = RELATIONS_PROG,
        .usage = "[--size long] [--corpus FILE] [--links FILE] [--draws N] "
                 "[--sizes FILE] OUT_DIR",
        .hint = NULL,
        .seeds = 0};
    struct lm_opts opt = {.size = "long", .corpus = "build/ch8/brown.bin"};
    const char *links_path = "build/ch8/links.tsv";
    int draws = RELATIONS_DRAWS;
    const struct run_opt o[] = {
        {"--size", "SIZE", &opt.size, NULL, 0, 0},
        {"--corpus", "FILE", &opt.corpus, NULL, 0, 0},
        {"--links", "FILE", &links_path, NULL, 0, 0},
        {"--draws", "DRAWS", NULL, &draws, 100, 1000000},
        {"--sizes", "FILE", &opt.sizes, NULL, 0, 0}};
    const char *dir = argv[run_args(&run, argc, argv, o, 5, 1, 1)];
    struct lm lm = {0};
    size_options(&run, &opt, &lm);
    struct corpus_data d;
    char err[CORPUS_ERR_LEN > LINKS_ERR_LEN ? CORPUS_ERR_LEN : LINKS_ERR_LEN];
    if (corpus_load(&d, opt.corpus, err) != KIT_OK)
        run_fail(&run, 1, "cannot read the corpus: %s", err);
    lm.d = &d;
    lm_setup(&run, &lm, &d); /* the run's windows: val, meas, test */
    struct links lk;
    const int rc = links_read(&lk, links_path, &d, err);
    if (rc != KIT_OK)
        run_fail(&run, 1, "%s", err);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        run_fail(&run, 1, "cannot create the folder %s", dir);
    printf("%d links between two tokens; size %s: windows of %d tokens, "
           "%d measurement (validation), %d test; the null: %d draws, "
           "seed %llu, %d blocks\n",
           lk.n, lm.sz.name, lm.sz.T, lm.meas.n, lm.test.n, draws,
           RELATIONS_SEED, lm.sz.L);
    const int bad = check_families(&lm, &lk, &lm.test);
    static struct table tab[2] = {{.name = "meas"}, {.name = "test"}};
    const struct windows *sets[2] = {&lm.meas, &lm.test};
    for (int s = 0; s < 2; s++) {
        set_measure(&run, &lm, &lk, sets[s], draws, &tab[s]);
        write_table(&run, &lm, dir, &tab[s]);
        printf("\n%s windows (%s/relations_%s.csv):\n", tab[s].name, dir,
               tab[s].name);
        print_table(stdout, &lm, &tab[s]);
    }
    links_free(&lk);
    lm_free(&lm, &d);
    if (bad)
        run_fail(&run, 1,
                 "%d famil%s break the list of relations in "
                 "include/links_lm.h (above)",
                 bad, bad == 1 ? "y" : "ies");
    return 0;
}
