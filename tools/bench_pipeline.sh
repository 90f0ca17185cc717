#!/usr/bin/env bash
# bench_pipeline.sh — the pipeline at its best beside its baselines and PyTorch's own pipelining, in one call:
# ResNet-101 (MODEL), bf16, synthetic 224x224, global batch 512 (BATCH), SGD momentum 0.9. Ours: `single` at the
# batches 64..BATCH (the same global batch, and its fastest), the pipeline on 2 and 4 stages under zb, 1f1b and gpipe
# at --micro-batches auto,4,8,16; PyTorch (tools/torch/torch_pipeline.py): torchvision's model cut at our zb split,
# torch.distributed.pipelining's GPipe, 1F1B and zero bubble, and its eager one-GPU baseline. The table printed last
# (and OUTDIR/summary.txt) gives images/s, the speedup against single at the same batch and at its fastest, the bubble
# measured beside the schedule's ideal, the stage balance and busy times, and the targets MET / NOT MET. Speed
# targets live here and in the recorded output, never in a test. Builds nothing.
#
#   tools/bench_pipeline.sh OUTDIR [short]
#
# Run where ./scaling is (or set SCALING). short (the GPU script's form): 6 steps per epoch, 2 epochs, zb at auto and
# 8, 1f1b at auto, gpipe at 8 (auto's probes, listed in the summary, time M = p, 2p, ... for zb and 1f1b), PyTorch
# at M 4 and 8 in 3 bursts of 4 steps; runs in priority order (single at BATCH, zb, single's smaller batches, PyTorch,
# 1f1b, gpipe) and skips what would start after BUDGET_S seconds (default 300; each skip is a line in the summary).
# About 5 minutes on 4 H100/H200 (the first runs search convolution algorithms, shared through
# OUTDIR/conv_algos.tsv). The full form: 30 steps per epoch, 3 epochs, every schedule at auto,4,8,16, about 15
# minutes. SUMMARY_ONLY=1 only rewrites the summary from OUTDIR.
set -uo pipefail
out=${1:?usage: bench_pipeline.sh OUTDIR [short]}
mode=${2:-full}
bin=${SCALING:-./scaling}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model=${MODEL:-resnet101}
batch=${BATCH:-512}
budget=${BUDGET_S:-300}
[ -x "$bin" ] || { echo "bench_pipeline.sh: no $bin (run where the build put scaling, or set SCALING)" >&2; exit 2; }
mkdir -p "$out"
if [ "$mode" = short ]; then   # auto's probes time M = p, 2p, ... anyway: the summary lists them
    steps=6 epochs=2 torch_steps=4
    zb_m=auto,8 f1b_m=auto gpipe_m=8
else
    steps=30 epochs=3 torch_steps=10
    zb_m=auto,4,8,16 f1b_m=auto,4,8,16 gpipe_m=auto,4,8,16
fi
n_gpu=$(nvidia-smi -L 2>/dev/null | wc -l)
cache="$out/conv_algos.tsv"
start=$SECONDS

summary() {
python3 - "$out" "$bin" "$here" "$batch" <<'PY' | tee "$out/summary.txt"
import csv, os, sys
out, binary, here, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, here)
import report_runs
# Steady medians as the report counts them (study/study.c); the pipeline's own cells from its last steady row.
runs = {r["run_id"]: r for r in report_runs.runs(binary, f"{out}/ours.csv")}
last = {}
if os.path.exists(f"{out}/ours.csv"):
    for row in csv.DictReader(open(f"{out}/ours.csv")):
        if row["status"] == "ok" and row["phase"] == "steady": last[row["run_id"]] = row
ours = []
for rid, r in runs.items():
    row = last.get(rid, {})
    ips = float(r["images_per_s_median"]) if r["images_per_s_median"] else 0.0
    ours.append(dict(strategy=r["strategy"], gpus=int(r["gpus"]), batch=int(r["global_batch"]), ips=ips,
                     status=r["status"], sched=row.get("schedule", ""), M=row.get("micro_batches", ""),
                     split=row.get("split", ""), bubble=row.get("bubble", ""), ideal=row.get("bubble_ideal", ""),
                     balance=row.get("stage_balance", ""), busy=row.get("stage_busy_ms", ""),
                     mem=row.get("peak_mem_mb", ""), gpu=r["gpu_name"], commit=r["git_commit"]))
singles = [o for o in ours if o["strategy"] == "single" and o["ips"] > 0]
same = next((o["ips"] for o in singles if o["batch"] == batch), None)
fast = max(singles, key=lambda o: o["ips"]) if singles else None
torch = list(csv.DictReader(l for l in open(f"{out}/torch.csv") if not l.startswith("#"))) \
    if os.path.exists(f"{out}/torch.csv") else []
tsingle = [t for t in torch if t["schedule"] == "single" and float(t["images_per_s"]) > 0]
tsame = next((float(t["images_per_s"]) for t in tsingle if int(t["global_batch"]) == batch), None)
tfast = max(tsingle, key=lambda t: float(t["images_per_s"])) if tsingle else None
if ours: print(f"GPU: {ours[0]['gpu']}, commit {ours[0]['commit']}")
print(f"ours: single {same or 0:.0f} images/s at batch {batch}; fastest {fast['ips']:.0f} at batch {fast['batch']}"
      if fast else "ours: no single row")
if tfast:
    print(f"PyTorch eager: single {tsame or 0:.0f} images/s at batch {batch}; fastest "
          f"{float(tfast['images_per_s']):.0f} at batch {tfast['global_batch']}")
def x(v, ref): return f"{v / ref:5.2f}x" if ref and v else "    -"
hdr = (f"{'impl':5} {'sched':5} {'p':>1} {'M':>4} {'images/s':>8} {'vs same':>7} {'vs fast':>7} {'bubble':>6} "
       f"{'ideal':>6} {'bal':>5}  busy ms/stage           split")
print(hdr); print("-" * len(hdr))
best = {}
for o in sorted((o for o in ours if o["strategy"] == "pipeline"),
               key=lambda o: (o["gpus"], o["sched"], int(o["M"] or 0))):
    print(f"ours  {o['sched']:5} {o['gpus']:1d} {o['M']:>4} {o['ips']:8.0f} {x(o['ips'], same):>7} "
          f"{x(o['ips'], fast and fast['ips']):>7} {o['bubble'][:6]:>6} {o['ideal'][:6]:>6} {o['balance'][:5]:>5}  "
          f"{o['busy']:24} {o['split']}  {o['status'] if o['status'] != 'ok' else ''}")
    best[o["gpus"]] = max(best.get(o["gpus"], 0), o["ips"])
tbest = {}
for t in torch:
    if t["schedule"] == "single": continue
    v, p = float(t["images_per_s"]), int(t["stages"])
    print(f"torch {t['schedule']:5} {p:1d} {t['micro_batches']:>4} {v:8.0f} {x(v, tsame):>7} "
          f"{x(v, tfast and float(tfast['images_per_s'])):>7} {'':>6} {'':>6} {'':>5}  {'':24} {t['split']}  "
          f"{t['note']}")
    tbest[p] = max(tbest.get(p, 0), v)
# --micro-batches auto's probes (7 steps each, the median of the last 4) from the runs' stderr
import glob, re
for log in sorted(glob.glob(f"{out}/*_[0-9].log")):
    probes = re.findall(r"--micro-batches auto: M = (\d+): ([0-9.]+) ms per step, (\d+) images/s", open(log).read())
    chosen = re.findall(r"--micro-batches auto: M = (\d+) \(", open(log).read())
    if probes:
        print(f"auto probes {os.path.basename(log)[:-4]}: " + ", ".join(f"M={m} {ips}" for m, _, ips in probes) +
              f" images/s; chosen M={','.join(chosen)}")
for line in open(f"{out}/skipped.txt") if os.path.exists(f"{out}/skipped.txt") else ():
    print("skipped (time budget): " + line.strip())
print("targets (ours: its best configuration; speedups of images/s):")
def judge(name, v, want, at_least=False):
    ok = v >= want if at_least else v > want
    print(f"  {name}: {v:.2f} (want {'>=' if at_least else '>'} {want}) : {'MET' if ok else 'NOT MET'}" if v
          else f"  {name}: not measured")
for p, same_t, tg in ((2, 1.8, 1.41), (4, 3.3, 2.77)):
    b = best.get(p, 0)
    judge(f"{p} stages vs single at batch {batch}", b / same if same else 0, same_t, at_least=True)
    judge(f"{p} stages vs single at its fastest batch (torchgpipe {tg}x)", b / fast["ips"] if fast else 0, tg)
    if tbest.get(p): judge(f"{p} stages vs torch.distributed.pipelining's best ({tbest[p]:.0f} images/s)",
                           b / tbest[p], 1.0)
PY
}
if [ "${SUMMARY_ONLY:-0}" = 1 ]; then
    summary
    exit 0
fi
rm -f "$out/ours.csv" "$out/torch.csv" "$out/skipped.txt"

# Runs CMD unless BUDGET_S has passed (then one line in skipped.txt); its output in OUTDIR/NAME.log.
step() {   # NAME CMD...
    local name=$1
    shift
    if [ "$mode" = short ] && [ $((SECONDS - start)) -ge "$budget" ]; then
        echo "$name" >>"$out/skipped.txt"
        echo "== $name: skipped ($((SECONDS - start)) s of the $budget s budget spent)"
        return 0
    fi
    echo "== $name ($((SECONDS - start)) s)"
    "$@" >"$out/$name.log" 2>&1 || echo "   $name: exit $? (see $name.log)"
    grep -E "^pipeline: (split|--micro-batches auto: M = [0-9]+ \(|stage busy ms/step predicted)|oom|failed" \
        "$out/$name.log" | cut -c1-220 | sed 's/^/   /' || true
}
common=(--model "$model" --dataset synthetic --math bf16 --lr 0.1 --momentum 0.9 --epochs "$epochs" --steps "$steps"
        --conv-cache "$cache" --timeout 600 --out "$out/ours.csv")   # auto probes a few setups in one run
pipe() {   # SCHEDULE STAGES MICRO
    "$bin" --strategy pipeline --gpus "$2" --scale strong --batch "$batch" --schedule "$1" --micro-batches "$3" \
        "${common[@]}"
}
ladder="" smaller=""
for b in 64 128 256 512 1024; do [ "$b" -le "$batch" ] && ladder=${ladder:+$ladder,}$b; done
for b in 64 128 256 512; do [ "$b" -lt "$batch" ] && smaller=${smaller:+$smaller,}$b; done
# Single at the pipeline's batch first (the first baseline), the zero-bubble pipeline, single's smaller batches (its
# fastest: the second baseline), then PyTorch: what matters most runs first when the budget is short.
step single "$bin" --strategy single --batch "$batch" "${common[@]}"
for p in 4 2; do [ "$n_gpu" -ge "$p" ] && step "zb_$p" pipe zb "$p" "$zb_m"; done
[ -n "$smaller" ] && step single_smaller "$bin" --strategy single --batch "$smaller" "${common[@]}"

# PyTorch at our zb splits (the auto run's, else the first), at M 4 and 8.
splits=()
for p in 4 2; do
    s=$(python3 - "$out/ours.csv" "$p" <<'PY'
import csv, os, sys
path, p = sys.argv[1], sys.argv[2]
rows = [r for r in csv.DictReader(open(path))] if os.path.exists(path) else []
rows = [r for r in rows if r["strategy"] == "pipeline" and r["gpus"] == p and r["schedule"] == "zb" and r["split"]]
print(rows[0]["split"] if rows else "")
PY
)
    [ -n "$s" ] && splits+=(--split "$p=$s")
done
if python3 -c 'import torch, torchvision, torch.distributed.pipelining' 2>/dev/null; then
    stages=""
    for p in 2 4; do [ "$n_gpu" -ge "$p" ] && stages=${stages:+$stages,}$p; done
    step torch timeout 400 python3 "$here/torch/torch_pipeline.py" --model "$model" --batch "$batch" \
        --stages "$stages" "${splits[@]}" --schedules gpipe,1f1b,zb --micro 4,8 --single "$ladder" \
        --steps "$torch_steps" --reps 3
    grep -v '^#' "$out/torch.log" | grep -E '^(impl|torch),' >"$out/torch.csv" || true
else
    echo "== PyTorch skipped: no torch / torchvision / torch.distributed.pipelining"
fi
for p in 4 2; do [ "$n_gpu" -ge "$p" ] && step "1f1b_$p" pipe 1f1b "$p" "$f1b_m"; done
for p in 4 2; do [ "$n_gpu" -ge "$p" ] && step "gpipe_$p" pipe gpipe "$p" "$gpipe_m"; done
echo "== done in $((SECONDS - start)) s"
summary
