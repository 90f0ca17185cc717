# throughput.gp — (c) training throughput against the per-GPU batch, one line per strategy and GPU count.
# Data (scaling report, report/figures.c): blocks of "batch_per_GPU throughput" under a quoted title line; unit and
# samples name it (images/s and images, or a language model's tokens/s and sequences).
set title "Throughput against per-GPU batch size\n".subtitle
set logscale x 2
set xlabel 'batch per GPU ('.samples.', log2 scale)'
set ylabel 'throughput ('.unit.', median of steady epochs)'
set yrange [0:*]
set format y '%.0f'
set offsets graph 0.04, graph 0.04, graph 0.05, 0
# The legend stands outside the plot, so it hides no line; ticks at the batches the study ran.
stats data using 1 nooutput
n = STATS_blocks
set key outside right top font ',9'
plot for [i=0:*] data index i using 1:2:xtic(1) with linespoints lt i+1 dt 1+i/10 lw lw_of(i, n) ps ps_of(i, n) \
     title columnheader(1)
