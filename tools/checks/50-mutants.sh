#!/bin/bash
# The tests catch the classic mistakes, and name them.
#
# Each line of tests/mutants/*.tsv plants one classic mistake in a copy
# of the reference solutions with a sed expression, builds the tests
# against that copy, runs one test, and requires that it fails with a
# message containing the expected words. Columns (tab-separated):
#   name  file-in-solutions  sed-expression  test-name  expected-words
# Lines starting with # are comments.
#
# A line whose expected words start with "none:" plants a mistake that is
# deliberately NOT in the catalogue: its test must fail, its message must
# name no classic mistake (no message may contain "Likely mistake" unless
# the output is what that mistake gives; see KIT_NAMING_MARK in
# tests/kit_test.h), and it must contain the words after "none:", if any,
# which describe the wrong output. A catalogued mistake whose message
# names a mistake without the expected words is counted as misnamed.
# ONLY=regex runs only the mutants whose names match.
set -u
mark="Likely mistake"
B=${B:-build}
make --no-print-directory -s kit-tests IMPL=solutions || exit 1
shared=$(ls "$B"/solutions/tools/harness/*.o "$B"/solutions/tests/*.o "$B"/solutions/given/*.o)
# The Makefile's flags (tools/mk/flags.mk), every warning an error, and
# the same leak check as make test compiles into the student's files.
flag() { sed -n "s/^$1 *:= *//p" tools/mk/flags.mk; }
openmp=$(flag OPENMP)
cflags="$(flag C_FLAGS) $(flag KIT_WARN) $(flag C_OPT) $openmp -Iinclude -Itests -include $(flag LEAKCHECK_H) $(pkg-config --cflags cunit 2>/dev/null)"
libs="$(pkg-config --libs cunit 2>/dev/null || echo -lcunit) -lm"
n=0 bad=0 named=0 misnamed=0 n_cat=0 n_none=0
for table in tests/mutants/*.tsv; do
    [ -e "$table" ] || continue
    while IFS=$'\t' read -r name file expr test words; do
        case "$name" in ''|'#'*) continue ;; esac
        if [ -n "${ONLY:-}" ] && ! printf '%s' "$name" | grep -qE -- "$ONLY"; then continue; fi
        case "$words" in none:*) n_none=$((n_none + 1)) ;; *) n_cat=$((n_cat + 1)) ;; esac
        n=$((n + 1))
        dir="$B/mutants/$name"
        rm -rf "$dir" && mkdir -p "$dir/src" "$dir/obj"
        cp solutions/*.c "$dir/src/"
        sed -i -e "$expr" "$dir/src/$file"
        if cmp -s "solutions/$file" "$dir/src/$file"; then
            echo "FAIL $name: the sed expression changed nothing in $file"; bad=$((bad + 1)); continue
        fi
        objs=""
        for c in "$dir"/src/*.c; do
            base=$(basename "${c%.c}")
            if [ "$base.c" != "$file" ] && [ -e "$B/solutions/solutions/$base.o" ]; then
                objs="$objs $B/solutions/solutions/$base.o"  # unchanged: reuse
                continue
            fi
            o="$dir/obj/$base.o"
            if ! ${CC:-cc} $cflags -Wno-unused-variable -Wno-unused-but-set-variable -Wno-unused-parameter -Wno-unused-function -c -o "$o" "$c" 2>"$dir/cc.log"; then
                echo "FAIL $name: the mutant does not compile:"; cat "$dir/cc.log"; bad=$((bad + 1)); continue 2
            fi
            objs="$objs $o"
        done
        ${CC:-cc} $openmp -o "$dir/kit_tests" $shared $objs $libs || { bad=$((bad + 1)); continue; }
        out=$("$dir/kit_tests" --impl solutions --test "$test" --timeout 5 2>&1)
        rc=$?
        msg=$(printf '%s\n' "$out" | grep -E '^ {8}' | head -3)
        if [ $rc -eq 0 ]; then
            echo "FAIL $name: test $test passes with the mistake planted"; bad=$((bad + 1))
        elif [ "${words#none:}" != "$words" ]; then
            want=${words#none:}; want=${want# }
            if printf '%s\n' "$out" | grep -qiF -- "$mark"; then
                echo "FAIL $name: not a catalogued mistake, but test $test names one (misnamed):"
                printf '%s\n' "$msg"; bad=$((bad + 1)); misnamed=$((misnamed + 1))
            elif [ -n "$want" ] && ! printf '%s\n' "$out" | grep -qiF -- "$want"; then
                echo "FAIL $name: test $test names nothing, as it should, but does not say '$want':"
                printf '%s\n' "$msg"; bad=$((bad + 1))
            else
                echo "ok   $name: $test fails, names nothing${want:+, says '$want'}"
            fi
        elif ! printf '%s\n' "$out" | grep -qiF -- "$words"; then
            if printf '%s\n' "$out" | grep -qiF -- "$mark"; then
                echo "FAIL $name: test $test names a mistake, but not '$words' (misnamed):"
                misnamed=$((misnamed + 1))
            else
                echo "FAIL $name: test $test fails, but its message does not say '$words':"
            fi
            printf '%s\n' "$msg"
            bad=$((bad + 1))
        else
            echo "ok   $name: $test fails and says '$words'"; named=$((named + 1))
        fi
    done < "$table"
done
echo "$((n - bad)) of $n planted mistakes behave as their line says"
if [ $n_cat -gt 0 ]; then
    echo "named: $named of $n_cat catalogued mistakes ($((100 * named / n_cat))%); misnamed: $misnamed of $n planted ($n_none of them deliberately not in the catalogue)"
fi
[ $n -gt 0 ] && [ $bad -eq 0 ]
