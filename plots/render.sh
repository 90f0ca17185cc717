# render.sh — draws the figures of a manifest (the lines plots/data.awk and plots/project.awk print) with gnuplot:
# each `plot` line as PNG (pngcairo) and SVG, each `skip` line a one-line note on stderr. Sourced by scripts/plot.sh
# and scripts/report.sh, which define die(). Prints the PNGs written, one a line.
#
#   render_manifest MANIFEST OUTDIR SCRATCHDIR
# Manifest lines, fields separated by the ASCII unit separator (\037, never in a name; a tab would collapse empty
# fields in `read`):
#   plot US script US output name US data file US second data file US subtitle US caption
#   skip US script US model/dataset US reason
# shellcheck shell=bash

# A gnuplot single-quoted string: only ' needs escaping (doubled).
gq() { local s=${1//\'/\'\'}; printf "'%s'" "$s"; }

render_manifest() {
    local manifest=$1 out=$2 scratch=$3 me=${0##*/}
    local kind script name data data2 subtitle caption fmt
    me=${me%.sh}
    while IFS=$'\037' read -r kind script name data data2 subtitle caption; do
        if [[ $kind == skip ]]; then
            echo "$me: skip ${script%.gp} ($name): $data" >&2
            continue
        fi
        for fmt in png svg; do
            {
                echo "fmt = $(gq "$fmt")"
                echo "out = $(gq "$out/$name")"
                echo "data = $(gq "$data")"
                echo "data2 = $(gq "$data2")"
                echo "subtitle = $(gq "$subtitle")"
                echo "caption = $(gq "$caption")"
            } >"$scratch/vars.gp"
            if ! gnuplot "$scratch/vars.gp" "$PLOTS/common.gp" "$PLOTS/$script" 2>"$scratch/gnuplot.err"; then
                cat "$scratch/gnuplot.err" >&2
                die "gnuplot failed on plots/$script for $name"
            fi
            # gnuplot warns on stderr without failing; a warning here is a script bug worth seeing
            grep -v '^$' "$scratch/gnuplot.err" >&2 || true
        done
        echo "$out/$name.png"
    done <"$manifest"
}
