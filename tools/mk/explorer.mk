# explorer.mk: the head explorer, chapter 8's trained networks running in
# the reader's browser (tools/explorer/): one self-contained HTML file,
# $(B)/explorer/explorer.html, opened from disk with no server, its
# weights, vocabulary and mean-ablation means inside it.
#
#   make explorer                      the long run's committed networks
#                                      (EXPLORER_WEIGHTS, 1 and 16 heads)
#   make explorer EXPLORER_WEIGHTS=build/lm/smoke/weights \
#     EXPLORER_SIZE=smoke EXPLORER_HEADS=1,4 EXPLORER_RUN=build/lm/smoke
#                                      a smoke run's (make lm-experiment
#                                      LM_SIZE=smoke IMPL=solutions, then
#                                      lm-experiment --size smoke --pack
#                                      build/lm/smoke build/lm/smoke/weights)
#
# For each head count H of EXPLORER_HEADS, the network
# EXPLORER_WEIGHTS/hH_gH_sEXPLORER_SEED.f16 (weights16.c's format) is run
# by the C code on the explorer's inputs (lm-experiment --explore-dump,
# tools/runs/lm/explore.c) into $(B)/explorer/SIZE/dump_hH_sSEED.json:
# the vocabulary, the means and the preset sentences the page takes, and
# the weights and logits tools/checks/explorer.js compares the page's own
# forward pass with (74-browser). EXPLORER_WEIGHTS and EXPLORER_SIZE are
# as lm.mk's LM_WEIGHTS and LM_WEIGHTS_SIZE: the folder of 16-bit
# networks and the size they were trained at. EXPLORER_RUN is the run
# they are seed 1's networks of (its offsets.csv and relations.csv give
# each head's measured role, shown beside its map; left out when the
# folder has none).
EXPLORER_WEIGHTS ?= tools/runs/lm/reference/long/weights
EXPLORER_SIZE    ?= long
EXPLORER_HEADS   ?= 1,16
explorer_comma   := ,
EXPLORER_HLIST   = $(subst $(explorer_comma), ,$(EXPLORER_HEADS))
EXPLORER_SEED    ?= 2017
EXPLORER_RUN     ?= tools/runs/lm/reference/long
EXPLORER_DIR     := $(B)/explorer
EXPLORER_HTML    := $(EXPLORER_DIR)/explorer.html
EXPLORER_LM      := $(B)/lm/solutions/lm-experiment
EXPLORER_SRC     := $(addprefix tools/explorer/,build.js model.js ui.js page.html explorer.css)
explorer_f16      = $(EXPLORER_WEIGHTS)/h$(1)_g$(1)_s$(EXPLORER_SEED).f16
explorer_dump     = $(EXPLORER_DIR)/$(EXPLORER_SIZE)/dump_h$(1)_s$(EXPLORER_SEED).json
EXPLORER_DUMPS   := $(foreach h,$(EXPLORER_HLIST),$(call explorer_dump,$(h)))
EXPLORER_ROLES   := $(wildcard $(addprefix $(EXPLORER_RUN)/,offsets.csv relations.csv))
EXPLORER_NETS    := $(if $(EXPLORER_ROLES),--run $(EXPLORER_RUN)) \
  $(foreach h,$(EXPLORER_HLIST),--net $(call explorer_f16,$(h)) $(call explorer_dump,$(h)))

define explorer_dump_rule
$(call explorer_dump,$(1)): $(call explorer_f16,$(1)) $(EXPLORER_LM) $(CORPUS_BIN)
	@mkdir -p $$(dir $$@)
	$(EXPLORER_LM) --size $(EXPLORER_SIZE) --corpus $(CORPUS_BIN) \
	  --explore-dump $(call explorer_f16,$(1)) $$@
endef
$(foreach h,$(EXPLORER_HLIST),$(eval $(call explorer_dump_rule,$(h))))

$(EXPLORER_WEIGHTS)/%.f16:
	@echo "make explorer: no network $@: EXPLORER_WEIGHTS names a folder of kept networks (lm-experiment --pack writes them; for a smoke run: make explorer EXPLORER_WEIGHTS=build/lm/smoke/weights EXPLORER_SIZE=smoke EXPLORER_HEADS=1,4, after make lm-experiment LM_SIZE=smoke IMPL=solutions and build/lm/solutions/lm-experiment --size smoke --pack build/lm/smoke build/lm/smoke/weights)"; exit 1

# the networks it was last built from: another set makes it again
EXPLORER_ARGS_FILE := $(EXPLORER_DIR)/nets
ifneq ($(filter explorer $(EXPLORER_HTML),$(MAKECMDGOALS)),)
$(shell mkdir -p $(EXPLORER_DIR) && { echo '$(EXPLORER_NETS)' | cmp -s - $(EXPLORER_ARGS_FILE) || echo '$(EXPLORER_NETS)' >$(EXPLORER_ARGS_FILE); })
endif

$(EXPLORER_HTML): $(EXPLORER_SRC) $(EXPLORER_ARGS_FILE) $(EXPLORER_DUMPS) $(EXPLORER_ROLES) $(foreach h,$(EXPLORER_HLIST),$(call explorer_f16,$(h)))
	@mkdir -p $(dir $@)
	node tools/explorer/build.js --out $@ $(EXPLORER_NETS)

.PHONY: explorer
## explorer: the head explorer: chapter 8's 1- and 16-head networks in one HTML file run in the browser (build/explorer/explorer.html; EXPLORER_WEIGHTS, EXPLORER_SIZE, EXPLORER_HEADS)
explorer: $(EXPLORER_HTML)
	@echo "  open $(EXPLORER_HTML) in a browser (from the file: no server needed)"
