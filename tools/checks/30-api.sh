#!/bin/bash
# starter/ and solutions/ define the same files and the same public
# functions, so the API cannot drift between them.
set -eu
B=${B:-build}
a=$(cd starter && ls *.c | sort)
b=$(cd solutions && ls *.c | sort)
if [ "$a" != "$b" ]; then
    echo "starter/ and solutions/ hold different files:"
    diff <(echo "$a") <(echo "$b") || true
    exit 1
fi
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
