#!/bin/bash
# autograder.sh ZIP [POINTS]: write the Gradescope autograder, ready to
# upload unchanged. Gradescope unpacks the zip into /autograder/source,
# runs setup.sh once when it builds the image, and run_autograder for
# every submission, with the student's files in /autograder/submission;
# it reads the score from /autograder/results/results.json.
# The zip holds the kit's headers, tests, stubs, given code, runner and
# grader, and the compiler flags (tools/mk/flags.mk), and never
# solutions/. Its starter/ is the committed one (git archive HEAD
# starter), whatever the working starter/ holds, and
# tools/grade/stubs-commit names the commit (prepare.sh takes the stubs
# from there); a kit that is not a git checkout ships its working
# starter/, with a warning, and prepare.sh refuses it if it passes a
# test. DEB_PACKAGES (from the Makefile) is what setup.sh installs:
# the same list as make deps. The points are the chapters' in
# chapters/chapters.tsv, unless a POINTS table is given (it is shipped
# as tools/grade/points.tsv).
set -eu
zip=$1 points=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
KIT=$(cd "$here/../.." && pwd)
: "${DEB_PACKAGES:?autograder.sh: DEB_PACKAGES is not set (run it through make autograder)}"
stage=$(dirname "$zip")/autograder
rm -rf "$stage" "$zip" && mkdir -p "$stage/tools"
cp -r "$KIT/include" "$KIT/tests" "$KIT/given" "$stage/"
cp -r "$KIT/tools/harness" "$KIT/tools/grade" "$stage/tools/"
rm -f "$stage/tools/grade/stubs-commit"
if [ "$(bash "$here/prepare.sh" --stubs-from "$KIT" | cut -d' ' -f1)" = git ]; then
    head=$(git -C "$KIT" rev-parse HEAD)
    git -C "$KIT" archive HEAD starter | tar -x -C "$stage" ||
        { echo "autograder: could not take starter/ from the commit $head (git archive HEAD starter)" >&2; exit 1; }
    echo "$head" >"$stage/tools/grade/stubs-commit"
    changed=$(git -C "$KIT" status --porcelain -- starter | cut -c4- | sed 's|^starter/||' | tr '\n' ' ')
    echo "autograder: starter/ in the zip is the committed stubs (commit ${head:0:12})${changed:+, not your working copies of ${changed% }}"
else
    cp -r "$KIT/starter" "$stage/"
    echo "autograder: warning: $KIT is not a git checkout, so the zip's starter/ is its working starter/; it must hold the unsolved stubs (they are checked to pass no test)" >&2
fi
# The table of chapters and its reader (the grader's chapters and
# points), and deps.sh, which setup.sh runs.
mkdir -p "$stage/tools/mk" "$stage/chapters"
cp "$KIT/tools/mk/chapters.sh" "$KIT/tools/mk/deps.sh" "$KIT/tools/mk/flags.mk" "$stage/tools/mk/"
cp "$KIT/chapters/chapters.tsv" "$stage/chapters/"
rm -f "$stage/tools/grade/points.tsv"
[ -z "$points" ] || cp "$points" "$stage/tools/grade/points.tsv"
cat >"$stage/setup.sh" <<SETUP
#!/bin/sh
# Gradescope runs this once, as root, to build the autograder's image:
# it installs what the kit's make deps installs.
set -eu
sh /autograder/source/tools/mk/deps.sh $DEB_PACKAGES
SETUP
cat >"$stage/run_autograder" <<'RUN'
#!/bin/bash
# Gradescope runs this for every submission. Only the chapters' files
# (chN_*.c, uploaded flat or in the kit's folders) are taken from the
# submission; they are built against the kit's own tests and headers.
# AUTOGRADER_ROOT stands in for /autograder (make check uses a temporary
# folder).
set -u
AG=${AUTOGRADER_ROOT:-/autograder}
KIT=$AG/source
mkdir -p "$AG/results"
rm -f "$AG/results/results.json"
rm -rf "$AG/grading"
# The kit's objects are built once per container (PREP), before any
# student's file is compiled.
# The points: the chapters' (chapters/chapters.tsv), or points.tsv if
# the instructor gave one.
points=""
[ -e "$KIT/tools/grade/points.tsv" ] && points="$KIT/tools/grade/points.tsv"
if ! PREP="$AG/prep" POINTS="$points" bash "$KIT/tools/grade/grade.sh" \
    "$AG/submission" "$AG/grading"; then
    echo "run_autograder: grading failed; no results were written" >&2
    exit 1
fi
cp "$AG/grading/results.json" "$AG/results/results.json"
RUN
chmod +x "$stage/setup.sh" "$stage/run_autograder"
# The staged kit, without solutions/, must build, and the points table
# must be right now, not on the first student's upload.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$stage/tools/grade/prepare.sh" "$stage" "$tmp/prep" >/dev/null
if [ -e "$stage/tools/grade/points.tsv" ]; then
    cp "$stage/tools/grade/points.tsv" "$tmp/points.tsv"
else sh "$stage/tools/mk/chapters.sh" points-table >"$tmp/points.tsv"; fi
awk -f "$here/compose.awk" -v fields=/dev/null -v summary=/dev/null -v status=ran \
    "$tmp/points.tsv" "$tmp/prep/tests.tsv" /dev/null /dev/null /dev/null
find "$stage" -name '*.o' -delete
(cd "$stage" && zip -q -r -X "$(cd .. && pwd)/$(basename "$zip")" .)
if unzip -l "$zip" | awk '{ print $4 }' | grep -q '^solutions/'; then
    echo "autograder: solutions/ is in the zip" >&2; rm -f "$zip"; exit 1
fi
echo "wrote $zip ($(unzip -l "$zip" | tail -n 1 | awk '{ print $2 }') files): upload it to Gradescope as the autograder"
