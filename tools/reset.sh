#!/bin/sh
# reset.sh N: restore chapter N's starter files to the kit's stubs.
# The student's current files are first copied to a dated folder under
# build/backups/, and the script says where. Nothing is overwritten
# without that copy. The stubs come from git: RESET_FROM (default
# origin/HEAD when it exists, else HEAD).
set -eu
ch="${1:-}"
case "$ch" in
    ''|*[!0-9]*) echo "usage: make reset CH=N (N is a chapter number)"; exit 2 ;;
esac
files=$(ls starter/ch"$ch"_*.c 2>/dev/null || true)
if [ -z "$files" ]; then
    echo "reset: chapter $ch has no files in starter/"; exit 2
fi
from="${RESET_FROM:-}"
if [ -z "$from" ]; then
    if git rev-parse -q --verify origin/HEAD >/dev/null 2>&1; then from=origin/HEAD; else from=HEAD; fi
fi
stamp=$(date +%Y%m%d-%H%M%S)
dest="build/backups/ch$ch-$stamp"
mkdir -p "$dest"
for f in $files; do
    cp -p "$f" "$dest/"
done
echo "reset: saved your chapter $ch files to $dest/"
for f in $files; do
    if git cat-file -e "$from:$f" 2>/dev/null; then
        git show "$from:$f" > "$f"
        echo "reset: restored $f from $from"
    else
        echo "reset: $f is not in $from; left as it is"
    fi
done
