#!/usr/bin/env bash
# gpt2_final.sh — one call of one GPU at the end of a round that merged GPT-2 into the command: the one-GPU suite
# (ResNet-50's from-scratch test alone after it; gpu_memcheck apart), with llm.c building on the CPU meanwhile; then,
# the GPU otherwise idle, GPT-2 small's training step at 16 x 1024 in bf16 three ways in this one call: the engine
# (build/gpt2_bench), llm.c (tools/device/lib_llmc.sh) and PyTorch at its best (tools/torch/torch_gpt2.py cgraph-bf16).
#
#   OUT=/some/dir tools/device/gpt2_final.sh      (carry .carry: the offline bundle and llm.c)
#
# $OUT afterwards: summary.txt, engine.csv, llmc.txt, torch.csv, steps.tsv, logs.tar.gz.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${FINAL_BUDGET_S:-580}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUT=$(cd "$OUT" && pwd)
device_begin --local-gpu
source tools/device/lib_llmc.sh
llmc_prepare
"${LLMC_MAKE[@]}" >"$L/llmc_build.log" 2>&1 &
build=$!

device_gpu_suite 200

wait "$build"
say "llm.c build: exit $?"
step gpt2_bench 60 build/gpt2_bench small 16 1024 20
grep -E "^(variant|engine)" "$L/gpt2_bench.log" | tee "$OUT/engine.csv" | tee -a "$say_log"
(cd "$LLMC" && step llmc 90 "${LLMC_CMD[@]}" -x 60)
llmc_median "$L/llmc.log" | tee "$OUT/llmc.txt" | tee -a "$say_log"
step torch_gpt2 $(($(left) - 10)) python3 tools/torch/torch_gpt2.py cgraph-bf16 16 30
grep -E "^(variant|cgraph)" "$L/torch_gpt2.log" | tee "$OUT/torch.csv" | tee -a "$say_log"
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
say "done"
