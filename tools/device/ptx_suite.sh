#!/usr/bin/env bash
# ptx_suite.sh — one call of one GPU: the build with PTX for compute_80 alone (no GPU code of any newer architecture:
# the driver compiles it for the GPU at load) through the one-GPU test suite, so nothing needs Hopper. ResNet-50's
# from-scratch test runs alone after the rest (its algorithms are picked by timing); gpu_memcheck is another call's.
#
#   OUT=/some/dir tools/device/ptx_suite.sh
#
# $OUT afterwards: summary.txt, logs.tar.gz.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${PTX_BUDGET_S:-570}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
device_begin --cuda-arch 80-virtual
./scaling --version | tee -a "$say_log"
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
{ echo "cuobjdump --list-elf build/scaling:"; "$cuobjdump" --list-elf build/scaling | sort | uniq -c | head;
  echo "cuobjdump --list-ptx build/scaling (distinct):"; "$cuobjdump" --list-ptx build/scaling | sed 's/.*\.\(sm_[0-9a-z]*\)\..*/\1/' | sort | uniq -c; } 2>&1 | tee -a "$say_log"

device_gpu_suite 10
grep -hE "^(naive|nccl).*G_|^nccl: skipped" "$L/gpu_last.log" | tee -a "$say_log"
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
say "done"
