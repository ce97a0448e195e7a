/* test_ch1.c: chapter 1 tests (scaffold; to be filled in). */
#include "attention.h"
#include "kit_test.h"

#include <math.h>

KIT_TEST(matmul_small, "matmul: a 2x3 times 3x2 product worked by hand")
{
    const float A[6] = {1, 2, 3, 4, 5, 6};
    const float B[6] = {7, 8, 9, 10, 11, 12};
    const double want[4] = {58, 64, 139, 154};
    float C[4];
    kit_poison(C, 4);
    if (!KIT_EXPECT_STATUS("matmul(A, B, C, 2, 3, 2)", matmul(A, B, C, 2, 3, 2), KIT_OK))
        return;
    KIT_EXPECT_TENSOR("matmul(A, B, C, 2, 3, 2)", C, want, 2, 2, 1e-5, NULL, 0);
}

static const struct kit_test *const ch1_tests[] = {&matmul_small, NULL};
KIT_CHAPTER(1, "Scaled dot-product attention", "ch1_attention.c", ch1_tests)
