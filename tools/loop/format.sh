#!/bin/sh
# format.sh FILE...: make format. Reformats the C files with the
# committed .clang-format, after copying each of the student's files
# (starter/*.c) that it would change to a new folder
# build/backups/format-<date>/ (as make reset does), and says where: no
# target overwrites the student's work without a copy.
set -u
. tools/loop/lib.sh
command -v clang-format >/dev/null 2>&1 ||
    { echo "make format needs clang-format, which is not installed: run make deps."; exit 2; }
[ $# -gt 0 ] || { echo "make format: no C file to format (it formats the files git ls-files lists: is this a git clone?)"; exit 2; }
dest=""
for f in "$@"; do
    case "$f" in starter/*) ;; *) continue ;; esac
    [ -f "$f" ] || continue
    clang-format "$f" | cmp -s - "$f" && continue # already formatted
    if [ -z "$dest" ]; then
        dest=$(backup_dir format) || { echo "format: cannot make a backup folder under build/backups/; nothing reformatted."; exit 1; }
    fi
    cp -p "$f" "$dest/" || { echo "format: could not copy $f to $dest/; nothing reformatted."; exit 1; }
done
[ -n "$dest" ] && echo "format: saved your starter/ files it changes to $dest/"
clang-format -i "$@"
