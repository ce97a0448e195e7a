#!/bin/sh
# run.sh [--no-skip] [--tier quick|deep|all] [--list] [STEP...]: the
# kit's self-test. Runs the steps in tools/checks/ in order, each a
# script that exits non-zero on failure (77: skipped, because a tool it
# needs is missing; it says which), and ends with one line: N passed,
# M failed, K skipped, after a table of each step's tier, time, budget
# and result.
#
# Every step is in one of two tiers, so that the README's second command
# stays short and nothing is dropped:
#   quick  make check (run.sh --tier quick): every step but the deep ones;
#   deep   make check-deep (run.sh --tier deep): the long proofs, which
#          .ci/run runs right after make check: the generated mutants
#          (51-mutgen), chapter 5's run on a student's copy
#          (65-experiment), the grader and its tricks (75-grade) and the
#          book's runs again (76-reproducible).
# DEEP below is the only list of the deep steps; every other step is quick.
# Their times: each step's budget, in seconds on 2 idle cores, is its
# row of tools/checks/budgets.tsv, the one table of CI's times (the
# README's are written from it). run.sh stops before running anything
# when that table and the steps disagree (sh tools/checks/budgets.sh
# check says how). A step over its budget is flagged OVER in the end
# table and named below it, but that fails nothing: a slow or busy
# machine must not change CI's verdict; the flag tells the contributor
# whose step it is to make it fit again (or to argue for a new budget
# within CI's 45 minutes).
#
#   --tier T   the steps of tier T, or all (the default: every step)
#   STEP...    only the steps named, as 74-browser, whatever their tier
#   --list     print each step that would run and its tier; run nothing
#   --no-skip  a skipped step is a failure (.ci/run, once make deps-dev
#              has installed every package a step needs)
set -u
DEEP="51-mutgen 65-experiment 75-grade 76-reproducible"
for d in $DEEP; do
    [ -e "tools/checks/$d.sh" ] || { echo "run.sh: DEEP names $d, but there is no tools/checks/$d.sh"; exit 2; }
done
msg=$(sh tools/checks/budgets.sh check) || { printf '%s\n' "$msg"; echo "run.sh: tools/checks/budgets.tsv and the steps disagree (see above)"; exit 2; }
budget_of() { # budget_of NAME: its budget in seconds, from budgets.tsv
    awk -F'\t' -v n="$1" '!/^#/ && $1 == n { print $3 }' tools/checks/budgets.tsv
}
tier_of() { # tier_of NAME: deep or quick
    case " $DEEP " in *" $1 "*) echo deep ;; *) echo quick ;; esac
}
no_skip=false list=false tier=""
while [ $# -gt 0 ]; do
    case "$1" in
    --no-skip) no_skip=true ;;
    --list) list=true ;;
    --tier)
        case "${2:-}" in
        quick | deep | all) tier=$2 ;;
        *) echo "run.sh: --tier takes quick, deep or all, not '${2:-}'"; exit 2 ;;
        esac
        shift ;;
    -*) echo "usage: run.sh [--no-skip] [--tier quick|deep|all] [--list] [STEP...]"; exit 2 ;;
    *) break ;;
    esac
    shift
done
[ -n "$tier" ] && [ $# -gt 0 ] && { echo "run.sh: name steps or a tier, not both"; exit 2; }
steps=""
for s in "$@"; do
    [ -e "tools/checks/${s%.sh}.sh" ] || { echo "run.sh: no check step tools/checks/${s%.sh}.sh"; exit 2; }
    steps="$steps tools/checks/${s%.sh}.sh"
done
if [ -z "$steps" ]; then
    for step in tools/checks/[0-9]*.sh; do
        t=$(tier_of "$(basename "$step" .sh)")
        [ "${tier:-all}" = all ] || [ "$t" = "$tier" ] && steps="$steps $step"
    done
fi
if $list; then
    for step in $steps; do
        name=$(basename "$step" .sh)
        echo "$name $(tier_of "$name")"
    done
    exit 0
fi
passed=0 failed=0 skipped=0 failures="" skips="" table="" over=""
for step in $steps; do
    name=$(basename "$step" .sh)
    echo "== check $name"
    start=$(date +%s)
    rc=0
    bash "$step" || rc=$?
    secs=$(( $(date +%s) - start ))
    if [ "$rc" -eq 77 ] && $no_skip; then
        failed=$((failed + 1))
        failures="$failures $name"
        echo "== FAIL $name: SKIPPED, and every tier is installed here, so nothing may be skipped ($secs s)"
    elif [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        echo "== ok   $name ($secs s)"
    elif [ "$rc" -eq 77 ]; then
        skipped=$((skipped + 1))
        skips="$skips $name"
        echo "== SKIPPED $name ($secs s)"
    else
        failed=$((failed + 1))
        failures="$failures $name"
        echo "== FAIL $name ($secs s)"
    fi
    case $rc in 0) r=ok ;; 77) r=skipped ;; *) r=FAIL ;; esac
    [ "$rc" -eq 77 ] && $no_skip && r=FAIL
    b=$(budget_of "$name")
    flag=""
    [ "$secs" -gt "$b" ] && { flag="  OVER"; over="$over $name"; }
    table="$table$(printf '%-18s %-6s %7d %7d  %s%s' "$name" "$(tier_of "$name")" "$secs" "$b" "$r" "$flag")
"
done
echo
printf '%-18s %-6s %7s %7s  %s\n' step tier seconds budget result
printf '%s' "$table"
printf '%-18s %-6s %7d %7d\n' total "" $(printf '%s' "$table" | awk '{ t += $3; b += $4 } END { print t + 0, b + 0 }')
echo
[ -n "$over" ] && echo "over budget (tools/checks/budgets.tsv; this fails nothing):$over"
[ -n "$failures" ] && echo "failed steps:$failures"
[ -n "$skips" ] && echo "skipped steps (a tool is missing; see above):$skips"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
