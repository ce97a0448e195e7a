# ch3_random.gp: the layer of ch3_heads.gp with random weights
# (mha_weights_randomize, a fixed seed): without learned or built weights
# there is no structure, in one head or in four. Non-causal. One row of
# five maps on the same 0..1 scale as ch3_heads.gp; the weights are all
# close to 1/T, so no cell is labelled (the caption gives the range).
# Data: ch3_random_single.dat, ch3_random_head0..3.dat and ch3_tics.gp,
# from tools/runs/plotdata/ch3.c.
fig_w = 16.4; fig_h = 4.9              # cm, as printed
load "plots/common.gp"

sx(x) = x / fig_w
sy(y) = 1 - y / fig_h

set cbrange [0:1]
set xrange [-0.5:9.5]
set yrange [9.5:-0.5]          # first query at the top
unset key
unset colorbox
array titles[5] = ["1 head (width 16)", "head 0 of 4", "head 1 of 4", "head 2 of 4", "head 3 of 4"]
array files[5] = ["single", "head0", "head1", "head2", "head3"]

set multiplot
m = 2.55; x0 = 1.35; dx = 2.75; y0 = 0.75
do for [i = 1:5] {
    xl = x0 + (i - 1) * dx + (i > 1 ? 0.35 : 0)
    set lmargin at screen sx(xl)
    set rmargin at screen sx(xl + m)
    set tmargin at screen sy(y0)
    set bmargin at screen sy(y0 + m)
    set title titles[i] font ",8" offset 0, -0.6
    load datadir."/ch3_tics.gp"
    set tics nomirror out scale 0.3 font ",7"
    if (i > 1) { unset ytics }
    if (i == 5) {
        set colorbox user origin screen sx(xl + m + 0.25), screen sy(y0 + m) size screen sx(0.2), screen m / fig_h
        set cbtics font ",7"
    }
    plot datadir."/ch3_random_".files[i].".dat" using 2:1:3 with image
}
unset multiplot
