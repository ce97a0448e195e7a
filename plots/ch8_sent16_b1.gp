# ch8_sent16_b1.gp: as ch8_sent16_b0.gp, for block 1 of the 16-head
# network.
blk = 1
load "plots/ch8_sent16_b0.gp"
