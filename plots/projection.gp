# projection.gp — the report's projection: speedup and efficiency against GPU count, 1 to 1024 (log2 x), the
# model's curves (lines, data) under the measured points (data2: a block per curve in the same order, untitled,
# then a titled block per run across nodes). The caption holds the model's assumptions; '\n' in it breaks a line.
# Data (scaling report, report/project.c): blocks of "GPUs speedup efficiency_percent" under a quoted title line.
set bmargin 10
nl(s) = (p_ = strstrt(s, '\n'), p_ ? s[1:p_-1]."\n".nl(s[p_+2:]) : s)
set label 99 nl(caption) at screen 0.01, screen 0.1 left font ',9' textcolor rgb '#505050'
set multiplot layout 1,2 \
    title "Projected speedup and efficiency past this host (lines: model, points: measured)\n".subtitle
set logscale x 2
set xrange [0.8:1300]
set xlabel 'GPUs (log2 scale)'
set ylabel 'speedup (x, log2 scale)'
set logscale y 2
set yrange [0.5:*]
set key top left
plot x with lines lc rgb '#000000' lw 1.5 dt 2 title 'ideal (N)', \
     for [i=0:*] data index i using 1:2 with lines lt i+1 notitle, \
     for [i=0:*] data2 index i using 1:2 with points lt i+1 pt 7 ps 1.4 notitle
unset label 99
set ylabel 'efficiency (%)'
unset logscale y
set yrange [0:110]
set key bottom left font ',9'
plot 100 with lines lc rgb '#000000' lw 1.5 dt 2 title 'ideal (100 %)', \
     for [i=0:*] data index i using 1:3 with lines lt i+1 title columnheader(1), \
     for [i=0:*] data2 index i using 1:3 with points lt i+1 pt 7 ps 1.4 title columnheader(1)
unset multiplot
