CH_FILES_7 := ch1_attention ch2_causal ch3_mha ch7_fast
