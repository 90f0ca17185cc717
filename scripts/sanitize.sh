#!/usr/bin/env bash
# sanitize.sh — compute-sanitizer runs that are not (yet) tests: racecheck on single, memcheck on nccl and
# pipeline (2 GPUs), each on a short LeNet run, keeping the full reports. On 2 H200s (2026-11-22) all three exited
# with errors (exit 9) that were not examined yet: they may be findings in this code or tool reports on NVIDIA's
# own kernels (cuDNN for racecheck, NCCL's memory handling for memcheck). Read the logs before trusting either.
#
#   scripts/sanitize.sh [OUTDIR]      (needs ./scaling built, data/mnist, 2 GPUs for nccl/pipeline)
set -u
out=${1:-results/sanitize}
mkdir -p "$out"
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[ -x "$cs" ] || { echo "sanitize: error: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2; exit 2; }
L=(--model lenet --dataset mnist --batch 64 --epochs 2 --steps 8 --out "$out/runs.csv")
"$cs" --tool racecheck ./scaling --strategy single "${L[@]}" --steps 3 >"$out/racecheck-single.log" 2>&1
echo "racecheck single: exit $?"
"$cs" --tool memcheck ./scaling --strategy nccl --gpus 2 "${L[@]}" >"$out/memcheck-nccl.log" 2>&1
echo "memcheck nccl: exit $?"
"$cs" --tool memcheck ./scaling --strategy pipeline --gpus 2 --micro-batches 2 "${L[@]}" >"$out/memcheck-pipeline.log" 2>&1
echo "memcheck pipeline: exit $?"
grep -h -m 5 "=========" "$out"/*.log
