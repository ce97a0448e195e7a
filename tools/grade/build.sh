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
# Limits for every process of this submission's build and run (the
# worker's own are tighter: tools/harness/proxy.c): files of 64 MiB at
# most, 900 s of CPU time, set hard, so that nothing below can raise
# them; and 4 GiB of address space, hard for every run of the tests (see
# run below) but the race pass, whose ThreadSanitizer reserves terabytes
# of address space for its shadow memory.
ulimit -f $((64 << 10)) -t 900 -c 0 && ulimit -S -v $((4 << 20)) ||
    { echo "the grader could not set its limits" >"$OUT/status.txt"; exit 0; }
mkdir -p "$OUT/src" "$OUT/obj" "$OUT/log"
: >"$OUT/files.tsv"
echo "not run" >"$OUT/status.txt"
taken=""
# one line of plain ASCII, at most 300 characters (a binary file's
# bytes, quoted by the compiler, are never passed on as they are)
one_line() { LC_ALL=C tr '\t\r\n' '   ' | LC_ALL=C tr -c '\40-\176' '?' | cut -c1-300 | sed 's/ *$//'; }

# 1. Collect: each expected file, uploaded flat or in the kit's folders
#    (starter/F is preferred; otherwise the shallowest match). Only a
#    plain file is taken: a symbolic link (which could lead to any file
#    the grader can read) or anything else of that name counts as
#    missing, and says so; nothing of it is read.
while read -r f; do
    found=$(cd "$SUB" && find . -type f -name "$f" 2>/dev/null | sed 's|^\./||' |
        awk -F/ '{ print (($0 == "starter/" f0) ? 0 : NF) "\t" $0 }' f0="$f" | sort -n | head -n 1 | cut -f2)
    if [ -z "$found" ]; then
        other=$(cd "$SUB" && find . -name "$f" ! -type f 2>/dev/null | sed 's|^\./||' |
            awk -F/ '{ print NF "\t" $0 }' | sort -n | head -n 1 | cut -f2)
        why="$f was not in the submission"
        if [ -n "$other" ]; then
            what="not a plain file"
            [ -L "$SUB/$other" ] && what="a symbolic link"
            [ -d "$SUB/$other" ] && [ ! -L "$SUB/$other" ] && what="a folder"
            why="$f was not in the submission as a plain file ($(printf '%s' "$other" | LC_ALL=C tr -c '[:print:]' '?' | cut -c1-120) is $what, which is not read)"
        fi
        # (where: "-", as read splits at a run of tabs)
        printf '%s\tmissing\t-\t%s\n' "$f" "$why" >>"$OUT/files.tsv"
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
        # The compiler's first error, with its file and line, if it is in
        # the student's file, a kit header or a system header; an error in
        # any other file (one the submission tried to include) is not
        # quoted, as it would show that file's text.
        local first
        first=$(grep -a -m1 -E '^[^ ]+:[0-9]+(:[0-9]+)?: (fatal )?error' "$OUT/log/$base.cc" | sed "s|^$OUT/src/||")
        case "$first" in
        "$f":*) printf '%s\n' "$first" | one_line ;;
        "$KIT/include/"* | /usr/include/* | /usr/lib/*) printf '%s\n' "${first#"$KIT/"}" | one_line ;;
        "") if grep -a -q 'error' "$OUT/log/$base.cc"; then echo "(the compiler's message is not shown: it does not name a line of $f)"
            else echo "the compiler stopped after 60 s"; fi ;;
        *) echo "(the first error is in a file it includes that is not one of the kit's headers (include/) or the C library's; it is not shown)" ;;
        esac
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
    # The student's own lines are those at the source's own level of
    # inclusion, whatever file name a line marker gives them: a #line
    # directive ("#line 1 \"/usr/include/stdio.h\"") renames the lines
    # that follow but does not enter a header (GCC's markers say "1" on
    # entering a header and "2" on leaving it).
    bad=$(awk -v s="$src" '/^# [0-9]+ "/ {
            rest = $0; sub(/^# [0-9]+ "[^"]*"/, "", rest); nf = split(rest, fl, " ")
            if (!started) { cur = $0; sub(/^# [0-9]+ "/, "", cur); sub(/".*/, "", cur); if (cur == s) started = 1; next }
            if (nf > 0 && fl[1] == 1) depth++; else if (nf > 0 && fl[1] == 2) depth--
            next }
        started && depth == 0 && (/(^|[^A-Za-z0-9_])(__asm__|__asm|asm)([^A-Za-z0-9_]|$)/ ||
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
    # Names C reserves (__x, _X): the start-up code calls some of them
    # (__gmon_start__ runs before main when it is defined).
    bad=$(printf '%s\n' "$defs" | grep -E '^(__|_[A-Z])' | head -n 3 | tr '\n' ' ')
    [ -z "$bad" ] || { echo "refused"; echo "it defines ${bad% }, a name reserved for the C library and the start-up code (a name may not start with __ or _ and a capital); rename it or make it static"; return 1; }
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
# GATE=off skips the gate (tools/checks/75-grade.sh proves with it that
# the worker's sandbox holds on its own; never set it to grade).
while IFS=$'\t' read -r f st where why; do
    if [ "$st" = found ]; then
        if [ "${GATE:-on}" = off ]; then
            # shellcheck disable=SC2086
            verdict=$'compile\nit does not compile'
            timeout 60 $CC $CFLAGS -I"$KIT/include" -fmacro-prefix-map="$OUT/src/=starter/" \
                -c -o "$OUT/obj/${f%.c}.o" "$OUT/src/$f" >"$OUT/log/${f%.c}.cc" 2>&1 && verdict=""
        else verdict=$(gate "$f"); fi
        if [ -z "$verdict" ]; then
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

# 3. Link and run, in two parts.
#    a. The judged chapters (PREP/judged.txt): the judging process
#       (kit_judge) links the runner, the tests, the given code, the
#       kit's stubs for the other chapters and the proxies
#       (tools/harness/proxy.c), and no student code; the student's files
#       of those chapters run in a worker (kit_worker, linked statically
#       with them), sandboxed by the judge: seccomp, limits.
#    b. Any other chapter (none since chapter 5 is judged too; a kit
#       that adds a chapter without proxies): every student file linked
#       with the tests, in one process, as make test does. Their rows of
#       the table come from that run, and the gate is all that protects
#       them; the judged chapters' rows come only from (a). (Chapters 5
#       and 8 are judged through one request per call of their model:
#       their training makes hundreds of calls into chapters 1-4 and 7 per
#       step, and one round trip per call made a 0.2 s test take 0.8-5.5 s
#       under load.)
wobjs=() jstubs=() mobjs=()
while read -r f; do
    if grep -qxF "$f" "$PREP/judged-files.txt"; then wobjs+=("$OUT/obj/${f%.c}.o")
    else
        wobjs+=("$PREP/stub/${f%.c}.o") jstubs+=("$PREP/stub/${f%.c}.o")
    fi
    mobjs+=("$OUT/obj/${f%.c}.o")
done <"$PREP/files.txt"
cunit=$(pkg-config --libs cunit 2>/dev/null || echo -lcunit)
# shellcheck disable=SC2086
if ! $CC $LDFLAGS -static -o "$OUT/kit_worker" "$PREP/judge/worker.o" "${wobjs[@]}" \
    "$PREP/kit/leakcheck.o" "$PREP"/kit/lib_*.o -lm >"$OUT/log/link-worker" 2>&1; then
    { echo -n "the files do not link: "; grep -m1 -E 'error|undefined|multiple' "$OUT/log/link-worker" | one_line; echo; } >"$OUT/status.txt"
    exit 0
fi
# shellcheck disable=SC2086
if ! $CC $LDFLAGS -o "$OUT/kit_judge" "$PREP/kit/runner.o" "$PREP"/kit/test_*.o $(sed "s|^|$PREP/|" "$PREP/judge-libs.txt") \
    "$PREP/judge/proxy.o" "$PREP/judge/leakreport.o" "${jstubs[@]}" $cunit -lseccomp -lm >"$OUT/log/link-judge" 2>&1; then
    { echo -n "the kit's judge does not link (a fault of the kit, not of the submission): "; grep -m1 -E 'error|undefined' "$OUT/log/link-judge" | one_line; echo; } >"$OUT/status.txt"
    exit 0
fi
# shellcheck disable=SC2086
if ! $CC $LDFLAGS -o "$OUT/kit_tests" "$PREP"/kit/*.o "${mobjs[@]}" \
    $cunit -lm >"$OUT/log/link" 2>&1; then
    { echo -n "the files do not link: "; grep -m1 -E 'error|undefined' "$OUT/log/link" | one_line; echo; } >"$OUT/status.txt"
    exit 0
fi
rm -f "$OUT/results.tsv" "$OUT"/results-*.tsv
# Run from OUT, where starter/ leads to the student's files, so that a
# message quoting a line of starter/F finds it. The output is kept up to
# OUTPUT_CAP bytes per run (and the worker's up to KIT_OUTPUT_CAP per
# test); the rest is counted, not kept.
ln -sfn src "$OUT/starter"
OUTPUT_CAP=${OUTPUT_CAP:-1048576}
capped() { # capped FILE: stdin to FILE, up to OUTPUT_CAP bytes, and a note
    LC_ALL=C awk -v cap="$OUTPUT_CAP" '{ n += length($0) + 1; if (n <= cap) print; else cut += length($0) + 1 }
        END { if (cut) printf "[grade: %d more bytes of output were cut]\n", cut }' >"$1"
}
# The hidden cases' seed (tests/kit_test.h): drawn now, kept with the
# results, so that replaying the published golden values gains nothing.
KIT_HIDDEN_SEED=${KIT_HIDDEN_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export KIT_HIDDEN_SEED
echo "$KIT_HIDDEN_SEED" >"$OUT/hidden_seed"
start=$(date +%s)
rc=0
run() { # run NAME BINARY CHAPTER [OPTION...]: one chapter's tests, within what is left of RUN_TIMEOUT
    local left=$((RUN_TIMEOUT - ($(date +%s) - start)))
    local name=$1 bin=$2 ch=$3
    shift 3
    [ "$left" -gt 0 ] || { rc=124; return; }
    # OMP_WAIT_POLICY=passive: OpenMP's threads sleep while they wait
    # instead of spinning, so that a test's CPU time (--cpu-time) depends
    # less on how busy the machine is (gpt_threads_identical, beside
    # three busy loops: 0.45 s of CPU spinning, 0.38 s passive).
    # ulimit -t: code run before main() (which the gate refuses, but a
    # process of it would start without a test's limit) gets the run's
    # CPU time at most. Nothing the run started outlives it: once the
    # runner has ended, whatever still runs the same program (a process
    # it forked) is killed, which also closes the log's pipe (in
    # grade-all, bubblewrap's namespace ends the rest).
    local as=$((4 << 20))
    [ "$name" = race ] && as=unlimited
    (cd "$OUT" && ulimit -t "$left" && { [ "$as" = unlimited ] && ulimit -S -v unlimited || ulimit -v "$as"; } &&
        OMP_WAIT_POLICY=passive KIT_WORKER="$OUT/kit_worker" timeout -k 5 "$left" "$bin" --impl starter --quiet \
            --chapter "$ch" --cpu-time --timeout "$TEST_TIMEOUT" --results "$OUT/results-$name-$ch.tsv" \
            "$@" > >(capped "$OUT/log/run-$name-$ch") 2>&1
        r=$?
        pkill -KILL -f "^$bin " 2>/dev/null
        [ -z "${!:-}" ] || wait "$!" 2>/dev/null # the log is whole (under set -u, $! may be unset)
        exit $r)
    local r=$?
    [ "$r" -eq 124 ] || [ "$r" -eq 137 ] && rc=$r
    return 0
}
# The chapters whose student code runs in the tests' process go first:
# their code could write into this folder, and the judged chapters'
# tables are written after them. (A process of theirs that outlives their
# run could still do so: see the README.)
chs=$(awk -F'\t' 'NR > 1 { print $1 }' "$PREP/tests.tsv" | sort -un)
for c in $chs; do grep -qx "$c" "$PREP/judged.txt" || run inproc "$OUT/kit_tests" "$c"; done
rm -f "$OUT"/results-judge-*.tsv
for c in $chs; do grep -qx "$c" "$PREP/judged.txt" && run judge "$OUT/kit_judge" "$c"; done
# The race pass (make races), after the judge: the chapters whose
# student code runs threads, again under ThreadSanitizer (prepare.sh's
# PREP/race/); a test that passed in the judge but races fails, with the
# race's message. ThreadSanitizer sees a race only in the process whose
# threads race, so here the student's code, the tests and the runner are
# one program, and it runs in kit_jail (tools/harness/jail.c): it cannot
# write, rename or remove a file, reach the network or another process,
# or leave a process behind; run as root (Gradescope), it runs as nobody.
# It runs from a folder of its own, which holds only the program and the
# student's files (starter/, for the messages' lines), and writes its
# table and its log through descriptors opened here. It gets no hidden
# seed. Its table can only fail a test that passed in the judge.
rm -f "$OUT"/results-race-*.tsv "$OUT/race-note.txt"
if [ -s "$PREP/race-cc" ] && [ -x "$PREP/judge/kit_jail" ]; then
    robjs=() rok=true
    mkdir -p "$OUT/race"
    while IFS=$'\t' read -r f st _; do
        if [ "$st" = ok ]; then
            # (its lines read starter/F, relative to the folder it runs in)
            # shellcheck disable=SC2046
            timeout 120 "$(cat "$PREP/race-cc")" $(cat "$PREP/race-cflags") -I"$KIT/include" \
                -fmacro-prefix-map="$OUT/src/=starter/" -fdebug-prefix-map="$OUT/src/=starter/" \
                -fdebug-compilation-dir=. -c -o "$OUT/race/${f%.c}.o" "$OUT/src/$f" \
                >"$OUT/log/race-${f%.c}.cc" 2>&1 || { rok=false; break; }
            robjs+=("$OUT/race/${f%.c}.o")
        else robjs+=("$PREP/race/stub_${f%.c}.o"); fi
    done <"$OUT/files.tsv"
    # shellcheck disable=SC2046
    $rok && "$(cat "$PREP/race-cc")" $(cat "$PREP/race-cflags") -o "$OUT/kit_race" $(ls "$PREP"/race/*.o | grep -v '/stub_') \
        "${robjs[@]}" $cunit -lm >"$OUT/log/link-race" 2>&1 || rok=false
    if $rok && cell=$(mktemp -d "${TMPDIR:-/tmp}/kit-race.XXXXXX"); then
        mkdir "$cell/log" && cp "$OUT/kit_race" "$cell/" && cp -r "$OUT/src" "$cell/src" &&
            ln -s src "$cell/starter" && chmod -R a+rX "$cell"
        for c in $(cat "$PREP/race-chapters.txt"); do
            left=$((RUN_TIMEOUT - ($(date +%s) - start)))
            [ "$left" -gt 0 ] || { rc=124; break; }
            (cd "$cell" && ulimit -t "$left" && ulimit -S -v unlimited &&
                env -u KIT_HIDDEN_SEED -u KIT_WORKER OMP_WAIT_POLICY=passive timeout -k 5 "$left" \
                    "$PREP/judge/kit_jail" --keep-fd 3 --keep-fd 4 -- ./kit_race --impl starter --quiet \
                    --chapter "$c" --cpu-time --timeout "$((TEST_TIMEOUT * 6))" --results-fd 3 \
                    --san-log "log/race-san-$c.log" --san-fd 4 \
                    3>"$OUT/results-race-$c.tsv" 4>"$cell/log/race-san-$c.log" \
                    > >(capped "$OUT/log/run-race-$c") 2>&1
                r=$?
                [ -z "${!:-}" ] || wait "$!" 2>/dev/null # the log is whole
                exit $r)
            r=$?
            [ "$r" -eq 124 ] || [ "$r" -eq 137 ] && rc=$r
            cp "$cell/log/race-san-$c.log" "$OUT/log/" 2>/dev/null
            [ -s "$OUT/results-race-$c.tsv" ] ||
                echo "the race pass wrote no table for chapter $c, whose tests keep the judge's verdicts (log/run-race-$c)" >>"$OUT/race-note.txt"
        done
        rm -rf "$cell"
    elif $rok; then
        echo "the race pass did not run: no temporary folder for it" >"$OUT/race-note.txt"
    else
        echo "the race pass did not run: clang could not build the files (log/race-*.cc, log/link-race)" >"$OUT/race-note.txt"
    fi
fi
# The table: the header, then each chapter's rows from its own run.
{
    head -n 1 "$PREP/tests.tsv"
    for c in $(awk -F'\t' 'NR > 1 { print $1 }' "$PREP/tests.tsv" | sort -un); do
        if grep -qx "$c" "$PREP/judged.txt"; then r="$OUT/results-judge-$c.tsv"; else r="$OUT/results-inproc-$c.tsv"; fi
        # a test that passed there and failed the race pass: the race's row
        [ -e "$r" ] && awk -F'\t' -v c="$c" -v rf="$OUT/results-race-$c.tsv" 'BEGIN {
                while ((getline line < rf) > 0) {
                    split(line, f, "\t")
                    if (f[1] == c && f[4] != "passed" && f[4] != "status") raced[f[3]] = line
                } }
            NR > 1 && $1 == c { print ($4 == "passed" && ($3 in raced)) ? raced[$3] : $0 }' "$r"
    done
} >"$OUT/results.tsv"
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "the test run was stopped after $RUN_TIMEOUT s" >"$OUT/status.txt"
elif [ "$(wc -l <"$OUT/results.tsv")" -le 1 ]; then
    echo "the test runner wrote no results" >"$OUT/status.txt"
else
    echo ran >"$OUT/status.txt"
fi
exit 0
