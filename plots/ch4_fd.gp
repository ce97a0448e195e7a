# ch4_fd.gp: how exact a finite-difference check of a gradient can be.
# Data: ch4_fd.dat, measured by tools/runs/plotdata/ch4.c: the largest error
# in d_Q of one attention head (T = 4, d_k = 4, d_v = 3) against the
# analytic gradient in double precision; the tests use h = 1e-5.
fig_w = 14; fig_h = 9.5               # cm, as printed
load "plots/common.gp"
set logscale xy 10
set format x "10^{%L}"
set format y "10^{%L}"
set xrange [1e-10:0.5]
set yrange [1e-12:1e3]         # the top three decades hold the key
set xlabel "step h"
set ylabel "largest error in d_Q"
set grid lc rgb "#dddddd"
set key top left reverse Left samplen 2.5 font ",8"
set title "Central differences (L(q+h) - L(q-h)) / 2h against the exact gradient"
set arrow from 1e-5, graph 0 to 1e-5, graph 1 nohead dt 3 lc rgb "#555555"
set label "the tests' h" at 1.3e-5, 3e-1 tc rgb "#555555"
plot datadir."/ch4_fd.dat" using 1:2 with linespoints lw 2 pt 5 ps 0.45 lc rgb "#2171b5" title "differences in double", \
     ""                    using 1:3 with linespoints lw 2 pt 7 ps 0.45 lc rgb "#cb181d" title "differences in float", \
     ""                    using 1:4 with lines lw 2 dt 2 lc rgb "#238b45" title "attention_backward() in float" noenhanced
