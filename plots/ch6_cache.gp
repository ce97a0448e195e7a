# ch6_cache.gp: what a KV cache holds. A grouped-query layer (4 query
# heads, 2 K/V heads of width 4) has decoded a few tokens into a larger
# cache: each K/V head's block has one filled row per position, and the
# rest are free (blank). Row j*C + p is position p of K/V head j. The
# y tics assume the capacity tools/runs/plotdata/ch6.c uses (8).
# Data: ch6_cache_k.dat, ch6_cache_v.dat (row, column, value; NaN where
# free), written by tools/runs/plotdata/ch6.c after gqa_decode_step().
size_w = 900; size_h = 640
load "plots/common.gp"
load datadir."/ch6_cache_labels.gp"
set palette defined (-1 "#2166ac", 0 "#f7f7f7", 1 "#b2182b")
set cbrange [-1.2:1.2]
set xrange [-0.5:3.5]
set yrange [cache_rows - 0.5:-0.5]
set tics nomirror out scale 0.4
set xtics 0, 1, 3
set ytics ("head 0, p 0" 0, "p 4" 4, "p 7" 7, "head 1, p 0" 8, "p 4" 12, "p 7" 15)
set xlabel "column (0 .. d_head-1)" noenhanced
set label 2 cache_free at 1.5, cache_C - 2 center tc rgb "#777777" font ",9"
set label 3 "free" at 1.5, 2 * cache_C - 2 center tc rgb "#777777" font ",9"
unset key
set arrow 1 from graph 0, first cache_C - 0.5 to graph 1, first cache_C - 0.5 nohead lw 2 lc rgb "#333333" front
set multiplot layout 1,2 title cache_title font ",10"
set title "K  (n_kv_heads, C, d_head)" noenhanced
unset colorbox
plot datadir."/ch6_cache_k.dat" using 2:1:3 with image
set title "V  (n_kv_heads, C, d_head)" noenhanced
set colorbox
set ytics ("" 0, "" 4, "" 7, "" 8, "" 12, "" 15)
plot datadir."/ch6_cache_v.dat" using 2:1:3 with image
unset multiplot
