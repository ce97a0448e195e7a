# ch8_relations.gp: chapter 8, relation scores against their baseline.
# For each relation read off the Brown tags: the share of its cases
# whose related word is at the best fixed offset (the baseline, grey),
# and the share on which the best head of each measured head count puts
# its heaviest weight. A head counts as following the relation only
# where its bar passes the grey one. Data: ch8_relations.dat
# (tools/runs/lm/main.c, --data): relation, baseline, then one column
# per measured head count; ch8_curves.gpi names the head counts.
fig_w = 16.4; fig_h = 8.6            # cm, as printed
load "plots/common.gp"
load datadir."/ch8_curves.gpi"
set title "Relation scores: the best head of each network against the best fixed offset" font ",9"
set ylabel "share of cases" font ",8"
set yrange [0:1.2]
set ytics 0, 0.2, 1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics nomirror font ",7.5"
set ytics nomirror
set border 3
set bmargin 4.5
set grid ytics lc rgb "#dddddd"
set key inside top center horizontal maxcols 4 maxrows 1 font ",8"
# a relation's name on lines of its own ("noun" over "-> determiner",
# "-> possessive" over "pronoun"), to fit its group
tail(t) = words(t) > 2 ? word(t, 1)." ".word(t, 2)."\n".t[strstrt(t, word(t, 2)) + strlen(word(t, 2)) + 1:] : t
brk(s) = strstrt(s, " -> ") > 0 ? s[1:strstrt(s, " -> ") - 1]."\n".tail(s[strstrt(s, " -> ") + 1:]) : s
colours = "#d95f02 #7570b3 #1b9e77 #e7298a #2c7fb8"
plot datadir."/ch8_relations.dat" using 2:xtic(brk(stringcolumn(1))) lc rgb "#bbbbbb" title "best fixed offset", \
     for [i = 0:n_curves - 1] "" using (column(3 + i)) lc rgb word(colours, i + 1) \
     title sprintf("%s head%s", word(labels, i + 1), word(labels, i + 1) eq "1" ? "" : "s")
