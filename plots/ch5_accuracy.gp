# ch5_accuracy.gp: accuracy per relation for every head count and the
# scale control, the mean over seeds with error bars of one standard
# deviation. Data: ch5_accuracy.dat (tools/runs/plotdata/ch5.c, from the
# summary of results.csv that `make experiment` wrote): a label, then mean
# and sd of previous, two back, first, second and the mean accuracy.
fig_w = 16.4; fig_h = 8.0             # cm, as printed
load "plots/common.gp"
set title "Accuracy per relation after training: mean and standard deviation over seeds"
set ylabel "accuracy"
set yrange [0:1.14]
set ytics ("0 %%" 0, "20 %%" 0.2, "40 %%" 0.4, "60 %%" 0.6, "80 %%" 0.8, "100 %%" 1.0)
set grid ytics lc rgb "#dddddd"
set style data histograms
set style histogram errorbars gap 1.5 lw 1
set style fill solid 0.9 border rgb "#333333"
set boxwidth 0.9
set key outside right top vertical Left reverse noautotitle
set xtics nomirror scale 0 font ",8"
set bmargin 3.5
set tics out
set bars front
plot datadir."/ch5_accuracy.dat" using 2:3:xtic(1) lc rgb "#08306b" title "previous token", \
     ""                          using 4:5 lc rgb "#2171b5" title "two back", \
     ""                          using 6:7 lc rgb "#6baed6" title "first token", \
     ""                          using 8:9 lc rgb "#c6dbef" title "second token", \
     ""                          using ($0):(1.08):(sprintf("%.1f %%", 100 * $10)) with labels font ",8" notitle
