#!/bin/sh
# curves_compare.sh NEW REF TOL: the validation curves of a run of
# lm-experiment (NEW/curves_tuning.dat: one column per configuration and
# rate, seed 1), usually a shortened rerun (--stop), beside a reference
# run's (REF/curves_tuning.dat, committed), point by point: every column
# of NEW must be a column of REF (the same configuration and rate), every
# point a point of REF (the same tokens seen), and its validation loss
# within TOL nats of REF's. Exits 1 when one is missing or further apart.
set -eu
new=$1 ref=$2 tol=$3
for f in "$new" "$ref"; do
    [ -f "$f/curves_tuning.dat" ] || { echo "curves_compare: no $f/curves_tuning.dat"; exit 1; }
done
awk -v tol="$tol" '
    # the header: "# ... for: [4 heads, 4 K/V, lr 0.007] [16 heads, ...]"
    function labels(line, lab,   n, rest, i) {
        n = 0; rest = line
        while ((i = index(rest, "[")) > 0) {
            rest = substr(rest, i + 1)
            lab[++n] = substr(rest, 1, index(rest, "]") - 1)
        }
        return n
    }
    FNR == 1 { if (NR == FNR) nr = labels($0, rl); else nn = labels($0, nl); next }
    NR == FNR { for (c = 1; c <= nr; c++) ref[rl[c], $1] = $(c + 1); next }
    {
        for (c = 1; c <= nn; c++) {
            n++
            if (!((nl[c], $1) in ref)) {
                printf "  [%s] at %d tokens: not in the reference run\n", nl[c], $1; bad++; continue
            }
            d = $(c + 1) - ref[nl[c], $1]; if (d < 0) d = -d
            if (d > tol) bad++
            printf "  [%s] at %8d tokens: validation %.4f (reference %.4f)%s\n", nl[c], $1,
                   $(c + 1), ref[nl[c], $1], (d > tol ? "  <-- more than " tol " nats apart" : "")
        }
    }
    END {
        if (n == 0) { print "curves_compare: the new run has no points"; exit 1 }
        printf "%d point%s compared with the reference run: %s\n", n, (n > 1 ? "s" : ""),
               bad ? bad " apart or missing" : "every validation loss within " tol " nats"
        exit bad ? 1 : 0
    }' "$ref/curves_tuning.dat" "$new/curves_tuning.dat"
