#!/usr/bin/env bash
# bench_dp.sh — the data-parallel benchmark beside PyTorch DDP in the same session: ResNet-18 on
# Fashion-MNIST, 256 images per GPU, weak scaling on 1, 2 and 4 GPUs, for nccl (one process and one process per
# GPU under mpirun) and naive; 1-GPU training at the same global batches for the accuracy check; a bucket-size
# sweep; the all-reduce benchmark. Targets are judged in OUTDIR/summary.txt, never in a test.
#
#   bench/bench_dp.sh OUTDIR [ANCHOR_SCRIPT] [EPOCHS]
set -euo pipefail
out=${1:?usage: bench_dp.sh OUTDIR [ANCHOR_SCRIPT] [EPOCHS]}
anchor=${2:-../shared/anchors/torch_ddp_resnet18.py}
epochs=${3:-4}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
R=(--model resnet18 --dataset fashion-mnist --batch 256 --lr 0.1 --epochs "$epochs")
# GPU counts: powers of two up to what this machine has (1, 2, 4 on a 4-GPU node).
n_dev=$(nvidia-smi -L | grep -c '^GPU')
counts=(1); for g in 2 4 8; do [ "$g" -le "$n_dev" ] && counts+=("$g"); done
list=$(IFS=,; echo "${counts[*]}"); multi=$(IFS=,; echo "${counts[*]:1}"); top=${counts[-1]}

if [ -f "$anchor" ] && python3 -c 'import torch' 2>/dev/null; then
    echo "== PyTorch DDP eager-fp32, 1/2/4 GPUs, $epochs epochs"
    python3 "$anchor" data/fashion-mnist "$epochs" eager-fp32 "$list" | tee "$out/torch.csv"
fi
echo "== single at the global batches of 1, 2, 4 GPUs (T1 and the accuracy reference)"
for g in "${counts[@]}"; do
    ./scaling --strategy single --model resnet18 --batch $((256 * g)) --lr "0.$g" --epochs "$epochs" \
        --out "$out/single.csv" | grep -E '^#|^ +[0-9]'
done
echo "== nccl and naive, one process, weak scaling"
./scaling --strategy nccl --gpus "$list" "${R[@]}" --out "$out/ours.csv" | grep -E '^#|^ +[0-9]'
./scaling --strategy naive --gpus "$list" "${R[@]}" --out "$out/ours.csv" | grep -E '^#|^ +[0-9]'
./scaling --strategy nccl --gpus "$multi" --overlap off "${R[@]}" --out "$out/overlap_off.csv" | grep -E '^# summary'
if command -v mpirun >/dev/null; then
    echo "== nccl, one process per GPU (mpirun -np $top)"
    mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE -np "$top" ./scaling --strategy nccl "${R[@]}" \
        --out "$out/ours_mpi.csv" | grep -E '^# summary'
fi
echo "== bucket size, $top GPUs"
for b in 2 8 25 64 128; do
    ./scaling --strategy nccl --gpus "$top" --bucket-mb $b "${R[@]}" --epochs 3 --out "$out/buckets.csv" | grep -E '^# summary'
done
echo "== all-reduce benchmark"
./scaling --bench allreduce --gpus "$multi" --out "$out/allreduce.csv" | grep -E '^# [a-z]|7069696 |47185920 |268435456 '

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import csv, os, statistics, sys
out = sys.argv[1]
def rows(f):
    p = os.path.join(out, f)
    return list(csv.DictReader(open(p))) if os.path.exists(p) else []
def steady(rs, **k):
    xs = [float(r["epoch_s"]) for r in rs if r["phase"] == "steady" and all(r[a] == str(v) for a, v in k.items())]
    return (statistics.median(xs), min(xs), max(xs)) if xs else None
def final_acc(rs, **k):
    xs = [r for r in rs if all(r[a] == str(v) for a, v in k.items())]
    return float(xs[-1]["test_acc"]) if xs else float("nan")
single, ours, mpi, off, buckets = rows("single.csv"), rows("ours.csv"), rows("ours_mpi.csv"), rows("overlap_off.csv"), rows("buckets.csv")
torch = {}
for r in rows("torch.csv"):
    if int(r["epoch"]) >= 2:
        torch.setdefault(int(r["gpus"]), []).append(float(r["epoch_s"]))
tacc = {int(r["gpus"]): float(r["test_acc"]) for r in rows("torch.csv")}
env = (single or ours)[0]
print(f"GPU: {env['gpu_name']}, driver {env['driver']}, CUDA {env['cuda']}, cuDNN {env['cudnn']}, NCCL {env['nccl']}, commit {env['git_commit']}")
t1 = steady(single, global_batch=256)
print(f"T1 = single, batch 256: {t1[0]:.3f} s (median of steady epochs)")
print("strategy   gpus  epoch_s [min,max]        eff T1/(N*TN)  comm_ms exposed_ms busbw  test_acc  1-GPU same batch  torch epoch_s")
for name, rs, strat in (("nccl", ours, "nccl"), ("naive", ours, "naive"), ("nccl-mpi", mpi, "nccl"), ("nccl-nooverlap", off, "nccl")):
    for g in (1, 2, 4):
        st = steady(rs, strategy=strat, gpus=g)
        if not st: continue
        last = [r for r in rs if r["strategy"] == strat and r["gpus"] == str(g)][-1]
        ref = final_acc(single, global_batch=256 * g)
        tt = statistics.median(torch[g]) if g in torch else float("nan")
        print(f"{name:14s} {g:2d}  {st[0]:.3f} [{st[1]:.3f},{st[2]:.3f}]   {t1[0] / (g * st[0]) * 100:6.1f} %   {last['comm_ms'] or '-':>7} {last['exposed_comm_ms'] or '-':>8} {last['busbw_gbs'] or '-':>6}  {float(last['test_acc']):.4f}  {ref:.4f} ({(float(last['test_acc']) - ref) * 100:+.2f} pt)  {tt:.3f}")
for g in (1, 2, 4):
    if g in torch:
        print(f"torch DDP {g} GPU: {statistics.median(torch[g]):.3f} s, efficiency {statistics.median(torch[1]) / (g * statistics.median(torch[g])) * 100:.1f} %, test acc {tacc.get(g, float('nan')):.4f}")
print("bucket size (largest GPU count, nccl; runs in the order of the loop above) -> median steady epoch s")
seen = []
for r in buckets:
    if r["run_id"] not in seen: seen.append(r["run_id"])
for mb, rid in zip((2, 8, 25, 64, 128), seen):
    xs = [float(r["epoch_s"]) for r in buckets if r["run_id"] == rid and r["phase"] == "steady"]
    print(f"  --bucket-mb {mb:3d}: {statistics.median(xs):.3f} s")
ar = rows("allreduce.csv")
anchor = {(2, 47185920): 254.3, (4, 47185920): 303.1, (2, 7069696): 162.6, (4, 7069696): 183.4}
for r in ar:
    k = (int(r["gpus"]), int(r["size_bytes"]))
    if r["strategy"] == "nccl" and k in anchor:
        print(f"allreduce nccl {k[0]} GPUs {k[1]} B: busbw {float(r['busbw_gbs']):.1f} GB/s vs reference {anchor[k]} ({(float(r['busbw_gbs']) / anchor[k] - 1) * 100:+.1f} %)")
PY
