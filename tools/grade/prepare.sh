#!/bin/bash
# prepare.sh KIT PREP: build what grading needs from the kit alone, once,
# before any student's code is compiled: the runner, the tests and
# given/ as objects (PREP/kit/), the stubs (PREP/stub/, used in place
# of a file that is missing or refused), and the symbol lists the gate
# checks each student's object against (PREP/allowed.txt, forbidden.txt).
# Nothing here reads a submission.
set -eu
# prepare.sh --stamp KIT prints the kit's stamp: a checksum of every file
# the prepared objects are built from, kept in PREP/kit-stamp, so that
# grade.sh rebuilds PREP when the kit has changed since.
kit_stamp() {
    (cd "$1" && find include tests given tools/harness tools/grade tools/mk/flags.mk \
        tools/mk/chapters.sh chapters/chapters.tsv -type f ! -name '*.o' 2>/dev/null | LC_ALL=C sort |
        while read -r f; do printf '%s\n' "$f"; cat "$f"; done
        stubs_from . && [ "$(stubs_from .)" != working ] || cat starter/*.c 2>/dev/null) | cksum
}
# The stubs (a missing or refused file's stand-in) are the committed
# starter/, never the working one, which an instructor may have solved:
# in a git checkout, HEAD's starter/ (git show HEAD:starter/F); in the
# autograder's zip, its starter/, which make autograder took from HEAD
# (it writes tools/grade/stubs-commit); in a kit that is neither (a
# copy without .git), its working starter/, with a warning, and only
# if the stubs pass no test (checked below, after their run).
# stubs_from KIT (prepare.sh --stubs-from KIT) prints where they come
# from: "git TREE" (HEAD's starter/), "zip COMMIT" or "working".
stubs_from() {
    if [ -e "$1/.git" ] && [ "$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$1" && pwd -P)" ]; then
        echo "git $(git -C "$1" rev-parse -q --verify HEAD:starter 2>/dev/null || echo none)"
    elif [ -s "$1/tools/grade/stubs-commit" ]; then echo "zip $(head -n 1 "$1/tools/grade/stubs-commit")"
    else echo working; fi
}
if [ "${1:-}" = --stamp ]; then kit_stamp "$2"; exit 0; fi
if [ "${1:-}" = --stubs-from ]; then stubs_from "$2"; exit 0; fi
KIT=$(cd "$1" && pwd)
PREP=$2
CC=${CC:-cc}
# The flags are the Makefile's, from tools/mk/flags.mk (shipped in the
# autograder zip): the kit's own code with every warning an error; the
# student's files as the Makefile builds them (STUDENT_CFLAGS): warnings
# shown, the few that are always bugs errors, the leak check forced in.
flag() { sed -n "s/^$1 *:= *//p" "$KIT/tools/mk/flags.mk"; }
OPENMP=$(flag OPENMP)
CFLAGS="$(flag C_FLAGS) $(flag KIT_WARN) $(flag C_OPT) $OPENMP"
STUDENT_CFLAGS="$(flag C_FLAGS) $(flag C_OPT) $OPENMP $(flag STUDENT_WARN) -include $KIT/$(flag LEAKCHECK_H)"
[ -n "$OPENMP" ] && [ -e "$KIT/$(flag LEAKCHECK_H)" ] ||
    { echo "prepare: $KIT/tools/mk/flags.mk is missing or incomplete" >&2; exit 1; }
CUNIT_CFLAGS=$(pkg-config --cflags cunit 2>/dev/null || true)
rm -rf "$PREP" && mkdir -p "$PREP/kit" "$PREP/stub" "$PREP/starter"
PREP=$(cd "$PREP" && pwd)
# The chapters, from the kit's table (chapters/chapters.tsv), as the
# Makefile compiles them: each test_chN.c with its number, title and
# student file; check.c with what each chapter needs (KIT_CH_NEEDS), so a
# message names only the stubs a chapter calls.
# (The table is read, and so checked, but not the files it names: the
# autograder has no solutions/ and no chapters' prose.)
chapters="sh $KIT/tools/mk/chapters.sh"
nums=$($chapters nums) || { echo "prepare: the kit's chapters/chapters.tsv is wrong (above)" >&2; exit 1; }
files=$($chapters sources)
# The stubs' sources, in PREP/starter/ (see stubs_from above).
stubs=$(stubs_from "$KIT")
for f in $files; do
    case "$stubs" in
    git*) git -C "$KIT" show "HEAD:starter/$f.c" >"$PREP/starter/$f.c" 2>/dev/null || {
        echo "prepare: starter/$f.c is not committed in $KIT, and grading takes its stub from the committed" >&2
        echo "prepare: starter/ (git show HEAD:starter/$f.c); commit the stub: git add starter/$f.c && git commit" >&2
        exit 1; } ;;
    *) [ -f "$KIT/starter/$f.c" ] && [ ! -L "$KIT/starter/$f.c" ] && cp "$KIT/starter/$f.c" "$PREP/starter/$f.c" ||
        { echo "prepare: $KIT/starter/$f.c is missing or not a plain file; grading needs the kit's stub" >&2; exit 1; } ;;
    esac
done
[ "$stubs" != working ] || echo "prepare: warning: $KIT is not a git checkout, so the stubs come from its working starter/ (a file solved there would be graded as solved when a submission lacks it); they are used only if they pass no test" >&2
needs=""
for n in $nums; do needs="$needs$n:$($chapters needs "$n");"; done
# kit_objects DIR CC FLAGS...: the runner, the tests and given/ into DIR
kit_objects() {
    local dir=$1 cc=$2 src name n defs
    shift 2
    for src in "$KIT"/tools/harness/runner.c "$KIT"/tools/harness/leakcheck.c "$KIT"/tests/*.c "$KIT"/given/*.c; do
        name=$(basename "$src" .c)
        case "$src" in */tests/*) name=test_$name ;; */given/*) name=lib_$name ;; esac
        defs=()
        case "$name" in
        test_check) defs=("-DKIT_CH_NEEDS=\"$needs\"") ;;
        test_test_ch*)
            n=${name#test_test_ch}
            defs=("-DKIT_CH_NUM=$n" "-DKIT_CH_TITLE=\"$($chapters title "$n")\""
                "-DKIT_CH_FILE=\"$($chapters file "$n")\"") ;;
        esac
        # shellcheck disable=SC2086
        $cc "$@" -I"$KIT/include" -I"$KIT/tests" -I"$KIT/tools/harness" $CUNIT_CFLAGS \
            "${defs[@]}" -c -o "$dir/$name.o" "$src" &
    done
}
# shellcheck disable=SC2086
kit_objects "$PREP/kit" "$CC" $CFLAGS
# The race pass (as make races builds it: tools/mk/flags.mk's RACE_CC
# and RACE_FLAGS): the same kit objects under ThreadSanitizer, for the
# chapters whose student code runs threads (the table's race column,
# tools/mk/chapters.sh race). Without
# RACE_CC (make deps installs it) the pass is skipped.
RACE_CC=$(flag RACE_CC)
if command -v "$RACE_CC" >/dev/null 2>&1; then
    mkdir -p "$PREP/race"
    # shellcheck disable=SC2086
    kit_objects "$PREP/race" "$RACE_CC" $CFLAGS $(flag RACE_FLAGS)
    for f in $($chapters sources); do
        $RACE_CC $STUDENT_CFLAGS $(flag RACE_FLAGS) -I"$KIT/include" -c -o "$PREP/race/stub_$f.o" "$PREP/starter/$f.c" &
    done
    # shm_open() without files, for libomp in kit_jail (race_shm.c)
    $RACE_CC $CFLAGS $(flag RACE_FLAGS) -c -o "$PREP/race/race_shm.o" "$KIT/tools/harness/race_shm.c" &
    echo "$RACE_CC" >"$PREP/race-cc"
    echo "$STUDENT_CFLAGS $(flag RACE_FLAGS)" >"$PREP/race-cflags"
    $chapters race >"$PREP/race-chapters.txt"
fi
# The judge's side of the worker (tools/harness/proxy.c), the worker's
# dispatcher (worker.c) and the leak check's message alone: build.sh links
# the judging process from these and no student code (PREP/judge/).
mkdir -p "$PREP/judge"
for w in proxy worker; do
    $CC $CFLAGS -I"$KIT/include" -I"$KIT/tests" -I"$KIT/tools/harness" \
        -c -o "$PREP/judge/$w.o" "$KIT/tools/harness/$w.c" &
done
# The race pass's cell (tools/harness/jail.c): build.sh runs the
# ThreadSanitizer program in it.
$CC $CFLAGS -o "$PREP/judge/kit_jail" "$KIT/tools/harness/jail.c" -lseccomp &
$CC $CFLAGS -DKIT_LEAK_REPORT_ONLY -I"$KIT/include" -I"$KIT/tests" -I"$KIT/tools/harness" \
    -c -o "$PREP/judge/leakreport.o" "$KIT/tools/harness/leakcheck.c" &
# Chapter 8's model in the judge: given/gpt.c with the six calls that
# run the student's code renamed kit_local_* (proxy.c's gpt_forward and
# the others send each as one request to the worker, and call these only
# when no student code would run); the judge links it in place of
# PREP/kit/lib_gpt.o (PREP/judge-libs.txt: the given objects it links, from PREP).
# shellcheck disable=SC2086
$CC $CFLAGS -Dgpt_forward=kit_local_gpt_forward -Dgpt_backward=kit_local_gpt_backward \
    -Dgpt_train_step=kit_local_gpt_train_step -Dgpt_generate=kit_local_gpt_generate \
    -Dgpt_train_steps=kit_local_gpt_train_steps -Dgpt_loss_probe=kit_local_gpt_loss_probe \
    -I"$KIT/include" -c -o "$PREP/judge/lib_gpt.o" "$KIT/given/gpt.c" &
# Chapter 5's network the same way: given/experiment.c with the six
# calls that run the student's code renamed, and given/exp_measure.c with
# exp_measure() made weak (proxy.c's wins), built without optimisation so
# that exp_run_one() calls it by name rather than a copy inlined.
# shellcheck disable=SC2086
$CC $CFLAGS -Dexp_forward=kit_local_exp_forward -Dexp_backward=kit_local_exp_backward \
    -Dexp_train_step=kit_local_exp_train_step -Dexp_train=kit_local_exp_train \
    -Dexp_evaluate=kit_local_exp_evaluate -Dexp_loss_probe=kit_local_exp_loss_probe \
    -I"$KIT/include" -c -o "$PREP/judge/lib_experiment.o" "$KIT/given/experiment.c" &
# shellcheck disable=SC2086
{ $CC $CFLAGS -O0 -I"$KIT/include" -c -o "$PREP/judge/measure.o" "$KIT/given/exp_measure.c" &&
    objcopy --weaken-symbol=exp_measure "$PREP/judge/measure.o" "$PREP/judge/lib_exp_measure.o"; } &
# The student's files: every chapter's own files (the table's files),
# as their stubs (PREP/starter/).
for f in $files; do
    $CC $STUDENT_CFLAGS -I"$KIT/include" -c -o "$PREP/stub/$f.o" "$PREP/starter/$f.c" &
done
echo "$STUDENT_CFLAGS" >"$PREP/student-cflags"
echo "$OPENMP" >"$PREP/ldflags" # build.sh links with these
wait_all() { local s=0; for p in $(jobs -p); do wait "$p" || s=1; done; return $s; }
wait_all || { echo "prepare: the kit itself does not compile (its $(case "$stubs" in git*) echo "committed stubs, HEAD:starter/" ;; *) echo "stubs, starter/" ;; esac), tests, given/ or tools/harness/)" >&2; exit 1; }
(cd "$PREP" && ls kit/lib_*.o | grep -vxE 'kit/lib_(gpt|experiment|exp_measure)\.o' &&
    printf '%s\n' judge/lib_gpt.o judge/lib_experiment.o judge/lib_exp_measure.o) >"$PREP/judge-libs.txt"
printf '%s.c\n' $files >"$PREP/files.txt"
# The chapters whose tests are judged with the student's code in the
# worker (the functions proxy.c forwards; the table's judged column), and
# their files: their points come from the judge only, never from a
# process that holds student code.
$chapters judged >"$PREP/judged.txt"
$chapters judged-files | sed 's/$/.c/' >"$PREP/judged-files.txt"
globals() { nm -g --defined-only "$@" | awk 'NF == 3 { print $3 }'; }
for o in "$PREP"/stub/*.o; do globals "$o" | sort -u >"${o%.o}.globals"; done
# What a student's file may call: a few library functions and the kit's
# API (the chapters' functions and given/, except the file writers).
{
    grep -v '^#' "$KIT/tools/grade/allowed-symbols.txt"
    # the leak check's counting wrappers, which malloc() and free() become
    printf '%s\n' kit_leak_malloc kit_leak_calloc kit_leak_realloc kit_leak_free
    cat "$PREP"/stub/*.globals
    globals $(ls "$PREP"/kit/lib_*.o | grep -v '/lib_datafile\.o$')
} | awk 'NF' | sort -u >"$PREP/allowed.txt"
# What a student's file may not define: anything the kit, the C library,
# the maths library or CUnit already defines (defining one would replace
# it in the runner, the process that keeps the score).
libs=""
# (OpenMP's runtime, libgomp, too: chapter 7 links it.)
for l in libc.so.6 libm.so.6 libgomp.so.1; do libs="$libs $($CC -print-file-name=$l)"; done
for d in $(pkg-config --variable=libdir cunit 2>/dev/null) /usr/lib/x86_64-linux-gnu /usr/lib /usr/lib64; do
    [ -e "$d/libcunit.so.1" ] && { libs="$libs $d/libcunit.so.1"; break; }
done
{
    globals "$PREP"/kit/*.o
    for l in $libs; do nm -D --defined-only "$l" | awk 'NF == 3 { sub(/@.*/, "", $3); print $3 }'; done
    # the start-up code's and the linker's names (those starting with __
    # or _ and a capital are refused by build.sh as reserved names)
    printf '%s\n' main _start _init _fini data_start _edata _end _dl_relocate_static_pie
} | sort -u >"$PREP/forbidden.txt"
# The list of tests, with each one's chapter and file: the stubs' run
# (every test fails quickly on them), kept as the template of a full run.
$CC $OPENMP -o "$PREP/stub_tests" "$PREP"/kit/*.o "$PREP"/stub/*.o \
    $(pkg-config --libs cunit 2>/dev/null || echo -lcunit) -lm
"$PREP/stub_tests" --quiet --results "$PREP/tests.tsv" >/dev/null 2>&1 || true
[ "$(wc -l <"$PREP/tests.tsv")" -gt 1 ] || { echo "prepare: the stubs' test run wrote no results" >&2; exit 1; }
# Stubs that pass a test are not stubs, wherever they come from: a
# submission without that file would be graded as solved.
solved=$(awk -F'\t' 'NR > 1 && $4 == "passed" { print $2 }' "$PREP/tests.tsv" | sort -u | tr '\n' ' ')
[ -z "$solved" ] || {
    case "$stubs" in
    git*) echo "prepare: the committed starter/ files ${solved% } pass tests (HEAD:starter/ holds solved work); grading would give their points to a submission without them" >&2
        echo "prepare: commit the unsolved stubs back (git checkout <a commit with the stubs> -- starter/ && git commit)" >&2 ;;
    zip*) echo "prepare: the autograder's starter/ files ${solved% } pass tests; rebuild it with make autograder from a kit whose committed starter/ holds the stubs" >&2 ;;
    *) echo "prepare: the working starter/ files ${solved% } pass tests, and $KIT is not a git checkout; grading would give their points to a submission without them" >&2
        echo "prepare: restore the unsolved starter/ files or grade from a git checkout of the kit" >&2 ;;
    esac
    exit 1; }
kit_stamp "$KIT" >"$PREP/kit-stamp"
echo "prepare: $(( $(wc -l <"$PREP/tests.tsv") - 1 )) tests, $(ls "$PREP"/kit | wc -l) kit objects, $(wc -l <"$PREP/files.txt") student files, $(wc -l <"$PREP/allowed.txt") callable symbols"
