# baseline.gp — the change of each configuration's images/s against a baseline study (scaling report --baseline),
# one horizontal bar each (labels stay apart however many there are): red where it fell past the threshold, which is
# the dashed line. Data (scaling report, report/baseline.c): a comment line, then "label delta_pct linetype
# -threshold" per bar.
set title "images/s against the baseline\n".subtitle
set style fill solid 0.85 border lc rgb '#404040'
set xlabel 'Δ images/s (%, medians over steady epochs and seeds; red: a regression)'
set ytics font ',8' nomirror
set yrange [*:*] reverse
set offsets 0, 0, 0.6, 0.6
set xrange [*<-1:1<*]
set grid xtics noytics
set key bottom right
set lmargin 48
set bmargin 6
plot data using (0.5 * $2):0:(0.5 * abs($2)):(0.4):3:ytic(1) with boxxyerror lc variable notitle, \
     '' using 4:0 with lines dt 2 lc rgb '#d62728' title 'regression threshold', \
     '' using (0):0 with lines lc rgb '#404040' notitle
