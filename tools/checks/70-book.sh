#!/bin/sh
# The book: both editions build as HTML and PDF; every chapter and every
# figure is in them, and every figure is referred to from its chapter's
# text; every chapter (8's later) ends with a Summary that names its
# exercises and quotes the runs; the HTML refers to nothing outside
# itself; the student edition holds none of the solutions' code; and the filter's
# failure path works (a misspelt listing marker, a missing generated
# file, an unknown value key or reference stops pandoc; a .holds claim
# whose test fails stops it, naming the test and both values); and a
# planted flip in chapter 8's committed run (its 1-head and 16-head test
# losses swapped) stops the book at the .holds test that compares them.
# B=build/<dir> builds elsewhere (default build).
set -eu
B="${B:-build}"
. tools/checks/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---------------------------------------------------------------------
# 1. Both editions build.
# ---------------------------------------------------------------------
for ed in student instructor; do
    if ! make --no-print-directory -s B="$B" book EDITION=$ed >"$work/make-$ed.log" 2>&1; then
        cat "$work/make-$ed.log"
        fail "make book EDITION=$ed"
        exit 1
    fi
done
html_s="$B/book.html" pdf_s="$B/book.pdf"
html_i="$B/book-instructor.html" pdf_i="$B/book-instructor.pdf"
for f in "$html_s" "$pdf_s" "$html_i" "$pdf_i"; do
    [ -s "$f" ] || fail "$f is missing or empty"
done
for f in "$pdf_s" "$pdf_i"; do
    pages=$(pdfinfo "$f" 2>/dev/null | awk '/^Pages:/ {print $2}')
    if [ -z "$pages" ] || [ "$pages" -lt 2 ]; then
        fail "$f is not a readable PDF of several pages"
    else
        echo "  $f: $pages pages"
    fi
done
[ "$status" -eq 0 ] || exit 1

# The text of an HTML file, one normalised line per source line: tags
# removed, entities decoded, blanks collapsed and trimmed.
html_text() {
    sed -e 's/<[^>]*>//g' -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' \
        -e "s/&#39;/'/g" -e 's/&amp;/\&/g' "$1" | norm
}
norm() {
    tr -s ' \t' '  ' | sed -e 's/^ //' -e 's/ $//'
}
html_text "$html_s" >"$work/student.txt"
html_text "$html_i" >"$work/instructor.txt"
pdftotext -q "$pdf_s" - | tr -s ' \t\n' '   ' >"$work/student-pdf.txt"
pdftotext -q "$pdf_i" - | tr -s ' \t\n' '   ' >"$work/instructor-pdf.txt"

# ---------------------------------------------------------------------
# 2. Every chapter is in both editions (its heading in the HTML, its
#    title in the PDF's text).
# ---------------------------------------------------------------------
n=0
for ch in $(sh tools/mk/chapters.sh mds); do
    [ -e "$ch" ] || continue
    n=$((n + 1))
    first=$(head -n 1 "$ch")
    case "$first" in
        '# '*) ;;
        *) fail "$ch: line 1 is not a chapter heading '# Title {#ch:slug}'"; continue ;;
    esac
    id=$(printf '%s\n' "$first" | sed -n 's/.*{[^}]*#\([^ }]*\).*/\1/p')
    inner=$(printf '%s\n' "$first" | pandoc -f markdown -t html --wrap=none |
        sed -n 's/^<h1[^>]*>\(.*\)<\/h1>$/\1/p')
    plain=$(printf '%s\n' "$first" | sed -e 's/^# *//' -e 's/ *{[^}]*} *$//' | pandoc -f markdown -t plain --wrap=none | norm)
    for html in "$html_s" "$html_i"; do
        if [ -n "$id" ] && ! grep -q "id=\"$id\"" "$html"; then
            fail "$ch: no heading with id '$id' in $html"
        fi
        if [ -z "$inner" ] || ! grep -qF "$inner" "$html"; then
            fail "$ch: its title '$inner' is not in $html"
        fi
    done
    for txt in student-pdf instructor-pdf; do
        grep -qF "$plain" "$work/$txt.txt" || fail "$ch: its title '$plain' is not in the $txt text"
    done
    # Each exercise names a function (`name()`) and its test command
    # (make test CH=N ...). Work with pencil and paper is a ::: question.
    bad=$(awk -v f="$ch" '
        /^:::+ *(\{[^}]*\.exercise[ }]|exercise *$)/ { inex = 1; text = ""; start = NR; next }
        inex && /^:::+ *$/ {
            if (text !~ /make test/ || text !~ /`[A-Za-z_0-9]+\(\)`/)
                print f ":" start ": an exercise must name its function (`name()`) and its test command (make test CH=N ...); make it a ::: question if it has none"
            inex = 0; next }
        inex { text = text " " $0 }' "$ch")
    [ -z "$bad" ] || fail "$bad"
done
echo "  $n chapter(s) present in both editions"

# Every citation [Name et al., YYYY; ...] in the chapters has an entry
# "Name, ... (YYYY)" in book.md's references.
sed -n '/^# References/,$p' book.md | awk '/^- / { if (e) print e; e = $0; next } /^  / { e = e " " $0 } END { if (e) print e }' >"$work/refs.txt"
cat chapters/*.md 2>/dev/null | tr '\n' ' ' | grep -o '\[[A-Z][^]@]*[12][0-9][0-9][0-9][a-z]\?\]' | tr -d '[]' | tr ';' '\n' |
    sed 's/^ *//' | sort -u | while read -r cite; do
    name=$(printf '%s' "$cite" | sed 's/[ ,].*//')
    year=$(printf '%s' "$cite" | grep -o '[12][0-9][0-9][0-9]' | tail -n 1)
    grep -E "^- $name,.*\($year[;)]" "$work/refs.txt" >/dev/null ||
        fail "the chapters cite [$cite], which has no entry in book.md's References"
done | tee "$work/cites.txt"
[ -s "$work/cites.txt" ] && status=1

# ---------------------------------------------------------------------
# 3. Every figure the chapters refer to exists and is embedded.
# ---------------------------------------------------------------------
for img in $(cat book.md chapters/*.md 2>/dev/null | grep -o '](plots/[^)]*)' | sed 's/^](//; s/)$//' | sort -u); do
    [ -s "$B/$img" ] || fail "figure $img is referred to but $B/$img does not exist"
done
for html in "$html_s" "$html_i"; do
    if grep -o '<img [^>]*>' "$html" | grep -v 'src="data:' | grep -q .; then
        fail "$html has an image that is not embedded"
    fi
done

# ---------------------------------------------------------------------
# 4. The HTML refers to nothing outside itself. (The MathML and XHTML
#    namespaces are names in xmlns attributes, not references.)
# ---------------------------------------------------------------------
q="[\"']?"
for html in "$html_s" "$html_i"; do
    bad=$(grep -Eio "(src|href|action|poster|srcset|data)[[:space:]]*=[[:space:]]*$q[[:space:]]*(https?:|ftp:|//)[^\"' >]*" "$html" | head -n 5)
    [ -z "$bad" ] || fail "$html links outside itself: $bad"
    bad=$(grep -Eio '<link[^>]*>' "$html" | grep -v 'href="data:' | head -n 3)
    [ -z "$bad" ] || fail "$html has a <link> to an outside file: $bad"
    bad=$(grep -Eio '<script[^>]*src[^>]*>' "$html" | grep -v 'src="data:' | head -n 3)
    [ -z "$bad" ] || fail "$html loads an outside script: $bad"
    bad=$(grep -Eio "(url\($q[[:space:]]*(https?:|//)|@import)[^)]*" "$html" | head -n 3)
    [ -z "$bad" ] || fail "$html's style loads an outside file: $bad"
done

# ---------------------------------------------------------------------
# 5. The student edition holds no solution code. Every line inside a
#    listing region of solutions/*.c that appears in no starter or
#    shared source file is a solution line; none may be in the student
#    HTML, and (so that this check means something) the instructor
#    edition must show them when it shows listings from solutions/.
# ---------------------------------------------------------------------
cat starter/*.c given/*.c include/*.h tests/*.c tools/runs/plotdata/*.c 2>/dev/null |
    norm | sort -u >"$work/shared-lines.txt"
for f in solutions/*.c; do
    [ -e "$f" ] || continue
    awk '/^[ \t]*\/\*[ \t]*@listing[ \t]/ { depth++; next }
         /^[ \t]*\/\*[ \t]*@end[ \t]/ { if (depth > 0) depth--; next }
         depth > 0 { print }' "$f"
done | norm | awk 'length($0) >= 16 && $0 !~ /^(\/\*|\*|\/\/)/' | sort -u >"$work/region-lines.txt"
comm -23 "$work/region-lines.txt" "$work/shared-lines.txt" >"$work/solution-lines.txt"
leaked=$(grep -Fxf "$work/solution-lines.txt" "$work/student.txt" | head -n 5 || true)
[ -z "$leaked" ] || fail "the student edition contains solution code, e.g.: $leaked"
shown=$(grep -Fxf "$work/solution-lines.txt" "$work/instructor.txt" | wc -l)
# (the listings whose marker is in starter/, and so in solutions/)
uses=$(cat chapters/*.md 2>/dev/null | grep -E '^```+ *\{[^}]*\.listing' |
    sed -n 's/.*name="\([^"]*\)".*/\1/p' | while read -r name; do
        if grep -qE "^[[:space:]]*/\*[[:space:]]*@listing[[:space:]]+${name}[[:space:]]*\*/" starter/*.c 2>/dev/null; then
            echo "$name"
        fi
    done | wc -l)
echo "  $(wc -l <"$work/solution-lines.txt") solution lines; in the student edition: 0 allowed, found $(printf '%s' "$leaked" | grep -c . || true); in the instructor edition: $shown"
if [ "$uses" -gt 0 ]; then
    [ "$shown" -gt 0 ] || fail "the instructor edition shows no solution code although the chapters have $uses listing(s) from starter/solutions"
    grep -q 'KIT_E_TODO' "$work/student.txt" || fail "the student edition shows no stub (KIT_E_TODO)"
fi

# ---------------------------------------------------------------------
# 6. The filter fails loudly: a misspelt marker, a marker name in two
#    source files, a listing that names its file, a missing generated
#    file, an unknown value key, a dangling reference, a missing figure.
#    The correct document is rendered first, to prove the test itself.
# ---------------------------------------------------------------------
mkdir -p "$work/src" "$work/build/plots/data"
cat >"$work/src/demo.c" <<'EOF'
/* @listing demo_fn */
int demo_fn(void) { return 0; }
/* @end demo_fn */
EOF
echo 'demo.answer=42' >"$work/build/plots/data/demo.values"
printf '| a |\n|---|\n| 1 |\n' >"$work/build/plots/data/demo_table.md"
cat >"$work/src/other.c" <<'EOF'
/* @listing other_fn */
int other_fn(void) { return 1; }
/* @end other_fn */
EOF
sed 's/other_fn/demo_fn/g' "$work/src/other.c" >"$work/src/dup.c"
sources="$work/src/demo.c $work/src/other.c"
render() { # render FILE: pandoc with the book filter, as make book runs it
    pandoc "$1" --from=markdown --lua-filter=tools/book/book.lua \
        --metadata=builddir:"$work/build" --metadata=sources:"$sources" \
        --to=html5 --output="$work/out.html" 2>"$work/err.txt"
}
good() {
    cat <<EOF
# Demo {#ch:demo}

\`\`\`{.listing name="demo_fn"}
\`\`\`

The answer is []{.value key="demo.answer"}; see @ch:demo.

::: {.generated file="demo_table.md"}
:::
EOF
}
good >"$work/01-demo.md"
if ! render "$work/01-demo.md" || ! grep -q 'demo_fn' "$work/out.html" || ! grep -q '>42<' "$work/out.html" ||
    ! grep -qF "<code>$work/src/demo.c</code>" "$work/out.html"; then
    cat "$work/err.txt"
    fail "the filter failed on a correct chapter"
fi
expect_failure() { # expect_failure WHAT SED-EXPRESSION WORD
    good | sed "$2" >"$work/02-bad.md"
    if render "$work/02-bad.md"; then
        fail "$1 did not stop the filter"
    elif ! grep -q "$3" "$work/err.txt" || ! grep -q "02-bad.md" "$work/err.txt"; then
        cat "$work/err.txt"
        fail "$1 stopped the filter, but the message names neither '$3' nor the chapter"
    else
        echo "  $1 stops the build: $(grep 'ERROR' "$work/err.txt" | head -n 1 | cut -c1-150)"
    fi
}
expect_failure "a misspelt listing marker" 's/name="demo_fn"/name="demo_fnn"/' 'demo_fnn'
expect_failure "a listing that names its file" 's/{\.listing /{.listing file="demo.c" /' 'drop file='
# The same marker name in two source files: the message names both.
good >"$work/02-bad.md"
all_sources=$sources
sources="$all_sources $work/src/dup.c"
if render "$work/02-bad.md"; then
    fail "a marker name in two source files did not stop the filter"
elif ! grep "two places" "$work/err.txt" | grep -F "$work/src/demo.c" | grep -qF "$work/src/dup.c"; then
    cat "$work/err.txt"
    fail "a marker name in two source files stopped the filter, but the message does not name both files"
else
    echo "  a marker name in two source files stops the build: $(grep 'ERROR' "$work/err.txt" | head -n 1 | sed "s|$work/src/||g" | cut -c1-150)"
fi
sources="$all_sources $work/src/nothere.c"
if render "$work/01-demo.md" || ! grep -q 'nothere.c' "$work/err.txt"; then
    cat "$work/err.txt"
    fail "a missing source file did not stop the filter with a message naming it"
fi
sources=$all_sources
expect_failure "a missing generated file" 's/demo_table\.md/no_table.md/' 'no_table.md'
expect_failure "an unknown value key" 's/demo\.answer/demo.answr/' 'demo.answr'
expect_failure "a dangling reference" 's/@ch:demo/@fig:nothing/' 'fig:nothing'
expect_failure "a missing figure" 's/^The answer.*/![A figure.](plots\/none.png){#fig:x}/' 'plots/none.png'
# A wording chosen by a value: the span and the div whose test holds
# stay, the others go, and a test naming an unknown key stops the build.
{ good; cat <<'EOF'

It is [large]{.if test="demo.answer > 40"}[little]{.if test="demo.answer <= 40"}[strange]{.if test="demo.answer > 40 and demo.answer != 42"} here.

::: {.if test="demo.answer == 0"}
Nothing at all.
:::

::: {.if test="demo.answer >= demo.answer and 1 < 2"}
Something.
:::
EOF
} >"$work/03-if.md"
if ! render "$work/03-if.md" || ! grep -q 'It is large here' "$work/out.html" ||
    grep -qE 'little|strange|Nothing at all' "$work/out.html" || ! grep -q 'Something' "$work/out.html"; then
    cat "$work/err.txt"
    fail "the filter's .if spans and divs did not keep exactly the wordings whose tests hold"
else
    echo "  .if: the span and the div whose test holds stay, the others go"
fi
expect_failure "an .if test on an unknown key" 's/^The answer is.*/It is [x]{.if test="demo.answr > 1"}./' 'demo.answr'
# A claim asserted on the values: a .holds span whose test holds keeps
# its words; one whose test does not stops the build, and the message
# names the chapter, the test and both values.
echo 'demo.small=7' >>"$work/build/plots/data/demo.values"
{ good; printf '\n%s\n' 'It is [larger than seven]{.holds test="demo.small < demo.answer"}.'; } >"$work/04-holds.md"
if ! render "$work/04-holds.md" || ! grep -q 'It is larger than seven\.' "$work/out.html"; then
    cat "$work/err.txt"
    fail "a .holds span whose test holds did not keep its words"
else
    echo "  .holds: a span whose test holds keeps its words"
fi
{ good; printf '\n%s\n' 'It is [smaller than seven]{.holds test="demo.answer < demo.small"}.'; } >"$work/05-holds.md"
if render "$work/05-holds.md"; then
    fail "a .holds span whose test fails did not stop the filter"
elif ! grep 'ERROR' "$work/err.txt" | grep '05-holds\.md' | grep -F 'demo.answer < demo.small' |
    grep -F 'demo.answer = 42' | grep -qF 'demo.small = 7'; then
    cat "$work/err.txt"
    fail "a .holds span whose test fails stopped the filter, but the message does not name the chapter, the test and both values"
else
    echo "  a failing .holds stops the build: $(grep 'ERROR' "$work/err.txt" | head -n 1 | sed "s|$work/||g" | cut -c1-150)"
fi
expect_failure "a .holds test on an unknown key" 's/^The answer is.*/It is [x]{.holds test="demo.answr > 1"}./' 'demo.answr'

# ---------------------------------------------------------------------
# 6b. Chapter 8's prose is written for the committed long run, and the
#     comparisons it states are .holds assertions on the run's values: a
#     planted flip in the data stops the book. On a copy of
#     tools/runs/lm/reference/long whose 1-head and 16-head test losses
#     are swapped seed by seed in results.csv (its SHA256SUMS rewritten
#     with tools/runs/sums.sh, so that the manifest check does not catch
#     it first), ch8_tables remakes chapter 8's values and the book,
#     rendered with the filter (HTML), stops naming the .holds test that
#     compares the two. The unflipped copy renders first, to prove the
#     setup.
# ---------------------------------------------------------------------
ch8=chapters/08-many-heads-on-real-english.md
flip_test='ch8sweep.h16.loss < ch8sweep.h1.loss'
fb=$work/flip
mkdir -p "$fb/build/plots"
plots_abs=$(cd "$B/plots" && pwd)
for f in "$plots_abs"/*; do
    [ "${f##*/}" = data ] || ln -s "$f" "$fb/build/plots/"
done
cp -r "$plots_abs/data" "$fb/build/plots/data"
cp -r tools/runs/lm/reference/long "$fb/long"
book_sources=$(ls starter/*.c given/*.c include/*.h tests/*.c; find tools/runs -name '*.c')
book_sources=$(printf '%s\n' $book_sources | sort | tr '\n' ' ')
render_flip() { # the whole book, as make book renders it, from $fb's data
    "$B/plotdata/ch8_tables" "$fb/build/plots/data" "$fb/long" >"$fb/tables.txt" 2>&1 &&
        pandoc book.md --from=markdown --lua-filter=tools/book/book.lua \
            --metadata=builddir:"$fb/build" --metadata=chapters:"$(sh tools/mk/chapters.sh mds | tr '\n' ' ')" \
            --metadata=sources:"$book_sources" --resource-path=.:"$fb/build" \
            --to=html5 --output="$fb/out.html" 2>"$fb/err.txt"
}
if ! grep -qF "{.holds test=\"$flip_test\"}" "$ch8"; then
    fail "$ch8 asserts no '[...]{.holds test=\"$flip_test\"}', which the planted flip needs"
elif ! render_flip; then
    cat "$fb/tables.txt" "$fb/err.txt"
    fail "the book did not render from an unchanged copy of the long run"
else
    awk -F, -v OFS=, 'NR == FNR { if ($2 == 1 && $3 == 1) one[$5] = $9; if ($2 == 16 && $3 == 16) sixteen[$5] = $9; next }
        $2 == 1 && $3 == 1 && ($5 in sixteen) { $9 = sixteen[$5] }
        $2 == 16 && $3 == 16 && ($5 in one) { $9 = one[$5] } 1' \
        "$fb/long/results.csv" "$fb/long/results.csv" >"$fb/results.csv"
    mv "$fb/results.csv" "$fb/long/results.csv"
    sh tools/runs/sums.sh write "$fb/long" >/dev/null
    if ! sh tools/runs/sums.sh check "$fb/long" >"$fb/sums.txt" 2>&1; then
        cat "$fb/sums.txt"
        fail "the flipped copy of the long run does not pass its own rewritten manifest"
    elif cmp -s "$fb/long/results.csv" tools/runs/lm/reference/long/results.csv; then
        fail "the planted flip changed nothing in results.csv"
    elif render_flip; then
        fail "the book rendered from a long run whose 1-head and 16-head test losses are swapped"
    elif ! grep 'ERROR' "$fb/err.txt" | grep -F "${ch8##*/}" | grep -qF "'$flip_test' does not hold"; then
        cat "$fb/tables.txt" "$fb/err.txt"
        fail "the swapped 1-head and 16-head test losses stopped the book, but not at the .holds test '$flip_test' of $ch8"
    else
        echo "  a flip in the committed long run stops the book: $(grep -F "'$flip_test'" "$fb/err.txt" | head -n 1 | sed "s|$PWD/||g" | cut -c1-170)"
        echo "  ($(grep -c 'does not hold' "$fb/err.txt") .holds assertion(s) of chapter 8 fail on it in all)"
    fi
fi

# ---------------------------------------------------------------------
# 7. (warning) A coding exercise ("Write `name()` ... make test") has
#    the number that name()'s stub comment in starter/ gives it.
# ---------------------------------------------------------------------
awk '/class="exercise"/ && match($0, /data-number="[0-9.]+"/) {
         num = substr($0, RSTART + 13, RLENGTH - 14); inex = 1; fn = ""; cmd = 0 }
     inex && fn == "" && match($0, /Write <code>[A-Za-z_][A-Za-z_0-9]*\(\)<\/code>/) {
         fn = substr($0, RSTART + 12, RLENGTH - 21) }
     inex && /make test/ { cmd = 1 }
     inex && /<\/div>/ { if (fn != "" && cmd) print num, fn; inex = 0 }' "$html_s" |
while read -r num fn; do
    stub=$(awk -v fn="$fn" '
        match($0, /Exercise [0-9]+\.[0-9]+/) { ex = substr($0, RSTART + 9, RLENGTH - 9) }
        $0 ~ "^[A-Za-z].*[ *]" fn "\\(" && $0 !~ /;[ \t]*$/ { print ex; exit }' starter/*.c)
    if [ -n "$stub" ] && [ "$stub" != "$num" ]; then
        echo "  warning: the book's Exercise $num is $fn(), but its stub in starter/ says Exercise $stub"
    fi
done

# (The print layout, the LaTeX logs and the figures: 72-book-print.sh.)

# ---------------------------------------------------------------------
# 9. The instructor edition's answers. Every question and exercise holds
#    a `:::: answer` (a worked answer or a teaching note), and every
#    question's answer a grading note (what a full answer holds, the
#    common wrong answers, a points split); no answer's
#    text is in the student edition, and every one is in the instructor
#    edition; every chapter says, in an instructor-only block starting
#    "In class:", how long it takes in class.
# ---------------------------------------------------------------------
flat() { tr '\n' ' ' <"$1" | tr -s ' '; }
flat "$work/student.txt" >"$work/student.flat"
flat "$work/instructor.txt" >"$work/instructor.flat"
n_ans=0
for ch in $(sh tools/mk/chapters.sh mds); do
    [ -e "$ch" ] || continue
    bad=$(awk -v f="$ch" '
        /^:::+ *(\{[^}]*\.(question|exercise)[ }]|(question|exercise) *$)/ {
            inq = 1; has = 0; graded = 0; depth = 0; start = NR; isq = $0 ~ /question/; next }
        inq && /^:::+ *(\{[^}]*\.answer[ }]|answer *$)/ { has = 1; depth++; next }
        inq && /^\*\*Grading \([0-9]+ points\)\.\*\* Full answer/ { graded = 1 }
        inq && /^:::+ *[^: ]/ { depth++; next }
        inq && /^:::+ *$/ { if (depth > 0) { depth--; next }
            if (!has) print f ":" start ": a question or exercise without a :::: answer inside it (a worked answer or teaching note)"
            else if (isq && !graded) print f ":" start ": a question whose answer has no grading note (**Grading (N points).** Full answer: ..., the common wrong answers, and a points split)"
            inq = 0 }' "$ch")
    [ -z "$bad" ] || fail "$bad"
    grep -A3 -E '^:::+ *(instructor-only|\{[^}]*\.instructor-only)' "$ch" | grep -q 'In class:' ||
        fail "$ch: no instructor-only block saying 'In class:' how long the chapter takes"
    # Each answer's paragraphs as plain text; from each, six plain words
    # in a row as a probe (words of two letters or more: a single letter
    # is usually mathematics, which the HTML renders as MathML).
    awk '/^:::+ *(\{[^}]*\.answer[ }]|answer *$)/ { ina = 1; print ""; next }
         ina && /^:::+ *$/ { ina = 0; print ""; next }
         ina' "$ch" | pandoc -f markdown -t plain --wrap=none 2>/dev/null |
        awk '{ n = 0; for (i = 1; i <= NF; i++) { if ($i ~ /^[A-Za-z][A-Za-z]+,?$/) { w[++n] = $i; if (n == 6) break } else n = 0 }
               if (n == 6) print w[1], w[2], w[3], w[4], w[5], w[6] }' >"$work/probes.txt"
    while read -r probe; do
        n_ans=$((n_ans + 1))
        grep -qF -- "$probe" "$work/student.flat" && fail "$ch: answer text is in the student edition: '$probe'"
        grep -qF -- "$probe" "$work/instructor.flat" || fail "$ch: answer text is missing from the instructor edition: '$probe'"
    done <"$work/probes.txt"
done
echo "  answers: $n_ans answer paragraphs probed in both editions"

# ---------------------------------------------------------------------
# 10. A failure points at its exercise's section in the rendered book
#     (the runner's "Next:" line, build/book.html#id): every section that
#     build/exercises.tsv names has a heading of that number in the
#     student edition, with the same title.
# ---------------------------------------------------------------------
make --no-print-directory -s B="$B" "$B/exercises.tsv" >/dev/null 2>&1 || fail "make $B/exercises.tsv"
n_sec=0
cut -f3 "$B/exercises.tsv" | sort -u >"$work/sections"
while read -r num title; do
    n_sec=$((n_sec + 1))
    id=$(grep -o "<h2 data-number=\"$num\" id=\"[^\"]*\"" "$html_s" | head -n 1 | sed 's/.*id="//; s/"$//')
    if [ -z "$id" ]; then fail "$html_s has no section $num (\"$title\"), which build/exercises.tsv names"; continue; fi
    flat=$(awk -v id="$id" 'index($0, "id=\"" id "\"") { p = 1 } p { print } p && /<\/h2>/ { exit }' "$html_s" |
        sed 's/<[^>]*>//g' | tr '\n' ' ' | sed 's/&amp;/\&/g; s/  */ /g')
    case "$flat" in *"$title"*) ;; *) fail "section $num in $html_s (#$id) is not \"$title\": $flat" ;; esac
done <"$work/sections"
echo "  exercises' sections: $n_sec found in $html_s by number, with their titles"

# ---------------------------------------------------------------------
# The run drivers write numbers only (issue 36): every value chapters 5
# and 6 read from their runs is a number or a 0/1 flag, and the words the
# numbers choose between are the chapters' own .if alternatives, which a
# writer edits without touching C.
# ---------------------------------------------------------------------
n_val=0
for f in "$B/plots/data/ch5.values" "$B/plots/data/ch6_kv.values"; do
    if [ ! -s "$f" ]; then fail "$f is missing or empty"; continue; fi
    n_val=$((n_val + $(grep -c '=' "$f")))
    words=$(grep -v '^#' "$f" | grep -v -E '^[A-Za-z0-9_.]+=-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$' | head -n 3)
    [ -z "$words" ] || fail "$f holds values that are not numbers (the chapter should choose its words with .if): $words"
done
echo "  chapters 5 and 6: $n_val values from the runs, every one a number"

# ---------------------------------------------------------------------
# 11. Every chapter ends with a summary, and every figure is named by the
#     text around it (issue 49).
#     A chapter's last section is "## Summary": it names, in code font,
#     every exercise function that the registry
#     (tools/harness/exercises.def) lists for the chapter, and quotes at
#     least one value from the runs ([]{.value key=...}). The chapters in
#     SUMMARY_LATER have none yet (chapter 8's comes with its rewrite); one
#     of them that has a "## Summary" is checked all the same.
#     Every figure is referred to (@fig:x, a link to it in the HTML) from
#     its own chapter of the student edition, outside its own caption.
#     Each check is first shown to fail on a planted case.
# ---------------------------------------------------------------------
SUMMARY_LATER="8"
registry_functions() { # registry_functions N: chapter N's exercise functions, one a line
    sed -n 's/^KIT_EXERCISE( *[0-9][0-9]* *, *\([0-9][0-9]*\) *, *\([A-Za-z_][A-Za-z_0-9]*\) *,.*/\1 \2/p' \
        tools/harness/exercises.def | awk -v n="$1" '$1 == n { print $2 }'
}
summary_problems() { # summary_problems FILE N: what FILE's summary lacks, a line each
    awk -v f="$1" -v fns="$(registry_functions "$2" | tr '\n' ' ')" '
        /^(```|~~~)/ { fence = !fence }
        fence { next }
        /^##? / { last = $0; insum = 0 }
        /^## Summary *(\{[^}]*\})? *$/ { insum = 1; found = 1; next }
        insum { text = text " " $0 }
        END {
            if (!found) { print f ": no section \"## Summary\" at the end of the chapter"; exit }
            if (last !~ /^## Summary/)
                print f ": \"## Summary\" is not the last section of the chapter (\"" last "\" comes after it)"
            n = split(fns, fn, " ")
            for (i = 1; i <= n; i++)
                if (index(text, "`" fn[i] "()`") == 0 && index(text, "`" fn[i] "`") == 0)
                    print f ": its Summary does not name `" fn[i] "()`, an exercise of the chapter in tools/harness/exercises.def"
            if (text !~ /\{\.value key=/)
                print f ": its Summary quotes no value from the runs ([]{.value key=...})"
        }' "$1"
}
unnamed_figures() { # unnamed_figures HTML: the figures no text of their chapter refers to
    awk '
        /<h1[ >]/ { ch++ }
        match($0, /<figure id="fig:[^"]*"/) {
            cur = substr($0, RSTART + 12, RLENGTH - 13); at[cur] = ch; figs[++n] = cur }
        { line = $0
          while (match(line, /href="#fig:[^"]*"/)) {
              id = substr(line, RSTART + 7, RLENGTH - 8)
              if (id != cur) named[id, ch] = 1
              line = substr(line, RSTART + RLENGTH) } }
        /<\/figure>/ { cur = "" }
        END { for (i = 1; i <= n; i++) if (!((figs[i], at[figs[i]]) in named)) print figs[i] }' "$1"
}

# The planted cases: chapter 1 with one function left out of its
# Summary, with its values typed in, and without its "## Summary"
# heading; a chapter whose second figure is named only by its own
# caption.
ch1=$(sh tools/mk/chapters.sh mds | head -n 1)
fn1=$(registry_functions 1 | head -n 1)
if [ -n "$fn1" ] && [ -e "$ch1" ]; then
    sed "/^## Summary/,\$ s/\`$fn1()\`/the first function/" "$ch1" >"$work/sum-nofn.md"
    got=$(summary_problems "$work/sum-nofn.md" 1)
    case "$got" in
        *"does not name \`$fn1()\`"*) echo "  a Summary that leaves out $fn1() fails: $(printf '%s\n' "$got" | sed "s|$work/||" | head -n 1)" ;;
        *) fail "the summary check passed chapter 1 with $fn1() left out of its Summary: '$got'" ;;
    esac
    sed '/^## Summary/,$ s/\[\]{\.value key="[^"]*"}/17/g' "$ch1" >"$work/sum-novalue.md"
    got=$(summary_problems "$work/sum-novalue.md" 1)
    case "$got" in
        *"quotes no value"*) echo "  a Summary whose numbers are typed, not values from the runs, fails" ;;
        *) fail "the summary check passed chapter 1's Summary with its values typed in: '$got'" ;;
    esac
    sed '/^## Summary/d' "$ch1" >"$work/sum-noheading.md"
    got=$(summary_problems "$work/sum-noheading.md" 1)
    case "$got" in
        *'no section "## Summary"'*) echo "  a chapter without its Summary heading fails: $(printf '%s\n' "$got" | sed "s|$work/||" | head -n 1)" ;;
        *) fail "the summary check passed chapter 1 with its \"## Summary\" heading removed: '$got'" ;;
    esac
else
    fail "no chapter 1, or no exercise of it in tools/harness/exercises.def, to plant a mistake in"
fi
printf '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>\n' >"$work/build/demo.svg"
printf '%s\n' '# Figures {#ch:figs}' '' '![The first.](demo.svg){#fig:demo-one}' '' \
    'As @fig:demo-one shows, the first is named.' '' \
    '![The second, which only @fig:demo-two itself names.](demo.svg){#fig:demo-two}' >"$work/04-figs.md"
if ! render "$work/04-figs.md"; then
    cat "$work/err.txt"
    fail "the filter failed on the chapter of the planted figures"
elif [ "$(unnamed_figures "$work/out.html" | tr '\n' ' ')" != "fig:demo-two " ]; then
    fail "the figure check did not find exactly the planted unnamed figure (fig:demo-two): '$(unnamed_figures "$work/out.html" | tr '\n' ' ')'"
else
    echo "  a figure no sentence names fails: fig:demo-two (its own caption does not count)"
fi

# The book.
n_sum=0
for ch in $(sh tools/mk/chapters.sh mds); do
    [ -e "$ch" ] || continue
    num=$(basename "$ch" | sed 's/^0*\([0-9][0-9]*\)-.*/\1/')
    case " $SUMMARY_LATER " in
        *" $num "*) grep -q '^## Summary' "$ch" || continue ;;
    esac
    bad=$(summary_problems "$ch" "$num")
    if [ -n "$bad" ]; then
        fail "$bad"
        continue
    fi
    for html in "$html_s" "$html_i"; do
        grep -Eq "<h2 data-number=\"$num\\.[0-9]+\" id=\"summary(-[0-9]+)?\">(<span[^>]*>[0-9.]+</span> )?Summary</h2>" "$html" ||
            fail "$ch: its Summary is not a section of chapter $num in $html"
    done
    n_sum=$((n_sum + 1))
done
echo "  summaries: $n_sum chapter(s) end with one that names every exercise of the chapter and quotes the runs (not yet: chapter(s) $SUMMARY_LATER)"
unnamed=$(unnamed_figures "$html_s")
n_fig=$(grep -c '<figure id="fig:' "$html_s" || true)
if [ -n "$unnamed" ]; then
    fail "figures no sentence of their chapter refers to (write @fig:x where the text says what to see in it): $(printf '%s\n' "$unnamed" | tr '\n' ' ')"
else
    echo "  figures: all $n_fig are referred to from the text of their chapter"
fi

exit $status
