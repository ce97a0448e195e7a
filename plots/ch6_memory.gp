# ch6_memory.gp: the KV cache of one sequence against context length, for
# GPT-3 175B and Llama 2 70B with a K/V head per query head (MHA), 8 K/V
# heads (GQA) and one (MQA); 16-bit numbers, batch 1. Log-log, with the
# memory of common GPUs marked.
# Data: ch6_memory.dat (context, then GiB per configuration), computed by
# kv_cache_bytes() in tools/runs/plotdata/ch6.c.
size_w = 1000; size_h = 600
load "plots/common.gp"
set title "KV cache of one sequence (16-bit keys and values)"
set xlabel "context length (tokens)"
set ylabel "cache size (GiB)"
set logscale xy 2
set xrange [128:131072]
set yrange [0.0012:1024]
set xtics ("128" 128, "512" 512, "2K" 2048, "8K" 8192, "32K" 32768, "128K" 131072)
set ytics ("1/512" 0.001953125, "1/128" 0.0078125, "1/32" 0.03125, "1/8" 0.125, "1/2" 0.5, "2" 2, "8" 8, "32" 32, "128" 128, "512" 512)
set grid lc rgb "#e5e5e5"
set key bottom right box opaque font ",8" spacing 1.1
set border 3
set tics nomirror
# GPU memory sizes (GiB), the whole card, before any weights
gpu = "#888888"
set arrow 1 from graph 0, first 24 to graph 1, first 24 nohead dt 3 lc rgb gpu
set arrow 2 from graph 0, first 80 to graph 1, first 80 nohead dt 3 lc rgb gpu
set label 1 "24 GiB GPU" at graph 0.01, first 24 * 1.25 left tc rgb gpu font ",8"
set label 2 "80 GiB GPU (A100, H100)" at graph 0.01, first 80 * 1.25 left tc rgb gpu font ",8"
f = datadir."/ch6_memory.dat"
plot f using 1:2 with lines lw 2.5 lc rgb "#cb181d" title "GPT-3 175B, 96 K/V heads (MHA, as built)", \
     f using 1:3 with lines lw 2.5 lc rgb "#fb6a4a" title "GPT-3 175B, 8 K/V heads (GQA)", \
     f using 1:4 with lines lw 2.5 lc rgb "#fcbba1" title "GPT-3 175B, 1 K/V head (MQA)", \
     f using 1:5 with lines lw 2.5 dt 2 lc rgb "#08306b" title "Llama 2 70B, 64 K/V heads (MHA)", \
     f using 1:6 with lines lw 2.5 dt 2 lc rgb "#2171b5" title "Llama 2 70B, 8 K/V heads (GQA, as built)", \
     f using 1:7 with lines lw 2.5 dt 2 lc rgb "#9ecae1" title "Llama 2 70B, 1 K/V head (MQA)"
