#!/bin/bash
# starter/ and solutions/ hold the chapters' files that
# chapters/chapters.tsv lists, and no others, and both define the same
# public functions in each, so the API cannot drift between them.
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
exit $status
