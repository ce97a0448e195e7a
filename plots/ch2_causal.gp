# ch2_causal.gp: the example sentence's weights without a mask (chapter 1)
# and with the causal mask, side by side on one 0..1 colour scale.
# Data: ch2_full.dat and ch2_causal.dat (query row, key column, weight),
# written by tools/runs/plotdata/ch2.c from the reference attention() and
# causal_attention(); token labels from sentence_tics.gp (tools/runs/plotdata/ch1.c).
fig_w = 16.4; fig_h = 8.8            # cm, as printed
load "plots/common.gp"
load datadir."/sentence_tics.gp"

set cbrange [0:1]
set xrange [-0.5:9.5]
set yrange [9.5:-0.5]          # first query at the top
set size ratio -1
set tics nomirror out scale 0.5
set xlabel "key (attended to)" offset 0, 0.6
unset key

# labels: dark text on light cells, white text on dark ones; in the
# causal map a label only where the query may look (j <= i)
# (".26" for 0.26, so that a 7 pt label fits its cell)
num(w) = (w >= 0.995) ? "1" : sprintf("%.2f", w)[2:]
dark(w) = (w < 0.55) ? num(w) : ""
light(w) = (w >= 0.55) ? num(w) : ""
past(i, j, s) = (j <= i) ? s : ""
grey = "#444444"

set multiplot
set tmargin at screen 0.873
set bmargin at screen 0.205
set tics font ",8"

# left: chapter 1's head, every token sees every token
set lmargin at screen 0.115
set rmargin at screen 0.475
set title "No mask (chapter 1):\neach row spreads over all 10 tokens" font ",8.5"
set ylabel "query (attending)" offset 1, 0
unset colorbox
plot datadir."/ch2_full.dat" using 2:1:3 with image, \
     "" using 2:1:(dark($3)) with labels font ",7" textcolor rgb grey, \
     "" using 2:1:(light($3)) with labels font ",7" textcolor rgb "white"

# right: the causal head; the future (above the diagonal) is exactly 0
set lmargin at screen 0.56
set rmargin at screen 0.92
set title "Causal mask:\nrow t sees tokens 0..t only" font ",8.5"
set ylabel ""
set colorbox user origin screen 0.935, screen 0.19 size screen 0.012, screen 0.68
set cblabel "weight"
plot datadir."/ch2_causal.dat" using 2:1:3 with image, \
     "" using 2:1:(past($1, $2, dark($3))) with labels font ",7" textcolor rgb grey, \
     "" using 2:1:(past($1, $2, light($3))) with labels font ",7" textcolor rgb "white"

unset multiplot
