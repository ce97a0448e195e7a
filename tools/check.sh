#!/bin/sh
# check.sh: the kit's self-test (make check). Runs every step in
# tools/checks/ in order, each a script that exits non-zero on failure,
# and ends with one line: N passed, M failed.
set -u
passed=0 failed=0 failures=""
for step in tools/checks/[0-9]*.sh; do
    name=$(basename "$step" .sh)
    echo "== check $name"
    start=$(date +%s)
    if bash "$step"; then
        passed=$((passed + 1))
        echo "== ok   $name ($(( $(date +%s) - start )) s)"
    else
        failed=$((failed + 1))
        failures="$failures $name"
        echo "== FAIL $name ($(( $(date +%s) - start )) s)"
    fi
done
echo
[ -n "$failures" ] && echo "failed steps:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
