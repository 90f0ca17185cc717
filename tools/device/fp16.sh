#!/usr/bin/env bash
# tools/device/fp16.sh — --math fp16 in one call of a 2-GPU node: the GPU tests it touches, then ResNet-50 and
# ResNet-18 epochs in fp16 beside bf16 (images/s, the loss scale at the end, skipped steps, test accuracy).
#
#   OUT=/some/dir tools/device/fp16.sh        (from the repository root; about 4 minutes, every step ends by 290 s)
#
# Steps, each logged to $OUT/logs/<step>.log, none stopping the script (each under a time limit, cut to what is left
# of 290 s; expected time):
#   setup       scripts/setup.sh --offline .carry/offline: libcsv, data, the whole build        ~40 s (limit 100)
#   tests       every GPU test fp16 touched, 8 at a time, each under ctest's timeout:         ~100 s (limit 125)
#               test_fp16_step (an overflow skips a graphed model step; loss-scaled LeNet within 16 x 2^-11 of
#               fp32), test_pipe_scale (the stages' found-inf exchange), test_loss_scale_gpu, test_layers,
#               test_dp_equiv (fp16 against single; a NaN in one shard skips every replica), test_graph,
#               test_dp_wire, test_pipeline_equiv, test_bottleneck, test_reduce_kernels, test_dp_reduce,
#               test_dp_update, test_train_lenet, test_train_resnet
#   r50         ./scaling ResNet-50 synthetic 224^2 batch 256, 3 epochs of 100 steps, fp16 on GPU 0 and bf16 on
#               GPU 1 at the same time (one GPU each: the same model of GPU, nothing shared but the host) ~55 s (80)
#   r18         ./scaling ResNet-18 Fashion-MNIST batch 256, 3 epochs, the same way                 ~25 s (45)
# The summary comes last on stdout and in $OUT/summary.txt; the logs and CSVs are in $OUT/logs.tgz.
set -uo pipefail
: "${OUT:?set OUT to the folder whose files come back}"
export NCCL_NVLS_ENABLE=0
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
mkdir -p "$OUT/logs"
t0=$(date +%s)
: >"$OUT/steps.tsv"

# limit N: N seconds, or what is left of 290 s if less (at least 5)
limit() { local left=$((290 - ($(date +%s) - t0))); ((left < $1)) && echo $((left > 5 ? left : 5)) || echo "$1"; }

step() {   # NAME LIMIT_S COMMAND...: runs it under a limit, logs it, records rc and seconds
    local name=$1 lim s rc
    lim=$(limit "$2")
    shift 2
    s=$(date +%s)
    echo "== $name (limit ${lim} s, at $((s - t0)) s): $*"
    timeout --kill-after=5 "$lim" "$@" >"$OUT/logs/$name.log" 2>&1
    rc=$?
    printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - s))" >>"$OUT/steps.tsv"
    tail -n 3 "$OUT/logs/$name.log"
}

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
step tests 125 ctest --test-dir build -j8 --timeout 115 -V -R '^(test_fp16_step|test_pipe_scale|test_loss_scale_gpu|'\
'test_layers|test_dp_equiv|test_graph|test_dp_wire|test_pipeline_equiv|test_bottleneck|test_reduce_kernels|'\
'test_dp_reduce|test_dp_update|test_train_lenet|test_train_resnet)$'
pair r50 80 --model resnet50 --dataset synthetic --batch 256 --lr 0.1 --momentum 0.9 --epochs 3 --steps 100
pair r18 45 --model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 --epochs 3

# One line per run of a CSV: images/s (the steady epochs' median, as `scaling report --runs` counts it), the loss
# scale at the last epoch's end, the steps skipped over all epochs, the last epoch's test accuracy.
runs_table() {
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
    skipped = sum(int(x["skipped_steps"]) for x in mine if x.get("skipped_steps"))
    scale = last.get("loss_scale") or "-"
    print(f"  {r['model']:9} {r['math']:5} {r['images_per_s_median'] or '-':>10} images/s  loss scale {scale:>8}  "
          f"skipped {skipped if any(x.get('skipped_steps') for x in mine) else '-':>3}  test acc "
          f"{r['final_test_acc'] or '-':>7}  {r['status']}")
PY
}

{
    echo "# tools/device/fp16.sh at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(head -2 "$OUT/logs/gpu.txt" | tail -1)"
    echo "# step           rc  seconds"
    awk -F'\t' '{ printf "  %-14s %3s %7s\n", $1, $2, $3 }' "$OUT/steps.tsv"
    echo "# tests:"
    grep -E "Test +#[0-9]+:|tests passed|tests failed" "$OUT/logs/tests.log" | sed 's/^ */  /'
    echo "# what the fp16 tests measured:"
    grep -hE "update rel err of fp16|control: loss unscaled|scale 2\^40|NaN in GPU 1|found_inf|FAIL" \
        "$OUT/logs/tests.log" 2>/dev/null | sed 's/^[0-9]*: */  /' | head -n 30
    echo "# ResNet-50, synthetic 224x224, batch 256, 3 epochs of 100 steps (momentum 0.9), one GPU each:"
    for m in fp16 bf16; do runs_table "$OUT/logs/r50_$m.csv"; done
    echo "# ResNet-18, Fashion-MNIST, batch 256, 3 epochs, one GPU each:"
    for m in fp16 bf16; do runs_table "$OUT/logs/r18_$m.csv"; done
    echo "# total $(($(date +%s) - t0)) s"
} >"$OUT/summary.txt" 2>&1
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
cat "$OUT/summary.txt"
