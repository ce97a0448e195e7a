#!/bin/sh
# The book in print and in its prose, after 70-book built both editions:
#   1. LaTeX's log: no overfull box wider than 1 pt, no duplicate
#      anchor ("destination with the same identifier"), no undefined
#      reference; every table is set by the filter's kittable (so none
#      splits across pages);
#   2. the PDF: no page ends with a listing's file label (a label
#      stranded away from its code);
#   3. the figures: every one is a vector PDF no wider than the text,
#      printed at its natural size, and no script asks for a font under
#      7 pt (plots/*.gp: font ",N" and {/=N ...}; tools/book/diagrams/*.tex:
#      no \tiny or \scriptsize, whose sizes are under 7 pt there); and
#      no PDF draws a glyph under 7 pt, as measured in its content stream
#      by tools/book/fontsizes.c (font size x text matrix x cm), which
#      first shows it catches a planted 5 pt label; and no label is
#      clipped by the figure's edge or printed over another: in the SVG
#      pdftocairo makes of each PDF (the same page, its glyphs as paths),
#      tools/checks/figure-labels.awk finds every glyph's ink box; each must
#      lie within the page, and no two glyphs of different labels may
#      overlap, both within 0.3 pt; first shown to catch a planted label
#      half off the canvas and two planted labels on top of each other;
#   4. the prose: a step it cites ("step 2", "numbered steps") exists in
#      the edition that shows it: in that chapter's listings (a comment
#      "/* 2. ..." or " * 2. ..."), in the chapter's own text ("**Step 2**")
#      or in a heading of it ("### Step 2: ...").
# B=build/<dir> builds elsewhere (default build).
set -eu
B="${B:-build}"
. tools/checks/lib.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for ed in student instructor; do
    make --no-print-directory -s B="$B" book EDITION=$ed >"$work/make-$ed.log" 2>&1 || {
        cat "$work/make-$ed.log"
        fail "make book EDITION=$ed"
        exit 1
    }
done

# ---------------------------------------------------------------------
# 1. The LaTeX logs.
# ---------------------------------------------------------------------
for name in book book-instructor; do
    log="$B/book/$name.log"
    tex="$B/book/$name.tex"
    [ -s "$log" ] || { fail "$log is missing (did the PDF build?)"; continue; }
    # a box's width is "Overfull \hbox (12.3pt too wide)"
    over=$(grep -Eo 'Overfull \\[hv]box \([0-9.]+pt too (wide|high)\)' "$log" |
        awk -F'[(p]' '$2 + 0 > 1.0' | wc -l)
    small=$(grep -Ec 'Overfull \\[hv]box' "$log" || true)
    under=$(grep -Ec 'Underfull \\[hv]box' "$log" || true)
    warn=$(grep -Ec 'Warning' "$log" || true)
    dup=$(grep -c 'destination with the same identifier' "$log" || true)
    undef=$(grep -Ec 'Reference .* undefined|There were undefined references' "$log" || true)
    echo "  $log: $over overfull box(es) over 1 pt ($small in all), $under underfull, $warn warning(s), $dup duplicate anchor(s), $undef undefined reference(s)"
    if [ "$over" -gt 0 ]; then
        fail "$log: overfull boxes over 1 pt:"
        grep -A2 -E 'Overfull \\[hv]box \(([1-9][0-9]*\.[0-9]+|1\.[0-9]*[1-9][0-9]*)pt' "$log" | head -n 12 | sed 's/^/        /'
    fi
    [ "$dup" -eq 0 ] || fail "$log: $dup duplicate anchor(s): $(grep -A1 'destination with the same identifier' "$log" | tr -d '\n' | cut -c1-160)"
    [ "$undef" -eq 0 ] || fail "$log: undefined references"
    # every longtable sits in a kittable (a float that never splits)
    loose=$(awk '/\\begin\{kittable\}/ { k = 1 } /\\end\{kittable\}/ { k = 0 }
                 /\\begin\{longtable\}/ && !k { n++ } END { print n + 0 }' "$tex")
    tables=$(grep -c '\\begin{longtable}' "$tex" || true)
    echo "  $tex: $tables table(s), $loose outside a kittable"
    [ "$loose" -eq 0 ] || fail "$tex: $loose table(s) can split across pages (not in a kittable)"
done

# ---------------------------------------------------------------------
# 2. No page of either PDF ends with a listing's file label.
# ---------------------------------------------------------------------
for pdf in "$B/book.pdf" "$B/book-instructor.pdf"; do
    pages=$(pdfinfo "$pdf" | awk '/^Pages:/ { print $2 }')
    pdftotext -q -layout "$pdf" "$work/pages.txt"
    # pages are separated by form feeds; the running foot is the page number
    stranded=$(awk -v RS='\f' '{
            n = split($0, l, "\n"); last = ""
            for (i = n; i >= 1; i--) {
                s = l[i]; gsub(/^[ \t]+|[ \t]+$/, "", s)
                if (s == "" || s ~ /^[0-9ivxlc]+$/) continue
                last = s; break
            }
            if (last ~ /^(starter|solutions|tools|tests|include|plots)\/[A-Za-z0-9_.\/-]+$/)
                printf "page %d: %s\n", NR, last
        }' "$work/pages.txt")
    if [ -n "$stranded" ]; then
        fail "$pdf: a listing's file label ends a page, away from its code: $(echo "$stranded" | head -n 3 | tr '\n' ';')"
    else
        echo "  $pdf: $pages pages; no listing label ends a page"
    fi
done

# ---------------------------------------------------------------------
# 3. Figures: vector, no wider than the text, lettering of 7 pt or more.
# ---------------------------------------------------------------------
# The glyph sizes each PDF draws, measured (not what its script asks for).
# Every figure, the TikZ diagrams too (their sub- and superscripts are
# set at 7 bp by \DeclareMathSizes), prints 7 pt or more: no exceptions.
cc -std=c11 -O2 -o "$work/fontsizes" tools/book/fontsizes.c -lz -lm || fail "tools/book/fontsizes.c does not build"
smallest() { "$work/fontsizes" "$1" | awk '{ print $NF }'; }
# 1 when a smallest size is under 7 pt (or unreadable), else 0
under7() { awk -v g="$1" 'BEGIN { print (g == g + 0 && g >= 6.995) ? 0 : 1 }'; }
# The planted case: a figure through plots/common.gp with a 5 pt label
# must measure 5 pt (so the measure sees small type, and a declared size
# prints at that size), and the same figure at 9 pt must measure 9 pt.
for pt in 5 9; do
    cat >"$work/planted$pt.gp" <<EOF
fig_w = 8; fig_h = 5
load "plots/common.gp"
unset key; unset tics; unset border
set label 1 "planted" at graph 0.5, 0.5 font ",$pt"
set label 2 "default" at graph 0.5, 0.2 font ",9"
plot [0:1] [0:1] NaN
EOF
    gnuplot -e "outfile='$work/planted$pt.pdf'" "$work/planted$pt.gp" 2>"$work/planted.err" ||
        { cat "$work/planted.err"; fail "gnuplot: the planted $pt pt figure"; }
    got=$(smallest "$work/planted$pt.pdf" 2>/dev/null || echo none)
    want=$([ "$pt" -lt 7 ] && echo 1 || echo 0)
    if awk -v g="$got" -v p="$pt" 'BEGIN { exit !(g == g + 0 && g - p < 0.05 && p - g < 0.05) }' &&
        [ "$(under7 "$got")" = "$want" ]; then
        echo "  planted: a label declared at $pt pt prints at $got pt (tools/book/fontsizes.c): $([ "$want" = 1 ] && echo "caught, under 7 pt" || echo "passes")"
    else
        fail "planted: a label declared at $pt pt measures '$got' pt, not $pt (the measure, or plots/common.gp's fontscale, is wrong)"
    fi
done

# The planted clashes: a label half off the canvas, and two labels on top
# of each other, each beside a label that is fine.
labels() { awk -v tol=0.3 -f tools/checks/figure-labels.awk "$1"; }
for case in off over; do
    if [ $case = off ]; then
        what="a label half off the canvas"
        planted='set label 1 "half off the canvas" at screen 0.97, 0.5 left'
    else
        what="two labels on top of each other"
        planted='set label 1 "first label" at graph 0.5, 0.5 center
set label 3 "second one" at graph 0.52, 0.52 center'
    fi
    cat >"$work/$case.gp" <<EOF
fig_w = 8; fig_h = 5
load "plots/common.gp"
unset key; unset tics; unset border
$planted
set label 2 "inside" at graph 0.3, 0.2
plot [0:1] [0:1] NaN
EOF
    if ! gnuplot -e "outfile='$work/$case.pdf'" "$work/$case.gp" 2>"$work/planted.err" ||
        ! pdftocairo -svg "$work/$case.pdf" "$work/$case.svg"; then
        cat "$work/planted.err"
        fail "gnuplot: the planted '$case' figure"
        continue
    fi
    got=$(labels "$work/$case.svg" | tail -n 1)
    case "$case:$got" in
        off:*" outside "[1-9]*" overlaps 0" | over:*" outside 0 overlaps "[1-9]*)
            echo "  planted: $what: caught ($got)" ;;
        *) fail "planted: $what not caught: tools/checks/figure-labels.awk says '$got'" ;;
    esac
done

tw=$(sed -n 's/^kit-textwidth=\([0-9.]*\)pt.*/\1/p' "$B/book/book.log" | head -n 1)
[ -n "$tw" ] || { fail "the LaTeX log does not give the text width (kit-textwidth, tools/book/header.tex)"; tw=0; }
n=0
glyphs=0
sizes=
for src in plots/*.gp tools/book/diagrams/*.tex; do
    [ -e "$src" ] || continue
    name=$(basename "$src"); name=${name%.*}
    [ "$name" = common ] && continue
    n=$((n + 1))
    pdf="$B/plots/$name.pdf"
    if [ ! -s "$pdf" ] || [ ! -s "$B/plots/$name.svg" ]; then
        fail "$src: $pdf or its SVG is missing"
        continue
    fi
    # pdfinfo gives "Page size: 441.2 x 302.1 pts"; LaTeX's \textwidth is in TeX points (1/72.27 in)
    w=$(pdfinfo "$pdf" | awk '/^Page size:/ { print $3 }')
    if awk -v w="$w" -v tw="$tw" 'BEGIN { exit !(w * 72.27 / 72 > tw + 0.5) }'; then
        fail "$src: the figure is $w bp wide, wider than the text ($tw pt): it would be shrunk, and its lettering with it (set fig_w <= 16.4 cm)"
    fi
    case "$src" in
        *.gp)
            bad=$(grep -nEo 'font +"[^"]*,[0-9.]+"|\{/=[0-9.]+|fontscale +[0-9.]+|font_pt *= *[0-9.]+' "$src" |
                awk -F: '{ v = $2; sub(/.*[,=]/, "", v); sub(/^.*fontscale +/, "", v); gsub(/[^0-9.]/, "", v)
                           if ($2 ~ /fontscale/) { if (v + 0 < 1) print $1": "$2 }
                           else if (v + 0 < 7) print $1": "$2 }')
            ;;
        *.tex)
            bad=$(grep -nE '\\(tiny|scriptsize)\b' "$src" || true)
            ;;
    esac
    [ -z "$bad" ] || fail "$src: lettering under 7 pt in print: $(echo "$bad" | head -n 3 | tr '\n' ' ')"
    # figures print at natural size (above), so the PDF's sizes are the paper's
    least=$(smallest "$pdf")
    small=$(under7 "$least")
    [ "$small" = 0 ] || fail "$pdf: a glyph prints at $least pt, under 7 pt (tools/book/fontsizes.c -v $pdf lists the sizes)"
    sizes="$sizes $name=$least"
    # its labels: inside the figure, none over another
    labels "$B/plots/$name.svg" >"$work/labels" ||
        fail "$B/plots/$name.svg: tools/checks/figure-labels.awk cannot read it: $(grep unread "$work/labels" | head -n 1)"
    clash=$(tail -n 1 "$work/labels")
    case "$clash" in
        *" outside 0 overlaps 0") ;;
        *) fail "$src: a label is clipped or overlaps another ($clash): $(sed '$d' "$work/labels" | head -n 3 | tr '\n' ';')" ;;
    esac
    glyphs=$((glyphs + $(echo "$clash" | awk '{ print $2 }')))
done
echo "  smallest glyph, pt:$sizes" | fold -s -w 100
grep -Eq '^if \(!exists\("font_pt"\)\) font_pt = (7|8|9|[1-9][0-9])' plots/common.gp ||
    fail "plots/common.gp: the default font (font_pt) must be at least 7 pt"
echo "  $n figure(s): vector PDF and SVG, at most $tw pt wide, no lettering under 7 pt; $glyphs glyphs, none outside its figure or over another label (0.3 pt tolerance)"
for html in "$B/book.html" "$B/book-instructor.html"; do
    if grep -o '<img [^>]*>' "$html" | grep -q 'src="data:image/png'; then
        fail "$html: a figure is a PNG; every figure must be vector (SVG)"
    fi
done

# ---------------------------------------------------------------------
# 4. Steps cited in the prose exist in the edition that shows them.
# ---------------------------------------------------------------------
for html in "$B/book.html" "$B/book-instructor.html"; do
    # one record per chapter (split at <h1), code and prose apart
    awk -v out="$work/steps" '
        /<h1[ >]/ { ch++; name[ch] = $0; sub(/.*<h1[^>]*>/, "", name[ch]); gsub(/<[^>]*>/, "", name[ch]) }
        /<pre/ { code = 1 }
        {
            line = $0
            if (code) {
                # a numbered step in a listing: "/* 2. " or " * 2. "
                gsub(/<[^>]*>/, "", line)
                while (match(line, /(\/\*|^ *\*) *[0-9]+\. /)) {
                    s = substr(line, RSTART, RLENGTH); gsub(/[^0-9]/, "", s)
                    defined[ch, s] = 1; anydef[ch] = 1
                    line = substr(line, RSTART + RLENGTH)
                }
            } else {
                t = line; gsub(/<[^>]*>/, "", t)
                # a heading "Step 2: ..." (chapter 7) defines its step
                if (line ~ /<h[2-6][ >]/ && match(t, /Step [0-9]+/)) {
                    s = substr(t, RSTART, RLENGTH); gsub(/[^0-9]/, "", s)
                    defined[ch, s] = 1; anydef[ch] = 1
                }
                while (match(t, /[Ss]teps? [0-9]+/)) {
                    s = substr(t, RSTART, RLENGTH); gsub(/[^0-9]/, "", s)
                    if (line ~ "<strong>Step " s "</strong>") { defined[ch, s] = 1; anydef[ch] = 1 }
                    else cited[ch, s] = 1
                    t = substr(t, RSTART + RLENGTH)
                }
                if (t ~ /numbered steps/) numbered[ch] = 1
            }
            if (/<\/pre>/) code = 0
        }
        END {
            for (k in cited) { split(k, p, SUBSEP); if (!defined[p[1], p[2]]) print name[p[1]] ": cites step " p[2] }
            for (c in numbered) if (!anydef[c]) print name[c] ": refers to numbered steps"
        }' "$html" >"$work/missing"
    if [ -s "$work/missing" ]; then
        fail "$html shows no such step in that chapter's listings or text: $(sort -u "$work/missing" | head -n 5 | tr '\n' ';')"
    else
        echo "  $html: every step the prose cites is shown"
    fi
done

# ---------------------------------------------------------------------
# 5. House style in the HTML: a percentage is "70.9 %", as the prose
#    writes it (a no-break space before %), in tables as in text; an
#    image's alt text is words, not TeX.
# ---------------------------------------------------------------------
for html in "$B/book.html" "$B/book-instructor.html"; do
    glued=$(awk '/<(style|script|pre)[ >]/ { skip = 1 } !skip { print } /<\/(style|script|pre)>/ { skip = 0 }' "$html" |
        sed -e 's/<code>[^<]*<\/code>//g' -e 's/<[^>]*>//g' |
        grep -Eo '[0-9]%[^0-9A-Za-z_]' | sort -u | head -n 3 | tr '\n' ' ' || true)
    [ -z "$glued" ] || fail "$html: a percentage without its space (write 70.9\\ %): $glued"
    bare=$(grep -o '<caption><strong>Table [0-9.]*</strong></caption>' "$html" | sed 's/<[^>]*>//g' | tr '\n' ' ' || true)
    [ -z "$bare" ] || echo "  warning: $html: table(s) without a caption: $bare(give the table a 'Table: ...' line, or its .generated block a text)"
    tex=$(grep -o 'alt="[^"]*\\[A-Za-z][^"]*"' "$html" | head -n 2 | cut -c1-120 || true)
    [ -z "$tex" ] || fail "$html: an alt text holds TeX: $tex"
done

exit $status
