# lib.sh: what the student's loop scripts share (sourced, not run).
# The chapters come from chapters/chapters.tsv (tools/mk/chapters.sh),
# the tests' names from the sources (tests/test_chN.c), so they are known
# even when nothing compiles.

# The chapters' numbers (the Makefile passes them; a check may not).
CHAPTER_NUMS=${CHAPTER_NUMS:-$(sh tools/mk/chapters.sh nums | tr '\n' ' ')}

# tests_of N: the names of chapter N's tests, in file order.
tests_of() {
    sed -n 's/^KIT_TEST(\([A-Za-z_0-9]*\),.*/\1/p' "tests/test_ch$1.c" 2>/dev/null
}

# all_tests: "N name" for every test of every chapter.
all_tests() {
    for n in $CHAPTER_NUMS; do
        tests_of "$n" | sed "s/^/$n /"
    done
}

# chapter_title N
chapter_title() {
    sh tools/mk/chapters.sh title "$1" 2>/dev/null
}

# ch_files N: the basenames chapter N links (its own files and those of
# the chapters it needs).
ch_files() {
    sh tools/mk/chapters.sh files "$1"
}

# file_chapter FILE: the chapter whose own file FILE (starter/ch4_grad.c)
# is, or nothing.
file_chapter() {
    for n in $CHAPTER_NUMS; do
        case " $(sh tools/mk/chapters.sh own "$n") " in
        *" $(basename "$1" .c) "*) echo "$n"; return ;;
        esac
    done
}

# nearest WORD: up to three test names nearest WORD, as "name (chN)",
# comma-separated; nothing when none is close.
nearest() {
    all_tests | awk -v w="$1" '
        function dist(a, b,    i, j, la, lb, d, x, y, z) {
            la = length(a); lb = length(b)
            for (i = 0; i <= la; i++) d[i, 0] = i
            for (j = 0; j <= lb; j++) d[0, j] = j
            for (i = 1; i <= la; i++)
                for (j = 1; j <= lb; j++) {
                    x = d[i-1, j] + 1; y = d[i, j-1] + 1
                    z = d[i-1, j-1] + (substr(a, i, 1) != substr(b, j, 1))
                    d[i, j] = x < y ? (x < z ? x : z) : (y < z ? y : z)
                }
            return d[la, lb]
        }
        { e = dist(w, $2); if (index($2, w) && e > 2) e = 2; name[NR] = $2; ch[NR] = $1; dd[NR] = e }
        END {
            limit = int(length(w) / 2) + 1; out = ""; shown = 0; best = limit + 1
            for (i = 1; i <= NR; i++) if (dd[i] < best) best = dd[i]
            if (best + 1 < limit) limit = best + 1
            for (e = best; e <= limit && shown < 3; e++)
                for (i = 1; i <= NR && shown < 3; i++)
                    if (dd[i] == e) { out = out (shown ? ", " : "") name[i] " (ch" ch[i] ")"; shown++ }
            print out
        }'
}

# check_ch: exit with a message unless $CH is empty or a chapter.
check_ch() {
    [ -z "${CH:-}" ] && return 0
    for n in $CHAPTER_NUMS; do [ "$n" = "$CH" ] && return 0; done
    echo "There is no chapter '$CH'. The chapters are: $(echo $CHAPTER_NUMS | sed 's/ /, /g')."
    for n in $CHAPTER_NUMS; do echo "  CH=$n  $(chapter_title "$n")"; done
    exit 2
}

# test_chapter NAME: the chapter of test NAME, or a message and exit 2.
test_chapter() {
    found=$(all_tests | awk -v t="$1" '$2 == t { print $1; exit }')
    if [ -z "$found" ]; then
        near=$(nearest "$1")
        echo "There is no test named '$1'."
        if [ -n "$near" ]; then echo "Did you mean: $near?"
        else echo "No test name is close; make list shows every test."; fi
        exit 2
    fi
    echo "$found"
}

# stub_counts: "STUBS FUNCTIONS" for the C text on stdin: its
# "return KIT_E_TODO" lines and its "@listing" markers. The text is all
# stubs, as the kit hands it out, when they are equal and not 0 (see
# all_stubs): make reset looks for that version in git history
# (tools/loop/reset.sh), the book says whether its sample run is of the
# stubs (tools/mk/book.mk), and make check requires it of starter/
# (tools/checks/20-starter.sh).
stub_counts() {
    awk '/return KIT_E_TODO/ { t++ } /@listing/ { m++ } END { print t + 0, m + 0 }'
}

# all_stubs: succeeds when the C text on stdin is all stubs.
all_stubs() {
    set -- $(stub_counts)
    [ "$2" -gt 0 ] && [ "$1" -eq "$2" ]
}

# backup_dir NAME: make a new folder build/backups/NAME-<date> for copies
# of the student's files, and print its path. Two within one second get
# -2, -3, ... (mkdir without -p fails when the folder exists, so no
# backup is ever written over another). make reset and make format use it.
backup_dir() {
    _stamp=$(date +%Y%m%d-%H%M%S)
    mkdir -p build/backups || return 1
    _dest="build/backups/$1-$_stamp"
    _n=1
    while ! mkdir "$_dest" 2>/dev/null; do
        _n=$((_n + 1))
        _dest="build/backups/$1-$_stamp-$_n"
        [ "$_n" -lt 1000 ] || { echo "cannot make a backup folder under build/backups/" >&2; return 1; }
    done
    echo "$_dest"
}
