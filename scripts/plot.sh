#!/usr/bin/env bash
# plot.sh — the figures of a study CSV, as `scaling report` draws them (with REPORT.md and one data file per figure
# beside them; doc/report.md says what each shows). Prints the PNGs, one a line.
#
#   scripts/plot.sh results/X.csv [OUTDIR]        (OUTDIR defaults to results/X/)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($# >= 1 && $# <= 2)) || { echo "plot: usage: scripts/plot.sh results/X.csv [OUTDIR]" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plot: gnuplot not found (scripts/setup.sh installs gnuplot-nox)" >&2; exit 2; }
csv=$1
out=${2:-${csv%.csv}}
[[ $out != "$csv" ]] || out=$csv.plots      # a CSV named without .csv
"$ROOT/scripts/report.sh" "$csv" --out "$out" >/dev/null
# the figures REPORT.md links, in its order
sed -n 's/^!\[[^]]*\](\([^)]*\.png\))$/\1/p' "$out/REPORT.md" | while read -r f; do echo "$out/$f"; done
