# chapters.mk: which student files each chapter's tests link against.
#
# One line per chapter N: CH_FILES_N := the basenames of the files in
# starter/ (or solutions/) that tests/test_chN.c, and the given code it
# uses, call. `make test CH=N` compiles and links only these, so a file
# that does not compile (or has warnings) never stops a chapter that does
# not need it. A new chapter adds its line here and tests/test_chN.c;
# the Makefile derives everything else from the two.
#
# A chapter whose tests live in another file says so in a line
# CH_TEST_N := basename (in tests/). Chapter 9 is chapter 8's model,
# for development, until its tests are folded into tests/test_ch8.c.
CH_FILES_1 := ch1_attention
CH_FILES_2 := ch1_attention ch2_causal
CH_FILES_3 := ch1_attention ch2_causal ch3_mha
CH_FILES_4 := ch1_attention ch2_causal ch3_mha ch4_grad
CH_FILES_5 := ch1_attention ch2_causal ch3_mha ch4_grad
CH_FILES_6 := ch1_attention ch2_causal ch3_mha ch6_decode
CH_FILES_7 := ch1_attention ch2_causal ch3_mha ch7_fast
CH_FILES_9 := ch1_attention ch2_causal ch3_mha ch4_grad ch7_fast ch8_lm
CH_TEST_9 := test_ch8_model
CH_FILES_8 := ch1_attention ch2_causal ch3_mha ch4_grad ch7_fast
