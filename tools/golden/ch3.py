"""Chapter 3 golden values: multi-head attention, computed by PyTorch's own
torch.nn.MultiheadAttention loaded with the kit's weights.

The kit multiplies from the right (Q = X W_q); PyTorch holds the transposed
matrices (mha.h):
    in_proj_weight  = [W_q^T; W_k^T; W_v^T]   (3*d_model, d_model)
    out_proj.weight = W_o^T                   (d_model, d_model)
Every case is run without and with the causal mask."""
import torch

from golden.common import c_array, rng, uniform, write_header

# (name, T, d_model, n_heads): T != d_model, T = 1, n_heads = d_model,
# n_heads = 1, and an odd number of heads.
MHA_CASES = [
    ("basic", 5, 8, 2),
    ("three_heads", 4, 12, 3),
    ("t1", 1, 4, 2),
    ("h_eq_d", 3, 4, 4),
    ("one_head", 6, 4, 1),
    ("long", 9, 6, 3),
]


def torch_mha(X, W_q, W_k, W_v, W_o, n_heads, causal):
    """out (T, d_model) and per-head weights (n_heads, T, T) from torch."""
    T, d_model = X.shape
    mha = torch.nn.MultiheadAttention(d_model, n_heads, bias=False,
                                      batch_first=True, dtype=torch.float64)
    # dropout is 0, so training mode changes nothing but keeps torch 1.13 off
    # its eval-mode "fast path", which rejects bias=False.
    mha.train()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T], dim=0))
        mha.out_proj.weight.copy_(W_o.T)
    # bool mask: True means "may not attend"; the future is j > t
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1) if causal else None
    x = X.unsqueeze(0)
    with torch.no_grad():
        out, w = mha(x, x, x, attn_mask=mask, need_weights=True,
                     average_attn_weights=False)
    return out[0], w[0]


def generate(out_dir):
    g = rng(20261203)
    parts, rows = [], []
    for name, T, d, h in MHA_CASES:
        X = uniform(g, T, d)
        W = [uniform(g, d, d, lo=-0.8, hi=0.8) for _ in range(4)]
        for label, t in zip(("X", "W_q", "W_k", "W_v", "W_o"), [X] + W):
            parts.append(c_array(f"ch3_{name}_{label}", t))
        for causal in (0, 1):
            out, w = torch_mha(X, *W, h, causal)
            sfx = "_causal" if causal else ""
            parts.append(c_array(f"ch3_{name}_out{sfx}", out))
            parts.append(c_array(f"ch3_{name}_weights{sfx}", w))
        p = f"ch3_{name}"
        rows.append(f'    {{"{name}", {T}, {d}, {h}, {p}_X, {p}_W_q, {p}_W_k, {p}_W_v, '
                    f'{p}_W_o,\n     {{{p}_out, {p}_out_causal}}, '
                    f'{{{p}_weights, {p}_weights_causal}}}},')
    parts.append(
        "struct ch3_golden_case {\n    const char *name;\n    int T, d_model, n_heads;\n"
        "    const double *X, *W_q, *W_k, *W_v, *W_o;\n"
        "    const double *out[2];     /* [causal] (T, d_model) */\n"
        "    const double *weights[2]; /* [causal] (n_heads, T, T) */\n};\n\n"
        "static const struct ch3_golden_case ch3_golden_cases[] = {\n"
        + "\n".join(rows) + "\n};\n")
    return write_header(out_dir, "ch3_golden", "CH3_GOLDEN_H", parts, "tools/golden/ch3.py")
