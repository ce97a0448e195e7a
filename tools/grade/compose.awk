# compose.awk: score one graded submission, write its one-student summary
# for the gradebook, and hand the fields of Gradescope's results.json to
# jq (results.jq), which writes the JSON. Run by compose.sh as
#   awk -f compose.awk -v fields=OUT -v summary=OUT -v status=TEXT \
#       POINTS TESTS FILES RESULTS IGNORED
# (and with fields=/dev/null and summary=/dev/null, to check a points
# table before grading).
# POINTS   the points table: "CHAPTER POINTS" or "TEST POINTS" lines (by
#          default each chapter's points from chapters/chapters.tsv)
# TESTS    every test, as the runner's table of the stubs' run (prepare.sh)
# FILES    build.sh's files.tsv: each expected file's fate
# RESULTS  the runner's table for this submission (empty if it did not run)
# IGNORED  the submission's other files, one a line
# A malformed points table stops with a message naming its line.
# The fields, each ended by a NUL byte (no text the grader handles holds
# one): the total score, the output shown above the tests, then six for
# each test (name, number, score, max_score, status, output), and last
# the word "end", with no NUL, which tells results.jq the list is whole.
BEGIN { FS = "\t"; nfile = 0; bad = 0; NUL = sprintf("%c", 0) }
# Which input this line is from (an empty input has no lines at all).
FILENAME != cur { cur = FILENAME; for (k = 1; k < ARGC; k++) if (ARGV[k] == FILENAME) { nfile = k; break } }
nfile == 1 { points_line(); next }
nfile == 2 && FNR > 1 { ntest++; tname[ntest] = $3; tch[$3] = $1; tfile[$1] = $2; chs[$1] = 1; next }
nfile == 3 { fstat[$1] = $2; fwhere[$1] = $3; fwhy[$1] = $4; forder[++nf] = $1; next }
# The message is the rest of the line, whatever it holds.
nfile == 4 && FNR > 1 {
    rstat[$3] = $4; rest = $0
    for (j = 1; j <= 5; j++) sub(/^[^\t]*\t/, "", rest)
    rmsg[$3] = NF >= 6 ? rest : ""; next
}
nfile == 5 && $0 != "" { nign++; ign[nign] = $0; next }

function fail(msg) { print ARGV[1] " line " FNR ": " msg > "/dev/stderr"; bad = 1; exit 2 }
function points_line(   line, n, f) {
    line = $0
    sub(/#.*/, "", line)
    gsub(/^[ \t]+|[ \t\r]+$/, "", line)
    if (line == "") return
    n = split(line, f, /[ \t]+/)
    if (n != 2) fail("expected 'CHAPTER POINTS' or 'TEST POINTS', found '" $0 "'")
    if (f[2] !~ /^[0-9]+(\.[0-9]+)?$/) fail("the points '" f[2] "' are not a number")
    if (f[1] ~ /^[0-9]+$/) {
        if (f[1] in chpts) fail("chapter " f[1] " has a second line")
        chpts[f[1]] = f[2] + 0; chline[f[1]] = FNR
    } else if (f[1] ~ /^[A-Za-z_][A-Za-z_0-9]*$/) {
        if (f[1] in tpts) fail("test " f[1] " has a second line")
        tpts[f[1]] = f[2] + 0; tline[f[1]] = FNR
    } else fail("'" f[1] "' is neither a chapter number nor a test name")
}
# One field for results.jq: its text as it is (jq escapes it), ended by NUL.
function field(s) { gsub(NUL, "", s); printf "%s%c", s, 0 > fields }
function fmt(x) { return sprintf("%.2f", x + 0) }

END {
    if (bad) exit 2
    # Check the table against the tests that exist.
    for (t in tpts) if (!(t in tch)) {
        print ARGV[1] " line " tline[t] ": there is no test named '" t "' (make list shows them)" > "/dev/stderr"; exit 2 }
    for (c in chpts) if (!(c in chs)) {
        print ARGV[1] " line " chline[c] ": there is no chapter " c > "/dev/stderr"; exit 2 }
    for (c in chs) if (!(c in chpts)) {
        print ARGV[1] ": chapter " c " has no line; every chapter needs one (0 is allowed)" > "/dev/stderr"; exit 2 }
    for (i = 1; i <= ntest; i++) {
        t = tname[i]; c = tch[t]
        if (t in tpts) fixed[c] += tpts[t]; else shared[c]++
    }
    for (c in chs) if (fixed[c] > chpts[c] + 1e-9) {
        print ARGV[1] " line " chline[c] ": the tests of chapter " c " listed on their own lines are worth " fixed[c] ", more than the chapter's " chpts[c] > "/dev/stderr"; exit 2 }

    # What happened to each file, said once at the top and on every test
    # that ran against a stub because of it.
    head = ""
    for (i = 1; i <= nf; i++) {
        f = forder[i]
        if (fstat[f] == "ok") { graded = graded (graded ? ", " : "") f (fwhere[f] != f ? " (from " fwhere[f] ")" : ""); continue }
        if (fstat[f] == "missing") note[f] = (fwhy[f] != "" ? fwhy[f] : f " was not in the submission") ", so its tests ran against the kit's empty stub."
        else if (fstat[f] == "compile") note[f] = f " does not compile, so its tests ran against the kit's empty stub. The compiler's first error: " fwhy[f]
        else note[f] = f " was not graded: " fwhy[f] ". Its tests ran against the kit's empty stub."
        head = head note[f] "\n"
        reason = reason (reason ? "; " : "") f ": " (fstat[f] == "compile" ? "does not compile" : fstat[f] == "missing" ? "missing" : "refused (" fwhy[f] ")")
    }
    head = "Graded: " (graded ? graded : "none of the expected files") ".\n" head
    if (nign) {
        list = ""
        for (i = 1; i <= nign && i <= 8; i++) list = list (i > 1 ? ", " : "") ign[i]
        if (nign > 8) list = list ", and " (nign - 8) " more"
        head = head "Ignored, not graded (only the chapters' files starter/chN_*.c are taken, flat or in folders): " list ".\n"
    }
    if (status != "ran") {
        head = head "The tests did not run: " status ".\n"
        reason = reason (reason ? "; " : "") status
    }

    total = 0; maxt = 0
    for (i = 1; i <= ntest; i++) {
        t = tname[i]; c = tch[t]; f = tfile[c]
        # A chapter's shared points are split in whole hundredths, the
        # first tests taking one more when they do not divide evenly, so
        # that the max_scores shown (to 2 places) add up to the points.
        if (t in tpts) mx = tpts[t]
        else if (shared[c]) {
            cents = sprintf("%.0f", (chpts[c] - fixed[c]) * 100) + 0
            k = nshared[c]++
            mx = (int(cents / shared[c]) + (k < cents % shared[c] ? 1 : 0)) / 100
        } else mx = 0
        ok = (status == "ran" && rstat[t] == "passed")
        msg = ""
        if (!ok) {
            msg = (t in rmsg) ? rmsg[t] : (status != "ran" ? "The tests did not run: " status "." : "This test did not run.")
            if (f in note) msg = note[f] "\n\n" msg
            # A mistake is named only when every file up to this chapter
            # was graded: behind an earlier chapter's stub, a later
            # chapter's output can look like a mistake it does not have.
            if (!(c in behind)) { behind[c] = 0; for (cc in tfile) if (cc + 0 <= c + 0 && (tfile[cc] in note)) behind[c] = 1 }
            if (!behind[c] && match(msg, /Likely mistake: [^.]*[^. ]/)) {
                # The mistake's name: every naming starts with the words
                # KIT_NAMING_MARK (tests/kit_test.h), "Likely mistake: NAME.";
                # the name ends at its first period, colon or parenthesis.
                # "Likely mistakes:" (several fit, none sure) is not counted.
                m = substr(msg, RSTART + 16, RLENGTH - 16)
                if ((k = index(m, ": ")) > 0) m = substr(m, 1, k - 1)
                if ((k = index(m, " (")) > 0) m = substr(m, 1, k - 1)
                if (!((c SUBSEP m) in seen)) { seen[c, m] = 1; nmis++; mch[nmis] = c; mname[nmis] = m; mistakes = mistakes (mistakes ? "; " : "") "ch" c ": " m }
            }
            # Crashes and hangs, one entry per chapter, kind and function.
            kind = ""
            if (match(msg, /crashed with SIG[A-Z]+/)) kind = "crashed (" substr(msg, RSTART + 13, RLENGTH - 13) ")"
            else if (msg ~ /timed out after/) kind = "hung (timed out)"
            if (kind != "") {
                fn = ""
                if (match(msg, /It happened inside [A-Za-z_0-9]+/)) fn = " in " substr(msg, RSTART + 19, RLENGTH - 19)
                key = "ch" c ": " kind fn
                if (!(key in nbad)) order[++nkeys] = key
                nbad[key]++
            }
        }
        sc = ok ? mx : 0
        total += sc; maxt += mx; chs_sc[c] += sc; chs_mx[c] += mx
        tn[i] = "ch" c " " t; tnum[i] = c "." (++num[c]); tsc[i] = fmt(sc); tmx[i] = fmt(mx)
        tst[i] = ok ? "passed" : "failed"; tout[i] = msg
    }
    for (i = 1; i <= nkeys; i++)
        reason = reason (reason ? "; " : "") order[i] " (" nbad[order[i]] " test" (nbad[order[i]] > 1 ? "s" : "") ")"
    line = ""
    for (c = 1; c <= 99; c++) if (c in chs) line = line sprintf("%sChapter %d: %s of %s", line ? ", " : "", c, fmt(chs_sc[c]), fmt(chs_mx[c]))
    head = head "Score by chapter: " line "."
    field(fmt(total)); field(head)
    for (i = 1; i <= ntest; i++) { field(tn[i]); field(tnum[i]); field(tsc[i]); field(tmx[i]); field(tst[i]); field(tout[i]) }
    printf "end" > fields
    for (c = 1; c <= 99; c++) if (c in chs) printf "ch%d\t%s\t%s\n", c, fmt(chs_sc[c]), fmt(chs_mx[c]) > summary
    printf "total\t%s\t%s\nreason\t%s\nmistakes\t%s\n", fmt(total), fmt(maxt), reason, mistakes > summary
    for (i = 1; i <= nmis; i++) printf "mistake\t%s\t%s\n", mch[i], mname[i] > summary
}
