#!/bin/sh
# budgets.sh check|readme|readme-check [README]: the time budgets of
# tools/checks/budgets.tsv (its header explains the table), from the
# kit's root.
#   check         the table against the steps: every step
#                 (tools/checks/NN-*.sh) has one row, every row is a step
#                 or an install phase, each row's phase fits the step's
#                 tier (run.sh's DEEP), and the budgets add up to at most
#                 2700 s (CI's 45 minutes). Prints one line per fault and
#                 exits 1; silent and 0 when the table holds. run.sh runs
#                 it first, and 02-chapters plants each fault.
#   readme        print the README's table of budgets (the lines between
#                 its markers <!-- budgets --> and <!-- /budgets -->)
#   readme-check  the README (or README) quotes only the table's times:
#                 its block of budgets is what readme prints, a line that
#                 names make check, make check-deep or .ci/run and says
#                 "about N minutes" after it gives that phase's budget, and
#                 no other line that names a step (`67-lm`) quotes a time
#                 in seconds or minutes (line by line: a time wrapped onto
#                 the next line is not seen). Prints one line per fault,
#                 exits 1.
set -u
TSV=tools/checks/budgets.tsv
LIMIT=2700
rows() { awk -F'\t' '!/^#/ && NF' "$TSV"; }
minutes() { # minutes PHASE|all: the phase's budgets added up, in whole minutes (rounded up)
    rows | awk -F'\t' -v p="$1" '$2 == p || p == "all" { s += $3 } END { print int((s + 59) / 60) }'
}
case "${1:-}" in
check)
    [ -f "$TSV" ] || { echo "budgets: there is no $TSV"; exit 1; }
    deep=$(sed -n 's/^DEEP="\(.*\)"$/\1/p' tools/checks/run.sh)
    steps=$(for s in tools/checks/[0-9]*.sh; do basename "$s" .sh; done | tr '\n' ' ')
    rows | awk -F'\t' -v steps="$steps" -v deep=" $deep " -v limit="$LIMIT" -v tsv="$TSV" '
        BEGIN { n = split(steps, s, " "); for (i = 1; i <= n; i++) step[s[i]] = 1; bad = 0 }
        function fault(m) { print "budgets: " m; bad = 1 }
        {
            if (NF != 4) { fault(tsv ": the row \"" $1 "\" has " NF " columns, not 4"); next }
            if ($3 !~ /^[0-9]+$/) fault(tsv ": " $1 "'"'"'s budget \"" $3 "\" is not a whole number of seconds")
            if ($4 != "met" && $4 != "target") fault(tsv ": " $1 "'"'"'s basis is \"" $4 "\", not met or target")
            if ($1 in seen) fault(tsv ": " $1 " has a second row")
            seen[$1] = 1; sum += $3
            if ($1 == "make deps all") want = "deps"
            else if ($1 == "make deps-dev") want = "deps-dev"
            else if (!($1 in step)) { fault(tsv ": the row " $1 " names no step (there is no tools/checks/" $1 ".sh)"); next }
            else if (index(deep, " " $1 " ")) want = "check-deep"
            else want = ($2 == "deps-dev") ? "deps-dev" : "check"
            if ($2 != want) fault(tsv ": " $1 "'"'"'s phase is \"" $2 "\", not " want)
        }
        END {
            for (i = 1; i <= n; i++) if (!(s[i] in seen)) fault("the step " s[i] " has no row in " tsv " (give it a budget)")
            if (!("make deps all" in seen)) fault(tsv " has no row for make deps all")
            if (!("make deps-dev" in seen)) fault(tsv " has no row for make deps-dev")
            if (sum > limit) fault("the budgets in " tsv " add up to " sum " s, past CI'"'"'s " limit " s (45 minutes)")
            exit bad
        }' ;;
readme)
    echo '<!-- budgets: written by sh tools/checks/budgets.sh readme from tools/checks/budgets.tsv -->'
    echo '| Part of `.ci/run` | Budget | Its steps, each with its budget in seconds |'
    echo '|---|---|---|'
    for p in deps check check-deep deps-dev; do
        case $p in
        deps) what='`make deps all`' ;;
        check) what='`make check`, the quick tier' ;;
        check-deep) what='`make check-deep`, the deep tier' ;;
        deps-dev) what='`make deps-dev` and the three steps that need it' ;;
        esac
        list=$(rows | awk -F'\t' -v p="$p" '$2 == p { printf "%s`%s` %d%s", n++ ? ", " : "", $1, $3, $4 == "target" ? " (a target, not yet met)" : "" }')
        [ "$p" = deps ] && list=""
        echo "| $what | $(minutes "$p") minutes | $list |"
    done
    echo "| all of \`.ci/run\` | $(minutes all) minutes | |"
    echo '<!-- /budgets -->' ;;
readme-check)
    readme=${2:-README.md}
    status=0
    want=$(sh "$0" readme)
    have=$(sed -n '/^<!-- budgets/,/^<!-- \/budgets -->$/p' "$readme")
    if [ -z "$have" ]; then
        echo "budgets: $readme has no table of budgets (its lines between <!-- budgets --> and <!-- /budgets -->)"; status=1
    elif [ "$have" != "$want" ]; then
        echo "budgets: $readme's table of budgets differs from $TSV: put in its place what sh tools/checks/budgets.sh readme prints"; status=1
    fi
    sed '/^<!-- budgets/,/^<!-- \/budgets -->$/d' "$readme" | awk -v q="$(minutes check)" -v d="$(minutes check-deep)" -v c="$(minutes all)" -v f="$readme" '
        function fault(m) { print "budgets: " f ": " m ": " $0; bad = 1 }
        {
            line = $0; phase = ""
            while (match(line, /make check-deep|make check|\.ci\/run|about [0-9,]+ minutes|`[0-9][0-9]-[a-z][a-z-]*`/)) {
                m = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
                if (m == "make check-deep") phase = "deep"
                else if (m == "make check") phase = "quick"
                else if (m == ".ci/run") phase = "ci"
                else if (m ~ /^`/) continue
                else {
                    n = m; gsub(/[^0-9]/, "", n)
                    w = phase == "deep" ? d : phase == "quick" ? q : phase == "ci" ? c : ""
                    if (w == "" && $0 ~ /`[0-9][0-9]-[a-z][a-z-]*`/) fault("a line that names a step quotes a time; the table of budgets holds them")
                    else if (w != "" && n != w) fault("\"" m "\", but the table'"'"'s budget is " w " minutes")
                }
            }
            rest = $0; gsub(/about [0-9,]+ minutes/, "", rest)
            if ($0 ~ /`[0-9][0-9]-[a-z][a-z-]*`/ && rest ~ /[0-9] (s|seconds|minutes)([^a-z]|$)/)
                fault("a line that names a step quotes a time; the table of budgets holds them")
        }
        END { exit bad }' || status=1
    exit $status ;;
*) echo "usage: budgets.sh check|readme|readme-check [README]"; exit 2 ;;
esac
