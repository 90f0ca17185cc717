#!/usr/bin/env bash
# bench_single.sh — the one-GPU speed benchmark: our engine in tf32 and bf16 beside the PyTorch reference (eager fp32
# and eager bf16 + channels_last) in the same session, ResNet-18/Fashion-MNIST batch 256 and LeNet/MNIST batch 64,
# the arithmetic per epoch and the fraction of the GPU's dense peak it reaches, and peak memory at batch 64/256/1024.
#
#   bench/bench_single.sh OUTDIR [ANCHOR_SCRIPT] [EPOCHS]
#
# ANCHOR_SCRIPT is ../shared/anchors/torch_ddp_resnet18.py (PyTorch DDP reference); skipped if absent.
# It reads gzipped IDX files: data/fashion-mnist/*.gz, and MNIST gzipped in MNIST_GZ_DIR (default data/mnist).
# Writes OUTDIR/{ours.csv,torch.csv,memory.csv,flops.txt,summary.txt}. Speed targets are judged in summary.txt,
# never in a test: timing is noisy and belongs to a benchmark's recorded output.
set -euo pipefail
out=${1:?usage: bench_single.sh OUTDIR [ANCHOR_SCRIPT] [EPOCHS]}
anchor=${2:-../shared/anchors/torch_ddp_resnet18.py}
epochs=${3:-5}
mnist_gz=${MNIST_GZ_DIR:-data/mnist}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0

if [ -f "$anchor" ] && python3 -c 'import torch' 2>/dev/null; then
    echo "== PyTorch reference: eager-fp32 (TF32 convolutions, fp32 matmuls) and eager-bf16 (autocast, channels_last)"
    python3 "$anchor" data/fashion-mnist "$epochs" eager-fp32,eager-bf16 1 resnet18 | tee "$out/torch.csv"
    python3 "$anchor" "$mnist_gz" "$epochs" eager-fp32,eager-bf16 1 lenet | tail -n +2 | tee -a "$out/torch.csv"
else
    echo "== PyTorch reference skipped (no $anchor or no torch)"
fi

: >"$out/flops.txt"
for math in tf32 bf16; do
    echo "== ours: ResNet-18, Fashion-MNIST, batch 256, $math"
    ./scaling --model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 --epochs "$epochs" --math $math \
        --out "$out/ours.csv" | tee "$out/run.log"
    grep '^# model' "$out/run.log" >>"$out/flops.txt"
    echo "== ours: LeNet, MNIST, batch 64, $math"
    ./scaling --model lenet --dataset mnist --batch 64 --lr 0.1 --epochs "$epochs" --math $math \
        --out "$out/ours.csv" | tee "$out/run.log"
    grep '^# model' "$out/run.log" >>"$out/flops.txt"
done
rm -f "$out/run.log"
echo "== peak memory: ResNet-18 at batch 64, 256, 1024, tf32 and bf16 (one epoch each)"
./scaling --model resnet18 --dataset fashion-mnist --batch 64,256,1024 --lr 0.1 --epochs 1 --math tf32 --out "$out/memory.csv"
./scaling --model resnet18 --dataset fashion-mnist --batch 64,256,1024 --lr 0.1 --epochs 1 --math bf16 --out "$out/memory.csv"

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import csv, statistics, sys, os, re
out = sys.argv[1]
ours = list(csv.DictReader(open(f"{out}/ours.csv")))
gflop = {}
for line in open(f"{out}/flops.txt"):
    m = re.match(r"# model (\S+): ([0-9.]+) GFLOP per image", line)
    if m: gflop[m.group(1)] = float(m.group(2))
def steady(rows):
    return [float(r["epoch_s"]) for r in rows if r["phase"] == "steady"]
def stat(xs):
    return (statistics.median(xs), min(xs), max(xs)) if xs else (float("nan"),) * 3
torch = {}
if os.path.exists(f"{out}/torch.csv"):
    for r in csv.DictReader(open(f"{out}/torch.csv")):
        if int(r["epoch"]) >= 2:
            torch.setdefault((r["model"], r["variant"]), []).append(float(r["epoch_s"]))
gpu = ours[0]["gpu_name"]
# Dense (no sparsity) tensor-core peaks of the SXM H100/H200 data sheets, TFLOP/s; measured here once: an 8192^3
# bf16 GEMM at 769-798 (KINDS.md), so the data-sheet figure is the ceiling, not a reachable rate.
peak = {"tf32": 494.7, "bf16": 989.4} if ("H100" in gpu or "H200" in gpu) else {}
print(f"GPU: {gpu}  driver {ours[0]['driver']}  CUDA {ours[0]['cuda']}  cuDNN {ours[0]['cudnn']}  commit {ours[0]['git_commit']}")
print("steady epochs (2..N): median [min, max] seconds")
med = {}
for model in ("resnet18", "lenet"):
    for math in ("tf32", "bf16"):
        rows = [r for r in ours if r["model"] == model and r["math"] == math]
        if not rows: continue
        m, lo, hi = stat(steady(rows))
        med[(model, math)] = m
        steps = int(rows[-1]["steps"]); batch = int(rows[-1]["global_batch"])
        line = (f"ours  {model:9s} {math}: {m:.3f} s [{lo:.3f}, {hi:.3f}]  step "
                f"{statistics.median(float(r['step_ms']) for r in rows if r['phase']=='steady'):.3f} ms  "
                f"final test acc {rows[-1]['test_acc']}")
        if model in gflop:
            tflop = gflop[model] * steps * batch / 1e3
            line += f"\n      {tflop:.1f} TFLOP per epoch ({gflop[model]:.4f} GFLOP/image x {steps * batch} images): {tflop / m:.1f} TFLOP/s"
            if math in peak:
                line += f" = {100 * tflop / m / peak[math]:.1f} % of the {math} dense peak ({peak[math]} TFLOP/s); floor {tflop / peak[math]:.3f} s"
        print(line)
    for v in ("eager-fp32", "eager-bf16"):
        if (model, v) in torch:
            tm, tlo, thi = stat(torch[(model, v)])
            med[(model, v)] = tm
            print(f"torch {model:9s} {v}: {tm:.3f} s [{tlo:.3f}, {thi:.3f}]")
print("targets:")
def judge(name, got, limit):
    print(f"  {name}: {got:.3f} <= {limit} : {'MET' if got <= limit else 'NOT MET'}")
r = med.get(("resnet18", "bf16")); t = med.get(("resnet18", "tf32"))
if r and t: judge("ResNet-18 bf16 / ours tf32", r / t, 0.55)
fast = [med[k] for k in (("resnet18", "eager-fp32"), ("resnet18", "eager-bf16")) if k in med]
if r and fast: judge("ResNet-18 bf16 / fastest PyTorch variant", r / min(fast), 0.3)
lb, lt = med.get(("lenet", "bf16")), med.get(("lenet", "tf32"))
if lb and lt: judge("LeNet bf16 / LeNet tf32", lb / lt, 1.0)
print("peak device memory in use by the run (MiB), ResNet-18:")
for r in csv.DictReader(open(f"{out}/memory.csv")):
    print(f"  {r['math']} batch {r['global_batch']:>5}: {float(r['peak_mem_mb']):.0f} MiB")
PY
