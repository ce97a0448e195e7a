# ch6_kv.gp: chapter 6, what the trained query heads attend to when they
# share keys and values. Chapter 5's network with 4 query heads; row 1:
# 4 K/V heads (multi-head), row 2: 2 K/V heads (query heads 0-1 and 2-3
# share), row 3: 1 K/V head (all four share). The first seed, the
# sequence chapter 5's maps show. Each panel is a query head's weights
# (query t down, key j across, first query at the top).
# Data: ch6_kv_gG_iI.dat (tools/runs/kvexp/main.c), token labels in the files'
# first row and column; ch6_kv.gpi sets each panel's title: the query
# head, the K/V head it reads, and its mean weight on the token each
# relation reads (t-1, t-2, x0, x1), over the evaluation sequences.
fig_w = 16.4; fig_h = 15.6            # cm, as printed
load "plots/common.gp"
load datadir."/ch6_kv.gpi"

set cbrange [0:1]
set yrange [] reverse
set size ratio -1
set tics scale 0 font ",7"
set xtics offset 0, 0.3
unset key
# the per-head mean weights are the figure's evidence: 8 pt, to fit a panel
set title font ",8"

set multiplot layout 3, 4 margins 0.035, 0.9, 0.03, 0.835 spacing 0.05, 0.13 \
    title "Attention weights of 4 trained query heads on one sequence\n(rows: 4, 2 and 1 K/V heads shared among them)" font ",10"

do for [k in "4 2 1"] {
    g = int(k)
    do for [i = 0:3] {
        set title value(sprintf("title_g%d_i%d", g, i))
        if (g == 1 && i == 3) { set colorbox user origin 0.915, 0.08 size 0.015, 0.76 } else { unset colorbox }
        plot datadir.sprintf("/ch6_kv_g%d_i%d.dat", g, i) matrix rowheaders columnheaders using 1:2:3 with image
    }
}
unset multiplot
