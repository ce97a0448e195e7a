# ch5_heads.gp: chapter 5, what each trained head attends to.
# One sequence, the same for every panel; row 1: the 1-head network,
# row 2: the 2-head network, row 3: the 4-head network. Each panel is a
# head's weights (query t down, key j across, first query at the top).
# Data: ch5_heads_hH_iI.dat (tools/runs/experiment/data.c), token labels in
# the files' first row and column; ch5_heads.gpi (tools/runs/plotdata/ch5.c,
# from ch5_heads_roles.csv) sets each panel's title:
# the head's mean weight on the token each relation reads (t-1, t-2,
# x0 = the first token, x1 = the second), over the evaluation sequences.
fig_w = 16.4; fig_h = 15.6            # cm, as printed
load "plots/common.gp"
load datadir."/ch5_heads.gpi"

set cbrange [0:1]
set yrange [] reverse
set size ratio -1
set tics scale 0 font ",7"
set xtics offset 0, 0.3
unset key
# the per-head mean weights are the figure's evidence: 8 pt, to fit a panel
set title font ",8"

set multiplot layout 3, 4 margins 0.035, 0.9, 0.03, 0.835 spacing 0.05, 0.13 \
    title "Attention weights of the trained heads on one sequence\n(rows: 1, 2 and 4 heads)" font ",10"

# the empty corner of the first row explains how to read a panel
set label 10 "In each panel a row is a query (the first at the top)\nand a column a key; the labels are the sequence's symbols.\n\nAbove each panel: the head's mean weight on the token\neach relation reads, over every evaluation sequence:\n  t-1 = the previous token,  t-2 = the token two back,\n  x0 = the first token,  x1 = the second token." \
    at screen 0.3, screen 0.83 left font ",8.5"

do for [k in "1 2 4"] {
    h = int(k)
    do for [i = 0:3] {
        if (i < h) {
            set title value(sprintf("title_ch5_heads_h%d_i%d", h, i))
            if (h > 1 || i > 0) { unset label 10 }
            # one colour bar, on the last panel of the last row
            if (h == 4 && i == 3) { set colorbox user origin 0.915, 0.08 size 0.015, 0.76 } else { unset colorbox }
            plot datadir.sprintf("/ch5_heads_h%d_i%d.dat", h, i) matrix rowheaders columnheaders using 1:2:3 with image
        } else {
            set multiplot next
        }
    }
}
unset multiplot
