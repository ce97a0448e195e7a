# ch3_heads.gp: one head against four, on the example sentence.
# Top: the single head (n_heads = 1, width 16). Below: the same four
# hand-built matrices read as 4 heads of width 4 (given/heads.c), one
# relation each, in a 2 x 2 grid that shares its token labels. Every map
# is non-causal, on the kit's 0..1 colour scale.
# Data: ch3_single.dat, ch3_head0..3.dat (query row, key column, weight)
# and ch3_tics.gp, written by tools/runs/plotdata/ch3.c from the reference
# mha_forward().
fig_w = 16.4; fig_h = 21.6             # cm, as printed: a page of its own
load "plots/common.gp"
load datadir."/ch3_tics.gp"

# positions in cm from the left and from the top of the figure
sx(x) = x / fig_w
sy(y) = 1 - y / fig_h

set cbrange [0:1]
set xrange [-0.5:9.5]
set yrange [9.5:-0.5]          # first query at the top
set tics nomirror out scale 0.4 font ",8"
unset key
unset colorbox

# labels: dark text on light cells, white on dark ones
# (".26" for 0.26, so that a 7 pt label fits its cell)
num(w) = (w >= 0.995) ? "1" : sprintf("%.2f", w)[2:]
dark(w) = (w >= 0.05 && w < 0.55) ? num(w) : ""
light(w) = (w >= 0.55) ? num(w) : ""
big_dark(w) = (w >= 0.25 && w < 0.55) ? sprintf("%.1f", w) : ""
big_light(w) = (w >= 0.55) ? sprintf("%.1f", w) : ""
grey = "#444444"

set multiplot

# top: the single head, with every weight >= 0.05 written in
m = 5.4; x0 = 5.3; y0 = 1.1
set lmargin at screen sx(x0)
set rmargin at screen sx(x0 + m)
set tmargin at screen sy(y0)
set bmargin at screen sy(y0 + m)
set title "1 head of width 16: the four relations share one softmax" font ",9.5"
set xlabel "key (attended to)" offset 0, 0.8 font ",8"
set ylabel "query (attending)" offset 1.5, 0 font ",8"
set colorbox user origin screen sx(x0 + m + 0.5), screen sy(y0 + m) size screen sx(0.3), screen m / fig_h
set cblabel "weight" font ",8"
plot datadir."/ch3_single.dat" using 2:1:3 with image, \
     "" using 2:1:(dark($3)) with labels font ",7" textcolor rgb grey, \
     "" using 2:1:(light($3)) with labels font ",7" textcolor rgb "white"
unset colorbox

# below: 4 heads of width 4, in a 2 x 2 grid; the left column carries the
# query labels and the bottom row the key labels
array head_titles[4] = ["head 0: previous token", "head 1: noun to adjective", \
                        "head 2: object to verb", "head 3: traffic words"]
set label 1 "The same weights as 4 heads of width 4, one relation each" \
    at screen 0.5, screen sy(8.55) center font ",9.5"
m = 4.9; gx = 2.2; gy = 9.8; cx = 6.2; cy = 5.7
set xlabel ""
set ylabel ""
xt_save = 1
do for [i = 0:3] {
    c = i % 2; r = i / 2
    set lmargin at screen sx(gx + c * cx + 0.6)
    set rmargin at screen sx(gx + c * cx + 0.6 + m)
    set tmargin at screen sy(gy + r * cy)
    set bmargin at screen sy(gy + r * cy + m)
    set title head_titles[i + 1] font ",8.5" offset 0, -0.5
    load datadir."/ch3_tics.gp"
    set tics font ",8"
    if (c == 1) { unset ytics }
    if (r == 0) { unset xtics }
    plot datadir."/ch3_head".i.".dat" using 2:1:3 with image, \
         "" using 2:1:(big_dark($3)) with labels font ",7.5" textcolor rgb grey, \
         "" using 2:1:(big_light($3)) with labels font ",7.5" textcolor rgb "white"
    unset label 1
}
unset multiplot
