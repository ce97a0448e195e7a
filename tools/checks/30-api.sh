#!/bin/bash
# starter/ and solutions/ hold the chapters' files that
# chapters/chapters.tsv lists, and no others, and both define the same
# public functions in each, so the API cannot drift between them. And
# the course stands apart from the machinery: given/, include/, starter/
# and solutions/ include nothing from tools/, and include/ declares
# nothing of given/test_hooks.h (what only the tests and grading call).
set -eu
B=${B:-build}
want=$(sh tools/mk/chapters.sh sources | sed 's/$/.c/' | sort)
for d in starter solutions; do
    have=$(cd "$d" && ls *.c | sort)
    if [ "$have" != "$want" ]; then
        echo "$d/ does not hold the files chapters/chapters.tsv lists (< the table, > $d/):"
        diff <(echo "$want") <(echo "$have") || true
        exit 1
    fi
done
a=$want
make --no-print-directory -s kit-tests IMPL=starter
make --no-print-directory -s kit-tests IMPL=solutions
status=0
for f in $a; do
    o=${f%.c}.o
    sa=$(nm -g --defined-only "$B/starter/starter/$o" | awk '{print $3}' | sort)
    sb=$(nm -g --defined-only "$B/solutions/solutions/$o" | awk '{print $3}' | sort)
    if [ "$sa" != "$sb" ]; then
        echo "$f: starter and solutions define different public functions:"
        echo "  starter:   $(echo $sa)"
        echo "  solutions: $(echo $sb)"
        status=1
    fi
done
[ $status -eq 0 ] && echo "same files and public functions in starter/ and solutions/"
if git grep -n '^ *# *include *"[./]*tools/' -- given include starter solutions; then
    echo "the course includes the files above from tools/: the machinery's files stay out of given/, include/, starter/ and solutions/"
    status=1
fi
hooks=$(sed -n 's/^[a-z].* \**\([a-z_][a-z_0-9]*\)(.*/\1/p' given/test_hooks.h)
[ "$(echo "$hooks" | wc -w)" -ge 7 ] || { echo "30-api: found only '$hooks' in given/test_hooks.h"; exit 1; }
for h in $hooks; do
    if grep -n "\b$h(" include/*.h; then
        echo "include/ declares $h() (above), which only the tests and grading call: it belongs in given/test_hooks.h"
        status=1
    fi
done
[ $status -eq 0 ] && echo "the course includes nothing from tools/, and include/ declares none of given/test_hooks.h's $(echo $hooks | wc -w) functions"
exit $status
