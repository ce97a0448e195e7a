#!/bin/sh
# reset.sh N: restore chapter N's starter files (its own files in
# chapters/chapters.tsv) to the kit's stubs.
#
# The student's current files are first copied to a dated folder under
# build/backups/, and the script says where: nothing is overwritten
# without that copy. The stubs come from git history: for each file, the
# newest committed version in which every function is still a stub (as
# many "return KIT_E_TODO" lines as "@listing" markers: all_stubs in
# tools/loop/lib.sh), so a student who
# commits their work still gets the stubs back. RESET_FROM=<commit>
# restores from that commit instead.
set -eu
. tools/loop/lib.sh
ch="${1:-}"
case "$ch" in
    ''|*[!0-9]*) echo "usage: make reset CH=N (N is a chapter number)"; exit 2 ;;
esac
own=$(sh tools/mk/chapters.sh own "$ch" 2>&1) || { echo "reset: $own"; exit 2; }
files=$(for f in $own; do echo "starter/$f.c"; done)
if [ -z "$files" ]; then
    echo "reset: chapter $ch has no files of its own in starter/"; exit 2
fi

# The newest commit whose version of $1 is all stubs, or nothing.
pristine() {
    for c in $(git log --format=%H -- "$1"); do
        text=$(git show "$c:$1" 2>/dev/null) || continue
        if printf '%s\n' "$text" | all_stubs; then
            echo "$c"; return
        fi
    done
}

# A new folder every time: two resets within one second get -2, -3, ...
# (mkdir without -p fails when the folder exists, so no backup is ever
# written over another).
stamp=$(date +%Y%m%d-%H%M%S)
mkdir -p build/backups
dest="build/backups/ch$ch-$stamp"
n=1
while ! mkdir "$dest" 2>/dev/null; do
    n=$((n + 1))
    dest="build/backups/ch$ch-$stamp-$n"
    [ "$n" -lt 1000 ] || { echo "reset: cannot make a backup folder under build/backups/"; exit 1; }
done
for f in $files; do
    cp -p "$f" "$dest/"
done
echo "reset: saved your chapter $ch files to $dest/"
for f in $files; do
    from="${RESET_FROM:-$(pristine "$f")}"
    if [ -n "$from" ] && git cat-file -e "$from:$f" 2>/dev/null; then
        git show "$from:$f" > "$f"
        echo "reset: restored $f (the stubs of commit $(git rev-parse --short "$from"))"
    else
        echo "reset: found no committed stubs for $f; left it as it is"
    fi
done
