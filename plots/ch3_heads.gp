# ch3_heads.gp: one head against four, on the example sentence.
# Left: the single head (n_heads = 1, width 16). Right: the same four
# hand-built matrices read as 4 heads of width 4 (tools/lib/heads.c), one
# relation each. Every map is non-causal, on the kit's 0..1 colour scale.
# Data: ch3_single.dat, ch3_head0..3.dat (query row, key column, weight)
# and ch3_tics.gp, written by tools/plotdata/ch3.c from the reference
# mha_forward(). ch3_random.gp sets prefix and the titles, then loads this
# file to draw the same layer with random weights.
if (!exists("prefix")) prefix = "ch3_"
if (!exists("main_title")) main_title = "The same weights as one head of width 16 (left) and as 4 heads of width 4 (right)"
if (!exists("single_title")) single_title = "1 head: the four relations share one softmax"
if (!exists("head_titles")) {
    array head_titles[4] = ["head 0: previous token", "head 1: noun to adjective", \
                            "head 2: object to verb", "head 3: traffic words"]
}
size_w = 1560; size_h = 860
load "plots/common.gp"
load datadir."/ch3_tics.gp"

set cbrange [0:1]
set xrange [-0.5:9.5]
set yrange [9.5:-0.5]          # first query at the top
set size ratio -1
set tics nomirror out scale 0.4
unset key

# labels: dark text on light cells, white on dark ones
dark(w) = (w >= 0.05 && w < 0.55) ? sprintf("%.2f", w) : ""
light(w) = (w >= 0.55) ? sprintf("%.2f", w) : ""
big_dark(w) = (w >= 0.25 && w < 0.55) ? sprintf("%.1f", w) : ""
big_light(w) = (w >= 0.55) ? sprintf("%.1f", w) : ""
grey = "#444444"

set multiplot title main_title font ",19"

# left: the single head, large, with every weight >= 0.05 written in
set lmargin at screen 0.10
set rmargin at screen 0.46
set tmargin at screen 0.87
set bmargin at screen 0.17
set title single_title font ",15"
set xlabel "key (attended to)"
set ylabel "query (attending)"
set tics font ",14"
unset colorbox
plot datadir."/".prefix."single.dat" using 2:1:3 with image, \
     "" using 2:1:(dark($3)) with labels font ",11" textcolor rgb grey, \
     "" using 2:1:(light($3)) with labels font ",11" textcolor rgb "white"

# right: the four heads in a 2 x 2 grid
set tics font ",12"
set xlabel ""
set ylabel ""
x0 = 0.545; dx = 0.195; y0 = 0.90; dy = 0.43
do for [i = 0:3] {
    c = i % 2; r = i / 2
    set lmargin at screen x0 + c * dx
    set rmargin at screen x0 + c * dx + 0.15
    set tmargin at screen y0 - r * dy - 0.035
    set bmargin at screen y0 - r * dy - 0.035 - 0.27
    set title head_titles[i + 1] font ",14"
    if (i == 3) {
        set colorbox user origin screen 0.91, screen 0.17 size screen 0.013, screen 0.70
        set cblabel "weight"
    }
    plot datadir."/".prefix."head".i.".dat" using 2:1:3 with image, \
         "" using 2:1:(big_dark($3)) with labels font ",10" textcolor rgb grey, \
         "" using 2:1:(big_light($3)) with labels font ",10" textcolor rgb "white"
}
unset multiplot
