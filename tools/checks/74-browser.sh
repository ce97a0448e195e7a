#!/bin/sh
# The HTML book in a real browser: Debian's Chromium, headless, opens
# $(B)/book.html and tools/book/browser_check.js checks that every image
# loaded with a natural size, the MathML is laid out as mathematics, no
# console or browser error appeared, no table is wider than the column
# and a figure enlarges on click; it saves a screenshot of the title page
# and of each chapter's first screen under $(B)/browser/<edition>/, for
# both editions.
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
exit $status
