#!/usr/bin/env bash
# gpu_imagenet.sh — the ImageNet models through the real command in every strategy: ResNet-50 on the generated
# synthetic set (at 64x64, a few steps) on single and, with 2 GPUs, naive, nccl and pipeline (balanced and a hand
# split at a block boundary); ResNet-101 on 2 pipeline stages; ResNet-50 on Fashion-MNIST resized to 64. Every row
# ok; synthetic rows say so and leave both accuracy cells empty, the Fashion-MNIST row has them.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 1
csv=$tmp/imagenet.csv
syn=(--dataset synthetic --image-size 64 --batch 32 --epochs 2 --steps 4 --out "$csv")
run single-bf16 --model resnet50 --math bf16 "${syn[@]}"
run single-tf32 --model resnet50 --math tf32 --cuda-graph off "${syn[@]}"
grep -q '^# model resnet50: .* GFLOP per image.*; 25557032 parameters, 109 layers, input 3x64x64, 1000 classes' \
    "$tmp/single-bf16.log"
check "the model line: torchvision's parameter count, 109 layers, the input" $?
want=4
if [ "$n_dev" -ge 2 ]; then
    run naive --model resnet50 --strategy naive --gpus 2 "${syn[@]}"
    run nccl --model resnet50 --strategy nccl --gpus 2 --math bf16 "${syn[@]}"
    run pipeline --model resnet50 --strategy pipeline --gpus 2 --micro-batches 4 --schedule 1f1b "${syn[@]}"
    run pipeline-split --model resnet50 --strategy pipeline --gpus 2 --split 49 "${syn[@]}"   # s3.b0.conv1
    grep -q "^pipeline: split 0,49 of resnet50 at micro-batch [0-9]* (--split)" "$tmp/pipeline-split.log"; check "the hand split is used" $?
    run pipeline-r101 --model resnet101 --strategy pipeline --gpus 2 --batch 16 --dataset synthetic --image-size 64 \
        --epochs 2 --steps 4 --out "$csv"
    want=$((want + 10))
else
    echo "(1 GPU: naive, nccl and pipeline not run)"
fi
# Synthetic rows: ok, dataset synthetic, no accuracy.
bad=$("$bin" tsv "$csv" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { if ($c["status"] != "ok" || $c["dataset"] != "synthetic" || $c["train_acc"] != "" || $c["test_acc"] != "" \
          || $c["images_per_s"] == "") { print "bad row: " $0 > "/dev/stderr"; nbad++ }; n++ }
    END { print n + 0, nbad + 0 }')
set -- $bad
[ "$1" -eq "$want" ] && [ "$2" -eq 0 ]; check "synthetic rows: $1 (want $want), $2 bad" $?
# Real data resized on the GPU: accuracy cells filled.
fm=$tmp/fmnist.csv
run fmnist --model resnet50 --dataset fashion-mnist --data-dir "$root/data/fashion-mnist" --image-size 64 --batch 64 \
    --epochs 1 --steps 20 --out "$fm"
acc=$("$bin" tsv "$fm" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { print $c["status"], $c["test_acc"] }')
set -- $acc
[ "${1:-}" = ok ] && [ -n "${2:-}" ]; check "Fashion-MNIST at 64: status ${1:-none}, test_acc ${2:-empty}" $?
summary
