#!/bin/sh
# reset.sh N: restore chapter N's starter files (its own files in
# chapters/chapters.tsv) to the kit's stubs.
#
# The student's current files are first copied to a dated folder under
# build/backups/, and the script says where: nothing is overwritten
# without that copy. A file that was deleted is restored too (chapters.sh
# and make test name this command for it). The stubs come from git history: for each file, the
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
    for c in $(git log --format=%H -- "$1" 2>/dev/null); do
        text=$(git show "$c:$1" 2>/dev/null) || continue
        if printf '%s\n' "$text" | all_stubs; then
            echo "$c"; return
        fi
    done
}

# A new folder every time: two resets within one second get -2, -3, ...
dest=$(backup_dir "ch$ch") || { echo "reset: cannot make a backup folder under build/backups/"; exit 1; }
# A file that does not exist (deleted) has nothing to save: it is
# restored all the same.
saved=""
for f in $files; do
    [ -e "$f" ] || continue
    cp -p "$f" "$dest/"
    saved="$saved $f"
done
if [ -n "$saved" ]; then
    echo "reset: saved your chapter $ch files to $dest/"
else
    rmdir "$dest" 2>/dev/null || true
fi
status=0
for f in $files; do
    from="${RESET_FROM:-$(pristine "$f")}"
    if [ -n "$from" ] && git cat-file -e "$from:$f" 2>/dev/null; then
        git show "$from:$f" > "$f"
        echo "reset: restored $f (the stubs of commit $(git rev-parse --short "$from"))"
    elif [ -e "$f" ]; then
        echo "reset: found no committed stubs for $f; left it as it is"
    elif ! git rev-parse --git-dir >/dev/null 2>&1; then
        echo "reset: $f does not exist, and this copy of the kit is not a git clone, so its stubs are nowhere here: copy starter/$(basename "$f") from the kit's repository (or a fresh copy of the kit) into starter/."
        status=1
    else
        echo "reset: $f does not exist, and git's history here holds no stubs for it: copy starter/$(basename "$f") from the kit's repository (or a fresh copy of the kit) into starter/."
        status=1
    fi
done
exit $status
