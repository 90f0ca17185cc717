#!/usr/bin/env bash
# tools/device/engine.sh — the engine's GPU round in one call of the GPU machine: batch norm's kernels tested and
# measured at ResNet's shapes, then ResNet-50 and ResNet-18 epochs beside PyTorch's best in the same call.
#
#   OUT=/some/dir tools/device/engine.sh        (from the repository root, on the GPU node; 6-8 minutes)
#
# Steps, each logged to $OUT/logs/<step>.log, none stopping the script (each has a time limit; expected time):
#   setup       scripts/setup.sh --offline .carry/offline: libcsv, data, the whole build       ~40 s (limit 300)
#   tests       ctest test_bn_nhwc (every way x fp32/bf16/fp16 x fuse x tails vs the CPU      ~70 s (limit 180)
#               double reference), test_bottleneck (a ResNet block through the bn layer's
#               measured choice), test_loss_scale_gpu (fp16 scaling on the device: skip, halve, grow, graph)
#   bn_r50_bf16, bn_r18_bf16: build/bn_bench, bytes and measured ceiling per shape, every   ~60 + 15 s (120, 40)
#               version checked against the CPU reference and timed
#   probe_fused build/probe_fused: cuDNN's fused conv + BN (fp16) vs our passes + the conv  ~40 s (limit 100)
#   r50_bf16    ./scaling ResNet-50 synthetic 224^2 batch 256 bf16, 3 epochs of 40 steps       ~45 s (limit 150)
#   r18_bf16    ./scaling ResNet-18 Fashion-MNIST batch 256 bf16, 3 epochs                   ~20 s (limit 90)
# then, each only while the call is young enough (the summary says which were skipped; nothing starts past 390 s,
# so the call ends by about 480 s):
#   profile_r50 10 eager ResNet-50 bf16 steps under Nsight Systems, kernel by kernel      ~50 s (under 300 s)
#               (tools/device/engine_profile.sh: the batch norms' share of the step as trained)
#   torch_r50   tools/torch/torch_imagenet.py resnet50 256 cgraph-bf16 (torch.compile ~1 min)  ~90 s (under 330 s)
#   bn_r50_fp32, bn_r50_fp16: build/bn_bench in fp32 (unchecked) and fp16                 ~40 + 50 s (under 380, 390)
# The summary table comes last on stdout and in $OUT/summary.txt; every log is in $OUT/logs.tgz.
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
mkdir -p "$OUT/logs"
source "tools/device/lib.sh"
: >"$OUT/steps.tsv"

# run_if AT NAME LIMIT CMD...: the step only while the call is under AT seconds (the lower priorities last)
run_if() {
    local at=$1
    shift
    if (($(date +%s) - t0 < at)); then step "$@"
    else printf '%s\tskipped (call at %s s)\t0\n' "$1" "$(($(date +%s) - t0))" >>"$OUT/steps.tsv"; fi
}

step setup 300 scripts/setup.sh --offline .carry/offline
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv >"$OUT/logs/gpu.txt" 2>&1
step tests 180 ctest --test-dir build -R '^(test_bn_nhwc|test_bottleneck|test_loss_scale_gpu)$' --output-on-failure
step bn_r50_bf16 120 build/bn_bench resnet50 bf16 --reps 15
step bn_r18_bf16 40 build/bn_bench resnet18 bf16 --reps 15
step probe_fused 100 build/probe_fused --max-cfgs 4 --iters 10
cache="$OUT/logs/conv_algos.tsv"
step r50_bf16 150 ./scaling --model resnet50 --dataset synthetic --batch 256 --math bf16 --lr 0.1 --momentum 0.9 \
    --epochs 3 --steps 40 --conv-cache "$cache" --out "$OUT/logs/ours.csv"
step r18_bf16 90 ./scaling --model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 --epochs 3 --math bf16 \
    --conv-cache "$cache" --out "$OUT/logs/ours.csv"
run_if 300 profile_r50 100 tools/device/engine_profile.sh "$OUT/logs" "$cache"
run_if 330 torch_r50 150 python3 tools/torch/torch_imagenet.py resnet50 256 cgraph-bf16 40
run_if 380 bn_r50_fp32 100 build/bn_bench resnet50 fp32 --reps 10 --no-check
run_if 390 bn_r50_fp16 90 build/bn_bench resnet50 fp16 --reps 10

{
    echo "# tools/device/engine.sh at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(head -2 "$OUT/logs/gpu.txt" | tail -1)"
    echo "# step           rc  seconds"
    awk -F'\t' '{ printf "  %-14s %3s %7s\n", $1, $2, $3 }' "$OUT/steps.tsv"
    echo "# tests:"
    grep -E "tests passed|tests failed|Passed|Failed|\*\*\*" "$OUT/logs/tests.log" | sed 's/^/  /' | tail -n 6
    for b in bn_r50_bf16 bn_r18_bf16 bn_r50_fp32 bn_r50_fp16; do
        echo "# $b (cold us forward + backward; ring's stats and backward GB/s):"
        sed -n '/^# summary/,$p' "$OUT/logs/$b.log" | sed 's/^/  /'
    done
    echo "# probe_fused (us a call; ratio < 1: the fused engine wins):"
    sed -n '/^# summary/,$p' "$OUT/logs/probe_fused.log" | sed 's/^/  /'
    echo "# epochs (ours: steady medians, scaling report --runs):"
    if [ -s "$OUT/logs/ours.csv" ]; then
        python3 tools/report_runs.py ./scaling "$OUT/logs/ours.csv" images_per_s_median last model=resnet50 |
            sed 's/^/  resnet50 bf16 images\/s: /'
        python3 tools/report_runs.py ./scaling "$OUT/logs/ours.csv" epoch_s_median last model=resnet18 |
            sed 's/^/  resnet18 bf16 s\/epoch: /'
    fi
    [ -s "$OUT/logs/torch_r50.log" ] && sed 's/^/  torch: /' "$OUT/logs/torch_r50.log" | grep -v Warning | tail -n 3
    echo "# ResNet-50 bf16 step, kernel by kernel (Nsight Systems, eager):"
    [ -s "$OUT/logs/kernels_resnet50_bf16.txt" ] && head -n 24 "$OUT/logs/kernels_resnet50_bf16.txt" | sed 's/^/  /'
    echo "# bn choices the engine measured (algorithm cache lines with -1 in the k slot):"
    [ -s "$cache" ] && awk -F'\t' '{ split($2, k, " "); if (k[5] == -1) print "  " $2 "\t" $3 }' "$cache" | head -n 40
    echo "# total $(($(date +%s) - t0)) s"
} >"$OUT/summary.txt" 2>&1
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
