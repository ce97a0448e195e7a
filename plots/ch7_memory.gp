# ch7_memory.gp: chapter 7, the peak memory one causal multi-head forward
# adds to its process (d_model 512, 8 heads) against T, log-log.
# Data: as ch7_time.gp. The dashed line is h T^2 floats, the (h, T, T)
# weights that chapter 3 stores. Machine-dependent.
size_w = 900
size_h = 640
load "plots/common.gp"
if (!exists("csv")) csv = datadir."/ch7_bench.csv"
rows(impl) = sprintf("< grep '^%s,' '%s'", impl, csv)
mib(b) = b > 0 ? b / 1048576.0 : NaN

set datafile separator ","
set title "Peak memory of one forward pass (this machine)"
set xlabel "tokens T"
set ylabel "MiB added to the process's peak"
set logscale x 2
set logscale y 10
# a margin left and right, so the end points do not sit on the axes
set offsets graph 0.04, graph 0.04, 0, 0
set format y "%g"
set key below
set grid xtics ytics lc rgb "#dddddd"
set border 3
set xtics nomirror
set ytics nomirror

weights(T) = 8.0 * T * T * 4 / 1048576
plot rows("ch3_fused") using 2:(mib($6)) with linespoints lw 2.5 pt 7 lc rgb "#d95f02" title "chapter 3, fused", \
     rows("torch")     using 2:(mib($6)) with linespoints lw 2.5 pt 5 lc rgb "#7570b3" title "PyTorch nn.MultiheadAttention", \
     rows("flash")     using 2:(mib($6)) with linespoints lw 2.5 pt 7 lc rgb "#1b9e77" title "flash, causal", \
     rows("flash")     using 2:(weights($2)) with lines dt 2 lw 1.5 lc rgb "#888888" title "h T^2 floats (the weights)"
