"""Chapter 4 golden values: gradients through matmul, softmax, one head of
attention (plain and causal) and the multi-head layer, computed by PyTorch
autograd in double precision from float32 inputs.

Every case is a forward pass, then out.backward(d_out) with a fixed upstream
gradient d_out; the header holds the inputs, d_out and the gradients. The
multi-head layer is torch.nn.MultiheadAttention, not a copy of the C code:
its in_proj_weight is [W_q^T; W_k^T; W_v^T] and out_proj.weight is W_o^T
(see include/mha.h)."""
import math

import torch

from golden.common import c_array, rng, uniform, write_header

# (name, T, d_k, d_v, causal)
ATTENTION_CASES = [
    ("plain", 4, 4, 3, 0),
    ("causal", 5, 8, 2, 1),
    ("t1", 1, 3, 2, 0),
]

# (name, T, d_model, n_heads, causal)
MHA_CASES = [
    ("two_heads", 4, 8, 2, 0),
    ("causal", 5, 6, 3, 1),
    ("one_head", 3, 4, 1, 0),
]


def leaf(t):
    return t.clone().requires_grad_(True)


def causal_bool_mask(T):
    """True above the diagonal: key j > query i is hidden."""
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def attention(Q, K, V, causal):
    s = Q @ K.T / math.sqrt(Q.shape[-1])
    if causal:
        s = s.masked_fill(causal_bool_mask(Q.shape[0]), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ V, w


def generate(out_dir):
    g = rng(20261204)
    parts = []

    # matmul (3,5) x (5,4), backward
    A, B, dC = leaf(uniform(g, 3, 5)), leaf(uniform(g, 5, 4)), uniform(g, 3, 4)
    (A @ B).backward(dC)
    parts += [c_array("ch4_mm_A", A), c_array("ch4_mm_B", B),
              c_array("ch4_mm_dC", dC), c_array("ch4_mm_dA", A.grad),
              c_array("ch4_mm_dB", B.grad)]

    # softmax over rows (4, 6), backward from the output
    X, dY = leaf(uniform(g, 4, 6, lo=-3.0, hi=3.0)), uniform(g, 4, 6)
    Y = torch.softmax(X, dim=-1)
    Y.backward(dY)
    parts += [c_array("ch4_sm_Y", Y), c_array("ch4_sm_dY", dY),
              c_array("ch4_sm_dX", X.grad)]

    # one head of attention
    rows = []
    for name, T, d_k, d_v, causal in ATTENTION_CASES:
        Q = leaf(uniform(g, T, d_k, lo=-2, hi=2))
        K = leaf(uniform(g, T, d_k, lo=-2, hi=2))
        V = leaf(uniform(g, T, d_v))
        d_out = uniform(g, T, d_v)
        out, w = attention(Q, K, V, causal)
        out.backward(d_out)
        p = f"ch4_att_{name}"
        for label, t in (("Q", Q), ("K", K), ("V", V), ("weights", w),
                         ("d_out", d_out), ("d_Q", Q.grad), ("d_K", K.grad),
                         ("d_V", V.grad)):
            parts.append(c_array(f"{p}_{label}", t))
        rows.append(f'    {{"{name}", {T}, {d_k}, {d_v}, {causal}, {p}_Q, {p}_K, '
                    f'{p}_V, {p}_weights, {p}_d_out, {p}_d_Q, {p}_d_K, {p}_d_V}},')
    parts.append(
        "struct ch4_att_case {\n    const char *name;\n    int T, d_k, d_v, causal;\n"
        "    const double *Q, *K, *V, *weights, *d_out, *d_Q, *d_K, *d_V;\n};\n\n"
        "static const struct ch4_att_case ch4_att_cases[] = {\n"
        + "\n".join(rows) + "\n};\n")

    # the multi-head layer, as torch.nn.MultiheadAttention
    rows = []
    for name, T, D, h, causal in MHA_CASES:
        a = 1.0 / math.sqrt(D)
        X = leaf(uniform(g, T, D))
        W = [uniform(g, D, D, lo=-a, hi=a) for _ in range(4)]  # q, k, v, o
        d_out = uniform(g, T, D)
        mha = torch.nn.MultiheadAttention(D, h, bias=False, batch_first=True)
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.cat([W[0].T, W[1].T, W[2].T]))
            mha.out_proj.weight.copy_(W[3].T)
        mask = causal_bool_mask(T) if causal else None
        out, _ = mha(X[None], X[None], X[None], attn_mask=mask,
                     need_weights=False)
        out[0].backward(d_out)
        gi, go = mha.in_proj_weight.grad, mha.out_proj.weight.grad
        grads = [gi[0:D].T, gi[D:2 * D].T, gi[2 * D:].T, go.T]
        p = f"ch4_mha_{name}"
        parts += [c_array(f"{p}_X", X), c_array(f"{p}_d_out", d_out),
                  c_array(f"{p}_d_X", X.grad)]
        for label, wt, gt in zip(("W_q", "W_k", "W_v", "W_o"), W, grads):
            parts += [c_array(f"{p}_{label}", wt), c_array(f"{p}_d_{label}", gt)]
        rows.append(f'    {{"{name}", {T}, {D}, {h}, {causal}, {p}_X, {p}_d_out, '
                    f'{{{p}_W_q, {p}_W_k, {p}_W_v, {p}_W_o}}, {p}_d_X, '
                    f'{{{p}_d_W_q, {p}_d_W_k, {p}_d_W_v, {p}_d_W_o}}}},')
    parts.append(
        "struct ch4_mha_case {\n    const char *name;\n"
        "    int T, d_model, n_heads, causal;\n"
        "    const double *X, *d_out;\n    const double *W[4]; /* q, k, v, o */\n"
        "    const double *d_X;\n    const double *d_W[4];\n};\n\n"
        "static const struct ch4_mha_case ch4_mha_cases[] = {\n"
        + "\n".join(rows) + "\n};\n")
    return write_header(out_dir, "ch4_golden", "CH4_GOLDEN_H", parts,
                        "tools/golden/ch4.py")
