#!/usr/bin/env bash
# gpt2_profile.sh — one call of one GPU: the GPU tests changed since their last GPU run, then where GPT-2 small's
# training step goes (batch 16 x 1024, bf16) in the engine (build/gpt2_bench under Nsight Systems) and in llm.c, and
# the speed of the engine, llm.c and PyTorch at its best (tools/torch/torch_gpt2.py cgraph-bf16) in this one call.
#
#   OUT=/some/dir tools/device/gpt2_profile.sh      (carry .carry: the offline bundle, llm.c, the nsys libraries)
#   PROFILE_TESTS="test_a test_b" (the tests run first), PROFILE_OTHERS=0 (the engine only: no llm.c, no PyTorch)
#
# llm.c: tools/device/lib_llmc.sh.
# $OUT afterwards: summary.txt, engine.csv, torch.csv, llmc.txt, kernels_*.txt, logs/.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${PROFILE_BUDGET_S:-560}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUT=$(cd "$OUT" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
device_begin --local-gpu
for t in ${PROFILE_TESTS-test_gns_dp test_gpt2_model test_gpt2_attn test_gpt2_sdpa test_dataset}; do
    step "$t" 90 "build/tests/$t"
    say "$t: $(grep -cE '^FAIL' "$L/$t.log") FAIL lines, rc $(awk -v t="$t" '$1 == t { print $2 }' "$OUT/steps.tsv")"
done
step gpt2_bench 90 build/gpt2_bench small 16 1024 20
grep -E "^(variant|engine)" "$L/gpt2_bench.log" | tee "$OUT/engine.csv" | tee -a "$say_log"

# the engine's kernels: gpt2_bench runs 3 warm-up and 3 x STEPS steps eagerly, then as many graphed: 36 at STEPS 5
ROOT=$PWD
die() { say "$*"; exit 2; }
source scripts/lib_nsys.sh
nsys=$(nsys_find)
nsys_libs "$nsys" .carry/dw
prof() {    # prof NAME STEPS LABEL COMMAND...: COMMAND under nsys, its per-step kernel breakdown in kernels_NAME.txt
    local name=$1 n=$2 label=$3
    shift 3
    step "nsys_$name" 150 "$nsys" profile --trace=cuda,nvtx --cuda-graph-trace=node --force-overwrite=true \
        -o "/tmp/$name" "$@"
    "$nsys" stats --force-export=true --format csv --report cuda_gpu_kern_sum --output "/tmp/$name" \
        "/tmp/$name.nsys-rep" >/dev/null 2>&1
    python3 "$ROOT/tools/kernel_breakdown.py" "$(ls /tmp/"$name"*cuda_gpu_kern_sum*.csv | head -n 1)" "$n" "$label" 30 \
        >"$OUT/kernels_$name.txt" 2>&1
    head -n 3 "$OUT/kernels_$name.txt" | tee -a "$say_log"
}
prof engine 36 "engine GPT-2 small bf16 16x1024" build/gpt2_bench small 16 1024 5

[ "${PROFILE_OTHERS:-1}" = 1 ] || { say "done (PROFILE_OTHERS=0: neither llm.c nor PyTorch)"; exit 0; }
source tools/device/lib_llmc.sh
llmc_prepare
step llmc_build 200 "${LLMC_MAKE[@]}"
(cd "$LLMC" && step llmc 90 "${LLMC_CMD[@]}" -x 60)
llmc_median "$L/llmc.log" | tee "$OUT/llmc.txt" | tee -a "$say_log"
grep -E "num_parameters|device" "$L/llmc.log" | head -n 3 | tee -a "$say_log"
(cd "$LLMC" && prof llmc 20 "llm.c GPT-2 small bf16 16x1024 (steps 1-20)" "${LLMC_CMD[@]}" -x 20)

step torch_gpt2 $(($(left) - 15)) python3 tools/torch/torch_gpt2.py cgraph-bf16 16 30
grep -E "^(variant|cgraph)" "$L/torch_gpt2.log" | tee "$OUT/torch.csv" | tee -a "$say_log"
say "done"
