# ch5_accuracy.gp: accuracy per relation for 1, 2 and 4 heads.
# Data: results.csv, written by `make experiment` (tools/experiment/) in
# $(B)/experiment/, next to the data directory $(B)/plots/data/.
fig_w = 14.4; fig_h = 7.4             # cm, as printed
load "plots/common.gp"
results = datadir."/../../experiment/results.csv"
set datafile separator ","
set title "Accuracy per relation after training (same parameters, same data)"
set ylabel "accuracy"
set yrange [0:1.12]
set ytics ("0 %%" 0, "20 %%" 0.2, "40 %%" 0.4, "60 %%" 0.6, "80 %%" 0.8, "100 %%" 1.0)
set grid ytics lc rgb "#dddddd"
set style data histograms
set style histogram clustered gap 1.5
set style fill solid 0.9 border rgb "#ffffff"
set boxwidth 0.9
set xrange [-0.7:2.7]
set key outside right top vertical Left reverse noautotitle
set xtics nomirror scale 0
set tics out
# skip 1: the header row
plot results skip 1 using 3:xtic(sprintf("%d head%s", $1, $1 > 1 ? "s" : "")) lc rgb "#08306b" title "previous token", \
     ""      skip 1 using 4 lc rgb "#2171b5" title "two back", \
     ""      skip 1 using 5 lc rgb "#6baed6" title "first token", \
     ""      skip 1 using 6 lc rgb "#c6dbef" title "second token", \
     ""      skip 1 using ($0):(1.06):(sprintf("mean %.1f %%", 100 * $7)) with labels font ",8.5" notitle
