# bench.mk: chapter 6's decode-speed benchmark (included by the Makefile).
#
# tools/runs/bench/decode_speed.c times one decoded token with the KV cache
# against re-running the whole forward, for contexts up to 2048, on one
# thread. tools/runs/bench/decode.sh runs it with a generous time budget and
# prints the table. `make plots` runs it once with a short budget
# (BENCH_BUDGET seconds per measurement) to draw chapter 6's speed figure;
# the figure and the book say the numbers are this machine's.

BENCH_BIN    := $(B)/bench/decode_speed
BENCH_SRC    := tools/runs/bench/decode_speed.c
BENCH_BUDGET ?= 0.05
BENCH_DATA   := $(B)/plots/data/ch6_speed.dat

$(BENCH_BIN): $(BENCH_SRC) $(B)/solutions/libkit.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(B)/solutions/libkit.a -lm

$(BENCH_DATA): $(BENCH_BIN)
	@mkdir -p $(dir $@)
	@echo "  run  $(BENCH_BIN) (the timings are this machine's)"
	@OMP_NUM_THREADS=1 $(BENCH_BIN) $(dir $@) $(BENCH_BUDGET) >$(B)/bench/decode_speed.txt
	@cat $(B)/bench/decode_speed.txt

$(DATA_STAMP): $(BENCH_DATA)
