#!/bin/bash
# grade-all.sh SUBMISSIONS OUT: grade every subfolder of SUBMISSIONS (one
# per student), in parallel on every core, each inside a bubblewrap
# sandbox, and write OUT/gradebook.csv and the class report
# (OUT/report.md, OUT/mistakes.png and .svg). A submission that does not
# compile, crashes or hangs gets its row with the reason; none stops the
# batch. Refuses to run at all when the sandbox cannot start. Every other
# entry of SUBMISSIONS (a file, a zip, a hidden entry, a symbolic link) is
# listed with why it was not graded (see below).
set -u
BWRAP=${BWRAP:-bwrap}
here=$(cd "$(dirname "$0")" && pwd)
KIT=$(cd "${KIT:-$here/../..}" && pwd)
[ $# -eq 2 ] || { echo "usage: grade-all.sh SUBMISSIONS OUT" >&2; exit 2; }
SUBS=$(cd "$1" 2>/dev/null && pwd) || { echo "grade-all: no folder '$1' (set SUBMISSIONS=dir)" >&2; exit 2; }
mkdir -p "$2" && OUT=$(cd "$2" && pwd)
case "$OUT/" in "$SUBS/"*) echo "grade-all: the output folder must not be inside $SUBS" >&2; exit 2 ;; esac

command -v jq >/dev/null || { echo "grade-all: jq is not installed (it writes each results.json); run make deps" >&2; exit 2; }
# The sandbox must work before any student's code is touched.
. "$here/sandbox.sh"
if ! why=$(sandbox_ready); then
    echo "grade-all: $why." >&2
    echo "grade-all: refusing to grade: students' code is never built or run outside the" >&2
    echo "sandbox. bwrap needs unprivileged user namespaces (on Debian they are on by" >&2
    echo "default; in a container, start it with them allowed)." >&2
    exit 1
fi

# Every entry of SUBMISSIONS is accounted for: a plain folder is a
# student's submission and is graded; anything else is listed with why
# it was not (OUT/skipped.tsv, and the class report). A Gradescope
# export holds one folder per submission (uploaded zips already unpacked)
# and submission_metadata.yml, so a zip or another file here is not a
# submission: grade-all does not unpack it (unpacking untrusted archives
# outside the sandbox is a risk of its own), and says how to.
rm -f "$OUT/skipped.tsv"
students="" nent=0
while IFS= read -r -d '' e; do
    e=${e#./}
    nent=$((nent + 1))
    show=$(printf '%s' "$e" | LC_ALL=C tr -c '[:print:]' '?')
    why=""
    case "$e" in
    *$'\n'* | *$'\t'*) why="its name holds a line break or a tab; rename it" ;;
    .*) why="a hidden entry (its name starts with '.'); rename it (mv '$show' '${show#.}') to grade it" ;;
    esac
    if [ -z "$why" ]; then
        if [ -L "$SUBS/$e" ]; then why="a symbolic link (to $(readlink "$SUBS/$e" | LC_ALL=C tr -c '[:print:]' '?' | cut -c1-100)), not followed; copy the folder in to grade it"
        elif [ -d "$SUBS/$e" ]; then students="$students$e"$'\n'
        else
            case "$e" in
            *.zip | *.ZIP) why="a zip file, not unpacked; unpack it into a folder of its own (unzip '$show' -d '${show%.*}') to grade it" ;;
            *.tar | *.tar.gz | *.tgz) why="an archive, not unpacked; unpack it into a folder of its own to grade it" ;;
            *) why="not a folder (one folder per student is graded)" ;;
            esac
        fi
    fi
    [ -z "$why" ] || printf '%s\t%s\n' "$show" "$why" >>"$OUT/skipped.tsv"
done < <(cd "$SUBS" && find . -mindepth 1 -maxdepth 1 -print0 | LC_ALL=C sort -z)
students=${students%$'\n'}
nskip=$(cat "$OUT/skipped.tsv" 2>/dev/null | wc -l)
n=0
[ -z "$students" ] || n=$(printf '%s\n' "$students" | wc -l)
echo "grade-all: $nent entries in $SUBS: $n to grade, $nskip skipped"
[ "$nskip" -eq 0 ] || awk -F'\t' '{ printf "  %-24s skipped: %s\n", $1, $2 }' "$OUT/skipped.tsv"
[ -n "$students" ] || { echo "grade-all: $SUBS has no subfolders to grade (one per student)" >&2; exit 2; }
jobs=${JOBS:-$(nproc)}
rm -rf "$OUT/students" "$OUT/prep" && mkdir -p "$OUT/students"
echo "grade-all: preparing the kit's objects"
bash "$here/prepare.sh" "$KIT" "$OUT/prep" >/dev/null || exit 2
if [ -z "${POINTS:-}" ]; then # the table's points (chapters/chapters.tsv)
    POINTS=$OUT/points.tsv
    sh "$KIT/tools/mk/chapters.sh" points-table >"$POINTS" || exit 2
fi
awk -f "$here/compose.awk" -v fields=/dev/null -v summary=/dev/null -v status=ran \
    "$POINTS" "$OUT/prep/tests.tsv" /dev/null /dev/null /dev/null || exit 2
echo "grade-all: $n submissions, $jobs at a time, each in a sandbox"
export KIT POINTS BWRAP PREP="$OUT/prep" SANDBOX=bwrap HIDE="$OUT" HIDE_SUB="$SUBS"
# the whole run's clock (each test is bounded by its CPU time, build.sh)
export RUN_TIMEOUT=${RUN_TIMEOUT:-300} TEST_TIMEOUT=${TEST_TIMEOUT:-5}
printf '%s\n' "$students" | tr '\n' '\0' |
    xargs -0 -P "$jobs" -I{} bash -c '
        bash "$1/grade.sh" "$2/$4" "$3/students/$4" >/dev/null 2>"$3/students/$4.err" || true
        printf "  %-24s %s\n" "$4" "$(awk -F"\t" "\$1 == \"total\" { print \$2 \" of \" \$3 }" "$3/students/$4/summary.tsv" 2>/dev/null)"
    ' _ "$here" "$SUBS" "$OUT" {}


# From here on, lists are split at line ends only (a student's folder
# name may hold blanks).
IFS=$'\n'
# The gradebook: one row per student.
csv() { # quote one CSV field
    case "$1" in *[,\"]*) printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')" ;; *) printf '%s' "$1" ;; esac
}
chapters=$(awk -F'\t' 'NR > 1 { print $1 }' "$OUT/prep/tests.tsv" | sort -un)
{
    printf 'student'
    for c in $chapters; do printf ',ch%s' "$c"; done
    printf ',total,max,reason,mistakes\n'
    for s in $students; do
        sum="$OUT/students/$s/summary.tsv"
        csv "$s"
        if [ ! -s "$sum" ]; then
            for c in $chapters; do printf ',0'; done
            printf ',0,,%s,\n' "$(csv "the grader failed on this submission: $(head -c 200 "$OUT/students/$s.err" 2>/dev/null | tr '\n' ' ')")"
            continue
        fi
        for c in $chapters; do printf ',%s' "$(awk -F'\t' -v k="ch$c" '$1 == k { print $2 }' "$sum")"; done
        printf ',%s,%s' "$(awk -F'\t' '$1 == "total" { print $2 }' "$sum")" "$(awk -F'\t' '$1 == "total" { print $3 }' "$sum")"
        printf ',%s' "$(csv "$(awk -F'\t' '$1 == "reason" { print $2 }' "$sum")")"
        printf ',%s\n' "$(csv "$(awk -F'\t' '$1 == "mistakes" { print $2 }' "$sum")")"
    done
} >"$OUT/gradebook.csv"

# The class report: each named mistake, by how many students made it.
for s in $students; do
    awk -F'\t' '$1 == "mistake" { print $2 "\t" $3 }' "$OUT/students/$s/summary.tsv" 2>/dev/null | sort -u
done | sort | uniq -c | awk '{ n = $1; sub(/^ *[0-9]+ /, ""); split($0, f, "\t"); print f[1] "\t" n "\t" f[2] }' |
    sort -t"$(printf '\t')" -k1,1n -k2,2nr -k3,3 >"$OUT/mistakes.tsv"
{
    echo "# Class report"
    echo
    echo "$nent entries in the submissions folder: $n graded, $nskip skipped (listed below)."
    echo
    echo "$n submissions graded. Mean score $(awk -F, 'NR > 1 { s += $(NF - 3); m = $(NF - 2); k++ } END { printf "%.1f of %s", s / k, m }' "$OUT/gradebook.csv")."
    echo
    echo "## The named mistakes, by how many students made them"
    echo
    echo "Each failing test that recognises a classic mistake names it; a student counts once per mistake."
    echo
    if [ -s "$OUT/mistakes.tsv" ]; then
        echo "| Chapter | Mistake | Students |"
        echo "|---|---|---:|"
        awk -F'\t' '{ printf "| %s | %s | %d of '"$n"' |\n", $1, $3, $2 }' "$OUT/mistakes.tsv"
    else
        echo "No test named a mistake."
    fi
    echo
    echo "## Submissions that did not build or run cleanly"
    echo
    for s in $students; do
        why=$(awk -F'\t' '$1 == "reason" { print $2 }' "$OUT/students/$s/summary.tsv" 2>/dev/null)
        [ -f "$OUT/students/$s/summary.tsv" ] || why="the grader failed on this submission"
        [ -z "$why" ] || echo "- **$s**: $why"
    done
    echo
    echo "## Entries not graded"
    echo
    if [ "$nskip" -gt 0 ]; then
        awk -F'\t' '{ printf "- **%s**: %s\n", $1, $2 }' "$OUT/skipped.tsv"
    else
        echo "None: every entry was a folder, and graded."
    fi
    echo
    echo "The reasons are in gradebook.csv; each student's Gradescope-style results are in students/NAME/results.json."
} >"$OUT/report.md"
# The figure: the same counts, one bar per mistake, grouped by chapter.
awk -F'\t' '{ printf "\"ch%s: %s\"\t%d\n", $1, $3, $2 }' "$OUT/mistakes.tsv" >"$OUT/mistakes.dat"
for fmt in png svg; do
    gnuplot -e "datafile='$OUT/mistakes.dat'; n=$(wc -l <"$OUT/mistakes.dat"); outfile='$OUT/mistakes.$fmt'; fmt='$fmt'; students=$n" \
        "$here/class_report.gp" 2>"$OUT/gnuplot.log" || { echo "grade-all: gnuplot failed:"; cat "$OUT/gnuplot.log"; exit 1; }
done
echo "grade-all: wrote $OUT/gradebook.csv, $OUT/report.md, $OUT/mistakes.png"
