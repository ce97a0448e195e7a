"""Chapter 6 golden values: grouped-query attention (GQA), computed by
PyTorch's own torch.nn.MultiheadAttention.

PyTorch 1.13 has no GQA, so this generator does what GQA means: it repeats
each K/V head for the n_heads / n_kv_heads query heads of its group, and
runs ordinary multi-head attention. In the kit's layout (decode.h) K/V head
j is the column block j*d_head .. of W_k and W_v, (d_model, n_kv*d_head);
query head i reads K/V head i // (n_heads // n_kv_heads). Repeating the
column blocks in that order gives (d_model, d_model) matrices, loaded into
MultiheadAttention as in chapter 3 (golden/ch3.py). Every case is run
without and with the causal mask."""
import torch

from golden.ch3 import torch_mha
from golden.common import c_array, rng, uniform, write_header

# (name, T, d_model, n_heads, n_kv_heads): multi-query (1 K/V head),
# groups of 2 and of 3, n_kv == n_heads (plain MHA), T = 1, d_head = 1.
GQA_CASES = [
    ("mqa", 5, 8, 4, 1),
    ("groups_of_2", 6, 16, 4, 2),
    ("groups_of_3", 4, 12, 6, 2),
    ("kv_eq_heads", 5, 8, 2, 2),
    ("t1", 1, 8, 4, 2),
    ("d_head_1", 7, 4, 4, 2),
]


def repeat_kv(W, n_heads, n_kv):
    """(d_model, n_kv*d_head) -> (d_model, n_heads*d_head): K/V head j's
    column block repeated for each query head of its group."""
    d, d_kv = W.shape
    d_head = d_kv // n_kv
    blocks = W.reshape(d, n_kv, d_head)
    return blocks.repeat_interleave(n_heads // n_kv, dim=1).reshape(d, n_heads * d_head)


def generate(out_dir):
    g = rng(20261206)
    parts, rows = [], []
    for name, T, d, h, kv in GQA_CASES:
        d_kv = kv * (d // h)
        X = uniform(g, T, d)
        W_q = uniform(g, d, d, lo=-0.8, hi=0.8)
        W_k = uniform(g, d, d_kv, lo=-0.8, hi=0.8)
        W_v = uniform(g, d, d_kv, lo=-0.8, hi=0.8)
        W_o = uniform(g, d, d, lo=-0.8, hi=0.8)
        for label, t in zip(("X", "W_q", "W_k", "W_v", "W_o"), (X, W_q, W_k, W_v, W_o)):
            parts.append(c_array(f"ch6_{name}_{label}", t))
        K_full, V_full = repeat_kv(W_k, h, kv), repeat_kv(W_v, h, kv)
        for causal in (0, 1):
            out, w = torch_mha(X, W_q, K_full, V_full, W_o, h, causal)
            sfx = "_causal" if causal else ""
            parts.append(c_array(f"ch6_{name}_out{sfx}", out))
            parts.append(c_array(f"ch6_{name}_weights{sfx}", w))
        p = f"ch6_{name}"
        rows.append(f'    {{"{name}", {T}, {d}, {h}, {kv}, {p}_X, {p}_W_q, {p}_W_k, '
                    f'{p}_W_v, {p}_W_o,\n     {{{p}_out, {p}_out_causal}}, '
                    f'{{{p}_weights, {p}_weights_causal}}}},')
    parts.append(
        "struct ch6_golden_case {\n    const char *name;\n"
        "    int T, d_model, n_heads, n_kv_heads;\n"
        "    const double *X;        /* (T, d_model) */\n"
        "    const double *W_q;      /* (d_model, d_model) */\n"
        "    const double *W_k, *W_v; /* (d_model, n_kv_heads * d_head) */\n"
        "    const double *W_o;      /* (d_model, d_model) */\n"
        "    const double *out[2];     /* [causal] (T, d_model) */\n"
        "    const double *weights[2]; /* [causal] (n_heads, T, T) */\n};\n\n"
        "static const struct ch6_golden_case ch6_golden_cases[] = {\n"
        + "\n".join(rows) + "\n};\n")
    return write_header(out_dir, "ch6_golden", "CH6_GOLDEN_H", parts, "tools/golden/ch6.py")
