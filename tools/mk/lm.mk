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

$(LM_BIN): $(LM_SRC) $(wildcard include/*.h) tools/runs/runner.h
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(ATT_CFLAGS) -o $@ $(LM_SRC) -lm

# make bench-lm: the kit's training step against PyTorch's, side by side
# (tools/runs/bench/lm.sh), at batch 8, 16 and 64 on 2 threads. Takes a few
# minutes. LM_BATCHES, LM_STEPS, LM_THREADS, LM_SIZE change the run.
LM_BENCH_DIR := $(B)/bench

.PHONY: bench-lm
## bench-lm: chapter 8's training step against PyTorch's: tokens/s, ratio, peak memory
bench-lm: $(LM_BIN) $(ATT_BIN)
	@bash tools/runs/bench/lm.sh $(LM_BIN) $(ATT_BIN) $(LM_BENCH_DIR)

# make lm-experiment: chapter 8's experiment (tools/runs/lm/main.c) on the
# Brown corpus (make corpus): 1, 2, 4, 8 and 16 heads at d_model 64, the
# learning rate chosen for each from the same grid by the validation loss
# of seed 1, the chosen rate over LM_SEEDS seeds scored once on the test
# set, and what seed 1's heads do. Results into $(B)/lm/ (the book size),
# $(B)/lm/full/ or $(B)/lm/smoke/; on the student's code (IMPL=starter)
# into $(B)/lm/starter/..., once the tests of the chapters it links
# (LM_NEEDS: chapter 8 and the chapters it needs) pass.
#
#   make lm-experiment                 the book size (a few minutes, 2 cores)
#   make lm-experiment LM_SIZE=full    the full sweep (about 40 networks at the
#                                      long run's budget: hours)
#   make lm-experiment LM_SIZE=smoke   seconds: checks the machinery
#   make lm-experiment LM_SEEDS=5 LM_HEADS=1,4 LM_WORKERS=1
#
# It runs every time it is asked (it is not a file target). Built with
# chapter 7's flags (ATT_CFLAGS, OpenMP) against IMPL's files of the
# chapters chapter 8 links (CH_FILES_8), the given code and the runner.
LM_SIZE    ?= book
# The sizes, a row each (smoke, book, long, full): their width, depth,
# context, batch and token budget, in one table, which the driver
# (tools/runs/lm/sizes.c), the bench (tools/runs/bench/lm.sh) and the
# book (tools/runs/plotdata/ch8_tables.c: ch8size.values) read as well;
# $(call lm_size,SIZE,COLUMN) is one of its values here, a COLUMN being
# d_model, layers, context, batch or tokens.
LM_SIZES_TSV := tools/runs/lm/sizes.tsv
lm_size = $(shell awk -F'\t' -v s='$(1)' -v c='$(2)' '/^\#/ { next } \
  !h { for (i = 1; i <= NF; i++) col[$$i] = i; h = 1; next } \
  $$1 == s && c in col { print $$col[c] }' $(LM_SIZES_TSV))
LM_SEEDS   ?=
LM_HEADS   ?=
LM_WORKERS ?=
LM_EXP_DIR := $(B)/lm
# the driver (main.c) and its parts (lm.h); train.c is lm-train's own
LM_EXP_SRC := $(addprefix tools/runs/lm/,main.c network.c setup.c write.c \
                book.c resume.c roles.c remeasure.c sizes.c parsed.c findhead.c \
                weights16.c explore.c) $(RUNNER_SRC)
LM_IMPL_SRC = $(patsubst %,$(1)/%.c,$(CH_FILES_8))
# the reference's run of the same size, which the student's is compared
# with: for the long size, the one committed with the kit (LM_LONG_REF)
LM_REF      = $(if $(filter long,$(LM_SIZE)),$(LM_LONG_REF),$(LM_EXP_DIR)$(if $(filter-out book,$(LM_SIZE)),/$(LM_SIZE)))
LM_OUT     := $(LM_EXP_DIR)$(if $(filter starter,$(IMPL)),/starter)$(if $(filter-out book,$(LM_SIZE)),/$(LM_SIZE))
LM_EXP_ARGS = --size $(LM_SIZE) --impl $(IMPL) --corpus $(CORPUS_BIN) \
  $(if $(LM_SEEDS),--seeds $(LM_SEEDS)) $(if $(LM_HEADS),--heads $(LM_HEADS)) \
  $(if $(LM_WORKERS),--workers $(LM_WORKERS))

define lm_bin_rule
$(LM_EXP_DIR)/$(1)/lm-experiment: $(LM_EXP_SRC) tools/runs/lm/lm.h tools/runs/lm/sizes_tsv.h $(wildcard include/*.h) $(RUNNER_H) \
                                  $(LIB_SRC) $(call LM_IMPL_SRC,$(1))
	@mkdir -p $$(dir $$@)
	$$(CC) -Iinclude -Itools/runs $$(ATT_CFLAGS) -o $$@ $(LM_EXP_SRC) \
	  $(call LM_IMPL_SRC,$(1)) $(LIB_SRC) -lm
endef
$(foreach i,starter solutions,$(eval $(call lm_bin_rule,$(i))))

# The chapters whose tests must pass before the student's run: the ones
# chapter 8 needs (chapters/chapters.tsv), and chapter 8.
LM_NEEDS := $(CH_NEEDS_8) 8
# $(call lm_gate,WHAT): the shell line that refuses IMPL's code in one
# line while a test of LM_NEEDS fails on it ("WHAT in IMPL/, which is not
# ready: ..."); the targets that run the student's code (lm-experiment,
# find-head) use it unless IMPL is solutions or EXP_GATE=no.
lm_gate = $(call impl_failing,$(LM_NEEDS)); \
	if [ -n "$$bad" ]; then \
	  set -- $$bad; \
	  echo "$(1) in $(IMPL)/, which is not ready: the tests of chapter(s)$$bad must pass first (make test CH=$$1)."; \
	  exit 1; fi

# The book-sized run (LM_SIZE=book on solutions/): a file target, the
# reference a student's `make lm-experiment IMPL=starter` is compared
# with. It is not part of `make all`: the book prints the long run
# committed in $(LM_LONG_REF)/ (make lm-reference, below), which
# tools/runs/plotdata/ch8_long.c copies into the plots' data. Its own
# values and plot data go into $(LM_EXP_DIR)/data (--data), and its
# tables beside them, made from those and its CSV files by
# tools/runs/plotdata/ch8_tables.c as the book's are (LM_TABLES); it
# happens again only when the program, the corpus file or the arguments
# changed.
LM_BOOK_CSV  := $(LM_EXP_DIR)/results.csv
LM_BOOK_ARGS := --size book --impl solutions --corpus $(CORPUS_BIN)
LM_BOOK_ARGS_FILE := $(LM_EXP_DIR)/book_args
ifneq ($(filter lm-experiment $(EXP_GOALS) $(LM_BOOK_CSV),$(or $(MAKECMDGOALS),all)),)
$(shell mkdir -p $(LM_EXP_DIR) && { echo '$(LM_BOOK_ARGS)' | cmp -s - $(LM_BOOK_ARGS_FILE) || echo '$(LM_BOOK_ARGS)' >$(LM_BOOK_ARGS_FILE); })
endif

LM_TABLES := $(B)/plotdata/ch8_tables

# The book's data step (Makefile: DATA_STAMP) runs ch8_tables, which
# prints the long run's row of the table of sizes (ch8size.values) once
# it has checked it against the sizes the committed run was trained at:
# a changed table makes it again.
$(DATA_STAMP): $(LM_SIZES_TSV)

$(LM_BOOK_CSV): $(LM_EXP_DIR)/solutions/lm-experiment $(CORPUS_BIN) $(LM_BOOK_ARGS_FILE) $(LM_TABLES)
	@mkdir -p $(LM_EXP_DIR)/data
	@echo "  lm-experiment: chapter 8's book-sized run (a few minutes on 2 cores; progress below)"
	$(LM_EXP_DIR)/solutions/lm-experiment $(LM_BOOK_ARGS) --data $(LM_EXP_DIR)/data \
	  $(if $(LM_WORKERS),--workers $(LM_WORKERS)) $(LM_EXP_DIR) >/dev/null
	$(LM_TABLES) $(LM_EXP_DIR)/data $(LM_EXP_DIR)

.PHONY: lm-experiment
## lm-experiment: chapter 8 on the Brown corpus: head counts and K/V sharing tuned alike, over seeds; test loss, heads' measurements (LM_SIZE=smoke|book|long|full)
lm-experiment: $(LM_EXP_DIR)/$(IMPL)/lm-experiment
	@[ -f $(CORPUS_BIN) ] || $(MAKE) --no-print-directory -s $(CORPUS_BIN)
ifeq ($(IMPL)$(LM_SIZE)$(LM_SEEDS)$(LM_HEADS),solutionsbook)
	@$(MAKE) --no-print-directory $(LM_BOOK_CSV)
	@cat $(LM_EXP_DIR)/table.txt
else
ifneq ($(IMPL),solutions)
ifneq ($(EXP_GATE),no)
	@$(call lm_gate,make lm-experiment trains on your code)
endif
endif
	@mkdir -p $(LM_OUT)
ifeq ($(LM_SIZE)$(LM_SEEDS)$(LM_HEADS),book)
	@[ -f $(LM_BOOK_CSV) ] || { echo "  first the reference's run, to compare yours with:"; \
	  $(MAKE) --no-print-directory IMPL=solutions $(LM_BOOK_CSV); }
endif
	$(LM_EXP_DIR)/$(IMPL)/lm-experiment $(LM_EXP_ARGS) \
	  $(if $(or $(filter-out solutions,$(IMPL)),$(filter long,$(LM_SIZE))),--reference $(LM_REF)) $(LM_OUT)
endif

# make lm-reference: the long run of chapter 8's experiment
# (lm-experiment --size long: 1, 4 and 16 heads and 4 query heads on one
# K/V head, each tuned alike on a grid of rates and trained over 3 seeds
# on 8,388,608 tokens, about 9.2 passes over the training texts), whose
# numbers, committed in $(LM_LONG_REF)/, are the ones the book prints
# (the same protocol at half the budget is committed beside it, in
# tools/runs/lm/reference/long-4m/). Results into $(LM_LONG_OUT)/, then compared
# with the committed run's test losses (compare.txt). The run is
# resumable (--resume): stopped and started again, it keeps every network
# finished in $(LM_LONG_OUT)/models/ and trains only the others; delete
# that folder after changing the code, to train them all again.
#
#   make lm-reference                   the whole run
#   make lm-reference LM_STOP=524288    the 4-head networks only, at the
#                                       committed run's rate for them,
#                                       stopped after that many tokens
#                                       (the schedule stays the whole
#                                       run's): their first validation
#                                       points beside the committed ones
LM_LONG_REF := tools/runs/lm/reference/long
LM_LONG_OUT ?= $(B)/lm/long
LM_LONG_TOL ?= 0.002

.PHONY: lm-reference
## lm-reference: chapter 8's long run, whose numbers the book is to print, beside the committed ones (LM_STOP=tokens: its first points only)
lm-reference: $(LM_EXP_DIR)/solutions/lm-experiment $(LM_TABLES)
	@[ -f $(CORPUS_BIN) ] || $(MAKE) --no-print-directory -s $(CORPUS_BIN)
	@mkdir -p $(LM_LONG_OUT)/stopped
ifeq ($(LM_STOP),)
	$(LM_EXP_DIR)/solutions/lm-experiment --size long --resume --corpus $(CORPUS_BIN) \
	  --data $(LM_LONG_OUT)/data \
	  $(if $(wildcard $(LM_LONG_REF)/results.csv),--reference $(LM_LONG_REF)) \
	  $(LM_LONG_OUT)
	$(LM_TABLES) $(LM_LONG_OUT)/data $(LM_LONG_OUT)
else
	@[ -f $(LM_LONG_REF)/tuning.csv ] || { echo "make lm-reference LM_STOP=...: no committed run in $(LM_LONG_REF) to compare with"; exit 1; }
	@lr=$$(awk -F, '$$2 == 4 && $$3 == 4 && $$9 == 1 { print $$4 }' $(LM_LONG_REF)/tuning.csv); \
	[ -n "$$lr" ] || { echo "$(LM_LONG_REF)/tuning.csv names no chosen rate for 4 heads"; exit 1; }; \
	$(LM_EXP_DIR)/solutions/lm-experiment --size long --heads 4 --kv none \
	  --lrs $$lr --stop $(LM_STOP) --corpus $(CORPUS_BIN) $(LM_LONG_OUT)/stopped && \
	sh tools/runs/lm/curves_compare.sh $(LM_LONG_OUT)/stopped $(LM_LONG_REF) $(LM_LONG_TOL)
endif

# make lm-reference-sums: the manifests of the committed runs in
# tools/runs/lm/reference/ and its run folders (SHA256SUMS, written by
# tools/runs/sums.sh), which the book's data step checks: run it after
# committing a new run there, never to make a damaged file pass.
.PHONY: lm-reference-sums
## lm-reference-sums: write the manifests (SHA256SUMS) of the committed runs in tools/runs/lm/reference/, after committing a new run there
lm-reference-sums:
	@sh tools/runs/sums.sh write tools/runs/lm/reference

# make lm-remeasure: the heads of every final network of the long run in
# $(LM_LONG_OUT)/ (every configuration, all 3 seeds): seed 1's networks
# reloaded from its models/, the other seeds' where kept and trained
# again otherwise (about 30 minutes on 2 cores), their test losses
# checked against the run's results.csv; writes seed_heads.csv there. A
# run of make lm-reference writes it itself; this is for a run made
# before it did. To commit it: copy seed_heads.csv and seed_heads.values
# into $(LM_LONG_REF)/.
.PHONY: lm-remeasure
## lm-remeasure: the heads of every seed's networks of the long run in build/lm/long (seed_heads.csv)
lm-remeasure: $(LM_EXP_DIR)/solutions/lm-experiment
	@[ -f $(CORPUS_BIN) ] || $(MAKE) --no-print-directory -s $(CORPUS_BIN)
	$(LM_EXP_DIR)/solutions/lm-experiment --size long --corpus $(CORPUS_BIN) \
	  --remeasure $(LM_LONG_OUT) $(LM_LONG_OUT)

# make lm-parsed: the heads of the committed long run on the parser's
# relations (lm-experiment --parsed, tools/runs/lm/parsed.c; the
# committed links, decompressed into $(LINKS_TSV)): seed 1's network of
# every head count read from its kept weights ($(LM_WEIGHTS)), not
# trained; for each relation, the head with the largest margin over the
# best fixed offset on the measurement windows, scored once on the test
# windows beside the best-of-N null, and mean-ablated there: what
# removing it costs at the relation's later words and over every
# position; and the map of each network, every head's own best
# relation. Writes parsed.csv and parsed_heads.csv into $(LM_PARSED_OUT)/
# and compares them with the committed ones in $(LM_LONG_REF)/, which
# the book prints (tools/runs/plotdata/ch8_parsed.c). LM_PARSED_FROM=DIR
# reads a run's 32-bit models/ instead (a run of make lm-reference).
LM_PARSED_OUT  ?= $(B)/lm/parsed
LM_PARSED_FROM ?=

.PHONY: lm-parsed
## lm-parsed: the committed long run's heads on the parser's relations, from its kept weights: each relation's best head, its test score beside the null, what ablating it costs (parsed.csv, compared with the committed one)
lm-parsed: $(LM_EXP_DIR)/solutions/lm-experiment $(LINKS_TSV)
	@[ -f $(CORPUS_BIN) ] || $(MAKE) --no-print-directory -s $(CORPUS_BIN)
	$(LM_EXP_DIR)/solutions/lm-experiment --size long --kv none --seeds 1 --corpus $(CORPUS_BIN) \
	  --links $(LINKS_TSV) \
	  $(if $(LM_PARSED_FROM),--parsed $(LM_PARSED_FROM),--parsed $(LM_LONG_REF) --weights $(LM_WEIGHTS)) \
	  $(LM_PARSED_OUT)
	@if [ -z "$(LM_PARSED_FROM)" ] && [ -f $(LM_LONG_REF)/parsed.csv ]; then \
	  for f in parsed.csv parsed_heads.csv; do \
	    if cmp -s $(LM_PARSED_OUT)/$$f $(LM_LONG_REF)/$$f; then echo "  $$f: the same as the committed $(LM_LONG_REF)/$$f"; \
	    else echo "  $$f differs from the committed $(LM_LONG_REF)/$$f:"; diff $(LM_LONG_REF)/$$f $(LM_PARSED_OUT)/$$f | head -n 10; exit 1; fi; \
	  done; fi

# make lm-roles: chapter 8's roles as they appear (tools/runs/lm/main.c
# --roles): one network each of 1, 4 and 16 heads, trained on the long
# size's budget (tools/runs/lm/sizes.tsv: 8,388,608 tokens, about nine
# passes over the training texts) at one rate, and
# measured at 16 checkpoints: the validation loss, the positional heads,
# the largest single-offset share, each relation's best margin over its
# best fixed offset. Results into $(B)/lm/roles/, then compared,
# checkpoint by checkpoint, with the kit's reference run, committed in
# $(LM_ROLES_REF)/ (the book draws its figure from that one; its
# run.values says what produced it and how long it took).
#
#   make lm-roles                     the whole run (see run.values)
#   make lm-roles LM_STOP=131072      stop after that many tokens (the
#                                     schedule stays the whole run's),
#                                     and compare the checkpoints reached
#   make lm-roles LM_ROLES_HEADS=4    one head count only
#
# To make a new reference: copy roles.csv, baselines.csv and run.values
# from $(B)/lm/roles/ into $(LM_ROLES_REF)/ and commit them.
LM_ROLES_REF   := tools/runs/lm/reference
LM_ROLES_HEADS ?= 1,4,16
LM_ROLES_TOL   ?= 0.06
LM_ROLES_OUT   ?= $(B)/lm/roles
LM_STOP        ?=
LM_ROLES_ARGS   = --size book --heads $(LM_ROLES_HEADS) --lrs 7e-3 \
  --tokens $(call lm_size,long,tokens) --roles 16 --workers 3

.PHONY: lm-roles
## lm-roles: chapter 8's roles as they appear: 1, 4 and 16 heads trained long, measured at checkpoints, beside the committed reference run (LM_STOP=tokens stops early)
lm-roles: $(LM_EXP_DIR)/solutions/lm-experiment
	@[ -f $(CORPUS_BIN) ] || $(MAKE) --no-print-directory -s $(CORPUS_BIN)
	@mkdir -p $(LM_ROLES_OUT)
	$(LM_EXP_DIR)/solutions/lm-experiment $(LM_ROLES_ARGS) --corpus $(CORPUS_BIN) \
	  $(if $(LM_STOP),--stop $(LM_STOP)) $(LM_ROLES_OUT)
	@sh tools/runs/lm/roles_compare.sh $(LM_ROLES_OUT) $(LM_ROLES_REF) $(LM_ROLES_TOL)

# make lm-weights-check: the committed long run's final networks, kept
# whole, in $(LM_WEIGHTS)/ (tools/runs/lm/weights16.c:
# hH_gG_sSEED.f16, about 2.5 MB each, which lm-experiment --pack RUN_DIR
# writes from a run's models/), measured again without training
# (--remeasure $(LM_WEIGHTS_REF) --weights $(LM_WEIGHTS)) into
# $(LM_WEIGHTS_OUT)/, then every measure compared with the committed
# run's CSV files by tools/runs/lm/weights_compare.sh: seed_heads.csv
# (each network's test loss and its heads summed up), offsets.csv,
# relations.csv, ablation.csv, tag_profiles.csv and row_max.csv, each
# number within LM_WEIGHTS_TOL (0.0005: the same to 3 decimals) of the
# committed one, widened by half a unit of the committed value's last
# printed decimal; a whole number equal. The kept networks are the head
# counts' own (LM_WEIGHTS_KV=none: the network sharing K/V heads is not
# kept) of seed 2017 (LM_WEIGHTS_SEEDS=1), the networks every measure but
# seed_heads.csv's other seeds reads; LM_WEIGHTS_SEEDS=3 when the other
# seeds are kept too.
#
#   make lm-weights-check
#   make lm-weights-check LM_WEIGHTS=build/lm/smoke/weights \
#     LM_WEIGHTS_REF=build/lm/smoke LM_WEIGHTS_SIZE=smoke
LM_WEIGHTS      ?= $(LM_LONG_REF)/weights
LM_WEIGHTS_REF  ?= $(LM_LONG_REF)
LM_WEIGHTS_SIZE ?= long
LM_WEIGHTS_OUT  ?= $(B)/lm/weights-check
LM_WEIGHTS_TOL  ?= 0.0005
LM_WEIGHTS_KV   ?= none
LM_WEIGHTS_SEEDS ?= 1

.PHONY: lm-weights-check
## lm-weights-check: the committed long run's final networks, read from their 16-bit weights, measured again: every measure the same as the committed CSV files' to 3 decimals
lm-weights-check: $(LM_EXP_DIR)/solutions/lm-experiment
	@[ -d $(LM_WEIGHTS) ] || { echo "make lm-weights-check: no 16-bit weights in $(LM_WEIGHTS)/ to check: write them from the run's networks with lm-experiment --size $(LM_WEIGHTS_SIZE) --pack RUN_DIR $(LM_WEIGHTS)"; exit 1; }
	@[ -f $(CORPUS_BIN) ] || $(MAKE) --no-print-directory -s $(CORPUS_BIN)
	@mkdir -p $(LM_WEIGHTS_OUT)
	$(LM_EXP_DIR)/solutions/lm-experiment --size $(LM_WEIGHTS_SIZE) --corpus $(CORPUS_BIN) \
	  $(if $(LM_WEIGHTS_KV),--kv $(LM_WEIGHTS_KV)) $(if $(LM_WEIGHTS_SEEDS),--seeds $(LM_WEIGHTS_SEEDS)) \
	  --remeasure $(LM_WEIGHTS_REF) --weights $(LM_WEIGHTS) $(LM_WEIGHTS_OUT)
	@sh tools/runs/lm/weights_compare.sh $(LM_WEIGHTS_OUT) $(LM_WEIGHTS_REF) $(LM_WEIGHTS_TOL)

# make find-head REL=J: chapter 8's exercise "find the head", on your
# code (IMPL=starter, the default, once the chapters lm-experiment needs
# pass: lm_gate; IMPL=solutions on the reference's): one trained network,
# the 16-head network of seed 2017 read from its 16-bit weights in
# $(LM_WEIGHTS)/ (the committed long run's; LM_HEADS=N another head
# count), never trained: every head scored on relation REL (a key of
# include/links_lm.h: J object -> preposition, A noun -> adjective, D, S,
# O, OS, ...) with your relation_score() and head_offset_profile() on the
# measurement windows, the best chosen and scored once on the test
# windows beside the best-of-N null, the best fixed offset and the class
# rule, then mean-ablated through your mean_ablate_head(); a verdict
# (lm-experiment --find-head, tools/runs/lm/findhead.c). Seconds.
#
#   make find-head REL=J
#   make find-head REL=A IMPL=solutions
#   make find-head REL=J LM_WEIGHTS=build/lm/smoke/weights LM_WEIGHTS_SIZE=smoke
REL ?=

.PHONY: find-head
## find-head: chapter 8's exercise on your code: the long run's 16-head network's heads on one parser relation (REL=J, A, ...), the best chosen on validation, scored once on test beside the null, the offset and the class rule, then mean-ablated; a verdict (LM_WEIGHTS=DIR LM_WEIGHTS_SIZE=SIZE)
find-head: $(LM_EXP_DIR)/$(IMPL)/lm-experiment $(LINKS_TSV)
	@[ -n "$(REL)" ] || { echo "make find-head: name the relation, e.g. make find-head REL=J (object -> preposition) or REL=A (noun -> adjective); include/links_lm.h lists the keys"; exit 1; }
ifneq ($(IMPL),solutions)
ifneq ($(EXP_GATE),no)
	@$(call lm_gate,make find-head measures your code)
endif
endif
	@[ -f $(CORPUS_BIN) ] || $(MAKE) --no-print-directory -s $(CORPUS_BIN)
	$(LM_EXP_DIR)/$(IMPL)/lm-experiment --find-head '$(REL)' --weights $(LM_WEIGHTS) \
	  --size $(LM_WEIGHTS_SIZE) --impl $(IMPL) --corpus $(CORPUS_BIN) \
	  --links $(LINKS_TSV)$(if $(LM_HEADS), --heads $(LM_HEADS))
