#!/usr/bin/env bash
# bench_engine.sh — the engine's one-GPU speed against PyTorch at its best, in one call: ResNet-18 on Fashion-MNIST
# (batch 256, lr 0.1) in bf16 and tf32 and LeNet on MNIST (batch 64), beside torch_fast.py's variants.
#
#   tools/bench_engine.sh OUTDIR TORCH_FAST [EPOCHS]      (SCALING_BINS="label=path ..." compares builds)
#
# TORCH_FAST is tools/torch/torch_fast.py (cgraph-bf16 = torch.compile + whole-step CUDA graph, graph-bf16,
# eager-bf16; cgraph-tf32 and graph-tf32 for the tf32 runs; TORCH_VARIANTS overrides the list); skipped when absent
# or without torch. SCALING_BINS defaults to "ours=./scaling": several builds of
# the engine (before/after a change) run in the same call, each in bf16 and tf32. MEMORY=1 adds the peak device
# memory of ResNet-18 at batch 64, 256 and 1024 in tf32 and bf16 (one epoch each, the first build). Writes
# OUTDIR/{ours-LABEL.csv,torch.csv,flops.txt,summary.txt[,memory.csv]}. Targets are judged in summary.txt, never in
# a test. (It replaces bench_single.sh, which compared with eager PyTorch only.)
#
# The summary takes our numbers from `$SCALING report CSV --runs` (default ./scaling; one build counts every label's
# runs, as REPORT.md would): Python only joins them with PyTorch's torch.csv. SUMMARY_ONLY=1 runs nothing and
# rewrites OUTDIR/summary.txt from the files there (SCALING_BINS naming its labels), e.g. on a committed folder.
set -euo pipefail
out=${1:?usage: bench_engine.sh OUTDIR TORCH_FAST [EPOCHS]}
torch_fast=${2:-tools/torch/torch_fast.py}
epochs=${3:-5}
bins=${SCALING_BINS:-ours=./scaling}
rep=${SCALING:-./scaling}
[ -x "$rep" ] || { echo "bench_engine.sh: no $rep to read the CSVs with (set SCALING)" >&2; exit 2; }
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0

summary() {
python3 - "$out" "$bins" "$rep" "$(dirname "${BASH_SOURCE[0]}")" <<'PY' | tee "$out/summary.txt"
import csv, statistics, sys, os, re, subprocess
out, bins, rep = sys.argv[1], sys.argv[2].split(), sys.argv[3]
sys.path.insert(0, sys.argv[4])
import report_runs
def runs(path):
    return report_runs.runs(rep, path)
gflop = {}
for line in open(f"{out}/flops.txt"):
    m = re.match(r"\S+ # model (\S+): ([0-9.]+) GFLOP per image", line)
    if m: gflop[m.group(1)] = float(m.group(2))
def stat(xs):
    return (statistics.median(xs), min(xs), max(xs)) if xs else (float("nan"),) * 3
torch = {}
if os.path.exists(f"{out}/torch.csv"):
    for r in csv.DictReader(open(f"{out}/torch.csv")):
        if int(r["epoch"]) >= 2: torch.setdefault(r["variant"], []).append(float(r["epoch_s"]))
# PyTorch at its best in each math: torch.compile + whole-step CUDA graph
best = {m: stat(torch[f"cgraph-{m}"])[0] for m in ("bf16", "tf32") if f"cgraph-{m}" in torch}
for v, xs in torch.items():
    m, lo, hi = stat(xs)
    print(f"torch resnet18 {v:12s}: {m:.3f} s [{lo:.3f}, {hi:.3f}] per steady epoch")
for spec in bins:
    label = spec.split("=")[0]
    path = f"{out}/ours-{label}.csv"
    if not os.path.exists(path): continue
    rs = runs(path)
    if not rs: continue
    gpu = rs[0]["gpu_name"]
    # Dense tensor-core peaks of the SXM H100/H200 data sheets (TFLOP/s); an 8192^3 bf16 GEMM measured 769-798 here.
    peak = {"tf32": 494.7, "bf16": 989.4} if ("H100" in gpu or "H200" in gpu) else {}
    print(f"{label}: {gpu}, cuDNN {rs[0]['cudnn']}, commit {rs[0]['git_commit']}")
    for model in ("resnet18", "lenet"):
        for math in ("bf16", "tf32"):
            # the latest run of the model and math with steady epochs (a CSV appended to again holds several)
            xs = [r for r in rs if r["model"] == model and r["math"] == math and int(r["steady_epochs"])]
            if not xs: continue
            r = xs[-1]
            m, lo, hi = (float(r[k]) for k in ("epoch_s_median", "epoch_s_min", "epoch_s_max"))
            step = float(r["step_ms_median"])
            steps, batch = float(r["steps_median"]), int(r["global_batch"])
            line = f"  {model:8s} {math}: {m:.3f} s [{lo:.3f}, {hi:.3f}]  step {step:.3f} ms  test acc {r['final_test_acc']}"
            if model in gflop and math in peak:
                tf = gflop[model] * steps * batch / 1e3 / m
                line += f"  {tf:.0f} TFLOP/s = {100 * tf / peak[math]:.1f} % of dense {math} peak"
            if model == "resnet18" and math in best:
                line += f"  | {m / best[math]:.3f} x the time of torch cgraph-{math} ({best[math]:.3f} s)"
            print(line)
if os.path.exists(f"{out}/memory.csv"):
    print("peak device memory in use by the run (MiB), ResNet-18:")
    for r in runs(f"{out}/memory.csv"):
        mem = f"{float(r['peak_mem_mb']):.0f} MiB" if r["peak_mem_mb"] else r["status"]
        print(f"  {r['math']} batch {r['global_batch']:>5}: {mem}")
PY
}
if [[ ${SUMMARY_ONLY:-0} == 1 ]]; then
    summary
    exit 0
fi
: >"$out/flops.txt"

if [[ -f $torch_fast ]] && python3 -c 'import torch' 2>/dev/null; then
    variants=${TORCH_VARIANTS:-cgraph-bf16,graph-bf16,eager-bf16,cgraph-tf32,graph-tf32}
    echo "== PyTorch: torch_fast.py $variants, $epochs epochs"
    PYTHONUNBUFFERED=1 python3 "$torch_fast" data/fashion-mnist "$epochs" "$variants" \
        | tee "$out/torch.csv"
else
    echo "== PyTorch skipped (no $torch_fast or no torch)"
fi

for spec in $bins; do
    label=${spec%%=*} bin=${spec#*=}
    for math in bf16 tf32; do
        echo "== $label: ResNet-18, Fashion-MNIST, batch 256, $math"
        "$bin" --model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 --epochs "$epochs" --math $math \
            --out "$out/ours-$label.csv" | tee "$out/run.log"
        sed "s/^/$label /" <(grep '^# model' "$out/run.log") >>"$out/flops.txt"
    done
    echo "== $label: LeNet, MNIST, batch 64, bf16"
    "$bin" --model lenet --dataset mnist --batch 64 --lr 0.1 --epochs "$epochs" --math bf16 \
        --out "$out/ours-$label.csv" | tee "$out/run.log"
    sed "s/^/$label /" <(grep '^# model' "$out/run.log") >>"$out/flops.txt"
done
rm -f "$out/run.log"
if [[ ${MEMORY:-0} == 1 ]]; then
    bin=${bins%% *}; bin=${bin#*=}
    for math in tf32 bf16; do
        "$bin" --model resnet18 --dataset fashion-mnist --batch 64,256,1024 --lr 0.1 --epochs 1 --math $math \
            --out "$out/memory.csv" >/dev/null
    done
fi

summary
