#!/bin/sh
# The HTML book in a real browser: Debian's Chromium, headless, opens
# $(B)/book.html and tools/book/browser_check.js checks that every image
# loaded with a natural size, the MathML is laid out as mathematics, no
# console or browser error appeared, no table is wider than the column
# and a figure enlarges on click; it saves a screenshot of the title page
# and of each chapter's first screen under $(B)/browser/<edition>/, for
# both editions. Then tools/checks/figure-text.js opens each figure's SVG
# on its own, at the width the student edition shows it at the book's
# default width, and fails when any of its text renders under 10 CSS px
# (the smallest size its PDF prints, tools/book/fontsizes.c, times the
# shown scale of its glyphs) or the image does not keep the SVG's
# proportions; a planted SVG with a 5 pt label must be caught first.
# Without Chromium (make deps-dev installs it) or node, the step says so
# and exits 77: tools/checks/run.sh reports it as SKIPPED, never as passed.
set -eu
B="${B:-build}"
chrome=""
for c in /usr/bin/chromium /usr/bin/chromium-browser; do
    if [ -x "$c" ]; then chrome=$c; break; fi
done
if [ -z "$chrome" ]; then
    echo "  SKIPPED: Chromium is not installed (make deps-dev installs Debian's chromium); the browser check did not run"
    exit 77
fi
if ! command -v node >/dev/null 2>&1; then
    echo "  SKIPPED: node is not installed; the browser check did not run"
    exit 77
fi
echo "  $($chrome --version 2>/dev/null | head -n 1), headless"
rm -rf "$B/browser"
status=0
for ed in student instructor; do
    make --no-print-directory -s B="$B" book-html EDITION=$ed >/dev/null
    html="$B/book.html"
    [ "$ed" = instructor ] && html="$B/book-instructor.html"
    echo "  $html:"
    node tools/book/browser_check.js "$html" "$B/browser/$ed" "$chrome" || status=1
done

# Each figure's text, opened on its own at its shown width.
make --no-print-directory -s B="$B" book-html EDITION=student >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -std=c11 -O2 -o "$work/fontsizes" tools/book/fontsizes.c -lz -lm || { echo "  FAIL: tools/book/fontsizes.c does not build"; exit 1; }
for svg in "$B"/plots/*.svg; do
    pdf=${svg%.svg}.pdf
    [ -s "$pdf" ] || continue
    echo "$svg $("$work/fontsizes" "$pdf" | awk '{ print $NF }')"
done >"$work/sizes"
cat >"$work/planted.gp" <<EOF
fig_w = 8; fig_h = 5
load "plots/common.gp"
unset key; unset tics; unset border
set label 1 "planted" at graph 0.5, 0.5 font ",5"
set label 2 "default" at graph 0.5, 0.2 font ",9"
plot [0:1] [0:1] NaN
EOF
gnuplot -e "outfile='$work/planted.pdf'" "$work/planted.gp" &&
    pdftocairo -svg "$work/planted.pdf" "$work/planted.svg" || { echo "  FAIL: the planted figure"; exit 1; }
node tools/checks/figure-text.js "$B/book.html" "$chrome" "$work/sizes" "$work/planted.svg" \
    "$("$work/fontsizes" "$work/planted.pdf" | awk '{ print $NF }')" || status=1
exit $status
