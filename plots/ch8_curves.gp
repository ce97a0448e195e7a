# ch8_curves.gp: chapter 8, the validation loss against the tokens seen
# for every head count of the book's run, the mean over seeds at each
# head count's chosen learning rate, with a band of one standard
# deviation. Data: ch8_curves.dat (tools/runs/lm/main.c, --data): tokens,
# then mean and sd per head count; ch8_curves.gpi names the columns.
fig_w = 14.4; fig_h = 8.6            # cm, as printed
load "plots/common.gp"
load datadir."/ch8_curves.gpi"

set title "Validation loss on Brown's held-out texts (mean over seeds, band: 1 sd)"
set xlabel "training tokens seen (thousands)"
set ylabel "cross-entropy (nats per token)"
set key top right box opaque
set grid ytics lc rgb "#dddddd"
set border 3
set xtics nomirror
set ytics nomirror
# the start (ln V at uniform guessing) is far above the rest: every ::1
# leaves it out, and the axis fits the rest
set autoscale y
colours = "#d95f02 #7570b3 #1b9e77 #e7298a #2c7fb8"
dashes = "1 4 5 3 2"
points = "7 5 9 11 13"
plot for [i = 0:n_curves - 1] datadir."/ch8_curves.dat" every ::1 \
     using ($1 / 1000):(column(2 + 2 * i) - column(3 + 2 * i)):(column(2 + 2 * i) + column(3 + 2 * i)) \
     with filledcurves fs transparent solid 0.18 noborder lc rgb word(colours, i + 1) notitle, \
     for [i = 0:n_curves - 1] datadir."/ch8_curves.dat" every ::1 using ($1 / 1000):(column(2 + 2 * i)) \
     with linespoints lw 1.8 dt int(word(dashes, i + 1)) pt int(word(points, i + 1)) ps 0.8 \
     lc rgb word(colours, i + 1) title sprintf("%s head%s", word(labels, i + 1), word(labels, i + 1) eq "1" ? "" : "s")
