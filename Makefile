# The attention kit's build. `make help` lists every target.
#
# Variables a user sets on the command line:
#   IMPL=starter|solutions  whose code the tests run against (default starter)
#   CH=N                    one chapter only
#   TEST=name               one test only
#   SAN=1                   build with AddressSanitizer and UBSan
#   TIMEOUT=seconds         per-test time limit (default 5, 30 with SAN=1)
#   EDITION=student|instructor  which book `make book` renders

MAKEFLAGS += --no-builtin-rules
.SUFFIXES:

IMPL    ?= starter
CH      ?=
TEST    ?=
SAN     ?=
EDITION ?= student

ifneq ($(filter-out starter solutions,$(IMPL)),)
$(error IMPL must be starter or solutions, not '$(IMPL)')
endif

CC       ?= cc
PKG_CFLAGS := $(shell pkg-config --cflags cunit 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs cunit 2>/dev/null || echo -lcunit)
# -fopenmp: chapter 7 shares work among threads with OpenMP (gcc's libgomp).
CFLAGS   := -std=c11 -Wall -Wextra -Werror -pedantic -g $(if $(DEBUG),-O0,-O2) -fopenmp
CPPFLAGS := -Iinclude -Itests $(PKG_CFLAGS) -MMD -MP
LDFLAGS  += -fopenmp
LDLIBS   := $(PKG_LIBS) -lm
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
TIMEOUT  ?= 30
VARIANT  := $(IMPL)-san
else
TIMEOUT  ?= 5
VARIANT  := $(IMPL)$(if $(DEBUG),-debug)
endif

B        ?= build
OUT      := $(B)/$(VARIANT)
LIB_SRC  := $(wildcard tools/lib/*.c)
TEST_SRC := $(wildcard tests/*.c)
IMPL_SRC  = $(wildcard $(1)/*.c)
objs      = $(patsubst %.c,$(B)/$(2)/%.o,$(1))

LIB_OBJ   := $(call objs,$(LIB_SRC),$(VARIANT))
TEST_OBJ  := $(call objs,$(TEST_SRC),$(VARIANT))
IMPL_OBJ  := $(call objs,$(call IMPL_SRC,$(IMPL)),$(VARIANT))
RUNNER_OBJ := $(call objs,tools/harness/runner.c,$(VARIANT))
TESTS_BIN := $(OUT)/kit_tests
LIBKIT    := $(OUT)/libkit.a

RUN_ARGS = --impl $(IMPL) --timeout $(TIMEOUT) --junit $(OUT)/junit.xml \
           $(if $(CH),--chapter $(CH)) $(if $(TEST),--test $(TEST))

.DEFAULT_GOAL := all
.PHONY: all help deps deps-dev test list debug check plots reset clean \
        format format-check valgrind golden compdb kit-tests

# ---------------------------------------------------------------------------
# The main job and the student's loop
# ---------------------------------------------------------------------------

## all: the main job: test the reference solutions, draw the plots, render the book
all:
	$(MAKE) --no-print-directory test IMPL=solutions
	$(MAKE) --no-print-directory plots
	$(MAKE) --no-print-directory book
	$(MAKE) --no-print-directory compdb

## test: build and run the tests on starter/ (CH=N, TEST=name, IMPL=solutions, SAN=1)
test: $(TESTS_BIN)
	@$(TESTS_BIN) $(RUN_ARGS)

## list: list every test, by chapter, with what it checks
list: $(TESTS_BIN)
	@$(TESTS_BIN) --list

## debug: run one test in-process under gdb, built at -O0 (TEST=name is required)
debug:
	@test -n "$(TEST)" || { echo "make debug needs TEST=name (see make list)"; exit 2; }
	@$(MAKE) --no-print-directory -s kit-tests DEBUG=1 SAN=
	@echo "gdb: type 'run' to start; after a crash 'bt' shows the calls and"
	@echo "'frame N' then 'info locals' shows one of them. 'break matmul' stops"
	@echo "at a function before 'run'. 'quit' leaves."
	gdb -q --args $(B)/$(IMPL)-debug/kit_tests --no-fork --impl $(IMPL) --test $(TEST)

## kit-tests: only build the test binary (for IMPL and SAN)
kit-tests: $(TESTS_BIN)

$(TESTS_BIN): $(RUNNER_OBJ) $(TEST_OBJ) $(IMPL_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LIBKIT): $(IMPL_OBJ) $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/%.o:
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $(patsubst $(B)/$(VARIANT)/%.o,%.c,$@)

# Each object depends on its own source; -MMD adds the headers.
define object_rule
$(call objs,$(1),$(VARIANT)): $(1)
endef
$(foreach s,$(LIB_SRC) $(TEST_SRC) $(call IMPL_SRC,$(IMPL)) tools/harness/runner.c,\
  $(eval $(call object_rule,$(s))))

# The headers each object depends on, as the compiler wrote them; they are
# never remade by a rule of their own.
-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
%.d: ;

# ---------------------------------------------------------------------------
# Installing what the kit needs
# ---------------------------------------------------------------------------

DEB_PACKAGES := build-essential pkg-config libcunit1-dev gnuplot-nox pandoc valgrind clang-format \
  texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended \
  lmodern poppler-utils gdb inotify-tools bubblewrap zip unzip
DEB_DEV_PACKAGES := python3 python3-torch python3-numpy libopenblas0-pthread bear chromium epubcheck

## deps: install the Debian packages the kit needs (does nothing if present)
deps:
	@sh tools/deps.sh $(DEB_PACKAGES)

## deps-dev: also install what contributors need (PyTorch for make golden, bear)
deps-dev:
	@sh tools/deps.sh $(DEB_PACKAGES) $(DEB_DEV_PACKAGES)

# ---------------------------------------------------------------------------
# Golden values, plots, the book
# ---------------------------------------------------------------------------

## golden: regenerate tests/golden/ with PyTorch (needs make deps-dev)
golden:
	/usr/bin/python3 tools/gen_golden.py tests/golden

PLOT_SRC     := $(wildcard tools/plotdata/*.c)
PLOT_BINS    := $(patsubst tools/plotdata/%.c,$(B)/plotdata/%,$(PLOT_SRC))
PLOT_SCRIPTS := $(filter-out plots/common.gp,$(wildcard plots/*.gp))
PLOT_NAMES   := $(patsubst plots/%.gp,%,$(PLOT_SCRIPTS))
PLOT_FILES   := $(foreach n,$(PLOT_NAMES),$(B)/plots/$(n).png $(B)/plots/$(n).svg)
DATA_STAMP   := $(B)/plots/data/.stamp

## plots: run the reference code to write the data, then draw every figure
plots: $(PLOT_FILES)

$(B)/plotdata/%: tools/plotdata/%.c $(B)/solutions/libkit.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(B)/solutions/libkit.a -lm

# The plots always use the reference solutions, whatever IMPL says.
ifneq ($(VARIANT),solutions)
$(B)/solutions/libkit.a: FORCE
	@$(MAKE) --no-print-directory IMPL=solutions SAN= lib-only
endif

.PHONY: lib-only FORCE
lib-only: $(LIBKIT)
FORCE:

$(DATA_STAMP): $(PLOT_BINS)
	@mkdir -p $(dir $@)
	@set -e; for p in $(PLOT_BINS); do echo "  run  $$p"; $$p $(dir $@); done
	@touch $@

$(B)/plots/%.png: plots/%.gp plots/common.gp $(DATA_STAMP)
	gnuplot -e "fmt='png'; outfile='$@'; datadir='$(B)/plots/data'" $<

$(B)/plots/%.svg: plots/%.gp plots/common.gp $(DATA_STAMP)
	gnuplot -e "fmt='svg'; outfile='$@'; datadir='$(B)/plots/data'" $<

# ---------------------------------------------------------------------------
# The kit's own checks
# ---------------------------------------------------------------------------

# The runner's own test binary: tools/harness/selftest.c, not a chapter.
$(B)/selftest/kit_selftest: tools/harness/runner.c tools/harness/selftest.c \
                            tests/kit_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iinclude -Itests $(PKG_CFLAGS) -o $@ \
	  tools/harness/runner.c tools/harness/selftest.c $(LDLIBS)

## check: the kit's self-test (solutions pass, stubs fail cleanly, API, sanitizers, plots, book)
check:
	@sh tools/check.sh

## valgrind: run the solutions' tests in-process under valgrind
valgrind:
	@$(MAKE) --no-print-directory kit-tests IMPL=solutions SAN= DEBUG=
	valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	  --suppressions=tools/valgrind/libgomp.supp \
	  $(B)/solutions/kit_tests --no-fork --quiet --impl solutions --timeout 600

# Every C file but the generated golden values (tests/golden/).
C_FILES = $(filter-out tests/golden/%,$(shell git ls-files '*.c' '*.h'))

## format: reformat every C file with the committed .clang-format
format:
	clang-format -i $(C_FILES)

## format-check: fail if any C file is not formatted
format-check:
	clang-format --dry-run --Werror $(C_FILES)

## compdb: write build/compile_commands.json for clangd (uses bear)
compdb:
	@if command -v bear >/dev/null; then \
	  rm -rf $(B)/compdb && mkdir -p $(B) && \
	  bear --output $(B)/compile_commands.json -- \
	    $(MAKE) --no-print-directory -s B=$(B)/compdb kit-tests IMPL=starter >/dev/null && \
	  echo "wrote $(B)/compile_commands.json"; \
	else echo "bear is not installed (make deps-dev); skipping compile_commands.json"; fi

# ---------------------------------------------------------------------------
# Housekeeping
# ---------------------------------------------------------------------------

## reset: restore chapter CH's stubs, after saving your files to build/backups/
reset:
	@sh tools/reset.sh "$(CH)"

## clean: remove build/, except your backups in build/backups/
clean:
	@if [ -d $(B) ]; then find $(B) -mindepth 1 -maxdepth 1 ! -name backups -exec rm -rf {} +; fi
	@echo "removed $(B)/ (kept $(B)/backups/ if any)"

## help: list the targets
help:
	@echo "Targets (variables: IMPL=starter|solutions CH=N TEST=name SAN=1 EDITION=student|instructor):"
	@grep -h '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /' | sed 's/: /\t/' | \
	  awk -F'\t' '{printf "  %-14s %s\n", substr($$1,3), $$2}'

include $(sort $(wildcard tools/mk/*.mk))
