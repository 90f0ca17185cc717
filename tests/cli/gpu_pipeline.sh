#!/usr/bin/env bash
# gpu_pipeline.sh — the pipeline through the real command: short LeNet runs on 2 (and 4 where present) GPUs with
# --micro-batches 1,4 under every schedule (and eager, --cuda-graph off) give status ok and every pipeline column
# (stages, micro-batches, schedule, split, per-stage busy times and balance, bubble beside its ideal: (p-1)/(M+p-1)
# for gpipe and 1f1b, no more for zb); --micro-batches auto records the M its probes chose; a bad --split is bad
# input (one line naming it, exit 2, nothing written).
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 2
gpus=2; [ "$n_dev" -ge 4 ] && gpus=2,4
n_counts=$(echo "$gpus" | tr ',' '\n' | wc -l)
data=(--model lenet --dataset mnist --data-dir "$root/data/mnist")

csv=$tmp/pipe.csv
for sched in gpipe 1f1b zb; do
    "$bin" --strategy pipeline --gpus "$gpus" "${data[@]}" --batch 256 --scale strong --micro-batches 1,4 \
        --schedule "$sched" --epochs 2 --steps 10 --out "$csv" >"$tmp/$sched.log" 2>&1
    rc=$?
    check "scaling --strategy pipeline --schedule $sched exits $rc" $rc
    [ $rc -eq 0 ] || tail -n 20 "$tmp/$sched.log"
    grep -q "^pipeline: split 0," "$tmp/$sched.log"; check "$sched: the split is printed" $?
done
# Eager steps (no CUDA graphs): the same columns.
"$bin" --strategy pipeline --gpus 2 "${data[@]}" --batch 256 --scale strong --micro-batches 4 --schedule 1f1b \
    --cuda-graph off --epochs 2 --steps 10 --out "$csv" >"$tmp/eager.log" 2>&1
rc=$?
check "scaling --strategy pipeline --cuda-graph off exits $rc" $rc
[ $rc -eq 0 ] || tail -n 20 "$tmp/eager.log"
# The split cell holds commas: read the CSV as RFC 4180 (`scaling tsv`), columns by header name.
rows=$("$bin" tsv "$csv" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { p = $c["gpus"]; m = $c["micro_batches"]; busy = $c["stage_busy_ms"]
      bad = $c["status"] != "ok" || $c["stages"] != p || (m != 1 && m != 4) || $c["split"] !~ /^0,/ \
            || split(busy, b, ";") != p || $c["bubble"] == "" || $c["peak_mem_mb"] == "" || $c["stage_balance"] < 1
      ideal = (p - 1) / (m + p - 1)
      if ($c["schedule"] == "zb") { if ($c["bubble_ideal"] > ideal + 1e-4 || $c["bubble_ideal"] < 0) bad = 1 }
      else if ($c["bubble_ideal"] - ideal > 1e-4 || ideal - $c["bubble_ideal"] > 1e-4) bad = 1
      if (bad) { print "bad row: " $0 > "/dev/stderr"; nbad++ }
      n++ }
    END { print n + 0, nbad + 0 }')
set -- $rows
want=$((3 * n_counts * 2 * 2 + 2))   # 3 schedules x GPU counts x 2 micro-batch counts x 2 epochs, + the eager run
check "CSV has $1 rows, want $want" $([ "$1" -eq "$want" ]; echo $?)
check "$2 rows with a wrong status or pipeline column" $([ "$2" -eq 0 ]; echo $?)

# --micro-batches auto: the probes on stderr, the M chosen in the rows (a power of two from 2 dividing 256).
auto=$tmp/auto.csv
"$bin" --strategy pipeline --gpus 2 "${data[@]}" --batch 256 --scale strong --schedule zb --epochs 2 --steps 10 \
    --out "$auto" >"$tmp/auto.log" 2>&1
rc=$?
check "scaling --strategy pipeline (--micro-batches auto, the default) exits $rc" $rc
grep -q "^pipeline: --micro-batches auto: M = [0-9]* (" "$tmp/auto.log"; check "auto: the choice is printed" $?
m=$("$bin" tsv "$auto" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { print $c["micro_batches"] }' | sort -u)
case "$m" in 2|4|8|16|32) ok=0 ;; *) ok=1 ;; esac
check "auto: every row records one M chosen, got '$m'" $ok

# A split inside the model's range but not a cut point (between a projection and the batch norm that folds its
# bias): refused before any GPU is touched.
bad=$tmp/bad.csv
"$bin" --strategy pipeline --gpus 2 --model resnet18 --dataset mnist --data-dir "$root/data/mnist" --batch 64 \
    --split 14 --epochs 1 --steps 2 --out "$bad" >"$tmp/bad.log" 2>&1
rc=$?
check "a bad --split exits 2 (bad input), got $rc" $([ $rc -eq 2 ]; echo $?)
grep -q "layer 14 (s2.b0.bn2) is not a valid cut" "$tmp/bad.log"; check "bad --split message" $?
check "bad --split wrote no CSV" $([ ! -e "$bad" ]; echo $?)

summary
