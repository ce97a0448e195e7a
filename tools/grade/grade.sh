#!/bin/bash
# grade.sh SUBMISSION OUT: grade one submission against the kit.
#   OUT/results.json  Gradescope's format (score, tests[], output)
#   OUT/summary.tsv   chapter scores, total, reasons, named mistakes
# Environment:
#   KIT      the kit's root (default: two folders above this script)
#   PREP     prepared kit objects (default OUT/prep; made if missing)
#   POINTS   the points table (default: each chapter's points in the kit's
#            chapters/chapters.tsv, written to OUT/points.tsv)
#   SANDBOX  bwrap: build and run inside bubblewrap (make grade-all);
#            none: directly (make grade, and Gradescope, whose container
#            is the sandbox)
# The score comes from the runner's parent process (its results table)
# and from the gate in build.sh, never from what the student's code prints.
set -u
here=$(cd "$(dirname "$0")" && pwd)
KIT=$(cd "${KIT:-$here/../..}" && pwd)
SUB=$(cd "$1" 2>/dev/null && pwd) || { echo "grade: no submission folder '$1'" >&2; exit 2; }
mkdir -p "$2" && OUT=$(cd "$2" && pwd)
PREP=${PREP:-$OUT/prep}
if [ -z "${POINTS:-}" ]; then
    POINTS=$OUT/points.tsv
    sh "$KIT/tools/mk/chapters.sh" points-table >"$POINTS" || exit 2
fi
SANDBOX=${SANDBOX:-none}
command -v jq >/dev/null || { echo "grade: jq is not installed (it writes results.json); run make deps" >&2; exit 2; }

# The prepared kit is reused when it is there and was made from this kit
# (its stamp: prepare.sh --stamp); make grade-all prepares it once for the
# class, the autograder once per container.
if [ ! -s "$PREP/tests.tsv" ] ||
    [ "$(bash "$here/prepare.sh" --stamp "$KIT")" != "$(cat "$PREP/kit-stamp" 2>/dev/null)" ]; then
    bash "$here/prepare.sh" "$KIT" "$PREP" >/dev/null || exit 2
fi
PREP=$(cd "$PREP" && pwd)
# Fail early on a malformed points table, before any work.
awk -f "$here/compose.awk" -v fields=/dev/null -v summary=/dev/null -v status=ran \
    "$POINTS" "$PREP/tests.tsv" /dev/null /dev/null /dev/null || exit 2

work="$OUT/work"
rm -rf "$work" && mkdir -p "$work"
case "$SANDBOX" in
none) bash "$here/build.sh" "$SUB" "$work" "$PREP" "$KIT" ;;
bwrap)
    . "$here/sandbox.sh"
    sandbox "$SUB" "$work" "$PREP" bash "$here/build.sh" "$SUB" "$work" "$PREP" "$KIT" 2>"$OUT/sandbox.log" ||
        echo "the sandbox did not start: $(head -c 300 "$OUT/sandbox.log" | tr '\n' ' ')" >"$work/status.txt"
    ;;
*) echo "grade: SANDBOX must be none or bwrap, not '$SANDBOX'" >&2; exit 2 ;;
esac
[ -s "$work/status.txt" ] || echo "the build did not finish" >"$work/status.txt"
[ -e "$work/files.tsv" ] || : >"$work/files.tsv"
[ -e "$work/results.tsv" ] || : >"$work/results.tsv"
[ -e "$work/ignored.txt" ] || : >"$work/ignored.txt"
# compose.awk scores it and writes summary.tsv; jq writes results.json.
bash "$here/compose.sh" "$OUT" "$(head -n 1 "$work/status.txt")" \
    "$POINTS" "$PREP/tests.tsv" "$work/files.tsv" "$work/results.tsv" "$work/ignored.txt"
