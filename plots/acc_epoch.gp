# acc_epoch.gp — (d) test accuracy against epoch, one line per configuration of one strategy.
# Data (scaling report, report/figures.c): blocks of "epoch accuracy_percent" under a quoted title line.
set title "Test accuracy against epoch\n".subtitle
set xlabel 'epoch (1 = warmup)'
set ylabel 'test accuracy (%)'
set xtics 1
set autoscale xfix
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
set key outside right top font ',9'
stats data using 1 nooutput
n = STATS_blocks
plot for [i=0:*] data index i using 1:2 with linespoints lt i+1 dt 1+i/10 lw lw_of(i, n) ps ps_of(i, n) \
     title columnheader(1)
