#!/bin/bash
# The table of chapters, chapters/chapters.tsv: the real one passes
# `tools/mk/chapters.sh check`; and on a copy of the kit, a new chapter N
# (the next number after the table's last)
# is its table line plus its own files. While a file its line names is
# missing, make stops before building anything, with one line naming the
# first such file (but its starter/ file, which stops only chapter N,
# with the command that brings it back); once they are all there, make test CH=N runs its test
# (and links chapters 1 to 3, which it needs). A malformed line is named too.
# The lists the build and grading use (the race pass's chapters, the
# judged chapters and their files, the chapters the experiments need,
# the given code chapter 5's programs leave out) follow the table's line,
# and no such list is written by hand in the Makefile, tools/mk,
# tools/loop or tools/grade (a planted one is found).
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
printf '%s\tnew-chapter\tA new chapter\tch%s_new\t1 2 3\t0\tno\tno\t-\n' "$N" "$N" >>"$tsv"

# Each missing file in turn: make test names it, in one line, and stops;
# but a student's file in starter/, the last, stops only its chapter,
# named with the command that brings it back (make reset CH=N).
for f in chapters/${NN}-new-chapter.md tests/test_ch${N}.c tests/hints/ch${N}.txt tests/mutants/ch${N}.tsv \
    solutions/ch${N}_new.c starter/ch${N}_new.c; do
    case "$f" in
    starter/*)
        out=$(make --no-print-directory -s -C "$kit" test CH=$N 2>&1)
        rc=$?
        want="error: $f does not exist, so chapter(s) $N cannot run (their tests count as failed). make reset CH=$N brings back its stubs."
        if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -qxF "$want"; then
            ok "make test CH=$N without $f: '$want'"
        else fail "make test CH=$N without $f (exit $rc) said, instead of '$want':"; printf '%s\n' "$out" | head -n 5; fi ;;
    *)
        out=$(make --no-print-directory -s -C "$kit" test 2>&1)
        rc=$?
        want="chapters.tsv: chapter $N needs $f, which does not exist"
        if [ $rc -ne 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s\n' "$out" | grep -qF "$want"; then
            ok "make test without $f: '$out'"
        else fail "make test without $f (exit $rc) said, instead of one line '$want':"; printf '%s\n' "$out" | head -n 5; fi
        [ -e "$kit/build" ] && fail "make test built something although the table is wrong" ;;
    esac
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
# (t: the judged, race and given columns of a plain new chapter)
t='\tno\tno\t-'
bad "a later chapter needed" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 $((N + 1))\t0$t" "chapter $N needs chapter $((N + 1)), which has no line"
bad "a need not closed" "$N\tnew-chapter\tA new chapter\tch${N}_new\t3\t0$t" "chapter $N needs chapter 3, which needs chapter 1"
bad "points not whole" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t2.5$t" 'the points "2.5" are not a whole number'
bad "points over 100" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t5$t" "the points sum to 105, not 100"
bad "a number twice" "$last\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t0$t" "chapter $last has a second line"
bad "eight columns" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t0\tno\tno" "has 8 columns, not 9"
bad "a file twice" "$N\tnew-chapter\tA new chapter\tch3_mha\t1 2 3\t0$t" "chapter $N's file ch3_mha is chapter 3's already"
bad "judged neither yes nor no" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t0\tmaybe\tno\t-" 'judged is "maybe", not yes or no'
bad "race neither yes nor no" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t0\tno\tY\t-" 'race is "Y", not yes or no'
bad "a given file missing" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t0\tno\tno\tnew_given" "chapter $N needs given/new_given.c, which does not exist"
# a given file the table gives a chapter already (the first one it gives)
for n in $(sh tools/mk/chapters.sh nums); do
    g=$(sh tools/mk/chapters.sh given "$n")
    [ -n "$g" ] && { gn=$n; gf=${g%% *}; break; }
done
if [ -n "${gf:-}" ]; then
    bad "a given file twice" "$N\tnew-chapter\tA new chapter\tch${N}_new\t1 2 3\t0\tno\tno\t$gf" "chapter $N's given file $gf is chapter $gn's already"
else fail "no chapter of the table has given code, so a given file twice cannot be tried"; fi

# The lists the build and grading use are derived from the table: give
# the new chapter the judged, race and given columns, and the make
# variables and grading's lists name it (judged, its files judged, the
# race pass run, its given code left out of chapter 5's programs).
{ cat "$work/table"; printf '%s\tnew-chapter\tA new chapter\tch%s_new\t1 2 3\t0\tyes\tyes\tnew_given\n' "$N" "$N"; } >"$tsv"
printf 'int new_given(void);\nint new_given(void)\n{\n    return 1;\n}\n' >"$kit/given/new_given.c"
lists() { # the derived lists in the copy, one line
    make --no-print-directory -s -C "$kit" --eval 'kit-lists:
	@echo "race [$(RACE_CHAPTERS)] judged [$(JUDGED_CHAPTERS)] experiment links [$(filter given/new_given.c,$(EXP_LIB_SRC))] lm needs [$(LM_NEEDS)]"' kit-lists 2>&1
    (cd "$kit" && echo "grading: judged [$(sh tools/mk/chapters.sh judged | tr '\n' ' ')] files [$(sh tools/mk/chapters.sh judged-files | tr '\n' ' ')] race [$(sh tools/mk/chapters.sh race | tr '\n' ' ')]")
}
out=$(lists)
real_race=$(sh tools/mk/chapters.sh race | tr '\n' ' ')
printf '%s\n' "$out" | grep -qE "^race \[.* $N\] judged \[.* $N\] experiment links \[\] lm needs \[$(sh tools/mk/chapters.sh needs 8) 8\]$" &&
    printf '%s\n' "$out" | grep -qE "^grading: judged \[.*$N \] files \[.*ch${N}_new \] race \[${real_race}$N \]$" &&
    ok "a new chapter judged, with the race pass and given code: the make variables and grading's lists follow the table ($(printf '%s' "$out" | tr '\n' ';'))" ||
    { fail "the lists did not follow the table's new line:"; printf '%s\n' "$out"; }

# No list of chapters is written by hand in the build, the loop or
# grading: in the Makefile, tools/mk/, tools/loop/ and tools/grade/
# (comments aside; tools/mk/chapters.sh reads the table), no line holds
# two or more chapter numbers in a row, sets a variable named *CHAPTERS*
# or *JUDGED* to a number, or names two or more of the table's files
# (its own files, as ch1_attention, and its given files, as corpus.c).
# hand_lists KIT prints each such line (names: the table's files, read
# once from the real kit, whose table the copy shares by then).
names=$({ sh tools/mk/chapters.sh sources | sed 'p; s/$/.c/'; for n in $(sh tools/mk/chapters.sh nums); do sh tools/mk/chapters.sh given "$n" | tr ' ' '\n' | sed 's/$/.c/'; done; } | tr '\n' ' ')
hand_lists() {
    (cd "$1" && grep -nHvE '^[[:space:]]*#' Makefile tools/mk/*.mk tools/mk/*.sh tools/loop/*.sh tools/grade/*.sh tools/grade/*.awk 2>/dev/null) |
        awk -v names="$names" '
        BEGIN { k = split(names, w, " "); for (i = 1; i <= k; i++) file[w[i]] = 1 }
        {
            where = $0; sub(/:[0-9]+:.*/, "", where); line = $0; sub(/^[^:]*:[0-9]+:/, "", line)
            if (where ~ /tools\/mk\/chapters\.sh$/) next
            sub(/[ \t]#.*/, "", line)
            n = 0; rest = line
            while (match(rest, /[A-Za-z_][A-Za-z_0-9]*(\.c)?/)) { if (substr(rest, RSTART, RLENGTH) in file) n++; rest = substr(rest, RSTART + RLENGTH) }
            if (line ~ /(^|[^-.0-9A-Za-z_\/$])[1-9][0-9]?( +[1-9][0-9]?)+($|[^-.0-9A-Za-z_\/%])/ ||
                line ~ /(CHAPTERS|JUDGED)[A-Za-z_]*[ \t]*[:?+]?=[ \t]*"?[0-9]/ || n >= 2) {
                l = $0; sub(/^[^:]*:/, "", l); sub(/:.*/, "", l)
                print where ":" l ": " line
            }
        }'
}
found=$(hand_lists .)
if [ -z "$found" ]; then ok "no list of chapters is written by hand in the Makefile, tools/mk, tools/loop or tools/grade"
else fail "lists of chapters written by hand (derive them from chapters/chapters.tsv through tools/mk/chapters.sh):"; printf '%s\n' "$found"; fi
# and the scan finds each kind of list the kit used to write by hand
cp "$work/table" "$tsv"
rm -f "$kit/given/new_given.c"
for plant in "tools/mk/lm.mk|LM_NEEDS := 1 2 3 4 7 8" "tools/mk/flags.mk|RACE_CHAPTERS := 7" \
    "tools/grade/prepare.sh|printf '%s\\n' 1 2 3 4 5 6 7 8 >\"\$PREP/judged.txt\"" \
    "tools/grade/prepare.sh|printf '%s\\n' $(sh tools/mk/chapters.sh sources | head -n 2 | sed 's/$/.c/' | tr '\n' ' ')>\"\$PREP/judged-files.txt\"" \
    "Makefile|GIVEN := $(for n in $(sh tools/mk/chapters.sh nums); do sh tools/mk/chapters.sh given "$n"; done | tr ' ' '\n' | awk 'NF' | head -n 2 | sed 's|^|given/|; s|$|.c|' | tr '\n' ' ')"; do
    f=${plant%%|*} text=${plant#*|}
    cp "$kit/$f" "$work/saved"
    printf '%s\n' "$text" >>"$kit/$f"
    if hand_lists "$kit" | grep -qF "$text"; then ok "a list written by hand is found: $f: $text"
    else fail "the scan missed a list written by hand: $f: $text"; fi
    cp "$work/saved" "$kit/$f"
done

# The time budgets: the kit's own hold, and each fault planted in the
# copy is named (run.sh, which runs the same check first, refuses to start).
if msg=$(sh tools/checks/budgets.sh check); then
    ok "tools/checks/budgets.tsv: a row for each of $(ls tools/checks/[0-9]*.sh | wc -l) steps and the two install phases, $(awk -F'\t' '!/^#/ && NF { s += $3 } END { print s }' tools/checks/budgets.tsv) s in all (at most 2700)"
else fail "tools/checks/budgets.tsv:"; printf '%s\n' "$msg"; fi
if msg=$(sh tools/checks/budgets.sh readme-check); then ok "README.md quotes only the budgets' times, and its table of budgets is the table's"
else fail "README.md and tools/checks/budgets.tsv:"; printf '%s\n' "$msg"; fi
budget_plant() { # budget_plant WHAT EXPECTED CMD: the copy, after the plant, refuses with EXPECTED
    local msg rc
    msg=$(cd "$kit" && sh tools/checks/budgets.sh "$3" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && printf '%s\n' "$msg" | grep -qF "$2"; then ok "$1: '$(printf '%s' "$msg" | head -n 1)'"
    else fail "$1: budgets.sh $3 said '$msg' (exit $rc), expected '$2'"; fi
}
cp "$kit/tools/checks/budgets.tsv" "$work/budgets"
cp "$kit/README.md" "$work/readme"
printf '#!/bin/sh\nexit 0\n' >"$kit/tools/checks/99-new.sh"
budget_plant "a step without a row" "the step 99-new has no row in tools/checks/budgets.tsv" check
out=$(cd "$kit" && sh tools/checks/run.sh 99-new 2>&1)
[ $? -eq 2 ] && printf '%s\n' "$out" | grep -q "^run.sh: tools/checks/budgets.tsv and the steps disagree" &&
    ! printf '%s\n' "$out" | grep -q '^== check' && ok "run.sh refuses to start then: '$(printf '%s' "$out" | tail -n 1)'" ||
    { fail "run.sh with a step without a budget:"; printf '%s\n' "$out" | tail -n 3; }
rm "$kit/tools/checks/99-new.sh"
printf '99-gone\tcheck\t1\tmet\n' >>"$kit/tools/checks/budgets.tsv"
budget_plant "a row that names no step" "the row 99-gone names no step" check
cp "$work/budgets" "$kit/tools/checks/budgets.tsv"
sum=$(awk -F'\t' '!/^#/ && NF { s += $3 } END { print s }' "$work/budgets")
awk -F'\t' -v OFS='\t' -v more=$((2701 - sum)) '$1 == "75-grade" { $3 += more } 1' "$work/budgets" >"$kit/tools/checks/budgets.tsv"
budget_plant "the budgets 1 s past 45 minutes (75-grade's $((2701 - sum)) s more)" "add up to 2701 s, past CI's 2700 s (45 minutes)" check
cp "$work/budgets" "$kit/tools/checks/budgets.tsv"
awk -F'\t' -v OFS='\t' '$1 == "67-lm" { $3 += 1 } 1' "$work/budgets" >"$kit/tools/checks/budgets.tsv"
budget_plant "a budget changed, the README's table not written again" "README.md's table of budgets differs" readme-check
cp "$work/budgets" "$kit/tools/checks/budgets.tsv"
printf '\n`67-lm` takes about 2 minutes.\n' >>"$kit/README.md"
budget_plant "a step's time quoted outside the table" "a line that names a step quotes a time" readme-check
cp "$work/readme" "$kit/README.md"
printf '\nmake check-deep takes about 3 minutes.\n' >>"$kit/README.md"
budget_plant "a tier's time that is not the table's" "\"about 3 minutes\", but the table's budget is" readme-check
cp "$work/readme" "$kit/README.md"
exit $status
