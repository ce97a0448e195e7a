#!/bin/sh
# The committed runs the book prints (tools/runs/lm/reference/ and its
# run folders, tools/runs/sums.sh):
#   1. every file is as its folder's manifest (SHA256SUMS) says;
#   2. on a scratch copy of the kit, a value garbled ("5.03776" written
#      "5.0x776" in long/results.csv) or a committed table cut short (its
#      last row dropped) stops the book's data step, before anything is
#      built, with one line naming the file;
#   3. the data writers themselves (tools/runs/plotdata/ch8_long.c and
#      ch8_roles.c, on copies of the runs) refuse a value that is not a
#      number, or a row without its last field, naming the file and line,
#      never reading a number's prefix;
#   4. the sizes chapter 8 prints (ch8size.values: the long run's row of
#      tools/runs/lm/sizes.tsv, which ch8_tables writes for the book) are
#      the ones the committed run was trained at: every ch8size key the
#      chapter prints is written, the model's sizes it prints from
#      gpt_default_config() (plotdata/ch8.c: ch8.C, ch8.L, ch8.T) are the
#      same, and a planted mismatch, in the table
#      (its width, depth, context, batch or budget) or in the run's own
#      record of its width (long/table.txt), stops ch8_tables with one
#      line naming the size.
set -eu
. tools/checks/lib.sh
B=${B:-build}
ref=tools/runs/lm/reference
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# 1. the committed runs as their manifests say
if sh tools/runs/sums.sh check "$ref" >"$T/out" 2>&1; then
    ok "every run folder under $ref matches its SHA256SUMS"
else
    cat "$T/out"
    fail "the committed runs under $ref differ from their manifests"
fi

# one_line WHAT WANT... -- COMMAND...: the command fails with one line
# holding every WANT
one_line() {
    what=$1
    shift
    wants=""
    while [ "$1" != "--" ]; do wants="$wants$1
"; shift; done
    shift
    if "$@" >"$T/out" 2>&1; then
        fail "$what: it succeeded"
        return
    fi
    grep -v -e '^make\(\[[0-9]*\]\)\?: \*\*\*' -e '^  cc  ' "$T/out" >"$T/msg" || true
    missing=$(printf '%s' "$wants" | while IFS= read -r w; do grep -qF -- "$w" "$T/msg" || echo "$w"; done)
    if [ "$(wc -l <"$T/msg")" -eq 1 ] && [ -z "$missing" ]; then
        ok "$what: $(cat "$T/msg")"
    else
        cat "$T/out"
        fail "$what: not one line naming $(printf '%s' "$wants" | tr '\n' ' ')"
    fi
}

# 2. the book's data step on a scratch copy of the kit: make's check of
#    the manifests, the prerequisite of the data writers and their data
kit=$T/kit
mkdir "$kit"
git ls-files -z | xargs -0 cp -p --parents -t "$kit"
# the reference code already built (kept older than its sources), so
# that the data step has nothing to build before its check
[ -d "$B/solutions" ] && mkdir -p "$T/build" && cp -rp "$B/solutions" "$T/build/"
sed -i 's/5\.03776/5.0x776/' "$kit/$ref/long/results.csv"
one_line "a garbled value in long/results.csv" "$ref/long/results.csv" "sha256" -- \
    make -C "$kit" --no-print-directory -s B="$T/build" "$T/build/plots/data/.stamp"
cp "$ref/long/results.csv" "$kit/$ref/long/results.csv"
sed -i '$d' "$kit/$ref/long-4m/seed_heads.csv"
one_line "long-4m/seed_heads.csv cut short" "$ref/long-4m/seed_heads.csv" "sha256" -- \
    make -C "$kit" --no-print-directory -s B="$T/build" "$T/build/plots/data/.stamp"
[ -e "$T/build/plotdata" ] && fail "the data writers were built before the manifests were checked"

# 3. the data writers, strict: on copies of the runs (no manifest read)
make --no-print-directory -s B="$B" "$B/plotdata/ch8_long" "$B/plotdata/ch8_roles" \
    "$B/plotdata/ch8_tables" "$B/plotdata/ch8"
cp -r "$ref" "$T/ref"
mkdir "$T/out-dir"
sed -i 's/5\.03776/5.0x776/' "$T/ref/long/results.csv"
one_line "ch8_long on a garbled value" "$T/ref/long/results.csv, line" "'5.0x776', not a number" -- \
    "$B/plotdata/ch8_long" "$T/out-dir" "$T/ref/long" "$T/ref/book" "$T/ref/long-4m"
cp "$ref/long/results.csv" "$T/ref/long/results.csv"
sed -i '$ s/,[^,]*$//' "$T/ref/long-4m/seed_heads.csv"
one_line "ch8_long on a row without its last field" "$T/ref/long-4m/seed_heads.csv, line" "17 fields, not 18" -- \
    "$B/plotdata/ch8_long" "$T/out-dir" "$T/ref/long" "$T/ref/book" "$T/ref/long-4m"
sed -i '2 s/,\([0-9.]*\),/,\1x,/' "$T/ref/roles.csv"
one_line "ch8_roles on a garbled value" "$T/ref/roles.csv, line 2" "not a" -- \
    "$B/plotdata/ch8_roles" "$T/out-dir" "$T/ref"

# 4. the sizes the book prints against the committed run's
sizes=tools/runs/lm/sizes.tsv
chapter=chapters/08-many-heads-on-real-english.md
mkdir "$T/sz"
if "$B/plotdata/ch8_tables" "$T/sz" "$ref/long" "$ref/long/data" "$sizes" >"$T/out" 2>&1; then
    missing=$(grep -o 'key="ch8size\.[a-z0-9_]*"' "$chapter" | sed 's/key="\(.*\)"/\1/' |
        sort -u | while read -r k; do grep -q "^$k=" "$T/sz/ch8size.values" || echo "$k"; done)
    if [ -z "$missing" ]; then
        ok "the sizes chapter 8 prints are $sizes's long row, the committed run's: $(tr '\n' ' ' <"$T/sz/ch8size.values")"
    else
        fail "chapter 8 prints sizes ch8_tables does not write: $missing"
    fi
else
    cat "$T/out"
    fail "the sizes of $sizes are not the ones the committed long run was trained at"
fi
# the model's sizes as the chapter prints them (gpt_default_config())
mkdir "$T/c8"
"$B/plotdata/ch8" "$T/c8" >"$T/out" 2>&1 || { cat "$T/out"; fail "plotdata/ch8 failed"; }
for pair in C:d_model L:layers T:context; do
    model=$(sed -n "s/^ch8\.${pair%%:*}=//p" "$T/c8/ch8.values")
    run=$(sed -n "s/^ch8size\.${pair#*:}=//p" "$T/sz/ch8size.values")
    if [ -n "$model" ] && [ "$model" = "$run" ]; then
        ok "the model's ${pair%%:*} (ch8.${pair%%:*}, gpt_default_config()) is the run's ${pair#*:}, $run"
    else
        fail "chapter 8 prints the model's ${pair%%:*} as '$model' (gpt_default_config()) but its run was trained at ${pair#*:} '$run' ($sizes)"
    fi
done
mismatch="the book would print a size the run was not trained at"
# each column of the long row doubled in turn, then the run's own record
# of its width changed
for plant in "2:d_model" "3:the depth" "4:the context" "5:the batch" "6:the number of steps"; do
    what=${plant#*:}
    awk -F'\t' -v OFS='\t' -v c="${plant%%:*}" '$1 == "long" { $c = 2 * $c } 1' "$sizes" >"$T/sizes.tsv"
    one_line "the long row of the table of sizes with column ${plant%%:*} ($what) doubled" "$T/sizes.tsv, size long: $what" "$mismatch" -- \
        "$B/plotdata/ch8_tables" "$T/sz" "$ref/long" "$ref/long/data" "$T/sizes.tsv"
done
sed -i '1 s/d_model \([0-9]*\),/d_model 1\1,/' "$T/ref/long/table.txt"
one_line "a committed run that records another width" "size long: d_model" "$T/ref/long/table.txt" "$mismatch" -- \
    "$B/plotdata/ch8_tables" "$T/sz" "$T/ref/long" "$T/ref/long/data" "$sizes"

# 6. A comparison the book states is asserted on the data: chapter 8's
#    verdict says one head's test loss is above 16 heads' on every seed
#    (a .holds span on ch8gain.h1_h16_pos). With seed 2017's two test
#    losses swapped in a copy of the committed run, ch8_parsed writes the
#    values again, and the book filter, on the book as built with those
#    values, must stop and name that test.
make --no-print-directory -s B="$B" "$B/plotdata/ch8_parsed" "$B/plots/data/.stamp" >/dev/null
mkdir -p "$T/flip/ref" "$T/flip/b"
cp -r "$ref/long" "$ref/long-4m" "$T/flip/ref/"
awk -F, -v OFS=, 'NR == FNR { if ($3 == $2 && $5 == 2017) t[$2] = $9; next }
    FNR > 1 && $3 == $2 && $5 == 2017 && ($2 == 1 || $2 == 16) { $9 = t[$2 == 1 ? 16 : 1] } 1' \
    "$ref/long/results.csv" "$ref/long/results.csv" >"$T/flip/ref/long/results.csv"
cp -r "$B/plots" "$T/flip/b/"
if ! "$B/plotdata/ch8_parsed" "$T/flip/b/plots/data" "$T/flip/ref/long" >"$T/out" 2>&1; then
    cat "$T/out"
    fail "ch8_parsed failed on the committed run with two test losses swapped"
fi
sources=$( { ls starter/*.c given/*.c include/*.h tests/*.c; find tools/runs -name '*.c'; } | LC_ALL=C sort | tr '\n' ' ')
chapters=$(ls chapters/[0-9][0-9]-*.md | tr '\n' ' ')
if pandoc book.md --from=markdown --lua-filter=tools/book/book.lua \
    --metadata=edition:student --metadata=builddir:"$T/flip/b" \
    --metadata=chapters:"$chapters" --metadata=sources:"$sources" \
    --resource-path=.:"$T/flip/b" --to=html5 --output="$T/flip/out.html" 2>"$T/flip/err"; then
    fail "the book built with one head's test loss below 16 heads' on seed 2017 (ch8gain.h1_h16_pos $(sed -n 's/^ch8gain.h1_h16_pos=//p' "$T/flip/b/plots/data/ch8gain.values")): no claim caught it"
elif grep -q 'ch8gain.h1_h16_pos == 3' "$T/flip/err" && grep -q '08-many-heads-on-real-english.md' "$T/flip/err"; then
    ok "one head's test loss swapped with 16 heads' on seed 2017: the book stops at chapter 8's claim: $(grep -m1 'ch8gain.h1_h16_pos' "$T/flip/err" | cut -c1-160)"
else
    cat "$T/flip/err"
    fail "with one head's test loss swapped with 16 heads', the book stopped, but not at chapter 8's claim on ch8gain.h1_h16_pos"
fi
exit $status
