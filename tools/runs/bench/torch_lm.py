"""Train chapter 8's model in PyTorch, for tools/runs/bench/lm.sh, in a
fresh process, so that its peak memory is its own.

    usage: python3 torch_lm.py V C L T B HEADS STEPS THREADS

The model of include/gpt.h: token and position embeddings, L blocks of
pre-LayerNorm causal multi-head attention (no biases) and a GELU MLP
(tanh approximation, width 4C, biases), a final LayerNorm, the output
tied to the token embedding; the mean cross-entropy; clipping to norm 1;
torch.optim.AdamW(lr 1e-3, betas (0.9, 0.95), eps 1e-8, weight decay 0.1
on the matrices and embeddings only). The tokens come from the stream of
tools/runs/lm/train.c (each token (5 * previous + 3) mod V, one in ten
drawn uniformly), drawn with torch's generator. float32, on the CPU.

Prints one line:
    torch,B,threads,tokens_per_s,peak_mb,base_mb
tokens_per_s over STEPS steps after one warm-up step; peak_mb the
process's peak resident memory (getrusage), base_mb the same just before
the model was built (the interpreter and torch's libraries).
"""
import math
import resource
import sys
import time

import torch
import torch.nn.functional as F


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Block(torch.nn.Module):
    def __init__(self, C, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(C, eps=1e-5)
        self.q = torch.nn.Linear(C, C, bias=False)
        self.k = torch.nn.Linear(C, C, bias=False)
        self.v = torch.nn.Linear(C, C, bias=False)
        self.o = torch.nn.Linear(C, C, bias=False)
        self.ln2 = torch.nn.LayerNorm(C, eps=1e-5)
        self.fc = torch.nn.Linear(C, 4 * C)
        self.proj = torch.nn.Linear(4 * C, C)

    def forward(self, x, mask):
        B, T, C = x.shape
        h = self.ln1(x)
        split = lambda t: t.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(C // self.heads)
        a = torch.softmax(s.masked_fill(mask[:T, :T], float("-inf")), dim=-1) @ v
        x = x + self.o(a.transpose(1, 2).reshape(B, T, C))
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(torch.nn.Module):
    def __init__(self, V, C, L, T, heads):
        super().__init__()
        self.wte = torch.nn.Parameter(torch.randn(V, C) * 0.02)
        self.wpe = torch.nn.Parameter(torch.randn(T, C) * 0.02)
        self.blocks = torch.nn.ModuleList(Block(C, heads) for _ in range(L))
        self.lnf = torch.nn.LayerNorm(C, eps=1e-5)
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

    def forward(self, x, y):
        T = x.shape[1]
        h = self.wte[x] + self.wpe[:T]
        for blk in self.blocks:
            h = blk(h, self.mask)
        logits = self.lnf(h) @ self.wte.t()
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))


def batch(gen, B, T, V):
    tok = torch.randint(V, (B,), generator=gen)
    seq = [tok]
    for _ in range(T):
        noise = torch.rand(B, generator=gen) < 0.1
        tok = torch.where(noise, torch.randint(V, (B,), generator=gen), (5 * tok + 3) % V)
        seq.append(tok)
    s = torch.stack(seq, 1)
    return s[:, :-1].contiguous(), s[:, 1:].contiguous()


def main():
    V, C, L, T, B, heads, steps, threads = (int(a) for a in sys.argv[1:9])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    base = peak_mb()
    model = GPT(V, C, L, T, heads)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": rest, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    gen = torch.Generator().manual_seed(2026)
    data = [batch(gen, B, T, V) for _ in range(steps + 1)]
    t0 = 0.0
    for step, (x, y) in enumerate(data):
        if step == 1:
            t0 = time.perf_counter()  # after one warm-up step
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    secs = time.perf_counter() - t0
    print(f"torch,{B},{torch.get_num_threads()},{steps * B * T / secs:.0f},"
          f"{peak_mb():.1f},{base:.1f}")


if __name__ == "__main__":
    main()
