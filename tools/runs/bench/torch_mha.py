"""Time PyTorch's nn.MultiheadAttention for chapter 7's benchmark, in a
fresh process, so that its peak memory is its own.

    usage: python3 torch_mha.py T THREADS REPS [MASK]

d_model 512, 8 heads, no biases (as the kit's layer; without the mask,
biases of 0: see main()), need_weights=False,
batch of 1, float32, inference (no_grad). MASK is "causal" (the default:
a causal mask) or "none" (no mask at all, attn_mask=None). Prints one
CSV line in the format of tools/runs/bench/attention.c:
    torch,T,threads,ms,gflops,peak_bytes,cpu_share              (causal)
    torch_noncausal,T,threads,ms,gflops,peak_bytes,cpu_share    (none)
ms is the median of REPS timed calls after one warm-up call; gflops
counts the same useful work as the C benchmark (with the mask, the
unmasked half of the scores, although PyTorch computes every score);
peak_bytes is the growth of the process's peak resident memory (VmHWM)
from just before the first call, with the module, input and mask
built, to the end. cpu_share is the CPU time the process got during the
timed calls over their wall time times THREADS, as attention.c's: near
1 when it had its cores to itself, lower when other programs took turns
on them (or when PyTorch left some of its threads idle).
"""
import statistics
import sys
import time

import torch

D_MODEL, N_HEADS = 512, 8


def peak_rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[4:] not in ([], ["causal"],
                                                           ["none"]):
        sys.exit("usage: torch_mha.py T THREADS REPS [causal|none]")
    T, threads, reps = (int(a) for a in sys.argv[1:4])
    if T < 1 or threads < 1 or reps < 1:
        sys.exit("torch_mha.py: T, THREADS and REPS must be 1 or more")
    causal = sys.argv[4:] != ["none"]
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    # Without a mask, in inference, PyTorch takes its fast path
    # (torch._native_multi_head_attention), which in PyTorch 1.13 fails
    # on a module without biases: the unmasked module has biases, all 0,
    # the same function as the kit's layer, on PyTorch's fastest path.
    mha = torch.nn.MultiheadAttention(D_MODEL, N_HEADS, bias=not causal,
                                      batch_first=True).eval()
    if not causal:
        with torch.no_grad():
            mha.in_proj_bias.zero_()
            mha.out_proj.bias.zero_()
    x = torch.rand(1, T, D_MODEL) * 2 - 1
    mask = (torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
            if causal else None)
    base = peak_rss()
    times = []
    with torch.no_grad():
        for k in range(reps + 1):
            if k == 1:  # the timed calls: after the warm-up
                cpu0, wall0 = time.process_time(), time.perf_counter()
            t0 = time.perf_counter()
            mha(x, x, x, attn_mask=mask, need_weights=False)
            times.append((time.perf_counter() - t0) * 1e3)
    wall = time.perf_counter() - wall0
    share = (time.process_time() - cpu0) / (wall * threads) if wall > 0 else 0
    peak = max(peak_rss() - base, 0)
    ms = statistics.median(times[1:])
    pairs = T * (T + 1) / 2 if causal else T * T
    flops = 8.0 * T * D_MODEL ** 2 + 4.0 * D_MODEL * pairs
    name = "torch" if causal else "torch_noncausal"
    print(f"{name},{T},{torch.get_num_threads()},{ms:.3f},"
          f"{flops / (ms * 1e6):.2f},{peak},{share:.2f}")


if __name__ == "__main__":
    main()
