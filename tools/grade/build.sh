#!/bin/bash
# build.sh SUBMISSION OUT PREP KIT: collect a student's files, gate each,
# link them with the kit's own objects (from prepare.sh) and run the
# tests. This is the part that touches the student's code; make grade-all
# runs it inside a bubblewrap sandbox. It writes into OUT:
#   src/       the student's chN_*.c, the only files taken
#   files.tsv  one line per expected file: name, status (ok, missing,
#              compile, refused), where it was found, and why
#   ignored.txt  the other files of the submission, which are not graded
#   results.tsv  the runner's table (written by the runner's parent)
#   status.txt   "ran", or why the tests could not run
# A file that is missing, does not compile or is refused is replaced by
# its stub, so the other chapters are still graded.
set -u
export LC_ALL=C # the compiler's messages in plain ASCII
SUB=$1 OUT=$2 PREP=$3 KIT=$4
CC=${CC:-cc}
TEST_TIMEOUT=${TEST_TIMEOUT:-5}   # seconds per test (the runner's limit)
RUN_TIMEOUT=${RUN_TIMEOUT:-300}   # seconds for the whole run
CFLAGS=$(cat "$PREP/student-cflags") # as the Makefile builds a student's file
LDFLAGS=$(cat "$PREP/ldflags")
mkdir -p "$OUT/src" "$OUT/obj" "$OUT/log"
: >"$OUT/files.tsv"
echo "not run" >"$OUT/status.txt"
taken=""
one_line() { tr '\t\r\n' '   ' | cut -c1-600; }

# 1. Collect: each expected file, uploaded flat or in the kit's folders
#    (starter/F is preferred; otherwise the shallowest match).
while read -r f; do
    found=$(cd "$SUB" && find . -type f -name "$f" 2>/dev/null | sed 's|^\./||' |
        awk -F/ '{ print (($0 == "starter/" f0) ? 0 : NF) "\t" $0 }' f0="$f" | sort -n | head -n 1 | cut -f2)
    if [ -z "$found" ]; then
        printf '%s\tmissing\t\t%s\n' "$f" "$f was not in the submission" >>"$OUT/files.tsv"
        continue
    fi
    cp "$SUB/$found" "$OUT/src/$f"
    taken="$taken|$found"
    printf '%s\tfound\t%s\t\n' "$f" "$found" >>"$OUT/files.tsv"
done <"$PREP/files.txt"
(cd "$SUB" && find . -type f | sed 's|^\./||' | sort) | awk -v t="$taken|" 'index(t, "|" $0 "|") == 0' >"$OUT/ignored.txt"

# 2. Gate: compile with the kit's headers only, then inspect the object.
gate() { # gate FILE: prints nothing and succeeds, or prints why not
    local f=$1 src="$OUT/src/$1" obj="$OUT/obj/${1%.c}.o" base=${1%.c}
    # Only the kit's include/ is on the path; the source sits alone in
    # src/, so a header of the same name in the submission is never seen.
    # shellcheck disable=SC2086
    # (__FILE__ reads starter/F, as in the student's own tree.)
    if ! timeout 60 $CC $CFLAGS -I"$KIT/include" -fmacro-prefix-map="$OUT/src/=starter/" \
        -H -c -o "$obj" "$src" >"$OUT/log/$base.cc" 2>&1; then
        echo "compile"
        grep -m1 -E 'error|fatal' "$OUT/log/$base.cc" | sed "s|$OUT/src/||g" | one_line
        [ -s "$OUT/log/$base.cc" ] || echo "the compiler stopped after 60 s"
        return 1
    fi
    # Every header comes from the kit's include/ or the system.
    local bad
    # (Paths are made canonical first: "../tests/golden/x.h" found
    # through include/ is a path inside include/ only in name.)
    bad=$(sed -n 's/^\.\+ //p' "$OUT/log/$base.cc" | while read -r h; do readlink -f -- "$h" || echo "$h"; done |
        awk -v k="$(readlink -f "$KIT/include")/" -v lc="$(readlink -f "$KIT/tools/harness/leakcheck.h")" \
            'index($0, k) != 1 && $0 != lc && $0 !~ "^/usr/(include|lib)/"' | head -n 1)
    [ -z "$bad" ] || { echo "refused"; echo "it includes $bad; a submission may include only the kit's headers (include/) and the C library's"; return 1; }
    # No assembly and no pragmas in the student's own lines, except
    # OpenMP's (#pragma omp ...: chapter 7 splits its loops across threads).
    # shellcheck disable=SC2086
    timeout 60 $CC $CFLAGS -I"$KIT/include" -E -o "$OUT/log/$base.i" "$src" 2>/dev/null
    bad=$(awk -v s="$src" '/^# [0-9]+ "/ { cur = $3; gsub(/"/, "", cur); next }
        cur == s && (/(^|[^A-Za-z0-9_])(__asm__|__asm|asm)([^A-Za-z0-9_]|$)/ ||
                     (/^[ \t]*#[ \t]*pragma/ && !/^[ \t]*#[ \t]*pragma[ \t]+omp([ \t]|$)/)) { print NR; exit }' "$OUT/log/$base.i")
    [ -z "$bad" ] || { echo "refused"; echo "it uses inline assembly or a #pragma other than OpenMP's, which a submission may not"; return 1; }
    # No code that runs before main() or after it: no constructors.
    bad=$(objdump -h "$obj" | awk '{ print $2 }' | grep -E '^\.(init_array|fini_array|preinit_array|ctors|dtors|init|fini)($|\.)' | head -n 1)
    [ -z "$bad" ] || { echo "refused"; echo "it has code that runs outside the tests (a constructor or destructor, section $bad)"; return 1; }
    # No indirect function (ifunc): its resolver runs while the program
    # loads, in the runner's parent, like a constructor.
    bad=$(nm "$obj" | awk '$2 == "i" { print $3; exit }')
    [ -z "$bad" ] || { echo "refused"; echo "it defines $bad as an indirect function (ifunc), whose resolver runs outside the tests"; return 1; }
    # Calls only what computing needs: no files, processes or signals.
    bad=$(nm -u "$obj" | awk '{ print $NF }' | grep -vxF -f "$PREP/allowed.txt" | sort -u | head -n 5 | tr '\n' ' ')
    [ -z "$bad" ] || { echo "refused"; echo "it calls ${bad% }, which a submission may not use: only arithmetic, memory functions and printf are allowed (debugging output to stderr or a file must go before you submit)"; return 1; }
    # Defines nothing that the kit, the C library or another file defines.
    local defs
    defs=$(nm -g --defined-only "$obj" | awk 'NF == 3 { print $3 }' | sort -u)
    bad=$(printf '%s\n' "$defs" | grep -xF -f "$PREP/forbidden.txt" | head -n 3 | tr '\n' ' ')
    [ -z "$bad" ] || { echo "refused"; echo "it defines ${bad% }, a name the kit or the C library already uses; rename it or make it static"; return 1; }
    for other in "$PREP"/stub/*.globals; do
        [ "$other" = "$PREP/stub/$base.globals" ] && continue
        bad=$(printf '%s\n' "$defs" | grep -xF -f "$other" | head -n 3 | tr '\n' ' ')
        [ -z "$bad" ] || { echo "refused"; echo "it defines ${bad% }, which belongs to $(basename "$other" .globals).c; make your copy static or remove it"; return 1; }
    done
    bad=$(grep -vxF -f <(printf '%s\n' "$defs") "$PREP/stub/$base.globals" | head -n 3 | tr '\n' ' ')
    [ -z "$bad" ] || { echo "refused"; echo "it does not define ${bad% }, which the tests call"; return 1; }
    return 0
}
: >"$OUT/files.new"
while IFS=$'\t' read -r f st where why; do
    if [ "$st" = found ]; then
        if verdict=$(gate "$f"); then
            st=ok why=""
        else
            st=$(printf '%s\n' "$verdict" | head -n 1)
            why=$(printf '%s\n' "$verdict" | sed -n 2p)
            cp "$PREP/stub/${f%.c}.o" "$OUT/obj/${f%.c}.o"
        fi
    else
        cp "$PREP/stub/${f%.c}.o" "$OUT/obj/${f%.c}.o"
    fi
    printf '%s\t%s\t%s\t%s\n' "$f" "$st" "$where" "$why" >>"$OUT/files.new"
done <"$OUT/files.tsv"
mv "$OUT/files.new" "$OUT/files.tsv"

# 3. Link and run. The runner's parent writes results.tsv.
objs=()
while read -r f; do objs+=("$OUT/obj/${f%.c}.o"); done <"$PREP/files.txt"
# shellcheck disable=SC2086
if ! $CC $LDFLAGS -o "$OUT/kit_tests" "$PREP"/kit/*.o "${objs[@]}" \
    $(pkg-config --libs cunit 2>/dev/null || echo -lcunit) -lm >"$OUT/log/link" 2>&1; then
    { echo -n "the files do not link: "; grep -m1 -E 'error|undefined' "$OUT/log/link" | one_line; echo; } >"$OUT/status.txt"
    exit 0
fi
rm -f "$OUT/results.tsv"
# Run from OUT, where starter/ leads to the student's files, so that a
# message quoting a line of starter/F finds it.
ln -sfn src "$OUT/starter"
(cd "$OUT" && exec timeout -k 5 "$RUN_TIMEOUT" "$OUT/kit_tests" --impl starter --quiet \
    --timeout "$TEST_TIMEOUT" --results "$OUT/results.tsv" >"$OUT/log/run" 2>&1)
rc=$?
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "the test run was stopped after $RUN_TIMEOUT s" >"$OUT/status.txt"
elif [ ! -s "$OUT/results.tsv" ]; then
    echo "the test runner wrote no results (exit status $rc)" >"$OUT/status.txt"
else
    echo ran >"$OUT/status.txt"
fi
exit 0
