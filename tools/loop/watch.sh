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
# Ctrl-C is how one leaves, so it leaves with status 0. The terminal
# sends SIGINT to its whole foreground process group, and the make that
# started this script would then leave with status 130 whatever the
# script does. So on a terminal the script runs as a job of its own: a
# bash with job control (set -m) puts it in a process group of its own
# and hands it the terminal, and the make never sees the Ctrl-C.
if [ -z "${KIT_WATCH_JOB:-}" ] && [ -t 0 ] && command -v bash >/dev/null 2>&1; then
    KIT_WATCH_JOB=1 exec bash -c 'set -m; sh tools/loop/watch.sh; exit $?'
fi
trap 'echo; echo "watch: stopped."; exit 0' INT TERM

# The terminal's height and width, or nothing when it is not a terminal.
term_size() {
    stty size </dev/tty 2>/dev/null || { [ -n "${LINES:-}" ] && echo "$LINES ${COLUMNS:-80}"; }
}

# fit: the run's output, cut to the screen below the header: the first
# lines (the first failures), a line saying how many were left out, then
# the "Next:" line (what to do) and the last line (the summary). A long
# line counts as the rows it wraps onto.
fit() {
    set -- $(term_size)
    rows=${1:-0} cols=${2:-80}
    [ "$rows" -gt 0 ] 2>/dev/null || { cat; return; }
    awk -v avail=$((rows - 3)) -v cols="$cols" -v ch="$ch" '
        function height(s) { return length(s) <= cols ? 1 : int((length(s) + cols - 1) / cols) }
        { line[NR] = $0; h[NR] = height($0); total += h[NR]; if ($0 ~ /^Next: /) next_at = NR }
        END {
            if (total <= avail) { for (i = 1; i <= NR; i++) print line[i]; exit }
            if (next_at == NR) next_at = 0
            budget = avail - 1 - h[NR] - (next_at ? h[next_at] : 0); shown = 0
            for (i = 1; i < NR && budget - h[i] >= 0; i++) {
                if (i == next_at) continue
                print line[i]; budget -= h[i]; shown++ }
            printf "  ... %d more line(s), left out to keep the header in sight; the whole run: make test%s\n",
                NR - 1 - (next_at ? 1 : 0) - shown, ch != "" ? " CH=" ch : ""
            if (next_at) print line[next_at]
            print line[NR]
        }'
}

ch=${CH:-}
while :; do
    clear 2>/dev/null || printf '\033[H\033[2J'
    echo "make watch: $(date +%H:%M:%S), ${ch:+chapter $ch, }$IMPL/. Save a file to run again; Ctrl-C leaves."
    echo
    $MAKE -s --no-print-directory test CH="$ch" TEST="${TEST:-}" 2>&1 |
        grep -a -v -E '^make(\[[0-9]+\])?: \*\*\*' | fit
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
