CH_FILES_6 := ch1_attention ch2_causal ch3_mha ch6_decode
