#!/bin/bash
# compose.sh OUT STATUS POINTS TESTS FILES RESULTS IGNORED: write
# OUT/results.json (Gradescope's format) and OUT/summary.tsv for one
# graded submission (grade.sh; the inputs are compose.awk's). compose.awk
# scores it and writes the summary; jq (results.jq) writes the JSON from
# the fields compose.awk hands it, so that every string, whatever a
# student's file name or a test's message holds, is escaped by jq.
# Nothing is left in OUT/results.json when either fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 7 ] || { echo "usage: compose.sh OUT STATUS POINTS TESTS FILES RESULTS IGNORED" >&2; exit 2; }
command -v jq >/dev/null || { echo "compose: jq is not installed (it writes results.json); run make deps" >&2; exit 2; }
out=$1 status=$2
shift 2
set -o pipefail
if ! awk -f "$here/compose.awk" -v fields=/dev/stdout -v summary="$out/summary.tsv" -v status="$status" "$@" |
    jq -R -s -f "$here/results.jq" >"$out/results.json"; then
    rm -f "$out/results.json"
    exit 2
fi
