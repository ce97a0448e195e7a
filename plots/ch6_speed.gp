# ch6_speed.gp: tokens per second when decoding token T-1 with the KV cache
# (mha_decode_step) and by re-running the whole causal forward
# (mha_forward of T tokens), one layer, one thread; and the cached step
# of the same layer with one K/V head (gqa_decode_step). Machine-dependent.
# Data: ch6_speed.dat, measured side by side by tools/runs/bench/decode_speed.c
# (make plots runs it with a short budget; tools/runs/bench/decode.sh prints it).
fig_w = 16.4; fig_h = 10.0            # cm, as printed
load "plots/common.gp"
load datadir."/ch6_speed_labels.gp"
# two lines (tools/runs/bench/decode_speed.c breaks it), so it fits
set title speed_title noenhanced font ",9"
set xlabel "context length T (tokens)"
set ylabel "tokens per second"
set logscale xy
set format y "10^{%L}"
set xrange [12:2800]
set xtics ("16" 16, "32" 32, "64" 64, "128" 128, "256" 256, "512" 512, "1024" 1024, "2048" 2048)
set grid lc rgb "#e5e5e5"
set key below font ",8" height 1
set border 3
set tics nomirror
f = datadir."/ch6_speed.dat"
plot f using 1:2 with linespoints lw 2.5 pt 7 lc rgb "#2171b5" title "with the cache: project 1 token, attend over T", \
     f using 1:5 with linespoints lw 2 pt 6 ps 1.2 dt 2 lc rgb "#6baed6" title "with the cache, 1 K/V head (MQA)", \
     f using 1:3 with linespoints lw 2.5 pt 5 dt 4 lc rgb "#cb181d" title "without: the whole forward of T tokens"
