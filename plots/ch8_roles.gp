# ch8_roles.gp: chapter 8, roles as they appear. One long network per
# head count (make lm-roles; the kit's reference run, committed in
# tools/runs/lm/reference/), measured at checkpoints: (a) the validation
# loss with the Kneser-Ney bigram's and trigram's as horizontal lines,
# (b) the best margin of any head over any relation's best fixed offset,
# (c) the largest share of rows whose heaviest weight one offset takes,
# in any one head, with Voita's 0.9 and the majority rule's 0.5.
# Data: ch8_roles_hH.dat, ch8_roles.gpi (tools/runs/plotdata/ch8_roles.c).
fig_w = 14.4; fig_h = 16.0            # cm, as printed
load "plots/common.gp"
load datadir."/ch8_roles.gpi"

colours = "#d95f02 #7570b3 #1b9e77 #e7298a #2c7fb8"
dashes = "1 4 5 3 2"
points = "7 5 9 11 13"
file(i) = sprintf("%s/ch8_roles_h%s.dat", datadir, word(labels, i + 1))
name(i) = sprintf("%s head%s", word(labels, i + 1), word(labels, i + 1) eq "1" ? "" : "s")

set multiplot layout 3, 1 margins 0.12, 0.97, 0.075, 0.945 spacing 0, 0.095
set logscale x 2
set grid ytics lc rgb "#dddddd"
set border 3
set xtics nomirror
set ytics nomirror
set format x "%g"
set xrange [28:9600]

# (a) shows every checkpoint, from the first (near ln V) on, and still
# tells apart, near the n-gram lines, losses a few hundredths apart: the
# scale is linear within about 0.15 of 5 nats and logarithmic beyond.
set title "(a) Validation loss on a scale stretched near 5, with the n-gram baselines"
set ylabel "nats per token"
unset xlabel
set key bottom left box opaque font ",8"
set nonlinear y via asinh((y - 5.0) / 0.15) inverse 5.0 + 0.15 * sinh(y)
set ytics (5, 5.1, 5.2, 5.3, 5.5, 6, 7, 8)
set offsets 0, 0, graph 0.05, graph 0.05
set yrange [*:*]
plot for [i = 0:n_curves - 1] file(i) using 1:2 with linespoints lw 1.8 \
       dt int(word(dashes, i + 1)) pt int(word(points, i + 1)) ps 0.6 \
       lc rgb word(colours, i + 1) title name(i), \
     bigram_val with lines lw 1.2 dt 2 lc rgb "#555555" title "bigram (Kneser-Ney)", \
     trigram_val with lines lw 1.2 dt 3 lc rgb "#000000" title "trigram (Kneser-Ney)"

set title "(b) The best head's margin over a relation's best fixed offset"
set ylabel "margin"
unset nonlinear y
set ytics autofreq
set offsets
set yrange [*:*]
set key top left box opaque font ",8"
plot for [i = 0:n_curves - 1] file(i) using 1:3 with linespoints lw 1.8 \
       dt int(word(dashes, i + 1)) pt int(word(points, i + 1)) ps 0.6 \
       lc rgb word(colours, i + 1) title name(i), \
     0 with lines lw 1 lc rgb "#000000" notitle, \
     margin_goal with lines lw 1.2 dt 2 lc rgb "#555555" title sprintf("%.2f", margin_goal)

set title "(c) The largest share of rows one offset takes, in any head"
set xlabel "training tokens seen (thousands, log scale)"
set ylabel "share of rows"
set yrange [0:1]
set key top left box opaque font ",8"
plot for [i = 0:n_curves - 1] file(i) using 1:4 with linespoints lw 1.8 \
       dt int(word(dashes, i + 1)) pt int(word(points, i + 1)) ps 0.6 \
       lc rgb word(colours, i + 1) title name(i), \
     0.9 with lines lw 1.2 dt 2 lc rgb "#555555" title "Voita's rule (0.9)", \
     0.5 with lines lw 1.2 dt 3 lc rgb "#000000" title "majority rule (0.5)"
unset multiplot
