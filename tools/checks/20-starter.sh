#!/bin/sh
# starter/ compiles with -Werror, and every chapter's tests fail on the
# stubs cleanly: no test passes, none crashes, none times out. Each stub
# file has one "return KIT_E_TODO" per listing marker, which is how
# make reset recognises the stubs in git history (all_stubs in
# tools/loop/lib.sh).
set -eu
. tools/loop/lib.sh
B=${B:-build}
make --no-print-directory -s kit-tests IMPL=starter STRICT=1
status=0
for f in starter/*.c; do
    if ! all_stubs <"$f"; then
        set -- $(stub_counts <"$f")
        echo "$f: $1 stubs (return KIT_E_TODO) for $2 listings; make reset needs one each, and at least one"
        status=1
    fi
done
for ch in $("$B"/starter/kit_tests --list | sed -n 's/^ch\([0-9]*\) .*/\1/p' | sort -un); do
    out=$("$B"/starter/kit_tests --chapter "$ch" --impl starter --quiet 2>&1) && {
        echo "chapter $ch: the stubs pass every test; a stub must fail"; status=1; continue; }
    last=$(printf '%s\n' "$out" | tail -n 1)
    case "$last" in
        "0 passed, "*) ;;
        *) echo "chapter $ch: some tests pass on the stubs ($last):"
           printf '%s\n' "$out" | grep -E '^  ok ' || true
           # --quiet hides passes; list them by running verbose
           "$B"/starter/kit_tests --chapter "$ch" --impl starter 2>&1 | grep -E '^  ok ' || true
           status=1 ;;
    esac
    if printf '%s\n' "$out" | grep -E 'crashed with|timed out after|exited with status' >/dev/null; then
        echo "chapter $ch: a stub crashed or hung:"
        printf '%s\n' "$out" | grep -E 'crashed with|timed out after|exited with status'
        status=1
    fi
    echo "chapter $ch: $last on the stubs, none crashed or hung"
done
exit $status
