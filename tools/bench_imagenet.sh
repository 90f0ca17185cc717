#!/usr/bin/env bash
# bench_imagenet.sh — ResNet-50 and ResNet-101 at 224x224 on one GPU: our engine beside PyTorch's best
# (tools/torch/torch_imagenet.py: eager, whole-step CUDA graph, torch.compile + graph) in the same call, on
# synthetic ImageNet-shaped data; images/s, FLOPs per image and the fraction of the dense peak, peak memory, and the
# largest batch that fits (a --batch sweep up to the first run that does not fit). Builds nothing.
#
#   tools/bench_imagenet.sh OUTDIR [ANCHOR_SCRIPT] [STEPS]
#
# Run where ./scaling is (or set SCALING=path). ANCHOR_SCRIPT defaults to tools/torch/torch_imagenet.py and
# is skipped if absent or without torch. STEPS (default 60) caps each epoch: 4 epochs, the first warm-up (cuDNN's
# algorithm search, graph capture), so 3 x STEPS steady steps per configuration. R101_CGRAPH=1 adds ResNet-101's
# torch.compile variant (about a minute of compilation). PROFILE=1 adds where one ResNet-50 bf16 step goes: 10
# steady steps under Nsight Systems (tools/device/engine_profile.sh: eager, so kernels are attributed) and their per-kernel
# breakdown (tools/kernel_breakdown.py) in OUTDIR/kernels_resnet50_bf16.txt. Writes OUTDIR/{ours.csv,memory.csv,
# torch.csv,flops.txt,summary.txt,*.log} and gpu_*.csv (the GPU's SM clock, temperature and power during each
# run). About 5 minutes on an H100/H200 (1 more with PROFILE=1). Speed targets are judged in summary.txt, never in
# a test.
#
# Our numbers (steady medians, peak memory, how each run ended) come from `$bin report CSV --runs`, counted as
# REPORT.md counts them (study/study.c); Python only joins them with PyTorch's torch.csv. SUMMARY_ONLY=1 runs
# nothing and rewrites OUTDIR/summary.txt from the files there.
set -euo pipefail
out=${1:?usage: bench_imagenet.sh OUTDIR [ANCHOR_SCRIPT] [STEPS]}
anchor=${2:-tools/torch/torch_imagenet.py}
steps=${3:-60}
bin=${SCALING:-./scaling}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -x "$bin" ] || { echo "bench_imagenet.sh: no $bin (run where the build put scaling, or set SCALING)" >&2; exit 2; }
mkdir -p "$out"

summary() {
python3 - "$out" "$bin" "$(dirname "${BASH_SOURCE[0]}")" <<'PY' | tee "$out/summary.txt"
import csv, os, re, subprocess, sys
out, bin = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
import report_runs
def runs(path):
    return report_runs.runs(bin, path)
ours = runs(f"{out}/ours.csv")
gflop = {}
for line in open(f"{out}/flops.txt"):
    m = re.match(r"# model (\S+): ([0-9.]+) GFLOP per image", line)
    if m: gflop[m.group(1)] = float(m.group(2))
gpu = ours[0]["gpu_name"]
# Dense (no sparsity) tensor-core peaks of the SXM H100/H200 data sheets, TFLOP/s.
peak = {"tf32": 494.7, "bf16": 989.4} if ("H100" in gpu or "H200" in gpu) else {}
print(f"GPU: {gpu}  driver {ours[0]['driver']}  CUDA {ours[0]['cuda']}  cuDNN {ours[0]['cudnn']}  commit {ours[0]['git_commit']}")
print("FLOPs per image (forward + backward, convolutions and dense layers, from the layer shapes): " +
      ", ".join(f"{k} {v:.2f} GFLOP" for k, v in gflop.items()))
def gpu_state(name, what="it"):
    """The sampled SM clock, temperature and power while `what` ran (sampled() below), or "" without samples."""
    rows = []
    path = f"{out}/gpu_{name}.csv"
    for line in open(path) if os.path.exists(path) else ():
        try: rows.append([float(v) for v in line.split(",")[:3]])
        except ValueError: pass
    if not rows: return ""
    med = lambda i: sorted(r[i] for r in rows)[len(rows) // 2]
    return (f"\n   GPU while {what} ran ({len(rows)} samples): SM clock median {med(0):.0f} MHz"
            f" [{min(r[0] for r in rows):.0f}, {max(r[0] for r in rows):.0f}], temperature max"
            f" {max(r[1] for r in rows):.0f} C, power median {med(2):.0f} W")
def rate(model, ips, math):
    if model not in gflop: return ""
    t = ips * gflop[model] / 1e3
    s = f"  {t:.0f} TFLOP/s"
    if math in peak: s += f" = {100 * t / peak[math]:.1f} % of the {math} dense peak ({peak[math]})"
    return s
print("ours, steady epochs (2..4): median images/s [min, max], median step, peak memory")
best = {}
for model, batch, math in (("resnet50", 256, "bf16"), ("resnet50", 256, "tf32"), ("resnet101", 128, "bf16")):
    rs = [r for r in ours if r["model"] == model and r["math"] == math and int(r["global_batch"]) == batch
          and int(r["steady_epochs"])]
    if not rs:
        print(f"  {model} {math} batch {batch}: no steady rows (see the run's output)"); continue
    r = rs[-1]
    med, lo, hi = (float(r[k]) for k in ("images_per_s_median", "images_per_s_min", "images_per_s_max"))
    best[(model, math)] = med
    step = float(r["step_ms_median"])
    mem = f"{float(r['peak_mem_mb']):.0f}" if r["peak_mem_mb"] else "-"
    # The epoch's images/s is steps x batch over the epoch's CUDA events; batch / median step is the per-step rate,
    # as the anchor times it (a mean over its steps).
    print(f"  {model:9s} {math} batch {batch}: {med:7.0f} images/s [{lo:.0f}, {hi:.0f}]  step {step:.2f} ms"
          f" = {1e3 * batch / step:.0f} images/s  peak {mem} MiB\n   {rate(model, med, math)}"
          + gpu_state(f"{model}_{math}"))
torch = {}
if os.path.exists(f"{out}/torch.csv"):
    print("PyTorch (same call, bf16 autocast + channels_last):"
          + gpu_state("torch_resnet50", "ResNet-50's") + gpu_state("torch_resnet101", "ResNet-101's"))
    for r in csv.DictReader(open(f"{out}/torch.csv")):
        ips = float(r["img_per_s"]); torch[(r["model"], r["variant"])] = ips
        print(f"  {r['model']:9s} {r['variant']:12s} batch {r['batch']}: {ips:7.0f} images/s  step {r['step_ms']} ms"
              f"\n   {rate(r['model'], ips, 'bf16')}")
print("largest batch that fits (ResNet-50, the sweep's largest run that ended ok):")
if os.path.exists(f"{out}/memory.csv"):
    mem = runs(f"{out}/memory.csv")
    stops = {}
    if os.path.exists(f"{out}/memory_stop.txt"):
        for line in open(f"{out}/memory_stop.txt"):
            m, b, rc = line.strip().split(","); stops[m] = (int(b), int(rc))
    for math in ("bf16", "tf32"):
        ok = [r for r in mem if r["math"] == math and r["status"] == "ok"]
        top = max(ok, key=lambda r: int(r["global_batch"])) if ok else None
        stop = stops.get(math)
        why = "" if not stop else (f"; batch {stop[0]} did not fit" + (f" (process exit {stop[1]})" if stop[1] else " (oom row)"))
        if top: print(f"  {math}: {top['global_batch']} ({float(top['peak_mem_mb']):.0f} MiB){why}")
        else: print(f"  {math}: none of the sweep ran{why}")
        if not stop: print(f"  {math}: every batch of the sweep fitted: the limit is above it")
print("targets:")
def judge(name, ok, detail):
    print(f"  {name}: {detail} : {'MET' if ok else 'NOT MET'}")
r50 = best.get(("resnet50", "bf16"))
if r50:
    judge("ResNet-50 bf16 batch 256 >= 8000 images/s", r50 >= 8000, f"{r50:.0f}")
    fastest = max((v for (m, _), v in torch.items() if m == "resnet50"), default=None)
    if fastest: judge("ResNet-50 bf16 faster than PyTorch's fastest variant", r50 > fastest, f"{r50:.0f} vs {fastest:.0f}")
r101 = best.get(("resnet101", "bf16"))
t101 = max((v for (m, _), v in torch.items() if m == "resnet101"), default=None)
if r101 and t101: judge("ResNet-101 bf16 batch 128 faster than PyTorch", r101 > t101, f"{r101:.0f} vs {t101:.0f}")
PY
}
if [ "${SUMMARY_ONLY:-0}" = 1 ]; then
    summary
    exit 0
fi
rm -f "$out/ours.csv" "$out/memory.csv" "$out/torch.csv" "$out/memory_stop.txt" "$out"/gpu_*.csv

# The GPU's SM clock, temperature and power every 500 ms while CMD runs, into OUTDIR/gpu_NAME.csv (the summary's
# medians): two H200 starts ran the same code 1.5 % apart, and only these say whether the GPU itself differed.
sampled() {   # NAME CMD...
    local name=$1 sampler rc=0
    shift
    nvidia-smi -i 0 --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader,nounits -lms 500 \
        >"$out/gpu_$name.csv" 2>/dev/null &
    sampler=$!
    "$@" || rc=$?
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    return "$rc"
}
: >"$out/flops.txt"
cache="$out/conv_algos.tsv"   # one algorithm search per shape for all our runs of this call

if [ -f "$anchor" ] && python3 -c 'import torch, torchvision' 2>/dev/null; then
    echo "== PyTorch: ResNet-50 batch 256 (eager, graph, compile + graph), ResNet-101 batch 128, bf16 autocast"
    sampled torch_resnet50 python3 "$anchor" resnet50 256 eager-bf16,graph-bf16,cgraph-bf16 "$((3 * steps))" |
        tee "$out/torch.csv"
    sampled torch_resnet101 python3 "$anchor" resnet101 128 "graph-bf16${R101_CGRAPH:+,cgraph-bf16}" \
        "$((3 * steps))" | tail -n +2 | tee -a "$out/torch.csv"
else
    echo "== PyTorch reference skipped (no $anchor, or no torch/torchvision)"
fi

# ours: SGD momentum 0.9 as the anchor; synthetic rows have no accuracy.
ours() {   # MODEL BATCH MATH
    echo "== ours: $1, batch $2, $3, synthetic 3x224x224, $steps steps per epoch"
    "$bin" --model "$1" --dataset synthetic --batch "$2" --math "$3" --lr 0.1 --momentum 0.9 --epochs 4 \
        --steps "$steps" --conv-cache "$cache" --out "$out/ours.csv" | tee "$out/run.log"
    grep '^# model' "$out/run.log" | head -1 >>"$out/flops.txt"
}
sampled resnet50_bf16 ours resnet50 256 bf16
sampled resnet50_tf32 ours resnet50 256 tf32
sampled resnet101_bf16 ours resnet101 128 bf16
rm -f "$out/run.log"

# The largest batch that fits: from batch 256's peak memory, the batch that would fill the GPU is estimated, and
# batches around it run (one epoch of 2 steps each, increasing) until one does not fit: an oom row (or a failed
# process) ends the sweep. The largest one that ran is the answer; the estimate only picks where to look.
total_mb=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | head -1)
for math in bf16 tf32; do
    peak=$(python3 "$here/report_runs.py" "$bin" "$out/ours.csv" peak_mem_mb max model=resnet50 math="$math")
    peak=${peak:-0}
    batches=$(python3 -c "
import sys
total, peak = float('$total_mb'), float('$peak')
if peak <= 0: print('512 768 1024'); sys.exit()
fixed = 1024.0   # parameters, gradients, momentum, workspace: batch-independent, MiB (rough)
fill = 256 * (0.97 * total - fixed) / max(peak - fixed, 1.0)
print(' '.join(str(max(32, int(fill * f) // 32 * 32)) for f in (0.9, 1.05, 1.2)))")
    echo "== memory: ResNet-50 $math, batch 256 peaked at ${peak} MiB of ${total_mb}: batches $batches"
    for b in $batches; do
        rc=0
        "$bin" --model resnet50 --dataset synthetic --batch "$b" --math "$math" --lr 0.1 --momentum 0.9 --epochs 1 \
            --steps 2 --conv-cache "$cache" --out "$out/memory.csv" >"$out/memory_${math}_$b.log" 2>&1 || rc=$?
        # how the run at this batch ended (study_verdict), where it wrote a row
        status=$(python3 "$here/report_runs.py" "$bin" "$out/memory.csv" status last global_batch="$b" math="$math") ||
            status=""
        status=${status:-no-row}
        echo "   batch $b: exit $rc, last row $status"
        if [ "$rc" -ne 0 ] || [ "$status" != "ok" ]; then
            echo "$math,$b,$rc" >>"$out/memory_stop.txt"
            break
        fi
    done
done

if [ "${PROFILE:-0}" = 1 ]; then
    echo "== Nsight Systems: 10 steady steps of ResNet-50 bf16 batch 256 (--cuda-graph off)"
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    SCALING="$bin" "$root/tools/device/engine_profile.sh" "$out" "$cache" >"$out/profile.log" 2>&1
    cat "$out/kernels_resnet50_bf16.txt"
fi

summary
