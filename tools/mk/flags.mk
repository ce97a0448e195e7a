# flags.mk: the compiler flags, kept once. The Makefile includes this
# file; the scripts that build without the Makefile read it too:
# tools/grade/prepare.sh (shipped in the autograder zip, for Gradescope)
# and tools/checks/50-mutants.sh. They read each value with
#   sed -n 's/^NAME *:= *//p' tools/mk/flags.mk
# so every value is one line, NAME := words, with no make syntax in it.

# Every C file the kit builds, its own and the student's. (make DEBUG=1
# puts -O0 in place of C_OPT.)
C_FLAGS := -std=c11 -Wall -Wextra -pedantic -g
C_OPT := -O2
# Compiling and linking: chapter 7 shares work among threads with OpenMP
# (gcc's libgomp).
OPENMP := -fopenmp
# The race pass (make races): clang with ThreadSanitizer, linked with
# LLVM's OpenMP runtime (libomp), which loads the Archer tool
# (libarcher.so, Debian's libomp-14-dev) so that ThreadSanitizer sees
# OpenMP's barriers and never reports them as races.
RACE_CC := clang-14
RACE_FLAGS := -fsanitize=thread
# (Which chapters run the race pass is the table's race column,
# chapters/chapters.tsv: RACE_CHAPTERS, or tools/mk/chapters.sh race.)
# The kit's own code: every warning is an error.
KIT_WARN := -Werror
# The student's files: warnings are shown but stop nothing (unless
# STRICT=1), except the few that are always bugs; and the kit's leak
# check is forced in (-include LEAKCHECK_H).
STUDENT_WARN := -Werror=implicit-function-declaration -Werror=return-type -Werror=incompatible-pointer-types -Werror=int-conversion
LEAKCHECK_H := tools/harness/leakcheck.h
