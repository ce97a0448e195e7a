# ch7_time.gp: chapter 7, the time of one causal multi-head forward
# (d_model 512, 8 heads) against T, log-log, one line per method.
# Data: the CSV of tools/runs/bench/bench.sh (impl,T,threads,ms,gflops,
# peak_bytes): datadir/ch7_bench.csv for the book, or csv='...' (make
# bench). Machine-dependent: the numbers are this machine's.
size_w = 900
size_h = 640
load "plots/common.gp"
if (!exists("csv")) csv = datadir."/ch7_bench.csv"
rows(impl) = sprintf("< grep '^%s,' '%s'", impl, csv)

set datafile separator ","
set title "Causal multi-head attention, d_{model} 512, 8 heads (this machine)"
set xlabel "tokens T"
set ylabel "milliseconds per forward pass"
set logscale xy 2
set format y "%g"
set key below font ",8"
set grid xtics ytics lc rgb "#dddddd"
set border 3
set xtics nomirror
set ytics nomirror
set logscale y 10
# a margin left and right, so the end points do not sit on the axes
set offsets graph 0.04, graph 0.04, 0, 0

plot rows("ch3_fused")       using 2:4 with linespoints lw 2.5 pt 7 lc rgb "#d95f02" title "chapter 3, fused", \
     rows("torch")           using 2:4 with linespoints lw 2.5 pt 5 lc rgb "#7570b3" title "PyTorch nn.MultiheadAttention", \
     rows("flash_noncausal") using 2:4 with linespoints lw 2 dt 2 pt 6 lc rgb "#1b9e77" title "flash, every tile (no mask)", \
     rows("flash")           using 2:4 with linespoints lw 2.5 pt 7 lc rgb "#1b9e77" title "flash, causal (masked tiles skipped)"
