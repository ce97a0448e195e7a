#!/bin/sh
# book_data.sh: turn a run of bench.sh into what chapter 7 quotes.
#
#   usage: book_data.sh RUNDIR DATADIR REFDIR
#
# Reads RUNDIR/attention.csv, RUNDIR/meta.values and RUNDIR/factors.csv
# (bench.sh), and the kit's reference run in REFDIR (factors.csv and
# run.values, tools/runs/bench/reference/), and writes into DATADIR:
#   ch7_bench.csv   the run's CSV, which plots/ch7_*.gp draw
#   ch7.values      key=value numbers the prose quotes: measured times,
#                   ratios, GFLOP/s, peak memory, and the FLOP and byte
#                   counts worked out from the sizes
#   ch7_bench.md    the run as a table
#   ch7_matmul.md   the matmul steps as a table
#   ch7_torch.md    the sentences about PyTorch, which depend on whether
#                   the run had it
#   ch7_factors.md  what each step bought, from RUNDIR/factors.csv,
#                   beside the reference's (the factors themselves
#                   reach ch7.values from RUNDIR/factors.values, as
#                   bench.sh wrote them)
# Every ratio the chapter prints is one of bench.sh's alternating
# comparisons (factors.csv). For each, ch7.show_KEY is this run's ratio
# when its rounds agreed, otherwise the reference run's, and
# ch7.mark_KEY is empty or says that the number is the reference
# machine's, ch7.ok_KEY is 1 when this run's rounds agreed and 0 when
# not (for the chapter's .if tests), ch7.ref_ok_KEY the same of the
# reference run; ch7.noisy_n and ch7.noisy_list count and name the
# comparisons whose rounds did not agree, ch7.ref_* describe the
# reference run.
# Needs the rows for T = 1024 (the book's run measures 256, 512, 1024).
set -eu
run=$1 data=$2 ref=$3
for f in "$run/factors.csv" "$ref/factors.csv" "$ref/run.values"; do
    [ -f "$f" ] || { echo "book_data: $f is missing (a run of tools/runs/bench/bench.sh writes factors.csv; tools/runs/bench/reference.sh keeps the reference)" >&2; exit 1; }
done
mkdir -p "$data"
cp "$run/attention.csv" "$data/ch7_bench.csv"
torch=$(sed -n 's/^ch7.torch=//p' "$run/meta.values")
scratch=$(sed -n 's/^ch7.scratch_floats=//p' "$run/meta.values")
l1d=$(sed -n 's/^ch7.l1d_bytes=//p' "$run/meta.values")
l2=$(sed -n 's/^ch7.l2_bytes=//p' "$run/meta.values")
case $(sed -n 's/^ch7.perf_counters=//p' "$run/meta.values") in
yes) counters="exposes those counters, but the book's run does not read them" ;;
*) counters="does not expose those counters" ;;
esac
awk -F, -v torch="$torch" -v scratch="$scratch" -v l1d="${l1d:-0}" -v l2="${l2:-0}" -v data="$data" '
function mib(b) { return sprintf("%.1f", b / 1048576) }
function fmt(x) { return x >= 100 ? sprintf("%.0f", x) : (x >= 10 ? sprintf("%.1f", x) : sprintf("%.2f", x)) }
NR > 1 { ms[$1, $2] = $4; gf[$1, $2] = $5; peak[$1, $2] = $6; if ($1 == "flash") Ts[++nT] = $2
         if ($1 ~ /^matmul_/ && !($1 in mm)) { mm[$1] = $5; mmT = $2 } }
END {
    v = data "/ch7.values"
    # The first line marks the file as a benchmark run: its times differ on
    # every run and machine, so 76-reproducible does not compare them, and
    # the chapter labels them machine-dependent.
    print "# measured: a benchmark run (tools/runs/bench/bench.sh), machine-dependent" > v
    T = 1024; d = 512; h = 8
    if (!(("flash", T) in ms) || !(("ch3_fused", T) in ms)) {
        print "book_data: the run has no flash and ch3_fused rows at T = 1024" > "/dev/stderr"; exit 1 }
    # the sizes: FLOPs and bytes at T = 1024, worked out
    printf "ch7.T=%d\n", T > v
    printf "ch7.gflop_proj=%.2f\n", 8 * T * d * d / 1e9 > v
    printf "ch7.gflop_att_full=%.2f\n", 4 * d * T * T / 1e9 > v
    printf "ch7.gflop_att_causal=%.2f\n", 4 * d * T * (T + 1) / 2 / 1e9 > v
    printf "ch7.weights_mib=%d\n", h * T * T * 4 / 1048576 > v
    printf "ch7.weights_mib_4096=%d\n", h * 4096 * 4096 * 4 / 1048576 > v
    printf "ch7.weights_gib_32768=%d\n", h * 32768 * 32768 * 4 / 1073741824 > v
    printf "ch7.qkv_mib=%.0f\n", 4 * T * d * 4 / 1048576 > v
    printf "ch7.scratch_kib=%.1f\n", scratch * 4 / 1024 > v
    # what one step of flash_attention() keeps resident: the scratch and
    # the tiles of K (64 x d_head) and V (64 x d_head) it reads again and
    # again; checked against the caches of the machine the run was on
    res = scratch + 2 * 64 * 64
    printf "ch7.resident_floats=%d\n", res > v
    printf "ch7.resident_kib=%.1f\n", res * 4 / 1024 > v
    printf "ch7.l1d_kib=%d\n", l1d / 1024 > v
    printf "ch7.l2_kib=%d\n", l2 / 1024 > v
    if (l1d <= 0)
        where = "could not be compared with this machine'"'"'s caches, whose sizes it did not report"
    else if (res * 4 <= l1d)
        where = "fit in the first-level data cache"
    else if (l2 > 0 && res * 4 <= l2)
        where = "do not fit in the first-level data cache, but fit in the second-level one"
    else
        where = "do not fit in the first-level data cache, nor in the second-level one"
    printf "ch7.resident_where=%s\n", where > v
    # tiles of 64 x 64 (FLASH_BQ, FLASH_BK): all of them, and those the
    # causal mask leaves (on or below the diagonal)
    nt = int((T + 63) / 64)
    printf "ch7.tiles_side=%d\n", nt > v
    printf "ch7.tiles_all=%d\n", nt * nt > v
    printf "ch7.tiles_causal=%d\n", nt * (nt + 1) / 2 > v
    printf "ch7.tiles_pct=%.0f\n", 100 * (nt + 1) / (2 * nt) > v
    proj = 8 * T * d * d; attc = 4 * d * T * (T + 1) / 2; attf = 4 * d * T * T
    printf "ch7.work_ratio=%.2f\n", (proj + attf) / (proj + attc) > v
    # measured
    printf "ch7.flash_ms=%s\n", fmt(ms["flash", T]) > v
    printf "ch7.flash_gflops=%s\n", fmt(gf["flash", T]) > v
    # the projections within that time, at the rate matmul_fast() reached
    # on its own (its first row: T = mmT, the same threads); the rest is
    # the attention with the regrouping of the heads
    pms = mm["matmul_fast"] > 0 ? proj / (mm["matmul_fast"] * 1e9) * 1000 : 0
    ams = ms["flash", T] - pms
    printf "ch7.proj_ms=%s\n", fmt(pms) > v
    printf "ch7.att_ms=%s\n", fmt(ams > 0 ? ams : 0) > v
    printf "ch7.att_gflops=%s\n", (ams > 0 ? fmt(attc / (ams * 1e6)) : "(not measurable in this run)") > v
    printf "ch7.proj_pct=%.0f\n", (ms["flash", T] > 0 ? 100 * pms / ms["flash", T] : 0) > v
    printf "ch7.ch3_ms=%s\n", fmt(ms["ch3_fused", T]) > v
    printf "ch7.ch3_gflops=%s\n", fmt(gf["ch3_fused", T]) > v
    printf "ch7.noncausal_ms=%s\n", fmt(ms["flash_noncausal", T]) > v
    printf "ch7.flash_peak_mib=%s\n", mib(peak["flash", T]) > v
    printf "ch7.ch3_peak_mib=%s\n", mib(peak["ch3_fused", T]) > v
    best = ""; bestv = 0
    n = split("matmul_ch1 matmul_ikj matmul_blocked matmul_tiled matmul_fast", steps, " ")
    for (k = 1; k <= n; k++) {
        printf "ch7.%s=%s\n", steps[k], fmt(mm[steps[k]]) > v
        if (mm[steps[k]] > bestv) { bestv = mm[steps[k]]; best = steps[k] }
    }
    printf "ch7.mm_T=%d\n", mmT > v
    printf "ch7.B_kib=%d\n", 512 * 512 * 4 / 1024 > v
    printf "ch7.ch3_exec_gflops=%s\n", fmt(gf["ch3_fused", 1024] * (proj + attf) / (proj + attc)) > v
    printf "ch7.mm_best=%s\n", fmt(bestv) > v
    printf "ch7.mm_best_name=%s\n", best > v

    t = data "/ch7_bench.md"
    head = "| T | ch. 3 (ms) | flash (ms) | no mask (ms) |"
    rule = "|--:|--:|--:|--:|"
    if (torch == "yes") { head = head " PyTorch (ms) |"; rule = rule "--:|" }
    head = head " ch. 3 (MiB) | flash (MiB) |"; rule = rule "--:|--:|"
    if (torch == "yes") { head = head " PyTorch (MiB) |"; rule = rule "--:|" }
    print head > t; print rule > t
    for (k = 1; k <= nT; k++) {
        T = Ts[k]
        line = "| " T " | " ((("ch3_fused", T) in ms) ? fmt(ms["ch3_fused", T]) : "") " | " fmt(ms["flash", T]) " | " fmt(ms["flash_noncausal", T]) " |"
        if (torch == "yes") line = line " " fmt(ms["torch", T]) " |"
        line = line " " ((("ch3_fused", T) in ms) ? mib(peak["ch3_fused", T]) : "") " | " mib(peak["flash", T]) " |"
        if (torch == "yes") line = line " " mib(peak["torch", T]) " |"
        print line > t
    }
    m = data "/ch7_matmul.md"
    print "| step | GFLOP/s |" > m
    print "|:--|--:|" > m
    for (k = 1; k <= n; k++)
        printf "| `%s` | %s |\n", steps[k], fmt(mm[steps[k]]) > m

    p = data "/ch7_torch.md"
    T = 1024
    if (torch == "yes") {
        # the alternating rounds of PyTorch against flash (bench.sh: torch)
        while ((getline line < fcsv) > 0) {
            split(line, f, ",")
            if (f[1] == "torch") { tf = f[9] + 0; tlo = f[10]; thi = f[11]; tok = f[12]; tn = f[8]; tfl = f[13]; tto = f[14]; tT = f[5] }
        }
        if (tn == "") { print "book_data: the run had PyTorch but its factors.csv has no torch row" > "/dev/stderr"; exit 1 }
        if (tf >= 1.05)
            cmp = sprintf("so `mha_forward_flash()` was %.1f× as fast", tf)
        else if (tf > 0.95)
            cmp = "the two about as fast"
        else
            cmp = sprintf("so `mha_forward_flash()` took %.1f× as long as PyTorch", 1 / tf)
        agreed = tok == "yes" ? sprintf("they agreed, each within %s %% of the median", agree) \
            : sprintf("they did not agree within %s %%: the machine'"'"'s load moved them, so read the ratio as that range", agree)
        printf "PyTorch'"'"'s `nn.MultiheadAttention` (with `need_weights=False`, its threads and those of its BLAS set to the same %d) and `mha_forward_flash()` were timed in %d alternating rounds at $T$ = %d, each side in a fresh process: PyTorch took a median of %s ms against %s ms for `mha_forward_flash()`, %s (PyTorch'"'"'s time over flash'"'"'s from %.2f to %.2f over the rounds; %s). PyTorch computes every score, masked or not, but does its four projections with an optimised BLAS (OpenBLAS, from `make deps-dev`), and its projections are a large part of the work at this $T$ (see the counts at the start of the chapter). The peak memory of the PyTorch call grew by %s MiB, against %s MiB for `mha_forward_flash()`: %.0f times as much.", \
            threads, tn, tT, fmt(tto), fmt(tfl), cmp, tlo, thi, agreed, mib(peak["torch", T]), mib(peak["flash", T]), peak["torch", T] / (peak["flash", T] > 0 ? peak["flash", T] : 1) > p
        print "" > p
    } else {
        print "PyTorch was not installed when this book was built (`make deps-dev` installs it), so this run has no PyTorch rows; `make bench` adds them, timed side by side with the same thread count, whenever `/usr/bin/python3` can import `torch`." > p
    }
}
' threads="$(sed -n 's/^ch7.threads=//p' "$run/meta.values")" fcsv="$run/factors.csv" \
    agree="$(sed -n 's/^ch7.agree_pct=//p' "$run/factors.values")" "$run/attention.csv"
cat "$run/meta.values" "$run/factors.values" >>"$data/ch7.values"
# The comparisons: this run's where its rounds agreed, else the
# reference's, marked
awk -F, -v data="$data" -v refcsv="$ref/factors.csv" -v factor_T="$(sed -n 's/^ch7.factor_T=//p' "$run/factors.values")" '
function fmt(x) { return x >= 10 ? sprintf("%.0f", x) : sprintf("%.2f", x) }
BEGIN {
    # a mark starts with a no-break space: the book trims plain spaces
    # from the ends of a value
    nb = "\302\240"
    while ((getline line < refcsv) > 0) {
        if (++nr == 1) continue
        split(line, f, ",")
        rf[f[1]] = f[9]; rok[f[1]] = f[12]
    }
    v = data "/ch7.values"; t = data "/ch7_factors.md"
    # every comparison runs at the T of the caption (ch7.factor_T); a row at
    # another T says so in its step
    print "| step | compares | threads | this machine | its rounds | reference |" > t
    print "|:-------------|:--------------------|---------:|------------:|-----------:|----------:|" > t
}
NR > 1 {
    key = $1; th = $6 == $7 ? $6 : $6 " against " $7
    sub(/_1$/, "", $3); sub(/_1$/, "", $4)  # matmul_fast_1: matmul_fast on 1 thread
    ref = key in rf ? fmt(rf[key]) "×" : "not measured"
    step = $5 == factor_T ? $2 : $2 " ($T$ = " $5 ")"
    printf "| %s | `%s` against `%s` | %s | %s×, %s | %s to %s | %s |\n", step, $3, $4, th, fmt($9),
        $12 == "yes" ? "agreed" : "not agreed", fmt($10), fmt($11), ref > t
    seen[key] = 1
    if ($12 == "yes") { show = $9; mark = "" }
    else {
        noisy_n++; noisy = noisy (noisy == "" ? "" : ", ") $2
        if (key in rf) {
            show = rf[key]
            mark = rok[key] == "yes" ? nb "(on the kit’s reference machine)" \
                : nb "(on the kit’s reference machine, whose rounds did not agree either)"
        } else { show = $9; mark = nb "(this machine’s rounds, which did not agree; the reference has no such row)" }
    }
    printf "ch7.show_%s=%s\nch7.mark_%s=%s\n", key, fmt(show), key, mark >> v
    printf "ch7.ok_%s=%d\n", key, $12 == "yes" >> v
    printf "ch7.ref_factor_%s=%s\n", key, (key in rf) ? fmt(rf[key]) : "not measured" >> v
    printf "ch7.ref_ok_%s=%d\n", key, rok[key] == "yes" >> v
    if (key == "blocks")
        printf "ch7.blocked_cmp=%s\n", show < 0.95 ? "slower than" : (show > 1.05 ? "faster than" : "about as fast as") >> v
}
END {
    printf "ch7.noisy_n=%d\nch7.noisy_list=%s\n", noisy_n, noisy_n ? noisy : "none" >> v
    # every key the chapter quotes, even when this run lacked the row
    n = split("loop blocks tile pack threads matmul skip exp ch3", keys, " ")
    for (k = 1; k <= n; k++)
        if (!(keys[k] in seen)) {
            printf "ch7.show_%s=%s\nch7.mark_%s=%s\n", keys[k], keys[k] in rf ? fmt(rf[keys[k]]) : "(not measured)", keys[k], \
                keys[k] in rf ? nb "(on the kit’s reference machine; not measured in this run)" : "" >> v
            printf "ch7.ref_factor_%s=%s\n", keys[k], (keys[k] in rf) ? fmt(rf[keys[k]]) : "not measured" >> v
            printf "ch7.ok_%s=0\n", keys[k] >> v
            printf "ch7.ref_ok_%s=%d\n", keys[k], rok[keys[k]] == "yes" >> v
            if (keys[k] == "blocks") printf "ch7.blocked_cmp=%s\n", "(not measured)" >> v
        }
}' "$run/factors.csv"
# the reference run: its machine, date and load
sed -n 's/^\([a-z_0-9]*\)=/ch7.ref_\1=/p' "$ref/run.values" >>"$data/ch7.values"
echo "ch7.counters=$counters" >>"$data/ch7.values"
