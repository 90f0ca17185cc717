# breakdown.gp — (f) per-step compute, exposed communication and idle time, stacked, one bar per strategy,
# GPU count, batch and link. idle = the rows' idle_ms (older CSVs: step - compute - exposed, clipped at 0).
# Data (scaling report, report/figures.c): a header line, then "label compute_ms exposed_comm_ms idle_ms" per bar.
set title "Where a training step goes\n".subtitle
set style data histograms
set style histogram rowstacked gap 1
set style fill solid 0.85 border lc rgb '#404040'
set boxwidth 0.75
set xlabel 'strategy, GPUs, batch'
set ylabel 'time per step (ms, median of steady epochs)'
set yrange [0:*]
set xtics rotate by 30 right font ',9' nomirror
set grid noxtics
# the legend above the bars (it hides none), the bars' labels and the axis label clear of the caption below
set key outside top center horizontal
set bmargin 11
plot data every ::1 using 2:xtic(1) title 'compute' lc rgb '#1f77b4', \
     '' every ::1 using 3 title 'exposed communication' lc rgb '#d62728', \
     '' every ::1 using 4 title 'idle (step - compute - exposed)' lc rgb '#c7c7c7'
