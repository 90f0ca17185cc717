#!/usr/bin/env bash
# gpt2_scaling.sh — one call of one GPU for GPT-2 through the command: tests/cli/gpu_gpt2.sh (tiny on the corpus: the
# held-out loss falls, tokens/s, graphed = eager), then GPT-2 small on sotu in bf16 (3 epochs of 60 steps) and
# `scaling report` of its CSV (the answer in tokens/s).
#
#   OUT=/some/dir tools/device/gpt2_scaling.sh
#
# $OUT afterwards: summary.txt, steps.tsv, logs/ (each step's output), gpt2.csv and report/.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${GPT2_BUDGET_S:-480}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
device_begin --local-gpu
step gpu_gpt2 240 bash tests/cli/gpu_gpt2.sh build/scaling .
grep -E "FAIL|passed|test_loss|fused" "$L/gpu_gpt2.log" | head -n 30 | tee -a "$say_log"
step small 300 ./scaling --model gpt2 --model-size small --dataset sotu --math bf16 --epochs 3 --steps 60 \
    --out "$OUT/gpt2.csv"
grep -E "^# model|^# summary|held-out loss|error" "$L/small.log" | tee -a "$say_log"
step report 60 ./scaling report "$OUT/gpt2.csv" --out "$OUT/report"
cat "$OUT/steps.tsv" | tee -a "$say_log"
say "done"
