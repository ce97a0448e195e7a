#!/bin/sh
# reference.sh: keep a run of the book's benchmark as the kit's
# reference run, which chapter 7 prints, marked, wherever the reader's
# own rounds did not agree.
#
#   usage: reference.sh RUNDIR [REFDIR]
#
# RUNDIR is a finished run of tools/runs/bench/bench.sh with the book's
# settings, made on a machine as idle as can be had:
#   rm -f build/bench-book/attention.csv
#   make build/bench-book/attention.csv
#   sh tools/runs/bench/reference.sh build/bench-book
# Copies its rounds.csv and factors.csv into REFDIR
# (tools/runs/bench/reference by default) and writes REFDIR/run.values:
# the machine, the date, the load before and after, and how many of the
# comparisons agreed. Refuses a run in which any comparison's rounds did
# not agree, unless REFERENCE_ANYWAY=1.
set -eu
run=$1 ref=${2:-tools/runs/bench/reference}
for f in rounds.csv factors.csv meta.values; do
    [ -f "$run/$f" ] || { echo "reference.sh: $run/$f is missing: run the book's benchmark first (make build/bench-book/attention.csv)" >&2; exit 1; }
done
n=$(awk -F, 'NR > 1' "$run/factors.csv" | wc -l)
ok=$(awk -F, 'NR > 1 && $12 == "yes"' "$run/factors.csv" | wc -l)
if [ "$ok" -ne "$n" ] && [ "${REFERENCE_ANYWAY:-0}" != 1 ]; then
    echo "reference.sh: only $ok of the $n comparisons of $run agreed: the machine was busy; measure again when it is idle (or REFERENCE_ANYWAY=1)" >&2
    exit 1
fi
mkdir -p "$ref"
cp "$run/rounds.csv" "$run/factors.csv" "$ref/"
{
    get() { sed -n "s/^ch7.$1=//p" "$run/meta.values"; }
    echo "cpu=$(get cpu)"
    echo "cores=$(get cores)"
    echo "threads=$(get threads)"
    echo "date=$(date -u -r "$run/factors.csv" +%Y-%m-%d)"
    echo "load_before=$(get load_before)"
    echo "load_after=$(get load_after)"
    echo "agreed_n=$ok"
    echo "compared_n=$n"
} >"$ref/run.values"
cat "$ref/run.values"
