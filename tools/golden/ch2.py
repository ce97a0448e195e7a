"""Chapter 2 golden values: causal scaled dot-product attention, computed by
PyTorch in double precision from float32 inputs.

The mask is built the PyTorch way, independently of the C code: the strict
upper triangle (torch.triu(..., diagonal=1)) of the scores is filled with
-inf by masked_fill before torch.softmax."""
import math

import torch

from golden.common import attention_cases, rng, uniform, write_header

# (name, T, d_k, d_v, input range): square and not, d_k != d_v, T = 1,
# and "huge", whose scores reach thousands, so exp() overflows unless the
# softmax subtracts each row's maximum first.
CASES = [
    ("small", 4, 4, 4, 2.0),
    ("dk_ne_dv", 6, 8, 3, 2.0),
    ("t1", 1, 4, 2, 2.0),
    ("wide", 9, 16, 5, 2.0),
    ("huge", 5, 4, 3, 40.0),
]


def causal_attention(Q, K, V):
    T, d_k = Q.shape
    scores = Q @ K.T / math.sqrt(d_k)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return weights @ V, weights


def generate(out_dir):
    g = rng(20261202)
    cases = []
    for name, T, d_k, d_v, r in CASES:
        Q = uniform(g, T, d_k, lo=-r, hi=r)
        K = uniform(g, T, d_k, lo=-r, hi=r)
        V = uniform(g, T, d_v)
        cases.append((name, T, d_k, d_v, Q, K, V, *causal_attention(Q, K, V)))
    parts = attention_cases("ch2", cases)
    return write_header(out_dir, "ch2_golden", "CH2_GOLDEN_H", parts, "tools/golden/ch2.py")
