/*
 * kit_test.h: how the kit's tests are written.
 *
 * A test file defines tests with KIT_TEST and lists them in a chapter with
 * KIT_CHAPTER. The runner (tools/harness/runner.c) registers every chapter
 * as a CUnit suite and every test as a CUnit test. Each test body runs in
 * a child process of its own with a time limit, so a crash or an endless
 * loop in a student's code fails that one test and the run goes on.
 *
 *   KIT_TEST(softmax_rows_sum_to_one, "softmax: every row sums to 1")
 *   {
 *       ...
 *       KIT_CHECK(fabs(sum - 1.0) < 1e-5, "row %d sums to %g, not 1", r, sum);
 *   }
 *
 *   static const struct kit_test *const ch1_tests[] = {
 *       &softmax_rows_sum_to_one, ..., NULL};
 *   KIT_CHAPTER(ch1_tests)
 *
 * The chapter's number, title and student file come from its line in
 * chapters/chapters.tsv: the Makefile (and tools/grade/prepare.sh)
 * compile tests/test_chN.c with -DKIT_CH_NUM=N -DKIT_CH_TITLE="..."
 * -DKIT_CH_FILE="...". KIT_CHAPTER_AS names them itself (the runner's
 * self-test, tools/harness/selftest.c, which is no chapter, and the tests
 * of the course's given code, tests/given/, numbered from KIT_GIVEN_FIRST:
 * their file is in given/, not in the student's folder).
 *
 * Each check is one CUnit assertion. Its message is what a student reads
 * when it fails, so it says what was expected, what came back, where, and
 * the likely mistake.
 */
#ifndef KIT_TEST_H
#define KIT_TEST_H

#include <stddef.h>

struct kit_test {
    const char *name; /* the TEST= name, a C identifier */
    const char *what; /* one line: what the test checks */
    void (*body)(void);
};

struct kit_chapter {
    int number;                          /* the CH= number              */
    const char *title;                   /* "Scaled dot-product ..."    */
    const char *file;                    /* the student's file          */
    const struct kit_test *const *tests; /* NULL-terminated          */
};

/* Called by KIT_CHAPTER before main(). */
void kit_register_chapter(const struct kit_chapter *ch);

/* The number of the chapter whose test is running. */
int kit_current_chapter(void);

/* Note the student's call about to be made ("matmul(A, B, C, 2, 3, 2)"),
 * so that a crash or a timeout inside it can name it. KIT_EXPECT_STATUS
 * does this for the call it checks. */
void kit_about_to_call(const char *call);

/* Chapters numbered from this one test given code (tests/given/). */
#define KIT_GIVEN_FIRST 80

#define KIT_TEST(name_, what_)                                                 \
    static void name_##_body(void);                                            \
    static const struct kit_test name_ = {#name_, what_, name_##_body};        \
    static void name_##_body(void)

#define KIT_CHAPTER_AS(number_, title_, file_, tests_)                         \
    static const struct kit_chapter kit_chapter_##tests_ = {number_, title_,   \
                                                            file_, tests_};    \
    __attribute__((constructor)) static void kit_register_##tests_(void)       \
    {                                                                          \
        kit_register_chapter(&kit_chapter_##tests_);                           \
    }

/* A chapter's tests, named as its line in chapters/chapters.tsv says
 * (without the -D flags, the compiler says KIT_CH_NUM is undeclared). */
#define KIT_CHAPTER(tests_)                                                    \
    KIT_CHAPTER_AS(KIT_CH_NUM, KIT_CH_TITLE, KIT_CH_FILE, tests_)

/* One assertion. On failure msg (printf-style) is the student's message.
 * Returns ok, so a test can stop early: if (!KIT_CHECK(...)) return; */
int kit_check(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define KIT_CHECK(ok, ...) kit_check(!!(ok), __FILE__, __LINE__, __VA_ARGS__)

/* ---------------------------------------------------------------------
 * Helpers shared by the chapters' tests (tests/check.c)
 * ------------------------------------------------------------------- */

/* A classic mistake: what the student's output would be if they made it. */
struct kit_mistake {
    const char *name;    /* "a missing 1/sqrt(d_k) scale"        */
    const char *advice;  /* what to look at and how to fix it   */
    const double *value; /* the output that mistake produces     */
};

/* Every message that names a classic mistake says so with these words,
 * and no other message contains them: tools/checks/50-mutants.sh relies
 * on it to find a message that names the wrong mistake. */
#define KIT_NAMING_MARK "Likely mistake"

/* What a tensor's rows and columns are, so that a failure can be placed:
 * "only head 1 is wrong", entry [head][row][col], "every entry is
 * sqrt(d_k) times the right one". Zero-initialise what does not apply:
 *   struct kit_shape s = {T, 0, "head", {{"d_head", 4}}};  (h, T, T)  */
#define KIT_MAX_DIMS 4
struct kit_shape {
    int row_block;     /* rows per block ((h, T, T) as (h*T, T): T), or 0 */
    int col_block;     /* columns per block (concat: d_head), or 0        */
    const char *block; /* what one block is: "head", "tile"              */
    struct {
        const char *name; /* "d_k" */
        double value;     /* 4     */
    } dims[KIT_MAX_DIMS]; /* sizes a constant factor may be made of     */
};

/* Check a whole tensor in one assertion.
 *   call    what was called, e.g. "attention(Q, K, V) weights"
 *   got     (rows, cols) what the student's code wrote
 *   want    (rows, cols) the right answer
 *   tol     allowed |got - want|, plus tol * |want|
 *   mistakes, n_mistakes: the classic mistakes this test knows, each with
 *           the output it gives on this input (computed by the test, in
 *           double). The message names those whose output got equals,
 *           and no other. When none fits, it describes the error instead:
 *           which rows, columns and blocks are wrong, a constant factor
 *           or offset, a transpose, NaN and infinities.
 * The message starts with the first wrong entry, expected against got,
 * and the largest error. Returns 1 when equal. */
#define KIT_EXPECT_TENSOR(call, got, want, rows, cols, tol, mistakes, n)       \
    kit_expect_tensor(__FILE__, __LINE__, call, got, want, rows, cols, tol,    \
                      mistakes, n)
int kit_expect_tensor(const char *file, int line, const char *call,
                      const float *got, const double *want, int rows, int cols,
                      double tol, const struct kit_mistake *mistakes,
                      int n_mistakes);

/* The same, with the tensor's shape described (shape may be NULL). */
#define KIT_EXPECT_TENSOR_SHAPED(call, got, want, rows, cols, shape, tol,      \
                                 mistakes, n)                                  \
    kit_expect_tensor_shaped(__FILE__, __LINE__, call, got, want, rows, cols,  \
                             shape, tol, mistakes, n)
int kit_expect_tensor_shaped(const char *file, int line, const char *call,
                             const float *got, const double *want, int rows,
                             int cols, const struct kit_shape *shape,
                             double tol, const struct kit_mistake *mistakes,
                             int n_mistakes);

/* Check a returned status. A starter stub's KIT_E_TODO gets the message
 * "not written yet". Returns 1 when got == want. */
#define KIT_EXPECT_STATUS(call, got, want)                                     \
    (kit_about_to_call(call),                                                  \
     kit_expect_status(__FILE__, __LINE__, call, got, want))
int kit_expect_status(const char *file, int line, const char *call, int got,
                      int want);

/* Fill n floats with NaN, so that output a function never wrote is seen. */
void kit_poison(float *x, size_t n);

/* A guarded buffer that names itself: n floats, filled with NaN (or a
 * copy of src), between KIT_GUARD guard floats on each side: signalling
 * NaNs whose payloads say which buffer and which float they are, and
 * beyond each guard a far zone (192 floats) whose NaNs say "more than
 * KIT_GUARD floats outside" that buffer, so that a read or write far
 * past one buffer is not taken for one before the next. name is
 * the argument's name ("out"), size how its length is made ("T*d_model",
 * or NULL). Every chapter's tests use it for every buffer they hand to a
 * student's function, outputs and inputs alike:
 *   - after the call, KIT_EXPECT_GUARDS(call) checks every live one, and
 *     a write outside (even x[n] += 0) names it and the index:
 *     "mha_forward(...) wrote past the end of out: out[48], one past the
 *     end of its 48 floats (T*d_model). A loop bound off by one ...?"
 *     KIT_EXPECT_IN_BOUNDS on one of them says the same.
 *   - a read outside brings a guard's NaN into the output, and
 *     KIT_EXPECT_TENSOR names it ("Likely mistake: a read past the end of
 *     K. Entry [0][0] is the NaN the test keeps in K[12], one past the
 *     end of its 12 floats (T*d_k) ..."), and only then: no other NaN
 *     has such a payload. That holds after the buffer is freed too
 *     (until the next buffer of its slot is freed), so a test may copy
 *     an output out of its guarded buffer and free it before the check.
 * Free it with kit_output_free(); at most 64 guarded buffers at once. */
#define KIT_GUARD 64
float *kit_guarded(size_t n, const char *name, const char *size);
float *kit_guarded_copy(const float *src, size_t n, const char *name,
                        const char *size);
void kit_output_free(float *x);
/* When x is the NaN of a guard of the live kit_guarded() buffer buf (read
 * past its end and carried by the arithmetic): the index it was read
 * from, n + k for k floats past the end, -k before the start (from the
 * far zone: n + KIT_GUARD, or -(KIT_GUARD + 1)). Else 0. */
long kit_guard_nan_from(float x, const float *buf);
#define KIT_EXPECT_GUARDS(call) kit_expect_guards(__FILE__, __LINE__, call)
int kit_expect_guards(const char *file, int line, const char *call);
#define KIT_EXPECT_IN_BOUNDS(call, name, x, n)                                 \
    kit_expect_in_bounds(__FILE__, __LINE__, call, name, x, n)
int kit_expect_in_bounds(const char *file, int line, const char *call,
                         const char *name, const float *x, size_t n);
/* When x points into a live kit_guarded() buffer: 1, with lead the
 * floats from the buffer's first guard to x and total the floats of the
 * buffer, guards included. Else 0. */
int kit_output_extent(const float *x, size_t *lead, size_t *total);

/* Allocation failure on demand, from the counting allocator that
 * tools/harness/leakcheck.h forces into the student's files (the tests'
 * and the given code's allocations are not counted and never fail).
 *   kit_leak_fail_nth(n)    the n-th allocation from now (malloc, calloc
 *                           or realloc) returns NULL; 0 disarms
 *   kit_leak_allocations()  allocation calls since the test began
 *   kit_leak_live()         blocks still allocated (-1: too many to tell)
 *   kit_leak_failed_site()  where the failed allocation was asked for:
 *                           0 when none failed since the last arming */
void kit_leak_fail_nth(long n);
long kit_leak_allocations(void);
int kit_leak_live(void);
int kit_leak_failed_site(const char **file, int *line, const char **func);
/* As in leakcheck.h: fail the test, with context, if a block is still
 * allocated; forget every block. */
int kit_leak_check_when(const char *context);
void kit_leak_reset(void);

/* A function that allocates, run with each of its allocations failing in
 * turn. First it runs once as it is, which must return KIT_OK, and its
 * allocations are counted: n. Then, for k = 1 .. n, prepare() resets the
 * inputs and outputs, allocation k is made to fail, and the call must
 * return KIT_E_NOMEM, free every block it took (the leak check, at once)
 * and, when unchanged is not NULL, leave its outputs as its header
 * promises: unchanged() returns 1 when they are, or 0 with why filled
 * in ("wrote into out", "changed the cache's len"). A crash on the NULL
 * is named by the runner with the allocation that failed. */
struct kit_nomem {
    const char *call;           /* "mha_forward(T 5, d_model 8, 2 heads)" */
    void (*prepare)(void *ctx); /* poison the outputs, reset a cache     */
    int (*run)(void *ctx);      /* the call; returns its status           */
    int (*unchanged)(void *ctx, char *why, size_t n_why); /* or NULL     */
    void *ctx;
};
#define KIT_EXPECT_NOMEM(t) kit_expect_nomem(__FILE__, __LINE__, t)
int kit_expect_nomem(const char *file, int line, const struct kit_nomem *t);

/* malloc that never returns NULL (the test aborts cleanly instead). */
void *kit_alloc(size_t bytes);

/* Copy n floats to doubles, and back. */
void kit_to_double(const float *x, double *y, size_t n);

/* Hidden cases. Each golden test also runs cases drawn at random and
 * judged by the test's own double-precision reference, so that code that
 * only replays the published answers fails. The seed is KIT_HIDDEN_SEED
 * when it is set (grading draws one each time), else a fixed one, so
 * that make test gives the same verdict on every run. */
unsigned long long kit_hidden_seed(void);
/* How many checks of the current test have failed so far. */
int kit_current_failed(void);
#define KIT_HIDDEN_CASES 3
void kit_to_float(const double *x, float *y, size_t n);
/* Softmax in double, each row shifted by its max as softmax_rows() must
 * be: the right answer hidden softmax cases are judged by. X, Y (rows,
 * cols); -INFINITY gives 0 in a row with a finite entry. */
void kit_softmax_double(const double *X, double *Y, int rows, int cols);

#endif
