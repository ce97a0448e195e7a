#!/bin/bash
# Grading: the runner's results table; the points table's errors; the
# Gradescope autograder, run whole in a temporary folder that stands in
# for /autograder (full marks for the solutions, 0 for the stubs, a crash
# and a hang named, a compile error and a missing file explained, and
# every hostile trick gaining nothing); the sandbox really isolating; and
# make grade-all on a generated class of 7. Before these, issue 53's
# cases (the committed stubs, a half-finished tree, every entry of a
# class's folder): ONLY=issue53 runs them alone, with section 1.
# B=build/<dir> builds elsewhere (default build).
set -u
B=${B:-build}
KIT=$(pwd)
. tools/checks/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TEST_TIMEOUT=5 # seconds per test (the kit's default; a machine under load needs it)
# The whole run's wall clock (build.sh's RUN_TIMEOUT, 300 s by default):
# no check here is about it, and a loaded machine (two grades at a time,
# or other work) may take longer than 300 s over a grade whose tests all
# finish within their CPU time; then every score would be 0. 900 s is
# the most build.sh allows (its hard limit on CPU time, ulimit -t 900).
export RUN_TIMEOUT=${RUN_TIMEOUT:-900}
# lap NAME: the seconds since the last lap, for the section just done
lap_t=$(date +%s)
lap() { echo "     (section $1: $(($(date +%s) - lap_t)) s)"; lap_t=$(date +%s); }

# A copy of the solutions with one planted mistake from tests/mutants.
mutate() { # mutate NAME DIR
    local line
    line=$(awk -F'\t' -v n="$1" '$1 == n' tests/mutants/*.tsv)
    [ -n "$line" ] || { echo "no mutant named $1" >&2; return 1; }
    local file expr
    file=$(printf '%s\n' "$line" | cut -f2)
    expr=$(printf '%s\n' "$line" | cut -f3)
    sed -i -e "$expr" "$2/$file"
}
# Plant a crash (a store through a null pointer) or an endless loop at
# the start of one function.
plant() { # plant crash|hang FUNCTION FILE
    local body
    case "$1" in
    crash) body='    float *volatile crash = NULL;\n    crash[0] = 1.0f;' ;;
    hang) body='    for (;;) {\n    }' ;;
    esac
    sed -i "/^int $2(/,/^{\$/ s|^{\$|{\n$body|" "$3"
    grep -q "crash\[0\]\|for (;;)" "$3" || { echo "plant $1 $2 changed nothing" >&2; return 1; }
}

# ---------------------------------------------------------------------
# 1. The runner's results table, written by the parent.
# ---------------------------------------------------------------------
make --no-print-directory -s "$B/selftest/kit_selftest" || exit 1
"$B/selftest/kit_selftest" --timeout 1 --quiet --results "$work/sel.tsv" >/dev/null 2>&1
if [ "$(head -n 1 "$work/sel.tsv")" = "$(printf 'chapter\tfile\ttest\tstatus\tseconds\tmessage')" ] &&
    [ "$(awk -F'\t' 'NR > 1 && NF == 6' "$work/sel.tsv" | wc -l)" -eq 81 ] &&
    [ "$(awk -F'\t' '$4 == "failed"' "$work/sel.tsv" | wc -l)" -eq 7 ] &&
    grep -q 'crashed with SIGSEGV' "$work/sel.tsv" && grep -q 'timed out after' "$work/sel.tsv"; then
    ok "--results writes 81 rows of 6 columns, 7 failed (as 05-harness counts), the crash and the hang with their reasons"
else
    fail "--results table is wrong:"; head -n 5 "$work/sel.tsv"
fi

lap 1
# ---------------------------------------------------------------------
# 1b. Issue 53: grading from the committed stubs, a half-finished tree
#     still graded, every entry of a class's folder accounted for. In a
#     throwaway copy of the kit (its commit, and the working changes to
#     its tracked files) whose working starter/ holds the solutions, as
#     an instructor's who worked the exercises there.
#     ONLY=issue53 runs this part alone.
# ---------------------------------------------------------------------
k53="$work/kit53"
git clone -q "$KIT" "$k53" && git -C "$k53" config user.email k@k && git -C "$k53" config user.name k ||
    { fail "issue 53: could not clone the kit"; exit 1; }
if [ -n "$(git diff HEAD --stat)" ]; then git diff HEAD --binary | git -C "$k53" apply || fail "issue 53: could not copy the working changes"; fi
cp solutions/*.c "$k53/starter/"
# (a) make autograder packages the committed stubs, and says so.
ag53=$(cd "$k53" && make --no-print-directory -s B=build autograder 2>&1) || fail "issue 53: make autograder: $ag53"
bad=""
for f in $(sh tools/mk/chapters.sh sources); do
    unzip -p "$k53/build/autograder.zip" "starter/$f.c" | cmp -s - <(git -C "$k53" show "HEAD:starter/$f.c") || bad="$bad $f.c"
done
todo=$(unzip -p "$k53/build/autograder.zip" starter/ch1_attention.c | grep -c KIT_E_TODO)
if [ -z "$bad" ] && [ "$todo" -gt 0 ] && printf '%s\n' "$ag53" | grep -q 'committed stubs'; then
    ok "issue 53: with the solutions in the working starter/, make autograder packages the committed stubs ($todo KIT_E_TODO in ch1_attention.c) and says so"
else fail "issue 53: the autograder zip's starter/ differs from the committed stubs in:${bad:- (none)}; KIT_E_TODO in ch1_attention.c: $todo; make autograder said: $(printf '%s' "$ag53" | head -c 300)"; fi
# (b) make grade on a half-finished tree: one file that does not compile
#     (the issue's line 57 of ch3_mha.c), a binary file and a symbolic
#     link to a file of secrets. The other chapters are graded, the
#     feedback names the file and the line, and nothing of the binary or
#     the linked file is printed.
printf 'TRICK53-SECRET\n' >"$work/secret53"
sed -i '57s/$/ oops/' "$k53/starter/ch3_mha.c"
{ head -c 20000 "$(command -v cc)"; printf '\nTRICK53-BINARY\n'; } >"$k53/starter/ch6_decode.c"
ln -sf "$work/secret53" "$k53/starter/ch8_lm.c"
out53=$(cd "$k53" && make --no-print-directory -s B=build grade 2>&1)
rc53=$?
json53="$k53/build/grade/results.json"
sum53="$k53/build/grade/summary.tsv"
full() { awk -F'\t' -v k="ch$1" '$1 == k { exit !($2 == $3 && $3 > 0) } END { if (!NR) exit 1 }' "$sum53" 2>/dev/null; }
leak=$({ printf '%s\n' "$out53"; cat "$json53" 2>/dev/null; } | grep -a -c -e TRICK53-SECRET -e TRICK53-BINARY)
if [ $rc53 -eq 0 ] && ! printf '%s' "$out53" | grep -q 'kit itself' && full 1 && full 2 &&
    awk -F'\t' '$1 == "ch3" { exit !($2 == 0) }' "$sum53" &&
    jq -e '.output | test("ch3_mha.c does not compile.*first error: ch3_mha.c:5[78]:[0-9]+: error")' "$json53" >/dev/null &&
    jq -e '.output | test("ch8_lm.c was not in the submission as a plain file \\(.*ch8_lm.c is a symbolic link")' "$json53" >/dev/null &&
    [ "$leak" -eq 0 ] && [ "$(printf '%s\n' "$out53" | wc -l)" -le 20 ] && [ "$(jq -r .output "$json53" | wc -c)" -le 3000 ]; then
    ok "issue 53: make grade with ch3_mha.c not compiling, ch6_decode.c binary and ch8_lm.c a link to a file of secrets: rc 0, chapters 1 and 2 full, the feedback '$(jq -r .output "$json53" | grep -o 'first error: ch3_mha.c.*' | cut -c1-90)'; the link refused, nothing of either file printed ($(printf '%s\n' "$out53" | wc -l) lines)"
else fail "issue 53: make grade on a half-finished tree: rc $rc53; $(printf '%s\n' "$out53" | wc -l) lines of output (secrets or binary shown: $leak): $(printf '%s' "$out53" | head -c 300 | LC_ALL=C tr -c '\n[:print:]' '?'); summary: $(tr '\t\n' ' ;' <"$sum53" 2>/dev/null | head -c 200)"; fi
# (c) make grade-all over a folder of four entries (the working
#     starter/ the solutions again): an empty submission
#     (graded, 0: its files are the committed stubs, not the working
#     starter/'s solutions), a zip, a hidden folder and a symbolic link to
#     a folder, each accounted for.
rm -f "$k53/starter/ch8_lm.c" && cp solutions/*.c "$k53/starter/"
s53="$work/subs53"
mkdir -p "$s53/empty" "$s53/.carol" "$work/elsewhere53"
cp solutions/*.c "$s53/.carol/" && cp solutions/*.c "$work/elsewhere53/"
(cd "$work/elsewhere53" && zip -q "$s53/bob.zip" ./*.c)
ln -s "$work/elsewhere53" "$s53/linked"
ga53=$(cd "$k53" && make --no-print-directory -s B=build grade-all SUBMISSIONS="$s53" 2>&1)
rc53=$?
gb53="$k53/build/grade-all/gradebook.csv"
empty53=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "total") t = i } $1 == "empty" { print $t }' "$gb53" 2>/dev/null)
said=0
for e in empty bob.zip .carol linked; do printf '%s\n' "$ga53" | grep -q "^  $e " && said=$((said + 1)); done
if [ $rc53 -eq 0 ] && [ "$empty53" = 0.00 ] && [ "$said" -eq 4 ] &&
    grep -q '^4 entries in the submissions folder: 1 graded, 3 skipped' "$k53/build/grade-all/report.md" &&
    printf '%s\n' "$ga53" | grep -q "bob.zip *skipped: a zip file" && printf '%s\n' "$ga53" | grep -q "linked *skipped: a symbolic link" &&
    printf '%s\n' "$ga53" | grep -q "\.carol *skipped: a hidden"; then
    ok "issue 53: grade-all over an empty folder, bob.zip, .carol and a linked folder: 4 of 4 entries accounted for, the empty one 0.00 with the solutions in the working starter/"
else fail "issue 53: grade-all: rc $rc53, the empty submission '${empty53}' (not 0.00?), $said of 4 entries named; it said: $(printf '%s' "$ga53" | head -c 600)"; fi
rm -rf "$k53" "$s53" "$work/elsewhere53"
lap 1b
[ "${ONLY:-}" != issue53 ] || exit $status

# ---------------------------------------------------------------------
# 2. The autograder: built, unpacked and run as Gradescope would.
# ---------------------------------------------------------------------
make --no-print-directory -s B="$B" autograder >/dev/null || { fail "make autograder"; exit 1; }
zip="$B/autograder.zip"
listing=$(unzip -Z1 "$zip")
for f in setup.sh run_autograder starter/ch1_attention.c tests/test_ch1.c include/kit.h given/rng.c tools/mk/deps.sh chapters/chapters.tsv tools/mk/chapters.sh tools/grade/compose.sh tools/grade/results.jq; do
    printf '%s\n' "$listing" | grep -qx "$f" || fail "$zip has no $f"
done
if printf '%s\n' "$listing" | grep -q '^solutions/'; then fail "$zip contains solutions/"; else ok "$zip: setup.sh, run_autograder, the kit, no solutions/"; fi
pk=$(make --no-print-directory -s -p -n deps 2>/dev/null | sed -n 's/^DEB_PACKAGES := //p' | head -n 1)
unzip -p "$zip" setup.sh | grep -qF "deps.sh $pk" && ok "setup.sh installs make deps' packages" || fail "setup.sh does not install DEB_PACKAGES ($pk)"
unzip -p "$zip" setup.sh | grep -qE "deps.sh .* jq( |$)" && ok "setup.sh installs jq, which writes results.json" || fail "setup.sh does not install jq"

AG="$work/autograder"
mkdir -p "$AG/source"
unzip -q "$zip" -d "$AG/source"
# grade DIR: run the autograder on a copy of DIR as the submission; sets
# score and json. results.json is read with jq, never as text: score is
# -1 when it is missing or not JSON.
grade() {
    rm -rf "$AG/submission" "$AG/results"
    cp -r "$1" "$AG/submission"
    AUTOGRADER_ROOT="$AG" bash "$AG/source/run_autograder" >"$work/ag.log" 2>&1 ||
        { echo "run_autograder failed:"; cat "$work/ag.log"; }
    json="$AG/results/results.json"
    score=$(jq -e '.score | numbers' "$json" 2>/dev/null)
    score=${score:--1}
}
# has TEXT: some string of results.json (its output or a test's) holds TEXT.
has() { jq -e --arg t "$1" 'any(.. | strings; contains($t))' "$json" >/dev/null 2>&1; }
# per_test FIELD: each test's chapter and FIELD, one test a line.
per_test() { jq -r --arg f "$1" '.tests[] | "\(.name | split(" ")[0] | ltrimstr("ch")) \(.[$f])"' "$json"; }
s="$work/subs"
mkdir -p "$s/full" "$s/stubs/starter" "$s/base"
cp solutions/*.c "$s/full/"
cp starter/*.c "$s/stubs/starter/"
# Alone: this first grade prepares the kit ($AG/prep), which every later
# grade reuses.
grade "$s/full"
# Grades that do not depend on one another run two at a time: slot 0 is
# $AG, slot 1 a second unpacked autograder, $AG1, whose prep is $AG's
# (as make grade-all's students share one). A test's limit counts its
# own CPU time (--cpu-time, ulimit -t), so a neighbour cannot change a
# verdict. pregrade KEY... grades $s/KEY (or ${gdir[KEY]}, with GATE
# ${ggate[KEY]} when set), the Nth in slot N mod 2, and keeps its
# results; take KEY puts them back where grade would have left them and
# sets score and json, so that every check reads what it read before.
AG1="$work/autograder1"
mkdir -p "$AG1/source"
unzip -q "$zip" -d "$AG1/source"
ln -s "$AG/prep" "$AG1/prep"
graded="$work/graded"
mkdir -p "$graded"
declare -A gdir=() ggate=()
grade_in() { # grade_in ROOT KEY
    local r=$1 k=$2 d=${gdir[$2]:-$s/$2} g=${ggate[$2]:-} rc=0
    rm -rf "$r/submission" "$r/results" "$r/grading"
    cp -r "$d" "$r/submission"
    if [ -n "$g" ]; then
        GATE=$g AUTOGRADER_ROOT="$r" bash "$r/source/run_autograder" >"$graded/$k.log" 2>&1 || rc=1
    else
        AUTOGRADER_ROOT="$r" bash "$r/source/run_autograder" >"$graded/$k.log" 2>&1 || rc=1
    fi
    mkdir -p "$graded/$k"
    echo "$rc" >"$graded/$k/rc"
    mv "$r/results" "$r/grading" "$graded/$k/" 2>/dev/null
}
pregrade() { # pregrade KEY...
    local i=0 k p0 p1 slot0=() slot1=()
    for k in "$@"; do
        if [ $((i % 2)) -eq 0 ]; then slot0+=("$k"); else slot1+=("$k"); fi
        i=$((i + 1))
    done
    (for k in "${slot0[@]}"; do grade_in "$AG" "$k"; done) </dev/null &
    p0=$!
    (for k in "${slot1[@]}"; do grade_in "$AG1" "$k"; done) </dev/null &
    p1=$!
    wait "$p0" "$p1"
}
take() { # take KEY
    [ -e "$graded/$1/rc" ] || { fail "the grade of $1 was not kept"; score=-1 json=/dev/null; return; }
    rm -rf "$AG/results" "$AG/grading"
    mv "$graded/$1/results" "$AG/results" 2>/dev/null
    mv "$graded/$1/grading" "$AG/grading" 2>/dev/null
    cp "$graded/$1.log" "$work/ag.log"
    [ "$(cat "$graded/$1/rc")" = 0 ] || { echo "run_autograder failed:"; cat "$work/ag.log"; }
    json="$AG/results/results.json"
    score=$(jq -e '.score | numbers' "$json" 2>/dev/null)
    score=${score:--1}
}
[ "$score" = 100 ] && ok "the solutions, uploaded flat: 100" || fail "the solutions score $score, not 100"
# Each test's max_score, to 2 places as Gradescope shows it: they add
# up to each chapter's points exactly.
sums=$(per_test max_score | awk '{ m[$1] += sprintf("%.0f", $2 * 100) }
    END { for (k in m) printf "%s %d\n", k, m[k] }' | sort -n | tr '\n' ' ')
want=$(sh tools/mk/chapters.sh points-table | awk '!/^#/ && NF == 2 { printf "%s %d ", $1, $2 * 100 }')
[ "$sums" = "$want" ] && ok "the tests' max_scores add up to each chapter's points exactly (in hundredths: $sums)" ||
    fail "the tests' max_scores add up to (in hundredths) $sums, not $want"
# One crash and one hang: partial marks, both named.
mkdir -p "$s/crashhang/starter" && cp solutions/*.c "$s/crashhang/starter/"
plant crash mha_forward_fused "$s/crashhang/starter/ch3_mha.c"
plant hang causal_mask_backward "$s/crashhang/starter/ch4_grad.c"
# Not compiling: 0 for its chapter, the compiler's first error shown.
mkdir -p "$s/nocompile" && cp starter/*.c "$s/nocompile/"
printf 'int broken(void) { return 1 }\n' >>"$s/nocompile/ch1_attention.c"
# A missing file: a clear message; the other chapters are still graded.
mkdir -p "$s/missing" && cp solutions/*.c "$s/missing/" && rm "$s/missing/ch3_mha.c"
pregrade stubs crashhang nocompile missing

take stubs
[ "$score" = 0 ] && ok "the stubs, in starter/: 0" || fail "the stubs score $score, not 0"
take crashhang
if awk "BEGIN { exit !($score > 0 && $score < 100) }" && has 'crashed with SIGSEGV' && has 'timed out after' &&
    has 'It happened inside mha_forward_fused'; then
    ok "a crash and a hang: $score, the crash and the hang named in the output"
else fail "crash and hang: score $score; crash named: $(has 'crashed with SIGSEGV' && echo yes || echo no); hang named: $(has 'timed out after' && echo yes || echo no)"; fi

take nocompile
if [ "$score" = 0 ] && has 'ch1_attention.c does not compile' && has "expected ';' before '}' token"; then
    ok "a file that does not compile: 0, and the compiler's first error in the output"
else fail "not compiling: score $score; output: $(head -c 400 "$json")"; fi

take missing
if has 'ch3_mha.c was not in the submission' && awk "BEGIN { exit !($score > 0 && $score < 100) }"; then
    ok "a missing file: '$(jq -r '.. | strings' "$json" | grep -o 'ch3_mha.c was not in the submission[^.]*' | head -n 1)', score $score"
else fail "missing file: score $score, message missing"; fi

lap 2
# ---------------------------------------------------------------------
# 3. Hostile submissions. The baseline is an honest submission with one
#    planted mistake; each trick is added to it and must gain nothing.
# ---------------------------------------------------------------------
cp solutions/*.c "$s/base/"
mutate ch1-no-scale "$s/base"
# Every submission of this section is planted first, each check deferred
# (later CHECK ARGS...: run in order once all are graded); pg lists what
# pregrade grades, two at a time. The checks and their lines are the
# same, in the same order.
checks=() pg=(base)
later() { checks+=("$(printf '%q ' "$@")"); }
# The points of the judged chapters (PREP/judged.txt: no student code in the
# process that judges them), from the last results.json.
judged_score() {
    per_test score | awk -v list=" $(tr '\n' ' ' <"$AG/prep/judged.txt")" '
        index(list, " " $1 " ") { t += $2 } END { printf "%.2f\n", t }'
}
take_base() {
    take base
    base=$score
    jbase=$(judged_score)
    cp "$AG/grading/work/results.tsv" "$work/base.tsv"
    echo "     baseline (one planted mistake, ch1-no-scale): $base; its slowest tests (seconds, of a $TEST_TIMEOUT s limit):"
    sort -t$'\t' -k5,5gr "$work/base.tsv" | head -n 3 | awk -F'\t' '{ printf "       ch%s %s %s s\n", $1, $3, $5 }'
}
# A score that differs from the baseline's is shown test by test: what
# changed, and how long each side took, so that a verdict that changes
# from run to run is found, not guessed at.
differs() { # differs NAME [BASE-SCORE BASE-TSV]: after a grade with a trick
    local b=${2:-$base} bt=${3:-$work/base.tsv}
    awk "BEGIN { exit !($score > $b) }" || return
    echo "     $1: $score against the baseline's $b; the tests whose status differs (chapter, test, baseline, now):"
    join -t$'\t' -j1 <(awk -F'\t' 'NR > 1 { print $1 ":" $3 "\t" $4 " " $5 "s" }' "$bt" | sort) \
        <(awk -F'\t' 'NR > 1 { print $1 ":" $3 "\t" $4 " " $5 "s " substr($6, 1, 90) }' "$AG/grading/work/results.tsv" | sort) |
        awk -F'\t' '{ split($2, a, " "); split($3, b, " "); if (a[1] != b[1]) print "       " $0 }' | head -n 8
}
hostile() { pg+=("$1") && later hostile_now "$@"; }
hostile_now() { # hostile NAME WHAT-MUST-BE-SAID: grade $s/NAME against the baseline
    take "$1"
    differs "$1"
    if awk "BEGIN { exit !($score <= $base) }" && [ "$score" != 100 ] && has "$2"; then
        ok "hostile '$1': $score (baseline $base), says '$2'"
    else fail "hostile '$1' scores $score against the baseline $base, or does not say '$2'"; fi
}
h() { rm -rf "$s/$1" && cp -r "$s/base" "$s/$1"; }
# Each trick: a prelude at the top of ch1_attention.c (headers, helpers)
# and a line at the start of attention()'s body.
trick() { # trick NAME PRELUDE-FILE LINE
    h "$1"
    local f="$s/$1/ch1_attention.c"
    cat "$2" "$f" >"$f.new" && mv "$f.new" "$f"
    [ -z "$3" ] || sed -i "/^int attention(/,/^{\$/ s|^{\$|{\n    $3|" "$f"
    [ -z "$3" ] || grep -qF "$3" "$f" || fail "the trick $1 was not planted"
}
# (a) printing fake "passed" lines and a fake score
cat >"$work/p.c" <<'EOF'
#include <stdio.h>
static void fake_lines(void)
{
    printf("  ok    ch1 attention_golden\n66 passed, 0 failed\n{\"score\": 100}\n");
}
EOF
trick fakeprint "$work/p.c" 'fake_lines();'
hostile fakeprint 'Likely mistake: a missing 1/sqrt(d_k) scale'
# (b) writing a results file itself, from inside a test
cat >"$work/p.c" <<EOF
#include <stdio.h>
static void write_fake_results(void)
{
    const char *paths[] = {"$AG/results/results.json", "$AG1/results/results.json", "results.tsv", "../results.tsv"};
    for (int i = 0; i < 4; i++) {
        FILE *f = fopen(paths[i], "w");
        if (f) {
            fputs("{\"score\": 100, \"tests\": []}\n", f);
            fclose(f);
        }
    }
}
EOF
trick writefile "$work/p.c" 'write_fake_results();'
hostile writefile 'which a submission may not use'
# (c) the same from a constructor, which would run in the runner's parent
cat >"$work/p.c" <<'EOF'
#include <stdio.h>
__attribute__((constructor)) static void before_main(void)
{
    printf("66 passed, 0 failed\n");
}
EOF
trick constructor "$work/p.c" ''
hostile constructor 'a constructor or destructor'
# (c') the same from an ifunc resolver, which runs while the program loads
cat >"$work/p.c" <<'EOF'
#include <stdio.h>
int attention_fast(void);
static int real_fast(void)
{
    return 1;
}
static int (*resolve_fast(void))(void)
{
    printf("66 passed, 0 failed\n");
    return real_fast;
}
int attention_fast(void) __attribute__((ifunc("resolve_fast")));
EOF
trick ifunc "$work/p.c" ''
hostile ifunc 'indirect function (ifunc)'
# (c'') a pragma other than OpenMP's (the solutions' #pragma omp is allowed:
#       they score 100 above)
printf '#pragma GCC optimize("O0")\n' >"$work/p.c"
trick pragma "$work/p.c" ''
hostile pragma "a #pragma other than OpenMP's"
# (d) exit(0) inside a test, before any check can fail
printf '#include <stdlib.h>\n' >"$work/p.c"
trick exit0 "$work/p.c" 'exit(0);'
hostile exit0 'does the code call exit()?'
# (e) reading the golden values from the kit on disk
h golden
sed -i "1i #include \"$AG/source/tests/golden/ch1_golden.h\"" "$s/golden/ch1_attention.c"
hostile golden "may include only the kit's headers"
# ... and through the kit's own include folder, or the system's
h golden-rel
sed -i '1i #include "../tests/golden/ch1_golden.h"' "$s/golden-rel/ch1_attention.c"
hostile golden-rel "may include only the kit's headers"
h golden-sys
sed -i "1i #include <../..$AG/source/tests/golden/ch1_golden.h>" "$s/golden-sys/ch1_attention.c"
hostile golden-sys "may include only the kit's headers"
# (f) replacing a kit header by one of the same name in the submission
#     (if it were used, the #error would stop the build)
h shadow
mkdir -p "$s/shadow/include"
printf '#error the shadow header was used\n' | tee "$s/shadow/attention.h" >"$s/shadow/include/attention.h"
shadow_check() {
    take shadow
    if [ "$score" = "$base" ] && has 'Ignored, not graded' && has 'include/attention.h'; then
        ok "hostile 'shadow': $score (baseline $base), the headers ignored and the feedback says so"
    else fail "hostile 'shadow' scores $score against $base, or the feedback does not list the ignored header"; fi
}
pg+=(shadow) && later shadow_check
# (g) replacing a CUnit or C library function the runner uses
h interpose
cat >>"$s/interpose/ch1_attention.c" <<'EOF'
unsigned int CU_get_number_of_tests_failed(void);
unsigned int CU_get_number_of_tests_failed(void)
{
    return 0;
}
EOF
hostile interpose 'a name the kit or the C library already uses'
# (g') a name the start-up code calls before main(), and one of OpenMP's
h gmon-name
cat >>"$s/gmon-name/ch1_attention.c" <<'EOF'
void __gmon_start__(void);
void __gmon_start__(void)
{
}
EOF
hostile gmon-name 'a name reserved for the C library and the start-up code'
h gomp-name
cat >>"$s/gomp-name/ch1_attention.c" <<'EOF'
int omp_get_num_procs(void);
int omp_get_num_procs(void)
{
    return 1;
}
EOF
hostile gomp-name 'a name the kit or the C library already uses'

# (h) Issue 20's holes, each of which got past the gate while the
#     student's code ran in the runner's process: forged records through
#     the C library's symbol table, reached from printf's address (got);
#     a function named __gmon_start__, run before main (gmon); system
#     calls in assembly hidden from the gate by #line, which read files
#     outside the submission, fork a hog and forge records (asm). The
#     preludes are tools/grade/tricks/*.c. Each goes on the baseline (at
#     most its score) and on the stubs (0), through the gate and without
#     it (GATE=off, build.sh's option for this proof): the judged chapters run in
#     the sandboxed worker, so the sandbox must hold on its own.
tricks=tools/grade/tricks
plant_trick() { # plant_trick NAME FROM TRICK GATE: $s/NAME from $s/FROM with TRICK
    rm -rf "$s/$1" && cp -r "$s/$2" "$s/$1"
    local f
    f=$(find "$s/$1" -name ch1_attention.c)
    case "$3" in
    got) cat "$tricks/got.c" "$f" >"$f.new" ;;
    gmon) cat "$tricks/asm.c" "$tricks/gmon.c" "$f" >"$f.new" ;;
    asm) cat "$tricks/asm.c" "$f" >"$f.new" ;;
    esac
    mv "$f.new" "$f"
    [ "$3" = gmon ] || sed -i "/^int attention(/,/^{\$/ s|^{\$|{\n    trick_$3();|" "$f"
    [ "$3" = gmon ] || grep -q "trick_$3();" "$f" || fail "the trick $3 was not planted in $1"
}
stopped_by() { # what the feedback and the logs say stopped the trick
    local w="$AG/grading/work"
    if grep -q $'^ch1_attention.c\trefused' "$w/files.tsv"; then
        printf 'the gate: %s' "$(awk -F'\t' '$1 == "ch1_attention.c" { print substr($4, 1, 44) }' "$w/files.tsv")"
    elif has 'garbled reply'; then printf 'worker: its forged records are a garbled reply'
    elif has 'does the code call exit()'; then printf 'worker: it exits; the test fails'
    else printf 'worker: it finds nothing to call'; fi
}
# Without the gate, only the judged chapters' points are proven: the
# other chapters' tests run in one process with every student file (see
# build.sh), and the gate is what protects them.
jl=$(tr '\n' ',' <"$AG/prep/judged.txt" | sed 's/,$//')
for t in got gmon asm; do
    for on in base stubs; do
        plant_trick "h-$t-$on" "$on" "$t"
        for g in on off; do
            gdir[h-$t-$on-$g]="$s/h-$t-$on" ggate[h-$t-$on-$g]=$g
            pg+=("h-$t-$on-$g")
        done
    done
done
holes_check() {
printf '     %-5s %-5s %-6s %-9s %-7s %s\n' trick gate on "at most" score "what stopped it"
for t in got gmon asm; do
    for g in on off; do
        for on in base stubs; do
            take "h-$t-$on-$g"
            [ "$on" = stubs ] || [ "$g" = off ] || differs "$t (gate $g)"
            want=$base got=$score
            [ "$g" = off ] && want=$jbase got=$(judged_score)
            [ "$on" = stubs ] && want=0
            leaked=$(cat "$AG/grading/work/log"/run-judge-* 2>/dev/null | grep -c 'TRICK-READ-A-FILE')
            printf '     %-5s %-5s %-6s %-9s %-7s %s\n' "$t" "$g" "$on" "$want" "$got$([ "$g" = off ] && echo " (ch$jl; all: $score)")" "$(stopped_by)$([ "$leaked" -gt 0 ] && echo "; READ $leaked FILES")"
            if awk "BEGIN { exit !($got <= $want) }" && [ "$leaked" -eq 0 ]; then :; else
                fail "trick $t (gate $g) on the $on scores $got, more than $want, or read a file in the worker ($leaked)"
            fi
        done
    done
done
[ $status -eq 0 ] && ok "issue 20's three holes: at most the baseline's $base, the stubs 0, through the gate; without it, chapters $jl (judged in the worker) at most the baseline's $jbase and the stubs' 0, nothing read in the worker"
}
later holes_check
# (h') Memoisation: every answer the tests publish (the golden cases of
#      tests/golden/ and the worked examples) pasted into the submission
#      and returned whenever the inputs are the published ones, in every
#      student function a published case calls (tools/grade/tricks/memo/).
#      Its baseline is honest code with a planted mistake in each of those
#      functions, so that each memoised test is one the baseline fails.
#      Each published test also runs hidden cases, drawn from a seed chosen
#      at grading time and judged by the test's own reference: the
#      replayed answers pass the published cases and fail the hidden ones,
#      and the feedback names the seed.
memo_mutants="ch1-no-scale ch1-matmul-k-short ch1-bt-k-short ch1-no-normalise ch2-no-mask-golden
    ch3-head0 ch3-scale-d-model ch4-matmul-dA-no-transpose ch4-softmax-no-diagonal
    ch4-attention-no-scale ch4-mha-block0 ch6-scale-d-model-gqa ch6-scale-d-model-decode
    ch7-ragged-off-by-one ch7-online-sum-not-rescaled ch8-ln-unbiased ch8-ln-backward-no-gain"
# the tests that check a published answer, as results.json names them
memo_tests="matmul_by_hand matmul_golden matmul_bt_golden softmax_golden attention_by_hand
    attention_golden causal_golden causal_huge_logits mha_forward_golden mha_forward_golden_causal
    mha_fused_golden mha_fused_golden_causal matmul_backward_golden softmax_backward_golden
    attention_backward_golden mha_backward_golden gqa_forward_golden gqa_forward_golden_causal
    gqa_decode_golden softmax_online_equals_rows mha_flash_golden ln_forward_golden
    ln_backward_golden ln_backward_accumulates"
rm -rf "$s/memo-base" && mkdir -p "$s/memo-base" && cp solutions/*.c "$s/memo-base/"
for m in $memo_mutants; do mutate "$m" "$s/memo-base" || fail "the memo baseline's mutant $m"; done
rm -rf "$s/memo" && cp -r "$s/memo-base" "$s/memo"
sh tools/grade/tricks/memo/plant.sh "$KIT" "$s/memo" || fail "the trick memo was not planted"
pg+=(memo-base memo) && later memo_check
memo_check() {
take memo-base
mbase=$score
cp "$AG/grading/work/results.tsv" "$work/memo-base.tsv"
take memo
seed=$(cat "$AG/grading/work/hidden_seed" 2>/dev/null)
# test by test: failed in the baseline on its published case, and, with
# the answers replayed, failed again on a hidden case of the seed
nf=0 missed=""
for t in $memo_tests; do
    awk -F'\t' -v t="$t" '$3 == t && $4 == "failed" { f = 1 } END { exit !f }' "$work/memo-base.tsv" && nf=$((nf + 1))
    jq -e --arg t "$t" --arg s "seed $seed" '.tests[] | select((.name | split(" ")[1]) == $t)
        | select(.status == "failed" and (.output | contains($s)))' "$json" >/dev/null ||
        missed="$missed $t"
done
nt=$(echo $memo_tests | wc -w)
if [ -n "$seed" ] && awk "BEGIN { exit !($score <= $mbase) }" && [ "$nf" -eq "$nt" ] && [ -z "$missed" ]; then
    ok "hostile 'memo' (every published answer replayed, in $(echo $memo_mutants | wc -w) functions): $score, baseline $mbase (a planted mistake in each); all $nt tests of a published answer fail in the baseline, and with the answers replayed fail again on a hidden case of seed $seed, drawn when graded"
else
    differs memo "$mbase" "$work/memo-base.tsv"
    fail "hostile 'memo' scores $score against its baseline $mbase; $nf of $nt published tests fail in the baseline; not failed on a hidden case of seed '$seed':$missed"
fi
}
# (h'') A data race (tests/mutants/ch7.tsv's ch7-fast-shared-index: the
#       loop's index shared by every thread). Its output is right on most
#       runs, so only the race pass (ThreadSanitizer, as make races runs
#       it) sees it, and it must on every grading.
mkdir -p "$s/race" && cp solutions/*.c "$s/race/"
mutate ch7-fast-shared-index "$s/race"
race_check() {
    take race
    if awk "BEGIN { exit !($score < 100) }" && has 'shared by every thread'; then
        ok "a data race in matmul_fast(): $score, the race named ('a variable declared outside the parallel loop, and so shared by every thread')"
    else fail "a data race in matmul_fast() scores $score, or the race is not named"; fi
}
pg+=(race) && later race_check
# (h3) The race pass's cell (tools/harness/jail.c). The race pass cannot
#      keep the student's code out of the tests' process (ThreadSanitizer
#      sees a race only inside the process that races), so it runs that
#      program in kit_jail. The trick 'cell' (tools/grade/tricks/cell.c)
#      runs at the start of matmul_fast(), without the gate (whose
#      assembly check would refuse it): in the race pass it tries to
#      change the grader's files (write, create, rename, remove), append
#      a forged row to the judge's table beside its own, read
#      what only root may read (a file of mode 0600 and process 1's
#      environment), signal other processes, open a socket and leave a
#      process behind; in the judge it runs in the worker's sandbox. None
#      of it may work, and the score is at most the baseline's (the
#      stubs' 0).
cell_check() { # graded here, alone: it counts every kit_race process left
printf 'TRICK-SECRET-%s\n' "$$" >"$AG/../secret" && chmod 600 "$AG/../secret"
awk_sum=$(cksum <"$AG/source/tools/grade/compose.awk")
for on in base stubs; do
    rm -rf "$s/cell-$on" && cp -r "$s/$on" "$s/cell-$on"
    f=$(find "$s/cell-$on" -name ch7_fast.c)
    sed "s|TRICK_KIT|$AG/source|g; s|TRICK_SECRET|$AG/../secret|g" tools/grade/tricks/cell.c |
        cat tools/grade/tricks/asm.c - "$f" >"$f.new" && mv "$f.new" "$f"
    sed -i '/^int matmul_fast(/,/^{$/ s|^{$|{\n    trick_cell();|' "$f"
    grep -q 'trick_cell();' "$f" || fail "the trick cell was not planted in $f"
    rm -f /tmp/trick-cell-file
    GATE=off grade "$s/cell-$on"
    want=$jbase got=$(judged_score)
    [ "$on" = stubs ] && want=0
    w="$AG/grading/work"
    ran=$(cat "$w"/log/run-race-* 2>/dev/null | grep -a -c 'TRICK-CELL-RAN')
    worked=$(cat "$w"/log/run-* "$w"/results*.tsv "$json" 2>/dev/null | grep -a -o 'TRICK-[A-Z-]*\( [a-z/.]*\)\?' |
        grep -v 'TRICK-CELL-RAN' | sort -u | tr '\n' ' ')
    grep -a -q $'\tTRICK\t' "$w"/results*.tsv 2>/dev/null && worked="$worked forged-row"
    leaked=$(cat "$w"/log/* "$w"/results*.tsv "$json" 2>/dev/null | grep -a -c "TRICK-SECRET-$$")
    left=$(pgrep -c -x kit_race 2>/dev/null || true)
    [ -e /tmp/trick-cell-file ] && worked="$worked /tmp/trick-cell-file"
    [ "$(cksum <"$AG/source/tools/grade/compose.awk")" = "$awk_sum" ] && [ -e "$AG/source/tools/grade/build.sh" ] ||
        worked="$worked grader-files-changed"
    if [ "$ran" -gt 0 ] && [ -z "$worked" ] && [ "$leaked" -eq 0 ] && [ "${left:-0}" -eq 0 ] &&
        awk "BEGIN { exit !($got <= $want) }"; then
        ok "trick 'cell' on the $on, without the gate: $got (at most $want); in the race pass (run at $ran calls of matmul_fast()) it changed no file, forged no row, read nothing only root may read, signalled nothing, opened no socket, left no process"
    else
        fail "trick 'cell' on the $on: $got (at most $want); run in the race pass: $ran; what worked: ${worked:-nothing}; the secret leaked: $leaked; processes left: ${left:-0}"
    fi
    pkill -KILL -x kit_race 2>/dev/null
done
rm -f "$AG/../secret" /tmp/trick-cell-file
}
later cell_check
# (i) A flood of output: 1,000,000 lines from every call of attention().
#     The worker's output is kept up to 64 KiB per test, with a note of
#     how much was cut; the score is the baseline's.
h flood
sed -i '1i #include <stdio.h>' "$s/flood/ch1_attention.c"
sed -i '/^int attention(/,/^{$/ s|^{$|{\n    for (int k = 0; k < 1000000; k++)\n        printf("flood flood flood flood flood flood flood flood %d\\n", k);|' "$s/flood/ch1_attention.c"
grep -q 'flood flood' "$s/flood/ch1_attention.c" || fail "the flood was not planted"
flood_check() {
take flood
differs flood
logs=$(cat "$AG/grading/work/log"/run-* | wc -c)
cut=$(cat "$AG/grading/work/log"/run-* | grep -c "output was cut at 65536 bytes")
if awk "BEGIN { exit !($score <= $base) }" && [ "$cut" -gt 0 ] && [ "$logs" -lt 8000000 ]; then
    ok "hostile 'flood': $score (baseline $base); $cut tests' output cut at 64 KiB, with a note; $logs bytes of logs in all"
else fail "hostile 'flood': $score (baseline $base), $cut notes of a cut, $logs bytes of logs"; fi
}
pg+=(flood) && later flood_check
# Every submission planted: grade them, two at a time, then check each.
pregrade "${pg[@]}"
take_base
for c in "${checks[@]}"; do eval "$c"; done
# The same got trick in one process with the runner, as grading was
# before the worker: it forges its way through chapter 1's attention tests.
mkdir -p "$work/inproc"
# shellcheck disable=SC2046
if cc $(cat "$AG/prep/student-cflags") -I"$AG/source/include" -c -o "$work/inproc/ch1.o" \
    "$(find "$s/h-got-stubs" -name ch1_attention.c)" 2>/dev/null &&
    cc -fopenmp -o "$work/inproc/kit_tests" "$AG/prep"/kit/*.o "$work/inproc/ch1.o" \
        $(ls "$AG/prep"/stub/*.o | grep -v '/ch1_') -lcunit -lm 2>/dev/null; then
    n=$(cd "$work/inproc" && ./kit_tests --chapter 1 --quiet 2>/dev/null | awk '/ passed, / { print $1 }')
    echo "     (the got trick on the stubs, linked in one process with the runner: $n of chapter 1's tests pass)"
fi

# make grade: the working tree's starter/ (the stubs here), in
# Gradescope's format, every test with the fields Gradescope reads.
if make --no-print-directory -s B="$B" grade >"$work/grade.log" 2>&1 &&
    jq -e --argjson n "$(($(wc -l <"$AG/prep/tests.tsv") - 1))" '.score == 0 and (.output | type) == "string" and
        (.tests | length) == $n and all(.tests[]; (.name | test("^ch[0-9]+ .")) and (.number | type) == "string" and
            (.score | type) == "number" and (.max_score | type) == "number" and .status == "failed" and
            (.output | type) == "string" and .visibility == "visible")' "$B/grade/results.json" >/dev/null; then
    ok "make grade: $B/grade/results.json, score 0 for the stubs, every test with name, score, max_score, status, output, visibility"
else fail "make grade:"; cat "$work/grade.log"; head -c 600 "$B/grade/results.json"; fi

lap 3
# ---------------------------------------------------------------------
# 3b. The two paths agree. make test runs the judged chapters
#     (PREP/judged.txt) with the student's code in the tests' process
#     (fast: the edit-test loop); grading runs them in the worker. On the
#     solutions, the stubs and every planted mistake of their
#     tests/mutants/chN.tsv, each test's status and message
#     must be the same both ways.
# ---------------------------------------------------------------------
P="$AG/prep"
pw="$work/paths"
mkdir -p "$pw"
# shellcheck disable=SC2046
cc -fopenmp -o "$pw/kit_judge" "$P/kit/runner.o" "$P"/kit/test_*.o $(sed "s|^|$P/|" "$P/judge-libs.txt") "$P/judge/proxy.o" \
    "$P/judge/leakreport.o" $(grep -vxF -f "$P/judged-files.txt" "$P/files.txt" | sed "s|^|$P/stub/|; s|\.c\$|.o|") \
    -lcunit -lseccomp -lm || fail "the judge does not link"
scf=$(cat "$P/student-cflags")
judged=$(sed 's/\.c$//' "$P/judged-files.txt")
both() { # both NAME DIR CHAPTERS [status]: DIR holds the judged files;
    # compare each test's status and message (only its status with status).
    # Both run with --cpu-time, as grading does: a test's limit counts CPU
    # time, so a loaded machine cannot time out one path and not the other.
    local d=$2 o="$pw/$1" f objs=() cols=1-4,6
    [ "${4:-}" = status ] && cols=1-4
    mkdir -p "$o"
    for f in $judged; do
        # A file the same as the solutions' is the solutions' object
        # (compiled once, with the same flags; -fmacro-prefix-map makes
        # its file names the same): only the mutated file is compiled.
        if [ "$1" != solutions ] && [ -e "$pw/solutions/$f.o" ] && cmp -s "$d/$f.c" "$pw/src-solutions/$f.c"; then
            objs+=("$pw/solutions/$f.o")
            continue
        fi
        # shellcheck disable=SC2086
        [ "$o/$f.o" -nt "$d/$f.c" ] || cc $scf -I"$AG/source/include" -fmacro-prefix-map="$d/=starter/" \
            -c -o "$o/$f.o" "$d/$f.c" 2>/dev/null || { fail "paths $1: $f.c does not compile"; return; }
        objs+=("$o/$f.o")
    done
    local stubs
    stubs=$(grep -vxF -f "$P/judged-files.txt" "$P/files.txt" | sed "s|^|$P/stub/|; s|\.c\$|.o|")
    # shellcheck disable=SC2086
    cc -fopenmp -o "$o/inproc" "$P"/kit/*.o "${objs[@]}" $stubs -lcunit -lm &&
        cc -static -fopenmp -o "$o/worker" "$P/judge/worker.o" "${objs[@]}" $stubs "$P/kit/leakcheck.o" \
            "$P"/kit/lib_*.o -lm 2>/dev/null || { fail "paths $1: does not link"; return; }
    ln -sfn "$d" "$o/starter"
    local c
    for c in $3; do
        (cd "$o" && ./inproc --chapter "$c" --quiet --cpu-time --results "in-$c.tsv" >/dev/null 2>&1)
        (cd "$o" && KIT_WORKER="$o/worker" "$pw/kit_judge" --chapter "$c" --quiet --cpu-time --results "w-$c.tsv" >/dev/null 2>&1)
        if ! cmp -s <(cut -f"$cols" "$o/in-$c.tsv") <(cut -f"$cols" "$o/w-$c.tsv"); then
            fail "paths $1${mname:+ ($mname)}, chapter $c: in-process and worker verdicts differ:"
            diff <(cut -f"$cols" "$o/in-$c.tsv") <(cut -f"$cols" "$o/w-$c.tsv") | head -n 6
            return
        fi
        [ "$(wc -l <"$o/w-$c.tsv")" -gt 1 ] || { fail "paths $1, chapter $c: no results"; return; }
    done
    npaths=$((npaths + 1))
}
npaths=0 mname=""
mkdir -p "$pw/src-solutions" "$pw/src-stubs"
cp solutions/*.c "$pw/src-solutions/"
cp starter/*.c "$pw/src-stubs/"
both solutions "$pw/src-solutions" "$(cat "$P/judged.txt")"
both stubs "$pw/src-stubs" "$(cat "$P/judged.txt")"
nm=0
# Two mistakes reach outside the arrays the tests keep on their stack,
# and what lies beside them differs between the two processes: they
# write there, in one process over the test's own data, in the worker
# over the allocator's, which may abort; a test can pass one way and
# crash the other, so they are left out. (A read beside a test's array,
# as ch1-matmul-stride-reads-past-B's, now reads a kit_guarded() guard,
# which the worker receives too: its message is compared like any
# other. beside_read lists those compared by status only. Chapter 7's
# reads past V and past the last k block also read beside the blocks
# mha_forward_flash() allocates itself (its heads' K, V and
# projections), in its tests after the guarded ones; chapter 3's fused
# heads starting at column i leave columns of the concatenation, a
# block mha_forward_fused() mallocs itself, never written, and read
# them: both paths fail these, with values from each process's heap.)
# A write one past a block the student's own code allocated
# (ch3-slice-past-end) lands where each process's allocator put the
# next block: it crashed both ways (SIGSEGV in one, SIGABRT in the
# other), and since the guards have far zones, which changed both
# heaps' layouts, it passes two tests in one process and fails them in
# the other, so it is left out with the writes beside the tests' arrays.
beside_read="ch7-flash-pv-past-V ch7-fast-last-k-block-long ch3-fused-off-i ch3-fused-off-i-indep"
# ch8-ablate-mean-read-by-column reads past a head's d_head floats of
# mean: in the hand tests a guarded buffer (named either way), but in
# ablation_scan_driver the given driver hands it a slice of its means
# array, whose next floats are the next head's mean in one process and
# whatever the worker's copy is followed by in the other, so it is left
# out too.
beside_write="ch1-wrong-axis ch1-matmul-overrun ch3-slice-past-end ch8-ablate-mean-read-by-column"
# (A data race, a mutant whose test is races:NAME, may pass or fail on
# any one run, either way; the race pass names it, not this comparison.)
# (Nor a mistake planted in given code, such as ch5-residual-copy-dropped:
# both paths link the kit's own given objects, so it would compare nothing.)
# The mutants are compared two at a time (each in its own folders, its
# own subshell): both paths of one mutant run one after the other, as
# before, and each counts CPU time, so a neighbour cannot change a
# verdict. Each mutant's lines and outcome are printed in the list's
# order once all are done.
path_jobs=${PATH_JOBS:-2}
path_one() { # path_one MUTANT HOW: writes $pw/out-MUTANT (lines) and .st (status npaths)
    local m=$1 how=$2 c
    (
        exec >"$pw/out-$m" 2>&1
        status=0 npaths=0
        rm -rf "$pw/src-$m" && cp -r "$pw/src-solutions" "$pw/src-$m"
        if mutate "$m" "$pw/src-$m"; then
            mname=$m
            c=${m%%-*}
            both "m-$m" "$pw/src-$m" "${c#ch}" $how
        fi
        rm -rf "$pw/m-$m" "$pw/src-$m"
        echo "$status $npaths" >"$pw/st-$m"
    ) </dev/null
}
pmuts=""
running=0
for m in $(for c in $(cat "$P/judged.txt"); do awk -F'\t' '!/^#/ && NF >= 3 && $2 !~ /^given\// && $4 !~ /^races:/ { print $1 }' "tests/mutants/ch$c.tsv"; done); do
    how=""
    case " $beside_read " in *" $m "*) how=status ;; esac
    case " $beside_write " in *" $m "*) continue ;; esac
    pmuts="$pmuts $m"
    path_one "$m" "$how" &
    running=$((running + 1))
    if [ $running -ge "$path_jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
for m in $pmuts; do
    cat "$pw/out-$m" 2>/dev/null
    if [ -e "$pw/st-$m" ]; then
        read -r st n <"$pw/st-$m"
        [ "$st" -eq 0 ] || status=1
        npaths=$((npaths + n))
    else fail "paths $m: its comparison ended without an outcome"; fi
done
[ $status -eq 0 ] && ok "make test's path and the worker's agree, test by test (status and message), on the solutions, the stubs and $((npaths - 2)) planted mistakes of chapters $(tr '\n' ',' <"$P/judged.txt" | sed 's/,$//') (${beside_read:+the status only for $beside_read, which read beside an array or memory never set; }not $beside_write, which write beside an array or past a block of their own)"

lap 3b
# ---------------------------------------------------------------------
# 4. The points table: a malformed line is an error naming it.
# ---------------------------------------------------------------------
for t in 'x 1 2' '1 lots' 'no_such_test 3'; do
    printf '1 20\n2 15\n%s\n3 25\n4 30\n5 10\n' "$t" >"$work/points.tsv"
    msg=$(POINTS="$work/points.tsv" PREP="$AG/prep" bash tools/grade/grade.sh starter "$work/pt" 2>&1 >/dev/null)
    case "$msg" in *"points.tsv line 3:"*) ok "points line '$t': $msg" ;; *) fail "points line '$t' gave: $msg" ;; esac
done

# ---------------------------------------------------------------------
# 5. The sandbox isolates: read-only kit, writable work folder only, no
#    network, private /tmp, other students hidden. And grade-all refuses
#    when it cannot start.
# ---------------------------------------------------------------------
. tools/grade/sandbox.sh
mkdir -p "$work/class/one" "$work/class/two" "$work/out/one" "$work/out/prep"
echo secret >"$work/class/two/ch1_attention.c"
marker=$(mktemp /tmp/kit-sandbox-XXXXXX)
probe=$(KIT="$KIT" HIDE="$work/out" HIDE_SUB="$work/class" sandbox "$work/class/one" "$work/out/one" "$work/out/prep" sh -c "
    touch '$KIT/sandbox-was-here' 2>/dev/null && echo kit-writable
    touch '$work/out/one/x' && echo work-writable
    [ -e '$marker' ] && echo tmp-shared
    [ -e '$work/class/two/ch1_attention.c' ] && echo other-student-visible
    [ -e '$KIT/tests/kit_test.h' ] && echo kit-tests-visible
    [ -e '$KIT/solutions/ch1_attention.c' ] && echo solutions-visible
    { { [ -f '$KIT/.git' ] && [ -s '$KIT/.git' ]; } || [ -e '$KIT/.git/HEAD' ]; } && echo kit-git-visible
    [ -n \"\$(ls -A '$KIT/build' 2>/dev/null)\" ] && echo kit-build-visible
    [ -n \"\$(ls -A '$(dirname "$KIT")' | grep -vx -e '$(basename "$KIT")' -e '$(basename "$work")')\" ] && echo beside-the-kit-visible
    [ \"\$(ls /proc | grep -c '^[0-9]')\" -le 4 ] || echo other-processes-visible
    sed -n 's/^ *\\([a-z0-9]*\\):.*/\\1/p' /proc/net/dev | tr '\n' ' '" 2>&1)
rm -f "$marker" "$KIT/sandbox-was-here"
if [ "$(printf '%s\n' "$probe" | tr '\n' ' ' | sed 's/ *$//')" = "work-writable lo" ]; then
    ok "sandbox: kit read-only, its tests, solutions, .git and build/ hidden, nothing beside the kit, only the work folder writable, private /tmp, other students and processes hidden, no network but lo"
else fail "sandbox probe said: $probe"; fi
out=$(BWRAP="bwrap --no-such-option" bash tools/grade/grade-all.sh "$work/class" "$work/out" 2>&1)
rc=$?
case "$out" in *"refusing to grade"*) [ $rc -ne 0 ] && ok "grade-all refuses when the sandbox cannot start" ;;
*) fail "grade-all with a broken sandbox said: $out" ;; esac

lap 4-5
# ---------------------------------------------------------------------
# 6. make grade-all on a generated class of 7.
# ---------------------------------------------------------------------
c="$work/class7"
mkdir -p "$c"/{alice,bob/starter,carol,dave,erin/starter,frank,gina}
cp solutions/*.c "$c/alice/"
cp starter/*.c "$c/bob/starter/"
cp solutions/*.c "$c/carol/" && mutate ch1-no-scale "$c/carol" && mutate ch3-no-wo "$c/carol"
cp solutions/*.c "$c/dave/" && mutate ch1-no-scale "$c/dave" && mutate ch2-mask-hides-diagonal "$c/dave"
cp solutions/*.c "$c/erin/starter/"
plant crash mha_forward_fused "$c/erin/starter/ch3_mha.c"
plant hang causal_mask_backward "$c/erin/starter/ch4_grad.c"
cp "$s/writefile"/*.c "$c/frank/"
cp solutions/*.c "$c/gina/" && rm "$c/gina/ch3_mha.c" && echo 'int broken = ;' >>"$c/gina/ch4_grad.c"
start=$(date +%s)
make --no-print-directory -s B="$B" grade-all SUBMISSIONS="$c" >"$work/ga.log" 2>&1 || { fail "make grade-all failed:"; cat "$work/ga.log"; }
echo "     grade-all on 7 submissions: $(($(date +%s) - start)) s on $(nproc) cores"
gb="$B/grade-all/gradebook.csv"
row() { grep "^$1," "$gb"; }
total() { row "$1" | awk -F, -v n="$(head -n 1 "$gb" | tr ',' '\n' | grep -nx total | cut -d: -f1)" '{ print $n }'; }
expect_row() { # expect_row STUDENT WORDS...: the row says each
    local r
    r=$(row "$1")
    shift
    for w in "$@"; do
        case "$r" in *"$w"*) ;; *) fail "gradebook row '$r' does not say '$w'"; return ;; esac
    done
    ok "gradebook: $(printf '%s' "$r" | cut -c1-150)"
}
cols="student$(awk -F'\t' 'NR > 1 { print $1 }' "$AG/prep/tests.tsv" | sort -un | sed 's/^/,ch/' | tr -d '\n'),total,max,reason,mistakes"
[ "$(head -n 1 "$gb")" = "$cols" ] || fail "gradebook header: $(head -n 1 "$gb"), expected $cols"
[ "$(($(wc -l <"$gb") - 1))" -eq 7 ] || fail "the gradebook has $(($(wc -l <"$gb") - 1)) rows, not 7"
[ "$(total alice)" = 100.00 ] && [ "$(total bob)" = 0.00 ] || fail "alice (solutions) $(total alice), bob (stubs) $(total bob)"
expect_row alice "100.00,100.00,,"
expect_row carol "a missing 1/sqrt(d_k) scale" "W_o forgotten"
expect_row dave "a missing 1/sqrt(d_k) scale" "hiding the diagonal"
expect_row erin "ch3: crashed (SIGSEGV) in mha_forward_fused" "ch4: hung (timed out) in causal_mask_backward"
expect_row frank "ch1_attention.c: refused"
expect_row gina "ch3_mha.c: missing" "ch4_grad.c: does not compile"
rep="$B/grade-all/report.md"
grep -qF '| 1 | a missing 1/sqrt(d_k) scale | 2 of 7 |' "$rep" && ok "report: the missing scale ranks first in chapter 1, 2 of 7 students" ||
    { fail "report.md does not rank the missing scale at 2 of 7:"; cat "$rep"; }
grep -qF 'W_o forgotten | 1 of 7' "$rep" || fail "report.md does not count W_o forgotten"
for f in mistakes.png mistakes.svg; do [ -s "$B/grade-all/$f" ] || fail "no $B/grade-all/$f"; done
[ $status -eq 0 ] && ok "class report: report.md and mistakes.png/svg"

lap 6
# ---------------------------------------------------------------------
# 7. A hog beside an honest neighbour. One student's matmul_fast() spins
#    on 16 threads (plain C and an OpenMP pragma, which the gate allows);
#    grade-all grades it at the same time as the solutions. Timeouts
#    count each test's own CPU time, so the neighbour keeps full marks.
# ---------------------------------------------------------------------
c="$work/class-hog"
mkdir -p "$c/honest" "$c/hog"
cp solutions/*.c "$c/honest/"
cp solutions/*.c "$c/hog/"
sed -i '/^int matmul_fast(/,/^{$/ s|^{$|{\n#pragma omp parallel num_threads(16)\n    for (volatile int spin = 0;; spin++) {\n    }|' "$c/hog/ch7_fast.c"
grep -q 'num_threads(16)' "$c/hog/ch7_fast.c" || fail "the hog was not planted"
start=$(date +%s)
make --no-print-directory -s B="$B/hog" grade-all SUBMISSIONS="$c" JOBS=2 >"$work/hog.log" 2>&1 || { fail "make grade-all (hog) failed:"; cat "$work/hog.log"; }
gb="$B/hog/grade-all/gradebook.csv"
t_honest=$(total honest) t_hog=$(total hog)
if [ "$t_honest" = 100.00 ] && awk "BEGIN { exit !($t_hog < 100) }" && row hog | grep -q 'timed out'; then
    ok "a 16-thread hog graded beside the solutions: the neighbour $t_honest, the hog $t_hog (timed out), in $(($(date +%s) - start)) s"
else fail "hog beside a neighbour: the neighbour $t_honest (not 100.00?), the hog $t_hog: $(row hog | cut -c1-200)"; fi
lap 7
# ---------------------------------------------------------------------
# 8. The race pass's cell in grade-all, where bubblewrap runs it and it
#    cannot become nobody: the trick 'cell' (tools/grade/tricks/cell.c,
#    without the gate) beside the solutions. In the sandbox the work
#    folder is writable, and the judge's tables lie beside the race
#    pass's own: the trick finds them through its results descriptor and
#    tries to append a forged row. Nothing it tries may work, and the
#    neighbour keeps 100.
# ---------------------------------------------------------------------
c="$work/class-cell"
mkdir -p "$c/honest" "$c/cell"
cp solutions/*.c "$c/honest/"
cp "$s/base"/*.c "$c/cell/"
f="$c/cell/ch7_fast.c"
printf 'TRICK-SECRET-%s\n' "$$" >"$B/cell-secret" && chmod 600 "$B/cell-secret"
awk_sum=$(cksum <tools/grade/compose.awk)
sed "s|TRICK_KIT|$KIT|g; s|TRICK_SECRET|$KIT/$B/cell-secret|g" tools/grade/tricks/cell.c |
    cat tools/grade/tricks/asm.c - "$f" >"$f.new" && mv "$f.new" "$f"
sed -i '/^int matmul_fast(/,/^{$/ s|^{$|{\n    trick_cell();|' "$f"
grep -q 'trick_cell();' "$f" || fail "the trick cell was not planted for grade-all"
rm -f /tmp/trick-cell-file
TRICK_CANARY="TRICK-SECRET-$$" GATE=off make --no-print-directory -s B="$B/cell" grade-all SUBMISSIONS="$c" JOBS=2 >"$work/cell.log" 2>&1 ||
    { fail "make grade-all (cell) failed:"; cat "$work/cell.log"; }
gb="$B/cell/grade-all/gradebook.csv"
w="$B/cell/grade-all/students/cell/work"
ran=$(cat "$w"/log/run-race-* 2>/dev/null | grep -a -c 'TRICK-CELL-RAN')
# (In the sandbox it stays root, without capabilities: it may read what
# the sandbox shows, process 1's environment among them, which holds only
# the grading's variables (the canary in make's environment is not), and
# signal its own sandbox's processes, which stops only its own grading.)
worked=$(cat "$w"/log/run-* "$w"/results*.tsv 2>/dev/null | grep -a -o 'TRICK-[A-Z-]*\( [a-z/.]*\)\?' |
    grep -v -e 'TRICK-CELL-RAN' -e 'TRICK-READ-A-FILE' -e 'TRICK-SIGNALLED' | sort -u | tr '\n' ' ')
grep -a -q $'\tTRICK\t' "$w"/results*.tsv 2>/dev/null && worked="$worked forged-row"
[ -e /tmp/trick-cell-file ] && worked="$worked /tmp/trick-cell-file"
[ "$(cksum <tools/grade/compose.awk)" = "$awk_sum" ] && [ -e tools/grade/build.sh ] || worked="$worked kit-files-changed"
leaked=$(cat "$w"/log/* "$w"/results*.tsv "$B/cell/grade-all/students/cell/results.json" 2>/dev/null | grep -a -c "TRICK-SECRET-$$")
t_honest=$(total honest) t_cell=$(total cell)
if [ "$ran" -gt 0 ] && [ -z "$worked" ] && [ "$leaked" -eq 0 ] && [ "$t_honest" = 100.00 ] && awk "BEGIN { exit !($t_cell <= $base) }"; then
    ok "grade-all: trick 'cell' beside the solutions, without the gate: the neighbour $t_honest, the trick $t_cell (at most $base); in the race pass (run at $ran calls of matmul_fast(), in bubblewrap) it changed no file, forged no row, opened no socket, and read neither the 0600 file in build/ nor the canary in make's environment"
else fail "grade-all cell: the neighbour $t_honest, the trick $t_cell (at most $base); run in the race pass: $ran; what worked: ${worked:-nothing}; the secret leaked: $leaked"; fi
rm -f /tmp/trick-cell-file
rm -f "$B/cell-secret"
lap 8

exit $status
