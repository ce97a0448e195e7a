"""Chapter 2 golden values: causal scaled dot-product attention, computed by
PyTorch in double precision from float32 inputs.

The mask is built the PyTorch way, independently of the C code: the strict
upper triangle (torch.triu(..., diagonal=1)) of the scores is filled with
-inf by masked_fill before torch.softmax."""
import math

import torch

from golden.common import c_array, rng, uniform, write_header

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
    parts, rows = [], []
    for name, T, d_k, d_v, r in CASES:
        Q = uniform(g, T, d_k, lo=-r, hi=r)
        K = uniform(g, T, d_k, lo=-r, hi=r)
        V = uniform(g, T, d_v)
        out, w = causal_attention(Q, K, V)
        for label, t in (("Q", Q), ("K", K), ("V", V), ("out", out), ("weights", w)):
            parts.append(c_array(f"ch2_{name}_{label}", t))
        rows.append(f'    {{"{name}", {T}, {d_k}, {d_v}, ch2_{name}_Q, ch2_{name}_K, '
                    f'ch2_{name}_V, ch2_{name}_out, ch2_{name}_weights}},')
    parts.append(
        "struct ch2_golden_case {\n    const char *name;\n    int T, d_k, d_v;\n"
        "    const double *Q, *K, *V, *out, *weights;\n};\n\n"
        "static const struct ch2_golden_case ch2_golden_cases[] = {\n"
        + "\n".join(rows) + "\n};\n")
    return write_header(out_dir, "ch2_golden", "CH2_GOLDEN_H", parts, "tools/golden/ch2.py")
