#!/bin/bash
# The tests name the mistakes a generator plants, not only a catalogue's.
#
# tools/checks/mutgen/gen.awk walks each exercise function of chapters
# 1-4 and 6-8 (chapter 4's backward passes too, and the static helpers
# the reference builds chapters 6-8's functions from: the cache's
# attention, chapter 7's tiles, packing and kernels, the argmax) and
# writes one mutated copy of
# its solution file per classic mistake, family by family: loop bounds
# (one past the end, one short, one late), initial values, steps left
# out, done twice or moved, and the anchored families of
# tools/checks/mutgen/rules.tsv (operands swapped or transposed, every
# wrong scale, strides, per-head routing, signs, a gradient written over
# instead of added). Each mutant is built against the reference
# solutions (as 50-mutants.sh builds its mutants), its chapter's tests
# run, and every
# failure message is read against tools/checks/mutgen/expect.tsv, which
# says for each mutant the names that are right and the neighbouring
# ones. A mutant is
#   named        a failing test names it (with "Likely mistake", or an
#                overrun named with its buffer and index)
#   neighbouring no test names it, one gives a neighbouring name
#   described    tests fail, none names a classic mistake
#   misnamed     some test names a mistake that is neither
#   missed       every test passes
#   equivalent   every test passes, and expect.tsv says the change is
#                no mistake on any input (not counted)
#   compiler     the kit's own build refuses it: every error is a
#                warning that -Werror makes one (a loop the compiler
#                proves runs past an array, a vector read uninitialised)
#   unseen       every test passes, and expect.tsv says why the tests'
#                inputs cannot show it (a mistake all the same: counted
#                among the planted, not among the caught)
#   sanitizer    every test passes, and expect.tsv says no test can see
#                it (a write past a scratch block the function allocates
#                itself): then it must fail under AddressSanitizer, as
#                make test SAN=1 runs it, and is counted as caught there;
#                a write past a stack array, which crashes the plain run
#                only on some runs, counts the same when SAN=1 sees it
# The step fails on a misnamed or missed mutant, on a mutant that does
# not compile for another reason (the generator's defect) and on one with no line in
# expect.tsv; it prints a table per function and the overall rates.
# ONLY=regex keeps the mutants whose ids match, ONLY_CH=n (or 6|7) those of
# chapter n; JOBS=n (2) builds in
# parallel; VERBOSE=1 prints every mutant's naming.
set -u
mark="Likely mistake"
B=${B:-build}
here=tools/checks/mutgen
make --no-print-directory -s kit-tests IMPL=solutions || exit 1
shared=$(ls "$B"/solutions/tools/harness/*.o "$B"/solutions/tests/*.o "$B"/solutions/given/*.o)
flag() { sed -n "s/^$1 *:= *//p" tools/mk/flags.mk; }
openmp=$(flag OPENMP)
cflags="$(flag C_FLAGS) $(flag KIT_WARN) $(flag C_OPT) $openmp -Iinclude -Itests -include $(flag LEAKCHECK_H) $(pkg-config --cflags cunit 2>/dev/null)"
cflags="$cflags -Wno-unused-variable -Wno-unused-but-set-variable -Wno-unused-parameter -Wno-unused-function"
libs="$(pkg-config --libs cunit 2>/dev/null || echo -lcunit) -lm"
cc=${CC:-cc}
san="-fsanitize=address,undefined -fno-omit-frame-pointer"
jobs=${JOBS:-2}
work=$B/mutgen
rm -rf "$work" && mkdir -p "$work"

# chapter  file  the exercise functions walked
targets='1 ch1_attention.c ^(matmul|matmul_bt|softmax_rows|attention)$
2 ch2_causal.c ^(causal_mask|causal_attention)$
3 ch3_mha.c ^(mha_head_slice|mha_forward|mha_forward_fused)$
4 ch4_grad.c ^(matmul_backward|softmax_rows_backward|causal_mask_backward|attention_backward|mha_head_slice_backward|mha_backward)$
6 ch6_decode.c ^(kv_cache_append|kv_cache_read|attend_cache|decode_step|mha_decode_step|mha_decode|gqa_check_config|gqa_forward|gqa_decode_step|kv_cache_bytes)$
7 ch7_fast.c ^(matmul_ikj|matmul_blocked|mm_tile|mm_edge|mm_rows|matmul_tiled|mm_pack_b|mm_pack_a|mm_kernel|mm_block|matmul_fast|softmax_online|fa_kernel|fa_tile|flash_attention|mha_forward_flash)$
8 ch8_lm.c ^(layernorm_forward|layernorm_backward|row_argmax|head_offset_profile|relation_score|mean_ablate_head)$'

# 1. generate
manifest=$work/manifest.tsv
: >"$manifest"
printf '%s\n' "$targets" | while read -r ch file funcs; do
    mkdir -p "$work/ch$ch"
    awk -v funcs="$funcs" -v rules=$here/rules.tsv -v out="$work/ch$ch" \
        -f $here/gen.awk "solutions/$file" |
        awk -F'\t' -v OFS='\t' -v ch="$ch" -v file="$file" '{ print ch, file, $0 }' >>"$manifest"
done
if [ -n "${ONLY_CH:-}" ]; then
    awk -F'\t' -v ch="$ONLY_CH" '$1 ~ "^(" ch ")$"' "$manifest" >"$manifest.only" && mv "$manifest.only" "$manifest"
fi
if [ -n "${ONLY:-}" ]; then
    awk -F'\t' -v re="$ONLY" '$3 ~ re' "$manifest" >"$manifest.only" && mv "$manifest.only" "$manifest"
fi

# 2. build and run each, JOBS at a time: $work/chN/ID.out, ID.rc
expect() { # id -> "right<TAB>neighbours", or nothing
    local id=$1 glob right near
    while IFS=$'\t' read -r glob right near; do
        case "$glob" in ''|'#'*) continue ;; esac
        # shellcheck disable=SC2254
        case "$id" in $glob) printf '%s\t%s\n' "$right" "${near:--}"; return ;; esac
    done <$here/expect.tsv
}
# The other solutions' objects, for each file (once, not per mutant).
declare -A others=()
for f in $(printf '%s\n' "$targets" | cut -d' ' -f2); do
    others[$f]=""
    for o in "$B"/solutions/solutions/*.o; do
        [ "$(basename "$o" .o).c" = "$f" ] || others[$f]="${others[$f]} $o"
    done
done
one() { # ch file id; ID.exp keeps its expect.tsv line, ID.t its seconds:
    # building, running (and the AddressSanitizer build and run)
    local ch=$1 file=$2 id=$3 d=$work/ch$1 objs=${others[$2]} t0 t1 t2
    expect "$id" >"$d/$id.exp"
    t0=$(date +%s%N)
    if ! $cc $cflags -c -o "$d/$id.o" "$d/$id.c" 2>"$d/$id.cc" ||
        ! $cc $openmp -o "$d/$id.bin" $shared $objs "$d/$id.o" $libs 2>>"$d/$id.cc"; then
        echo cc >"$d/$id.rc"; return
    fi
    t1=$(date +%s%N)
    "$d/$id.bin" --impl solutions --chapter "$ch" --timeout 5 >"$d/$id.out" 2>&1
    echo $? >"$d/$id.rc"
    t2=$(date +%s%N)
    echo "$(((t1 - t0) / 1000000)) $(((t2 - t1) / 1000000))" >"$d/$id.t"
    rm -f "$d/$id.bin" "$d/$id.o"
    # expect.tsv's "sanitizer": the same under AddressSanitizer too
    if [ "$(cut -f1 "$d/$id.exp")" = sanitizer ]; then
        if $cc $cflags $san -c -o "$d/$id.o" "$d/$id.c" 2>>"$d/$id.cc" &&
            $cc $openmp $san -o "$d/$id.bin" $shared $objs "$d/$id.o" $libs 2>>"$d/$id.cc"; then
            ASAN_OPTIONS=detect_leaks=0 "$d/$id.bin" --impl solutions --chapter "$ch" \
                --timeout 20 >"$d/$id.san.out" 2>&1
            echo $? >"$d/$id.san"
        else
            echo cc >"$d/$id.san"
        fi
        rm -f "$d/$id.bin" "$d/$id.o"
        echo " $((($(date +%s%N) - t2) / 1000000))" >>"$d/$id.t"
    fi
}
t0=$(date +%s)
running=0
while IFS=$'\t' read -r ch file id fam before after; do
    one "$ch" "$file" "$id" </dev/null &
    running=$((running + 1))
    if [ $running -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done <"$manifest"
wait
t1=$(date +%s)

# 3. classify. expect.tsv: id-glob <TAB> right names <TAB> neighbouring
# names, each a list of words separated by |, "-" for none; "equivalent"
# in place of the right names for a change that is no mistake,
# "sanitizer" for one only AddressSanitizer can see, "unseen" for one
# the tests' inputs cannot show. The first line whose
# glob matches the id is used.
has_any() { # text words-separated-by-|  -> 0 if text contains one
    local text=$1 list=$2 w
    [ "$list" = - ] && return 1
    local IFS='|'
    for w in $list; do
        [ -n "$w" ] && printf '%s' "$text" | grep -qiF -- "$w" && return 0
    done
    return 1
}
bad=0
results=$work/results.tsv
: >"$results"
while IFS=$'\t' read -r ch file id fam before after; do
    d=$work/ch$ch
    fn=${id%%.*}
    rc=$(cat "$d/$id.rc" 2>/dev/null || echo none)
    if [ -e "$d/$id.exp" ]; then e=$(cat "$d/$id.exp"); else e=$(expect "$id"); fi
    right=${e%%$'\t'*} near=${e#*$'\t'}
    verdict="" why=""
    if [ "$rc" = cc ] && grep -q 'error:' "$d/$id.cc" &&
        ! grep 'error:' "$d/$id.cc" | grep -vq '\[-Werror='; then
        # every error is a warning made an error: the kit's -Werror build
        # stops the student at that line ("iteration 16 invokes undefined
        # behavior", "'b0' may be used uninitialized")
        verdict=compiler
    elif [ "$rc" = cc ]; then
        verdict=broken why="does not compile: $(head -3 "$d/$id.cc" | tr '\n' ' ')"
    elif [ -z "$e" ]; then
        verdict=unlisted why="no line in $here/expect.tsv"
    elif [ "$rc" = 0 ]; then
        if [ "$right" = equivalent ]; then verdict=equivalent
        elif [ "$right" = unseen ]; then verdict=unseen
        elif [ "$right" = sanitizer ] && [ "$(cat "$d/$id.san" 2>/dev/null)" != 0 ] &&
            grep -q 'Sanitizer' "$d/$id.san.out" 2>/dev/null; then verdict=sanitizer
        else verdict=missed why="every test of chapter $ch passes"
            [ "$right" = sanitizer ] && why="$why, and under AddressSanitizer too"
        fi
    elif [ "$right" = sanitizer ] && [ "$(cat "$d/$id.san" 2>/dev/null)" != 0 ] &&
        grep -q 'Sanitizer' "$d/$id.san.out" 2>/dev/null; then
        # a write past a stack array of the function's own: AddressSanitizer
        # sees it every time, while the plain run crashes or passes by the
        # luck of what lies beyond the array, so only SAN=1's verdict counts
        verdict=sanitizer
    elif [ "$right" = equivalent ] || [ "$right" = sanitizer ] || [ "$right" = unseen ]; then
        verdict=unlisted why="expect.tsv calls it $right, but tests fail"
    else
        # Each failing test's message: the lines under its FAIL line.
        named=0 neigh=0 mis=0 misname=""
        tests=$(awk '/^  FAIL  ch[0-9]+ /{ t = $3; sub(/:$/, "", t); next }
                     /^  (ok|FAIL) /{ t = ""; next }
                     /^Progress/{ exit }
                     t != "" && /^        / { msg[t] = msg[t] " " $0 }
                     END { for (t in msg) print t "\t" msg[t] }' "$d/$id.out")
        while IFS=$'\t' read -r t msg; do
            [ -n "$t" ] || continue
            # A message without the mark claims no classic mistake, but
            # may still say exactly what was planted ("wrote past the
            # end of C ... at index 4"): then it names it.
            case "$msg" in
            *"$mark"*) ;;
            *)
                if has_any "$msg" "$right"; then named=$((named + 1))
                elif has_any "$msg" "$near"; then neigh=$((neigh + 1))
                fi
                continue ;;
            esac
            naming=${msg#*"$mark"}
            if has_any "$naming" "$right"; then named=$((named + 1))
            elif has_any "$naming" "$near"; then neigh=$((neigh + 1))
            else
                mis=$((mis + 1))
                misname="$t:$(printf '%s' "$naming" | cut -c1-200)"
            fi
        done <<<"$tests"
        if [ $mis -gt 0 ]; then verdict=misnamed why="$misname"
        elif [ $named -gt 0 ]; then verdict=named
        elif [ $neigh -gt 0 ]; then verdict=neighbouring
        else verdict=described
        fi
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$fn" "$id" "$verdict" "$fam" "$ch" >>"$results"
    case $verdict in
    misnamed | missed | broken | unlisted)
        echo "FAIL $id ($before -> $after): $verdict: $why"; bad=$((bad + 1)) ;;
    *) [ -n "${VERBOSE:-}" ] && echo "ok   $id: $verdict" ;;
    esac
done <"$manifest"

# 4. the rates, per function and overall
awk -F'\t' '
    { f[$1] = 1; c[$1, $3]++; tot[$3]++; if ($3 != "equivalent") n[$1]++
      chs[$5] = 1; cc[$5, $3]++; if ($3 != "equivalent") nc[$5]++ }
    END {
        printf "%-24s %6s %6s %6s %6s %6s %6s %6s %6s %6s %6s\n", "function", "named", "neigh", "descr", "san", "cc", "unseen", "misnam", "missed", "N", "equiv"
        for (k in f) order[++m] = k
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
        for (i = 1; i <= m; i++) {
            k = order[i]
            printf "%-24s %6d %6d %6d %6d %6d %6d %6d %6d %6d %6d\n", k, c[k, "named"], c[k, "neighbouring"], c[k, "described"], c[k, "sanitizer"], c[k, "compiler"], c[k, "unseen"], c[k, "misnamed"], c[k, "missed"], n[k], c[k, "equivalent"]
        }
        for (h = 1; h <= 99; h++)
            if (h in chs)
                printf "chapter %d: named %d, neighbouring %d, described %d, SAN=1 %d, compiler %d, unseen %d, misnamed %d, missed %d, of %d planted (%d equivalent)\n", h, cc[h, "named"], cc[h, "neighbouring"], cc[h, "described"], cc[h, "sanitizer"], cc[h, "compiler"], cc[h, "unseen"], cc[h, "misnamed"], cc[h, "missed"], nc[h], cc[h, "equivalent"]
        N = NR - tot["equivalent"]
        if (N > 0)
            printf "generated mistakes: named %d, neighbouring %d, described %d, caught only by SAN=1 %d, refused by the compiler (-Werror) %d, unseen on the tests inputs %d, misnamed %d, missed %d, of %d planted (%d%% named; %d equivalent changes not counted)\n", tot["named"], tot["neighbouring"], tot["described"], tot["sanitizer"], tot["compiler"], tot["unseen"], tot["misnamed"], tot["missed"], N, 100 * tot["named"] / N, tot["equivalent"]
    }' "$results"
echo "built and ran $(wc -l <"$manifest") mutants in $((t1 - t0)) s ($jobs at a time), read their messages in $(($(date +%s) - t1)) s"
# Where the time went, summed over the mutants (seconds of one slot):
# building, running the tests (and how much of it in runs where a test
# timed out), and the AddressSanitizer passes.
while IFS=$'\t' read -r ch file id fam before after; do
    d=$work/ch$ch
    [ -e "$d/$id.t" ] || continue
    read -r tb tr ts <"$d/$id.t"
    to=0
    grep -q 'timed out after' "$d/$id.out" 2>/dev/null && to=1
    printf '%s %s %s %s %s\n' "$ch" "$tb" "$tr" "${ts:-0}" "$to"
done <"$manifest" | awk '{ b += $2; r += $3; s += $4; if ($5) { tr += $3; nt++ }; cb[$1] += $2; cr[$1] += $3 }
    END { printf "time in all: building %.0f s, running %.0f s (%.0f s of it in the %d mutants where a test timed out), AddressSanitizer %.0f s; per chapter (building+running):", b / 1000, r / 1000, tr / 1000, nt, s / 1000
          for (c = 1; c <= 99; c++) if (c in cb) printf " ch%d %.0f+%.0f", c, cb[c] / 1000, cr[c] / 1000
          printf "\n" }'
[ -s "$results" ] && [ $bad -eq 0 ]
