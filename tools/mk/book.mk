# book.mk: the book (included by the Makefile).
#
#   make book                     student edition:    $(B)/book.html, $(B)/book.pdf
#   make book EDITION=instructor  instructor edition: $(B)/book-instructor.html, .pdf
#
# book.md holds the title page, the preface and the references; its
# `::: chapters` block is replaced by every chapter's chapters/NN-slug.md,
# in the order of chapters/chapters.tsv (CHAPTER_MDS).
# tools/book/book.lua pulls each listing, by its marker's name, from
# BOOK_SOURCES (starter/ in the student edition, solutions/ in the
# instructor edition) and resolves figures, exercises, references,
# generated tables and values; anything missing stops the build.
# The figures and the measured data come from `make plots`, run first.

ifneq ($(filter-out student instructor,$(EDITION)),)
$(error EDITION must be student or instructor, not '$(EDITION)')
endif

BOOK_CHAPTERS := $(CHAPTER_MDS)
BOOK_NAME     := book$(if $(filter instructor,$(EDITION)),-instructor)
BOOK_HTML     := $(B)/$(BOOK_NAME).html
BOOK_PDF      := $(B)/$(BOOK_NAME).pdf
BOOK_CODE     := $(if $(filter instructor,$(EDITION)),solutions,starter)
BOOK_ENGINE   ?= pdflatex

BOOK_RUN := $(B)/plots/data/book_first_run.md

# The committed runs the book's data are made from
# (tools/runs/plotdata/ch8_*.c read tools/runs/lm/reference/) are checked
# against their manifests (SHA256SUMS, tools/runs/sums.sh) before the
# data are made, first of all (before the data writers are built and the
# benchmarks run): a damaged or cut-short file stops the build, naming
# it.
REF_RUNS       := tools/runs/lm/reference
REF_SUMS_STAMP := $(B)/plots/data/.reference-sums
$(REF_SUMS_STAMP): tools/runs/sums.sh $(filter-out %/README.md,$(shell find $(REF_RUNS) -type f 2>/dev/null))
	@mkdir -p $(dir $@)
	@sh tools/runs/sums.sh check $(REF_RUNS)
	@touch $@
$(DATA_STAMP): $(REF_SUMS_STAMP)
$(PLOT_BINS): | $(REF_SUMS_STAMP)

# The files a listing may come from: the filter indexes their
# /* @listing NAME */ markers (each NAME in one file only) and a chapter
# names the marker alone.
BOOK_SOURCES := $(sort $(wildcard $(BOOK_CODE)/*.c given/*.c include/*.h tests/*.c) \
  $(shell find tools/runs -name '*.c' 2>/dev/null))

# Everything a listing, a figure or a value may come from.
BOOK_DEPS := book.md $(BOOK_CHAPTERS) chapters/chapters.tsv $(wildcard tools/book/*) tools/mk/book.mk \
  $(BOOK_SOURCES) $(DATA_STAMP) $(PLOT_FILES) $(BOOK_RUN)

BOOK_PANDOC = pandoc book.md --from=markdown --standalone \
  --lua-filter=tools/book/book.lua \
  --metadata=edition:$(EDITION) --metadata=builddir:$(B) \
  --metadata=chapters:"$(BOOK_CHAPTERS)" --metadata=sources:"$(BOOK_SOURCES)" \
  --resource-path=.:$(B) --toc --toc-depth=2 --number-sections

# The preface shows what `make test CH=1` prints: a real run, made while
# the book is built (trimmed: the first two failures, then the progress
# lines, the first failure and the summary). It runs on starter/ as it is,
# so its caption, the first line of the file, says what that was: the
# untouched stubs when every function of starter/ch1_*.c is still a stub
# (as many "return KIT_E_TODO" as "@listing" markers: stub_counts in
# tools/loop/lib.sh, reset.sh's test),
# a student's code otherwise.
$(BOOK_RUN): $(EXERCISES) $(wildcard starter/*.c tests/*.c tools/harness/*.c given/*.c include/*.h)
	@mkdir -p $(dir $@)
	@$(MAKE) --no-print-directory -s kit-tests IMPL=starter SAN= >/dev/null
	@{ . tools/loop/lib.sh; set -- $$(cat starter/ch1_*.c | stub_counts); todo=$$1 marks=$$2; \
	   if cat starter/ch1_*.c | all_stubs; then \
	     echo 'Here is what `make test CH=1` printed on the untouched stubs of chapter 1 when this book was built:'; \
	   else \
	     echo 'Here is what `make test CH=1` printed when this book was built. Chapter 1 in `starter/` was no longer the untouched stubs ('"$$((marks - todo))"' of its '"$$marks"' functions written), so this is a run of that code, not of the stubs:'; \
	   fi; echo; \
	   echo '```text'; echo '$$ make test CH=1'; \
	   { $(B)/starter/kit_tests --impl starter --chapter 1 --exercises $(EXERCISES) || true; } | \
	   awk 'NR <= 4 { print; next } NR == 5 { print "  ..." } \
	        /^Progress/ { p = 1 } /^Run Summary/ { p = 0 } p { print } \
	        { last = $$0 } END { print last }' | cat -s; \
	   echo '```'; } >$@.tmp
	@mv $@.tmp $@

# FORMAT picks what `make book` renders: html, pdf, epub, or several
# (default: html pdf).
FORMAT ?= html pdf
ifneq ($(filter-out html pdf epub,$(FORMAT)),)
$(error FORMAT must be html, pdf or epub (or several), not '$(FORMAT)')
endif
BOOK_EPUB := $(B)/$(BOOK_NAME).epub

.PHONY: book book-html book-pdf book-epub
## book: render the book, HTML and PDF (EDITION=instructor: the solutions; FORMAT=epub: an EPUB)
book:
	@$(MAKE) --no-print-directory plots
	@$(MAKE) --no-print-directory $(DATA_STAMP) $(BOOK_RUN)
	@$(MAKE) --no-print-directory $(addprefix book-,$(FORMAT))
	@echo "book: $(foreach f,$(FORMAT),$(BOOK_$(shell echo $(f) | tr a-z A-Z))) ($(EDITION) edition)"

## book-html: render only the HTML book, quickly, to read the chapters (EDITION=instructor too)
book-html: $(BOOK_HTML)
	@echo "book: $(BOOK_HTML) ($(EDITION) edition); open it in a browser"
## book-pdf: render only the PDF book (EDITION=instructor too)
book-pdf: $(BOOK_PDF)
## book-epub: render only the EPUB book (EDITION=instructor too)
book-epub: $(BOOK_EPUB)

# The EPUB (EPUB 3): MathML and the SVG figures, for tablets and
# e-readers; checked by epubcheck when it is installed. (Debian's
# /usr/bin/epubcheck is a jar that needs binfmt support to run directly,
# so it is run with java -jar.)
EPUBCHECK := $(if $(and $(wildcard /usr/share/java/epubcheck.jar),$(shell command -v java)),\
  java -jar /usr/share/java/epubcheck.jar,$(if $(shell command -v epubcheck),epubcheck))
$(BOOK_EPUB): $(BOOK_DEPS) tools/book/book.css tools/book/epub.css
	@mkdir -p $(dir $@)
	@echo "  pandoc  $@"
	@$(BOOK_PANDOC) --to=epub3 --mathml --css=tools/book/book.css --css=tools/book/epub.css \
	  --output=$@.tmp.epub || { rm -f $@.tmp.epub; exit 1; }
	@mv $@.tmp.epub $@
	@if [ -n "$(EPUBCHECK)" ]; then \
	  $(EPUBCHECK) -q $@ >$(B)/$(BOOK_NAME).epubcheck.txt 2>&1 \
	    && echo "  epubcheck  $@: no errors" \
	    || { cat $(B)/$(BOOK_NAME).epubcheck.txt | head -n 30; echo "book: epubcheck found errors in $@"; exit 1; }; \
	else echo "  (epubcheck is not installed: make deps-dev; $@ was not validated)"; fi

$(BOOK_HTML): $(BOOK_DEPS)
	@mkdir -p $(dir $@)
	@echo "  pandoc  $@"
	@$(BOOK_PANDOC) --to=html5 --self-contained --mathml \
	  --css=tools/book/book.css --output=$@.tmp || { rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

# The LaTeX is kept in $(B)/book/ with its log; LaTeX runs from the repo
# root so that the figures' paths resolve.
BOOK_TEX := $(B)/book/$(BOOK_NAME).tex
BOOK_LATEX = $(BOOK_ENGINE) -interaction=nonstopmode -halt-on-error \
  -output-directory=$(B)/book $(BOOK_TEX) >/dev/null \
  || { echo "book: LaTeX failed, see $(B)/book/$(BOOK_NAME).log:"; \
       grep -A8 '^!' $(B)/book/$(BOOK_NAME).log | head -n 30; exit 1; }

$(BOOK_PDF): $(BOOK_DEPS)
	@mkdir -p $(dir $@) $(B)/book
	@echo "  pandoc  $(BOOK_TEX)"
	@$(BOOK_PANDOC) --to=latex --include-in-header=tools/book/header.tex \
	  --top-level-division=chapter --output=$(BOOK_TEX).tmp \
	  || { rm -f $(BOOK_TEX).tmp; exit 1; }
	@mv $(BOOK_TEX).tmp $(BOOK_TEX)
	@echo "  $(BOOK_ENGINE)  $@"
	@$(BOOK_LATEX)
	@$(BOOK_LATEX)
	@if grep -q 'Rerun to get' $(B)/book/$(BOOK_NAME).log; then $(BOOK_LATEX); fi
	@cp $(B)/book/$(BOOK_NAME).pdf $@
