#!/bin/sh
# weights_compare.sh NEW REF TOL: the measures of a run's final networks
# read again from their 16-bit files (lm-experiment --remeasure REF
# --weights DIR NEW, make lm-weights-check) beside the run's own CSV
# files, number by number. The files and, for each, the columns that
# name a row (compared as text: every row of NEW must be a row of REF);
# every other column is a measure, compared:
#   seed_heads.csv    heads,kv_heads,seed; lr, test_loss, the positional
#                     heads, top_share, every margin
#   offsets.csv       heads,block,head; every mean weight and top share,
#                     best_offset, best_share, positional
#   relations.csv     relation,heads,block,head; cases, score, baseline,
#                     best_k, margin and their hard_ counterparts
#   ablation.csv      class,heads,block,head; targets, base, ablated,
#                     increase
#   tag_profiles.csv  heads,block,head,from,to; mass
#   row_max.csv       heads,block,head; row_max
# A measure agrees when NEW's value is within TOL (0.0005: the same to 3
# decimals) of REF's, widened by half a unit of REF's last printed decimal,
# as REF's value is itself rounded to it: 0.00055 for a value printed to 4
# decimals, 0.0055 for row_max.csv's 2 in the committed long run; a whole
# number (a count, an offset, a flag) must be equal. A configuration (the
# heads and, where there is the column, the K/V heads; in seed_heads.csv
# the seed too) that NEW has no row of is not compared, and said so; of
# one it has, every row of REF must be in NEW. A relation's score (and so its margin) is the share of its
# cases whose heaviest weight falls on the related word: one case that
# changes is 1/cases, more than 0.0005 in every committed relation, and a
# disagreement there says how many cases changed. Prints a line per file (its largest difference, and where) and
# each measure that disagrees; exits 1 when one does or a row is missing.
set -eu
new=$1 ref=$2 tol=$3
status=0
# file, the columns that name a row, the columns of a configuration
for spec in seed_heads.csv:1,2,4:1,2,4 offsets.csv:1,2,3:1 \
    relations.csv:1,2,3,4:2 ablation.csv:1,2,3,4:2 \
    tag_profiles.csv:1,2,3,4,5:1 row_max.csv:1,2,3:1; do
    f=${spec%%:*} rest=${spec#*:}
    keys=${rest%%:*} cfgs=${rest#*:}
    for d in "$new" "$ref"; do
        [ -f "$d/$f" ] || { echo "weights_compare: no $d/$f"; exit 1; }
    done
    awk -F, -v tol="$tol" -v keys="$keys" -v cfgs="$cfgs" -v f="$f" '
        BEGIN { nk = split(keys, kc, ","); nc = split(cfgs, cc, ",")
                for (i = 1; i <= nk; i++) iskey[kc[i]] = 1 }
        function id(   s, i) { s = $kc[1]; for (i = 2; i <= nk; i++) s = s "," $kc[i]; return s }
        function cfg(   s, i) { s = $cc[1]; for (i = 2; i <= nc; i++) s = s "," $cc[i]; return s }
        # relations.csv: a score is a share of cases (hard_ ones: of the
        # hard cases), so a difference d is d x cases cases that changed
        # their heaviest weight; said beside it
        function cases(i, d,   c, j) {
            c = ""
            for (j = 1; j <= NF; j++)
                if (name[j] == (name[i] ~ /^hard_/ ? "hard_cases" : "cases")) c = $j
            return c == "" || name[i] !~ /score|margin/ ? "" : sprintf(": %d of %d cases", d * c + 0.5, c)
        }
        # decimals printed: 0 for a whole number
        function decimals(x,   i) { i = index(x, "."); return i ? length(x) - i : 0 }
        FNR == 1 { if (NR == FNR) { rh = $0; split($0, name, ",") }
                   else if ($0 != rh) { print "  " f ": its header is not the reference run'"'"'s"; bad++ }
                   next }
        NR == FNR { row[id()] = $0; rcfg[id()] = cfg(); next }
        {
            k = id(); have[cfg()] = 1; seen[k] = 1
            if (!(k in row)) { print "  " f ": row " k " is not in the reference run"; bad++; next }
            split(row[k], r, ",")
            for (i = 1; i <= NF; i++) {
                if (i in iskey) continue
                n++; d = $i - r[i]; if (d < 0) d = -d
                p = decimals(r[i]); q = decimals($i)
                lim = (p == 0 && q == 0) ? 0 : tol + 0.5 * 10 ^ -p
                if (d > lim) {
                    if (++bad <= 10) printf "  %s: %s, %s: %s, reference %s (%.5f apart%s)\n", f, k, name[i], $i, r[i], d, cases(i, d)
                }
                if (d > worst) { worst = d; at = k " " name[i] }
            }
        }
        END {
            for (k in row)
                if (rcfg[k] in have) { if (!(k in seen)) { print "  " f ": row " k " of the reference run is missing"; bad++ } }
                else skipped[rcfg[k]]++
            s = ""; for (c in skipped) s = s " [" c "]"
            printf "%s: %d measures compared, %s; the largest difference %.5f (%s)%s\n", f, n,
                   bad ? bad " disagree or missing" : "all agree", worst, (worst > 0 ? at : "none differ"),
                   (s != "" ? "; configurations not remeasured:" s : "")
            exit bad ? 1 : 0
        }' "$ref/$f" "$new/$f" || status=1
done
[ $status -eq 0 ] && echo "weights_compare: every measure of $new agrees with $ref's to within $tol"
exit $status
