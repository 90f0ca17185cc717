#!/usr/bin/env bash
# bench_single.sh — the one-GPU speed benchmark: our engine beside the PyTorch reference in the same session,
# ResNet-18/Fashion-MNIST batch 256 and LeNet/MNIST batch 64, plus peak memory at batch 64/256/1024.
#
#   bench/bench_single.sh OUTDIR [ANCHOR_SCRIPT] [EPOCHS]
#
# ANCHOR_SCRIPT is ../shared/anchors/torch_ddp_resnet18.py (PyTorch DDP reference); skipped if absent.
# It reads gzipped IDX files: data/fashion-mnist/*.gz, and MNIST gzipped in MNIST_GZ_DIR (default data/mnist).
# Writes OUTDIR/{ours.csv,torch.csv,memory.csv,summary.txt}. Speed targets are judged in summary.txt, never in
# a test: timing is noisy and belongs to a benchmark's recorded output.
set -euo pipefail
out=${1:?usage: bench_single.sh OUTDIR [ANCHOR_SCRIPT] [EPOCHS]}
anchor=${2:-../shared/anchors/torch_ddp_resnet18.py}
epochs=${3:-5}
mnist_gz=${MNIST_GZ_DIR:-data/mnist}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0

if [ -f "$anchor" ] && python3 -c 'import torch' 2>/dev/null; then
    echo "== PyTorch reference (eager-fp32: TF32 convolutions, fp32 matmuls), $epochs epochs"
    python3 "$anchor" data/fashion-mnist "$epochs" eager-fp32 1 resnet18 | tee "$out/torch.csv"
    python3 "$anchor" "$mnist_gz" "$epochs" eager-fp32 1 lenet | tail -n +2 | tee -a "$out/torch.csv"
else
    echo "== PyTorch reference skipped (no $anchor or no torch)"
fi

echo "== ours: ResNet-18, Fashion-MNIST, batch 256, tf32 (same math as PyTorch's default) and strict fp32"
./scaling --model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 --epochs "$epochs" --math tf32 --out "$out/ours.csv"
./scaling --model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 --epochs "$epochs" --math fp32 --out "$out/ours.csv"
echo "== ours: LeNet, MNIST, batch 64"
./scaling --model lenet --dataset mnist --batch 64 --lr 0.1 --epochs "$epochs" --math tf32 --out "$out/ours.csv"
echo "== peak memory: ResNet-18 at batch 64, 256, 1024 (one epoch each)"
./scaling --model resnet18 --dataset fashion-mnist --batch 64,256,1024 --lr 0.1 --epochs 1 --out "$out/memory.csv"

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import csv, statistics, sys, os
out = sys.argv[1]
ours = list(csv.DictReader(open(f"{out}/ours.csv")))
def steady(rows):
    return [float(r["epoch_s"]) for r in rows if r["phase"] == "steady"]
def stat(xs):
    return (statistics.median(xs), min(xs), max(xs)) if xs else (float("nan"),) * 3
torch = {}
if os.path.exists(f"{out}/torch.csv"):
    for r in csv.DictReader(open(f"{out}/torch.csv")):
        if int(r["epoch"]) >= 2:
            torch.setdefault(r["model"], []).append(float(r["epoch_s"]))
print(f"GPU: {ours[0]['gpu_name']}  driver {ours[0]['driver']}  CUDA {ours[0]['cuda']}  cuDNN {ours[0]['cudnn']}  commit {ours[0]['git_commit']}")
print("steady epochs (2..N): median [min, max] seconds")
targets = {"resnet18": 0.6, "lenet": 0.2}
for model, math in (("resnet18", "tf32"), ("resnet18", "fp32"), ("lenet", "tf32")):
    rows = [r for r in ours if r["model"] == model and r["math"] == math]
    m, lo, hi = stat(steady(rows))
    acc = rows[-1]["test_acc"] if rows else "?"
    line = f"ours  {model:9s} {math}: {m:.3f} s [{lo:.3f}, {hi:.3f}]  step {statistics.median(float(r['step_ms']) for r in rows if r['phase']=='steady'):.3f} ms  final test acc {acc}"
    if model in torch and math == "tf32":
        tm, tlo, thi = stat(torch[model])
        line += f"\n      torch {model:9s} eager-fp32: {tm:.3f} s [{tlo:.3f}, {thi:.3f}]  ratio ours/torch = {m / tm:.3f} (target {targets[model]}x, must be <= 1)"
    print(line)
print("peak device memory in use by the run (MiB), ResNet-18:")
for r in csv.DictReader(open(f"{out}/memory.csv")):
    print(f"  batch {r['global_batch']:>5}: {float(r['peak_mem_mb']):.0f} MiB")
PY
