#!/bin/sh
# test.sh MODE: the student's loop, run by the Makefile (make test, list,
# progress, debug; make hint uses first-failure).
#
# Each chapter is built on its own: the objects of the wanted chapters
# are compiled with make -k (a file that does not compile is reported by
# tools/loop/cc.sh and its object removed), then one binary is linked
# from the chapters whose objects all exist. A broken ch3_mha.c skips
# chapters 3, 4 and 5; chapters 1 and 2 still run.
#
# The Makefile passes MAKE B OUT IMPL CH TEST SAN STRICT CHAPTER_NUMS
# RUN_ARGS (and DEBUG for make debug).
set -u
mode=${1:-run}
. tools/loop/lib.sh

check_ch
if [ "${RACE:-}" = 1 ] && ! command -v "${RACE_CC:-clang-14}" >/dev/null 2>&1; then
    echo "The race pass (make races) needs ${RACE_CC:-clang-14}, with ThreadSanitizer and LLVM's OpenMP runtime (Debian's clang-14, libclang-rt-14-dev, libomp-14-dev and llvm-14), which is not installed: run make deps."
    exit 2
fi
want=${CH:-$CHAPTER_NUMS}
if [ -n "${TEST:-}" ]; then
    tch=$(test_chapter "$TEST") || { echo "$tch"; exit 2; }
    if [ -n "${CH:-}" ] && [ "$tch" != "$CH" ]; then
        echo "Test $TEST is in chapter $tch, not in chapter $CH: make test TEST=$TEST"
        exit 2
    fi
    want=$tch
fi

# The binary of a set of chapters: kit_tests for all of them.
binary() {
    if [ "$1" = "$(echo $CHAPTER_NUMS)" ]; then echo "$OUT/kit_tests"
    else echo "$OUT/kit_tests-$(echo $1 | tr ' ' '-')"; fi
}

# 1. Compile what the wanted chapters need, keeping going past failures,
#    and link them in the same make when all compile (make -k links
#    nothing whose objects failed). Make's own "Error 1" lines say
#    nothing cc.sh has not said.
want=$(echo $want)
mkdir -p "$OUT"
rm -f "$OUT/step1.ok"
{ $MAKE -k -s --no-print-directory objects "$(binary "$want")" WANT="$want" \
    DEBUG="${DEBUG:-}" SAN="${SAN:-}" LINK_LOG="$OUT/link.log" 2>&1 && : >"$OUT/step1.ok"; } |
    grep -a -v -E '^make(\[[0-9]+\])?: (\*\*\*|Target .* not remade)'
step1_ok=false
[ -e "$OUT/step1.ok" ] && step1_ok=true && rm -f "$OUT/step1.ok"

# 2. The kit's own code must have compiled: the runner, the shared
#    checks, the given code and the wanted chapters' tests. A kit file
#    that does not compile leaves no object (the Makefile removes it), so
#    that nothing an older version built is linked or run.
kit_src="tools/harness/runner.c tools/harness/leakcheck.c tests/check.c $(ls given/*.c 2>/dev/null)"
for n in $want; do kit_src="$kit_src tests/test_ch$n.c"; done
for src in $kit_src; do
    if [ ! -e "$OUT/${src%.c}.o" ]; then
        echo "error: the kit's own file $src does not compile (the compiler's message is above); no test can run until it does."
        exit 2
    fi
done

# 3. Which chapters can run. A student's file that does not exist (a
#    starter/ file deleted) stops only the chapters that need it, each
#    named with the command that brings the file back.
ok="" broken="" gone=""
for n in $want; do
    miss=""
    for f in $(ch_files "$n"); do
        [ -n "$miss" ] && break
        if [ ! -e "$IMPL/$f.c" ]; then
            miss="$IMPL/$f.c"
            case " $gone " in *" $miss "*) ;; *) gone="$gone $miss" ;; esac
            [ "$IMPL" = starter ] && miss="$miss (missing: make reset CH=$(file_chapter "$miss"))"
        elif [ ! -e "$OUT/$IMPL/$f.o" ]; then
            miss="$IMPL/$f.c"
        fi
    done
    if [ -z "$miss" ]; then
        ok="$ok $n"
    else
        broken="$broken $n"
        set -- "$@" --broken "$n|$(chapter_title "$n")|$miss|$(tests_of "$n" | tr '\n' ' ')"
    fi
done
shift # the mode
ok=${ok# } broken=${broken# }
# The files missing that no wanted chapter needs (make test CH=1 without
# ch3_mha.c) are named too, with the chapters they stop.
others=""
for f in $(sh tools/mk/chapters.sh sources); do
    [ -e "$IMPL/$f.c" ] && continue
    case " $gone " in *" $IMPL/$f.c "*) ;; *) others="$others $IMPL/$f.c" ;; esac
done
for f in $gone $others; do
    # the chapters that need it, and the one whose own file it is
    needs="" owner=$(file_chapter "$f")
    for n in $CHAPTER_NUMS; do
        case " $(ch_files "$n") " in *" $(basename "$f" .c) "*) needs="$needs $n" ;; esac
    done
    case " $gone " in *" $f "*) what="error: $f does not exist, so chapter(s)${needs} cannot run (their tests count as failed)" ;;
    *) what="note: $f does not exist: chapter(s)${needs} cannot run until it is back" ;; esac
    if [ "$IMPL" = starter ]; then
        echo "$what. make reset CH=$owner brings back its stubs."
    else
        echo "$what: the kit itself is incomplete (in a git clone, git checkout -- $f restores it)."
    fi
done
if [ -n "$broken" ]; then
    if [ -z "$ok" ]; then
        echo "No chapter can run until the file above $(
            [ -n "$gone" ] && echo "is back and compiles" || echo compiles) (chapter$(
            [ "$(echo $broken | wc -w)" -gt 1 ] && echo s) $broken)."
        [ "$mode" = list ] && for n in $broken; do tests_of "$n" | sed "s/^/ch$n /"; done
        exit 1
    fi
    echo "Skipping chapter(s) $broken: a file they need $(
        [ -n "$gone" ] && echo "does not exist or does not compile" || echo "does not compile") (above). Running chapter(s) $ok."
fi

# 4. Warnings: errors under STRICT=1; otherwise a reminder each run.
if [ "${STRICT:-}" = 1 ]; then
    sh tools/loop/warnings.sh || exit 1
else
    for log in "$OUT/$IMPL"/*.o.log; do
        [ -e "$log" ] && [ -e "${log%.log}" ] && grep -q 'warning:' "$log" || continue
        echo "reminder: $IMPL/$(basename "$log" .o.log).c has $(grep -c 'warning:' "$log") warning(s) (see: cat $log)."
    done
fi

mkdir -p "$OUT/progress" # each chapter's last result (the progress view)

# 5. Link the binary of the chapters that can run, and use it.
bin=$(binary "$ok")
if [ "$ok" = "$want" ] && $step1_ok && [ -x "$bin" ]; then
    : # linked in step 1 (a make that failed there links again below)
elif ! $MAKE -s --no-print-directory "$bin" DEBUG="${DEBUG:-}" SAN="${SAN:-}" \
    LINK_LOG="$OUT/link.log" >>"$OUT/link.log" 2>&1; then
    missing=$(sed -n "s/.*undefined reference to [\`']\([A-Za-z_0-9]*\)'.*/\1/p" "$OUT/link.log" | sort -u | tr '\n' ' ' | sed 's/ $//')
    echo "error: the tests of chapter(s) $ok could not be linked${missing:+: no function defines $missing}."
    echo "       Did you rename or delete a function, or make it static? Each function in"
    echo "       the stubs must stay, with its name and signature. The linker says:"
    grep -v '^make' "$OUT/link.log" | sed 's/^/  | /' | head -n 20
    exit 2
fi

# The race pass is due for a chapter that runs threads (RACE_CHAPTERS)
# among those run, in the ordinary build (not SAN=1, not the race pass
# itself): once every one of its tests passes, or when a verdict changed
# by itself since the last run, tools/loop/races.sh runs them again
# under ThreadSanitizer. The run's summary line is held back until then,
# so that it stays the last line and counts the race pass.
races=""
if [ "$mode" = run ] && [ -z "${RACE:-}${SAN:-}${DEBUG:-}" ]; then
    for n in ${RACE_CHAPTERS:-}; do
        case " $ok " in *" $n "*) races="$races $n" ;; esac
    done
fi

case "$mode" in
run)
    if [ -z "$races" ]; then
        # shellcheck disable=SC2086
        "$bin" $RUN_ARGS "$@"
        rc=$?
        [ $rc -eq 0 ] && [ -n "$broken" ] && rc=1
        exit $rc
    fi
    # The last run's results stay, to tell a verdict that changed with
    # the code from one that changed by itself.
    res="$OUT/run-results.tsv"
    rm -f "$res.prev" "$OUT/run.rc" "$OUT/run.last"
    [ -e "$res" ] && mv "$res" "$res.prev"
    # shellcheck disable=SC2086
    { "$bin" $RUN_ARGS --results "$res" "$@"; echo $? >"$OUT/run.rc"; } |
        awk -v held="$OUT/run.last" 'NR > 1 { print prev; fflush() } { prev = $0 }
            END { if (NR) print prev > held }'
    rc=$(cat "$OUT/run.rc" 2>/dev/null || echo 2)
    summary=$(cat "$OUT/run.last" 2>/dev/null)
    [ $rc -eq 0 ] && [ -n "$broken" ] && rc=1
    for n in $races; do
        [ -e "$res" ] || continue
        # all of chapter n's tests that ran passed, some, or none
        state=$(awk -F'\t' -v n="$n" 'NR > 1 && $1 == n { ran++; if ($4 != "passed") bad++ }
            END { print (!ran ? "none" : !bad ? "all" : bad < ran ? "some" : "stubs") }' "$res")
        [ "$state" = all ] || [ "$state" = some ] || continue
        how=""
        if [ "$state" = some ]; then
            # A verdict or a message that changed since the last run while
            # the code did not (no object of the chapter is newer than that
            # run's results) is the mark of a race: the race pass says. A
            # race it found in this same code before is shown again.
            flipped=""
            if [ -e "$res.prev" ]; then
                newer=""
                for f in $(ch_files "$n"); do
                    [ -n "$(find "$OUT/$IMPL/$f.o" -newer "$res.prev" 2>/dev/null)" ] && newer=1
                done
                [ -z "$newer" ] && flipped=$(awk -F'\t' -v n="$n" 'NR == FNR { if (FNR > 1 && $1 == n) was[$3] = $4 FS $6; next }
                    FNR > 1 && $1 == n && ($3 in was) && was[$3] != $4 FS $6 { print $3 }' "$res.prev" "$res" | head -n 1)
            fi
            echo
            if [ -n "$flipped" ]; then
                echo "Test $flipped gave another result than on the last run, and chapter $n's code did not change: the mark of a data race. So:"
            else
                how=--cached
            fi
        else
            echo
        fi
        sh tools/loop/races.sh $how "$n"
        st=$?
        if [ $st -eq 3 ]; then # nothing cached
            echo "Chapter $n runs threads: if a result changes from run to run, make races says whether a data race is the cause, and names it."
            continue
        fi
        case $st in
        0) ;;
        1) rc=1
           # the tests that fail only under ThreadSanitizer count as failed
           f=$(awk -F'\t' 'NR == FNR { race[$1] = 1; next }
                   FNR > 1 && $4 == "passed" && ($3 in race) { k++ } END { print k + 0 }' \
                   "$OUT/races.failed" "$res")
           summary=$(printf '%s\n' "$summary" | awk -v f="$f" '
               $2 == "passed," && $4 ~ /^failed/ { $1 -= f; $3 += f } { print }') ;;
        *) rc=1 ;;
        esac
    done
    [ -n "$summary" ] && printf '%s\n' "$summary"
    exit $rc ;;
list)
    "$bin" --list
    for n in $broken; do tests_of "$n" | sed "s/^/ch$n /; s/\$/ (does not compile yet, or a file it needs is missing)/"; done ;;
progress)
    # A race the last race pass found in this same code counts: its tests
    # are failed in the bars, whatever the ordinary build says.
    rf=""
    for n in ${RACE_CHAPTERS:-}; do
        sh tools/loop/races.sh --cached "$n" >/dev/null 2>&1
        [ $? -eq 1 ] && rf="$OUT/races.failed"
    done
    # shellcheck disable=SC2086
    "$bin" $RUN_ARGS --progress ${rf:+--race-failed "$rf"} "$@" ;;
first-failure)
    # shellcheck disable=SC2086
    "$bin" $RUN_ARGS --quiet "$@" | sed -n 's/^First failure: ch[0-9]* \([A-Za-z_0-9]*\).*/\1/p' ;;
debug)
    echo "gdb: type 'run' to start; after a crash 'bt' shows the calls and"
    echo "'frame N' then 'info locals' shows one of them. 'break matmul' stops"
    echo "at a function before 'run'. 'quit' leaves."
    exec "${GDB:-gdb}" -q --args "$bin" --no-fork --impl "$IMPL" --test "$TEST" ;;
esac
