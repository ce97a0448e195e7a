#!/bin/sh
# run.sh BIN CORPUS OUT JOBS MAX_TOKENS TIMEOUT [TEXTS]: what make links
# runs. Parses the validation and test texts (or TEXTS, comma-separated
# ids) with BIN (links.c) into OUT, then writes and prints OUT's coverage
# table. JOBS=2 parses the validation texts and the test texts in two
# processes at once, then joins their files in the order one process
# writes them (validation, then test), so the result is the same (but
# times.tsv, this machine's times).
set -eu
[ $# -ge 6 ] || { echo "usage: run.sh BIN CORPUS OUT JOBS MAX_TOKENS TIMEOUT [TEXTS]"; exit 2; }
bin=$1 corpus=$2 out=$3 jobs=$4 max=$5 timeout=$6 texts=${7:-}
all=${texts:-$(ls "$corpus" | grep -E '^c[a-r][0-9][23]$' | paste -sd, -)}
ids() { # ids DIGIT: the texts of $all whose number ends in DIGIT, comma-separated
    echo "$all" | tr , '\n' | grep -E "^c[a-r][0-9]$1\$" | paste -sd, -
}
start=$(date +%s)
if [ "$jobs" -ge 2 ] && [ -n "$(ids 2)" ] && [ -n "$(ids 3)" ]; then
    "$bin" --texts "$(ids 2)" --max-tokens "$max" --timeout "$timeout" "$corpus" "$out.part-valid" &
    pv=$!
    "$bin" --texts "$(ids 3)" --max-tokens "$max" --timeout "$timeout" "$corpus" "$out.part-test" &
    pt=$!
    rc=0
    wait $pv || rc=1
    wait $pt || rc=1
    [ $rc -eq 0 ] || { echo "links: a part failed"; exit 1; }
    mkdir -p "$out"
    cmp -s "$out.part-valid/params.tsv" "$out.part-test/params.tsv" || { echo "links: the parts' params differ"; exit 1; }
    cp "$out.part-valid/params.tsv" "$out/params.tsv"
    for f in links.tsv sentences.tsv times.tsv; do
        { cat "$out.part-valid/$f"; tail -n +2 "$out.part-test/$f"; } >"$out/$f"
    done
    rm -rf "$out.part-valid" "$out.part-test"
else
    "$bin" --texts "$all" --max-tokens "$max" --timeout "$timeout" "$corpus" "$out"
fi
"$bin" --coverage "$out"
echo "links: $out in $(( $(date +%s) - start )) s"
