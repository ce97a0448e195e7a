# ch8_offsets.gp: chapter 8, where each trained head looks. For the
# first seed's network of every head count of the book's run, every
# head's mean weight on the token k back (k = 0 is the token itself) and
# on the first token of the window, over the measurement windows.
# Data: ch8_offsets.dat (tools/runs/lm/main.c, --data): rows
# "Hh:block.head", columns offsets 0..8 and "first".
fig_w = 14.0; fig_h = 16.5            # cm, as printed
load "plots/common.gp"
set title "Mean attention weight by offset (first seed; rows: heads)" font ",9"
set xlabel "offset: the token k back (first: the window's first token)" font ",8"
set cbrange [0:*]
set cblabel "mean weight" font ",8"
set tics scale 0 font ",7"
unset key
set yrange [] reverse
# numbers (".13" for 0.13) on the cells of 0.10 or more; white on the dark
# ones; 42 rows of 7 pt need a 16.5 cm figure
stats datadir."/ch8_offsets.dat" matrix rowheaders columnheaders using 3 nooutput
top = STATS_max
num(w) = (w >= 0.995) ? "1" : sprintf("%.2f", w)[2:]
plot datadir."/ch8_offsets.dat" matrix rowheaders columnheaders using 1:2:3 with image, \
     "" matrix rowheaders columnheaders using 1:2:($3 >= 0.10 && $3 < 0.6 * top ? num($3) : "") with labels font ",7", \
     "" matrix rowheaders columnheaders using 1:2:($3 >= 0.6 * top ? num($3) : "") with labels font ",7" tc rgb "#ffffff"
