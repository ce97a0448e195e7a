# common.gp: every figure script loads this first (load "plots/common.gp").
# The Makefile sets
#   fmt     = "pdf" (the only format drawn; the SVG and the PNG preview
#             are converted from the PDF, so every edition shows the
#             same drawing)
#   outfile = the file to write
#   datadir = where the reference code wrote the data
# This file chooses the terminal; the script then draws its figure.
#
# A figure is drawn at the size it is printed: set fig_w and fig_h, in
# cm, before loading this file. The book's text is 16.4 cm wide, so
# fig_w <= 16.4 (tools/checks/72-book-print.sh checks it), and then a font
# of N points in the script is N points on paper: gnuplot 5.4's pdfcairo
# prints a font of N points at N * fontscale * 4/3 points and its default
# fontscale is 0.5 (a declared 9 printed at 6), so fontscale is 0.75 here.
# Every font must be at least 7 points on paper: the check reads `font ",N"`
# and {/=N ...} in every script, and measures every glyph in the PDF
# (tools/book/fontsizes.c). The default font is 9 points; an enhanced-text subscript is
# 0.8 of its line's size, so 9 keeps it at 7.2.
# (Older scripts set size_w, size_h in pixels: 1000 px = 16 cm.)
if (!exists("fmt")) fmt = "pdf"
if (!exists("datadir")) datadir = "build/plots/data"
if (!exists("outfile")) outfile = "build/plots/figure." . fmt

if (!exists("fig_w")) fig_w = exists("size_w") ? size_w * 0.016 : 12.0
if (!exists("fig_h")) fig_h = exists("size_h") ? size_h * 0.016 : 9.0
if (!exists("font_pt")) font_pt = 9

eval sprintf("set terminal pdfcairo enhanced color size %.2fcm,%.2fcm font 'DejaVu Sans,%g' fontscale 0.75 linewidth 1.2 rounded background rgb 'white'", fig_w, fig_h, font_pt)
set output outfile

# The kit's one colour scale for attention weights: 0 (white) to 1 (dark).
set palette defined (0 "#ffffff", 0.25 "#c6dbef", 0.5 "#6baed6", 0.75 "#2171b5", 1 "#08306b")
