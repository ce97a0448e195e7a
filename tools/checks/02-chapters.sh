#!/bin/bash
# The table of chapters, chapters/chapters.tsv: the real one passes
# `tools/mk/chapters.sh check`; and on a copy of the kit, a new chapter N
# (the next number after the table's last)
# is its table line plus its own files. While a file its line names is
# missing, make stops before building anything, with one line naming the
# first such file; once they are all there, make test CH=N runs its test
# (and links chapters 1 to 3, which it needs). A malformed line is named too.
set -u
status=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; status=1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The new chapter's number N, its two-digit NN, and the last real one.
last=$(sh tools/mk/chapters.sh nums | tail -n 1)
N=$((last + 1))
NN=$(printf '%02d' "$N")

if msg=$(sh tools/mk/chapters.sh check 2>&1); then
    ok "chapters/chapters.tsv passes check ($(sh tools/mk/chapters.sh nums | wc -l) chapters)"
else fail "the kit's own table: $msg"; fi

# A copy of the kit: the files git tracks, as they are in the working tree.
kit="$work/kit"
mkdir -p "$kit"
git ls-files -z | tar --null -T - -cf - 2>/dev/null | tar -xf - -C "$kit" ||
    { fail "could not copy the kit"; exit 1; }
chk() { (cd "$kit" && sh tools/mk/chapters.sh check 2>&1); }
tsv="$kit/chapters/chapters.tsv"
cp "$tsv" "$work/table"
printf '%s\tnew-chapter\tA new chapter\tch%s_new\t1 2 3\t0\n' "$N" "$N" >>"$tsv"

# Each missing file in turn: make test names it, in one line, and stops.
for f in chapters/${NN}-new-chapter.md tests/test_ch${N}.c tests/hints/ch${N}.txt tests/mutants/ch${N}.tsv \
    starter/ch${N}_new.c solutions/ch${N}_new.c; do
    out=$(make --no-print-directory -s -C "$kit" test 2>&1)
    rc=$?
    want="chapters.tsv: chapter $N needs $f, which does not exist"
    if [ $rc -ne 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s\n' "$out" | grep -qF "$want"; then
        ok "make test without $f: '$out'"
    else fail "make test without $f (exit $rc) said, instead of one line '$want':"; printf '%s\n' "$out" | head -n 5; fi
    [ -e "$kit/build" ] && fail "make test built something although the table is wrong"
    # Now write it: chapter N's smallest real files.
    mkdir -p "$(dirname "$kit/$f")"
    case "$f" in
    *.md) printf '# A new chapter\n\nThe prose.\n' >"$kit/$f" ;;
    tests/test_ch${N}.c)
        cat >"$kit/$f" <<EOF
/* test_ch${N}.c: chapter ${N}'s tests (made by tools/checks/02-chapters.sh). */
#include "attention.h"
#include "kit.h"
#include "kit_test.h"

int new_twice(int x);

KIT_TEST(new_twice_doubles, "new_twice: twice 21 is 42")
{
    KIT_CHECK(new_twice(21) == 42, "new_twice(21) returned %d, not 42",
              new_twice(21));
}

static const struct kit_test *const ch${N}_tests[] = {&new_twice_doubles, NULL};
KIT_CHAPTER(ch${N}_tests)
EOF
        ;;
    *hints*) printf '[new_twice_doubles]\nTwice is x + x.\n\nReturn x * 2.\n' >"$kit/$f" ;;
    *mutants*) printf '# name\tfile\tsed\ttest\twords\n' >"$kit/$f" ;;
    starter/*) printf '#include "kit.h"\nint new_twice(int x);\nint new_twice(int x)\n{\n    (void)x;\n    return KIT_E_TODO;\n}\n' >"$kit/$f" ;;
    solutions/*) printf 'int new_twice(int x);\nint new_twice(int x)\n{\n    return 2 * x;\n}\n' >"$kit/$f" ;;
    esac
done
if msg=$(chk); then ok "with its six files, chapter $N passes check"; else fail "chapter $N with its files: $msg"; fi

# The new chapter runs, with no other edit anywhere.
out=$(nice make --no-print-directory -s -C "$kit" test CH=$N IMPL=solutions 2>&1)
if [ "$(printf '%s\n' "$out" | tail -n 1)" = "1 passed, 0 failed" ] &&
    printf '%s\n' "$out" | grep -q '^  cc  solutions/ch3_mha.c' && ! printf '%s\n' "$out" | grep -q 'ch4_grad' &&
    printf '%s\n' "$out" | grep -qF "Chapter $N  A new chapter"; then
    ok "make test CH=$N IMPL=solutions: its test passes, under its title, linking chapters 1 to 3 and not 4"
else fail "make test CH=$N IMPL=solutions:"; printf '%s\n' "$out" | tail -n 8; fi
out=$(make --no-print-directory -s -C "$kit" test CH=$N 2>&1)
printf '%s\n' "$out" | grep -qF 'new_twice(21) returned' && ok "on the stub, chapter $N's test fails with its message" ||
    { fail "make test CH=$N on the stub:"; printf '%s\n' "$out" | tail -n 4; }

# Malformed lines, each named in one line by check.
bad() { # bad WHAT LINE EXPECTED: the real table plus LINE
    { cat "$work/table"; printf '%b\n' "$2"; } >"$tsv"
    local msg
    msg=$(chk)
    if [ $? -ne 0 ] && [ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] && printf '%s\n' "$msg" | grep -qF "$3"; then
        ok "$1: '$msg'"
    else fail "$1: check said '$msg', expected '$3'"; fi
}
bad "a later chapter needed" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 $((N + 1))\t0" "chapter $N needs chapter $((N + 1)), which has no line"
bad "a need not closed" "$N\tnew-chapter\tA new chapter\tch${N}_new\t3\t0" "chapter $N needs chapter 3, which needs chapter 1"
bad "points not whole" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t2.5" 'the points "2.5" are not a whole number'
bad "points over 100" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t5" "the points sum to 105, not 100"
bad "a number twice" "$last\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t0" "chapter $last has a second line"
bad "five columns" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3" "has 5 columns, not 6"
bad "a file twice" "$N\tnew-chapter\tA new chapter\tch3_mha\t1 2 3\t0" "chapter $N's file ch3_mha is chapter 3's already"
bad "a test file with no line" '' "tests/test_ch${N}.c has no line in the table"
exit $status
