#!/bin/sh
# watch.sh: make watch [CH=N]. Run the tests, then wait for a save under
# starter/ (or solutions/ with IMPL=solutions), tests/ or include/, and
# run them again, clearing the screen first. Without CH, a save of one of
# chapter N's files (chapters/chapters.tsv) or of tests/test_chN.c runs
# chapter N's tests. Ctrl-C leaves.
set -u
. tools/loop/lib.sh
check_ch
INOTIFYWAIT=${INOTIFYWAIT:-inotifywait} # the checks set another name
if ! command -v "$INOTIFYWAIT" >/dev/null 2>&1; then
    echo "make watch needs inotifywait, from the inotify-tools package, which is not installed."
    echo "Install it with: make deps   (or: sudo apt-get install inotify-tools)"
    exit 2
fi
trap 'echo; echo "watch: stopped."; exit 0' INT TERM
ch=${CH:-}
while :; do
    clear 2>/dev/null || printf '\033[H\033[2J'
    echo "make watch: $(date +%H:%M:%S), ${ch:+chapter $ch, }$IMPL/. Save a file to run again; Ctrl-C leaves."
    echo
    $MAKE -s --no-print-directory test CH="$ch" TEST="${TEST:-}" 2>&1 | grep -v -E '^make(\[[0-9]+\])?: \*\*\*'
    # Wait for the next save. Editors write in several ways (in place,
    # or a new file renamed over the old one): any of them counts.
    changed=$("$INOTIFYWAIT" -q -r -e close_write -e moved_to -e create --format '%w%f' \
        --exclude '(~|\.swp|\.swx|#)$' "$IMPL" tests include 2>/dev/null) || exit 0
    if [ -z "${CH:-}" ]; then
        case "$(basename "$changed")" in
            test_ch[0-9]*.c) ch=$(basename "$changed" .c | sed 's/^test_ch//') ;;
            *.c) owner=$(file_chapter "$changed"); [ -z "$owner" ] || ch=$owner ;;
        esac
    fi
    sleep 0.1 # let the editor finish writing
done
