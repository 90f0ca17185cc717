# common.gp — what every figure shares: the terminal (fmt 'png': pngcairo, 'svg': svg) at W x H pixels, fonts,
# colours, grid, and the caption naming the GPU, the date and the CSV at the bottom left. scaling report sets fmt, out
# (the output path without extension; '' for stdout, where the report gives gnuplot the file it renames into place),
# subtitle and caption before this file; the figure script follows it.
# tests/cli/test_plot.sh checks the PNG size: keep it in step with W and H.
W = 1000
H = 640
if (fmt eq 'svg') {
    set terminal svg size W,H dynamic noenhanced font 'Sans,13' background rgb 'white'
} else {
    set terminal pngcairo size W,H noenhanced font 'Sans,11' background rgb 'white'
}
if (out ne '') { set output out.'.'.fmt }
set encoding utf8
# Tableau 10: distinguishable, and the same order in every figure
set linetype 1 lc rgb '#1f77b4' lw 2 pt 7 ps 1.1
set linetype 2 lc rgb '#ff7f0e' lw 2 pt 5 ps 1.1
set linetype 3 lc rgb '#2ca02c' lw 2 pt 9 ps 1.3
set linetype 4 lc rgb '#d62728' lw 2 pt 11 ps 1.3
set linetype 5 lc rgb '#9467bd' lw 2 pt 13 ps 1.3
set linetype 6 lc rgb '#8c564b' lw 2 pt 7 ps 1.1
set linetype 7 lc rgb '#e377c2' lw 2 pt 5 ps 1.1
set linetype 8 lc rgb '#7f7f7f' lw 2 pt 9 ps 1.3
set linetype 9 lc rgb '#bcbd22' lw 2 pt 11 ps 1.3
set linetype 10 lc rgb '#17becf' lw 2 pt 13 ps 1.3
set linetype cycle 10
set grid lc rgb '#e0e0e0' lw 1
set border lc rgb '#404040'
set key box lc rgb '#c0c0c0' opaque samplen 2 spacing 1.1
set bmargin 6
set label 99 caption at screen 0.01, screen 0.025 left font ',9' textcolor rgb '#505050'
# Lines that coincide must both show: the first of n lines is drawn widest with the largest markers, each later one
# narrower and smaller on top of it, so equal lines read as a thick line with nested markers (line figures use these).
lw_of(i, n) = n > 1 ? 4.5 - 3.0 * i / (n - 1) : 2
ps_of(i, n) = n > 1 ? 2.0 - 1.1 * i / (n - 1) : 1.1
