# figure-labels.awk: the lettering of one figure, as pdftocairo -svg writes
# it from the figure's PDF (tools/checks/72-book-print.sh, section 3):
#   awk [-v tol=0.3] [-v join=14] -f tools/checks/figure-labels.awk FIG.svg
# prints each glyph whose ink box leaves the figure (its viewBox) by more
# than tol pt, and each pair of glyphs of different labels whose ink boxes
# overlap by more than tol pt both ways, then "glyphs N labels N outside N
# overlaps N". A glyph is a <symbol> whose path is in absolute M/L/C/Z
# coordinates (its ink box: the extremes of its points, control points
# included), drawn by <use xlink:href="#glyphF-N" x=".." y=".."/>; a run is
# the <g> that holds one text show's uses; a glyph drawn with a transform
# is reported as unread (exit 1), not guessed.
function attr(s, name,   v) {
    if (!match(s, "[ \t]" name "=\"[^\"]*\"")) return ""
    v = substr(s, RSTART + length(name) + 3, RLENGTH - length(name) - 4)
    return v
}
BEGIN { RS = ">"; tol = tol == "" ? 0.3 : tol; join = join == "" ? 14 : join }
/<svg[ \t]/ { split(attr($0, "viewBox"), vb, /[ ,]+/); W = vb[3]; H = vb[4] }
/<symbol[ \t]/ { sym = attr($0, "id") }
/<\/symbol/ { sym = "" }
/<path[ \t]/ && sym != "" {
    d = attr($0, "d"); gsub(/[A-Za-z]/, " ", d); k = split(d, v, /[ ,]+/); m = 0
    for (i = 1; i <= k; i++) if (v[i] != "") p[++m] = v[i] + 0
    for (i = 1; i + 1 <= m; i += 2) {
        if (!(sym in bx0) || p[i] < bx0[sym]) bx0[sym] = p[i]
        if (!(sym in bx1) || p[i] > bx1[sym]) bx1[sym] = p[i]
        if (!(sym in by0) || p[i + 1] < by0[sym]) by0[sym] = p[i + 1]
        if (!(sym in by1) || p[i + 1] > by1[sym]) by1[sym] = p[i + 1]
    }
    if (m % 2) { print "unread: symbol " sym " has an odd number of coordinates"; bad = 1 }
}
/<g[ \t>]/ || /<g$/ { run++ }
/<use[ \t]/ {
    h = attr($0, "xlink:href")
    if (h !~ /^#glyph/) next
    if (attr($0, "transform") != "") { print "unread: a glyph drawn with a transform"; bad = 1; next }
    s = substr(h, 2)
    if (!(s in bx0)) next  # a space: no ink
    n++; r[n] = run; g[n] = s
    if (!(run in first)) { first[run] = n; fx[run] = attr($0, "x") + 0; fy[run] = attr($0, "y") + 0 }
    lx[run] = attr($0, "x") + 0; ly[run] = attr($0, "y") + 0; lastrun = run
    x0[n] = attr($0, "x") + bx0[s]; x1[n] = attr($0, "x") + bx1[s]
    y0[n] = attr($0, "y") + by0[s]; y1[n] = attr($0, "y") + by1[s]
}
END {
    # a label: consecutive runs, each starting within join pt of where the
    # one before it left off (its last glyph's origin)
    prev = ""
    for (q = 1; q <= lastrun; q++) {
        if (!(q in first)) continue
        if (prev != "" && (dd = sqrt((fx[q] - lx[prev]) ^ 2 + (fy[q] - ly[prev]) ^ 2)) >= 0.5 && dd <= join)
            lab[q] = lab[prev]
        else
            lab[q] = ++labels
        prev = q
    }
    for (i = 1; i <= n; i++)
        if (x0[i] < -tol || y0[i] < -tol || x1[i] > W + tol || y1[i] > H + tol) {
            printf "outside: glyph %s at [%.1f, %.1f]-[%.1f, %.1f], the figure is %.1f x %.1f\n", g[i], x0[i], y0[i], x1[i], y1[i], W, H
            out++
        }
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
        if (lab[r[i]] == lab[r[j]]) continue
        ox = (x1[i] < x1[j] ? x1[i] : x1[j]) - (x0[i] > x0[j] ? x0[i] : x0[j])
        oy = (y1[i] < y1[j] ? y1[i] : y1[j]) - (y0[i] > y0[j] ? y0[i] : y0[j])
        if (ox > tol && oy > tol) {
            printf "overlap: glyphs at [%.1f, %.1f] and [%.1f, %.1f] (runs %d and %d) by %.1f x %.1f pt\n", x0[i], y0[i], x0[j], y0[j], r[i], r[j], ox, oy
            over++
        }
    }
    printf "glyphs %d labels %d outside %d overlaps %d\n", n, labels, out + 0, over + 0
    exit bad
}
