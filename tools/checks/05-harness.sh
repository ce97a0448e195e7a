#!/bin/bash
# The runner turns crashes, hangs, aborts, early exits and empty tests
# into failures with the right reason, and runs every test to the end;
# the grader's results.json keeps any failure message exactly (jq).
set -u
B=${B:-build}
make --no-print-directory -s "$B/selftest/kit_selftest" || exit 1
out=$("$B/selftest/kit_selftest" --timeout 1 --junit "$B/selftest/junit.xml" 2>&1)
rc=$?
status=0
expect() {
    if printf '%s\n' "$out" | grep -qF -- "$1"; then echo "ok   $2"
    else echo "FAIL $2: no line says '$1'"; status=1; fi
}
expect "FAIL  ch99 fails" "a failed check is reported"
expect "deliberate failure with a message" "with its message"
expect "crashed with SIGSEGV (segmentation fault" "a segfault is reported as such"
expect "timed out after 1 s" "an endless loop is reported as a timeout"
expect "crashed with SIGABRT" "an abort is reported as such"
# Grading's --cpu-time: the endless loop is stopped by its CPU time, so a
# busy machine cannot fail a test that a quiet one passes.
cpu=$("$B/selftest/kit_selftest" --chapter 99 --timeout 1 --cpu-time --quiet 2>&1)
if printf '%s\n' "$cpu" | grep -qF "timed out after 1 s of CPU time" &&
    [ "$(printf '%s\n' "$cpu" | tail -n 1)" = "$(printf '%s\n' "$out" | grep -c '  ok    ch99') passed, 7 failed" ]; then
    echo "ok   --cpu-time: the endless loop is stopped by its CPU time, and every other verdict is the same"
else echo "FAIL --cpu-time: $(printf '%s\n' "$cpu" | grep -E 'timed out|passed,' | tr '\n' ' ')"; status=1; fi
expect "does the code call exit()?" "an early exit(0) is a failure"
expect "this test made no checks" "a test with no checks is a failure"
expect "memory leak: forgets_to_free() allocated 32 bytes with malloc() at tools/harness/selftest.c:" "a leak fails its test, naming the function and the line"
expect "ok    ch99 passes_after" "the run goes on after crashes and hangs"
expect "Run Summary:" "CUnit's run summary is printed"
last=$(printf '%s\n' "$out" | tail -n 1)
# chapter 98 holds 72 passing tests, so more than 64 wrappers are used
if [ "$last" = "74 passed, 7 failed" ]; then echo "ok   last line is '$last'"
else echo "FAIL last line is '$last', expected '74 passed, 7 failed'"; status=1; fi
[ $rc -ne 0 ] && echo "ok   exit status $rc (non-zero)" || { echo "FAIL exit status 0 with failures"; status=1; }
if grep -q '<testsuites name="kit" tests="81" failures="7">' "$B/selftest/junit.xml" &&
   [ "$(grep -c '<failure ' "$B/selftest/junit.xml")" -eq 7 ]; then
    echo "ok   JUnit XML counts 81 tests, 7 failures"
else echo "FAIL JUnit XML is wrong:"; cat "$B/selftest/junit.xml"; status=1; fi
# --no-fork runs in-process (for gdb): a passing test works there too.
if "$B/selftest/kit_selftest" --no-fork --chapter 99 --test passes | tail -n 1 | grep -qx "1 passed, 0 failed"; then
    echo "ok   --no-fork runs a test in-process"
else echo "FAIL --no-fork"; status=1; fi

# The grader's results.json (tools/grade/compose.sh) is written by jq: a
# message with a double quote, a backslash, a tab and control characters,
# and an ignored file name with an escape character, come out as valid
# JSON holding exactly what they held. The table of tests is the runner's
# own header with two rows of a made-up chapter; nothing is built.
if ! command -v jq >/dev/null; then
    echo "FAIL jq is not installed (the grader writes results.json with it): run make deps"; status=1
else
    g=$(mktemp -d)
    head=$(printf 'chapter\tfile\ttest\tstatus\tseconds\tmessage')
    msg=$(printf 'expected "1" \\ got\t2, \001 and \033[31m' )
    name=$(printf 'notes\033[0m "x".txt')
    printf '%s\n1\tch1_x.c\tquoted\tfailed\t0\t\n1\tch1_x.c\tplain\tfailed\t0\t\n' "$head" >"$g/tests.tsv"
    printf '%s\n1\tch1_x.c\tquoted\tfailed\t0.01\t%s\n1\tch1_x.c\tplain\tpassed\t0.01\t\n' "$head" "$msg" >"$g/results.tsv"
    printf 'ch1_x.c\tok\tch1_x.c\t\n' >"$g/files.tsv"
    printf '%s\n' "$name" >"$g/ignored.txt"
    echo "1 10" >"$g/points.tsv"
    if bash tools/grade/compose.sh "$g" ran "$g/points.tsv" "$g/tests.tsv" "$g/files.tsv" "$g/results.tsv" "$g/ignored.txt" &&
        jq -e --arg m "$msg" --arg n "$name" '.score == 5 and .tests[0].output == $m and .tests[0].status == "failed" and
            .tests[1].score == 5 and (.output | contains($n))' "$g/results.json" >/dev/null &&
        [ "$(cut -f 2 "$g/summary.tsv" | head -n 1)" = "5.00" ]; then
        echo "ok   the grader's results.json, written by jq, holds a message with a quote, a backslash, a tab and control characters exactly, and a file name with ESC"
    else echo "FAIL the grader's results.json is not valid JSON or changed the message:"; head -c 600 "$g/results.json"; status=1; fi
    rm -rf "$g"
fi
exit $status
