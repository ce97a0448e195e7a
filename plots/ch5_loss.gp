# ch5_loss.gp: chapter 5, the training loss of every configuration of
# the position task, the mean over seeds. Data: ch5_loss.dat
# (tools/runs/experiment/data.c): step, then one column per configuration;
# ch5_misc.gpi (tools/runs/plotdata/ch5.c) names the columns.
fig_w = 14.4; fig_h = 10             # cm, as printed
load "plots/common.gp"
load datadir."/ch5_misc.gpi"

set title "Training loss, mean over seeds (same parameters, same data)"
set xlabel "training step"
set ylabel "cross-entropy (log scale)"
set logscale y
set format y "10^{%L}"
# the key under the plot, in three columns: at 9 pt it no longer fits
# the band between the two-head curve and the others
set key below maxrows 2 font ",8"
set grid ytics lc rgb "#dddddd"
set border 3
set xtics nomirror
set ytics nomirror
# guessing among S = 16 symbols costs ln 16 per prediction
guess = log(16)
set arrow 1 from graph 0, first guess to graph 1, first guess nohead dt 2 lc rgb "#888888"
set label 1 "guessing: ln 16" at graph 0.98, first guess * 1.35 right tc rgb "#666666"
# Every curve has its own colour, dash type and point type, so that
# each is told apart in greyscale and in print, not by colour alone.
# The colours differ in lightness as well as hue (the 4- and 16-head
# curves were two near-identical greens). The scale control, last, is
# dashed and black with open points, and drawn on top: it runs close
# to the one-head line and must not hide under it.
colours = "#d95f02 #7570b3 #1b9e77 #e7298a #a6761d #2c7fb8 #000000"
dashes = "1 4 5 3 2 6 2"
points = "7 5 9 11 13 4 6"
# a point every 1/8 of the run, each curve's points shifted so that
# they do not fall on one another
stats datadir."/ch5_loss.dat" using 1 nooutput
every_n = int(STATS_records / 8)
# the last column is the scale control
last = loss_columns - 1
plot for [i = 0:last - 1] datadir."/ch5_loss.dat" using 1:(column(i + 2)) \
     with lines lw 1.8 dt int(word(dashes, i + 1)) lc rgb word(colours, i + 1) notitle, \
     for [i = 0:last - 1] datadir."/ch5_loss.dat" every every_n::(i * every_n / loss_columns) using 1:(column(i + 2)) \
     with points pt int(word(points, i + 1)) ps 0.9 lc rgb word(colours, i + 1) notitle, \
     for [i = 0:last - 1] keyentry with linespoints lw 1.8 dt int(word(dashes, i + 1)) pt int(word(points, i + 1)) ps 0.9 \
     lc rgb word(colours, i + 1) title value(sprintf("loss_title_%d", i)), \
     datadir."/ch5_loss.dat" using 1:(column(last + 2)) \
     with lines lw 1.5 dt 2 lc rgb word(colours, last + 1) notitle, \
     datadir."/ch5_loss.dat" every every_n::(every_n / 2) using 1:(column(last + 2)) \
     with points pt 6 ps 1.1 lc rgb word(colours, last + 1) notitle, \
     keyentry with linespoints lw 1.5 dt 2 pt 6 ps 1.1 lc rgb word(colours, last + 1) title value(sprintf("loss_title_%d", last))
