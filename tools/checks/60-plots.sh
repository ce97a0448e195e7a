#!/bin/sh
# Every figure is drawn, as PNG and SVG, from a run of the reference code.
set -eu
B=${B:-build}
make --no-print-directory -s plots
status=0
for gp in plots/*.gp; do
    n=$(basename "$gp" .gp)
    [ "$n" = common ] && continue
    for ext in png svg; do
        if [ ! -s "$B/plots/$n.$ext" ]; then echo "missing $B/plots/$n.$ext"; status=1; fi
    done
done
exit $status
