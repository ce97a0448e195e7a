#!/bin/sh
# check.sh: the kit's self-test (make check). Runs every step in
# tools/checks/ in order, each a script that exits non-zero on failure
# (77: skipped, because a tool it needs is missing; it says which), and
# ends with one line: N passed, M failed, K skipped.
set -u
passed=0 failed=0 skipped=0 failures="" skips=""
for step in tools/checks/[0-9]*.sh; do
    name=$(basename "$step" .sh)
    echo "== check $name"
    start=$(date +%s)
    rc=0
    bash "$step" || rc=$?
    if [ "$rc" -eq 0 ]; then
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
