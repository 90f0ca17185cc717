#!/usr/bin/env bash
# gpt2_pipe.sh — one call of one GPU for GPT-2's pipeline stages and the held-out diagnosis: the engine's stage model
# (test_gpt2_stage), the pipeline strategy against single (test_pipeline_gpt2, stages sharing GPU 0 where there is one),
# the repeatability test and its gather diagnosis on the corpus, then the GPU tests this round's changes touch (GPT-2,
# data parallel, pipeline, the command's GPT-2 runs). Run from the repository root with OUT set.
#
# $OUT afterwards: summary.txt, steps.tsv, logs.tgz.
set -u
source tools/device/lib.sh   # OUT required, budget BUDGET or 585
device_begin --local-gpu
for t in test_gpt2_stage test_pipeline_gpt2; do
    step "$t" 120 "build/tests/$t"
    grep -E "stages|control|zero bubble|passed|FAIL" "$L/$t.log" | tee -a "$say_log"
done
step gather 120 build/tests/test_gpt2_repeat 5 1 data/sotu gather
grep -E "^(stray|gather):" "$L/gather.log" | tee -a "$say_log"
step repeat 120 build/tests/test_gpt2_repeat 11 100
grep -E "differ|passed|FAIL" "$L/repeat.log" | tail -12 | tee -a "$say_log"
say "GPU tests: GPT-2, data parallel, pipeline"
timeout $(($(left) - 30)) ctest --test-dir build -L gpu -j4 --timeout 200 --output-on-failure \
    -R 'gpt2|test_dp_|pipeline|pipe_|gpu_trace' -E 'test_gpt2_stage|test_pipeline_gpt2|test_gpt2_repeat' \
    >"$L/gpu_tests.log" 2>&1
say "gpu tests: exit $?"
grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$L/gpu_tests.log" | tee -a "$say_log"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$OUT/logs"
say done
