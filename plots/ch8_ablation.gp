# ch8_ablation.gp: chapter 8, mean ablation of each head of the best
# many-head network of the book's run (first seed): the loss increase,
# in nats per token, when one head's output is replaced by its mean over
# validation text, overall and by the tag class of the word predicted.
# Data: ch8_ablation.dat (tools/runs/lm/main.c, --data): rows
# block.head, columns all and the classes.
fig_w = 14.4; fig_h = 8.4            # cm, as printed
load "plots/common.gp"
load datadir."/ch8_sent.gpi"
set palette defined (0 "#ffffff", 0.25 "#fcbba1", 0.5 "#fb6a4a", 0.75 "#cb181d", 1 "#67000d")
set title sprintf("Mean ablation, %d heads: loss increase by the class of the word predicted", ablated) font ",9"
set ylabel "block.head" font ",8"
set cbrange [0:*]
set cblabel "nats per token" font ",8"
set tics scale 0 font ",8"
unset key
set yrange [] reverse
stats datadir."/ch8_ablation.dat" matrix rowheaders columnheaders using 3 nooutput
top = STATS_max > 0 ? STATS_max : 1
plot datadir."/ch8_ablation.dat" matrix rowheaders columnheaders using 1:2:3 with image, \
     "" matrix rowheaders columnheaders using 1:2:(abs($3) >= 0.005 && $3 < 0.6 * top ? sprintf("%.2f", $3) : "") with labels font ",7", \
     "" matrix rowheaders columnheaders using 1:2:($3 >= 0.6 * top ? sprintf("%.2f", $3) : "") with labels font ",7" tc rgb "#ffffff"
