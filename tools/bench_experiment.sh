#!/bin/sh
# bench_experiment.sh: how long chapter 5's experiment takes.
#
#   sh tools/bench_experiment.sh [runs]        (B=build by default)
#
# Builds the experiment program (make experiment's binary), then runs it
# `runs` times (default 1) into a scratch directory, so the results that
# `make experiment` wrote are left alone, and prints the wall-clock time
# of each run, with the seconds each head count took to train. The
# experiment is single-threaded; the goal is under a minute on 2 cores.
set -eu
B=${B:-build}
runs=${1:-1}
make --no-print-directory -s B="$B" "$B/experiment/experiment"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "machine: $(nproc) cores, $(uname -m); load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
i=1
while [ "$i" -le "$runs" ]; do
    start=$(date +%s.%N)
    "$B/experiment/experiment" "$scratch" "$scratch" >"$scratch/table.txt" 2>/dev/null
    end=$(date +%s.%N)
    per=$(awk -F, 'NR > 1 { printf "%s%s head%s %.1f s", sep, $1, ($1 > 1 ? "s" : ""), $NF; sep = ", " }' "$scratch/results.csv")
    echo "run $i: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s wall ($per)"
    i=$((i + 1))
done
