#!/usr/bin/env bash
# gpu_default.sh — the README's first command: `./scaling` with no options, run in a scratch folder whose data/ links
# to the checkout's. It must exit 0 and write one folder results/default-<UTC>/ holding study.csv with every run the
# plan makes for the GPUs present (6 epochs each, all ok; on one GPU the batch ladder below), REPORT.md, and the
# figures where gnuplot is (else the one-line note saying how to get them); the progress line counts runs over the
# whole study; the printed answer must be REPORT.md's answer, row for row (report/answer.c writes both from the CSV);
# with 2 or more GPUs the report has the all-reduce model and the projection. Ends with a summary: GPUs, runs, wall
# time, the answer.
set -u
bin=$1; root=$2
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac     # it runs from a scratch folder
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 1

# answer_vs_report ANSWER MD N: the printed answer fits 100 columns, and each of its compact table's rows (they start
# with blanks; cells are apart by two or more) names a row of MD's answer: its strategy (the label may end cut short,
# in "…"), GPUs and batch lead a row there; N rows at least. The printed table keeps fewer columns and the medians
# alone, so its other cells are not REPORT.md's.
answer_vs_report() {
    local n=0 line s g b wide
    # columns: characters, so UTF-8 continuation bytes (of —, ×, …) are dropped before awk counts
    wide=$(LC_ALL=C tr -d '\200-\277' <"$1" | LC_ALL=C awk '{ if (length($0) > 100) n++ } END { print n + 0 }')
    check "printed answer lines wider than 100 columns: $wide" $([ "$wide" -eq 0 ]; echo $?)
    while IFS= read -r line; do
        IFS=$'\t' read -r s g b _ < <(printf '%s' "$line" | sed -E 's/^ +//; s/ {2,}/\t/g')
        grep -F -- "| ${s%…}" "$2" | grep -qF -- " | $g | $b | "
        check "printed answer row in REPORT.md: $s, $g GPUs, batch $b" $?
        n=$((n + 1))
    done < <(grep '^   ' "$1")
    check "answer rows compared: $n, want $3 or more" $([ $n -ge "$3" ]; echo $?)
}

work=$tmp/work
mkdir -p "$work" && ln -s "$root/data" "$work/data"
t0=$(date +%s)
(cd "$work" && "$bin" >"$tmp/out" 2>"$tmp/err"); rc=$?
wall=$(($(date +%s) - t0))
check "scaling with no options exits $rc" $rc
[ $rc -eq 0 ] || tail -n 30 "$tmp/err"

dirs=$(find "$work/results" -mindepth 1 -maxdepth 1 -type d -name 'default-*' 2>/dev/null)
check "one folder results/default-* ($(echo "$dirs" | grep -c .))" $([ "$(echo "$dirs" | grep -c .)" -eq 1 ]; echo $?)
dir=$(echo "$dirs" | head -n 1)
csv=$dir/study.csv
"$bin" tsv "$csv" >"$tmp/rows.tsv" 2>/dev/null || : >"$tmp/rows.tsv"

# One GPU: the reference alone at batches 256, 1024, 4096, 60000 in tf32 and bf16, 6 epochs; a batch that does not fit is one
# oom row at setup. Every run ends ok after 6 epochs or is that row; batches up to 1024 fit any GPU of 16 GB. The answer
# names the setting soonest to the target accuracy, the largest batch that fit and what a second GPU adds.
if [ "$n_dev" -eq 1 ]; then
    set -- $(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { k = $c["run_id"]; rows[k]++; last[k] = $c["status"]; ep[k] = $c["epoch"]; b[k] = $c["global_batch"] }
        END { for (k in rows) {
                  n++; full = last[k] == "ok" && rows[k] == 6 && ep[k] == 6
                  # a large batch at the linearly scaled rate may diverge: a result, not a fault
                  if (last[k] == "oom") oom++; else if (full) ok++; else if (last[k] != "diverged" || b[k] <= 1024) bad++
                  if (full && b[k] <= 1024) small++ }
              print n + 0, ok + 0, oom + 0, bad + 0, small + 0 }' "$tmp/rows.tsv")
    check "study.csv: $1 runs (want 8): $2 ok after 6 epochs, $3 oom, $4 otherwise; $5 of the 4 up to 1024 ok" \
        $([ "${1:-0}" -eq 8 ] && [ "${4:-1}" -eq 0 ] && [ "${5:-0}" -eq 4 ]; echo $?)
    grep -q '^\[run 1/8 ' "$tmp/err"; check "the progress line counts 8 runs" $?
    md=$dir/REPORT.md
    grep -qx '### One GPU' "$md" 2>/dev/null; check "REPORT.md has its section One GPU" $?
    if command -v gnuplot >/dev/null; then
        ls "$dir"/throughput-*.png "$dir"/acc_batch-*.png >/dev/null 2>&1; check "throughput and accuracy figures" $?
    fi
    sed -n '/^# answer:/,$p' "$tmp/out" >"$tmp/answer"
    answer_vs_report "$tmp/answer" "$md" 8
    for w in '# soonest to the target per GPU count' '#   1 GPU: ' '# answer: on 1 GPU the soonest to ' \
             '# largest batch that fit: ' \
             '# a second GPU would add: '; do
        grep -q "^$w" "$tmp/answer"; check "the answer has '$w'" $?
    done
    grep -qF "# report: results/$(basename "$dir")/REPORT.md" "$tmp/answer"; check "the answer names REPORT.md" $?
    echo "# gpu_default: 1 GPU, 8 runs, ${wall} s wall (setup, up to 48 epochs, report)"
    cat "$tmp/answer"
    summary
    exit
fi

# The plan for n_dev GPUs, as README and --help say: GPU counts 1, 2, 4, ... and n_dev; single on 1 (batch 256, and
# 1024 with a pipeline); naive and nccl on every count from 2; the pipeline on those up to 8 that divide 1024.
counts=$(awk -v n="$n_dev" 'BEGIN { for (g = 1; g <= n; g = (g * 2 > n && g < n) ? n : g * 2) { printf "%d ", g; if (g == n) break } }')
multi=0; pipe=0
for g in $counts; do
    [ "$g" -ge 2 ] && multi=$((multi + 1))
    [ "$g" -ge 2 ] && [ "$g" -le 8 ] && [ $((1024 % g)) -eq 0 ] && pipe=$((pipe + 1))
done
runs=$((1 + (pipe > 0 ? 1 : 0) + 2 * multi + pipe))
set -- $(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { run[$c["run_id"]]++; n++; if ($c["status"] != "ok") bad++; if ($c["epoch"] < 1 || $c["epoch"] > 6) bad++
      s[$c["strategy"] " " $c["gpus"]] = 1 }
    END { for (r in run) { k++; if (run[r] != 6) short++ }; for (x in s) m++; print n + 0, k + 0, short + 0, bad + 0, m + 0 }' \
    "$tmp/rows.tsv")
check "study.csv: $2 runs, want $runs" $([ "${2:-0}" -eq $runs ]; echo $?)
check "study.csv: $1 rows, want $((6 * runs)); $3 run(s) without 6 epochs, $4 row(s) not ok" \
    $([ "${1:-0}" -eq $((6 * runs)) ] && [ "${3:-1}" -eq 0 ] && [ "${4:-1}" -eq 0 ]; echo $?)
check "study.csv: $5 strategy x GPU-count pairs, want $((1 + 2 * multi + pipe))" $([ "${5:-0}" -eq $((1 + 2 * multi + pipe)) ]; echo $?)
grep -q "^\[run 1/$runs " "$tmp/err" && grep -q "^\[run $runs/$runs  epoch 6/6\]" "$tmp/err"
check "the progress line counts runs over the whole study (1/$runs .. $runs/$runs)" $?

md=$dir/REPORT.md
check "REPORT.md written" $([ -s "$md" ]; echo $?)
if command -v gnuplot >/dev/null; then
    figs="$dir/speedup-*.png $dir/epoch_time-*.png"
    check "figures beside REPORT.md" $(ls $figs >/dev/null 2>&1; echo $?)
else
    grep -q '(no figures: gnuplot not found' "$md" 2>/dev/null && [ "$(grep -c 'gnuplot not found' "$tmp/err")" -eq 1 ]
    check "no gnuplot here: REPORT.md without figures, and one stderr line saying how to get them" $?
fi

# The all-reduce benchmark ran on the replicas' GPU counts into study_allreduce.csv beside the CSV, every sum right, so
# the report has its cost model and projection (neither section says "omitted").
bench=$dir/study_allreduce.csv
set -- $(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { n++; g[$c["gpus"]] = 1; if ($c["wrong"] != 0) bad++ } END { for (k in g) m++; print n + 0, m + 0, bad + 0 }' \
    "$bench" 2>/dev/null)
check "study_allreduce.csv: ${1:-0} rows over ${2:-0} GPU count(s) (want $multi), ${3:-?} wrong" \
    $([ "${1:-0}" -gt 0 ] && [ "${2:-0}" -eq $multi ] && [ "${3:-1}" -eq 0 ]; echo $?)
grep -q '^# all-reduce benchmark (for the report' "$tmp/out"; check "the benchmark is announced as its command" $?
check "REPORT.md has the all-reduce model and the projection: $(grep -c 'omitted' "$md" 2>/dev/null) 'omitted'" \
    $([ -s "$md" ] && ! grep -q 'omitted' "$md"; echo $?)

# The answer against the report: the same function (report/answer.c) wrote REPORT.md's answer and the printed one
# from the same CSV, so every printed row is a row of REPORT.md's, cell for cell: single, naive, nccl on every count,
# the pipeline where it ran.
sed -n '/^# answer:/,$p' "$tmp/out" >"$tmp/answer"
answer_vs_report "$tmp/answer" "$md" $((1 + (pipe > 0 ? 1 : 0) + 2 * multi + pipe))
grep -q "^#   $n_dev GPUs: " "$tmp/answer"; check "the answer names the soonest to the target on $n_dev GPUs" $?
grep -qE "^# answer: on $n_dev GPUs (the soonest to |no setting reached the target)" "$tmp/answer"; check "the answer's sentence is about $n_dev GPUs" $?
# The model's sections in full: its fits, the projection's row at n_dev GPUs and the error at the measured points.
grep -q '^α-β fit to ' "$md"; check "REPORT.md: the all-reduce model (α-β fits)" $?
grep -q '^#### Model error at the measured points' "$md"; check "REPORT.md: the projection and its error table" $?
grep -q "^| $n_dev | 1 × $n_dev | " "$md"; check "REPORT.md: the projection has a row at $n_dev GPUs" $?
grep -qF "# report: results/$(basename "$dir")/REPORT.md" "$tmp/answer"; check "the answer names REPORT.md" $?

echo "# gpu_default: $n_dev GPU(s), $runs runs, ${wall} s wall (setup, $((5 * runs)) epochs, report)"
cat "$tmp/answer"
summary
