#!/bin/sh
# Every figure is drawn from a run of the reference code (or from its
# TikZ source, tools/book/diagrams/), as a vector PDF, an SVG and a PNG preview.
set -eu
B=${B:-build}
make --no-print-directory -s plots
status=0
for src in plots/*.gp tools/book/diagrams/*.tex; do
    [ -e "$src" ] || continue
    n=$(basename "$src"); n=${n%.*}
    [ "$n" = common ] && continue
    for ext in pdf svg png; do
        if [ ! -s "$B/plots/$n.$ext" ]; then echo "missing $B/plots/$n.$ext"; status=1; fi
    done
done
exit $status
