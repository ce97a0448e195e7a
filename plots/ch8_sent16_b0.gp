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
fig_w = 16.4; fig_h = 1.0 + 4.4 * rows    # cm, as printed: 4.4 cm a row
load "plots/common.gp"
set cbrange [0:1]
unset key
unset colorbox
set tics scale 0 font ",7"
set xtics rotate by 90 right
set yrange [] reverse
set size ratio -1
set multiplot layout rows, cols margins 0.06, 0.98, 0.05, 0.95 spacing 0.07, 0.07 title sprintf("16 heads, block %d: every head's weights on the sentence (rows: the word attending)", blk) font ",9"
do for [i = 0:15] {
    set title sprintf("head %d.%d", blk, i) font ",8"
    plot datadir.sprintf("/ch8_sentence_h16_l%d_i%d.dat", blk, i) matrix rowheaders columnheaders using 1:2:3 with image
}
unset multiplot
