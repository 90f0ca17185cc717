#!/usr/bin/env bash
# gpu_dp.sh — the data-parallel strategies through the real command: short LeNet runs of naive and nccl on 1, 2 (and
# 4 where present) GPUs give status ok, identical replicas and communication columns in every multi-GPU row; with
# --grad-dtype bf16 (where this build has the option) the same, with half the bytes per step; and `--bench
# allreduce` checks every size exactly (exit 0, "Wrong values : 0 OK") and writes one CSV row per size and wire type
# (float, bfloat16, bfloat16 with the cast: algo "+cast"), size_bytes being the bytes on the wire.
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

# A build without --grad-dtype's option parsing says so instead of failing.
if "$bin" --help 2>/dev/null | grep -q -- --grad-dtype; then
    csv16=$tmp/dp16.csv
    for s in naive nccl; do
        "$bin" --strategy "$s" --gpus 2 --grad-dtype bf16 --model lenet --dataset mnist --data-dir "$root/data/mnist" \
            --batch 64 --epochs 2 --steps 20 --out "$csv16" >"$tmp/$s.16.log" 2>&1
        rc=$?
        check "scaling --strategy $s --gpus 2 --grad-dtype bf16 exits $rc" $rc
        [ $rc -eq 0 ] || tail -n 20 "$tmp/$s.16.log"
    done
    # Every bf16 row: ok, identical replicas, and half the bytes per step of the fp32 row of its strategy and epoch.
    bad=$(awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        FILENAME == ARGV[1] { if ($c["gpus"] == 2) b32[$c["strategy"], $c["epoch"]] = $c["bytes_per_step"]; next }
        { n++; k = $c["strategy"] SUBSEP $c["epoch"]
          if ($c["status"] != "ok" || $c["replicas"] != "identical" || !(k in b32) ||
              $c["bytes_per_step"] * 2 != b32[k]) {
              print "bad bf16 row: " $0 > "/dev/stderr"; nbad++ } }
        END { if (n != 4) { print "want 4 bf16 rows, got " n + 0 > "/dev/stderr"; nbad++ }
              print nbad + 0 }' "$csv" "$csv16" || echo 1)
    check "bf16 rows: ok, identical, half the fp32 bytes per step ($bad bad)" $([ "$bad" -eq 0 ]; echo $?)
else
    echo "NOTE: this build has no --grad-dtype option: bf16 gradients through the command not tested here"
fi

ar=$tmp/allreduce.csv
"$bin" --bench allreduce --gpus 2 --out "$ar" >"$tmp/bench.log" 2>&1
rc=$?
check "scaling --bench allreduce --gpus 2 exits $rc" $rc
[ $rc -eq 0 ] || tail -n 30 "$tmp/bench.log"
grep -q "Wrong values : 0 OK" "$tmp/bench.log"; check "bench footer says 0 wrong" $?
lines=$(wc -l <"$ar" 2>/dev/null || echo 0)
# 17 powers of two (4 KB..256 MB) plus the reference's two odd sizes, for float, bfloat16 and bfloat16 +cast
check "bench CSV has $lines lines, want 1 + 2 strategies x 3 types x 19 sizes" $([ "$lines" -eq 115 ]; echo $?)
# libcsv quotes the string cells ("nccl", "Ring+cast"): drop the quotes before matching them.
kinds=$(awk -F, 'NR > 1 { gsub(/"/, ""); k = $6 ($3 ~ /\+cast$/ ? "+cast" : ""); n[$1 " " k]++
                          if ($4 != $5 * ($6 == "bfloat16" ? 2 : 4) || $11 != 0) bad++ }
                 END { for (x in n) if (n[x] == 19) ok++; print ok + 0, bad + 0 }' "$ar" 2>/dev/null || echo "0 0")
set -- $kinds
check "bench: 19 rows each of float, bfloat16, bfloat16+cast per strategy ($1 of 6)" $([ "$1" -eq 6 ]; echo $?)
check "bench: $2 rows whose size_bytes is not count x the type's size, or with wrong sums" $([ "$2" -eq 0 ]; echo $?)
grep -E '^#? +[0-9]+ ' "$tmp/bench.log" | head -n 3

summary
