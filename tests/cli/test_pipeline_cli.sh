#!/usr/bin/env bash
# test_pipeline_cli.sh — the pipeline's options through the command on CI (no GPU needed: all fail before one is
# looked for): a micro-batch count that does not divide the global batch, micro-batches or --split given to
# another strategy, a bad micro-batch list, a split for another stage count. One line, exit 2, no CSV written.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib.sh"
data=(--data-dir "$root/data/mnist" --model lenet --dataset mnist)
expect_error '--micro-batches 3 does not divide the global batch 256' --strategy pipeline --micro-batches 1,3 "${data[@]}"
expect_error '--micro-batches 8 does not divide the global batch 300 (3 GPUs, weak scaling)' \
    --strategy pipeline --gpus 2,3 --batch 100 --micro-batches 4,8 "${data[@]}"
expect_error '--micro-batches applies to --strategy pipeline only (strategy is nccl)' \
    --strategy nccl --micro-batches 2 "${data[@]}"
expect_error '--split applies to --strategy pipeline only' --strategy single --split 3 "${data[@]}"
expect_error '--micro-batches: "0" is neither auto nor a positive integer' --strategy pipeline --micro-batches 0 "${data[@]}"
expect_error '--split: "a" is not a positive integer' --strategy pipeline --split a "${data[@]}"
expect_error '--schedule: unknown schedule "zb1" (valid: gpipe, 1f1b, zb)' --strategy pipeline --schedule zb1 "${data[@]}"
expect_error '--split gives 1 stage start (2 stages) but --gpus has 4' --strategy pipeline --gpus 2,4 --split 7 \
    "${data[@]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
