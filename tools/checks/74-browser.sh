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
# Last, the head explorer (make explorer, tools/explorer/): Chromium
# opens $(B)/explorer/explorer.html from the file and
# tools/checks/explorer.js compares its JavaScript forward pass with the
# C code's (lm-experiment --explore-dump: every head's weights to 1e-4,
# logits to 1e-4 of their row's largest, one head mean-ablated), times
# it (a 64-token window's full pass, median of 20, at most 150 ms),
# clicks through it (screenshots under $(B)/browser/explorer/), and must
# catch a page built with 1/sqrt(d_head) dropped; on the long run's
# committed networks, or a smoke run's while those are not committed.
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

# The head explorer, against the C code, on the committed long networks
# of 1 and 16 heads, else on a smoke run's of 1 and 4.
ew=tools/runs/lm/reference/long/weights es=long eh=1,16 er=tools/runs/lm/reference/long
if [ ! -f "$ew/h1_g1_s2017.f16" ] || [ ! -f "$ew/h16_g16_s2017.f16" ]; then
    ew=$B/lm/smoke/weights es=smoke eh=1,4 er=$B/lm/smoke
    echo "  the explorer: the long run's networks are not committed; a smoke run's instead"
    if [ ! -f "$ew/h1_g1_s2017.f16" ] || [ ! -f "$ew/h4_g4_s2017.f16" ]; then
        if [ ! -f "$er/results.csv" ] || [ ! -d "$er/models" ]; then
            make --no-print-directory -s B="$B" lm-experiment LM_SIZE=smoke IMPL=solutions >/dev/null 2>&1 ||
                { echo "  FAIL: make lm-experiment LM_SIZE=smoke IMPL=solutions"; exit 1; }
        fi
        "$B/lm/solutions/lm-experiment" --size smoke --corpus "$B/ch8/brown.bin" --pack "$er" "$ew" >/dev/null 2>&1 ||
            { echo "  FAIL: lm-experiment --size smoke --pack $er $ew"; exit 1; }
    fi
fi
make --no-print-directory -s B="$B" explorer EXPLORER_WEIGHTS="$ew" EXPLORER_SIZE=$es \
    EXPLORER_HEADS="$eh" EXPLORER_RUN="$er" >/dev/null 2>&1 || { echo "  FAIL: make explorer EXPLORER_WEIGHTS=$ew"; exit 1; }
nets="" dumps=""
for h in $(echo "$eh" | tr , " "); do
    nets="$nets --net $ew/h${h}_g${h}_s2017.f16 $B/explorer/$es/dump_h${h}_s2017.json"
    dumps="$dumps $B/explorer/$es/dump_h${h}_s2017.json"
done
# shellcheck disable=SC2086 # the lists split into arguments
node tools/explorer/build.js --plant no-scale --out "$work/planted.html" $nets >/dev/null
echo "  $B/explorer/explorer.html ($es networks of $eh heads):"
# shellcheck disable=SC2086
node tools/checks/explorer.js "$B/explorer/explorer.html" "$work/planted.html" \
    "$B/browser/explorer" "$chrome" $dumps || status=1
exit $status
