#!/bin/sh
# The race pass (make races: chapter 7's tests under ThreadSanitizer,
# with LLVM's libomp and its Archer tool) finds no race in the solutions,
# on each of RACE_RUNS runs (10 unless set): a false alarm would fail a
# student who did nothing wrong. (50-mutants proves that it catches and
# names the planted races, on every run.)
set -u
. tools/checks/lib.sh
B=${B:-build}
runs=${RACE_RUNS:-10}
out=$(make --no-print-directory -s races IMPL=solutions 2>&1)
if [ $? -ne 0 ]; then
    fail "make races IMPL=solutions: $(printf '%s\n' "$out" | grep -E 'FAIL|error|passed,' | head -n 5)"
    exit $status
fi
bin=$(ls "$B"/solutions-race/kit_tests-* 2>/dev/null | head -n 1)
log="$B/solutions-race/check-races.log"
clean=0 first=""
k=0
while [ $k -lt "$runs" ]; do
    k=$((k + 1))
    rm -f "$log"
    res=$("$bin" --impl solutions --chapter 7 --timeout 60 --san-log "$log" --quiet 2>&1 | tail -n 1)
    reports=$(grep -c 'WARNING: ThreadSanitizer' "$log" 2>/dev/null)
    if [ "${reports:-0}" -eq 0 ] && [ "${res% passed, 0 failed}" != "$res" ]; then
        clean=$((clean + 1))
    elif [ -z "$first" ]; then
        first="run $k: '$res', $reports ThreadSanitizer reports (see $log)"
        cp "$log" "$log.failed" 2>/dev/null
    fi
done
if [ $clean -eq "$runs" ]; then
    ok "chapter 7's solutions: no data race reported in $runs of $runs runs under ThreadSanitizer ($res)"
else
    fail "chapter 7's solutions: a race reported in $((runs - clean)) of $runs runs; first: $first"
fi
exit $status
