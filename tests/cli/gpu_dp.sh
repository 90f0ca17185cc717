#!/usr/bin/env bash
# gpu_dp.sh — the data-parallel strategies through the real command: short LeNet runs of naive and nccl on 1, 2 (and
# 4 where present) GPUs give status ok, identical replicas and communication columns in every multi-GPU row; and
# `--bench allreduce` checks every size exactly (exit 0, "Wrong values : 0 OK") and writes one CSV row per size.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 2
gpus=1,2; [ "$n_dev" -ge 4 ] && gpus=1,2,4
n_counts=$(echo "$gpus" | tr ',' '\n' | wc -l)

csv=$tmp/dp.csv
for s in naive nccl; do
    "$bin" --strategy "$s" --gpus "$gpus" --model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 \
        --epochs 2 --steps 20 --out "$csv" >"$tmp/$s.log" 2>&1
    rc=$?
    check "scaling --strategy $s --gpus $gpus exits $rc" $rc
    [ $rc -eq 0 ] || tail -n 20 "$tmp/$s.log"
done
# Columns by header name (no cell before the environment columns holds a comma in these runs).
rows=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { bad = $c["status"] != "ok"
      if ($c["gpus"] > 1) bad = bad || $c["replicas"] != "identical" || $c["comm_ms"] == "" || $c["busbw_gbs"] == "" \
                                  || $c["bytes_per_step"] == "" || $c["exposed_comm_ms"] == ""
      if ($c["strategy"] == "nccl" && $c["gpus"] > 1) bad = bad || $c["nccl_algo"] == ""
      if (bad) { print "bad row: " $0 > "/dev/stderr"; nbad++ }
      n++ }
    END { print n + 0, nbad + 0 }' "$csv" || echo "0 0")   # no CSV at all: zero rows, which the checks report
set -- $rows
check "CSV has $1 rows, want $((2 * n_counts * 2))" $([ "$1" -eq $((2 * n_counts * 2)) ]; echo $?)
check "$2 rows with a wrong status, replica check or missing communication column" $([ "$2" -eq 0 ]; echo $?)

ar=$tmp/allreduce.csv
"$bin" --bench allreduce --gpus 2 --out "$ar" >"$tmp/bench.log" 2>&1
rc=$?
check "scaling --bench allreduce --gpus 2 exits $rc" $rc
[ $rc -eq 0 ] || tail -n 30 "$tmp/bench.log"
grep -q "Wrong values : 0 OK" "$tmp/bench.log"; check "bench footer says 0 wrong" $?
lines=$(wc -l <"$ar" 2>/dev/null || echo 0)
# 17 powers of two (4 KB..256 MB) plus the reference's two odd sizes
check "bench CSV has $lines lines, want 1 + 2 strategies x 19 sizes" $([ "$lines" -eq 39 ]; echo $?)
grep -E '^#? +[0-9]+ ' "$tmp/bench.log" | head -n 3

summary
