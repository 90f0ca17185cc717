#!/usr/bin/env bash
# gpt2_kernels.sh — one call of one GPU for GPT-2's kernels (embedding, LayerNorm, GELU, cross-entropy, the cuBLASLt
# linear layer, the plain attention, AdamW: each against its CPU double reference; the whole model) and the noise scale's GPU tests
# (test_schedule, with its fp16 case, and test_gns_dp).
#
#   OUT=/some/dir tools/device/gpt2_kernels.sh
#
# $OUT afterwards: summary.txt, logs/ (each test's output).
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${GPT2_BUDGET_S:-300}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
device_begin --local-gpu
for t in test_gpt2_kernels test_gpt2_linear test_gpt2_attn test_gpt2_adamw test_gpt2_model test_schedule test_gns_dp; do
    step "$t" 120 "build/tests/$t"
    grep -E "FAIL|passed|fused|fallback|epilogue|noise|G_|overflow" "$L/$t.log" | head -n 40 | sed "s/^/$t: /" |
        tee -a "$say_log"
done
cat "$OUT/steps.tsv" | tee -a "$say_log"
say "done"
