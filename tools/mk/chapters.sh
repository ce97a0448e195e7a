#!/bin/sh
# chapters.sh COMMAND [N]: read the table of chapters, chapters/chapters.tsv
# (its header says what each column means). Everything that lists the
# chapters reads them through this script, or through the make variables
# `mk` writes for the Makefile.
#
#   nums       every chapter's number, in numeric order
#   title N    chapter N's title ("Scaled dot-product attention")
#   slug N     its slug; md N: its prose, chapters/NN-slug.md
#   own N      the basenames of its own files in starter/ and solutions/
#   needs N    the chapters it needs
#   files N    the basenames its tests link: the own files of the
#              chapters it needs, in their order, then its own
#   file N     the student's file its tests name (ch1_attention.c): its
#              first own file, or the last needed chapter's
#   points N   its grading points
#   given N    the basenames of its files in given/
#   mds        every chapter's prose file, in numeric order
#   sources    every chapter's own files, in numeric order
#   points-table  "N POINTS" per chapter (the grader's points table)
#   judged     the chapters grading judges in the worker, in numeric order
#   judged-files  their own files, in numeric order
#   race       the chapters that run the race pass, in numeric order
#   mk         the same as make variables (CHAPTER_NUMS, CHAPTER_MDS,
#              CHAPTER_SOURCES, JUDGED_CHAPTERS, RACE_CHAPTERS, and for
#              each chapter N CH_TITLE_N, CH_OWN_N, CH_NEEDS_N, CH_FILES_N,
#              CH_FILE_N, CH_POINTS_N, CH_GIVEN_N), one per line ending in
#              |NL| (make's $(shell) joins lines); if the table is wrong,
#              one $(error ...) naming the problem instead
#   check      validate the table and the files it names; print the
#              first problem in one line and exit 1 (mk does the same,
#              but a missing starter/ file is no problem for it: see
#              need_starter below)
#
# The kit is the folder two above this script's: its table is
# KIT/chapters/chapters.tsv, and check looks for the files there.
# Any command but mk stops on a malformed table, with check's message.
set -u
KIT=$(dirname "$0")/../..
TABLE=$KIT/chapters/chapters.tsv
cmd=${1:-}
arg=${2:-}
case "$cmd" in
nums | mds | sources | points-table | judged | judged-files | race | mk | check) ;;
title | slug | md | own | needs | files | file | points | given)
    case "$arg" in
    '' | *[!0-9]*)
        echo "chapters.sh $cmd: needs a chapter number, not '$arg'" >&2
        exit 2
        ;;
    esac
    ;;
*)
    echo "usage: chapters.sh nums|mds|sources|points-table|judged|judged-files|race|mk|check, or title|slug|md|own|needs|files|file|points|given N" >&2
    exit 2
    ;;
esac
if [ ! -r "$TABLE" ]; then
    msg="chapters.tsv: cannot read chapters/chapters.tsv"
    if [ "$cmd" = mk ]; then printf '$(error %s)\n' "$msg"; else echo "$msg" >&2; fi
    exit 1
fi
# One awk reads the table, checks it (the files only for check and mk:
# every make invocation), and answers.
exec awk -F'\t' -v q="'" -v cmd="$cmd" -v arg="$arg" -v kit="$KIT" -v files_too="$(
    case "$cmd" in check | mk) echo 1 ;; *) echo 0 ;; esac)" -v tests_c="$(
    cd "$KIT" 2>/dev/null && ls tests/test_ch*.c 2>/dev/null | tr '\n' ' ')" -v mds_found="$(
    cd "$KIT" 2>/dev/null && ls chapters/[0-9][0-9]-*.md 2>/dev/null | tr '\n' ' ')" '
function bad(msg) { if (problem == "") problem = "chapters.tsv: " msg }
function exists(path,    line, r) {
    r = (getline line < (kit "/" path))
    close(kit "/" path)
    return r >= 0
}
# A file of the kit itself (the prose, tests/, solutions/, given/) that is
# missing is the kit broken: every make stops. A file of the student in
# starter/ that is missing is not: make reset CH=N brings back its stubs,
# and make test runs the chapters that do not need it (tools/loop/test.sh
# names it); only check (make check) stops on it.
function need_file(n, path) {
    if (!exists(path)) bad("chapter " n " needs " path ", which does not exist: the kit itself is incomplete; in a git clone, git checkout -- " path " restores it")
}
function need_starter(n, path) {
    if (!exists(path) && cmd == "check") bad("chapter " n " needs " path ", which does not exist: make reset CH=" n " brings back its stubs")
}
# "a b c" and "-": the words, into w[1..]; returns how many.
function words(s, w,    k) { if (s == "-") return 0; k = split(s, w, / +/); return k }
/^#/ || /^[ \t]*$/ { next }
{
    line = FNR
    if (NF != 9) { bad("line " line " has " NF " columns, not 9 (num, slug, title, files, needs, points, judged, race, given, separated by one tab each)"); next }
    n = $1
    if (n !~ /^[1-9][0-9]?$/) { bad("line " line ": the number \"" n "\" is not a chapter number (1 to 99)"); next }
    if (n in title) { bad("line " line ": chapter " n " has a second line"); next }
    if ($2 !~ /^[a-z0-9]+(-[a-z0-9]+)*$/) bad("chapter " n ": the slug \"" $2 "\" is not lower-case words joined by -")
    if ($3 == "" || $3 ~ /["\\$`#|]/) bad("chapter " n ": the title is empty or holds one of \" \\ $ ` # |")
    if ($4 !~ /^(-|[A-Za-z_][A-Za-z_0-9]*( [A-Za-z_][A-Za-z_0-9]*)*)$/) bad("chapter " n ": the files \"" $4 "\" are not basenames separated by one blank, or -")
    if ($5 !~ /^(-|[0-9]+( [0-9]+)*)$/) bad("chapter " n ": the needs \"" $5 "\" are not chapter numbers separated by one blank, or -")
    if ($6 !~ /^[0-9]+$/) bad("chapter " n ": the points \"" $6 "\" are not a whole number")
    if ($7 !~ /^(yes|no)$/) bad("chapter " n ": judged is \"" $7 "\", not yes or no")
    if ($8 !~ /^(yes|no)$/) bad("chapter " n ": race is \"" $8 "\", not yes or no")
    if ($9 !~ /^(-|[A-Za-z_][A-Za-z_0-9]*( [A-Za-z_][A-Za-z_0-9]*)*)$/) bad("chapter " n ": the given files \"" $9 "\" are not basenames separated by one blank, or -")
    num[++count] = n; title[n] = $3; slug[n] = $2; own[n] = $4; needs[n] = $5; pts[n] = $6 + 0
    judged[n] = ($7 == "yes"); race[n] = ($8 == "yes"); given[n] = $9
    md[n] = sprintf("chapters/%02d-%s.md", n, $2)
}
END {
    if (count == 0) bad("the table has no chapters")
    # numeric order (a few lines: insertion sort)
    for (i = 2; i <= count; i++) for (j = i; j > 1 && num[j - 1] + 0 > num[j] + 0; j--) { t = num[j]; num[j] = num[j - 1]; num[j - 1] = t }
    total = 0
    for (i = 1; i <= count; i++) {
        n = num[i]; total += pts[n]
        k = words(needs[n], w)
        for (j = 1; j <= k; j++) {
            if (!(w[j] in title)) bad("chapter " n " needs chapter " w[j] ", which has no line")
            else if (w[j] + 0 >= n + 0) bad("chapter " n " needs chapter " w[j] ", which is not an earlier chapter")
            else if (has[n, w[j]]) bad("chapter " n " needs chapter " w[j] " twice")
            has[n, w[j]] = 1
        }
        # a needed chapter links what it needs: chapter n must list those too
        for (j = 1; j <= k; j++) if (w[j] in title) {
            kk = words(needs[w[j]], ww)
            for (m = 1; m <= kk; m++) if (!has[n, ww[m]]) bad("chapter " n " needs chapter " w[j] ", which needs chapter " ww[m] ": list " ww[m] " in chapter " n q "s needs too")
        }
        link = ""
        for (j = 1; j <= k; j++) if (own[w[j]] != "-") link = link " " own[w[j]]
        if (own[n] != "-") link = link " " own[n]
        files[n] = substr(link, 2)
        if (own[n] != "-") { split(own[n], o, " "); file[n] = o[1] ".c" }
        else {
            file[n] = ""
            for (j = k; j >= 1 && file[n] == ""; j--) if (own[w[j]] != "-") { split(own[w[j]], o, " "); file[n] = o[1] ".c" }
        }
        if (file[n] == "") bad("chapter " n " has no files of its own and needs no chapter that has")
        ko = words(own[n], o)
        for (j = 1; j <= ko; j++) {
            if (o[j] in owner) bad("chapter " n q "s file " o[j] " is chapter " owner[o[j]] q "s already")
            owner[o[j]] = n
        }
        ko = words(given[n], o)
        for (j = 1; j <= ko; j++) {
            if (o[j] in gowner) bad("chapter " n q "s given file " o[j] " is chapter " gowner[o[j]] q "s already")
            gowner[o[j]] = n
        }
    }
    if (problem == "" && total != 100) bad("the points sum to " total ", not 100")
    if (files_too) {
        for (i = 1; i <= count && problem == ""; i++) {
            n = num[i]
            need_file(n, md[n])
            need_file(n, "tests/test_ch" n ".c")
            need_file(n, "tests/hints/ch" n ".txt")
            need_file(n, "tests/mutants/ch" n ".tsv")
            ko = words(own[n], o)
            for (j = 1; j <= ko; j++) { need_file(n, "solutions/" o[j] ".c"); need_starter(n, "starter/" o[j] ".c") }
            ko = words(given[n], o)
            for (j = 1; j <= ko; j++) need_file(n, "given/" o[j] ".c")
        }
        # and nothing the table does not list
        k = split(tests_c, w, " ")
        for (j = 1; j <= k; j++) { t = w[j]; sub(/^tests\/test_ch/, "", t); sub(/\.c$/, "", t); if (!(t in title)) bad(w[j] " has no line in the table") }
        k = split(mds_found, w, " ")
        for (j = 1; j <= k; j++) { t = w[j]; sub(/^chapters\//, "", t); t = substr(t, 1, 2) + 0; if (!(t in title) || md[t] != w[j]) bad(w[j] " is not the prose file of a chapter in the table") }
    }
    if (cmd == "mk") {
        if (problem != "") { gsub(/[()$]/, "", problem); printf "$(error %s)\n", problem; exit 1 }
        s = ""; m = ""; src = ""; jc = ""; rc = ""
        for (i = 1; i <= count; i++) {
            n = num[i]; s = s " " n; m = m " " md[n]; if (own[n] != "-") src = src " " own[n]
            if (judged[n]) jc = jc " " n
            if (race[n]) rc = rc " " n
        }
        printf "CHAPTER_NUMS :=%s|NL|CHAPTER_MDS :=%s|NL|CHAPTER_SOURCES :=%s|NL|", s, m, src
        printf "JUDGED_CHAPTERS :=%s|NL|RACE_CHAPTERS :=%s|NL|", jc, rc
        for (i = 1; i <= count; i++) {
            n = num[i]
            printf "CH_TITLE_%s := %s|NL|CH_OWN_%s := %s|NL|CH_NEEDS_%s := %s|NL|", n, title[n], n, (own[n] == "-" ? "" : own[n]), n, (needs[n] == "-" ? "" : needs[n])
            printf "CH_FILES_%s := %s|NL|CH_FILE_%s := %s|NL|CH_POINTS_%s := %s|NL|", n, files[n], n, file[n], n, pts[n]
            printf "CH_GIVEN_%s := %s|NL|", n, (given[n] == "-" ? "" : given[n])
        }
        printf "\n"
        exit 0
    }
    if (problem != "") { print problem > "/dev/stderr"; exit 1 }
    if (cmd == "check") exit 0
    if (cmd == "nums" || cmd == "mds" || cmd == "sources" || cmd == "points-table" || cmd == "judged" || cmd == "judged-files" || cmd == "race") {
        for (i = 1; i <= count; i++) {
            n = num[i]
            if (cmd == "nums") print n
            else if (cmd == "mds") print md[n]
            else if (cmd == "points-table") print n " " pts[n]
            else if (cmd == "judged") { if (judged[n]) print n }
            else if (cmd == "race") { if (race[n]) print n }
            else if (cmd == "sources" || judged[n]) { ko = words(own[n], o); for (j = 1; j <= ko; j++) print o[j] }
        }
        exit 0
    }
    if (!(arg in title)) { print "chapters.tsv: there is no chapter " arg > "/dev/stderr"; exit 1 }
    if (cmd == "title") print title[arg]
    else if (cmd == "slug") print slug[arg]
    else if (cmd == "md") print md[arg]
    else if (cmd == "own") print (own[arg] == "-" ? "" : own[arg])
    else if (cmd == "needs") print (needs[arg] == "-" ? "" : needs[arg])
    else if (cmd == "files") print files[arg]
    else if (cmd == "file") print file[arg]
    else if (cmd == "points") print pts[arg]
    else if (cmd == "given") print (given[arg] == "-" ? "" : given[arg])
}' "$TABLE"
