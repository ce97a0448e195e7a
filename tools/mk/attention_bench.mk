# attention_bench.mk: chapter 7's benchmark (included by the Makefile).
#
#   make bench    causal multi-head attention forward, d_model 512, 8
#                 heads, T = 256 .. 4096: chapter 3's fused form (to
#                 T = 1024), mha_forward_flash(), and PyTorch when
#                 /usr/bin/python3 can import torch; the steps of
#                 matmul_fast() in GFLOP/s. Writes build/bench/attention.csv
#                 and summary.txt, prints the table, the ratios and the
#                 goals, and draws build/bench/ch7_time.{png,svg} and
#                 ch7_memory.{png,svg}. Takes minutes.
#   BENCH_THREADS=N (default: the number of cores), BENCH_REPS=N (5),
#   BENCH_T="..." change the run (see tools/runs/bench/bench.sh).
#
# The book does not read make bench's results: it runs its own short
# benchmark (T = 256, 512, 1024, fewer repetitions, well under a minute
# on an idle machine) while it is built, into $(B)/bench-book/, and
# tools/runs/bench/book_data.sh turns that run into $(B)/plots/data/ch7*.
# So every number chapter 7 prints comes from a run made on the machine
# that built the book, with or without PyTorch.
#
# The benchmark is compiled on its own, from solutions/ and given/,
# with the flags the speed needs: -O3, -march=native (the vector
# instructions of this CPU), -fopenmp (threads), -ffp-contract=fast
# (a * b + c as one fused multiply-add) and -mprefer-vector-width=256
# (gcc's tuning for some CPUs, such as AMD's Zen 1, otherwise prefers
# 128-bit vectors, and the register tile of matmul_tiled() then needs
# more registers than there are). The tests use the Makefile's flags.

ATT_DIR    := $(B)/bench
ATT_BIN    := $(ATT_DIR)/attention
ATT_CFLAGS := -std=c11 -Wall -Wextra -Werror -pedantic -O3 -march=native \
  -mprefer-vector-width=256 -ffp-contract=fast -fno-trapping-math -fopenmp
ATT_SRC    := tools/runs/bench/attention.c $(wildcard solutions/*.c) $(LIB_SRC)
ATT_BOOK   := $(B)/bench-book

.PHONY: bench

## bench: chapter 7's benchmark against chapter 3 and PyTorch (takes minutes)
bench: $(ATT_BIN)
	@bash tools/runs/bench/bench.sh $(ATT_BIN) $(ATT_DIR)
	@for f in png svg; do for p in ch7_time ch7_memory; do \
	  gnuplot -e "fmt='$$f'; outfile='$(ATT_DIR)/$$p.$$f'; datadir='$(ATT_DIR)'; csv='$(ATT_DIR)/attention.csv'" plots/$$p.gp; \
	done; done
	@echo "(written: $(ATT_DIR)/attention.csv, summary.txt, ch7_time.png/.svg, ch7_memory.png/.svg)"

$(ATT_BIN): $(ATT_SRC) $(wildcard include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(ATT_CFLAGS) -o $@ $(ATT_SRC) -lm -ldl

# The book's short run. It is a file target, made again only when the
# benchmark program changed.
$(ATT_BOOK)/attention.csv: $(ATT_BIN) tools/runs/bench/bench.sh tools/runs/bench/torch_mha.py
	BENCH_T="256 512 1024" BENCH_MATMUL_BIG= BENCH_CH3_MAX=1024 BENCH_REPS=3 BENCH_CH3_REPS=1 \
	  bash tools/runs/bench/bench.sh $(ATT_BIN) $(ATT_BOOK) >/dev/null

$(B)/plots/data/ch7.values: $(ATT_BOOK)/attention.csv tools/runs/bench/book_data.sh
	@sh tools/runs/bench/book_data.sh $(ATT_BOOK) $(B)/plots/data

$(DATA_STAMP): $(B)/plots/data/ch7.values
