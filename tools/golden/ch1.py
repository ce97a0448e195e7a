"""Chapter 1 golden values: matmul, softmax and scaled dot-product attention,
computed by PyTorch in double precision from float32 inputs."""
import math

import torch

from golden.common import attention_cases, c_array, rng, uniform, write_header

# (name, T, d_k, d_v): square and not, d_k != d_v, and T = 1.
ATTENTION_CASES = [
    ("small", 3, 4, 4),
    ("dk_ne_dv", 5, 8, 3),
    ("t1", 1, 4, 2),
    ("wide", 7, 16, 5),
]


def attention(Q, K, V):
    d_k = Q.shape[-1]
    weights = torch.softmax(Q @ K.T / math.sqrt(d_k), dim=-1)
    return weights @ V, weights


def generate(out_dir):
    g = rng(20261129)
    parts = []

    # matmul and matmul_bt on a non-square product (3,5) x (5,4)
    A, B = uniform(g, 3, 5), uniform(g, 5, 4)
    Bt = B.T.contiguous()
    parts += [c_array("ch1_mm_A", A), c_array("ch1_mm_B", B),
              c_array("ch1_mm_Bt", Bt), c_array("ch1_mm_C", A @ B)]

    # softmax over rows with a wide spread of values
    X = uniform(g, 4, 6, lo=-6.0, hi=6.0)
    parts += [c_array("ch1_sm_X", X), c_array("ch1_sm_Y", torch.softmax(X, dim=-1))]

    # attention cases
    cases = []
    for name, T, d_k, d_v in ATTENTION_CASES:
        Q, K, V = uniform(g, T, d_k, lo=-2, hi=2), uniform(g, T, d_k, lo=-2, hi=2), uniform(g, T, d_v)
        cases.append((name, T, d_k, d_v, Q, K, V, *attention(Q, K, V)))
    parts += attention_cases("ch1", cases)
    return write_header(out_dir, "ch1_golden", "CH1_GOLDEN_H", parts, "tools/golden/ch1.py")
