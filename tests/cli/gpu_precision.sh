#!/usr/bin/env bash
# gpu_precision.sh — --math and --grad-dtype lists through the real command: a short LeNet sweep of nccl on 2 GPUs in
# tf32 and bf16 with fp32 and bf16 gradients runs a configuration's four precisions back to back, each row recording
# its math and gradient dtype and bf16 gradients reducing half the bytes of fp32 ones; single in bf16 records no
# gradient dtype; --resume skips all four, and runs only what is new when a math is added. Prints the rows as a
# table, then the summary.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 2
csv=$tmp/precision.csv
args=(--model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --epochs 2 --steps 20 --out "$csv")
sweep=(--strategy nccl --gpus 2 --math "tf32,bf16" --grad-dtype "fp32,bf16")

"$bin" "${sweep[@]}" "${args[@]}" >"$tmp/nccl.log" 2>&1; rc=$?
check "nccl, 2 maths x 2 gradient dtypes exits $rc" $rc
[ $rc -eq 0 ] || tail -n 20 "$tmp/nccl.log"
"$bin" --strategy single --math bf16 "${args[@]}" >"$tmp/single.log" 2>&1; rc=$?
check "single --math bf16 exits $rc" $rc
[ $rc -eq 0 ] || tail -n 20 "$tmp/single.log"

# The steady rows in CSV order: strategy, math, gradient dtype ("-": none), status, bytes per step ("-": none), epoch
# seconds, test accuracy
steady() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["phase"] == "steady" {
    print $c["strategy"], $c["math"], ($c["grad_dtype"] == "" ? "-" : $c["grad_dtype"]), $c["status"],
          ($c["bytes_per_step"] == "" ? "-" : $c["bytes_per_step"]), $c["epoch_s"], $c["test_acc"] }' "$csv" 2>/dev/null; }
got=$(steady | cut -d' ' -f1-4 | tr '\n' ';')
want="nccl tf32 fp32 ok;nccl tf32 bf16 ok;nccl bf16 fp32 ok;nccl bf16 bf16 ok;single bf16 - ok;"
check "steady rows in sweep order with their precision: got '$got', want '$want'" "$([ "$got" = "$want" ]; echo $?)"
# bf16 on the wire is half the bytes (the same gradient, 2 bytes an element instead of 4; 1 % left for any padding of
# the buckets)
half=$(steady | awk '$1 == "nccl" { b[$3] = $5 }
    END { d = b["fp32"] - 2 * b["bf16"]; print (b["bf16"] > 0 && d <= 0.01 * b["fp32"] && -d <= 0.01 * b["fp32"]) ? 0 : 1 }')
check "bf16 gradient rows reduce half the bytes of fp32 ones" "$half"

"$bin" "${sweep[@]}" "${args[@]}" --resume >"$tmp/resume.log" 2>&1; rc=$?
grep -q '^# 4 run(s): 0 ok, 4 skipped' "$tmp/resume.log"; check "--resume skips the four precisions (exit $rc)" $?
# a negative control: a math not yet in the CSV is run, the one already there is not
"$bin" --strategy nccl --gpus 2 --math tf32,fp32 "${args[@]}" --resume >"$tmp/resume2.log" 2>&1; rc=$?
grep -q '^# 2 run(s): 1 ok, 1 skipped' "$tmp/resume2.log"; check "--resume runs only the new fp32 math (exit $rc)" $?

printf '# %-8s %-5s %-5s %-6s %14s %8s %8s\n' strategy math grads status bytes/step epoch_s test_acc
steady | while read -r s m g st b t a; do printf '  %-8s %-5s %-5s %-6s %14s %8s %8s\n' "$s" "$m" "$g" "$st" "$b" "$t" "$a"; done
summary
