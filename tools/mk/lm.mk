# lm.mk: chapter 8's model on a synthetic stream, for its speed.
#
#   make lm-train                     V 8192, C 64, L 2, T 64, B 16, 4 heads
#   make lm-train LM_ARGS="V C L T B h steps"
#
# Built against the reference solutions (it needs every chapter written),
# at -O2 with OpenMP, as the tests are.

LM_ARGS ?=

.PHONY: lm-train
## lm-train: train chapter 8's model on a synthetic stream; tokens/s, peak memory
lm-train: $(B)/lm/train
	$(B)/lm/train $(LM_ARGS)

$(B)/lm/train: tools/runs/lm/train.c $(B)/solutions/libkit.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(B)/solutions/libkit.a $(LDFLAGS) -lm
