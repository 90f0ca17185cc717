# speedup.gp — (b) speedup T1/TN and efficiency T1/(N*TN) against GPU count, each beside its ideal line.
# Data (scaling report, report/figures.c): blocks of "GPUs speedup efficiency_percent" under a quoted title line.
# The panels narrow and the legend stands to their right, so it hides no line; ticks at the GPU counts the study
# ran; the efficiency axis spans the data (a 91-98 % spread is not a few pixels of 0-100 %).
stats data using 1 nooutput
n = STATS_blocks
stats data using 3 nooutput
emin = STATS_min
set multiplot layout 1,2 title "Speedup and efficiency against GPU count (T1: strategy single)\n".subtitle
set logscale x 2
set xlabel 'GPUs (log2 scale)'
set offsets graph 0.04, graph 0.04, graph 0.05, 0
set ylabel 'speedup T1/TN (x, log2 scale)'
set logscale y 2
set yrange [0.8:*]
set autoscale yfixmax
set offsets graph 0.04, graph 0.04, graph 0.08, 0
# one legend for both panels (the right one): here only the ideal line is named
set key top left
set lmargin at screen 0.07; set rmargin at screen 0.34
plot x with lines lc rgb '#000000' lw 1.5 dt 2 title 'ideal (N)', \
     for [i=0:*] data index i using 1:2:xtic(1) with linespoints lt i+1 lw lw_of(i, n) ps ps_of(i, n) notitle
unset label 99
set ylabel 'efficiency T1/(N x TN) (%)'
unset logscale y
set yrange [(emin > 10 ? 5 * floor((emin - 3) / 5) : 0):(102)]
set offsets graph 0.04, graph 0.04, 0, 0
set lmargin at screen 0.42; set rmargin at screen 0.69; set key outside right top font ',8'
plot 100 with lines lc rgb '#000000' lw 1.5 dt 2 title 'ideal (100 %)', \
     for [i=0:*] data index i using 1:3:xtic(1) with linespoints lt i+1 lw lw_of(i, n) ps ps_of(i, n) \
     title columnheader(1)
unset multiplot
