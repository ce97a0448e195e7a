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
# The registry of exercise functions (tools/harness/exercises.def), from
# which grading's judge and worker (proxy.c, worker.c) are generated:
# registry.c compiles only if each line's arguments are its function's
# signature in include/ and no two lines share a request number, and
# prints each exercise's chapter and name; those are exactly the
# functions starter/ defines, each in the file of its chapter (chN_*.c).
# (starter/ is the exact list: include/'s headers mark their exercises in
# prose, not in a form a check can read.)
flag() { sed -n "s/^$1 *:= *//p" tools/mk/flags.mk; }
kflags="$(flag C_FLAGS) $(flag KIT_WARN) $(flag C_OPT) $(flag OPENMP) -Iinclude -Itests -Itools/harness"
mkdir -p "$B/registry"
# shellcheck disable=SC2086
if ! ${CC:-cc} $kflags -o "$B/registry/kit_registry" tools/harness/registry.c; then
    echo "tools/harness/exercises.def does not match include/ (above): a line's arguments are not its function's signature, it names a function include/ does not declare, or two lines share a number"
    status=1
elif ! reg=$("$B/registry/kit_registry"); then
    echo "tools/harness/registry.c: a request of the registry has no number"
    status=1
else
    reg=$(printf '%s\n' "$reg" | awk '{ print $1, $2 }' | sort)
    def=$(for f in $a; do
        c=${f#ch}
        nm -g --defined-only "$B/starter/starter/${f%.c}.o" |
            awk -v c="${c%%_*}" '$2 == "T" || $2 == "W" { print c, $3 }'
    done | sort)
    if [ "$reg" != "$def" ]; then
        echo "tools/harness/exercises.def does not list exactly the functions starter/ defines (chapter and name; < the registry, > starter/):"
        diff <(echo "$reg") <(echo "$def") || true
        status=1
    else
        echo "the registry (tools/harness/exercises.def) lists exactly the $(echo "$def" | wc -l) functions starter/ defines, each in its chapter, with include/'s signatures"
    fi
fi
# The judge's proxies and the worker, generated from it, compile.
for w in proxy worker; do
    # shellcheck disable=SC2086
    ${CC:-cc} $kflags -fsyntax-only "tools/harness/$w.c" ||
        { echo "tools/harness/$w.c does not compile from the registry (above)"; status=1; }
done
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
