#!/bin/sh
# bench_decode.sh: tokens per second when decoding with the KV cache,
# against re-running the whole forward for every token (chapter 6).
#
#   sh tools/runs/bench/decode.sh [seconds per measurement]   (B=build by default)
#
# Builds tools/runs/bench/decode_speed.c against the reference solutions and
# runs it on one thread (OMP_NUM_THREADS=1; the kit's code has no threads
# of its own) for context lengths 16 .. 2048, each measurement lasting the
# given seconds (default 0.5). Prints the machine, then T, the cached
# rate, the full-forward rate, their ratio, and the cached rate of the
# same layer with one K/V head (MQA), all measured side by side in this
# one run. The data go to a scratch directory, so the figure that
# `make plots` drew is left alone. The numbers are this machine's.
set -eu
B=${B:-build}
budget=${1:-0.5}
make --no-print-directory -s B="$B" "$B/bench/decode_speed"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "machine: $(nproc) cores, $(uname -m); load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
OMP_NUM_THREADS=1 "$B/bench/decode_speed" "$scratch" "$budget"
