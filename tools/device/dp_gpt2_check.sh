#!/usr/bin/env bash
# dp_gpt2_check.sh — one device call after a change to GPT-2's engine or data parallelism: the GPU tests that touch
# them, the two equivalence tests' own output kept (test_dp_gpt2, test_dp_equiv, test_gpt2_model), and GPT-2 small's
# step at 16 x 1024 in bf16 (build/gpt2_bench) for its speed. Run from the repository root with OUT set.
set -u
: "${OUT:?set OUT to the directory that comes back}"
export OUT
budget=${BUDGET:-420}
source tools/device/lib.sh
device_begin --local-gpu
step tests $(($(left) - 90)) ctest --test-dir build -L gpu -j4 --timeout 240 --output-on-failure \
    -R 'gpt2|test_dp_|test_gns_dp|gpu_faults|test_train_lenet|test_graph'
grep -E "tests passed|\*\*\*Failed|Timeout|Not Run|Passed|Skipped" "$L/tests.log" | tee -a "$say_log"
for t in test_dp_gpt2 test_dp_equiv test_gpt2_model test_gpt2_linear test_gpt2_sdpa; do
    step "$t" 120 "build/tests/$t"
done
grep -hE "^(ok|FAIL|n/a)|bit-identical|params |control|[0-9]+ passed" "$L"/test_dp_gpt2.log "$L"/test_dp_equiv.log \
    | tee "$OUT/equiv.txt" | tail -40
step gpt2_bench 60 build/gpt2_bench small 16 1024 20
grep -E "^(variant|engine)" "$L/gpt2_bench.log" | tee "$OUT/engine.csv" | tee -a "$say_log"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$OUT/logs"
say done
