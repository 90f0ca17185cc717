#!/usr/bin/env bash
# engine_profile.sh — 10 eager ResNet-50 bf16 steps (batch 256) under Nsight Systems and their per-kernel breakdown,
# for tools/device/engine.sh: where the step goes as trained, batch norm's ways as the measurement chose them.
#
#   tools/device/engine_profile.sh OUTDIR CONV_CACHE     (writes OUTDIR/kernels_resnet50_bf16.txt; SCALING: the
#                                                         binary, the repository's ./scaling by default)
set -euo pipefail
out=${1:?usage: engine_profile.sh OUTDIR CONV_CACHE} cache=${2:?usage: engine_profile.sh OUTDIR CONV_CACHE}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCALING="${SCALING:-$root/scaling}" SCALING_PROFILE_STEPS=10 PROFILE_OUT="$out/profile_resnet50_bf16" "$root/scripts/profile.sh" \
    --model resnet50 --dataset synthetic --batch 256 --math bf16 --lr 0.1 --momentum 0.9 --cuda-graph off \
    --conv-cache "$cache"
ROOT=$root
die() { echo "engine_profile: $*" >&2; exit 2; }
# shellcheck source=../../scripts/lib_nsys.sh
source "$root/scripts/lib_nsys.sh"
nsys=$(nsys_find)
nsys_libs "$nsys"
"$nsys" stats --force-export=true --format csv --report cuda_gpu_kern_sum --output "$out/kern" \
    "$out/profile_resnet50_bf16.nsys-rep" >/dev/null
kern=$(ls "$out"/kern*cuda_gpu_kern_sum*.csv | head -n 1)
python3 "$root/tools/kernel_breakdown.py" "$kern" 10 "ResNet-50 bf16 batch 256" 15 | tee "$out/kernels_resnet50_bf16.txt"
rm -f "$out/profile_resnet50_bf16.nsys-rep" "$out"/*.sqlite   # the breakdown is what comes back (size limits)
