# ch8_sent16_b0.gp: chapter 8, the lesson's sentence through the 16-head
# network of the reference run (first seed): the 16 heads of block
# `blk`, 4 by 4 (block 0 here; ch8_sent16_b1.gp sets blk = 1 and loads
# this file). Each map is causal: a query row (the word attending)
# against the words before it. Data: ch8_sentence_h16_lL_iI.dat, the
# run's sentence/ files as plotdata/ch8_long copies them.
if (!exists("datadir")) datadir = "build/plots/data"
if (!exists("blk")) blk = 0
cols = 4
rows = 4
# the maps share their labels: the words of a row on the left column's
# maps, of a column under the bottom row's, so that each map is 3.45 cm
# and its 13 words are 7 pt type on a 7.6 pt pitch
L = 1.5; m = 3.45; gx = 0.3; T = 1.3; gy = 0.75; B = 1.4   # cm
fig_w = L + cols * m + (cols - 1) * gx + 0.1
fig_h = T + rows * m + (rows - 1) * gy + B    # cm, as printed
load "plots/common.gp"
sx(x) = x / fig_w
sy(y) = 1 - y / fig_h
set cbrange [0:1]
unset key
unset colorbox
set yrange [] reverse
set multiplot title sprintf("16 heads, block %d: every head's weights on the sentence (rows: the word attending)", blk) font ",9"
do for [i = 0:15] {
    c = i % cols; r = i / cols
    set lmargin at screen sx(L + c * (m + gx))
    set rmargin at screen sx(L + c * (m + gx) + m)
    set tmargin at screen sy(T + r * (m + gy))
    set bmargin at screen sy(T + r * (m + gy) + m)
    set tics scale 0 font ",7"
    set xtics rotate by 90 right
    if (c > 0) { unset ytics }
    if (r < rows - 1) { unset xtics }
    set title sprintf("head %d.%d", blk, i) font ",8" offset 0, -0.6
    plot datadir.sprintf("/ch8_sentence_h16_l%d_i%d.dat", blk, i) matrix rowheaders columnheaders using 1:2:3 with image
}
unset multiplot
