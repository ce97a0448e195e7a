# ch8_sentence.gp: chapter 8, the lesson's sentence through the trained
# networks of the book's run (first seed): the 1-head network's two
# blocks on the top row, and every head of the best many-head network
# below, block 0 then block 1. Each map is causal: a query row (the word
# attending) against the words before it. Data: ch8_sent_one_lL_i0.dat
# and ch8_sent_many_lL_iI.dat (tools/runs/lm/main.c, --data), matrices
# with the words as row and column headers; ch8_sent.gpi gives `many`.
if (!exists("datadir")) datadir = "build/plots/data"
load datadir."/ch8_sent.gpi"
cols = many < 4 ? many : 4
rows = 1 + 2 * int((many + cols - 1) / cols)
# the maps share their labels: the words of a row on the left column's
# maps, of a column under the bottom row's, so that each map is 3.45 cm
# and its 13 words are 7 pt type on a 7.6 pt pitch
L = 1.5; m = 3.45; gx = 0.3; T = 1.3; gy = 0.75; B = 1.4   # cm
fig_w = L + 4 * m + 3 * gx + 0.1
fig_h = T + rows * m + (rows - 1) * gy + B    # cm, as printed
load "plots/common.gp"
sx(x) = x / fig_w
sy(y) = 1 - y / fig_h
set cbrange [0:1]
unset key
unset colorbox
set yrange [] reverse
set multiplot title "The lesson's sentence: every head's weights (rows: the word attending)" font ",9"
n = 2 + 2 * many
do for [k = 0:n - 1] {
    # the top row holds the 1-head network's two blocks; then the many-head
    # network's heads, block 0 then block 1, each block on its own rows
    if (k < 2) { c = k; r = 0 } else { j = (k - 2) % many; c = j % cols; r = 1 + ((k - 2) / many) * int((many + cols - 1) / cols) + j / cols }
    set lmargin at screen sx(L + c * (m + gx))
    set rmargin at screen sx(L + c * (m + gx) + m)
    set tmargin at screen sy(T + r * (m + gy))
    set bmargin at screen sy(T + r * (m + gy) + m)
    set tics scale 0 font ",7"
    set xtics rotate by 90 right
    if (c > 0) { unset ytics }
    if (r < rows - 1) { unset xtics }
    if (k < 2) {
        set title sprintf("1 head, block %d", k) font ",8" offset 0, -0.6
        plot datadir.sprintf("/ch8_sent_one_l%d_i0.dat", k) matrix rowheaders columnheaders using 1:2:3 with image
    } else {
        l = (k - 2) / many; i = (k - 2) % many
        set title sprintf("%d heads, block %d, head %d", many, l, i) font ",7" offset 0, -0.6
        plot datadir.sprintf("/ch8_sent_many_l%d_i%d.dat", l, i) matrix rowheaders columnheaders using 1:2:3 with image
    }
}
unset multiplot
