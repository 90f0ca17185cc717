#!/usr/bin/env bash
# report.sh — writes results/X/REPORT.md for a study CSV: runs scripts/plot.sh into results/X/, embeds its PNGs,
# and adds per model/dataset a summary table per strategy (best steady epoch time, speedup T1/TN, efficiency
# T1/(N*TN), final test accuracy) with a model beside the measured figures: the predicted epoch time from
# single-GPU compute plus an alpha-beta all-reduce model fitted to the all-reduce benchmark, and for the pipeline
# the bubble formula (p-1)/(M+p-1) beside the measured bubble (plots/report.awk says how); a study in several
# maths sets them side by side (epoch time, speedup, efficiency, communication share, accuracy: plots/precision.awk);
# then a projection to 1..1024 GPUs as nodes x GPUs per node, with its figure and its error at the measured points
# (plots/project.awk).
#
#   scripts/report.sh results/X.csv [--allreduce FILE] [--out DIR] [--net-allreduce FILE] [--net-gbs GBS]
#                     [--net-latency-us US] [--gpus-per-node G]
#
# --allreduce FILE:     the CSV of `./scaling --bench allreduce` (columns strategy, gpus, bytes, time_us, wrong,
#                       type ...);
#                       default results/X_allreduce.csv where present; without one the model line and the
#                       projection are omitted.
# --out DIR:            where REPORT.md and the figures go (default results/X/).
# --net-allreduce FILE: the same benchmark run over NCCL's network transport (NCCL_P2P_DISABLE=1
#                       NCCL_SHM_DISABLE=1): the projection's inter-node path; default results/X_allreduce_net.csv
#                       where present.
# --net-gbs GBS:        inter-node bandwidth per GPU in GB/s (400 Gb/s InfiniBand per GPU: 50); replaces the fit's.
# --net-latency-us US:  inter-node latency per all-reduce step in microseconds; replaces the fit's. Without a
#                       network benchmark both are needed for a projection past one node.
# --gpus-per-node G:    GPUs per node of the projected cluster, a power of two up to 1024 (default 8).
# Without gnuplot the report is still written, without figures. Needs POSIX tools only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PLOTS="$ROOT/plots"

die() { echo "report: $*" >&2; exit 2; }
usage() {
    die "usage: scripts/report.sh results/X.csv [--allreduce FILE] [--out DIR] [--net-allreduce FILE] [--net-gbs GBS]" \
        "[--net-latency-us US] [--gpus-per-node G]"
}
# A positive decimal number (no sign, no inf or nan, exponent of at most two digits), for option $1.
positive() {
    if ! [[ $2 =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]{1,2})?$ ]] ||
        ! awk -v v="$2" 'BEGIN { exit !(v > 0) }'; then
        die "$1 '$2': not a positive number"
    fi
}

csv="" bench="" out="" netbench="" net_gbs="" net_lat="" gpn=8
while (($#)); do
    case $1 in
        --allreduce) (($# >= 2)) || usage; bench=$2; shift 2 ;;
        --allreduce=*) bench=${1#--allreduce=}; shift ;;
        --out) (($# >= 2)) || usage; out=$2; shift 2 ;;
        --out=*) out=${1#--out=}; shift ;;
        --net-allreduce) (($# >= 2)) || usage; netbench=$2; shift 2 ;;
        --net-allreduce=*) netbench=${1#--net-allreduce=}; shift ;;
        --net-gbs) (($# >= 2)) || usage; positive "$1" "$2"; net_gbs=$2; shift 2 ;;
        --net-gbs=*) positive --net-gbs "${1#*=}"; net_gbs=${1#*=}; shift ;;
        --net-latency-us) (($# >= 2)) || usage; positive "$1" "$2"; net_lat=$2; shift 2 ;;
        --net-latency-us=*) positive --net-latency-us "${1#*=}"; net_lat=${1#*=}; shift ;;
        --gpus-per-node) (($# >= 2)) || usage; gpn=$2; shift 2 ;;
        --gpus-per-node=*) gpn=${1#*=}; shift ;;
        -h | --help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
netdefault="${csv%.csv}_allreduce_net.csv"
if [[ -z $netbench && -f $netdefault ]]; then netbench=$netdefault; fi
[[ -z $netbench || -r $netbench ]] || die "$netbench: no such file (--net-allreduce)"
if ! [[ $gpn =~ ^[1-9][0-9]{0,3}$ ]] || ((gpn > 1024 || (gpn & (gpn - 1)) != 0)); then
    die "--gpus-per-node '$gpn': not a power of two from 1 to 1024"
fi
if [[ -z $netbench && -n $net_gbs$net_lat && ( -z $net_gbs || -z $net_lat ) ]]; then
    die "--net-gbs and --net-latency-us go together when there is no network benchmark (--net-allreduce)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Read and checked before anything is written: a CSV that is not a study's leaves no folder behind.
awk -f "$PLOTS/csv.awk" "$csv" >"$tmp/rows.tsv"
head -n 1 "$tmp/rows.tsv" | tr '\t' '\n' | grep -qx run_id || die "$csv: no column run_id: not a scaling results CSV"
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

awk -F'\t' -f "$PLOTS/select.awk" "$tmp/rows.tsv" "$tmp/rows.tsv" >"$tmp/selected.tsv" 2>/dev/null
rows=$(($(wc -l <"$tmp/rows.tsv") - 1))
runcol=$(head -n 1 "$tmp/rows.tsv" | tr '\t' '\n' | grep -nx run_id | cut -d: -f1)
allruns=$(tail -n +2 "$tmp/rows.tsv" | cut -f"$runcol" | sort -u | wc -l)
kept=$(tail -n +2 "$tmp/selected.tsv" | cut -f"$runcol" | sort -u | wc -l)
if [[ -n $bench ]]; then awk -f "$PLOTS/csv.awk" "$bench" >"$tmp/bench.tsv"; fi
if [[ -n $netbench ]]; then awk -f "$PLOTS/csv.awk" "$netbench" >"$tmp/netbench.tsv"; fi

mkdir "$tmp/proj"
awk -F'\t' -v bench="${bench:+$tmp/bench.tsv}" -v benchsrc="$bench" -v benchdefault="$benchdefault" \
    -v figs="$tmp/figs" -v figs_note="$figs_note" -v src="$csv" -v rows="$rows" -v allruns="$allruns" \
    -v leftout=$((allruns - kept)) -v netbench="${netbench:+$tmp/netbench.tsv}" -v netsrc="$netbench" \
    -v net_gbs="$net_gbs" -v net_lat="$net_lat" -v gpn="$gpn" -v dir="$tmp/proj" \
    -v gnuplot="$([[ -z $figs_note ]] && echo 1 || echo 0)" -f "$PLOTS/lib.awk" -f "$PLOTS/fit.awk" \
    -f "$PLOTS/precision.awk" -f "$PLOTS/project.awk" -f "$PLOTS/report.awk" "$tmp/selected.tsv" >"$tmp/REPORT.md"
if [[ -s $tmp/proj/manifest ]]; then
    # shellcheck source=plots/render.sh
    source "$PLOTS/render.sh"
    render_manifest "$tmp/proj/manifest" "$out" "$tmp" >/dev/null
fi
mv -f "$tmp/REPORT.md" "$out/REPORT.md"
echo "$out/REPORT.md"
