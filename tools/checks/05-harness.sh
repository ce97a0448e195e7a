#!/bin/bash
# The runner turns crashes, hangs, aborts, early exits and empty tests
# into failures with the right reason, and runs every test to the end.
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
exit $status
