# links.mk: chapter 8's relations from a real parser (tools/runs/links/).
#
#   make links        parses the Brown corpus's validation and test texts
#                     with Link Grammar (make deps-dev installs it; the
#                     corpus is make deps's) into $(LINKS_OUT): links.tsv,
#                     sentences.tsv, params.tsv, coverage.tsv (printed),
#                     times.tsv. LINKS_JOBS=2 parses in two processes
#                     (validation, test) and joins their files, which is
#                     the same as one process; LINKS_TEXTS=ca02,ca03 only
#                     those texts. About 25 minutes of one core.
#   make links-save   copies a whole $(LINKS_OUT) into the committed
#                     folder $(LINKS_DATA) (links.tsv gzipped) and writes
#                     its SHA256SUMS (tools/runs/sums.sh). Only after a
#                     new parse, never to make a damaged file pass.
#
# The check tools/checks/79-links.sh parses a sample again and compares.

LINKS_OUT        := $(B)/links
LINKS_DATA       := tools/runs/links/data
LINKS_BIN        := $(LINKS_OUT)/links
LINKS_MAX_TOKENS ?= 70
LINKS_TIMEOUT    ?= 20
LINKS_JOBS       ?= 1
LINKS_TEXTS      ?=
LINKS_CFLAGS     := -std=c11 -Wall -Wextra -Werror -pedantic -O2 -Iinclude

$(LINKS_BIN): tools/runs/links/links.c given/corpus.c given/kit.c include/corpus.h include/kit.h
	@[ -f /usr/include/link-grammar/link-includes.h ] || { \
	  echo "links: Link Grammar is not installed; run: make deps-dev"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(LINKS_CFLAGS) -o $@ tools/runs/links/links.c given/corpus.c given/kit.c -llink-grammar

.PHONY: links links-save
## links: chapter 8's relations: parse the validation and test texts with Link Grammar (make deps-dev) into build/links
links: $(LINKS_BIN)
	@sh tools/corpus/verify.sh $(CORPUS_DIR) >/dev/null || { sh tools/corpus/verify.sh $(CORPUS_DIR); exit 1; }
	@rm -rf $(LINKS_OUT)/all $(LINKS_OUT)/all.part-*
	@sh tools/runs/links/run.sh $(LINKS_BIN) $(CORPUS_TEXTS) $(LINKS_OUT)/all \
	  $(LINKS_JOBS) $(LINKS_MAX_TOKENS) $(LINKS_TIMEOUT) '$(LINKS_TEXTS)'

## links-save: copy a whole make links run into tools/runs/links/data and write its SHA256SUMS
links-save:
	@[ -f $(LINKS_OUT)/all/coverage.tsv ] || { echo "links-save: no $(LINKS_OUT)/all; run make links first"; exit 1; }
	@n=$$(tail -n +2 $(LINKS_OUT)/all/sentences.tsv | cut -f 2 | uniq | wc -l); [ "$$n" -eq 108 ] || { \
	  echo "links-save: $(LINKS_OUT)/all holds $$n texts, not the 108 of validation and test (LINKS_TEXTS?)"; exit 1; }
	@mkdir -p $(LINKS_DATA)
	cp $(LINKS_OUT)/all/sentences.tsv $(LINKS_OUT)/all/params.tsv $(LINKS_OUT)/all/coverage.tsv $(LINKS_DATA)/
	gzip -n -9 -c $(LINKS_OUT)/all/links.tsv >$(LINKS_DATA)/links.tsv.gz
	@sh tools/runs/sums.sh write $(LINKS_DATA)

# make relations: chapter 8's relations from the committed links, on the
# long run's windows (tools/runs/links/relations.c): each relation's cases
# in the measurement and test windows, its best fixed offset, the class
# rule, its hard cases, and the best margin the best of 1, 4 or 16 heads
# a block shows by chance; no network is read. The links are decompressed
# into $(LINKS_TSV) (given/links_lm.c reads them). The program links the
# run's own setup (tools/runs/lm/: the windows, the sizes), so that its
# windows are the run's; the recipe's sources are lm.mk's LM_EXP_SRC
# (defined after this file is read: the prerequisites name the folder).
LINKS_TSV   := $(B)/ch8/links.tsv
REL_OUT     := $(LINKS_OUT)/relations
REL_BIN     := $(LINKS_OUT)/relations-bin/relations

$(LINKS_TSV): $(LINKS_DATA)/links.tsv.gz
	@mkdir -p $(dir $@)
	gzip -dc $< >$@.tmp && mv $@.tmp $@

$(REL_BIN): tools/runs/links/relations.c $(wildcard tools/runs/lm/*.c tools/runs/lm/*.h) \
            $(wildcard include/*.h) $(LIB_SRC) $(wildcard solutions/*.c) tools/runs/runner.c tools/runs/runner.h
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Itools/runs -Itools/runs/lm $(ATT_CFLAGS) -o $@ tools/runs/links/relations.c \
	  $(filter-out tools/runs/lm/main.c,$(LM_EXP_SRC)) $(call LM_IMPL_SRC,solutions) $(LIB_SRC) -lm

.PHONY: relations
## relations: chapter 8's relations from the committed links on the long run's windows: cases, offset and class baselines, hard cases, the best-of-N null (build/links/relations)
relations: $(REL_BIN) $(LINKS_TSV) $(CORPUS_BIN)
	@$(REL_BIN) --corpus $(CORPUS_BIN) --links $(LINKS_TSV) $(REL_OUT)
