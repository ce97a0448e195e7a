# experiment.mk: chapter 5's experiment, one head against many.
#
#   make experiment                 on your code (IMPL=starter): checks
#                                   that chapters 1-4 pass, trains every
#                                   configuration over 5 seeds, prints
#                                   your table beside the reference's
#   make experiment IMPL=solutions  the book's run, on the reference code
#   make experiment SEEDS=10        more seeds
#   make experiment HEADS=1,2,4     other head counts (each must divide 32)
#   make experiment WORKERS=1       one process (the numbers are the same)
#
# tools/runs/experiment/ is built against the reference solutions with its own
# flags (EXP_CFLAGS: -O3, and sums the compiler may reorder, which makes
# the training about twice as fast as -O2), trains 1, 2, 4, 8 and 16
# heads, a 1-head control with the 4-head score scale, the content
# task, and the protocol's controls (the grid, 4x longer training, 1 head
# in 2 and 4 stacked layers), one worker process per core, and prints
# the mean +- sd tables.
# The run is a file target: it happens again only when the program, the
# library or the arguments changed. It writes the book's data into
# $(B)/plots/data/, numbers only (ch5.values, CSV and .dat files); the
# plots' data stamp depends on it, and tools/runs/plotdata/ch5.c makes
# chapter 5's tables and gnuplot scripts from that data when the stamp is
# remade, so that a change to a table's heading shows in `make book`
# without a run.
# Timings: tools/runs/bench/experiment.sh (never in the book).

SEEDS   ?= 5
HEADS   ?=
WORKERS ?=

EXP_DIR    := $(B)/experiment
EXP_CSV    := $(EXP_DIR)/results.csv
EXP_TABLE  := $(EXP_DIR)/table.txt
EXP_DATA   := $(B)/plots/data
# The runner both drivers share (tools/runs/runner.h): options, worker
# processes, progress lines, the CSV files.
RUNNER_SRC := tools/runs/runner.c
RUNNER_H   := tools/runs/runner.h
EXP_SRC    := $(wildcard tools/runs/experiment/*.c) $(RUNNER_SRC)
EXP_H      := $(wildcard tools/runs/experiment/*.h)
EXP_CFLAGS := -std=c11 -Wall -Wextra -Werror -pedantic -O3 \
              -fassociative-math -fno-signed-zeros -fno-trapping-math
EXP_ARGS   := --seeds $(SEEDS) $(if $(HEADS),--heads $(HEADS))

# The book's program, on the reference solutions.
EXP_BIN := $(EXP_DIR)/solutions/experiment

# $(EXP_DIR)/IMPL/experiment: the program on IMPL's files of chapters 1
# to 4, the ones chapter 5 links (CH_FILES_5, from chapters/chapters.tsv).
EXP_IMPL_SRC = $(patsubst %,$(1)/%.c,$(CH_FILES_5))
define exp_bin_rule
$(EXP_DIR)/$(1)/experiment: $(EXP_SRC) $(EXP_H) $(wildcard include/*.h) $(RUNNER_H) \
                            $(EXP_LIB_SRC) $(call EXP_IMPL_SRC,$(1))
	@mkdir -p $$(dir $$@)
	$$(CC) -Iinclude -Itools/runs $$(EXP_CFLAGS) -o $$@ $(EXP_SRC) $(call EXP_IMPL_SRC,$(1)) \
	  $(EXP_LIB_SRC) -lm
endef
$(foreach i,starter solutions,$(eval $(call exp_bin_rule,$(i))))

# The arguments are part of the run: a changed SEEDS or HEADS reruns it.
# The args file is written when a goal that runs the experiment is
# asked for: its own, or one of EXP_GOALS, the goals that draw the plots
# and so run this experiment and kvexp.mk's (which uses EXP_GOALS too).
EXP_GOALS     := all plots book book-html book-pdf book-epub
EXP_ARGS_FILE := $(EXP_DIR)/args
ifneq ($(filter experiment $(EXP_GOALS) $(EXP_CSV),$(or $(MAKECMDGOALS),all)),)
$(shell mkdir -p $(EXP_DIR) && { echo '$(EXP_ARGS)' | cmp -s - $(EXP_ARGS_FILE) || echo '$(EXP_ARGS)' >$(EXP_ARGS_FILE); })
endif

.PHONY: experiment

# The student's run (IMPL=starter) goes to its own folder, next to the
# book's run, which it reads as the reference; it never writes the
# book's data. It starts only when the tests of the chapters the
# experiment calls pass (the chapters chapter 5 needs, from
# chapters/chapters.tsv), so that it never shows a half-trained table.
EXP_NEEDS    := $(CH_NEEDS_5)
# $(call impl_failing,CHAPTERS): shell code that sets bad to those of
# CHAPTERS whose tests fail on IMPL's code (empty when all pass), for
# the programs that run on the student's code (make experiment,
# lm-experiment, bench)
impl_failing = bad=; for n in $(1); do \
	  { $(MAKE) --no-print-directory -s IMPL=$(IMPL) SAN= DEBUG= $(B)/$(IMPL)/kit_tests-$$n && \
	    $(B)/$(IMPL)/kit_tests-$$n --impl $(IMPL) --chapter $$n --quiet; } >/dev/null 2>&1 || bad="$$bad $$n"; \
	done
EXP_MINE     := $(EXP_DIR)/$(IMPL)
EXP_MINE_CSV := $(EXP_MINE)/results.csv

## experiment: chapter 5 on IMPL's code: 1-16 heads, a scale control, a content task over SEEDS=5 seeds; the tables
experiment:
ifeq ($(IMPL),solutions)
	@$(MAKE) --no-print-directory $(EXP_CSV)
	@cat $(EXP_TABLE)
	@echo "(written: $(EXP_CSV), $(EXP_DIR)/content.csv, $(EXP_DATA)/ch5_*)"
else
ifneq ($(EXP_GATE),no)
	@$(call impl_failing,$(EXP_NEEDS)); \
	if [ -n "$$bad" ]; then \
	  set -- $$bad; \
	  echo "make experiment trains on your code in $(IMPL)/, which is not ready: the tests of chapter(s)$$bad must pass first (make test CH=$$1)."; \
	  exit 1; fi
endif
	@$(MAKE) --no-print-directory -s $(EXP_CSV)
	@$(MAKE) --no-print-directory $(EXP_MINE_CSV)
	@cat $(EXP_MINE)/table.txt
	@echo "(written: $(EXP_MINE_CSV), $(EXP_MINE)/content.csv; the reference: $(EXP_CSV))"
endif

$(EXP_DIR)/starter/results.csv: $(EXP_DIR)/starter/experiment $(EXP_ARGS_FILE) $(EXP_CSV)
	@mkdir -p $(dir $@)
	$(EXP_DIR)/starter/experiment $(EXP_ARGS) $(if $(WORKERS),--workers $(WORKERS)) \
	  --impl starter --reference $(EXP_DIR) $(EXP_DIR)/starter >/dev/null

# The tables go to a file and `experiment` shows it, so that they are
# shown whether or not the run had to happen.
$(EXP_CSV): $(EXP_BIN) $(EXP_ARGS_FILE)
	@mkdir -p $(EXP_DIR) $(EXP_DATA)
	$(EXP_BIN) $(EXP_ARGS) $(if $(WORKERS),--workers $(WORKERS)) \
	  $(EXP_DIR) $(EXP_DATA) >/dev/null

$(DATA_STAMP): $(EXP_CSV)
