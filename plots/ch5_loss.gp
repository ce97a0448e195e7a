# ch5_loss.gp: chapter 5, the training loss of every configuration of
# the position task, the mean over seeds. Data: ch5_loss.dat
# (tools/runs/experiment/main.c): step, then one column per configuration;
# ch5_misc.gpi names the columns.
fig_w = 14.4; fig_h = 9              # cm, as printed
load "plots/common.gp"
load datadir."/ch5_misc.gpi"

set title "Training loss, mean over seeds (same parameters, same data)"
set xlabel "training step"
set ylabel "cross-entropy (log scale)"
set logscale y
set format y "10^{%L}"
# the key in the empty band between the two-head curve and the others
set key at graph 0.98, graph 0.6 right top box opaque
set grid ytics lc rgb "#dddddd"
set border 3
set xtics nomirror
set ytics nomirror
# guessing among S = 16 symbols costs ln 16 per prediction
guess = log(16)
set arrow 1 from graph 0, first guess to graph 1, first guess nohead dt 2 lc rgb "#888888"
set label 1 "guessing: ln 16" at graph 0.98, first guess * 1.35 right tc rgb "#666666"
colours = "#d95f02 #7570b3 #1b9e77 #e7298a #66a61e #a6761d #666666"
# the last column is the scale control, dashed
last = loss_columns - 1
plot for [i = 0:last - 1] datadir."/ch5_loss.dat" using 1:(column(i + 2)) \
     with lines lw 1.8 lc rgb word(colours, i + 1) title value(sprintf("loss_title_%d", i)), \
     datadir."/ch5_loss.dat" using 1:(column(last + 2)) \
     with lines lw 1.8 dt 2 lc rgb word(colours, last + 1) title value(sprintf("loss_title_%d", last))
