#!/usr/bin/env bash
# tools/device/fp16.sh — --math fp16 in one call of a 2- or 4-GPU node: the GPU tests it touches, ResNet-50 and
# ResNet-18 epochs in fp16 beside bf16 (images/s, the loss scale at the end, skipped steps, test accuracy), then fp16
# in the multi-GPU strategies (nccl on every GPU with fp32 and fp16 wires; the pipeline on 2 stages per schedule).
#
#   OUT=/some/dir tools/device/fp16.sh        (from the repository root; under 7 minutes: every step ends by 390 s)
#
# Steps, each logged to $OUT/logs/<step>.log, none stopping the script (each under a time limit, cut to what is left
# of 390 s; expected time):
#   setup       scripts/setup.sh --offline .carry/offline: libcsv, data, the whole build        ~40 s (limit 100)
#   tests       every GPU test fp16 touched, 8 at a time, each under ctest's timeout:         ~100 s (limit 150)
#               test_fp16_step (an overflow skips a graphed model step; loss-scaled LeNet within 16 x 2^-11 of
#               fp32), test_pipe_scale (the stages' found-inf exchange), test_loss_scale_gpu, test_layers,
#               test_dp_equiv (fp16 against single; a NaN in one shard skips every replica), test_graph,
#               test_dp_wire, test_pipeline_equiv, test_bottleneck, test_reduce_kernels, test_dp_reduce,
#               test_dp_update, test_train_lenet, test_train_resnet, test_pipeline_backward_split (zero bubble's
#               backward in two parts)
#   r50         ./scaling ResNet-50 synthetic 224^2 batch 256, 3 epochs of 100 steps, fp16 on GPU 0 and bf16 on
#               GPU 1 at the same time (one GPU each: the same model of GPU, nothing shared but the host) ~55 s (70)
#   r18         ./scaling ResNet-18 Fashion-MNIST batch 256, 3 epochs, the same way                 ~25 s (40)
#   dp          ./scaling --strategy nccl, ResNet-18 fp16, 2 epochs of 100 steps, on 2 GPUs (and 4 where there are
#               4), --grad-dtype fp32,fp16                                                      ~25 s (35)
#   pipe        ./scaling --strategy pipeline, ResNet-18 fp16 on 2 stages, 4 micro-batches, 2 epochs of 100 steps,
#               once per schedule that --help lists                                             ~30 s (40)
# The summary comes last on stdout and in $OUT/summary.txt; the logs and CSVs are in $OUT/logs.tgz.
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
mkdir -p "$OUT/logs"
source tools/device/lib.sh
: >"$OUT/steps.tsv"

# Each step's limit (lib.sh's step): N seconds, or what is left of 390 s if less (at least 5).
STEP_LIMIT() { local left=$((390 - ($(date +%s) - t0))); ((left < $1)) && echo $((left > 5 ? left : 5)) || echo "$1"; }

# pair NAME LIMIT ARGS...: ./scaling ARGS in fp16 on GPU 0 and in bf16 on GPU 1 at once, each its own CSV
pair() {
    local name=$1 lim=$2
    shift 2
    CUDA_VISIBLE_DEVICES=0 step "${name}_fp16" "$lim" ./scaling "$@" --math fp16 --out "$OUT/logs/${name}_fp16.csv" &
    CUDA_VISIBLE_DEVICES=1 step "${name}_bf16" "$lim" ./scaling "$@" --math bf16 --out "$OUT/logs/${name}_bf16.csv" &
    wait
}

step setup 100 scripts/setup.sh --offline .carry/offline
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/logs/gpu.txt" 2>&1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
dp_gpus=2
((ngpu >= 4)) && dp_gpus=2,4
step tests 150 ctest --test-dir build -j8 --timeout 140 -V -R '^(test_fp16_step|test_pipe_scale|test_loss_scale_gpu|'\
'test_layers|test_dp_equiv|test_graph|test_dp_wire|test_pipeline_equiv|test_bottleneck|test_reduce_kernels|'\
'test_dp_reduce|test_dp_update|test_train_lenet|test_train_resnet|test_pipeline_backward_split)$'
pair r50 70 --model resnet50 --dataset synthetic --batch 256 --lr 0.1 --momentum 0.9 --epochs 3 --steps 100
pair r18 40 --model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 --epochs 3
step dp 35 ./scaling --strategy nccl --gpus "$dp_gpus" --model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 \
    --momentum 0.9 --epochs 2 --steps 100 --math fp16 --grad-dtype fp32,fp16 --out "$OUT/logs/dp_fp16.csv"
# Every schedule the command offers (gpipe, 1f1b, and zb where it has landed), one CSV.
schedules=$(./scaling --help 2>&1 | sed -n '/--schedule/,/one of:/p' | sed -n 's/.*one of: *//p' | tr -d ' ')
pipe_all() {
    local rc=0 sc
    for sc in ${schedules//,/ }; do
        ./scaling --strategy pipeline --gpus 2 --model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 \
            --momentum 0.9 --epochs 2 --steps 100 --math fp16 --micro-batches 4 --schedule "$sc" \
            --out "$OUT/logs/pipe_fp16.csv" || rc=$?
    done
    return $rc
}
export -f pipe_all
export schedules OUT
step pipe 40 bash -c pipe_all

# One line per run of a CSV: model, math, strategy, GPUs, wire and schedule where they apply, images/s (the steady
# epochs' median, as `scaling report --runs` counts it), the loss scale at the last epoch's end, the steps skipped
# over all epochs, whether the replicas ended identical, the last epoch's test accuracy, the status.
table() {
    python3 - "$1" <<'PY'
import csv, os, sys
sys.path.insert(0, "tools")
import report_runs
path = sys.argv[1]
if not os.path.exists(path):
    print("  (no rows)")
    sys.exit(0)
rows = list(csv.DictReader(open(path, newline="")))
for r in report_runs.runs("./scaling", path):
    mine = [x for x in rows if x["run_id"] == r["run_id"]]
    last = mine[-1] if mine else {}
    cell = lambda k: last.get(k) or "-"
    ips = f"{float(r['images_per_s_median']):.0f}" if r["images_per_s_median"] else "-"
    skipped = sum(int(x["skipped_steps"]) for x in mine if x.get("skipped_steps"))
    print(f"  {cell('model'):9} {cell('math'):5} {cell('strategy'):8} {cell('gpus'):>2} GPUs  wire {cell('grad_dtype'):5} "
          f"schedule {cell('schedule'):6} {ips:>7} images/s  loss scale {cell('loss_scale'):>8}  skipped "
          f"{skipped if any(x.get('skipped_steps') for x in mine) else '-':>3}  replicas {cell('replicas'):9}  "
          f"test acc {r['final_test_acc'] or '-':>7}  {r['status']}")
PY
}

{
    echo "# tools/device/fp16.sh at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $ngpu x $(head -2 "$OUT/logs/gpu.txt" | tail -1)"
    echo "# step           rc  seconds"
    awk -F'\t' '{ printf "  %-14s %3s %7s\n", $1, $2, $3 }' "$OUT/steps.tsv"
    echo "# tests:"
    grep -E "Test +#[0-9]+:|tests passed|tests failed" "$OUT/logs/tests.log" | sed 's/^ */  /'
    echo "# what the fp16 tests measured:"
    grep -hE "update rel err of fp16|control: loss unscaled|scale 2\^40|NaN in GPU 1|found_inf|\[fp16\]|FAIL" \
        "$OUT/logs/tests.log" 2>/dev/null | sed 's/^[0-9]*: */  /' | head -n 60
    echo "# ResNet-50, synthetic 224x224, batch 256, 3 epochs of 100 steps (momentum 0.9), one GPU each:"
    for m in fp16 bf16; do table "$OUT/logs/r50_$m.csv"; done
    echo "# ResNet-18, Fashion-MNIST, batch 256, 3 epochs, one GPU each:"
    for m in fp16 bf16; do table "$OUT/logs/r18_$m.csv"; done
    echo "# fp16 in the strategies, ResNet-18, Fashion-MNIST, batch 256 per GPU, 2 epochs of 100 steps (momentum 0.9):"
    table "$OUT/logs/dp_fp16.csv"
    table "$OUT/logs/pipe_fp16.csv"
    echo "# total $(($(date +%s) - t0)) s"
} >"$OUT/summary.txt" 2>&1
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
