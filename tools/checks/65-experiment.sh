#!/bin/sh
# `make experiment` runs on the student's code and tells the truth about
# it. In a scratch copy of the kit:
#   1. on the untouched stubs it stops with one line naming the chapters
#      whose tests must pass first, and trains nothing;
#   2. with the solutions copied into starter/, the student's run
#      reproduces the reference run and says so;
#   3. with a gradient bug planted in that starter/ (every head's weight
#      gradient sent into head 0's block), the gate names chapter 4; and
#      with the gate off (EXP_GATE=no) the comparison flags the
#      configurations whose accuracy moved, in words.
# Small runs (SEEDS=2, HEADS=1,2) keep it short.
set -eu
. tools/checks/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git ls-files -z | xargs -0 tar -cf - | tar -xf - -C "$work"
cd "$work"
args="SEEDS=2 HEADS=1,2 B=build"

# 1. the stubs
if make --no-print-directory -s experiment $args >out1 2>&1; then
    fail "make experiment succeeded on the stubs"
fi
grep -q "the tests of chapter(s) 1 2 3 4 must pass first" out1 ||
    { cat out1; fail "the stubs' message does not name chapters 1 to 4"; }
[ ! -e build/experiment/starter/results.csv ] ||
    fail "a results.csv was written for the stubs"

# 2. the solutions as the student's code
cp solutions/*.c starter/
if ! make --no-print-directory -s experiment $args >out2 2>&1; then
    cat out2
    fail "make experiment failed on the solutions copied into starter/"
fi
grep -q "your code reproduces the experiment" out2 ||
    { cat out2; fail "the solutions in starter/ did not reproduce the reference"; }
if grep -q DIFFERS out2; then
    fail "a configuration was flagged although the code is the reference"
fi
grep -q "^starter," build/experiment/starter/results.csv ||
    fail "the student's results.csv has no impl column saying starter"
grep -q "^solutions," build/experiment/results.csv ||
    fail "the reference results.csv has no impl column saying solutions"

# 3. a planted gradient bug
sed -i 's|d_W\[r \* d_model + i \* d_head + c\] +=|d_W[r * d_model + (i - i) * d_head + c] +=|' \
    starter/ch4_grad.c
cmp -s solutions/ch4_grad.c starter/ch4_grad.c && fail "the bug was not planted"
if make --no-print-directory -s experiment $args >out3 2>&1; then
    fail "make experiment ran although chapter 4's tests fail"
fi
grep -q "the tests of chapter(s) 4 must pass first" out3 ||
    { cat out3; fail "the gate does not name chapter 4"; }
make --no-print-directory -s experiment $args EXP_GATE=no >out4 2>&1 ||
    { cat out4; fail "make experiment EXP_GATE=no failed"; }
grep -q "DIFFERS" out4 && grep -q "a gradient the finite-difference tests let through" out4 ||
    { cat out4; fail "the planted gradient bug was not flagged in words"; }
sed -n '/beside the reference/,$p' out4
exit $status
