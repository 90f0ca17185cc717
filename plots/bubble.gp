# bubble.gp — (g) pipeline bubble against micro-batches per batch: measured (solid) and the ideal
# (p-1)/(M+p-1) of GPipe-style schedules (dashed), per stage count.
# Data (scaling report, report/figures.c): data = blocks of "M measured_percent", data2 = blocks of "M ideal_percent".
set title "Pipeline bubble against micro-batches\n".subtitle
set logscale x 2
set xlabel 'micro-batches per batch M (log2 scale)'
set ylabel 'bubble (% of the step a stage is idle)'
set yrange [0:100]
set offsets graph 0.04, graph 0.04, 0, 0
# one micro-batch count only (a study at one M): a range around it, not gnuplot's warning about an empty one
stats data using 1 nooutput
if (STATS_min == STATS_max) { set xrange [STATS_min / 2.0:STATS_max * 2.0] }
set key outside right top font ',9'
plot for [i=0:*] data index i using 1:2:xtic(1) with linespoints lt i+1 title columnheader(1), \
     for [i=0:*] data2 index i using 1:2 with linespoints lt i+1 dt 2 pt 6 lw 1.5 title columnheader(1)
