#!/bin/bash
# bench.sh: chapter 7's benchmark. Times causal multi-head attention
# forward (d_model 512, 8 heads) for several T, in one run, side by side:
#   ch3_fused        chapter 3's mha_forward_fused() (up to BENCH_CH3_MAX)
#   flash            mha_forward_flash(), causal
#   flash_noncausal  the same without the mask: what skipping tiles saves
#   flash_proj, flash_att  its two parts on their own: the four
#                    projections (matmul_fast) and the heads' attention
#                    (flash_attention)
#   torch            PyTorch's nn.MultiheadAttention(need_weights=False),
#                    when /usr/bin/python3 can import torch
#   torch_noncausal  the same without a mask
# and the steps of matmul_fast() on one projection, (T, 512) x (512, 512)
# at T = BENCH_MATMUL_T; the machine's multiply-add peak per thread
# (impl peak128/256/512: the widest vector that pays is the machine's);
# matmul_fast() and OpenBLAS's cblas_sgemm() on 1 thread and on
# BENCH_THREADS, at BENCH_MATMUL_T and BENCH_MATMUL_BIG. Every configuration runs in a fresh process
# (tools/runs/bench/attention.c, tools/runs/bench/torch_mha.py), which prints the
# median of BENCH_REPS timed calls after a warm-up, and the growth of
# its own peak resident memory.
#
# Every ratio the book prints is measured again by alternating rounds
# (alternate() below): the sides of a comparison run one after the other,
# each in a fresh process, in one order in odd rounds and the reverse
# in even ones, BENCH_ROUNDS times (chapter 3's form, whose one call
# takes seconds, BENCH_CH3_ROUNDS times, one call without warm-up). Each
# round gives one ratio, the slower side's time over the faster's; the
# comparison's ratio is their median, and it "agreed" when every
# round's ratio is within BENCH_AGREE (a fraction) of that median (from
# five rounds on, every round but the highest and the lowest ratio, so
# that one round a passing program hit does not decide alone) and
# every process of it had its cores: its cpu_share (attention.c: CPU
# time over wall time times threads) at least BENCH_SHARE. A load that
# comes and goes makes the rounds disagree, where one sample of each side
# would have printed whatever the load made of it; a load that stays (a
# busy loop beside the run) lowers every process's cpu_share. The comparisons:
# the matmul steps (loop, blocks, tile, pack, threads and all of the
# product), skipping the masked tiles (flash against flash_noncausal),
# the faster exp (against flash_libm_exp) and chapter 3's form (ch3,
# against flash; the round of median time is also its row at
# BENCH_FACTOR_T, one call without warm-up) and, when PyTorch is
# installed, its nn.MultiheadAttention (torch, against flash, in
# processes of its own, torch_mha.py), into OUTDIR/rounds.csv (every process's line),
# factors.csv and factors.values (ch7.factor_KEY and its _agreed, _lo,
# _hi, _rounds, _fast_ms, _slow_ms).
#
# With BENCH_MINE (a build of attention.c on the student's code), the
# rows mine_flash, mine_flash_noncausal, mine_flash_proj, mine_flash_att
# and mine_matmul_* time the student's code beside the reference's, and
# the summary says which part of a slower flash to look at. With
# BENCH_LIBM_EXP (the reference built with tools/runs/bench/libm_exp.h),
# the row flash_libm_exp, at BENCH_FACTOR_T, is flash with the C
# library's expf() in place of fast_expf().
#
#   usage: bench.sh BIN OUTDIR
#   environment (defaults): BENCH_T="256 512 1024 2048 4096"
#     BENCH_CH3_MAX=1024 BENCH_REPS=5 BENCH_THREADS=<nproc>
#     BENCH_MATMUL_T=1024 BENCH_CH3_REPS=3 (chapter 3 at T >= 1024)
#     BENCH_MATMUL_BIG=4096 (matmul_fast and OpenBLAS at this T too;
#     empty: not) BENCH_FACTOR_T=1024 (the T of the table of factors'
#     two flash rows; the largest of BENCH_T when it is not one of them)
#     BENCH_MINE= BENCH_LIBM_EXP= (empty: no such rows)
#     BENCH_ROUNDS=5 BENCH_CH3_ROUNDS=3 BENCH_ROUND_REPS=3 (the timed
#     calls of each side in a round, the median taken; matmul_ch1 and
#     chapter 3, whose calls take a second or more, one call and no
#     warm-up) BENCH_AGREE=0.10 BENCH_SHARE=0.8
#
# Writes OUTDIR/attention.csv (impl,T,threads,ms,gflops,peak_bytes),
# OUTDIR/rounds.csv, factors.csv and factors.values (what each step
# bought, from the rounds) and OUTDIR/summary.txt (the table, the ratios, the
# load, the factors, the chapter's goals, the student's rows), and
# prints the summary; on stderr, each step with the time so far and left.
set -eu
bin=$1 out=$2
Ts=${BENCH_T:-256 512 1024 2048 4096}
ch3_max=${BENCH_CH3_MAX:-1024}
reps=${BENCH_REPS:-5}
threads=${BENCH_THREADS:-$(nproc)}
mm_T=${BENCH_MATMUL_T:-1024}
ch3_reps=${BENCH_CH3_REPS:-3}
mm_big=${BENCH_MATMUL_BIG-4096}
mine=${BENCH_MINE:-}
libm=${BENCH_LIBM_EXP:-}
fT=${BENCH_FACTOR_T:-1024}
rounds=${BENCH_ROUNDS:-5}
ch3_rounds=${BENCH_CH3_ROUNDS:-3}
rreps=${BENCH_ROUND_REPS:-3}
agree=${BENCH_AGREE:-0.10}
share=${BENCH_SHARE:-0.8}
case " $Ts " in *" $fT "*) ;; *) for fT in $Ts; do :; done ;; esac
mkdir -p "$out"
csv=$out/attention.csv
tmp=$csv.tmp
echo "impl,T,threads,ms,gflops,peak_bytes,cpu_share" >"$tmp"
rtmp=$out/rounds.csv.tmp
echo "group,round,name,impl,T,threads,ms,gflops,peak_bytes,cpu_share" >"$rtmp"

torch=no
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then torch=yes; fi
load_before=$(cut -d' ' -f1 /proc/loadavg)

# Every measurement goes through step(), which runs the plan twice: once
# dry (dry=1), to add up the expected cost of the whole run, then for
# real, printing the progress and the time left as it goes. The cost of
# a step is a rough estimate in ms: its GFLOPs at a typical rate for
# its kind, times the calls, plus a start-up; the time left scales the
# elapsed time by the cost still to come.
dry=1 cost_total=0 cost_done=0
cost() { # impl T reps: the estimated cost in ms
    awk -v impl="${1#mine_}" -v T="$2" -v reps="$3" 'BEGIN {
        att = (8 * T * 512 * 512 + 2 * 512 * T * (T + 1)) / 1e9
        mm = 2 * T * 512 * 512 / 1e9
        rate["ch3_fused"] = 0.8; rate["flash"] = 40; rate["flash_noncausal"] = 30
        rate["torch"] = 40; rate["torch_noncausal"] = 40
        rate["flash_proj"] = 60; rate["flash_att"] = 30; rate["flash_libm_exp"] = 25
        rate["matmul_ch1"] = 2; rate["matmul_ikj"] = 15
        rate["matmul_blocked"] = 12; rate["matmul_tiled"] = 35
        rate["matmul_fast"] = 60; rate["openblas"] = 100
        g = (impl ~ /^matmul|^openblas/) ? mm : att
        if (impl == "flash_proj") g = 4 * mm
        if (impl == "flash_att") g = att - 4 * mm
        ms = impl == "peak" ? 2500 : 1000 * g / rate[impl] * (reps + 1)
        printf "%d\n", ms + (impl == "torch" ? 1500 : 50) }'
}
step() { # impl T threads reps command...: run command, output to the CSV
    local c
    c=$(cost "$1" "$2" "$4")
    if [ $dry = 1 ]; then cost_total=$((cost_total + c)); return 0; fi
    local left="" el=$((SECONDS - start))
    if [ $cost_done -gt 0 ] && [ $el -gt 0 ]; then
        left=$(( el * (cost_total - cost_done) / cost_done ))
        left=", about $((left / 60))m$(printf %02d $((left % 60)))s left"
    fi
    echo "  [$((el / 60))m$(printf %02d $((el % 60)))s$left] $1 T=$2 threads=$3" >&2
    cost_done=$((cost_done + c))
    shift 4
    "$@" >>"$tmp"
}
run() { # impl T threads reps
    step "$1" "$2" "$3" "$4" "$bin" "$1" "$2" "$3" "$4"
}
# as_row NAME BIN IMPL T THREADS REPS: BIN's line for IMPL, named NAME
as_row() {
    local name=$1
    shift
    "$@" | sed "s/^[^,]*,/$name,/"
}
mine_run() { # impl T threads reps: the student's code, rows mine_IMPL
    [ -n "$mine" ] || return 0
    step "mine_$1" "$2" "$3" "$4" as_row "mine_$1" "$mine" "$1" "$2" "$3" "$4"
}
measure() {
for T in $Ts; do
    # chapter 3 at BENCH_FACTOR_T: its row comes from its rounds
    # (rounds_all), which time it anyway
    if [ "$T" -le "$ch3_max" ] && { [ "$T" != "$fT" ] || [ "$ch3_rounds" -lt 1 ]; }; then
        # chapter 3 takes seconds per call at T = 1024: fewer repetitions
        r=$reps; [ "$T" -ge 1024 ] && [ "$r" -gt "$ch3_reps" ] && r=$ch3_reps
        run ch3_fused "$T" 1 "$r"
    fi
    for impl in flash flash_noncausal flash_proj flash_att; do
        run $impl "$T" "$threads" "$reps"
        mine_run $impl "$T" "$threads" "$reps"
    done
    if [ -n "$libm" ] && [ "$T" = "$fT" ]; then
        step flash_libm_exp "$T" "$threads" "$reps" \
            as_row flash_libm_exp "$libm" flash "$T" "$threads" "$reps"
    fi
    if [ $torch = yes ]; then
        # the same thread count for PyTorch's own threads and for the
        # BLAS it calls (OpenBLAS keeps a thread pool of its own)
        for mask in causal none; do
            name=torch; [ $mask = causal ] || name=torch_noncausal
            step $name "$T" "$threads" "$reps" env OMP_NUM_THREADS="$threads" \
                OPENBLAS_NUM_THREADS="$threads" /usr/bin/python3 \
                tools/runs/bench/torch_mha.py "$T" "$threads" "$reps" $mask
        done
    fi
done
for impl in matmul_ch1 matmul_ikj matmul_blocked matmul_tiled matmul_fast; do
    t=$threads; [ $impl = matmul_fast ] || t=1
    run $impl "$mm_T" "$t" "$reps"
    mine_run $impl "$mm_T" "$t" "$reps"
done
# the limit: the machine's peak on 1 thread and on all, and what a
# library (OpenBLAS) gives, beside matmul_fast on the same thread counts
peaks() { # the fastest of 10 runs; measured twice, here and at the end,
    # since the clock of a core varies with its load and temperature, and
    # the summary takes the larger: a peak measured low would make every
    # fraction of it too high
    run peak 0 1 10
    [ "$threads" -eq 1 ] || run peak 0 "$threads" 10
}
peaks
blas=yes
for T in $mm_T $mm_big; do
    for t in 1 $threads; do
        [ "$T" = "$mm_T" ] && [ "$t" = "$threads" ] || run matmul_fast "$T" "$t" "$reps"
        [ $blas = yes ] || continue
        rc=0
        step openblas "$T" "$t" "$reps" env OPENBLAS_NUM_THREADS="$t" \
            OMP_NUM_THREADS="$t" "$bin" openblas "$T" "$t" "$reps" || rc=$?
        [ $rc -eq 0 ] || { blas=no; [ $rc -eq 3 ] || exit $rc; }
        [ "$threads" -ne 1 ] || break
    done
done
rounds_all
peaks
}
# to_rounds GROUP ROUND NAME command...: the command's line, prefixed,
# into the rounds
to_rounds() {
    local pre=$1,$2,$3 line
    shift 3
    line=$("$@")
    echo "$pre,$line" >>"$rtmp"
}
# alternate GROUP N SIDE...: N rounds of every SIDE, in the order given
# in odd rounds and reversed in even ones (a drift of the machine then
# weighs on both sides alike). A SIDE is NAME:IMPL:T:THREADS:REPS:WARMUP
# or NAME:IMPL:T:THREADS:REPS:WARMUP:BIN (another build of attention.c).
alternate() {
    local group=$1 n=$2 r k i name impl T th rp wu sb
    shift 2
    for ((r = 1; r <= n; r++)); do
        for ((k = 1; k <= $#; k++)); do
            i=$k
            [ $((r % 2)) = 1 ] || i=$(($# + 1 - k))
            IFS=: read -r name impl T th rp wu sb <<<"${!i}"
            step "$impl" "$T" "$th" "$rp" to_rounds "$group" "$r" "$name" \
                "${sb:-$bin}" "$impl" "$T" "$th" "$rp" "$wu"
        done
    done
}
# torch_bin IMPL T THREADS REPS WARMUP: PyTorch's line (torch_mha.py),
# called as a build of attention.c is, so that alternate() can time it
# (its warm-up is always one call); the same thread count for PyTorch's
# own threads and for the BLAS it calls (OpenBLAS keeps a pool of its own)
torch_bin() {
    local mask=causal
    [ "$1" = torch ] || mask=none
    env OMP_NUM_THREADS="$3" OPENBLAS_NUM_THREADS="$3" /usr/bin/python3 \
        tools/runs/bench/torch_mha.py "$2" "$3" "$4" $mask
}
rounds_all() {
    local layer=(flash:flash:$fT:$threads:$rreps:1
        flash_noncausal:flash_noncausal:$fT:$threads:$rreps:1)
    [ -z "$libm" ] || layer+=("flash_libm_exp:flash:$fT:$threads:$rreps:1:$libm")
    alternate layer "$rounds" "${layer[@]}"
    if [ "$fT" -le "$ch3_max" ]; then
        alternate ch3 "$ch3_rounds" "flash:flash:$fT:$threads:$rreps:1" \
            "ch3_fused:ch3_fused:$fT:1:1:0"
        # its row of the table: the round of median time
        [ $dry = 1 ] || awk -F, -v OFS=, '$1 == "ch3" && $3 == "ch3_fused"' "$rtmp" |
            sort -t, -k7,7g | sed -n "$(((ch3_rounds + 1) / 2))p" | cut -d, -f4- >>"$tmp"
    fi
    local mm=(matmul_ch1:matmul_ch1:$mm_T:1:1:0)
    for impl in matmul_ikj matmul_blocked matmul_tiled; do
        mm+=("$impl:$impl:$mm_T:1:$rreps:1")
    done
    [ "$threads" -eq 1 ] || mm+=("matmul_fast_1:matmul_fast:$mm_T:1:$rreps:1")
    mm+=("matmul_fast:matmul_fast:$mm_T:$threads:$rreps:1")
    alternate matmul "$rounds" "${mm[@]}"
    if [ $torch = yes ]; then
        alternate torch "$rounds" "flash:flash:$fT:$threads:$rreps:1" \
            "torch:torch:$fT:$threads:$rreps:1:torch_bin"
    fi
}
measure
dry=0 start=$SECONDS
measure
mv "$rtmp" "$out/rounds.csv"
# The comparisons, from the rounds alone: factors.csv and factors.values.
awk -F, -v agree="$agree" -v minshare="$share" -v out="$out" -v threads="$threads" -v fT="$fT" \
    -v mmT="$mm_T" -v rounds="$rounds" -v ch3_rounds="$ch3_rounds" -v rreps="$rreps" '
    NR > 1 { t[$1, $2, $3] = $7; sh[$1, $2, $3] = $10; th[$1, $3] = $6; if ($2 + 0 > nr[$1]) nr[$1] = $2 + 0 }
    function median(x, n,   i, j, v) {
        for (i = 2; i <= n; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v }
        return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
    }
    # cmp KEY STEP GROUP FAST SLOW T: the rounds of GROUP where both ran
    function cmp(key, step, group, fast, slow, T,   r, n, x, xf, xs, med, ok, low, k) {
        n = 0; split("", x); split("", xf); split("", xs); low = 1
        for (r = 1; r <= nr[group]; r++)
            if ((group, r, fast) in t && (group, r, slow) in t && t[group, r, fast] > 0) {
                n++; x[n] = t[group, r, slow] / t[group, r, fast]
                xf[n] = t[group, r, fast]; xs[n] = t[group, r, slow]
                if (sh[group, r, fast] < low) low = sh[group, r, fast] + 0
                if (sh[group, r, slow] < low) low = sh[group, r, slow] + 0
            }
        if (n == 0) return
        med = median(x, n)
        # agreed: at least 3 rounds, each within agree of the median
        # (from 5 rounds on, all but the highest and the lowest: median()
        # sorted x), and every process had at least minshare of its cores
        k = n >= 5 ? 1 : 0
        ok = (n >= 3 && x[1 + k] >= med * (1 - agree) && x[n - k] <= med * (1 + agree) && low >= minshare) ? "yes" : "no"
        printf "%s,%s,%s,%s,%d,%d,%d,%d,%.3f,%.3f,%.3f,%s,%.3f,%.3f,%.2f\n", key, step, fast, slow, T,
            th[group, fast], th[group, slow], n, med, x[1], x[n], ok, median(xf, n), median(xs, n), low > fcsv
        printf "ch7.factor_%s_share=%.0f\n", key, 100 * low > fval
        printf "ch7.factor_%s=%.2f\nch7.factor_%s_agreed=%s\nch7.factor_%s_lo=%.2f\nch7.factor_%s_hi=%.2f\n", \
            key, med, key, ok, key, x[1], key, x[n] > fval
        printf "ch7.factor_%s_rounds=%d\nch7.factor_%s_fast_ms=%.1f\nch7.factor_%s_slow_ms=%.1f\n", \
            key, n, key, median(xf, n), key, median(xs, n) > fval
    }
    END {
        fcsv = out "/factors.csv"; fval = out "/factors.values"
        print "key,step,impl,against,T,threads,threads_against,rounds,factor,lo,hi,agreed,ms,ms_against,cpu_share" > fcsv
        printf "" > fval
        f1 = threads > 1 ? "matmul_fast_1" : "matmul_fast"
        cmp("loop", "loop order", "matmul", "matmul_ikj", "matmul_ch1", mmT)
        cmp("blocks", "cache blocks", "matmul", "matmul_blocked", "matmul_ikj", mmT)
        cmp("tile", "register tile", "matmul", "matmul_tiled", "matmul_blocked", mmT)
        cmp("pack", "packing and micro-kernel", "matmul", f1, "matmul_tiled", mmT)
        if (threads > 1) cmp("threads", "threads", "matmul", "matmul_fast", f1, mmT)
        cmp("matmul", "all of the product", "matmul", "matmul_fast", "matmul_ch1", mmT)
        cmp("skip", "skipped masked tiles", "layer", "flash", "flash_noncausal", fT)
        cmp("exp", "faster exp (fast_expf)", "layer", "flash", "flash_libm_exp", fT)
        cmp("ch3", "chapter 7 against chapter 3", "ch3", "flash", "ch3_fused", fT)
        cmp("torch", "PyTorch against chapter 7", "torch", "flash", "torch", fT)
        printf "ch7.factor_T=%d\nch7.factor_mm_T=%d\nch7.factor_threads_n=%d\n", fT, mmT, threads > fval
        printf "ch7.rounds=%d\nch7.ch3_rounds=%d\nch7.round_reps=%d\nch7.agree_pct=%.0f\nch7.share_pct=%.0f\n", \
            rounds, ch3_rounds, rreps, 100 * agree, 100 * minshare > fval
    }' "$out/rounds.csv"
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
    # whether perf can count cache misses here (many virtual machines
    # do not expose the counters)
    if perf stat -x, -e cache-misses true 2>&1 >/dev/null | grep -q '^[0-9]'; then
        echo "ch7.perf_counters=yes"
    else echo "ch7.perf_counters=no"; fi
} >"$out/meta.values"

# The table, the ratios and the goals, from the CSV alone.
{
    echo "Chapter 7 benchmark: causal MHA forward, d_model 512, 8 heads;"
    echo "median of $reps runs after a warm-up (ch3_fused at T >= 1024: $ch3_reps; at T = $fT:"
    echo "the round of median time of its $ch3_rounds alternating rounds, one call each, no warm-up);"
    echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores;" \
         "threads $threads; load average $load_before before, $load_after after."
    [ $torch = yes ] || echo "PyTorch is not importable by /usr/bin/python3 (make deps-dev): no torch rows."
    [ $blas = yes ] || echo "OpenBLAS (libopenblas.so.0) is not installed (make deps-dev): no openblas rows."
    echo
    column -s, -t "$csv"
    echo
    awk -F, -v torch=$torch -v threads="$threads" -v mmT="$mm_T" -v fT="$fT" \
        -v out="$out" -v impl_name="${BENCH_MINE_NAME:-}" -v rounds="$rounds" \
        -v ch3_rounds="$ch3_rounds" -v agree="$agree" -v minshare="$share" '
        # the first row of an impl at a T is the one on BENCH_THREADS
        NR > 1 && !(($1, $2) in ms) { ms[$1, $2] = $4; peak[$1, $2] = $6; gf[$1, $2] = $5; seen[$2] = 1 }
        NR > 1 && !(($1, $2, $3) in mst) { mst[$1, $2, $3] = $4 }
        NR > 1 && $1 ~ /^mine_/ { have_mine = 1 }
        NR > 1 && $1 == "flash" { flashT[$2] = 1 }
        NR > 1 {
                 nrow++; impl[nrow] = $1; Tr[nrow] = $2; thr[nrow] = $3; gfr[nrow] = $5 }
        function ratio(a, b) { return b > 0 ? sprintf("%.1fx", a / b) : "-" }
        END {
            # the times of torch, ch3 and noncausal as multiples of
            # those of flash (a ratio above 1: flash is faster), the memory of flash
            # as a fraction of that of torch
            printf "Times as multiples of flash'"'"'s (flash, noncausal and torch on %d threads, ch3 on 1%s):\n", threads, threads == 1 ? "" : ": ch3/flash compares unequal thread counts"
            printf "%6s  %14s  %20s  %14s  %16s  %18s\n", "T", "torch/flash", "no mask: torch/flash", "ch3/flash",
                   "flash/torch mem", "noncausal/causal"
            for (T = 1; T <= 65536; T *= 2) {
                if (!(("flash", T) in ms)) continue
                f = ms["flash", T]
                vt = "-"; vc = "-"; vm = "-"; vn = "-"
                if (("torch", T) in ms) vt = ratio(ms["torch", T], f)
                if (("torch_noncausal", T) in ms) vn = ratio(ms["torch_noncausal", T], ms["flash_noncausal", T])
                if (("ch3_fused", T) in ms) vc = ratio(ms["ch3_fused", T], f)
                if (("torch", T) in peak && peak["flash", T] > 0)
                    vm = sprintf("1/%.0f", peak["torch", T] / peak["flash", T])
                printf "%6d  %14s  %20s  %14s  %16s  %18s\n", T, vt, vn, vc, vm,
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
                    if (gfr[r] > pk[thr[r]]) over++
                }
                if (over)
                    print "  (" over " row(s) above 100 %: the peak kernel ran slower than the matmul did, so a core'"'"'s clock changed during the run (load or heat); these fractions are upper bounds)"
            }
            factors()
            print ""
            print "Chapter 7'"'"'s goals, this run (a goal is met when the number reaches it):"
            for (r = 1; r <= nrow; r++)
                if (impl[r] == "matmul_fast" && thr[r] == threads && (Tr[r] == 1024 || Tr[r] == 4096) && (threads in pk))
                    share(sprintf("matmul_fast, T=%d, %d threads: share of the %d-thread peak", Tr[r], threads, threads),
                          gfr[r], pk[threads], 0.5)
            if (torch == "yes") {
                for (T = 1024; T <= 4096; T *= 2)
                    times(sprintf("flash against torch, T=%d, both %d threads", T, threads),
                          ms["torch", T], ms["flash", T], 2)
                for (T = 1024; T <= 4096; T *= 2)
                    times(sprintf("no mask: flash against torch, T=%d, both %d threads", T, threads),
                          ms["torch_noncausal", T], ms["flash_noncausal", T], 1.5)
                frac("flash peak memory as a share of torch'"'"'s, T=4096", peak["flash", 4096], peak["torch", 4096], 10)
            } else print "  (the goals against PyTorch need torch: not measured)"
            times(sprintf("flash against ch3_fused, T=1024, %d threads against 1", threads),
                  ms["ch3_fused", 1024], ms["flash", 1024], 30)
            if (have_mine) mine()
        }
        # What each step bought: the comparisons of the alternating
        # rounds, as factors.csv holds them
        function factors(   fcsv, line, f, n) {
            fcsv = out "/factors.csv"
            print ""
            printf "What each step bought, from %d alternating rounds (chapter 3: %d; a factor: the time before the step divided by the time after it, the median of the rounds'"'"' ratios; agreed: every round within %.0f %% of it, from 5 rounds on all but the highest and the lowest, and every process given at least %.0f %% of its cores):\n", rounds, ch3_rounds, 100 * agree, 100 * minshare
            printf "  %-28s %-38s %6s %-9s %8s  %-15s %-6s %s\n", "step", "compares", "T", "threads", "factor", "range", "cores", "agreed"
            while ((getline line < fcsv) > 0) {
                if (++n == 1) continue
                split(line, f, ",")
                printf "  %-28s %-38s %6d %-9s %7.2fx  %-15s %4.0f %%  %s\n", f[2], f[3] " against " f[4], f[5],
                    f[6] == f[7] ? f[6] " each" : f[6] " vs " f[7], f[9], sprintf("%.2f-%.2f", f[10], f[11]), 100 * f[15], f[12]
            }
            close(fcsv)
        }
        # The student'"'"'s rows beside the reference'"'"'s, and when their
        # flash is slower, which of its two parts to look at
        function mine(   T, f, y, pr, py, ar, ay, k, nm, worst, wT) {
            print ""
            printf "Your code%s beside the reference solutions, in ms, both on %d threads; a ratio is your time divided by the reference'"'"'s:\n", impl_name == "" ? "" : " (" impl_name ")", threads
            printf "%6s  %-26s  %-26s  %-26s  %s\n", "", "mha_forward_flash()", "projections", "attention", ""
            printf "%6s  %8s %8s %8s  %8s %8s %8s  %8s %8s %8s  %s\n", "T", "ref", "yours", "ratio",
                   "ref", "yours", "ratio", "ref", "yours", "ratio", "look at"
            for (T = 1; T <= 65536; T *= 2) {
                if (!(T in flashT)) continue
                if (!(("mine_flash", T) in ms) || !(("mine_flash_proj", T) in ms) || !(("mine_flash_att", T) in ms)) {
                    printf "%6d  your code did not run to the end at this T: its message is in the progress lines above\n", T
                    continue
                }
                f = ms["flash", T]; y = ms["mine_flash", T]
                pr = ms["flash_proj", T]; py = ms["mine_flash_proj", T]
                ar = ms["flash_att", T]; ay = ms["mine_flash_att", T]
                look = "-"
                if (y > 1.1 * f) {
                    look = (py - pr > ay - ar) ? "the projections" : "the attention"
                    if (py <= 1.1 * pr && ay <= 1.1 * ar) look = "the layer"
                    if (y / f > worst) { worst = y / f; wT = T; wlook = look
                        wp = py / (pr > 0 ? pr : 1); wa = ay / (ar > 0 ? ar : 1) }
                }
                printf "%6d  %8.1f %8.1f %7.2fx  %8.1f %8.1f %7.2fx  %8.1f %8.1f %7.2fx  %s\n", T, f, y, y / f,
                       pr, py, py / (pr > 0 ? pr : 1), ar, ay, ay / (ar > 0 ? ar : 1), look
            }
            print "  (projections: the four matmul_fast() calls of mha_forward_flash(); attention: its"
            print "   flash_attention() calls, every head; each part timed on its own)"
            printf "  %-16s %10s %10s   (GFLOP/s, T=%d)\n", "matmul step", "reference", "yours", mmT
            nm = split("matmul_ch1 matmul_ikj matmul_blocked matmul_tiled matmul_fast", names, " ")
            for (k = 1; k <= nm; k++)
                if (("mine_" names[k], mmT) in gf)
                    printf "  %-16s %10.2f %10.2f\n", names[k], gf[names[k], mmT], gf["mine_" names[k], mmT]
            if (worst == 0)
                print "Your mha_forward_flash() is as fast as the reference at every T (within 10 %)."
            else if (wlook == "the layer")
                printf "Your mha_forward_flash() is slowest against the reference at T=%d (%.2fx its time), but its two parts on their own are not (projections %.2fx, attention %.2fx): look at how mha_forward_flash() puts them together, the heads shared among the threads, one scratch per thread.\n", wT, worst, wp, wa
            else if (wlook == "the projections")
                printf "Your mha_forward_flash() is slowest against the reference at T=%d (%.2fx its time). Look at the projections first: your four matmul_fast() calls took %.2fx the reference'"'"'s time, your flash_attention() %.2fx. The steps of the product above show which idea is missing.\n", wT, worst, wp, wa
            else
                printf "Your mha_forward_flash() is slowest against the reference at T=%d (%.2fx its time). Look at the attention first: your flash_attention() took %.2fx the reference'"'"'s time, your four matmul_fast() calls %.2fx. Are both products of a tile register-blocked, the masked tiles skipped, and the exponentials fast_expf()?\n", wT, worst, wa, wp
        }
        # a speed-up: a / b times as fast, the goal want times
        function times(what, a, b, want) {
            if (a == "" || b == "" || b == 0) { printf "  %-64s not measured in this run\n", what; return }
            printf "  %-64s %6.1fx  goal %gx   %s\n", what, a / b, want, (a / b >= want ? "met" : "NOT met")
        }
        # a share of the peak: a of b as a percentage, the goal want of it
        function share(what, a, b, want) {
            if (a == "" || b == "" || b == 0) { printf "  %-64s not measured in this run\n", what; return }
            printf "  %-64s %6.0f %%  goal %g %%  %s\n", what, 100 * a / b, 100 * want, (a / b >= want ? "met" : "NOT met")
        }
        # a fraction that must be small: a / b as 1/N, the goal 1/want or less
        function frac(what, a, b, want) {
            if (a == "" || b == "" || a == 0 || b == 0) { printf "  %-64s not measured in this run\n", what; return }
            printf "  %-64s %7s  goal 1/%g  %s\n", what, sprintf("1/%.0f", b / a), want, (b / a >= want ? "met" : "NOT met")
        }' "$csv"
} >"$out/summary.txt"
cat "$out/summary.txt"
