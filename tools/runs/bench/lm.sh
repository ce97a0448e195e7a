#!/bin/bash
# lm.sh: chapter 8's training step against PyTorch's. Trains the model of
# include/gpt.h (by default V 8192, 4 heads, and the width, depth and
# context of chapter 8's long run, its row of tools/runs/lm/sizes.tsv) on the
# synthetic stream of tools/runs/lm/train.c, at each batch size, with the
# kit's gpt_train_step() (tools/runs/lm/train.c) and with PyTorch
# (tools/runs/bench/torch_lm.py: the same model, AdamW and clipping), one
# after the other in fresh processes, both on the same number of threads
# (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, torch.set_num_threads). Prints
# tokens/s for each, their ratio and each process's peak memory; the
# share of the machine's peak (an FMA loop on one thread, times the
# threads) that each reaches at the step's count of operations; then, for
# scale, the machine's matrix product: matmul_fast() (chapter 7's
# benchmark binary) and PyTorch's sgemm, (1024, 512) x (512, 512).
#
#   usage: lm.sh TRAIN_BIN ATTENTION_BIN OUTDIR
#   environment (defaults): LM_BATCHES="8 16 64" LM_STEPS=10 (timed, after
#     one warm-up step) LM_THREADS=2 LM_SIZE="8192 C L T 4" (V C L T h; C L T
#     the long size's d_model, layers and context in tools/runs/lm/sizes.tsv)
#
# Writes OUTDIR/lm.csv (impl,B,threads,tokens_per_s,peak_mb) and
# OUTDIR/lm_summary.txt, and prints the summary. The machine is shared:
# the load average before and after is part of the summary.
set -eu
train=$1 att=$2 out=$3
batches=${LM_BATCHES:-8 16 64}
steps=${LM_STEPS:-10}
threads=${LM_THREADS:-2}
sizes=tools/runs/lm/sizes.tsv
long=$(awk -F'\t' '/^#/ { next } !h { for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next }
    $1 == "long" { print $col["d_model"], $col["layers"], $col["context"] }' "$sizes")
[ -n "$long" ] || { echo "lm.sh: $sizes has no long size" >&2; exit 1; }
read -r V C L T H <<<"${LM_SIZE:-8192 $long 4}"
mkdir -p "$out"
csv=$out/lm.csv
tmp=$csv.tmp
echo "impl,B,threads,tokens_per_s,peak_mb" >"$tmp"

torch=no
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then torch=yes; fi
load_before=$(cut -d' ' -f1 /proc/loadavg)
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads

for B in $batches; do
    echo "  kit B=$B threads=$threads" >&2
    # the last lines: "N steps in S s: X tokens/s; peak memory M MB",
    # then "parts: attention backward A ms; readout products R ms, F GFLOP"
    LM_QUIET=1 LM_PARTS=1 "$train" "$V" "$C" "$L" "$T" "$B" "$H" $((steps + 1)) |
        tee "$out/parts.$B" |
        awk -v B="$B" -v t="$threads" '/tokens\/s; peak memory/ {
            for (i = 1; i <= NF; i++) {
                if ($(i + 1) == "tokens/s;") tps = $i
                if ($i == "memory") mb = $(i + 1)
            }
            printf "kit,%d,%d,%s,%s\n", B, t, tps, mb }' >>"$tmp"
    if [ $torch = yes ]; then
        echo "  torch B=$B threads=$threads" >&2
        /usr/bin/python3 tools/runs/bench/torch_lm.py "$V" "$C" "$L" "$T" "$B" \
            "$H" "$steps" "$threads" | cut -d, -f1-5 >>"$tmp"
    fi
done

# the machine's matrix product, for scale, and its peak on one thread
mm_kit=$("$att" matmul_fast 1024 "$threads" 5 | cut -d, -f5)
peaks=$("$att" peak 0 1 5)
peak1=$(echo "$peaks" | awk -F, '$5 > p { p = $5 } END { print p }')
# the peak at 8 floats a vector, the width of chapter 7's micro-kernel
# (fast.h: MM_NR = 2 vectors of 8 floats), which matmul_fast() cannot pass
peak8=$(echo "$peaks" | awk -F, '$1 == "peak256" { print $5 }')
mm_torch=-
if [ $torch = yes ]; then
    mm_torch=$(/usr/bin/python3 - "$threads" <<'PY'
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
a, b = torch.rand(1024, 512), torch.rand(512, 512)
for _ in range(3):
    a @ b
times = []
for _ in range(10):
    t0 = time.perf_counter(); a @ b; times.append(time.perf_counter() - t0)
print(f"{2 * 1024 * 512 * 512 / sorted(times)[5] / 1e9:.2f}")
PY
)
fi
load_after=$(cut -d' ' -f1 /proc/loadavg)
mv "$tmp" "$csv"

{
    echo "Chapter 8 training step: V $V, C $C, L $L, T $T, $H heads, AdamW, clip 1;"
    echo "$steps steps after one warm-up step, threads $threads (kit and torch);"
    echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores;" \
         "load average $load_before before, $load_after after."
    [ $torch = yes ] || echo "PyTorch is not importable by /usr/bin/python3 (make deps-dev): no torch rows."
    echo
    column -s, -t "$csv"
    echo
    awk -F, 'NR > 1 { tps[$1, $2] = $4; mb[$1, $2] = $5; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
        END {
            printf "%6s  %12s  %12s  %10s  %16s\n", "B", "kit tok/s", "torch tok/s",
                   "kit/torch", "mem kit/torch"
            for (k = 1; k <= n; k++) {
                B = order[k]
                r = (("torch", B) in tps) && tps["torch", B] > 0 ? sprintf("%.2fx", tps["kit", B] / tps["torch", B]) : "-"
                m = (("torch", B) in mb) ? sprintf("%s/%s MB", mb["kit", B], mb["torch", B]) : "-"
                printf "%6d  %12s  %12s  %10s  %16s\n", B, tps["kit", B],
                       (("torch", B) in tps) ? tps["torch", B] : "-", r, m
            }
        }' "$csv"
    # the goal, batch by batch: at least 3x PyTorch's tokens/s
    awk -F, 'NR > 1 { tps[$1, $2] = $4; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
        END {
            for (k = 1; k <= n; k++) {
                B = order[k]
                if (!(("torch", B) in tps) || tps["torch", B] <= 0) continue
                r = tps["kit", B] / tps["torch", B]
                line = line sprintf("%sB=%d %s (%.2fx)", line == "" ? "" : "; ", B,
                                    r >= 3 ? "met" : "NOT met", r)
            }
            if (line != "") printf "\ngoal, at least 3x PyTorch'"'"'s tokens/s: %s\n", line
        }' "$csv"
    echo "(chapter 8's runs train at batch 8, two networks at a time on one"
    echo " thread each; the model's default batch is 16)"
    # the step's share of the machine's peak: tokens/s x the step's
    # floating-point operations per token (train.c counts them from the
    # shapes), against the FMA peak of one thread times the threads
    mflop=$(awk '/^model flops:/ { print $3; exit }' "$out/parts.${batches%% *}")
    echo
    echo "the step's share of the machine's peak, an FMA loop on one thread measured"
    echo "in this run, times $threads threads: $peak1 GFLOP/s a thread at the widest"
    echo "vectors; $peak8 GFLOP/s at 8 floats a vector, the width of chapter 7's"
    echo "micro-kernel, which is all matmul_fast() can use. At $mflop MFLOP a token:"
    awk -F, -v mf="$mflop" -v pk="$peak1" -v p8="$peak8" -v t="$threads" '
        NR > 1 { tps[$1, $2] = $4; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
        END {
            printf "%6s  %12s  %8s  %12s  %14s  %8s\n", "B", "kit GFLOP/s", "of peak",
                   "of 8-float", "torch GFLOP/s", "of peak"
            for (k = 1; k <= n; k++) {
                B = order[k]
                kg = tps["kit", B] * mf / 1000
                tg = (("torch", B) in tps) ? tps["torch", B] * mf / 1000 : -1
                printf "%6d  %12.1f  %7.0f%%  %11.0f%%  %14s  %8s\n", B, kg,
                       100 * kg / (pk * t), 100 * kg / (p8 * t),
                       tg < 0 ? "-" : sprintf("%.1f", tg),
                       tg < 0 ? "-" : sprintf("%.0f%%", 100 * tg / (pk * t))
                if (B == 16 || B == 64)
                    line = line sprintf("%sB=%d %s (%.0f%%)", line == "" ? "" : "; ", B,
                                        kg >= 0.5 * pk * t ? "met" : "NOT met",
                                        100 * kg / (pk * t))
            }
            if (line != "") printf "goal, at least 50%% of the peak: %s\n", line
        }' "$csv"
    # where a step's time goes: its parts timed on one thread
    echo
    echo "one step timed on one thread (CPU time, train.c's parts()): the forward"
    echo "pass, the backward pass and the update; and the readout's three products"
    echo "(matmul_fast, chapter 7's code), which are inside the two passes, beside"
    echo "the time they would take at the peak at 8 floats and at the widest:"
    for B in $batches; do
        awk -v B="$B" -v pk="$peak1" -v p8="$peak8" '
            /^parts:/ {
                f = $3; k = $6; u = $9; r = $13; gf = $15
                s = f + k + u
                printf "  B=%d: forward %.1f, backward %.1f, update %.1f: %.1f ms a step; readout products %.1f ms (%.0f%% of it), at the peaks %.1f and %.1f ms\n",
                       B, f, k, u, s, r, 100 * r / s, 1000 * gf / p8, 1000 * gf / pk
            }' "$out/parts.$B"
    done
    echo
    echo "matrix product (1024, 512) x (512, 512), GFLOP/s on $threads threads:" \
         "matmul_fast $mm_kit, torch $mm_torch"
    echo "(torch's peak memory includes the interpreter and its libraries, about"
    echo " 230 MB before the model is built)"
} >"$out/lm_summary.txt"
cat "$out/lm_summary.txt"
