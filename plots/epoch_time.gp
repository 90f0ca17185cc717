# epoch_time.gp — (a) steady epoch time against GPU count, one line per strategy and batch, log2 x axis.
# Data (scaling report, report/figures.c): blocks of "GPUs seconds" under a quoted title line.
set title "Steady epoch time against GPU count\n".subtitle
set logscale x 2
set xlabel 'GPUs (log2 scale; 1 GPU: the strategy single where the strategy has no 1-GPU run)'
set ylabel 'epoch time (s, median of steady epochs)'
set yrange [0:*]
set offsets graph 0.04, graph 0.04, graph 0.05, 0
# The legend stands outside the plot, so it hides no line; ticks at the GPU counts the study ran.
stats data using 1 nooutput
n = STATS_blocks
set key outside right top font ',9'
plot for [i=0:*] data index i using 1:2:xtic(1) with linespoints lt i+1 dt 1+i/10 lw lw_of(i, n) ps ps_of(i, n) \
     title columnheader(1)
