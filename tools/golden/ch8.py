"""Chapter 8 golden values: the small GPT's pieces and the whole model,
computed by PyTorch autograd in double precision from float32 inputs.

  - LayerNorm (torch.nn.functional.layer_norm, eps 1e-5), forward and
    backward, with its mean and 1/sqrt(var + eps);
  - the MLP: Linear(C, 4C), GELU with approximate="tanh", Linear(4C, C);
  - cross-entropy averaged over the rows (torch.nn.functional.cross_entropy);
  - the whole model (a GPT written here with torch.nn.functional, not a
    copy of the C code; attention is torch.nn.functional's softmax over
    masked scores), its loss and every parameter's gradient, then two
    training steps: clip_grad_norm_, torch.optim.AdamW with weight decay
    on the matrices and embeddings only, the learning rate from a linear
    warm-up. The header holds the parameters after the two steps.

The parameters are laid out as include/gpt.h's enum gpt_tensor, each
tensor flattened row-major, W_q (L, C, C) multiplying from the right."""
import math

import torch
import torch.nn.functional as F

from golden.common import c_array, rng, uniform, write_header

# the model case: (V, T, C, L, n_heads, B)
V, T, C, L, H, B = 11, 5, 8, 2, 2, 2
# training: peak lr, warm-up steps, steps in all, betas, eps, decay, clip
LR, WARMUP, STEPS = 1e-2, 2, 10
BETAS, EPS, WD, CLIP = (0.9, 0.95), 1e-6, 0.1, 0.5

# (name, shape, decays): as enum gpt_tensor
TENSORS = [
    ("W_te", (V, C), 1), ("W_pe", (T, C), 1),
    ("ln1_g", (L, C), 0), ("ln1_b", (L, C), 0),
    ("W_q", (L, C, C), 1), ("W_k", (L, C, C), 1),
    ("W_v", (L, C, C), 1), ("W_o", (L, C, C), 1),
    ("ln2_g", (L, C), 0), ("ln2_b", (L, C), 0),
    ("W_fc", (L, C, 4 * C), 1), ("b_fc", (L, 4 * C), 0),
    ("W_proj", (L, 4 * C, C), 1), ("b_proj", (L, C), 0),
    ("lnf_g", (C,), 0), ("lnf_b", (C,), 0),
]


def leaf(t):
    return t.clone().requires_grad_(True)


def c_ints(name, values):
    body = ", ".join(str(int(v)) for v in values)
    return f"static const int {name}[{len(values)}] = {{{body}}};\n"


def layer_norm(x, g, b):
    return F.layer_norm(x, (x.shape[-1],), g, b, eps=1e-5)


def gelu(x):
    return F.gelu(x, approximate="tanh")


def attention(x, Wq, Wk, Wv, Wo):
    """Causal multi-head attention of one sequence x (T, C)."""
    t, c = x.shape
    d = c // H
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    heads = []
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    for i in range(H):
        cols = slice(i * d, (i + 1) * d)
        s = q[:, cols] @ k[:, cols].T / math.sqrt(d)
        w = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
        heads.append(w @ v[:, cols])
    return torch.cat(heads, dim=1) @ Wo


def gpt_loss(p, x, y):
    """The mean cross-entropy of the model with parameters p (a dict)."""
    h = p["W_te"][x] + p["W_pe"][: x.shape[1]]  # (B, T, C)
    for l in range(L):
        a = layer_norm(h, p["ln1_g"][l], p["ln1_b"][l])
        att = torch.stack([attention(a[b], p["W_q"][l], p["W_k"][l],
                                     p["W_v"][l], p["W_o"][l])
                           for b in range(a.shape[0])])
        h = h + att
        a = layer_norm(h, p["ln2_g"][l], p["ln2_b"][l])
        h = h + gelu(a @ p["W_fc"][l] + p["b_fc"][l]) @ p["W_proj"][l] \
            + p["b_proj"][l]
    h = layer_norm(h, p["lnf_g"], p["lnf_b"])
    logits = h @ p["W_te"].T
    return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))


def lr_at(step):
    """Warm-up then cosine, written from the formula in gpt.h."""
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    f = (step - WARMUP) / (STEPS - 1 - WARMUP)
    return 1e-4 + (LR - 1e-4) * 0.5 * (1 + math.cos(math.pi * f))


def flat(p):
    return torch.cat([p[name].detach().reshape(-1) for name, _, _ in TENSORS])


def generate(out_dir):
    g = rng(20260808)
    parts = []

    # LayerNorm, N = 5 rows of C = 7
    x = leaf(uniform(g, 5, 7, lo=-2, hi=2))
    gain, bias = leaf(uniform(g, 7, lo=0.5, hi=1.5)), leaf(uniform(g, 7))
    d_y = uniform(g, 5, 7)
    y = layer_norm(x, gain, bias)
    y.backward(d_y)
    mean = x.detach().mean(dim=1)
    rstd = 1 / torch.sqrt(x.detach().var(dim=1, unbiased=False) + 1e-5)
    for label, t in (("x", x), ("g", gain), ("b", bias), ("y", y),
                     ("mean", mean), ("rstd", rstd), ("d_y", d_y),
                     ("d_x", x.grad), ("d_g", gain.grad), ("d_b", bias.grad)):
        parts.append(c_array(f"ch8_ln_{label}", t))

    # the MLP, N = 3 rows of C = 4, F = 16; inputs wide enough that GELU's
    # curved part is used
    x = leaf(uniform(g, 3, 4, lo=-2, hi=2))
    W_fc, b_fc = leaf(uniform(g, 4, 16)), leaf(uniform(g, 16))
    W_proj, b_proj = leaf(uniform(g, 16, 4, lo=-0.5, hi=0.5)), leaf(uniform(g, 4))
    d_out = uniform(g, 3, 4)
    fc = x @ W_fc + b_fc
    act = gelu(fc)
    out = act @ W_proj + b_proj
    out.backward(d_out)
    for label, t in (("x", x), ("W_fc", W_fc), ("b_fc", b_fc),
                     ("W_proj", W_proj), ("b_proj", b_proj), ("fc", fc),
                     ("gelu", act), ("out", out), ("d_out", d_out),
                     ("d_x", x.grad), ("d_W_fc", W_fc.grad),
                     ("d_b_fc", b_fc.grad), ("d_W_proj", W_proj.grad),
                     ("d_b_proj", b_proj.grad)):
        parts.append(c_array(f"ch8_mlp_{label}", t))

    # cross-entropy, N = 4 rows over V = 9
    logits = leaf(uniform(g, 4, 9, lo=-3, hi=3))
    targets = torch.randint(0, 9, (4,), generator=g)
    loss = F.cross_entropy(logits, targets)
    loss.backward()
    parts += [c_array("ch8_ce_logits", logits), c_ints("ch8_ce_targets", targets),
              c_array("ch8_ce_probs", torch.softmax(logits.detach(), dim=1)),
              f"static const double ch8_ce_loss = {loss.item()!r};\n",
              c_array("ch8_ce_d_logits", logits.grad)]

    # the whole model: parameters, a batch, the loss and every gradient
    p = {}
    for name, shape, decays in TENSORS:
        if name.endswith("_g"):
            t = uniform(g, *shape, lo=0.7, hi=1.3)
        elif decays:
            t = uniform(g, *shape, lo=-0.4, hi=0.4)
        else:
            t = uniform(g, *shape, lo=-0.1, hi=0.1)
        p[name] = leaf(t)
    x = torch.randint(0, V, (B, T), generator=g)
    y = torch.randint(0, V, (B, T), generator=g)
    parts += [c_array("ch8_gpt_params0", flat(p)), c_ints("ch8_gpt_x", x.reshape(-1)),
              c_ints("ch8_gpt_y", y.reshape(-1))]

    decay = [p[n] for n, _, d in TENSORS if d]
    other = [p[n] for n, _, d in TENSORS if not d]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD},
                             {"params": other, "weight_decay": 0.0}],
                            lr=LR, betas=BETAS, eps=EPS)
    losses, norms = [], []
    for step in range(2):
        opt.zero_grad()
        loss = gpt_loss(p, x, y)
        loss.backward()
        if step == 0:
            parts.append(c_array("ch8_gpt_grads0", torch.cat(
                [p[n].grad.reshape(-1) for n, _, _ in TENSORS])))
        norm = torch.nn.utils.clip_grad_norm_(list(p.values()), CLIP)
        assert norm > CLIP, "the golden case must exercise the clipping"
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        opt.step()
        losses.append(loss.item())
        norms.append(norm.item())
    parts += [c_array("ch8_gpt_losses", torch.tensor(losses)),
              c_array("ch8_gpt_norms", torch.tensor(norms)),
              c_array("ch8_gpt_params2", flat(p))]
    sizes = (f"enum {{ CH8_V = {V}, CH8_T = {T}, CH8_C = {C}, CH8_L = {L}, "
             f"CH8_H = {H}, CH8_B = {B}, CH8_P = {flat(p).numel()} }};\n"
             f"static const double ch8_train[] = {{{LR!r}, {WARMUP}, {STEPS}, "
             f"{BETAS[0]!r}, {BETAS[1]!r}, {EPS!r}, {WD!r}, {CLIP!r}}};\n")
    return write_header(out_dir, "ch8_golden", "CH8_GOLDEN_H", [sizes] + parts,
                        "tools/golden/ch8.py")
