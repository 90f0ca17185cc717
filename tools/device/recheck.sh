#!/usr/bin/env bash
# recheck.sh — one call of a 2- to 4-GPU node for what the last round changed and could not run on a GPU, from the
# repository root, most important first, everything under $OUT: the sanitizer checks its fixes concern, the GPU test
# cases written since, the pipeline's automatic M keeping its probe's split and the split chosen by simulated step,
# and the engine's ResNet-18 beside PyTorch at its best.
#
#   OUT=/some/dir [RECHECK_BUDGET_S=480] tools/device/recheck.sh
#
# $OUT afterwards: summary.txt (printed last) and logs.tar.gz (every log and CSV). The previous version of this
# script (git history, 35e5ece) rechecked the mended GPU tests: results/recheck-h200x4-2026-11-28.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${RECHECK_BUDGET_S:-480}
say_log=$OUT/summary.txt
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
L=$OUT/logs
mkdir -p "$L"

say "setup"
device_setup "$L/setup.log"
nvidia-smi -L | tee -a "$OUT/summary.txt"
n=$(nvidia-smi -L | grep -c '^GPU')
((n > 4)) && n=4

# The pipeline's peer access enabled once (memcheck pipeline and pipeline-bf16 failed on a second enable), and the
# check the last call did not reach. Two lanes on 4 GPUs: about 170 s.
if ((n >= 2)); then
    say "sanitizer: pipeline, pipeline-bf16, racecheck nccl-bf16"
    SANITIZE_ONLY='pipeline|racecheck nccl-bf16' timeout 300 scripts/sanitize.sh "$L/san" >"$L/sanitize.log" 2>&1
    echo "sanitize: exit $?" | tee -a "$OUT/summary.txt"
    grep -E '^(ok|FAIL|lane)|passed, [0-9]+ failed' "$L/sanitize.log" | tee -a "$OUT/summary.txt"
fi

# The GPU cases written after the last GPU run: single's update through CUDA graphs (test_dp_update), the split
# loss-scale check (test_loss_scale_gpu), the 2-byte gradient buffer's failed allocation (test_oom).
if (($(left) > 200)); then
    say "GPU tests: test_dp_update, test_loss_scale_gpu, test_oom"
    for t in test_dp_update test_loss_scale_gpu test_oom; do
        timeout 150 "build/tests/$t" >"$L/$t.log" 2>&1
        echo "$t: exit $?; $(tail -n 1 "$L/$t.log")" | tee -a "$OUT/summary.txt"
        grep '^FAIL' "$L/$t.log" | head -n 5 | tee -a "$OUT/summary.txt"
    done
fi

# --micro-batches auto runs the split its winning probe balanced: the probe's split line and the run's must agree,
# the run's saying "balanced by its probe". Then M = 4 with the split chosen by balance (the default) and by the
# simulated step (SCALING_PIPE_SPLIT=step): the split lines give both candidates' simulated steps, the summaries
# what each ran at.
if ((n >= 2 && $(left) > 150)); then
    pipe=(--strategy pipeline --gpus "$n" --scale strong --model resnet18 --dataset fashion-mnist --batch 1024
          --lr 0.05 --math tf32 --epochs 3 --schedule zb)
    say "ResNet-18 pipeline on $n GPUs, zb, M auto (the default study's configuration), then M = 4 by balance and step"
    timeout 120 ./scaling "${pipe[@]}" --out "$L/pipe_auto.csv" >"$L/pipe_auto.out" 2>&1
    timeout 60 ./scaling "${pipe[@]}" --micro-batches 4 --out "$L/pipe_m4.csv" >"$L/pipe_m4.out" 2>&1
    SCALING_PIPE_SPLIT=step timeout 60 ./scaling "${pipe[@]}" --micro-batches 4 --out "$L/pipe_m4_step.csv" \
        >"$L/pipe_m4_step.out" 2>&1
    for f in pipe_auto pipe_m4 pipe_m4_step; do
        echo "-- $f" | tee -a "$OUT/summary.txt"
        grep -E '^pipeline: (split|--micro-batches auto)|^# summary' "$L/$f.out" | tee -a "$OUT/summary.txt"
    done
fi

# The engine's ResNet-18 (the update now reads bf16 filter gradients) beside torch_fast.py's best in the same call.
if (($(left) > 150)); then
    say "ResNet-18 bf16 and tf32 against torch_fast.py cgraph-bf16"
    TORCH_VARIANTS=cgraph-bf16 timeout $(($(left) - 20)) tools/bench_engine.sh "$L/engine" tools/torch/torch_fast.py 5 \
        >"$L/engine.log" 2>&1
    echo "bench_engine: exit $?" | tee -a "$OUT/summary.txt"
    [ -f "$L/engine/summary.txt" ] && tee -a "$OUT/summary.txt" <"$L/engine/summary.txt"
fi
say "done"
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$L"
