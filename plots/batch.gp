# batch.gp — steps to the target accuracy against the global batch, one line per optimizer and schedule (median over
# seeds, range as error bars; the batches every seed reached), and the fit S = S_min + E_min / B (dashed) where one has
# a critical batch.
# Data (scaling report, report/batch.c): data = blocks of "batch steps_median steps_min steps_max" under a quoted
# title; data2 = blocks of "batch fitted_steps", each fit sampled, or "" where no line has one.
set title "Steps to the target against the global batch\n".subtitle
set logscale xy 2
set xlabel 'global batch B (log2 scale)'
set ylabel 'optimizer steps to the target test accuracy (log2 scale)'
set offsets graph 0.08, graph 0.08, graph 0.1, graph 0.1
set key below font ',9'
if (strlen(data2) > 0) {
    plot for [i=0:*] data index i using 1:2:3:4 with yerrorlines lt i+1 title columnheader(1), \
         for [i=0:*] data2 index i using 1:2 with lines lt i+1 dt 2 lw 1.5 title columnheader(1)
} else {
    plot for [i=0:*] data index i using 1:2:3:4 with yerrorlines lt i+1 title columnheader(1)
}
