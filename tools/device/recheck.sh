#!/usr/bin/env bash
# recheck.sh — one call of a 2- to 4-GPU node after a round's fixes, from the repository root, everything under $OUT:
# the GPU tests that failed and were mended, the setup progress lines, ResNet-18 nccl on every GPU (up to 4: the
# epoch's first step), the ResNet-18 pipeline at every M beside the default study's choice, and NCCL's CTA cap, most
# important first.
#
#   OUT=/some/dir [RECHECK_BUDGET_S=420] tools/device/recheck.sh
#
# $OUT afterwards: summary.txt (printed last) and logs.tar.gz (every log and CSV).
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${RECHECK_BUDGET_S:-420}
say_log=$OUT/summary.txt
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
L=$OUT/logs
mkdir -p "$L"

say "setup"
device_setup "$L/setup.log"
nvidia-smi -L | tee -a "$OUT/summary.txt"
n=$(nvidia-smi -L | grep -c '^GPU')
((n > 4)) && n=4

# The mended tests and the one-GPU progress run side by side, a GPU each (they check values, not time).
say "test_bn_nhwc (fresh seed, and the seed that failed), test_dataset, progress on one GPU"
(CUDA_VISIBLE_DEVICES=$((0 % n)) build/tests/test_bn_nhwc >"$L/bn_fresh.log" 2>&1
 echo "test_bn_nhwc, a fresh seed: exit $?" >"$L/rc_1.txt") &
(CUDA_VISIBLE_DEVICES=$((1 % n)) build/tests/test_bn_nhwc 1883063323728358 >"$L/bn_seed.log" 2>&1
 echo "test_bn_nhwc 1883063323728358: exit $?" >"$L/rc_2.txt") &
(CUDA_VISIBLE_DEVICES=$((2 % n)) ctest --test-dir build -R '^test_dataset$' --output-on-failure >"$L/dataset.log" 2>&1
 echo "test_dataset: exit $?" >"$L/rc_3.txt") &
(CUDA_VISIBLE_DEVICES=$((3 % n)) ./scaling --model resnet50 --dataset synthetic --math bf16 --epochs 1 --steps 200 \
    --out "$L/progress1.csv" >"$L/progress1.out" 2>"$L/progress1.err"
 echo "progress, one GPU: exit $?" >"$L/rc_4.txt") &
wait
cat "$L"/rc_*.txt | tee -a "$OUT/summary.txt"
grep -h -E '^# test_bn_nhwc|^FAIL|passed, [0-9]+ failed' "$L"/bn_*.log | tee -a "$OUT/summary.txt"
grep -E '^\[run 1/1\] setup' "$L/progress1.err" | tee -a "$OUT/summary.txt"

say "ctest: test_pipeline_memory, gpu_mpi, gpu_twonode"
ctest --test-dir build -R '^(test_pipeline_memory|gpu_mpi|gpu_twonode)$' --timeout 200 --output-on-failure \
    >"$L/ctest.log" 2>&1
grep -E 'Test +#|tests passed|^FAIL|bit-identical' "$L/ctest.log" | tee -a "$OUT/summary.txt"

say "progress, nccl on 2 GPUs (cold search)"
./scaling --strategy nccl --gpus 2 --model resnet50 --dataset synthetic --math bf16 --epochs 1 --steps 200 \
    --out "$L/progress2.csv" >"$L/progress2.out" 2>"$L/progress2.err"
grep -E '^\[run 1/1\] setup' "$L/progress2.err" | tee -a "$OUT/summary.txt"

# ResNet-18 nccl on n GPUs as in results/strategies-h200x4-2026-11-28 (lr 0.025 per GPU), then the CTA cap.
r18=(--model resnet18 --dataset fashion-mnist --batch 256 --math bf16 --lr 0.025 --momentum 0.9 --epochs 4
     --conv-cache "$L/conv_r18.tsv")
say "ResNet-18: single, nccl on $n GPUs with bf16 gradients"
./scaling --strategy single "${r18[@]}" --out "$L/r18.csv" >"$L/r18_single.out" 2>&1
./scaling --strategy nccl --gpus "$n" --grad-dtype bf16 "${r18[@]}" --out "$L/r18.csv" >"$L/r18_nccl.out" 2>&1
grep -h -E '^# summary|^steps: gpu 0' "$L/r18_single.out" "$L/r18_nccl.out" | tee -a "$OUT/summary.txt"

# The default study's pipeline (ResNet-18, Fashion-MNIST, tf32, global batch 1024, lr 0.05, zb, M by its probe)
# against every M and schedule at the same batch.
if (($(left) > 90)); then
    say "ResNet-18 pipeline on $n GPUs at batch 1024: zb at M 2,4,8,16 and auto, 1f1b at 4,8"
    pipe=(--strategy pipeline --gpus "$n" --scale strong --model resnet18 --dataset fashion-mnist --batch 1024
          --lr 0.05 --math tf32 --epochs 3 --conv-cache "$L/conv_pipe.tsv" --out "$L/pipe_r18.csv")
    timeout $(($(left) - 60)) ./scaling "${pipe[@]}" --schedule zb --micro-batches auto,2,4,8,16 >"$L/pipe_zb.out" 2>&1
    timeout $(($(left) - 45)) ./scaling "${pipe[@]}" --schedule 1f1b --micro-batches 4,8 >"$L/pipe_1f1b.out" 2>&1
    grep -h '^# summary\|micro-batches auto: M' "$L"/pipe_*.out | tee -a "$OUT/summary.txt"
fi
for ctas in 4 8; do
    (($(left) > 30)) || { say "CTA cap $ctas: no time left"; continue; }
    say "ResNet-18 nccl on $n GPUs, SCALING_NCCL_CTAS=$ctas"
    SCALING_NCCL_CTAS=$ctas timeout $(($(left) - 10)) ./scaling --strategy nccl --gpus "$n" --grad-dtype bf16 \
        "${r18[@]}" --out "$L/r18_ctas$ctas.csv" >"$L/r18_ctas$ctas.out" 2>&1
    grep -h '^# summary' "$L/r18_ctas$ctas.out" | tee -a "$OUT/summary.txt"
done
say "done"
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$L"
