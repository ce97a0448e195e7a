# ch2_causal.gp: the example sentence's weights without a mask (chapter 1)
# and with the causal mask, side by side on one 0..1 colour scale.
# Data: ch2_full.dat and ch2_causal.dat (query row, key column, weight),
# written by tools/plotdata/ch2.c from the reference attention() and
# causal_attention(); token labels from sentence_tics.gp (tools/plotdata/ch1.c).
size_w = 1400; size_h = 720
load "plots/common.gp"
load datadir."/sentence_tics.gp"

set cbrange [0:1]
set xrange [-0.5:9.5]
set yrange [9.5:-0.5]          # first query at the top
set size ratio -1
set tics nomirror out scale 0.5
set xlabel "key (attended to)"
unset key

# labels: dark text on light cells, white text on dark ones; in the
# causal map a label only where the query may look (j <= i)
dark(w) = (w < 0.55) ? sprintf("%.2f", w) : ""
light(w) = (w >= 0.55) ? sprintf("%.2f", w) : ""
past(i, j, s) = (j <= i) ? s : ""
grey = "#444444"

set multiplot title "One head, Q = K = V = X, over the example sentence" font ",15"
set tmargin at screen 0.86
set bmargin at screen 0.16

# left: chapter 1's head, every token sees every token
set lmargin at screen 0.08
set rmargin at screen 0.45
set title "No mask (chapter 1): each row spreads over all 10 tokens"
set ylabel "query (attending)"
unset colorbox
plot datadir."/ch2_full.dat" using 2:1:3 with image, \
     "" using 2:1:(dark($3)) with labels font ",9" textcolor rgb grey, \
     "" using 2:1:(light($3)) with labels font ",9" textcolor rgb "white"

# right: the causal head; the future (above the diagonal) is exactly 0
set lmargin at screen 0.53
set rmargin at screen 0.90
set title "Causal mask: row t sees tokens 0..t only"
set ylabel ""
set colorbox user origin screen 0.925, screen 0.16 size screen 0.015, screen 0.70
set cblabel "weight"
plot datadir."/ch2_causal.dat" using 2:1:3 with image, \
     "" using 2:1:(past($1, $2, dark($3))) with labels font ",9" textcolor rgb grey, \
     "" using 2:1:(past($1, $2, light($3))) with labels font ",9" textcolor rgb "white"

unset multiplot
