# common.gp: every figure script loads this first (load "plots/common.gp").
# The Makefile sets
#   fmt     = "png" or "svg"
#   outfile = the file to write
#   datadir = where the reference code wrote the data
# This file chooses the terminal; the script then draws its figure.
if (!exists("fmt")) fmt = "png"
if (!exists("datadir")) datadir = "build/plots/data"
if (!exists("outfile")) outfile = "build/plots/figure." . fmt

# size_w, size_h (pixels) may be set by a script before it loads this;
# the defaults suit one heatmap.
if (!exists("size_w")) size_w = 800
if (!exists("size_h")) size_h = 700

if (fmt eq "svg") {
    set terminal svg size size_w, size_h font "DejaVu Sans,14" background rgb "white"
} else {
    set terminal pngcairo size size_w, size_h font "DejaVu Sans,13" background rgb "white"
}
set output outfile

# The kit's one colour scale for attention weights: 0 (white) to 1 (dark).
set palette defined (0 "#ffffff", 0.25 "#c6dbef", 0.5 "#6baed6", 0.75 "#2171b5", 1 "#08306b")
