# lm.mk: chapter 8's model on a synthetic stream, for its speed.
#
#   make lm-train                     V 8192, C 64, L 2, T 64, B 16, 4 heads
#   make lm-train LM_ARGS="V C L T B h steps"
#
# Built from the reference solutions (it needs every chapter written,
# chapter 7's matmul_fast() and mha_forward_flash() included) and given/,
# compiled on their own with the flags of chapter 7's benchmark
# (ATT_CFLAGS, tools/mk/attention_bench.mk: -O3, -march=native, OpenMP),
# without the tests' leak check.

LM_ARGS ?=
LM_BIN  := $(B)/lm/train
LM_SRC  := tools/runs/lm/train.c $(wildcard solutions/*.c) $(LIB_SRC)

.PHONY: lm-train
## lm-train: train chapter 8's model on a synthetic stream; tokens/s, peak memory
lm-train: $(LM_BIN)
	$(LM_BIN) $(LM_ARGS)

$(LM_BIN): $(LM_SRC) $(wildcard include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(ATT_CFLAGS) -o $@ $(LM_SRC) -lm

# make bench-lm: the kit's training step against PyTorch's, side by side
# (tools/runs/bench/lm.sh), at batch 16 and 64 on 2 threads. Takes a few
# minutes. LM_BATCHES, LM_STEPS, LM_THREADS, LM_SIZE change the run.
LM_BENCH_DIR := $(B)/bench

.PHONY: bench-lm
## bench-lm: chapter 8's training step against PyTorch's: tokens/s, ratio, peak memory
bench-lm: $(LM_BIN) $(ATT_BIN)
	@bash tools/runs/bench/lm.sh $(LM_BIN) $(ATT_BIN) $(LM_BENCH_DIR)
