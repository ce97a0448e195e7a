# ch5_prune.gp: chapter 5, pruning. Heads are knocked out one by one,
# the least important first (importance: the accuracy lost when that
# head alone is knocked out); the mean accuracy that remains, against the
# number of heads kept, mean and sd over seeds. Data: ch5_prune.dat
# (tools/runs/experiment/main.c), one block per head count; ch5_misc.gpi
# names the blocks.
fig_w = 14.4; fig_h = 8.4            # cm, as printed
load "plots/common.gp"
load datadir."/ch5_misc.gpi"
set title "Pruning: accuracy as heads are removed, the least important first"
set xlabel "heads kept"
set ylabel "mean accuracy (%)"
set yrange [0:105]
set xrange [-0.5:16.5]
set xtics (0, 1, 2, 4, 8, 16)
set grid lc rgb "#dddddd"
set key bottom right box opaque
set border 3
colours = "#7570b3 #1b9e77 #e7298a #66a61e"
plot for [i = 0:prune_blocks - 1] datadir."/ch5_prune.dat" index i using 1:2:3 \
     with yerrorlines lw 2 pt 7 ps 0.8 lc rgb word(colours, i + 1) \
     title value(sprintf("prune_title_%d", i)), \
     6.25 with lines dt 2 lc rgb "#888888" title "chance (1 in 16)"
