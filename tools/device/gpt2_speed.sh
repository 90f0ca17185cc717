#!/usr/bin/env bash
# gpt2_speed.sh — one call of one GPU: GPT-2's attention and whole-model tests, then the engine's GPT-2 small training
# step (build/gpt2_bench, eager and graphed) beside PyTorch's at its best (tools/torch/torch_gpt2.py cgraph-bf16, then
# eager), batch 16 x 1024, bf16.
#
#   OUT=/some/dir tools/device/gpt2_speed.sh
#
# $OUT afterwards: summary.txt, engine.csv, torch.csv, logs/.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${SPEED_BUDGET_S:-420}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
device_begin --local-gpu
for t in test_gpt2_sdpa test_gpt2_model; do
    step "$t" 90 "build/tests/$t"
    grep -E "^FAIL|passed|engine|determin|workspace|unavailable|graph" "$L/$t.log" | head -n 20 | sed "s/^/$t: /" |
        tee -a "$say_log"
done
step gpt2_bench 90 build/gpt2_bench small 16 1024 20
grep -E "unavailable" "$L/gpt2_bench.log" | tee -a "$say_log"
grep -E "^(variant|engine)" "$L/gpt2_bench.log" | tee "$OUT/engine.csv" | tee -a "$say_log"
step torch_gpt2 $(($(left) - 20)) python3 tools/torch/torch_gpt2.py cgraph-bf16,eager-bf16 16 30
grep -E "^(variant|eager|compile|cgraph)" "$L/torch_gpt2.log" | tee "$OUT/torch.csv" | tee -a "$say_log"
tail -n 3 "$L/torch_gpt2.log" | tee -a "$say_log"
say "done"
