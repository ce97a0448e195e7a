# attention_bench.mk: chapter 7's benchmark (included by the Makefile).
#
#   make bench    causal multi-head attention forward, d_model 512, 8
#                 heads, T = 256 .. 4096: chapter 3's fused form (to
#                 T = 1024), mha_forward_flash() with and without the
#                 mask, and PyTorch (both ways) when /usr/bin/python3 can
#                 import torch; the steps of matmul_fast() in GFLOP/s,
#                 and what each step bought, timed in alternating
#                 rounds. Writes build/bench/attention.csv, rounds.csv,
#                 factors.csv and summary.txt, prints the table, the
#                 ratios, the factors and the goals, and draws
#                 build/bench/ch7_time.{png,svg} and ch7_memory.{png,svg}.
#                 Takes minutes.
#                 On IMPL's code too (starter/ by default), once chapter 7's
#                 tests pass on it: its rows go beside the reference's,
#                 and when its flash is slower, the summary says whether
#                 to look at the projections or at the attention. Before
#                 that it says why and times the reference alone.
#   make bench IMPL=solutions   the reference alone
#   BENCH_THREADS=N (default: the number of cores), BENCH_REPS=N (5),
#   BENCH_T="..." change the run (see tools/runs/bench/bench.sh).
#
# The book does not read make bench's results: it runs its own short
# benchmark (T = 256, 512, 1024, fewer repetitions, well under a minute
# on an idle machine) while it is built, into $(B)/bench-book/, and
# tools/runs/bench/book_data.sh turns that run into $(B)/plots/data/ch7*.
# Every ratio it prints comes from alternating rounds (bench.sh), and is
# this machine's when the rounds agreed; when they did not, the chapter
# prints the kit's reference run's ratio (tools/runs/bench/reference/,
# kept by tools/runs/bench/reference.sh), marked as the reference
# machine's. Every time it prints comes from a run made on the machine
# that built the book, with or without PyTorch.
#
# The benchmark is compiled on its own, one program per IMPL,
# $(ATT_DIR)/IMPL/attention, from IMPL's files of the chapters chapter 7
# links (CH_FILES_7) and the given code chapters 1 to 7 use, with the
# flags the speed needs: -O3, -march=native (the vector
# instructions of this CPU), -fopenmp (threads), -ffp-contract=fast
# (a * b + c as one fused multiply-add) and -mprefer-vector-width=256
# (gcc's tuning for some CPUs, such as AMD's Zen 1, otherwise prefers
# 128-bit vectors, and the register tile of matmul_tiled() then needs
# more registers than there are). The tests use the Makefile's flags.
# A third program, $(ATT_DIR)/solutions-libm-exp/attention, is the
# reference with the C library's expf() in place of fast_expf()
# (tools/runs/bench/libm_exp.h): the control that measures what the
# faster exp buys.

ATT_DIR    := $(B)/bench
ATT_BIN    := $(ATT_DIR)/solutions/attention
ATT_LIBM   := $(ATT_DIR)/solutions-libm-exp/attention
ATT_CFLAGS := -std=c11 -Wall -Wextra -Werror -pedantic -O3 -march=native \
  -mprefer-vector-width=256 -ffp-contract=fast -fno-trapping-math -fopenmp
# the given code it calls: the errors, the random numbers, the weights,
# the scratch size and the regrouping of the heads
ATT_LIB_SRC := $(addprefix given/,kit.c rng.c mha_weights.c flash.c)
ATT_SRC    := tools/runs/bench/attention.c $(ATT_LIB_SRC)
ATT_IMPL_SRC = $(patsubst %,$(1)/%.c,$(CH_FILES_7))
ATT_BOOK   := $(B)/bench-book
# the chapters whose tests must pass before the bench times IMPL's code
ATT_NEEDS  := 7

.PHONY: bench

## bench: chapter 7's benchmark on IMPL's code beside the reference, chapter 3 and PyTorch (takes minutes)
bench: $(ATT_BIN) $(ATT_LIBM)
ifeq ($(IMPL),solutions)
	@BENCH_LIBM_EXP=$(ATT_LIBM) bash tools/runs/bench/bench.sh $(ATT_BIN) $(ATT_DIR)
else
	@mine=; $(call impl_failing,$(ATT_NEEDS)); \
	if [ -n "$$bad" ]; then \
	  set -- $$bad; \
	  echo "make bench times your code in $(IMPL)/ once the tests of chapter(s)$$bad pass (make test CH=$$1); until then it times the reference solutions alone."; \
	else \
	  $(MAKE) --no-print-directory -s $(ATT_DIR)/$(IMPL)/attention && mine=$(ATT_DIR)/$(IMPL)/attention || exit 1; \
	fi; \
	BENCH_MINE=$$mine BENCH_MINE_NAME=$(IMPL)/ BENCH_LIBM_EXP=$(ATT_LIBM) \
	  bash tools/runs/bench/bench.sh $(ATT_BIN) $(ATT_DIR)
endif
	@for f in png svg; do for p in ch7_time ch7_memory; do \
	  gnuplot -e "fmt='$$f'; outfile='$(ATT_DIR)/$$p.$$f'; datadir='$(ATT_DIR)'; csv='$(ATT_DIR)/attention.csv'" plots/$$p.gp; \
	done; done
	@echo "(written: $(ATT_DIR)/attention.csv, rounds.csv, factors.csv, summary.txt, ch7_time.png/.svg, ch7_memory.png/.svg)"

define att_bin_rule
$(ATT_DIR)/$(1)/attention: $(ATT_SRC) $(call ATT_IMPL_SRC,$(1)) $(wildcard include/*.h)
	@mkdir -p $$(dir $$@)
	$$(CC) -Iinclude $$(ATT_CFLAGS) -o $$@ $(ATT_SRC) $(call ATT_IMPL_SRC,$(1)) -lm -ldl
endef
$(foreach i,starter solutions,$(eval $(call att_bin_rule,$(i))))

$(ATT_LIBM): $(ATT_SRC) $(call ATT_IMPL_SRC,solutions) $(wildcard include/*.h) tools/runs/bench/libm_exp.h
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(ATT_CFLAGS) -include tools/runs/bench/libm_exp.h -o $@ \
	  $(ATT_SRC) $(call ATT_IMPL_SRC,solutions) -lm -ldl

# The book's short run. It is a file target, made again only when the
# benchmark program changed.
$(ATT_BOOK)/attention.csv: $(ATT_BIN) $(ATT_LIBM) tools/runs/bench/bench.sh tools/runs/bench/torch_mha.py
	BENCH_T="256 512 1024" BENCH_MATMUL_BIG= BENCH_CH3_MAX=1024 BENCH_REPS=3 BENCH_CH3_REPS=1 \
	  BENCH_LIBM_EXP=$(ATT_LIBM) \
	  bash tools/runs/bench/bench.sh $(ATT_BIN) $(ATT_BOOK) >/dev/null

ATT_REF    := tools/runs/bench/reference
$(B)/plots/data/ch7.values: $(ATT_BOOK)/attention.csv tools/runs/bench/book_data.sh \
  $(ATT_REF)/factors.csv $(ATT_REF)/run.values
	@sh tools/runs/bench/book_data.sh $(ATT_BOOK) $(B)/plots/data $(ATT_REF)

$(DATA_STAMP): $(B)/plots/data/ch7.values
