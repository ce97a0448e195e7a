# ch1_scale.gp: why the scores are divided by sqrt(d_k).
# Data: ch1_scale.dat, measured by tools/runs/plotdata/ch1.c with the
# reference matmul_bt() and softmax_rows() on random unit-variance q, k.
fig_w = 16; fig_h = 7               # cm, as printed
load "plots/common.gp"
set multiplot layout 1,2
set logscale x 2
set xlabel "d_k"
set grid lc rgb "#dddddd"
set key top left
set title "Spread of the scores q·k"
set ylabel "variance"
set logscale y 2
plot datadir."/ch1_scale.dat" using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb "#cb181d" title "q·k", \
     ""                       using 1:3 with linespoints lw 2 pt 5 ps 0.6 lc rgb "#2171b5" title "q·k / √d_k"
unset logscale y
set title "How peaked the softmax gets (16 keys)"
set ylabel "mean largest weight"
set yrange [0:1]
set key center right
plot datadir."/ch1_scale.dat" using 1:4 with linespoints lw 2 pt 7 ps 0.6 lc rgb "#cb181d" title "without the scale", \
     ""                       using 1:5 with linespoints lw 2 pt 5 ps 0.6 lc rgb "#2171b5" title "with 1/√d_k", \
     1.0/16 with lines dt 2 lc rgb "#888888" title "uniform, 1/16"
unset multiplot
