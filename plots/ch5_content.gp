# ch5_content.gp: chapter 5, the content task. The attention weights of
# the trained 1-head and 2-head networks (first seed) on one sequence;
# the relations are the previous token (t-1) and the latest earlier token
# of the same class as the current one (classes: A-D, E-H, I-L, M-P).
# Data: ch5_content_hH_iI.dat (tools/runs/experiment/data.c); ch5_content.gpi
# (tools/runs/plotdata/ch5.c) holds each panel's title (the head's mean weight on each relation's
# token, over the evaluation sequences).
fig_w = 16.4; fig_h = 6.8            # cm, as printed
load "plots/common.gp"
load datadir."/ch5_content.gpi"
set cbrange [0:1]
set yrange [] reverse
set size ratio -1
set tics scale 0 font ",8"
unset key
set title font ",8"
set multiplot layout 1, 3 margins 0.03, 0.9, 0.1, 0.8 spacing 0.05, 0.1 \
    title "Content task: attention weights of the trained heads on one sequence" font ",9"
do for [p in "1:0 2:0 2:1"] {
    h = int(substr(p, 1, 1)); i = int(substr(p, 3, 3))
    set title value(sprintf("title_ch5_content_h%d_i%d", h, i))
    if (h == 2 && i == 1) { set colorbox user origin 0.92, 0.1 size 0.015, 0.65 } else { unset colorbox }
    plot datadir.sprintf("/ch5_content_h%d_i%d.dat", h, i) matrix rowheaders columnheaders using 1:2:3 with image
}
unset multiplot
