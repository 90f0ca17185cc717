# acc_lr.gp — (e) final test accuracy against learning rate, one line per strategy, GPU count and batch size.
# Data (scaling report, report/figures.c): blocks of "lr accuracy_percent" (median over seeds) under a quoted title line.
set title "Final test accuracy against learning rate\n".subtitle
set logscale x 2
set xlabel 'learning rate used (log2 scale; weak scaling multiplies it by the GPU count)'
set ylabel 'final test accuracy (%)'
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
set key outside right top font ',9'
# ticks at the learning rates swept; lines that coincide stay visible (common.gp's lw_of, ps_of)
stats data using 1 nooutput
n = STATS_blocks
plot for [i=0:*] data index i using 1:2:xtic(1) with linespoints lt i+1 dt 1+i/10 lw lw_of(i, n) ps ps_of(i, n) \
     title columnheader(1)
