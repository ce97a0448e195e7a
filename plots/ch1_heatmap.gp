# ch1_heatmap.gp: one head's attention weights over the example sentence.
# Data: ch1_heatmap.dat (query row, key column, weight), written by
# tools/runs/plotdata/ch1.c from the reference attention().
fig_w = 14; fig_h = 12.5             # cm, as printed
load "plots/common.gp"
load datadir."/sentence_tics.gp"
set title "One head, Q = K = V = X: weights over the sentence"
set xlabel "key (attended to)"
set ylabel "query (attending)"
set cbrange [0:1]
set cblabel "weight"
set xrange [-0.5:9.5]
set yrange [9.5:-0.5]          # first query at the top
set size ratio -1
set tics nomirror out scale 0.5
unset key
plot datadir."/ch1_heatmap.dat" using 2:1:3 with image, \
     datadir."/ch1_heatmap.dat" using 2:1:(sprintf("%.2f", $3)) with labels font ",8" textcolor rgb "#555555"
