#!/bin/sh
# roles_compare.sh NEW REF TOL: a run of `lm-experiment --roles` (NEW/roles.csv)
# beside the kit's reference run (REF/roles.csv, committed), checkpoint by
# checkpoint: every row of NEW must be a row of REF (same head count and
# tokens seen), and its validation loss within TOL nats of REF's; its
# best relation margin and largest single-offset share are printed beside
# REF's. A shortened rerun (--stop) compares its first checkpoints only.
# Exits 1 when a row is missing or a loss is further than TOL.
set -eu
new=$1 ref=$2 tol=$3
[ -f "$new/roles.csv" ] || { echo "roles_compare: no $new/roles.csv"; exit 1; }
[ -f "$ref/roles.csv" ] || { echo "roles_compare: no $ref/roles.csv"; exit 1; }
awk -F, -v tol="$tol" '
    FNR == 1 { next }
    # best margin of a row: the largest of columns 8 .. 12
    function best(   m, q) { m = $8; for (q = 9; q <= 12; q++) if ($q > m) m = $q; return m }
    NR == FNR { val[$1, $2] = $3; mar[$1, $2] = best(); top[$1, $2] = $6; next }
    {
        n++
        if (!(($1, $2) in val)) { printf "  %2d heads, %8d tokens: not in the reference run\n", $1, $2; bad++; next }
        d = $3 - val[$1, $2]; if (d < 0) d = -d
        flag = d > tol ? "  <-- more than " tol " nats apart" : ""
        if (d > tol) bad++
        printf "  %2d heads, %8d tokens: validation %.4f (reference %.4f), best margin %+.3f (%+.3f), top share %.3f (%.3f)%s\n",
               $1, $2, $3, val[$1, $2], best(), mar[$1, $2], $6, top[$1, $2], flag
    }
    END {
        if (n == 0) { print "roles_compare: the new run has no checkpoints"; exit 1 }
        printf "%d checkpoint%s compared with the reference run: %s\n", n, (n > 1 ? "s" : ""),
               bad ? bad " apart or missing" : "every validation loss within " tol " nats"
        exit bad ? 1 : 0
    }' "$ref/roles.csv" "$new/roles.csv"
