#!/bin/bash
# bench.sh: chapter 7's benchmark. Times causal multi-head attention
# forward (d_model 512, 8 heads) for several T, in one run, side by side:
#   ch3_fused        chapter 3's mha_forward_fused() (up to BENCH_CH3_MAX)
#   flash            mha_forward_flash(), causal
#   flash_noncausal  the same without the mask: what skipping tiles saves
#   torch            PyTorch's nn.MultiheadAttention(need_weights=False),
#                    when /usr/bin/python3 can import torch
# and the steps of matmul_fast() on one projection, (T, 512) x (512, 512)
# at T = BENCH_MATMUL_T; the machine's multiply-add peak per thread
# (impl peak128/256/512: the widest vector that pays is the machine's);
# matmul_fast() and OpenBLAS's cblas_sgemm() on 1 thread and on
# BENCH_THREADS, at BENCH_MATMUL_T and BENCH_MATMUL_BIG. Every configuration runs in a fresh process
# (tools/runs/bench/attention.c, tools/runs/bench/torch_mha.py), which prints the
# median of BENCH_REPS timed calls after a warm-up, and the growth of
# its own peak resident memory.
#
#   usage: bench.sh BIN OUTDIR
#   environment (defaults): BENCH_T="256 512 1024 2048 4096"
#     BENCH_CH3_MAX=1024 BENCH_REPS=5 BENCH_THREADS=<nproc>
#     BENCH_MATMUL_T=1024 BENCH_CH3_REPS=3 (chapter 3 at T >= 1024)
#     BENCH_MATMUL_BIG=4096 (matmul_fast and OpenBLAS at this T too;
#     empty: not)
#
# Writes OUTDIR/attention.csv (impl,T,threads,ms,gflops,peak_bytes) and
# OUTDIR/summary.txt (the table, the ratios, the load), and prints both.
set -eu
bin=$1 out=$2
Ts=${BENCH_T:-256 512 1024 2048 4096}
ch3_max=${BENCH_CH3_MAX:-1024}
reps=${BENCH_REPS:-5}
threads=${BENCH_THREADS:-$(nproc)}
mm_T=${BENCH_MATMUL_T:-1024}
ch3_reps=${BENCH_CH3_REPS:-3}
mm_big=${BENCH_MATMUL_BIG-4096}
mkdir -p "$out"
csv=$out/attention.csv
tmp=$csv.tmp
echo "impl,T,threads,ms,gflops,peak_bytes" >"$tmp"

torch=no
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then torch=yes; fi
load_before=$(cut -d' ' -f1 /proc/loadavg)

run() { # impl T threads reps
    echo "  $1 T=$2 threads=$3" >&2
    "$bin" "$1" "$2" "$3" "$4" >>"$tmp"
}
for T in $Ts; do
    if [ "$T" -le "$ch3_max" ]; then
        # chapter 3 takes seconds per call at T = 1024: fewer repetitions
        r=$reps; [ "$T" -ge 1024 ] && [ "$r" -gt "$ch3_reps" ] && r=$ch3_reps
        run ch3_fused "$T" 1 "$r"
    fi
    run flash "$T" "$threads" "$reps"
    run flash_noncausal "$T" "$threads" "$reps"
    if [ $torch = yes ]; then
        echo "  torch T=$T threads=$threads" >&2
        # the same thread count for PyTorch's own threads and for the
        # BLAS it calls (OpenBLAS keeps a thread pool of its own)
        OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
            /usr/bin/python3 tools/runs/bench/torch_mha.py "$T" "$threads" "$reps" >>"$tmp"
    fi
done
for impl in matmul_ch1 matmul_ikj matmul_blocked matmul_tiled matmul_fast; do
    t=$threads; [ $impl = matmul_fast ] || t=1
    run $impl "$mm_T" "$t" "$reps"
done
# the limit: the machine's peak on 1 thread and on all, and what a
# library (OpenBLAS) gives, beside matmul_fast on the same thread counts
run peak 0 1 3
[ "$threads" -eq 1 ] || run peak 0 "$threads" 3
blas=yes
for T in $mm_T $mm_big; do
    for t in 1 $threads; do
        [ "$T" = "$mm_T" ] && [ "$t" = "$threads" ] || run matmul_fast "$T" "$t" "$reps"
        [ $blas = yes ] || continue
        echo "  openblas T=$T threads=$t" >&2
        rc=0
        OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t "$bin" openblas "$T" "$t" "$reps" >>"$tmp" || rc=$?
        [ $rc -eq 0 ] || { blas=no; [ $rc -eq 3 ] || exit $rc; }
        [ "$threads" -ne 1 ] || break
    done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)
# cache_bytes LEVEL TYPE: the size of cpu0's cache of that level and type
# in bytes, read from the machine now (sysfs, else getconf), 0 if unknown
cache_bytes() {
    local d s
    for d in /sys/devices/system/cpu/cpu0/cache/index*; do
        [ "$(cat "$d/level" 2>/dev/null)" = "$1" ] || continue
        [ "$(cat "$d/type" 2>/dev/null)" = "$2" ] || continue
        s=$(cat "$d/size" 2>/dev/null) || continue
        case $s in
        *K) echo $((${s%K} * 1024)); return ;;
        *M) echo $((${s%M} * 1048576)); return ;;
        [0-9]*) echo "$s"; return ;;
        esac
    done
    s=$(getconf "LEVEL$1_$([ "$2" = Data ] && echo D)CACHE_SIZE" 2>/dev/null) || s=0
    echo "${s:-0}"
}
mv "$tmp" "$csv"
# what the book quotes about the run itself
{
    echo "ch7.cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "ch7.cores=$(nproc)"
    echo "ch7.threads=$threads"
    echo "ch7.reps=$reps"
    echo "ch7.load_before=$load_before"
    echo "ch7.load_after=$load_after"
    echo "ch7.torch=$torch"
    echo "ch7.scratch_floats=$("$bin" scratch 4096 1 1)"
    echo "ch7.l1d_bytes=$(cache_bytes 1 Data)"
    echo "ch7.l2_bytes=$(cache_bytes 2 Unified)"
} >"$out/meta.values"

# The table, the ratios and the goals, from the CSV alone.
{
    echo "Chapter 7 benchmark: causal MHA forward, d_model 512, 8 heads;"
    echo "median of $reps runs after a warm-up (ch3_fused at T >= 1024: $ch3_reps);"
    echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores;" \
         "threads $threads; load average $load_before before, $load_after after."
    [ $torch = yes ] || echo "PyTorch is not importable by /usr/bin/python3 (make deps-dev): no torch rows."
    [ $blas = yes ] || echo "OpenBLAS (libopenblas.so.0) is not installed (make deps-dev): no openblas rows."
    echo
    column -s, -t "$csv"
    echo
    awk -F, -v torch=$torch -v threads="$threads" '
        # the first row of an impl at a T is the one on BENCH_THREADS
        NR > 1 && !(($1, $2) in ms) { ms[$1, $2] = $4; peak[$1, $2] = $6; gf[$1, $2] = $5; seen[$2] = 1 }
        NR > 1 {
                 nrow++; impl[nrow] = $1; Tr[nrow] = $2; thr[nrow] = $3; gfr[nrow] = $5 }
        function ratio(a, b) { return b > 0 ? sprintf("%.1fx", a / b) : "-" }
        END {
            printf "%6s  %14s  %14s  %16s  %18s\n", "T", "torch/flash", "ch3/flash",
                   "flash/torch mem", "noncausal/causal"
            for (T = 1; T <= 65536; T *= 2) {
                if (!(("flash", T) in ms)) continue
                f = ms["flash", T]
                vt = "-"; vc = "-"; vm = "-"
                if (("torch", T) in ms) vt = ratio(ms["torch", T], f)
                if (("ch3_fused", T) in ms) vc = ratio(ms["ch3_fused", T], f)
                if (("torch", T) in peak && peak["flash", T] > 0)
                    vm = sprintf("1/%.0f", peak["torch", T] / peak["flash", T])
                printf "%6d  %14s  %14s  %16s  %18s\n", T, vt, vc, vm,
                       ratio(ms["flash_noncausal", T], f)
            }
            print ""
            print "matmul steps, (T, 512) x (512, 512), GFLOP/s:"
            n = split("matmul_ch1 matmul_ikj matmul_blocked matmul_tiled matmul_fast", names, " ")
            for (k = 1; k <= n; k++)
                for (r = 1; r <= nrow; r++)
                    if (impl[r] == names[k]) {
                        printf "  %-15s %8.2f\n", names[k], gfr[r]
                        break
                    }
            # the peak: the fastest vector width, per thread count
            for (r = 1; r <= nrow; r++) if (impl[r] ~ /^peak/) {
                t = thr[r]
                if (gfr[r] > pk[t]) { pk[t] = gfr[r]; width[t] = substr(impl[r], 5) }
            }
            print ""
            if (!(1 in pk)) { print "(no peak measured)" }
            else {
                printf "The limit: multiply-add peak %.1f GFLOP/s on 1 thread (vectors of %s bits)", pk[1], width[1]
                if (threads in pk && threads != 1)
                    printf ", %.1f on %d threads together (%.1f per thread)", pk[threads], threads, pk[threads] / threads
                print "."
                print "Each row as a fraction of the peak on its own thread count:"
                printf "  %-16s %6s %8s %8s  %s\n", "impl", "T", "threads", "GFLOP/s", "of peak"
                for (r = 1; r <= nrow; r++) {
                    if (impl[r] !~ /^(matmul_|openblas|flash)/ || !(thr[r] in pk)) continue
                    if (impl[r] ~ /^flash/ && Tr[r] != 1024 && Tr[r] != 4096) continue
                    printf "  %-16s %6d %8d %8.1f  %5.0f %%\n", impl[r], Tr[r], thr[r], gfr[r], 100 * gfr[r] / pk[thr[r]]
                }
                for (r = 1; r <= nrow; r++)
                    if (impl[r] == "matmul_fast" && thr[r] == threads && (Tr[r] == 1024 || Tr[r] == 4096))
                        goal(sprintf("matmul_fast >= 50%% of the %d-thread peak, T=%d", threads, Tr[r]), gfr[r], pk[threads], 0.5)
            }
            print ""
            print "Goals (issue 14), this run:"
            if (torch == "yes") {
                goal("flash >= 1.5x faster than torch at T=1024", ms["torch", 1024], ms["flash", 1024], 1.5)
                goal("flash >= 2x faster than torch at T=4096", ms["torch", 4096], ms["flash", 4096], 2)
                goal("flash peak memory <= 1/10 of torch at T=4096", peak["torch", 4096], peak["flash", 4096], 10)
            } else print "  (the goals against PyTorch need torch: not measured)"
            goal("flash >= 30x faster than ch3_fused at T=1024", ms["ch3_fused", 1024], ms["flash", 1024], 30)
        }
        function goal(what, a, b, want) {
            if (a == "" || b == "" || b == 0) { printf "  %-48s not measured in this run\n", what; return }
            printf "  %-48s %6.1fx  %s\n", what, a / b, (a / b >= want ? "met" : "NOT met")
        }' "$csv"
} >"$out/summary.txt"
cat "$out/summary.txt"
