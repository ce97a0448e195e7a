# ch5_ablation.gp: chapter 5, knock out one head at a time. For the
# first seed's network with 2, 4, 8 and 16 heads: the accuracy each
# relation loses (percentage points) when head i is knocked out, two
# ways. Top row: zero-ablation, head i's columns of the concatenation
# zeroed before W_o (ch5_ablation_hH.dat). Bottom row: mean-ablation,
# head i's output replaced at each position by its mean over the
# ablation sequences (ch5_ablation_mean_hH.dat). Both from
# tools/runs/experiment/data.c, rows heads, columns relations (t-1 the
# previous token, t-2 two back, x0 the first, x1 the second). Every cell
# carries its number, at 7 points; on the dark cells (60 points or more)
# it is white, so it can be read.
fig_w = 16.4; fig_h = 16.0            # cm, as printed
load "plots/common.gp"
set palette defined (0 "#ffffff", 0.25 "#fcbba1", 0.5 "#fb6a4a", 0.75 "#cb181d", 1 "#67000d")
set cbrange [0:100]
set cblabel "accuracy lost (points)" font ",8"
set tics scale 0 font ",8"
unset key
set yrange [] reverse
# a number as printed: whole points, and no "-0"
cell(v) = abs(v) < 0.5 ? "0" : sprintf("%.0f", v)
set multiplot layout 2, 4 margins 0.06, 0.87, 0.04, 0.855 spacing 0.04, 0.115 \
    title "Ablation: the accuracy each relation loses when one head is knocked out\n(first seed; rows: heads, columns: relations; every cell in points)" font ",9"
do for [kind in "zero mean"] {
    stem = kind eq "zero" ? "ch5_ablation_h" : "ch5_ablation_mean_h"
    do for [h in "2 4 8 16"] {
        set title sprintf("%s heads\n%s", h, kind eq "zero" ? "zeroed" : "mean-ablated") font ",8"
        if (h eq "2") { set ylabel "head" font ",8" offset 1, 0 } else { unset ylabel }
        if (h eq "16" && kind eq "zero") { set colorbox user origin 0.895, 0.1 size 0.015, 0.72 } else { unset colorbox }
        file = datadir."/".stem.h.".dat"
        plot file matrix rowheaders columnheaders using 1:2:3 with image, \
             "" matrix rowheaders columnheaders using 1:2:($3 < 60 ? cell($3) : "") with labels font ",7", \
             "" matrix rowheaders columnheaders using 1:2:($3 >= 60 ? cell($3) : "") with labels font ",7" tc rgb "#ffffff"
    }
}
unset multiplot
