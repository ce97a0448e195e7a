# ch8_street.gp: chapter 8, the row of "street" in the lesson's sentence,
# for every head of the first seed's network of every head count of the
# book's run: the weight the last word gives each word up to itself.
# Chapter 3's hand-built heads (Figure 3.x) each put most of their
# weight on one word; these rows show where trained heads put theirs.
# Data: ch8_street.dat (tools/runs/lm/main.c, --data): rows
# "Hh:block.head", columns the words "the" .. "street".
fig_w = 13.0; fig_h = 17.0            # cm, as printed
load "plots/common.gp"
set title "The row of \"street\": every head's weights on the words before it" font ",9"
set cbrange [0:*]
set cblabel "weight" font ",8"
set tics scale 0 font ",7"
set xtics rotate by 45 right
unset key
set yrange [] reverse
stats datadir."/ch8_street.dat" matrix rowheaders columnheaders using 3 nooutput
top = STATS_max
# ".19" for 0.19; 42 rows of 7 pt need a 17 cm figure
num(w) = (w >= 0.995) ? "1" : sprintf("%.2f", w)[2:]
plot datadir."/ch8_street.dat" matrix rowheaders columnheaders using 1:2:3 with image, \
     "" matrix rowheaders columnheaders using 1:2:($3 >= 0.15 && $3 < 0.6 * top ? num($3) : "") with labels font ",7", \
     "" matrix rowheaders columnheaders using 1:2:($3 >= 0.6 * top && $3 >= 0.15 ? num($3) : "") with labels font ",7" tc rgb "#ffffff"
