#!/bin/sh
# The book shows only what every run reproduces: the data writers
# (build/plotdata/*), chapter 5's experiment, chapter 6's K/V-sharing
# run (tools/kvexp) run a second time, into a scratch directory, and
# every number the book quotes ([]{.value} keys), every generated table
# it includes (.generated files) and every data file its figures draw
# must come out byte for byte the same. A wall
# time, a date or an unseeded random number cannot pass; timings belong
# to the benchmarks (tools/runs/bench/experiment.sh), which print them.
# Chapter 8's numbers come from its long run, committed as data (its
# data writer, plotdata/ch8_long, copies them, and is run twice above);
# that a rerun reproduces them is 67-lm's check (make lm-reference
# LM_STOP=...).
# B=build/<dir> builds elsewhere (default build).
set -eu
B="${B:-build}"
status=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make --no-print-directory -s B="$B" plots >/dev/null
data="$B/plots/data"
mkdir -p "$work/data" "$work/exp"
n=0
if [ -x "$B/experiment/solutions/experiment" ]; then
    echo "  running the experiment a second time (about a minute on 2 idle cores)"
    nice "$B/experiment/solutions/experiment" $(cat "$B/experiment/args") "$work/exp" "$work/data" >/dev/null 2>"$work/exp.err" ||
        { cat "$work/exp.err"; echo "  FAIL: the experiment failed on its second run"; exit 1; }
    n=$((n + 1))
fi
if [ -x "$B/experiment/solutions/kvexp" ]; then
    echo "  running chapter 6's K/V-sharing run a second time (about 30 s on 2 idle cores)"
    nice "$B/experiment/solutions/kvexp" $(cat "$B/experiment/kv_args") "$work/exp" "$work/data" >/dev/null 2>"$work/kv.err" ||
        { cat "$work/kv.err"; echo "  FAIL: chapter 6's K/V-sharing run failed on its second run"; exit 1; }
    n=$((n + 1))
fi
# The data writers last, as the book's data step runs them: some make
# their tables from the runs' data (plotdata/ch5 from the experiment's
# CSV files).
for p in "$B"/plotdata/*; do
    [ -x "$p" ] || continue
    "$p" "$work/data" >/dev/null || { echo "  FAIL: $p failed on its second run"; exit 1; }
    n=$((n + 1))
done
# What the book uses.
cat book.md chapters/*.md | grep -o 'key="[^"]*"' | sed 's/key="//; s/"$//' | sort -u >"$work/keys"
cat book.md chapters/*.md | grep -o '\.generated[^}]*file="[^"]*"' | sed 's/.*file="//; s/"$//' | sort -u >"$work/generated"
cat "$data"/*.values 2>/dev/null | grep -v '^#' | sort -u >"$work/first.values"
cat "$work/data"/*.values 2>/dev/null | grep -v '^#' | sort -u >"$work/second.values"

# A benchmark's values file starts with '# measured': its timings are
# machine-dependent by nature and are not compared (the chapter says so).
measured=0
for f in "$data"/*.values; do
    [ -e "$f" ] || continue
    if head -n 1 "$f" | grep -q '^# measured'; then
        grep -v '^#' "$f" | sed 's/=.*//' >>"$work/measured"
    fi
done
touch "$work/measured"

checked=0
while read -r key; do
    if grep -qxF "$key" "$work/measured"; then
        measured=$((measured + 1))
        continue
    fi
    a=$(grep -F -m1 "$key=" "$work/first.values" | sed 's/^[^=]*=//' || true)
    b=$(grep -F -m1 "$key=" "$work/second.values" | sed 's/^[^=]*=//' || true)
    checked=$((checked + 1))
    if [ "$a" != "$b" ]; then
        echo "  FAIL: the book quotes $key, which changes from run to run ('$a', then '$b'): a wall time? Timings belong in a benchmark script"
        status=1
    fi
done <"$work/keys"
while read -r f; do
    checked=$((checked + 1))
    if [ ! -e "$work/data/$f" ]; then
        # not a data writer's (the preface's test run is made by book.mk)
        checked=$((checked - 1))
    elif ! cmp -s "$data/$f" "$work/data/$f"; then
        echo "  FAIL: the book includes $f, which changes from run to run (a wall time?):"
        diff "$data/$f" "$work/data/$f" | head -n 6 | sed 's/^/        /'
        status=1
    fi
done <"$work/generated"
for f in "$work"/data/*; do
    case "$f" in *.values | *.md) continue ;; esac
    b=$(basename "$f")
    checked=$((checked + 1))
    if ! cmp -s "$data/$b" "$f"; then
        echo "  FAIL: the figures' data file $b changes from run to run"
        status=1
    fi
done
echo "  $n data writer(s) run twice; $checked quoted values, tables and figure data compared"
echo "  $measured quoted value(s) from a benchmark run ('# measured') not compared: machine-dependent"
exit $status
