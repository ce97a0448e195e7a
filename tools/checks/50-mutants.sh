#!/bin/bash
# The tests catch the classic mistakes, and name them.
#
# Each line of tools/mutants/*.tsv plants one classic mistake in a copy
# of the reference solutions with a sed expression, builds the tests
# against that copy, runs one test, and requires that it fails with a
# message containing the expected words. Columns (tab-separated):
#   name  file-in-solutions  sed-expression  test-name  expected-words
# Lines starting with # are comments.
set -u
B=${B:-build}
make --no-print-directory -s kit-tests IMPL=solutions || exit 1
shared=$(ls "$B"/solutions/tools/harness/*.o "$B"/solutions/tests/*.o "$B"/solutions/tools/lib/*.o)
cflags="-std=c11 -Wall -Wextra -Werror -pedantic -O2 -fopenmp -Iinclude -Itests $(pkg-config --cflags cunit 2>/dev/null)"
libs="$(pkg-config --libs cunit 2>/dev/null || echo -lcunit) -lm"
n=0 bad=0
for table in tools/mutants/*.tsv; do
    [ -e "$table" ] || continue
    while IFS=$'\t' read -r name file expr test words; do
        case "$name" in ''|'#'*) continue ;; esac
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
            o="$dir/obj/$(basename "${c%.c}").o"
            if ! ${CC:-cc} $cflags -Wno-unused-variable -Wno-unused-but-set-variable -Wno-unused-parameter -Wno-unused-function -c -o "$o" "$c" 2>"$dir/cc.log"; then
                echo "FAIL $name: the mutant does not compile:"; cat "$dir/cc.log"; bad=$((bad + 1)); continue 2
            fi
            objs="$objs $o"
        done
        ${CC:-cc} -fopenmp -o "$dir/kit_tests" $shared $objs $libs || { bad=$((bad + 1)); continue; }
        out=$("$dir/kit_tests" --impl solutions --test "$test" --timeout 5 2>&1)
        rc=$?
        if [ $rc -eq 0 ]; then
            echo "FAIL $name: test $test passes with the mistake planted"; bad=$((bad + 1))
        elif ! printf '%s\n' "$out" | grep -qiF -- "$words"; then
            echo "FAIL $name: test $test fails, but its message does not say '$words':"
            printf '%s\n' "$out" | grep -E '^ {8}' | head -3
            bad=$((bad + 1))
        else
            echo "ok   $name: $test fails and says '$words'"
        fi
    done < "$table"
done
echo "$((n - bad)) of $n planted mistakes caught and named"
[ $n -gt 0 ] && [ $bad -eq 0 ]
