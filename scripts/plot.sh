#!/usr/bin/env bash
# plot.sh — renders every figure a study CSV has data for, as PNG (pngcairo) and SVG, one set per model and
# dataset; a figure without data is skipped with a one-line note on stderr. Prints the PNGs written, one a line.
#
#   scripts/plot.sh results/X.csv [OUTDIR]        (OUTDIR defaults to results/X/)
#
# Figures (plots/<name>.gp, file <name>-<model>-<dataset>.{png,svg}):
#   epoch_time  steady epoch time against GPU count, one line per strategy and batch, log2 x axis
#   speedup     speedup T1/TN and efficiency T1/(N*TN) against their ideal lines
#   throughput  images/s against the per-GPU batch, one line per strategy and GPU count
#   acc_epoch   test accuracy against epoch, one line per configuration (one figure per strategy)
#   acc_lr      final test accuracy against learning rate, one line per strategy, GPU count and batch
#   breakdown   per-step compute, exposed communication and idle time, stacked, per strategy and GPU count
#   bubble      pipeline bubble against micro-batches, measured and ideal (p-1)/(M+p-1)
# Where a model's rows hold more than one math or gradient dtype (--math, --grad-dtype lists), every line and bar
# is one precision and says which; a study in one precision draws the figures it always did.
# The CSV is read as RFC 4180 (plots/csv.awk), then only the latest complete run of each configuration is kept
# (plots/select.awk: a run killed part-way and resumed is replaced by the later run), then plots/data.awk
# aggregates (medians over steady epochs) into small .dat files for gnuplot. Needs gnuplot and POSIX tools only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PLOTS="$ROOT/plots"

die() { echo "plot: $*" >&2; exit 2; }

(($# >= 1 && $# <= 2)) || die "usage: scripts/plot.sh results/X.csv [OUTDIR]"
[[ $1 != -h && $1 != --help ]] || { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0; }
csv=$1
out=${2:-${csv%.csv}}
[[ $out != "$csv" ]] || out=$csv.plots      # a CSV named without .csv
[[ -f $csv && -r $csv ]] || die "$csv: no such file"
command -v gnuplot >/dev/null || die "gnuplot not found (scripts/setup.sh installs gnuplot-nox)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -f "$PLOTS/csv.awk" "$csv" >"$tmp/rows.tsv"
for c in run_id timestamp strategy model dataset gpus global_batch per_gpu_batch lr epoch phase epoch_s status gpu_name; do
    head -n 1 "$tmp/rows.tsv" | tr '\t' '\n' | grep -qx "$c" || die "$csv: no column $c: not a scaling results CSV"
done
(($(wc -l <"$tmp/rows.tsv") >= 2)) || die "$csv: no data rows"
awk -F'\t' -f "$PLOTS/select.awk" "$tmp/rows.tsv" "$tmp/rows.tsv" >"$tmp/selected.tsv"
awk -F'\t' -v dir="$tmp" -v src="$csv" -f "$PLOTS/lib.awk" -f "$PLOTS/data.awk" "$tmp/selected.tsv" >"$tmp/manifest"

mkdir -p "$out"
# shellcheck source=plots/render.sh
source "$PLOTS/render.sh"
render_manifest "$tmp/manifest" "$out" "$tmp" >"$tmp/pngs"
cat "$tmp/pngs"
n=$(wc -l <"$tmp/pngs")
echo "plot: $n figure(s) in $out (PNG and SVG)" >&2
