# kvexp.mk: chapter 6's experiment, which part of a head must be its own.
#
#   make kv-experiment             the book's run: chapter 5's network with
#                                  4 query heads and 4, 2, 1 K/V heads
#                                  (given/exp_gqa.c), KV_SEEDS seeds
#   make kv-experiment KV_SEEDS=10 more seeds
#
# Built, like chapter 5's program, against the reference solutions of
# chapters 1 to 4 and the runner both share (tools/runs/runner.c) with
# EXP_CFLAGS (tools/mk/experiment.mk). The run is a
# file target: it happens again only when the program, the library or the
# arguments changed. Chapter 6's table, values and maps are read from what
# it writes into $(B)/plots/data/, so the plots' data stamp depends on it.
# It adds about 45 s of CPU (15 networks) to a fresh `make all`; the
# wall time goes to stderr, never into the book.

KV_SEEDS ?= 5

KV_SRC       := $(wildcard tools/runs/kvexp/*.c) $(RUNNER_SRC)
KV_BIN       := $(EXP_DIR)/solutions/kvexp
KV_CSV       := $(EXP_DIR)/kv.csv
KV_ARGS      := --seeds $(KV_SEEDS)
KV_ARGS_FILE := $(EXP_DIR)/kv_args

$(KV_BIN): $(KV_SRC) $(wildcard include/*.h) $(RUNNER_H) $(EXP_LIB_SRC) \
           $(call EXP_IMPL_SRC,solutions)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Itools/runs $(EXP_CFLAGS) -o $@ $(KV_SRC) \
	  $(call EXP_IMPL_SRC,solutions) $(EXP_LIB_SRC) -lm

ifneq ($(filter kv-experiment $(EXP_GOALS) $(KV_CSV),$(or $(MAKECMDGOALS),all)),)
$(shell mkdir -p $(EXP_DIR) && { echo '$(KV_ARGS)' | cmp -s - $(KV_ARGS_FILE) || echo '$(KV_ARGS)' >$(KV_ARGS_FILE); })
endif

.PHONY: kv-experiment
## kv-experiment: chapter 6's run: 4 query heads with 4, 2 and 1 K/V heads over KV_SEEDS=5 seeds; the table
kv-experiment:
	@$(MAKE) --no-print-directory $(KV_CSV)
	@cat $(EXP_DIR)/kv_table.txt
	@echo "(written: $(KV_CSV), $(EXP_DATA)/ch6_kv*)"

$(KV_CSV): $(KV_BIN) $(KV_ARGS_FILE)
	@mkdir -p $(EXP_DIR) $(EXP_DATA)
	$(KV_BIN) $(KV_ARGS) $(if $(WORKERS),--workers $(WORKERS)) \
	  $(EXP_DIR) $(EXP_DATA) >/dev/null

$(DATA_STAMP): $(KV_CSV)
