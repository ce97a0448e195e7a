#!/bin/sh
# exercises.sh: list the book's coding exercises, one per line, tab-separated:
#   function  exercise-number  "section-number title"  chapter-file  student-file
# from each chapter's prose, chapters/NN-slug.md, as chapters/chapters.tsv
# lists them (numbered by the table's chapter numbers, sections as pandoc
# --number-sections numbers them: "## " headings), and starter/*.c (the
# file that defines the function). The test runner's progress view reads
# it to name the next exercise and the section to read.
set -eu
nums=$(sh tools/mk/chapters.sh nums)
for n in $nums; do
    md=$(sh tools/mk/chapters.sh md "$n")
    [ -e "$md" ] || continue
    awk -v ch="$n" -v md="$md" '
        /^```/ { code = !code; next }
        code { next }
        /^## / && $0 !~ /\{[^}]*(-|\.unnumbered)[^}]*\}[ \t]*$/ {
            sec++; title = $0; sub(/^## +/, "", title); sub(/ *\{[^}]*\} *$/, "", title)
            gsub(/\$/, "", title); gsub(/\\/, "", title); next }
        /^:::+ *(\{[^}]*\.exercise[ }]|exercise *$)/ { inex = 1; ex++; fn = ""; next }
        inex && /^:::+ *$/ { if (fn != "") print fn "\t" ch "." ex "\t" ch "." sec " " title "\t" md; inex = 0; next }
        inex && fn == "" && match($0, /Write `[A-Za-z_][A-Za-z_0-9]*\(\)`/) {
            fn = substr($0, RSTART + 7, RLENGTH - 10) }' "$md"
done | while IFS="$(printf '\t')" read -r fn ex sec md; do
    src=$(grep -l "^[a-z].*[ *]$fn(" starter/*.c 2>/dev/null | head -n 1 | sed 's|^starter/||')
    printf '%s\t%s\t%s\t%s\t%s\n' "$fn" "$ex" "$sec" "$md" "${src:-?}"
done
