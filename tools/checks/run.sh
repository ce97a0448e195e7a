#!/bin/sh
# run.sh [--no-skip] [STEP...]: the kit's self-test (make check). Runs
# every step in tools/checks/ in order (or only the steps named, as
# 74-browser), each a script that exits non-zero on failure (77: skipped,
# because a tool it needs is missing; it says which), and ends with one
# line: N passed, M failed, K skipped. With --no-skip (.ci/run, once it
# has installed every tier) a skipped step is a failure.
set -u
no_skip=false
[ "${1:-}" = --no-skip ] && { no_skip=true; shift; }
steps=""
for s in "$@"; do
    [ -e "tools/checks/${s%.sh}.sh" ] || { echo "run.sh: no check step tools/checks/${s%.sh}.sh"; exit 2; }
    steps="$steps tools/checks/${s%.sh}.sh"
done
[ -n "$steps" ] || steps=$(echo tools/checks/[0-9]*.sh)
passed=0 failed=0 skipped=0 failures="" skips=""
for step in $steps; do
    name=$(basename "$step" .sh)
    echo "== check $name"
    start=$(date +%s)
    rc=0
    bash "$step" || rc=$?
    if [ "$rc" -eq 77 ] && $no_skip; then
        failed=$((failed + 1))
        failures="$failures $name"
        echo "== FAIL $name: SKIPPED, and every tier is installed here, so nothing may be skipped ($(( $(date +%s) - start )) s)"
    elif [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        echo "== ok   $name ($(( $(date +%s) - start )) s)"
    elif [ "$rc" -eq 77 ]; then
        skipped=$((skipped + 1))
        skips="$skips $name"
        echo "== SKIPPED $name ($(( $(date +%s) - start )) s)"
    else
        failed=$((failed + 1))
        failures="$failures $name"
        echo "== FAIL $name ($(( $(date +%s) - start )) s)"
    fi
done
echo
[ -n "$failures" ] && echo "failed steps:$failures"
[ -n "$skips" ] && echo "skipped steps (a tool is missing; see above):$skips"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
