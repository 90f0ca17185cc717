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
say "GPU tests: ctest -L gpu -j4 (but test_train_resnet50, gpu_memcheck)"
timeout $(($(left) - 80)) ctest --test-dir build -L gpu -j4 --timeout 300 -E 'test_train_resnet50|gpu_memcheck' \
    >"$L/gpu_tests.log" 2>&1
say "gpu tests: exit $?"
grep -E "tests passed|\*\*\*Failed|Timeout|Not Run|Passed" "$L/gpu_tests.log" | tee -a "$say_log"
cp build/Testing/Temporary/LastTest.log "$L/gpu_last.log" 2>/dev/null
say "test_train_resnet50 alone"
timeout $(($(left) - 5)) ctest --test-dir build -R test_train_resnet50 --timeout 200 --output-on-failure \
    >"$L/resnet50.log" 2>&1
say "resnet50: exit $?"
grep -E "tests passed|Failed|Timeout" "$L/resnet50.log" | tee -a "$say_log"
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
say "done"
