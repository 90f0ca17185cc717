#!/usr/bin/env bash
# gpu_conv_cache.sh — --conv-cache through the real command: a first run searches and writes the file, a second
# run of the same command searches nothing (it says when it searched), leaves the file byte for byte as it was and
# trains to the same losses; on 2 GPUs naive and nccl (one bucket) of ResNet-18 in bf16 sharing the file also train
# to the same losses — without it their timed searches can pick different kernels, and in bf16 different roundings
# (seen on 2 H200s, 2026-11-23: results/study-bf16-h200x2-2026-11-23/README.md).
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 1
cache=$tmp/algos.tsv
losses() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%s ", $c["train_loss"] }' "$1"; }
L=(--model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --epochs 2 --steps 20 --math bf16
   --conv-cache "$cache")

"$bin" --strategy single "${L[@]}" --out "$tmp/a.csv" >"$tmp/a.log" 2>&1; rc=$?
check "first run exits $rc" $rc
grep -q -- "--conv-cache $cache: GPU 0 searched" "$tmp/a.log"; check "the first run says it searched" $?
n=$(grep -vc '^#' "$cache" 2>/dev/null)
# LeNet's second convolution; its first (one input channel, no input gradient) runs engine/layers/conv_direct.cu's
# kernels and searches nothing.
check "the file holds LeNet's one searched convolution shape: $n line(s)" "$([ "${n:-0}" -eq 1 ]; echo $?)"
cp "$cache" "$tmp/algos.before"
"$bin" --strategy single "${L[@]}" --out "$tmp/b.csv" >"$tmp/b.log" 2>&1; rc=$?
check "second run exits $rc" $rc
s=$(grep searched "$tmp/b.log"); check "the second run searched nothing${s:+: $s}" "$([ -z "$s" ]; echo $?)"
cmp -s "$cache" "$tmp/algos.before"; check "the second run left the file as it was" $?
a=$(losses "$tmp/a.csv"); b=$(losses "$tmp/b.csv")
check "same losses: '$a' and '$b'" "$([ -n "$a" ] && [ "$a" = "$b" ]; echo $?)"

if [ "$n_dev" -ge 2 ]; then
    R=(--model resnet18 --dataset fashion-mnist --data-dir "$root/data/fashion-mnist" --batch 256 --epochs 2
       --steps 20 --gpus 2 --math bf16 --conv-cache "$cache")
    "$bin" --strategy naive "${R[@]}" --out "$tmp/naive.csv" >"$tmp/naive.log" 2>&1; rc=$?
    check "naive ResNet-18 exits $rc" $rc
    grep -q "GPU 0 searched" "$tmp/naive.log"; check "naive searched ResNet-18's shapes on GPU 0" $?
    ! grep -q "GPU 1 searched" "$tmp/naive.log"; check "GPU 1 took GPU 0's choices (the same GPU model)" $?
    "$bin" --strategy nccl --bucket-mb 64 "${R[@]}" --out "$tmp/nccl.csv" >"$tmp/nccl.log" 2>&1; rc=$?
    check "nccl ResNet-18 exits $rc" $rc
    ! grep -q "searched" "$tmp/nccl.log"; check "nccl searched nothing" $?
    a=$(losses "$tmp/naive.csv"); b=$(losses "$tmp/nccl.csv")
    same=$([ -n "$a" ] && [ "$a" = "$b" ]; echo $?)
    check "naive and nccl, bf16, fp32 gradients: same losses: '$a' and '$b'" "$same"
else
    echo "note: 1 GPU: naive against nccl not run"
fi
summary
