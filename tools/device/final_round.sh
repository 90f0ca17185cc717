#!/usr/bin/env bash
# final_round.sh — one call of one GPU at the end of a round whose merges touched the engine and the strategies: GPT-2's
# tests (the whole model first), then the one-GPU suite but ResNet-50's from-scratch test and gpu_memcheck, then
# ResNet-50's alone (its algorithms are chosen by timing).
#
#   OUT=/some/dir tools/device/final_round.sh
#
# $OUT afterwards: summary.txt, logs/ (the tests' output).
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${FINAL_BUDGET_S:-560}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
device_begin --local-gpu
for t in test_gpt2_model test_gpt2_linear test_gpt2_attn; do
    step "$t" 120 "build/tests/$t"
    grep -E "^FAIL|passed|graph|n/a" "$L/$t.log" | head -n 20 | sed "s/^/$t: /" | tee -a "$say_log"
done
device_gpu_suite 5
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
say "done"
