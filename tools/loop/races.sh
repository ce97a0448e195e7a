#!/bin/sh
# races.sh N: the race pass of chapter N, for tools/loop/test.sh, once
# every test of chapter N that ran has passed in the ordinary build. The
# chapter's tests run again under ThreadSanitizer (make races: clang,
# LLVM's libomp and its Archer tool, which tells ThreadSanitizer where
# OpenMP synchronises, so that only real races are reported). A race
# is found on every run, not by chance: ThreadSanitizer sees two
# threads touch the same memory with nothing ordering them, whether or
# not the result came out wrong this time.
#
# Prints one line when there is no race; otherwise the failing tests and
# their messages (which name the mistake when the report fits one), and
# writes the failing tests' names to $OUT/races.failed. Chapter N's progress then
# counts them as failed. Exit status: 0 no race, 1 a race, 2 the pass
# could not run. The Makefile passes MAKE B OUT IMPL TEST RACE_CC.
#
# The last pass is kept ($OUT/races.log): when it found no race in this
# same code (no object of the chapter newer than that log, the same
# TEST), it is not run again. races.sh --cached N: only when the last
# pass found a race in this same code, show it again (status 1); else
# status 3.
set -u
cached=false
[ "$1" = --cached ] && { cached=true; shift; }
n=$1
race_out="$B/$IMPL-race"
log="$OUT/races.log"
. tools/loop/lib.sh
# same: the last pass ran on this same code (no object of the chapter,
# its tests' included, is newer than its log) and the same TEST
same=false
if [ -e "$log" ] && [ "$(cat "$OUT/races.stamp" 2>/dev/null)" = "$n ${TEST:-}" ]; then
    same=true
    objs=""
    for f in $(ch_files "$n"); do objs="$objs $OUT/$IMPL/$f.o"; done
    for o in $objs "$OUT/tests/test_ch$n.o"; do
        [ -e "$o" ] && [ -z "$(find "$o" -newer "$log" 2>/dev/null)" ] || same=false
    done
fi
if $cached; then
    $same && [ -s "$OUT/races.failed" ] && grep -q "^  FAIL  ch$n " "$log" || exit 3
elif $same && [ ! -s "$OUT/races.failed" ] && grep -qE '^[0-9]+ passed, 0 failed' "$log"; then
    cached=true # no race in this same code last time: no need to look again
fi
$cached || rm -f "$OUT/races.failed"
if ! command -v "${RACE_CC:-clang-14}" >/dev/null 2>&1; then
    echo "Data races: chapter $n runs threads, and its race pass needs ${RACE_CC:-clang-14} (Debian's clang-14, libclang-rt-14-dev, libomp-14-dev and llvm-14), which is not installed: run make deps."
    exit 2
fi
start=$(date +%s)
if $cached; then
    rc=$([ -s "$OUT/races.failed" ] && echo 1 || echo 0)
else
    $MAKE -s --no-print-directory test RACE=1 SAN= CH="$n" TEST="${TEST:-}" IMPL="$IMPL" >"$log" 2>&1
    rc=$?
    echo "$n ${TEST:-}" >"$OUT/races.stamp"
fi
secs=$(($(date +%s) - start))
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
passed=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
failed=$(printf '%s\n' "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
if [ $rc -eq 0 ] && [ -n "$passed" ]; then
    if $cached; then
        echo "Data races: none in chapter $n (found by the last race pass of this same code: make races runs it again)."
    else
        echo "Data races: none in chapter $n (its $passed test$([ "$passed" -ne 1 ] && echo s) again, under ThreadSanitizer, in $([ "$secs" -gt 0 ] && echo "$secs s" || echo "under a second"): make races)."
    fi
    exit 0
fi
if [ -z "$failed" ]; then # it did not run: say why, in its own words
    echo "Data races: chapter $n's race pass (make races) could not run:"
    grep -v '^  cc ' "$log" | sed 's/^/  | /' | head -n 20
    exit 2
fi
if $cached; then
    echo "Data races: the last race pass of this same code (make races runs it again):"
else
    echo "Data races: chapter $n's tests again, under ThreadSanitizer (make races):"
fi
# Each failing test and its message, as the ordinary run prints them
# (a message already shown once is not repeated).
awk '/^  FAIL / { show = 1; print; next }
     /^        / && show { if (seen[$0]++) print "        (the same race as above)"; else print; next }
     { show = 0 }' "$log"
echo "Chapter $n is not done: $failed of its $((passed + failed)) tests fail under ThreadSanitizer. Its full report: $race_out/sanitizer.log."
sed -n 's/^  FAIL  ch[0-9]* \([A-Za-z_0-9]*\):.*/\1/p' "$log" >"$OUT/races.failed"
# the progress view counts the race pass's result
[ -e "$race_out/progress/ch$n.txt" ] && mkdir -p "$OUT/progress" &&
    cp "$race_out/progress/ch$n.txt" "$OUT/progress/ch$n.txt"
exit 1
