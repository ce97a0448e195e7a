# grade.mk: grading (included by the Makefile). See tools/grade/.
#
#   make grade                      grade starter/ as Gradescope would:
#                                   $(B)/grade/results.json
#   make autograder                 $(B)/autograder.zip, for Gradescope
#   make grade-all SUBMISSIONS=dir  every subfolder of dir, sandboxed, in
#                                   parallel: $(B)/grade-all/gradebook.csv
#                                   and the class report
# Points: each chapter's, from chapters/chapters.tsv; POINTS=file for
# another table ("CHAPTER POINTS" or "TEST POINTS" lines, see
# tools/grade/compose.awk).

GRADE_DIR := $(B)/grade
AG_ZIP    := $(B)/autograder.zip
POINTS    ?=

.PHONY: grade autograder grade-all

## grade: grade your starter/ files as the autograder would: build/grade/results.json
grade:
	@rm -rf $(GRADE_DIR)
	@POINTS="$(POINTS)" bash tools/grade/grade.sh starter $(GRADE_DIR) || exit 2
	@awk -F'\t' '$$1 ~ /^ch/ { printf "  Chapter %s  %6s of %s\n", substr($$1, 3), $$2, $$3 } \
	  $$1 == "total" { printf "  Total      %6s of %s\n", $$2, $$3 }' $(GRADE_DIR)/summary.tsv
	@echo "wrote $(GRADE_DIR)/results.json"

## autograder: build/autograder.zip, to upload to Gradescope unchanged
autograder:
	@DEB_PACKAGES="$(DEB_PACKAGES)" bash tools/grade/autograder.sh $(AG_ZIP) $(POINTS)

## grade-all: grade every subfolder of SUBMISSIONS=dir in a sandbox: gradebook and class report
grade-all:
	@test -n "$(SUBMISSIONS)" || { echo "make grade-all needs SUBMISSIONS=dir (one subfolder per student)"; exit 2; }
	@POINTS="$(if $(POINTS),$(abspath $(POINTS)))" bash tools/grade/grade-all.sh "$(SUBMISSIONS)" $(B)/grade-all
