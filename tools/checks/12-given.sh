#!/bin/bash
# The kit's tests of its given code that calls no student function
# (tests/given/*.c, such as the corpus reader): built against the
# solutions and run by the kit's runner; every test must pass. They are
# not in make test, where a test that passes on the untouched stubs would
# tell a student nothing.
set -u
B=${B:-build}
make --no-print-directory -s IMPL=solutions given-tests || exit 1
"$B/solutions/kit_given_tests" --impl solutions --timeout 10 --quiet >"$B/solutions/given-tests.log" 2>&1
rc=$?
last=$(tail -n 1 "$B/solutions/given-tests.log")
case "$last" in
"0 passed, "*) echo "FAIL the given-code tests ran nothing: '$last'"; exit 1 ;;
*" passed, 0 failed"*) [ "$rc" -eq 0 ] && { echo "ok   given-code tests: $last"; exit 0; } ;;
esac
cat "$B/solutions/given-tests.log"
echo "FAIL given-code tests: '$last' (exit $rc)"
exit 1
