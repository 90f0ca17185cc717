#!/usr/bin/env bash
# bench_dp.sh — the data-parallel benchmark beside PyTorch DDP in the same session: ResNet-18 on
# Fashion-MNIST, 256 images per GPU, weak scaling on 1, 2 and 4 GPUs, for nccl (one process and one process per
# GPU under mpirun) and naive; 1-GPU training at the same global batches for the accuracy check; a bucket-size
# sweep; the all-reduce benchmark. Targets are judged in OUTDIR/summary.txt, never in a test.
#
#   tools/bench_dp.sh OUTDIR [ANCHOR_SCRIPT] [EPOCHS]
#
# Runs $SCALING (default ./scaling). The summary takes our runs' numbers from `$SCALING report CSV --runs` (the
# report's runs and steady medians, study/study.c): Python joins them with PyTorch's torch.csv and reads the
# all-reduce benchmark's rows. SUMMARY_ONLY=1 runs nothing and rewrites OUTDIR/summary.txt from the files there.
set -euo pipefail
out=${1:?usage: bench_dp.sh OUTDIR [ANCHOR_SCRIPT] [EPOCHS]}
anchor=${2:-../shared/anchors/torch_ddp_resnet18.py}
epochs=${3:-4}
bin=${SCALING:-./scaling}
[ -x "$bin" ] || { echo "bench_dp.sh: no $bin (run where the build put scaling, or set SCALING)" >&2; exit 2; }
mkdir -p "$out"

summary() {
python3 - "$out" "$bin" "$(dirname "${BASH_SOURCE[0]}")" <<'PY' | tee "$out/summary.txt"
import csv, os, statistics, subprocess, sys, tempfile
out, bin = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
import report_runs
def rows(f):
    p = os.path.join(out, f)
    return list(csv.DictReader(open(p))) if os.path.exists(p) else []
def runs(f):
    p = os.path.join(out, f)
    return report_runs.runs(bin, p)
def each_run(f):
    # --bucket-mb is no CSV column: the sweep's runs are one configuration, of which the report keeps one, so each
    # run is read on its own (rows split by run_id, nothing computed)
    p = os.path.join(out, f)
    if not os.path.exists(p): return []
    rd = csv.reader(open(p, newline=""))
    head = next(rd)
    by = {}
    for rec in rd:
        if len(rec) == len(head): by.setdefault(rec[head.index("run_id")], []).append(rec)
    res = []
    with tempfile.TemporaryDirectory() as d:
        for i, recs in enumerate(by.values()):
            q = os.path.join(d, f"{i}.csv")
            with open(q, "w", newline="") as w:
                csv.writer(w, lineterminator="\n").writerows([head] + recs)
            res += report_runs.runs(bin, q)
    return res
def pick(rs, **k):
    # the last run that matches, or None
    xs = [r for r in rs if all(r[a] == str(v) for a, v in k.items())]
    return xs[-1] if xs else None
def steady(rs, **k):
    r = pick([r for r in rs if int(r["steady_epochs"])], **k)
    return tuple(float(r[c]) for c in ("epoch_s_median", "epoch_s_min", "epoch_s_max")) if r else None
def final_acc(rs, **k):
    r = pick(rs, **k)
    return float(r["final_test_acc"]) if r and r["final_test_acc"] else float("nan")
single, ours, mpi, off = runs("single.csv"), runs("ours.csv"), runs("ours_mpi.csv"), runs("overlap_off.csv")
buckets = each_run("buckets.csv")
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
        last = pick(rs, strategy=strat, gpus=g)   # its last epoch's cells
        acc = float(last["final_test_acc"] or "nan")
        ref = final_acc(single, global_batch=256 * g)
        tt = statistics.median(torch[g]) if g in torch else float("nan")
        print(f"{name:14s} {g:2d}  {st[0]:.3f} [{st[1]:.3f},{st[2]:.3f}]   {t1[0] / (g * st[0]) * 100:6.1f} %   {last['final_comm_ms'] or '-':>7} {last['final_exposed_comm_ms'] or '-':>8} {last['final_busbw_gbs'] or '-':>6}  {acc:.4f}  {ref:.4f} ({(acc - ref) * 100:+.2f} pt)  {tt:.3f}")
for g in (1, 2, 4):
    if g in torch:
        print(f"torch DDP {g} GPU: {statistics.median(torch[g]):.3f} s, efficiency {statistics.median(torch[1]) / (g * statistics.median(torch[g])) * 100:.1f} %, test acc {tacc.get(g, float('nan')):.4f}")
print("bucket size (largest GPU count, nccl; runs in the order of the loop above) -> median steady epoch s")
for mb, r in zip((2, 8, 25, 64, 128), buckets):
    print(f"  --bucket-mb {mb:3d}: {float(r['epoch_s_median']):.3f} s")
ar = rows("allreduce.csv")
anchor = {(2, 47185920): 254.3, (4, 47185920): 303.1, (2, 7069696): 162.6, (4, 7069696): 183.4}
for r in ar:
    k = (int(r["gpus"]), int(r["size_bytes"]))
    if r["strategy"] == "nccl" and k in anchor:
        print(f"allreduce nccl {k[0]} GPUs {k[1]} B: busbw {float(r['busbw_gbs']):.1f} GB/s vs reference {anchor[k]} ({(float(r['busbw_gbs']) / anchor[k] - 1) * 100:+.1f} %)")
PY
}
if [[ ${SUMMARY_ONLY:-0} == 1 ]]; then
    summary
    exit 0
fi
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
    "$bin" --strategy single --model resnet18 --batch $((256 * g)) --lr "0.$g" --epochs "$epochs" \
        --out "$out/single.csv" | grep -E '^#|^ +[0-9]'
done
echo "== nccl and naive, one process, weak scaling"
"$bin" --strategy nccl --gpus "$list" "${R[@]}" --out "$out/ours.csv" | grep -E '^#|^ +[0-9]'
"$bin" --strategy naive --gpus "$list" "${R[@]}" --out "$out/ours.csv" | grep -E '^#|^ +[0-9]'
"$bin" --strategy nccl --gpus "$multi" --overlap off "${R[@]}" --out "$out/overlap_off.csv" | grep -E '^# summary'
if command -v mpirun >/dev/null; then
    echo "== nccl, one process per GPU (mpirun -np $top)"
    mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE -np "$top" "$bin" --strategy nccl "${R[@]}" \
        --out "$out/ours_mpi.csv" | grep -E '^# summary'
fi
echo "== bucket size, $top GPUs"
for b in 2 8 25 64 128; do
    "$bin" --strategy nccl --gpus "$top" --bucket-mb $b "${R[@]}" --epochs 3 --out "$out/buckets.csv" | grep -E '^# summary'
done
echo "== all-reduce benchmark"
"$bin" --bench allreduce --gpus "$multi" --out "$out/allreduce.csv" | grep -E '^# [a-z]|7069696 |47185920 |268435456 '

summary
