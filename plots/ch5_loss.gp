# ch5_loss.gp: chapter 5, the training loss of 1, 2 and 4 heads.
# Data: ch5_loss.dat (tools/experiment/main.c): step, then the loss of
# each run, averaged over a window of steps; ch5.values for ln S.
fig_w = 14.4; fig_h = 9              # cm, as printed
load "plots/common.gp"

set title "Training loss: one head against many (same parameters, same data)"
set xlabel "training step"
set ylabel "cross-entropy (log scale)"
set logscale y
set format y "10^{%L}"
set key top right box opaque
set grid ytics lc rgb "#dddddd"
set border 3
set xtics nomirror
set ytics nomirror
# guessing among S = 16 symbols costs ln 16 per prediction
guess = log(16)
set arrow 1 from graph 0, first guess to graph 1, first guess nohead dt 2 lc rgb "#888888"
set label 1 "guessing: ln 16" at graph 0.02, first guess * 1.35 tc rgb "#666666"

plot datadir."/ch5_loss.dat" using 1:2 with lines lw 2.5 lc rgb "#d95f02" title "1 head", \
     ""                      using 1:3 with lines lw 2.5 lc rgb "#7570b3" title "2 heads", \
     ""                      using 1:4 with lines lw 2.5 lc rgb "#1b9e77" title "4 heads"
