# class_report.gp: the class's named mistakes as horizontal bars, the
# commonest at the top of each chapter. Called by grade-all.sh with
# datafile (label, count), n (its lines), outfile, fmt (png or svg) and
# students.
h = 120 + 30 * (n > 0 ? n : 1)
if (fmt eq 'svg') set terminal svg size 900, h font 'Helvetica,12'; else set terminal pngcairo size 900, h font 'Helvetica,11'
set termoption noenhanced
set output outfile
set title sprintf('Named mistakes in the class (%d students)', students)
set xlabel 'students who made it'
set xrange [0:students]
set yrange [n - 0.5:-0.5]
set ytics nomirror scale 0
set xtics nomirror
set grid xtics
set style fill solid 0.85 border -1
set key off
set lmargin 60
if (n == 0) {
    set label 1 'No test named a mistake.' at graph 0.5, 0.5 center
    set yrange [0:1]
    set lmargin 10
    plot NaN
    exit
}
plot datafile using (0.5 * $2):0:(0.5 * $2):(0.4):ytic(1) with boxxyerror lc rgb '#3b75af', \
     '' using ($2 + 0.1):0:(sprintf('%d', $2)) with labels left
