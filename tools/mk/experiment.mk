# experiment.mk: chapter 5's experiment, one head against many.
#
# `make experiment` builds tools/experiment/ against the reference
# solutions (build/solutions/libkit.a), trains 1, 2 and 4 heads once and
# prints the table. The run is a file target: it happens again only when
# the program or the library changed. The figures of chapter 5 read what
# it writes into $(B)/plots/data/, so the plots' data stamp depends on it.
# Timings: tools/bench_experiment.sh.

EXP_DIR   := $(B)/experiment
EXP_BIN   := $(EXP_DIR)/experiment
EXP_SRC   := $(wildcard tools/experiment/*.c)
EXP_CSV   := $(EXP_DIR)/results.csv
EXP_TABLE := $(EXP_DIR)/table.txt
EXP_DATA  := $(B)/plots/data

.PHONY: experiment

## experiment: train 1, 2 and 4 heads (chapter 5); print the table, write results.csv
experiment: $(EXP_CSV)
	@cat $(EXP_TABLE)
	@echo "(written: $(EXP_CSV), $(EXP_DATA)/ch5_*)"

$(EXP_BIN): $(EXP_SRC) include/experiment.h $(B)/solutions/libkit.a
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS) -o $@ $(EXP_SRC) $(B)/solutions/libkit.a -lm

# The table goes to a file and `experiment` shows it, so that it is shown
# whether or not the run had to happen.
$(EXP_CSV): $(EXP_BIN)
	@mkdir -p $(EXP_DIR) $(EXP_DATA)
	$(EXP_BIN) $(EXP_DIR) $(EXP_DATA) > $(EXP_TABLE).tmp
	@mv $(EXP_TABLE).tmp $(EXP_TABLE)

$(DATA_STAMP): $(EXP_CSV)
