"""Time PyTorch's nn.MultiheadAttention for chapter 7's benchmark, in a
fresh process, so that its peak memory is its own.

    usage: python3 torch_mha.py T THREADS REPS

d_model 512, 8 heads, no biases (as the kit's layer), causal mask,
need_weights=False, batch of 1, float32, inference (no_grad). Prints one
CSV line in the format of tools/runs/bench/attention.c:
    torch,T,threads,ms,gflops,peak_bytes
ms is the median of REPS timed calls after one warm-up call; gflops
counts the same useful work as the C benchmark (the unmasked half of the
scores), although PyTorch computes every score; peak_bytes is the growth
of the process's peak resident memory (VmHWM) from just before the
first call, with the module, input and mask built, to the end.
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
    T, threads, reps = (int(a) for a in sys.argv[1:4])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(D_MODEL, N_HEADS, bias=False,
                                      batch_first=True).eval()
    x = torch.rand(1, T, D_MODEL) * 2 - 1
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    base = peak_rss()
    times = []
    with torch.no_grad():
        for k in range(reps + 1):
            t0 = time.perf_counter()
            mha(x, x, x, attn_mask=mask, need_weights=False)
            times.append((time.perf_counter() - t0) * 1e3)
    peak = max(peak_rss() - base, 0)
    ms = statistics.median(times[1:])
    flops = 8.0 * T * D_MODEL ** 2 + 4.0 * D_MODEL * T * (T + 1) / 2
    print(f"torch,{T},{torch.get_num_threads()},{ms:.3f},"
          f"{flops / (ms * 1e6):.2f},{peak}")


if __name__ == "__main__":
    main()
