#!/bin/bash
# The student's loop, on a copy of the kit in a temporary folder:
#   - a chapter 3 file that does not compile stops neither make test CH=1
#     nor chapters 1 and 2 of make test, and the kit explains it in one
#     line (file, function) above the compiler's message;
#   - a binary file saved as a source gets one line;
#   - a kit file that does not compile stops the run in one line, and
#     the binary an older version built is never run;
#   - a warning stops nothing for a student, but fails under STRICT=1;
#   - a stub renamed by mistake: the kit names the missing function;
#   - a misspelt TEST and an unknown CH are named, with the nearest tests;
#   - make progress names the next exercise and its section in the
#     rendered book (build/book.html#id), never the raw Markdown;
#   - under SAN=1 a planted out-of-bounds read shows the sanitizer's
#     summary line and the student's line, the full report goes to a log
#     under build/, and no rerun suggestion drops or repeats SAN=1;
#   - chapter 7's race pass: once its tests pass, make test runs them
#     under ThreadSanitizer; a planted race (tests/mutants/ch7.tsv) fails
#     the run, named, and counts in its last line; the solutions' code
#     gets one line saying there is no race; beside a plain mistake, a
#     verdict that changed by itself runs the race pass, and its finding
#     stays until the code changes; without clang, one line says to run
#     make deps;
#   - make watch without inotifywait and make debug without gdb say how
#     to install them; on another system than Linux (KIT_UNAME=Darwin),
#     make test stops in one line naming the dev container; make watch on a terminal leaves with status 0 on
#     Ctrl-C and keeps its header in sight on a run taller than the screen;
#   - every target recovers (issue 53): without starter/ch3_mha.c, make
#     help works, make test runs what does not need it and names the file
#     and make reset CH=3, which brings it back; make clean with B=. (from
#     the environment), B=.. or B=starter deletes nothing; make format
#     keeps a copy of the starter/ file it changes; a test that prints
#     1 GB is stopped at 1 MiB, one that allocates 6 GiB is refused with
#     the 4 GiB limit named (both fail, the others run); SAN=yes is refused.
set -u
. tools/checks/lib.sh
has() { printf '%s\n' "$1" | grep -qF -- "$2"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kit="$work/kit"
mkdir -p "$kit"
cp -r Makefile tools tests include given starter solutions chapters "$kit/"
[ -e .clang-format ] && cp .clang-format "$kit/"
m() { make --no-print-directory -s -C "$kit" "$@" 2>&1; }
summary() { printf '%s\n' "$1" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1; }

# 1. A chapter 3 file that does not compile. What it skips, and every
#    count, come from chapters/chapters.tsv and the runner's --list, so a
#    new chapter needs no edit here.
make --no-print-directory -s kit-tests IMPL=solutions >/dev/null 2>&1
list=$("${B:-build}"/solutions/kit_tests --list 2>/dev/null)
count() { printf '%s\n' "$list" | grep -c "^ch$1 "; } # chapter N's tests
skip=""
for c in $(sh tools/mk/chapters.sh nums); do
    case " $(sh tools/mk/chapters.sh files "$c") " in *" ch3_mha "*) skip="$skip $c" ;; esac
done
skip=${skip# }
total=$(printf '%s\n' "$list" | grep -c '^ch[0-9]* ')
not_run=0
for c in $skip; do not_run=$((not_run + $(count "$c"))); done
run=$((total - not_run))
[ "$(count 1)" -gt 0 ] && [ "$(count 3)" -gt 0 ] && [ -n "$skip" ] ||
    fail "the runner's --list names no test of chapter 1 or 3, or no chapter links ch3_mha"
sed -i '0,/return KIT_E_TODO;/s//return KIT_E_TODO/' "$kit/starter/ch3_mha.c"
out=$(m test CH=1)
last=$(summary "$out")
if [ "$last" = "0 passed, $(count 1) failed" ]; then ok "a broken ch3_mha.c: make test CH=1 still runs ($last)"
else fail "a broken ch3_mha.c stops make test CH=1: $last"; fi
has "$out" "does not compile" && fail "make test CH=1 compiled ch3_mha.c, which chapter 1 does not need"
out=$(m test)
if has "$out" "error: starter/ch3_mha.c does not compile, in mha_check_config()" &&
   has "$out" "Skipping chapter(s) $skip" && has "$out" "Chapter 3  $(sh tools/mk/chapters.sh title 3)" &&
   [ "$(summary "$out")" = "0 passed, $run failed, $not_run not run (their chapters do not compile)" ] &&
   grep -q "<testsuites name=\"kit\" tests=\"$total\" failures=\"$total\">" "$kit/build/starter/junit.xml"; then
    ok "make test explains the broken file in one line, skips chapters $skip, runs the others; JUnit counts all $total"
else fail "make test with a broken ch3_mha.c:"; printf '%s\n' "$out" | head -n 12; fi
cp starter/ch3_mha.c "$kit/starter/ch3_mha.c"

# 1b. A kit file that does not compile (tests/check.c) after a run that
#     built the binary: one line says so, and the old binary is not run.
cp tests/check.c "$work/check.c.orig"
echo 'int kit_broken(' >> "$kit/tests/check.c"
out=$(m test CH=1); rc=$?
if [ $rc -ne 0 ] && has "$out" "error: the kit's own file tests/check.c does not compile" &&
   [ -z "$(summary "$out")" ] && ! printf '%s\n' "$out" | grep -qE '^  (FAIL|ok) '; then
    ok "a kit file that does not compile stops make test in one line; the old binary is not run"
else fail "make test with a broken tests/check.c (status $rc) ran something or said:"; printf '%s\n' "$out" | tail -n 4; fi
cp "$work/check.c.orig" "$kit/tests/check.c"

# 1c. A binary file saved as a source: one line, no escaped bytes, no
#     grep complaining about binary input.
head -c 200000 /dev/urandom >"$kit/starter/ch1_attention.c"
out=$(m test CH=1)
bytes=$(printf '%s' "$out" | wc -c)
if has "$out" "error: starter/ch1_attention.c is not C source text: it holds binary data" &&
   [ "$(printf '%s\n' "$out" | grep -c 'ch1_attention.c')" -le 2 ] && [ "$bytes" -lt 1000 ] &&
   ! has "$out" "binary file matches"; then
    ok "a binary file saved as starter/ch1_attention.c: one line ($bytes bytes of output)"
else fail "a binary starter/ch1_attention.c gave $bytes bytes:"; printf '%s\n' "$out" | head -c 600; echo; fi
cp starter/ch1_attention.c "$kit/starter/ch1_attention.c"

# 2. A warning: shown, not fatal; fatal under STRICT=1.
sed -i '0,/return KIT_E_TODO;/s//int unused_x; return KIT_E_TODO;/' "$kit/starter/ch3_mha.c"
out=$(m test CH=3)
if has "$out" "warning: starter/ch3_mha.c compiles, with 1 warning(s)" &&
   [ "$(summary "$out")" = "0 passed, $(count 3) failed" ]; then
    ok "a warning in ch3_mha.c is shown and the chapter's tests run"
else fail "a warning in ch3_mha.c:"; printf '%s\n' "$out" | tail -n 3; fi
out=$(m test CH=3 STRICT=1)
has "$out" "make check requires none" && ok "STRICT=1 (make check) makes the warning an error" ||
    fail "STRICT=1 let a warning through: $(printf '%s\n' "$out" | tail -n 1)"
cp starter/ch3_mha.c "$kit/starter/ch3_mha.c"

# 2b. A stub function renamed: the kit explains the linker's message.
sed -i 's/^int matmul_bt(/int matmul_bt_renamed(/' "$kit/starter/ch1_attention.c"
out=$(m test CH=1)
if has "$out" "could not be linked: no function defines matmul_bt" && has "$out" "undefined reference"; then
    ok "a renamed stub: the kit names the missing function above the linker's message"
else fail "a renamed stub function:"; printf '%s\n' "$out" | head -n 6; fi
cp starter/ch1_attention.c "$kit/starter/ch1_attention.c"

# 3. Misspelt names.
out=$(m test TEST=matmul_goldne)
if has "$out" "There is no test named 'matmul_goldne'" && has "$out" "Did you mean: matmul_golden (ch1)" &&
   ! has "$out" "CH=0"; then ok "a misspelt TEST names the nearest test"
else fail "make test TEST=matmul_goldne: $out"; fi
out=$(m test CH=9)
if has "$out" "There is no chapter '9'" && ! has "$out" "TEST=."; then ok "an unknown CH lists the chapters"
else fail "make test CH=9: $out"; fi

# 4. The progress view.
out=$(m progress)
if has "$out" "Chapter 5" && has "$out" "Next: Exercise 1.1, matmul() in starter/ch1_attention.c. Read section 1."; then
    ok "make progress shows every chapter and the next exercise with its section"
else fail "make progress: $out"; fi
# The section is in the rendered book, at the id pandoc gave its heading
# (70-book checks that every exercise's section is there, by number).
sec=$(printf '%s\n' "$out" | sed -n 's/^Next: .* Read section \([0-9.]*\), .*/\1/p')
if has "$out" "in the book: make book-html, then open build/book.html at section $sec." &&
   ! has "$out" "chapters/"; then ok "without the book, the next exercise says how to render it"
else fail "make progress without build/book.html: $(printf '%s\n' "$out" | grep '^Next')"; fi
printf '<h2 data-number="%s" id="probe-anchor"><span>%s</span> Title</h2>\n' "$sec" "$sec" >"$kit/build/book.html"
out=$(m progress)
has "$out" "in the book: build/book.html#probe-anchor" && ok "the next exercise points at build/book.html#<the section's id>" ||
    fail "make progress with a book: $(printf '%s\n' "$out" | grep '^Next')"
rm -f "$kit/build/book.html"

# 5. SAN=1: a read far past the end of B in the solutions' matmul (k up
#    to n + 79: 20 rows of B too far, past the test's 64-float guard zone,
#    which names a read one past the end without SAN=1).
sed -i '0,/for (int k = 0; k < n; k++)/s//for (int k = 0; k < n + 80; k++)/' "$kit/solutions/ch1_attention.c"
out=$(m test IMPL=solutions SAN=1 TEST=matmul_golden STRICT=)
log="$kit/build/solutions-san/sanitizer.log"
if has "$out" "SUMMARY: AddressSanitizer:" && has "$out" "ch1_attention.c:" &&
   has "$out" "full report: build/solutions-san/sanitizer.log" && [ -s "$log" ]; then
    ok "SAN=1: the sanitizer's summary and the line, the full report in build/solutions-san/sanitizer.log"
else fail "SAN=1 did not show the summary and the log:"; printf '%s\n' "$out" | head -n 5; fi
if has "$out" "make test SAN=1 TEST"; then fail "SAN=1 is on, yet the message suggests SAN=1"
else ok "SAN=1 is on: the failure does not suggest it again"; fi
has "$out" "then run: make test CH=1 TEST=matmul_golden SAN=1" && ok "the rerun suggestion keeps SAN=1" ||
    fail "the rerun suggestion drops SAN=1: $(printf '%s\n' "$out" | grep 'then run')"
lines=$(printf '%s\n' "$out" | wc -l)
[ "$lines" -le 24 ] && ok "the SAN=1 failure fits one screen ($lines lines)" || fail "the SAN=1 failure takes $lines lines"
has "$out" "(wall clock)" && ok "the elapsed time is the wall-clock time" || fail "no wall-clock elapsed time"

# 7. Two resets within one second keep two backups: a date that always
#    says the same second makes them fall in one.
mkdir -p "$work/bin"
printf '#!/bin/sh\necho 20250101-000000\n' > "$work/bin/date" && chmod +x "$work/bin/date"
cp "$kit/starter/ch3_mha.c" "$work/ch3.orig"
echo "/* first work */" >> "$kit/starter/ch3_mha.c"
PATH="$work/bin:$PATH" make --no-print-directory -s -C "$kit" reset CH=3 >/dev/null 2>&1
cp "$work/ch3.orig" "$kit/starter/ch3_mha.c"
echo "/* second work */" >> "$kit/starter/ch3_mha.c"
out=$(PATH="$work/bin:$PATH" make --no-print-directory -s -C "$kit" reset CH=3 2>&1)
first=$(grep -l "first work" "$kit"/build/backups/ch3-20250101-000000*/ch3_mha.c 2>/dev/null | wc -l)
second=$(grep -l "second work" "$kit"/build/backups/ch3-20250101-000000*/ch3_mha.c 2>/dev/null | wc -l)
if [ "$first" = 1 ] && [ "$second" = 1 ] && has "$out" "build/backups/ch3-20250101-000000-2/"; then
    ok "two resets in one second keep both backups (the second in ch3-<date>-2/)"
else fail "two resets in one second: first work kept $first time(s), second $second: $out"; fi
cp "$work/ch3.orig" "$kit/starter/ch3_mha.c"

# 6. Missing tools.
out=$(make --no-print-directory -s -C "$kit" watch INOTIFYWAIT=no-such-inotifywait 2>&1)
has "$out" "apt-get install inotify-tools" && ok "make watch without inotifywait says how to install it" ||
    fail "make watch without inotifywait: $out"
# 6a. Another system than Linux: make test stops in one line that names
#     the dev container, before any compiler runs; make help still works.
out=$(make --no-print-directory -s -C "$kit" test KIT_UNAME=Darwin 2>&1); rc=$?
if [ $rc -ne 0 ] && [ "$(printf '%s
' "$out" | wc -l)" -eq 1 ] && has "$out" "this is Darwin" &&
   has "$out" "dev container (.devcontainer/" && ! has "$out" "error:" &&
   make --no-print-directory -s -C "$kit" help KIT_UNAME=Darwin >/dev/null 2>&1; then
    ok "make test on Darwin (KIT_UNAME=Darwin): one line naming the dev container, status $rc"
else fail "make test KIT_UNAME=Darwin (status $rc): $(printf '%s
' "$out" | head -n 3)"; fi
# 6b. make watch on a terminal (a pty from script(1)) of 16 rows: a
#     failing run taller than that keeps the header in sight, and Ctrl-C
#     (the byte 0x03, which the pty turns into SIGINT for its foreground
#     process group) leaves with status 0, not make's 130.
if command -v inotifywait >/dev/null 2>&1 && command -v script >/dev/null 2>&1; then
    mkfifo "$work/tty-in"
    timeout 120 script -qec "stty rows 16 cols 100; make --no-print-directory -s -C $kit watch CH=1" /dev/null \
        <"$work/tty-in" >"$work/watch.out" 2>&1 &
    spid=$!
    exec 3>"$work/tty-in"
    for _ in $(seq 1 200); do grep -q 'passed, ' "$work/watch.out" && break; sleep 0.3; done
    sleep 1 # inotifywait is waiting
    printf '\003' >&3
    wait $spid; rc=$?
    exec 3>&-
    screen=$(tr -d '\r' <"$work/watch.out" | awk '/make watch: / { n = 0; p = 1; sub(/.*make watch: /, "make watch: ") }
        p { n += length($0) > 100 ? int((length($0) + 99) / 100) : 1 } /\^C/ { print n; exit }')
    if [ "$rc" = 0 ] && grep -q 'watch: stopped.' "$work/watch.out"; then
        ok "make watch: Ctrl-C on a terminal leaves with status 0"
    else fail "make watch: Ctrl-C left with status $rc: $(tr -d '\r' <"$work/watch.out" | tail -n 3)"; fi
    if [ -n "$screen" ] && [ "$screen" -le 16 ] && grep -q 'left out to keep the header in sight' "$work/watch.out"; then
        ok "make watch: a failing run taller than 16 rows is cut to the screen, header kept ($screen rows)"
    else fail "make watch on 16 rows: header to Ctrl-C took '${screen}' rows:"; tr -d '\r' <"$work/watch.out" | head -n 20; fi
else
    echo "  (make watch's Ctrl-C and screen: not checked, inotifywait or script is missing)"
fi
# 8. Every target recovers, and none deletes or floods (issue 53). The
#    copy becomes a git clone of its starter/ (the committed stubs make
#    reset restores; the C files make format formats).
cp starter/*.c "$kit/starter/"
(cd "$kit" && git init -q && git add starter &&
    git -c user.name=check -c user.email=check@example.invalid commit -q -m stubs) ||
    fail "could not make the copy a git clone"
rm "$kit/starter/ch3_mha.c"
out=$(m help); rc=$?
[ $rc -eq 0 ] && has "$out" "reset" && ok "make help works without starter/ch3_mha.c" ||
    fail "make help without starter/ch3_mha.c (status $rc): $(printf '%s\n' "$out" | head -n 2)"
out=$(m test CH=1)
if [ "$(summary "$out")" = "0 passed, $(count 1) failed" ] &&
   has "$out" "starter/ch3_mha.c does not exist: chapter(s) $skip cannot run until it is back. make reset CH=3 brings back its stubs."; then
    ok "without starter/ch3_mha.c, make test CH=1 runs chapter 1 and names the file and make reset CH=3"
else fail "make test CH=1 without starter/ch3_mha.c: $(printf '%s\n' "$out" | grep -v '^  ' | head -n 3)"; fi
out=$(m test)
if has "$out" "error: starter/ch3_mha.c does not exist, so chapter(s) $skip cannot run (their tests count as failed). make reset CH=3 brings back its stubs." &&
   [ "$(summary "$out")" = "0 passed, $run failed, $not_run not run (their chapters do not compile)" ]; then
    ok "make test without starter/ch3_mha.c: chapters $skip counted failed, named with make reset CH=3"
else fail "make test without starter/ch3_mha.c: $(printf '%s\n' "$out" | grep -v '^  ' | head -n 3)"; fi
out=$(m reset CH=3); rc=$?
if [ $rc -eq 0 ] && cmp -s starter/ch3_mha.c "$kit/starter/ch3_mha.c"; then
    ok "make reset CH=3 brings back a deleted starter/ch3_mha.c: $out"
else fail "make reset CH=3 without starter/ch3_mha.c (status $rc): $out"; fi
cp starter/ch3_mha.c "$kit/starter/ch3_mha.c"

# 8b. make clean deletes only the kit's own build folder: B=. from the
#     environment, B=.. and B=starter on the command line delete nothing.
mkdir -p "$kit/build/probe" && : >"$kit/build/probe/x"
: >"$work/outside"
tree() { find "$work" -path "$kit/build" -prune -o -print | sort | cksum; }
before=$(tree)
out1=$(cd "$kit" && B=. make --no-print-directory -s clean 2>&1); rc1=$?
out2=$(m clean B=..); rc2=$?
out3=$(m clean B=starter); rc3=$?
if [ "$(tree)" = "$before" ] && [ -e "$kit/build/probe/x" ] && [ $rc1 -ne 0 ] && [ $rc2 -ne 0 ] && [ $rc3 -ne 0 ]; then
    ok "B=. make clean, make clean B=.. and B=starter delete nothing: $(printf '%s\n' "$out2" | head -n 1)"
else fail "make clean with a B that is no build folder deleted something (status $rc1 $rc2 $rc3): $out1 / $out2 / $out3"; fi
out=$(m clean)
if [ ! -e "$kit/build/probe" ] && [ -d "$kit/build/backups" ]; then ok "make clean empties build/, keeping build/backups/"
else fail "make clean: $out"; fi

# 8c. make format keeps a copy of a starter/ file it changes.
if command -v clang-format >/dev/null 2>&1; then
    printf 'int   format_probe ;\n' >>"$kit/starter/ch1_attention.c"
    out=$(m format)
    kept=$(grep -l 'int   format_probe ;' "$kit"/build/backups/format-*/ch1_attention.c 2>/dev/null | wc -l)
    if [ "$kept" = 1 ] && grep -q '^int format_probe;$' "$kit/starter/ch1_attention.c" && has "$out" "build/backups/format-"; then
        ok "make format reformats starter/ after saving the file it changes: $out"
    else fail "make format kept $kept copy of the file it changed: $out"; fi
    cp starter/ch1_attention.c "$kit/starter/ch1_attention.c"
else
    echo "  (make format's copy: not checked, clang-format is missing)"
fi

# 8d. A test that prints 1 GB (in matmul, for matmul_by_hand's 2x3 times
#     3x2 only) is stopped at the cap and fails; the others run. (At most
#     20 MB are read: a runner without the cap is cut off there.)
plant() { # plant CODE: CODE at the start of the solutions' matmul()
    cp solutions/ch1_attention.c "$kit/solutions/ch1_attention.c"
    sed -i -e '1i #include <stdio.h>' -e "/^int matmul(const float \*A, const float \*B, float \*C, int m, int n, int p)\$/{n;s|^{\$|{ if (m == 2 \&\& n == 3 \&\& p == 2) { $1 }|}" \
        "$kit/solutions/ch1_attention.c"
}
plant 'for (long i = 0; i < (1L << 24); i++) fputs("0123456789012345678901234567890123456789012345678901234567890\\n", stdout);'
m test CH=1 IMPL=solutions STRICT= | head -c 20000000 >"$work/flood.out"
out=$(grep -av '^0123' "$work/flood.out")
bytes=$(wc -c <"$work/flood.out")
if [ "$bytes" -lt 4000000 ] && has "$out" "FAIL  ch1 matmul_by_hand" && has "$out" "printed more than 1 MiB, so it was stopped there" &&
   [ "$(summary "$out")" = "$(($(count 1) - 1)) passed, 1 failed" ]; then
    ok "a test that prints 1 GB is stopped at 1 MiB and fails, the others run ($bytes bytes in all)"
else fail "a test that prints 1 GB: $bytes bytes, $(printf '%s\n' "$out" | grep -a -E 'FAIL|printed|passed,' | head -n 3)"; fi

# 8e. A test that allocates 6 GiB: the limit refuses it, named.
plant 'float *big = malloc((size_t)6 << 30); big[0] = 1; free(big);'
out=$(m test CH=1 IMPL=solutions STRICT=)
if has "$out" "FAIL  ch1 matmul_by_hand" && has "$out" "asked for 6.0 GiB and got NULL: make test limits a test's process to 4 GiB of memory" &&
   [ "$(summary "$out")" = "$(($(count 1) - 1)) passed, 1 failed" ]; then
    ok "a test that allocates 6 GiB fails, naming the 4 GiB limit; the others run"
else fail "a test that allocates 6 GiB: $(printf '%s\n' "$out" | grep -a -A1 -E 'FAIL' | head -n 3)"; fi
cp solutions/ch1_attention.c "$kit/solutions/ch1_attention.c"

# 8f. An unknown SAN value is refused in one line.
out=$(m test SAN=yes CH=1); rc=$?
if [ $rc -ne 0 ] && [ "$(printf '%s\n' "$out" | grep -vc '^make: \*\*\*')" -eq 1 ] && has "$out" "SAN must be 1"; then
    ok "SAN=yes is refused: $(printf '%s\n' "$out" | head -n 1)"
else fail "make test SAN=yes (status $rc): $(printf '%s\n' "$out" | tail -n 2)"; fi

# 7. Chapter 7's race pass, on the solutions' code as the student's, then
#    with the shared loop variable of tests/mutants/ch7.tsv planted.
for f in $(sh tools/mk/chapters.sh files 7); do cp "solutions/$f.c" "$kit/starter/$f.c"; done
out=$(m test CH=7); rc=$?
n7=$(count 7)
if [ $rc -eq 0 ] && has "$out" "Data races: none in chapter 7" &&
   [ "$(printf '%s\n' "$out" | tail -n 1)" = "$n7 passed, 0 failed" ]; then
    ok "chapter 7 passes: make test runs its race pass, which finds no race ($(printf '%s\n' "$out" | grep 'Data races'))"
else fail "make test CH=7 on the solutions' code (status $rc): $(printf '%s\n' "$out" | tail -n 3)"; fi
expr=$(awk -F'\t' '$1 == "ch7-fast-shared-index" { print $3 }' tests/mutants/ch7.tsv)
sed -i -e "$expr" "$kit/starter/ch7_fast.c"
out=$(m test CH=7); rc=$?
last=$(printf '%s\n' "$out" | grep -Ev '^make(\[[0-9]+\])?: \*\*\*' | tail -n 1) # make's own line aside
if [ $rc -ne 0 ] && has "$out" "Likely mistake: a variable declared outside the parallel loop" &&
   has "$out" "starter/ch7_fast.c:" && [ "$last" != "$n7 passed, 0 failed" ] && [ "$(summary "$out")" = "$last" ]; then
    ok "a shared loop variable in matmul_fast: the race pass fails chapter 7 and names it ($last)"
else fail "a shared loop variable in matmul_fast (status $rc): $(printf '%s\n' "$out" | grep -E 'Data races|Likely|passed,' | head -n 4)"; fi
out=$(m progress)
if printf '%s\n' "$out" | grep 'Chapter 7 ' | grep -q 'with a data race: make races' &&
    ! printf '%s\n' "$out" | grep 'Chapter 7 ' | grep -q ' done'; then
    ok "make progress counts the race: $(printf '%s\n' "$out" | grep 'Chapter 7 ' | sed 's/  */ /g')"
else fail "make progress after the race: $(printf '%s\n' "$out" | grep 'Chapter 7 ')"; fi
# A race beside a plain mistake (chapter 7 partly passes): a verdict
# that changed by itself since the last run (planted in the last run's
# results, the code unchanged) runs the race pass, and a later run of
# the same code shows its finding again.
expr=$(awk -F'\t' '$1 == "ch7-online-sum-not-rescaled" { print $3 }' tests/mutants/ch7.tsv)
sed -i -e "$expr" "$kit/starter/ch7_fast.c"
out=$(m test CH=7)
has "$out" "make races says whether a data race is the cause" &&
    ok "chapter 7 partly passing: one line points at make races" ||
    fail "chapter 7 partly passing: no pointer at make races: $(printf '%s\n' "$out" | tail -n 3)"
res="$kit/build/starter/run-results.tsv"
awk -F'\t' -v OFS='\t' 'NR > 1 && $1 == 7 && $4 == "passed" && !done { $4 = "failed"; done = 1 } { print }' \
    "$res" >"$res.tmp" && mv "$res.tmp" "$res"
out=$(m test CH=7)
if has "$out" "gave another result than on the last run" &&
   has "$out" "Likely mistake: a variable declared outside the parallel loop"; then
    ok "a verdict that changed by itself runs the race pass, which names the race"
else fail "a verdict that changed by itself: $(printf '%s\n' "$out" | grep -E 'Data races|verdict|Likely|passed,' | head -n 4)"; fi
out=$(m test CH=7)
if has "$out" "the last race pass of this same code" &&
   has "$out" "Likely mistake: a variable declared outside the parallel loop"; then
    ok "a later run of the same code shows the race again"
else fail "a later run of the same code: $(printf '%s\n' "$out" | grep -E 'Data races|verdict|Likely|passed,' | head -n 4)"; fi
out=$(m races RACE_CC=no-such-clang)
has "$out" "run make deps" && ok "make races without clang says to run make deps" || fail "make races without clang: $out"
out=$(make --no-print-directory -s -C "$kit" debug TEST=matmul_golden GDB=no-such-gdb 2>&1)
has "$out" "apt-get install gdb" && ok "make debug without gdb says how to install it" || fail "make debug without gdb: $out"
exit $status
