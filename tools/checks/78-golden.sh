#!/bin/sh
# The golden values: PyTorch regenerates every tests/golden/*.h into a
# scratch folder (tools/golden/generate.py, what make golden runs) and
# tools/golden/compare.py compares them with the committed headers. The
# comparison is numeric, not byte for byte: regenerating on this machine
# already changes the last digits of chapters 1 to 6's doubles (another
# BLAS, another summation order, relative differences near 1e-14). It
# allows a relative difference of 1e-9, far below the tests' own
# tolerances (1e-5 and 1e-4 on float results), so no verdict can depend
# on it, while any real change (a seed, a formula, a shape) is far larger
# and fails. The comparison is proved first: a value moved by one part in
# a million, and an array with one value more, must each fail it.
# Without PyTorch (make deps-dev installs python3-torch) the step says so
# and exits 77: tools/checks/run.sh reports it as SKIPPED, never as
# passed (and .ci/run, which installs the dev tier, counts that as an
# error).
set -u
. tools/checks/lib.sh
py=/usr/bin/python3 # Debian's, with python3-torch (as make golden)
if ! [ -x "$py" ] || ! "$py" -c 'import torch' >/dev/null 2>&1; then
    echo "  SKIPPED: PyTorch is not installed (make deps-dev installs Debian's python3-torch); the golden values were not regenerated"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The comparison catches a change: a value moved by 1e-6 (relative),
#    then an array with one value more.
mkdir -p "$work/moved" "$work/longer"
cp tests/golden/*.h "$work/moved/" && cp tests/golden/*.h "$work/longer/"
h=$(ls tests/golden/*.h | head -n 1) && h=$(basename "$h")
"$py" - "$work/moved/$h" <<'PY'
import re, sys
p = sys.argv[1]; s = open(p).read()
m = re.search(r"-?\d+\.\d+(e-?\d+)?", s.split("=", 1)[1])
at = len(s.split("=", 1)[0]) + 1 + m.start()
v = float(m.group(0)) * (1 + 1e-6)
open(p, "w").write(s[:at] + repr(v) + s[at + len(m.group(0)):])
PY
sed -i '0,/\[\([0-9][0-9]*\)\] = {/s//[\1] = {0.0, /' "$work/longer/$h"
for mutant in moved longer; do
    case $mutant in moved) what="a value moved by 1e-6" ;; *) what="an array with one value more" ;; esac
    if "$py" tools/golden/compare.py tests/golden "$work/$mutant" >"$work/$mutant.out" 2>&1; then
        fail "compare.py did not notice $what in $h"
    else ok "compare.py fails on $what in $h: $(grep -m 1 '^       ' "$work/$mutant.out" | sed 's/^ *//')"; fi
done

# 2. Regenerate and compare.
start=$(date +%s)
if ! "$py" tools/golden/generate.py "$work/regenerated" >"$work/generate.log" 2>&1; then
    cat "$work/generate.log"
    fail "tools/golden/generate.py failed"
    exit 1
fi
echo "  regenerated $(ls "$work/regenerated"/*.h | wc -l) headers with PyTorch $("$py" -c 'import torch; print(torch.__version__)') in $(( $(date +%s) - start )) s"
"$py" tools/golden/compare.py tests/golden "$work/regenerated" || fail "the committed golden values differ from what PyTorch computes now (make golden rewrites them)"
exit $status
