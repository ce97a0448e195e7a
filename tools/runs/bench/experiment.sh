#!/bin/sh
# bench_experiment.sh: how long chapter 5's experiment takes, on 1 worker
# process and on several, side by side.
#
#   sh tools/runs/bench/experiment.sh [WORKERS ...]   (default: 1 and nproc)
#   SEEDS=5 B=build sh tools/runs/bench/experiment.sh 2
#
# Builds the book's experiment program (make experiment's binary), then
# runs the book's whole run (every configuration, SEEDS seeds) once per
# worker count given, into scratch directories, so the results that
# `make experiment` wrote are left alone. For each it prints the wall
# time, the CPU time of all its processes, and the load average before
# the run (other programs on the machine slow it down); then the speed-up
# against the first worker count, and whether the results are
# bit-identical (they must be: each network is trained by one process
# from its own seed). It counts what each run trained: the networks of
# the grid, the tables' configurations x seeds, and the controls.
# The budget (issue 24): GOAL=90 s of wall time on 2 worker processes
# (on 2 idle cores); the 2-worker run says whether it was met. CPU time
# (user + sys) does not depend on the other programs as much as wall
# time does: compare it when the load average is high.
set -eu
B=${B:-build}
SEEDS=${SEEDS:-5}
GOAL=${GOAL:-90}
[ "$#" -gt 0 ] || set -- 1 "$(nproc)"
make --no-print-directory -s B="$B" "$B/experiment/solutions/experiment"
bin="$B/experiment/solutions/experiment"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "machine: $(nproc) cores, $(uname -m); $SEEDS seeds"
first_wall= first_dir=
for w in "$@"; do
    dir="$scratch/w$w"
    mkdir -p "$dir"
    load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
    # GNU time's format when there is one; the shell's otherwise
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%e %U %S" -o "$dir/time" \
            "$bin" --seeds "$SEEDS" --workers "$w" "$dir" >/dev/null 2>"$dir/log"
        read -r wall user sys <"$dir/time"
        cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
    else
        start=$(date +%s.%N)
        "$bin" --seeds "$SEEDS" --workers "$w" "$dir" >/dev/null 2>"$dir/log"
        wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
        cpu='?'
    fi
    # what it trained: every batch of jobs says how many networks
    # (the progress lines); the tables' are the CSV files' rows, over
    # (heads, scale) configurations; the first batch is the grid
    all=$(awk '/^  training [0-9]+ networks/ { n += $2 } END { print n + 0 }' "$dir/log")
    grid=$(awk '/^  training [0-9]+ networks/ { print $2; exit }' "$dir/log")
    nets=$(awk -F, 'FNR > 1' "$dir/results.csv" "$dir/content.csv" | wc -l)
    configs=$(awk -F, 'FNR > 1 { print FILENAME, $2, $3 }' "$dir/results.csv" \
        "$dir/content.csv" | sort -u | wc -l)
    printf '%2d worker%s: %6.1f s wall, %6s s CPU, %d networks (load average before: %s)\n' \
        "$w" "$([ "$w" -gt 1 ] && echo s || echo ' ')" "$wall" "$cpu" "$all" "$load"
    printf '   %d in the grid, %d in the tables (%d configurations x %d seeds), %d controls\n' \
        "${grid:-0}" "$nets" "$configs" "$SEEDS" "$((all - ${grid:-0} - nets))"
    if [ "$w" -eq 2 ]; then
        awk -v t="$wall" -v g="$GOAL" -v c="$(nproc)" -v l="$load" 'BEGIN {
            printf "   the goal, %d s wall on 2 cores: %s (%.1f s)", g,
                t <= g ? "met" : "NOT met", t
            if (c != 2) printf "; this machine has %d cores", c
            if (l + 0 > 0.5) printf "; the load average was %s, so wall time is not the idle machine'"'"'s", l
            printf "\n" }'
    fi
    if [ -z "$first_wall" ]; then
        first_wall=$wall first_dir=$dir
    else
        awk -v a="$first_wall" -v b="$wall" -v w="$w" -v f="$1" \
            'BEGIN { printf "   speed-up of %d workers over %d: %.2fx\n", w, f, a / b }'
        if cmp -s "$first_dir/results.csv" "$dir/results.csv" &&
            cmp -s "$first_dir/content.csv" "$dir/content.csv"; then
            echo "   results.csv and content.csv: bit-identical to the $1-worker run"
        else
            echo "   results differ from the $1-worker run: a bug"
            exit 1
        fi
    fi
done
