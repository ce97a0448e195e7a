#!/bin/sh
# cc.sh OBJECT SOURCE COMPILER-COMMAND...: compile one of the student's
# files, for the Makefile. The compiler's messages go to OBJECT.log. When
# the file does not compile, the kit says so in one line first (which
# file, which function, which chapters still run, what to do), then shows
# the compiler's message; the object is removed, so that the chapters
# that need it are skipped. Warnings are shown, under a line saying they
# stop nothing (unless STRICT=1, as make check sets: then they are errors).
set -u
obj=$1 src=$2
shift 2
log="$obj.log"
echo "  cc  $src"
# A file that is not text (an image or an archive saved under the
# source's name, a file with NUL bytes or that is not UTF-8) gets one
# line, not pages of the compiler's escaped bytes.
if [ -e "$src" ] && { ! tr -d '\000' <"$src" | cmp -s - "$src" ||
                      ! iconv -f UTF-8 -t UTF-8 "$src" >/dev/null 2>&1; }; then
    rm -f "$obj"
    echo "not C source text (binary data in $src)" >"$log"
    . tools/loop/lib.sh
    ch=$(file_chapter "$src" 2>/dev/null)
    echo "error: $src is not C source text: it holds binary data ($(wc -c <"$src" | tr -d ' ') bytes), so it cannot compile. Was another file saved under its name?${ch:+ make reset CH=$ch restores the stubs (and keeps this file in build/backups/).}"
    exit 1
fi
"$@" 2>"$log"
rc=$?
[ $rc -eq 0 ] && ! grep -q 'warning:' "$log" && exit 0 # the usual case, quickly
# The function the first message is in, from gcc's "In function 'f':".
func=$(sed -n "s/.*In function ‘\([^’]*\)’.*/\1/p; s/.*In function '\([^']*\)'.*/\1/p" "$log" | head -n 1)
where=${func:+, in $func()}
first=$(grep -a -m 1 -E ':[0-9]+:[0-9]+: (fatal )?error:' "$log" | sed 's/^[^:]*:\([0-9]*\):.*/\1/')
base=$(basename "$src" .c)
# The chapters that do not need this file still run.
others=""
for n in ${CHAPTER_NUMS:-}; do
    files=$(sh tools/mk/chapters.sh files "$n")
    case " $files " in *" $base "*) ;; *) others="$others $n" ;; esac
done
if [ $rc -ne 0 ]; then
    rm -f "$obj"
    echo
    echo "error: $src does not compile${where}${first:+ (line $first)}. Fix the first error below;"
    if [ -n "$others" ]; then
        echo "       until then the chapters that use this file are skipped, and the others still run (make test CH=$(echo $others | cut -d' ' -f1))."
    else
        echo "       every chapter uses this file, so no test can run until it compiles."
    fi
    echo "       The compiler says:"
    sed 's/^/  | /' "$log" | head -n 40
    echo
    exit 1
fi
if grep -q 'warning:' "$log"; then
    n=$(grep -c 'warning:' "$log")
    if [ "${STRICT:-}" = 1 ]; then
        rm -f "$obj"
        echo "error: $src has $n warning(s)${where}; make check requires none (STRICT=1):"
        sed 's/^/  | /' "$log" | head -n 40
        exit 1
    fi
    echo "warning: $src compiles, with $n warning(s)${where}. The tests run anyway; fix them"
    echo "         before you hand in (make check treats warnings as errors). The compiler says:"
    sed 's/^/  | /' "$log" | head -n 40
fi
exit 0
