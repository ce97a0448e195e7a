#!/bin/bash
# The tests catch the classic mistakes, and name them.
#
# Each line of tests/mutants/*.tsv plants one classic mistake in a copy
# of the reference solutions with a sed expression, builds the tests
# against that copy, runs one test, and requires that it fails with a
# message containing the expected words. Columns (tab-separated):
#   name  file-in-solutions  sed-expression  test-name  expected-words
# A file given as given/NAME.c plants the mistake in a copy of that
# given file instead (a change a Question invites students to make to
# the given code), built in place of the given object.
# Lines starting with # are comments.
#
# A line whose expected words start with "none:" plants a mistake that is
# deliberately NOT in the catalogue: its test must fail, its message must
# name no classic mistake (no message may contain "Likely mistake" unless
# the output is what that mistake gives; see KIT_NAMING_MARK in
# tests/kit_test.h), and it must contain the words after "none:", if any,
# which describe the wrong output. A catalogued mistake whose message
# names a mistake without the expected words is counted as misnamed.
# A test written races:NAME runs under ThreadSanitizer, as make races
# runs it (clang, LLVM's libomp and its Archer tool; tools/mk/flags.mk):
# the mistake is a data race, which a run of the ordinary build shows
# only by chance, if ever. It must fail and be named on each of
# RACE_RUNS runs (10 unless set).
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
race_cflags="$(flag C_FLAGS) $(flag KIT_WARN) $(flag C_OPT) $openmp $(flag RACE_FLAGS) -Iinclude -Itests -include $(flag LEAKCHECK_H) $(pkg-config --cflags cunit 2>/dev/null)"
race_cc=$(flag RACE_CC)
race_runs=${RACE_RUNS:-10}
race_built=false
n=0 bad=0 named=0 misnamed=0 n_cat=0 n_none=0
for table in tests/mutants/*.tsv; do
    [ -e "$table" ] || continue
    while IFS=$'\t' read -r name file expr test words; do
        case "$name" in ''|'#'*) continue ;; esac
        if [ -n "${ONLY:-}" ] && ! printf '%s' "$name" | grep -qE -- "$ONLY"; then continue; fi
        case "$words" in none:*) n_none=$((n_none + 1)) ;; *) n_cat=$((n_cat + 1)) ;; esac
        n=$((n + 1))
        # The ordinary build, or the race pass's (races:TEST).
        runs=1 cc=${CC:-cc} mflags=$cflags sol=$B/solutions objs_shared=$shared
        run_args="--timeout 5"
        case "$test" in races:*)
            test=${test#races:} runs=$race_runs cc=$race_cc mflags=$race_cflags
            sol=$B/solutions-race
            if ! $race_built; then
                make --no-print-directory -s kit-tests IMPL=solutions RACE=1 || exit 1
                race_built=true
            fi
            objs_shared=$(ls "$sol"/tools/harness/*.o "$sol"/tests/*.o "$sol"/given/*.o)
            run_args="--timeout 60 --san-log $B/mutants/$name/race.log" ;;
        esac
        dir="$B/mutants/$name"
        rm -rf "$dir" && mkdir -p "$dir/src" "$dir/obj"
        cp solutions/*.c "$dir/src/"
        case "$file" in
        given/*) orig=$file planted="$dir/given/${file#given/}"
            mkdir -p "$dir/given" && cp "$file" "$planted" ;;
        *) orig=solutions/$file planted="$dir/src/$file" ;;
        esac
        sed -i -e "$expr" "$planted"
        if cmp -s "$orig" "$planted"; then
            echo "FAIL $name: the sed expression changed nothing in $file"; bad=$((bad + 1)); continue
        fi
        case "$file" in given/*)
            # the planted given file replaces its object among the shared
            g=$(basename "${file%.c}")
            objs_shared=$(printf '%s\n' $objs_shared | grep -vxF "$sol/given/$g.o")
            # given code is built as the Makefile builds it: no leak check
            gflags=${mflags/-include $(flag LEAKCHECK_H)/}
            if ! $cc $gflags -Igiven -Itools/harness -c -o "$dir/obj/given_$g.o" "$planted" 2>"$dir/cc.log"; then
                echo "FAIL $name: the mutant does not compile:"; cat "$dir/cc.log"; bad=$((bad + 1)); continue
            fi
            objs_shared="$objs_shared $dir/obj/given_$g.o" ;;
        esac
        objs=""
        for c in "$dir"/src/*.c; do
            base=$(basename "${c%.c}")
            if [ "$base.c" != "$file" ] && [ -e "$sol/solutions/$base.o" ]; then
                objs="$objs $sol/solutions/$base.o"  # unchanged: reuse
                continue
            fi
            o="$dir/obj/$base.o"
            if ! $cc $mflags -Wno-unused-variable -Wno-unused-but-set-variable -Wno-unused-parameter -Wno-unused-function -c -o "$o" "$c" 2>"$dir/cc.log"; then
                echo "FAIL $name: the mutant does not compile:"; cat "$dir/cc.log"; bad=$((bad + 1)); continue 2
            fi
            objs="$objs $o"
        done
        case "$sol" in *-race) link="$openmp $(flag RACE_FLAGS)" ;; *) link=$openmp ;; esac
        $cc $link -o "$dir/kit_tests" $objs_shared $objs $libs || { bad=$((bad + 1)); continue; }
        # Each run (RACE_RUNS of a race) must fail and name it; the first
        # that does not, or else the last, is judged below.
        k=0 caught=0
        while [ $k -lt $runs ]; do
            k=$((k + 1))
            out=$("$dir/kit_tests" --impl solutions --test "$test" $run_args 2>&1)
            rc=$?
            if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -qiF -- "$words"; then
                caught=$((caught + 1))
            else
                break # this run's output is the one to show
            fi
        done
        msg=$(printf '%s\n' "$out" | grep -E '^ {8}' | head -3)
        of_runs=""
        [ "$sol" != "$B/solutions" ] && of_runs=" ($caught of $runs runs under ThreadSanitizer)"
        if [ $rc -eq 0 ]; then
            echo "FAIL $name: test $test passes with the mistake planted$of_runs"; bad=$((bad + 1))
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
                echo "FAIL $name: test $test fails, but its message does not say '$words'$of_runs:"
            fi
            printf '%s\n' "$msg"
            bad=$((bad + 1))
        else
            echo "ok   $name: $test fails and says '$words'$of_runs"; named=$((named + 1))
        fi
    done < "$table"
done
echo "$((n - bad)) of $n planted mistakes behave as their line says"
if [ $n_cat -gt 0 ]; then
    echo "named: $named of $n_cat catalogued mistakes ($((100 * named / n_cat))%); misnamed: $misnamed of $n planted ($n_none of them deliberately not in the catalogue)"
fi
[ $n -gt 0 ] && [ $bad -eq 0 ]
