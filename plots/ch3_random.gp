# ch3_random.gp: the layer of ch3_heads.gp with random weights
# (mha_weights_randomize, a fixed seed): without learned or built weights
# there is no structure, in one head or in four. Non-causal.
# Data: ch3_random_single.dat, ch3_random_head0..3.dat, from
# tools/plotdata/ch3.c. The drawing is ch3_heads.gp's.
prefix = "ch3_random_"
main_title = "Random weights: one head of width 16 (left) and 4 heads of width 4 (right)"
single_title = "1 head, random W_q, W_k"
array head_titles[4] = ["head 0, random", "head 1, random", "head 2, random", "head 3, random"]
load "plots/ch3_heads.gp"
