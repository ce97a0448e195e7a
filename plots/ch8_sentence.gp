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
fig_w = 16.4; fig_h = 1.0 + 4.4 * rows    # cm, as printed: 4.4 cm a row
load "plots/common.gp"
set cbrange [0:1]
unset key
unset colorbox
set tics scale 0 font ",7"
set xtics rotate by 90 right
set yrange [] reverse
set size ratio -1
set multiplot layout rows, cols margins 0.06, 0.98, 0.03, 0.94 spacing 0.07, 0.09 title "The lesson's sentence: every head's weights (rows: the word attending)" font ",9"
do for [l = 0:1] {
    set title sprintf("1 head, block %d", l) font ",8"
    plot datadir.sprintf("/ch8_sent_one_l%d_i0.dat", l) matrix rowheaders columnheaders using 1:2:3 with image
}
do for [c = 2:cols - 1] { set multiplot next }
do for [l = 0:1] {
    do for [i = 0:many - 1] {
        set title sprintf("%d heads, block %d, head %d", many, l, i) font ",8"
        plot datadir.sprintf("/ch8_sent_many_l%d_i%d.dat", l, i) matrix rowheaders columnheaders using 1:2:3 with image
    }
}
unset multiplot
