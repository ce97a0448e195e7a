#!/bin/bash
# Every test of every chapter has 2 or 3 hints in tests/hints/chN.txt
# (the format: a line [test_name], then the hints as paragraphs separated
# by blank lines, from a general nudge to the near-answer); every entry
# names a test of its chapter; no hint contains a line of the solutions'
# code; and make hint shows them in order, remembers how many were seen,
# and names the nearest tests for one that does not exist.
set -u
. tools/loop/lib.sh
. tools/checks/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The solutions' code: every line of a listing region, normalised.
for f in solutions/*.c; do
    awk '/@listing/ { d++; next } /@end/ { if (d) d--; next } d' "$f"
done | sed -e 's/^[ \t]*//' -e 's/[ \t]*$//' | awk 'length($0) >= 16 && $0 !~ /^(\/\*|\*|\/\/|[{}])/' |
    sort -u >"$work/solution-lines"

total=0
for n in $CHAPTER_NUMS; do
    file="tests/hints/ch$n.txt"
    if [ ! -e "$file" ]; then
        fail "chapter $n has no hints file $file"; continue
    fi
    # name <tab> number of hint paragraphs, for each entry
    awk '
        /^\[[A-Za-z_0-9]+\][ \t]*$/ { if (name != "") print name "\t" n; name = substr($1, 2, length($1) - 2); n = 0; blank = 1; next }
        name == "" { if (NF) { print "!text before the first [test_name]: " $0; exit } next }
        NF == 0 { blank = 1; next }
        blank { n++; blank = 0 }
        END { if (name != "") print name "\t" n }' "$file" >"$work/entries"
    if grep -q '^!' "$work/entries"; then fail "$file: $(grep '^!' "$work/entries" | cut -c2-)"; fi
    dup=$(cut -f1 "$work/entries" | sort | uniq -d)
    [ -z "$dup" ] || fail "$file: more than one entry for: $dup"
    tests_of "$n" >"$work/tests"
    while read -r t; do
        total=$((total + 1))
        k=$(awk -F'\t' -v t="$t" '$1 == t { print $2 }' "$work/entries")
        if [ -z "$k" ]; then fail "$file: test $t (chapter $n) has no hints"
        elif [ "$k" -lt 2 ] || [ "$k" -gt 3 ]; then fail "$file: test $t has $k hint(s); every test has 2 or 3"; fi
    done <"$work/tests"
    cut -f1 "$work/entries" | grep -v '^!' | while read -r e; do
        grep -qx "$e" "$work/tests" || echo "FAIL $file: the entry [$e] names no test of chapter $n"
    done | tee "$work/orphans"
    [ -s "$work/orphans" ] && status=1
    if grep -q '^```' "$file"; then fail "$file: a hint holds a code block; hints are words, never solution code"; fi
    sed -e 's/^[ \t]*//' -e 's/[ \t]*$//' "$file" | grep -Fxf "$work/solution-lines" | head -n 3 >"$work/leak"
    [ -s "$work/leak" ] && fail "$file holds solution code: $(head -n 1 "$work/leak")"
done
echo "$total tests, each with 2-3 hints checked"

# make hint: in order, remembered under B, unknown names get a did-you-mean.
b="$work/build"
first=$(make --no-print-directory -s hint TEST=matmul_golden B="$b" 2>&1)
second=$(make --no-print-directory -s hint TEST=matmul_golden B="$b" 2>&1)
if printf '%s\n' "$first" | grep -q '^Hint 1 of [23] for matmul_golden' &&
   printf '%s\n' "$second" | grep -q '^Hint 2 of [23] for matmul_golden'; then
    echo "ok   make hint shows hint 1, then hint 2 (remembered in $b/hints/)"
else
    fail "make hint TEST=matmul_golden twice did not show hints 1 then 2:"; printf '%s\n' "$first" "$second" | head -n 8
fi
out=$(make --no-print-directory -s hint TEST=matmul_goldne B="$b" 2>&1)
if printf '%s\n' "$out" | grep -q "There is no test named 'matmul_goldne'" &&
   printf '%s\n' "$out" | grep -q 'Did you mean: matmul_golden (ch1)'; then
    echo "ok   make hint TEST=matmul_goldne names the nearest test"
else fail "make hint for a misspelt test: $out"; fi
exit $status
