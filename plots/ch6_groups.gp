# ch6_groups.gp: which K/V head each of 8 query heads reads, with 8, 2 and
# 1 K/V heads (MHA, GQA, MQA). Measured, not drawn from the formula:
# tools/runs/plotdata/ch6.c runs the reference gqa_forward() with K/V head j's
# values all j + 1 and reads back what each query head returned.
# Data: ch6_groups.dat (panel, query head, K/V head, its x position).
fig_w = 16.4; fig_h = 5.6             # cm, as printed
load "plots/common.gp"
f = datadir."/ch6_groups.dat"
set multiplot layout 1,3 title "Query heads (top) and the K/V head each one reads (bottom)" font ",10"
unset key
unset border
unset tics
set xrange [-0.8:7.8]
set yrange [-0.45:1.35]
q = "#2171b5"; kv = "#d95f02"
array titles[3] = ["8 K/V heads: multi-head (MHA)", "2 K/V heads: grouped (GQA)", "1 K/V head: multi-query (MQA)"]
do for [p = 0:2] {
    set title titles[p + 1] font ",8"
    # a K/V head's label once, at its first reader (not once per query head,
    # which would print it on itself 4 or 8 times): rows come by query head
    kvseen = -1
    plot f index p using 2:(1):($4 - $2):(-1) with vectors nohead lw 1.8 lc rgb "#999999", \
         f index p using 2:(1) with points pt 7 ps 2.1 lc rgb q, \
         f index p using 2:(1):(sprintf("%d", $2)) with labels tc rgb "white" font ",9", \
         f index p using 4:(0) with points pt 5 ps 2.3 lc rgb kv, \
         f index p using 4:($3 != kvseen ? (kvseen = $3, 0) : NaN):(sprintf("%d", $3)) with labels tc rgb "white" font ",9"
}
unset multiplot
