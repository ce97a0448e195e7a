#!/bin/sh
# hint.sh: make hint TEST=name, or make hint CH=N (the chapter's first
# failing test): show that test's next hint, from tests/hints/chN.txt.
# How many hints of each test were shown is kept in $B/hints/<test>, so
# each call shows the next one; after the last, the last is shown again.
# HINT=N shows hint N; make hint-reset forgets what was shown.
set -u
. tools/loop/lib.sh
check_ch
name=${TEST:-}
if [ -z "$name" ]; then
    if [ -z "${CH:-}" ]; then
        echo "make hint needs TEST=name (a test's name, see make list) or CH=N (the chapter's first failing test)."
        exit 2
    fi
    name=$(TEST= sh tools/loop/test.sh first-failure 2>/dev/null | tail -n 1)
    if [ -z "$name" ]; then
        echo "Every test of chapter $CH passes (or none could run; make test CH=$CH says which). No hint needed."
        exit 0
    fi
    echo "The first failing test of chapter $CH is $name."
fi
ch=$(test_chapter "$name") || { echo "$ch"; exit 2; }
file="tests/hints/ch$ch.txt"
# The hints of one test: paragraphs after its [name] line, up to the next.
hints=$(awk -v t="[$name]" '
    /^\[[A-Za-z_0-9]+\][ \t]*$/ { on = ($1 == t); next }
    on' "$file" 2>/dev/null)
total=$(printf '%s\n' "$hints" | awk 'BEGIN { RS = "" } NF { n++ } END { print n + 0 }')
if [ "$total" -eq 0 ]; then
    echo "Test $name has no hints yet ($file). Its failure message and the book's section are the help there is."
    exit 1
fi
mkdir -p "$B/hints"
seen_file="$B/hints/$name"
seen=$(cat "$seen_file" 2>/dev/null || echo 0)
case "$seen" in ''|*[!0-9]*) seen=0 ;; esac
if [ -n "${HINT:-}" ]; then k=$HINT; else k=$((seen + 1)); fi
case "$k" in ''|*[!0-9]*|0) k=1 ;; esac
[ "$k" -gt "$total" ] && k=$total
[ "$k" -gt "$seen" ] && echo "$k" >"$seen_file"
echo "Hint $k of $total for $name (chapter $ch):"
echo
printf '%s\n' "$hints" | awk -v k="$k" 'BEGIN { RS = ""; ORS = "\n" } NF { n++ } n == k { print; exit }' | fold -s -w 76 | sed -e 's/ *$//' -e 's/^/  /'
echo
if [ "$k" -lt "$total" ]; then
    echo "Still stuck? make hint TEST=$name shows the next one."
else
    echo "That was the last hint for $name. The test's message names what it compared;"
    echo "make test TEST=$name shows it again. (make hint TEST=$name HINT=1 shows the first again.)"
fi
