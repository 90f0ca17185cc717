# throughput.gp — (c) training throughput against the per-GPU batch, one line per strategy and GPU count.
# Data (scaling report, report/figures.c): blocks of "batch_per_GPU images_per_s" under a quoted title line.
set title "Throughput against per-GPU batch size\n".subtitle
set logscale x 2
set xlabel 'batch per GPU (images, log2 scale)'
set ylabel 'throughput (images/s, median of steady epochs)'
set yrange [0:*]
set format y '%.0f'
set offsets graph 0.04, graph 0.04, graph 0.05, 0
# Past 8 lines (a study in several maths or gradient dtypes) the legend would hide the data: it goes outside.
stats data using 1 nooutput
if (STATS_blocks > 8) { set key outside right top font ',9' } else { set key top left }
plot for [i=0:*] data index i using 1:2 with linespoints lt i+1 dt 1+i/10 title columnheader(1)
