# ch5_prune.gp: chapter 5, pruning. Heads are knocked out one by one,
# the least important first (importance: the accuracy lost when that
# head alone is knocked out); the mean accuracy that remains, against the
# number of heads kept, mean and sd over seeds. Data: ch5_prune.dat
# (tools/runs/experiment/data.c), one block per head count; ch5_misc.gpi
# (tools/runs/plotdata/ch5.c) names the blocks.
fig_w = 16.4; fig_h = 8.4            # cm, as printed
load "plots/common.gp"
load datadir."/ch5_misc.gpi"
set title "Pruning: accuracy as heads are removed, the least important first"
set xlabel "heads kept (log scale; 0 = every head removed)"
set ylabel "mean accuracy (%)"
set yrange [0:105]
# head counts double, so a log axis spaces them evenly; 0 cannot sit on
# it, and is drawn at 1/2, past a break in the axis
set logscale x 2
set xrange [0.4:20]
set xtics ("0" 0.5, "1" 1, "2" 2, "4" 4, "8" 8, "16" 16)
set grid lc rgb "#dddddd"
# the key right of the plot, away from the chance line and the curves
set key outside right center box opaque
set border 3
set tics nomirror
set label 2 "//" at 0.72, first 0 center font ",9"
colours = "#7570b3 #1b9e77 #e7298a #a6761d"
dashes = "1 4 5 3"
points = "7 5 9 11"
plot for [i = 0:prune_blocks - 1] datadir."/ch5_prune.dat" index i using ($1 == 0 ? 0.5 : $1):2:3 \
     with yerrorlines lw 2 dt int(word(dashes, i + 1)) pt int(word(points, i + 1)) ps 1.0 \
     lc rgb word(colours, i + 1) title value(sprintf("prune_title_%d", i)), \
     6.25 with lines dt 2 lw 1.2 lc rgb "#888888" title "chance (1 in 16)"
