#!/bin/sh
# warnings.sh: with STRICT=1, fail if any student file of $IMPL compiled
# with warnings (their logs are kept next to the objects), so that an
# object compiled earlier without STRICT cannot slip through.
set -u
[ "${STRICT:-}" = 1 ] || exit 0
status=0
for log in "$OUT/$IMPL"/*.o.log; do
    [ -e "$log" ] || continue
    if grep -q 'warning:' "$log"; then
        src="$IMPL/$(basename "$log" .o.log).c"
        echo "error: $src has warnings; make check requires none (STRICT=1):"
        sed 's/^/  | /' "$log" | head -n 20
        status=1
    fi
done
exit $status
