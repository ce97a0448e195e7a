# ch5_ablation.gp: chapter 5, knock out one head at a time. For the
# first seed's network with 2, 4, 8 and 16 heads: the accuracy each
# relation loses (percentage points) when head i's columns of the
# concatenation are zeroed before W_o. Data: ch5_ablation_hH.dat
# (tools/runs/experiment/main.c), rows heads, columns relations (t-1 the
# previous token, t-2 two back, x0 the first, x1 the second). Numbers
# on the dark cells (60 points or more) are white, so they can be read.
fig_w = 16.4; fig_h = 8.4            # cm, as printed
load "plots/common.gp"
set palette defined (0 "#ffffff", 0.25 "#fcbba1", 0.5 "#fb6a4a", 0.75 "#cb181d", 1 "#67000d")
set cbrange [0:100]
set cblabel "accuracy lost (points)"
set tics scale 0 font ",8"
unset key
set yrange [] reverse
set multiplot layout 1, 4 margins 0.05, 0.9, 0.1, 0.82 spacing 0.05, 0.1 \
    title "Ablation: the accuracy each relation loses when one head is knocked out\n(first seed; rows: heads, columns: relations)" font ",9"
do for [h in "2 4 8 16"] {
    set title sprintf("%s heads", h)
    set ylabel "head"
    if (h eq "16") { set colorbox user origin 0.92, 0.1 size 0.015, 0.72 } else { unset colorbox }
    plot datadir.sprintf("/ch5_ablation_h%s.dat", h) matrix rowheaders columnheaders using 1:2:3 with image, \
         "" matrix rowheaders columnheaders using 1:2:($3 >= 9.95 && $3 < 60 ? sprintf("%.0f", $3) : "") with labels font ",7", \
         "" matrix rowheaders columnheaders using 1:2:($3 >= 60 ? sprintf("%.0f", $3) : "") with labels font ",7" tc rgb "#ffffff"
}
unset multiplot
