# acc_batch.gp — final test accuracy against the batch on one GPU, one line per strategy and math.
# Data (scaling report, report/figures.c): blocks of "batch accuracy_percent" (best over lr and seeds) under a quoted
# title line.
set title "Final test accuracy against batch size\n".subtitle
set logscale x 2
set xlabel 'batch (images, log2 scale; one learning rate for every batch)'
set ylabel 'final test accuracy (%)'
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
set key outside right top font ',9'
stats data using 1 nooutput
n = STATS_blocks
plot for [i=0:*] data index i using 1:2:xtic(1) with linespoints lt i+1 dt 1+i/10 lw lw_of(i, n) ps ps_of(i, n) \
     title columnheader(1)
