#!/usr/bin/env bash
# profile.sh — a short `scaling` run under Nsight Systems, capturing a few steady steps: CUDA, NVTX, cuDNN and
# cuBLAS traces, the .nsys-rep written (its path printed), then the NVTX summary (`nsys stats --report nvtx_sum`).
#
#   scripts/profile.sh <scaling options>        e.g. scripts/profile.sh --strategy nccl --gpus 4 --model resnet18
#
# The capture: scaling reads SCALING_PROFILE_STEPS=K and calls cudaProfilerStart at step 0 of epoch 2 (the first
# steady epoch) of its first run and cudaProfilerStop after K steps; nsys records only that range
# (--capture-range=cudaProfilerApi --capture-range-end=stop). The run gets `--epochs 2 --steps K+10` and its own
# CSV (<report>.csv) before your options, so yours win; give one configuration, as only the first run is captured.
#
# Environment:
#   NSYS                   nsys to use (default: nsys on the PATH, then the usual install directories)
#   SCALING                the binary (default ./scaling, then build/scaling)
#   SCALING_PROFILE_STEPS  steps captured (default 10)
#   PROFILE_OUT            report path without .nsys-rep (default results/profile/scaling-<UTC time>)
# nsys from an Nsight Compute install needs libdw.so.1 and libelf.so.1: where the system lacks them, unpack the
# Debian packages libdw1 and libelf1 into .deps/prefix (dpkg -x) and this script adds their directory to
# LD_LIBRARY_PATH (README: Profiling). Exits 2 with one line when nsys is missing or cannot start.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "profile: $*" >&2; exit 2; }
source "$ROOT/scripts/lib_nsys.sh"

if [[ ${1:-} == -h || ${1:-} == --help ]]; then sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0; fi

nsys=$(nsys_find)
nsys_libs "$nsys"

bin=$(scaling_bin)

steps=${SCALING_PROFILE_STEPS:-10}
[[ $steps =~ ^[1-9][0-9]*$ ]] || die "SCALING_PROFILE_STEPS=$steps: not a positive integer"
out=${PROFILE_OUT:-$ROOT/results/profile/scaling-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$(dirname "$out")"

echo "profile: $nsys, capturing $steps steady steps of: $bin $*" >&2
# --trace-fork-before-exec: the run is a child process scaling forks (doc/faults.md).
SCALING_PROFILE_STEPS=$steps "$nsys" profile --trace=cuda,nvtx,cudnn,cublas --capture-range=cudaProfilerApi \
    --capture-range-end=stop --force-overwrite=true --trace-fork-before-exec=true -o "$out" \
    "$bin" --epochs 2 --steps $((steps + 10)) --out "$out.csv" "$@" ||
    die "nsys profile failed (exit $?)"
[[ -f $out.nsys-rep ]] || die "no $out.nsys-rep: nothing was captured (the run must reach epoch 2)"
echo "profile: wrote $out.nsys-rep"
"$nsys" stats --report nvtx_sum "$out.nsys-rep" || die "nsys stats --report nvtx_sum failed"
