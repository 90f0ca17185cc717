#!/usr/bin/env bash
# dp_gpt2.sh — one device call: GPT-2 through the data-parallel strategies on the GPUs present. The GPU tests that
# touch them (test_dp_gpt2, gpu_gpt2, the GPT-2 model's, the image classifiers' data-parallel ones), then GPT-2 small
# at 16 x 1024 in bf16 on random tokens through single, naive and nccl on 1 GPU (and on every GPU present, where more
# than one), 3 runs each: tokens/s and the step's breakdown. Run from the repository root: tools/device/dp_gpt2.sh.
set -u
OUT=${OUT:-/tmp/out}
export OUT
budget=${BUDGET:-540}
source tools/device/lib.sh
device_begin --local-gpu
n_gpu=$(nvidia-smi -L | wc -l)
say "GPU tests"
step tests $(($(left) - 200)) ctest --test-dir build -L gpu -j4 --timeout 240 --output-on-failure \
    -R 'test_dp_gpt2|gpu_gpt2|test_gpt2_model|test_train_lenet|test_dp_|test_gns_dp|gpu_faults|test_graph'
grep -E "tests passed|\*\*\*Failed|Timeout|Not Run|Passed|Skipped" "$L/tests.log" | tee -a "$say_log"
speed() {   # speed STRATEGY GPUS RUN
    step "speed_$1_$2_$3" 120 build/scaling --model gpt2 --model-size small --dataset synthetic --strategy "$1" \
        --gpus "$2" --batch $((16 * $2)) --math bf16 --epochs 1 --steps 60 --seed "$3" --out "$OUT/speed.csv"
}
for r in 1 2 3; do
    for st in single naive nccl; do [ "$(left)" -gt 40 ] && speed "$st" 1 "$r"; done
    if [ "$n_gpu" -gt 1 ]; then for st in naive nccl; do [ "$(left)" -gt 40 ] && speed "$st" "$n_gpu" "$r"; done; fi
done
build/scaling tsv "$OUT/speed.csv" | awk -F'\t' -v want="strategy gpus seed status tokens_per_s step_ms compute_ms \
exposed_comm_ms comm_ms idle_ms replicas peak_mem_mb reason" 'NR == 1 { n = split(want, w, " ")
    for (i = 1; i <= NF; i++) c[$i] = i } { line = ""; for (i = 1; i <= n; i++) line = line (i > 1 ? "\t" : "") \
    (NR == 1 ? w[i] : $c[w[i]]); print line }' | tee "$OUT/speed.tsv" | tee -a "$say_log"
say "done"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$OUT/logs"
