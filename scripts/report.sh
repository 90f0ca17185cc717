#!/usr/bin/env bash
# report.sh — writes results/X/REPORT.md for a study CSV: runs scripts/plot.sh into results/X/, embeds its PNGs,
# and adds per model/dataset a summary table per strategy (best steady epoch time, speedup T1/TN, efficiency
# T1/(N*TN), final test accuracy) with a model beside the measured figures: the predicted epoch time from
# single-GPU compute plus an alpha-beta all-reduce model fitted to the all-reduce benchmark, and for the pipeline
# the bubble formula (p-1)/(M+p-1) beside the measured bubble (plots/report.awk says how).
#
#   scripts/report.sh results/X.csv [--allreduce FILE] [--out DIR]
#
# --allreduce FILE: the CSV of `./scaling --bench allreduce` (columns strategy, gpus, bytes, time_us, wrong ...);
#                   default results/X_allreduce.csv where present; without one the model line is omitted.
# --out DIR:        where REPORT.md and the figures go (default results/X/).
# Without gnuplot the report is still written, without figures. Needs POSIX tools only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PLOTS="$ROOT/plots"

die() { echo "report: $*" >&2; exit 2; }
usage() { die "usage: scripts/report.sh results/X.csv [--allreduce FILE] [--out DIR]"; }

csv="" bench="" out=""
while (($#)); do
    case $1 in
        --allreduce) (($# >= 2)) || usage; bench=$2; shift 2 ;;
        --allreduce=*) bench=${1#--allreduce=}; shift ;;
        --out) (($# >= 2)) || usage; out=$2; shift 2 ;;
        --out=*) out=${1#--out=}; shift ;;
        -h | --help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "report: unknown option '$1'" >&2; usage ;;
        *) [[ -z $csv ]] || usage; csv=$1; shift ;;
    esac
done
[[ -n $csv ]] || usage
[[ -f $csv && -r $csv ]] || die "$csv: no such file"
out=${out:-${csv%.csv}}
[[ $out != "$csv" ]] || out=$csv.plots      # a CSV named without .csv
benchdefault="${csv%.csv}_allreduce.csv"
if [[ -z $bench && -f $benchdefault ]]; then bench=$benchdefault; fi
[[ -z $bench || -r $bench ]] || die "$bench: no such file (--allreduce)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

# Figures first: plot.sh prints the PNGs it wrote. Without gnuplot the tables still come.
figs_note=""
if command -v gnuplot >/dev/null; then
    "$ROOT/scripts/plot.sh" "$csv" "$out" >"$tmp/pngs" || die "plot.sh failed"
    sed 's|.*/||' "$tmp/pngs" >"$tmp/figs"
else
    # The figures come later from the same command, run where gnuplot is (setup.sh installs it where apt works).
    figs_note="gnuplot not found; for the figures install gnuplot-nox (scripts/setup.sh does) and run scripts/report.sh again"
    printf -v again '%q ' "${BASH_SOURCE[0]}" "$csv" --out "$out"
    echo "report: gnuplot not found: the report has no figures; for them install gnuplot-nox (scripts/setup.sh does) and run ${again% }" >&2
    : >"$tmp/figs"
fi

awk -f "$PLOTS/csv.awk" "$csv" >"$tmp/rows.tsv"
head -n 1 "$tmp/rows.tsv" | tr '\t' '\n' | grep -qx run_id || die "$csv: no column run_id: not a scaling results CSV"
awk -F'\t' -f "$PLOTS/select.awk" "$tmp/rows.tsv" "$tmp/rows.tsv" >"$tmp/selected.tsv" 2>/dev/null
rows=$(($(wc -l <"$tmp/rows.tsv") - 1))
runcol=$(head -n 1 "$tmp/rows.tsv" | tr '\t' '\n' | grep -nx run_id | cut -d: -f1)
allruns=$(tail -n +2 "$tmp/rows.tsv" | cut -f"$runcol" | sort -u | wc -l)
kept=$(tail -n +2 "$tmp/selected.tsv" | cut -f"$runcol" | sort -u | wc -l)
if [[ -n $bench ]]; then awk -f "$PLOTS/csv.awk" "$bench" >"$tmp/bench.tsv"; fi

awk -F'\t' -v bench="${bench:+$tmp/bench.tsv}" -v benchsrc="$bench" -v benchdefault="$benchdefault" \
    -v figs="$tmp/figs" -v figs_note="$figs_note" -v src="$csv" -v rows="$rows" -v allruns="$allruns" \
    -v leftout=$((allruns - kept)) -f "$PLOTS/lib.awk" -f "$PLOTS/report.awk" "$tmp/selected.tsv" >"$tmp/REPORT.md"
mv -f "$tmp/REPORT.md" "$out/REPORT.md"
echo "$out/REPORT.md"
