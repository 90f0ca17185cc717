#!/usr/bin/env bash
# gpu_trace.sh — --trace on real runs: single, GPT-2's single and nccl (and naive, nccl, pipeline where 2 GPUs exist)
# write valid Chrome-trace JSON with forward, backward and update ranges on every GPU (communication ranges for the
# multi-GPU ones: all-reduce and copies; for the pipeline, a copy into every stage), ordered per GPU and stream, each
# lasting more than zero time. naive's GPU 0 sums over the peer link by itself, so only it has a communication range
# (fp32 gradients: the other GPU casts nothing).
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 1
if ! command -v python3 >/dev/null; then echo "SKIP: no python3 to read the JSON"; exit 77; fi
L=(--model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --epochs 2 --steps 30)
check() {   # check NAME JSON GPUS NEED_COMM (0: none, 1: on every GPU, first: on the first GPU)
    if python3 - "$2" "$3" "$4" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); gpus = int(sys.argv[2]); comm = sys.argv[3]
x = [e for e in d["traceEvents"] if e["ph"] == "X"]
assert x, "no ranges"
for a, b in zip(x, x[1:]):
    assert (a["pid"], a["tid"], a["ts"]) <= (b["pid"], b["tid"], b["ts"]), ("order", a, b)
assert all(e["dur"] > 0 for e in x), "a range of zero length"
assert len({e["pid"] for e in x}) == gpus, "GPUs"
pids = sorted({e["pid"] for e in x})
for g in pids:
    names = {e["name"].split()[0] for e in x if e["pid"] == g}
    assert {"forward", "backward", "update"} <= names, names
    if comm == "1" or (comm == "first" and g == pids[0]):
        assert any(e["tid"] >= 1 for e in x if e["pid"] == g), "no communication range on GPU %d" % g
PY
    then pass=$((pass + 1)); echo "ok   $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi
}
"$bin" --strategy single "${L[@]}" --trace "$tmp/single.json" --out "$tmp/a.csv" >/dev/null 2>"$tmp/err" \
    || { cat "$tmp/err"; }
check single "$tmp/single.json" 1 0
# GPT-2: single's traced steps in pieces, and nccl's on one GPU in a backward piece per unit (no communication there).
G=(--model gpt2 --model-size tiny --dataset synthetic --math bf16 --epochs 2 --steps 30)
for s in single nccl; do
    x=(); [ $s = nccl ] && x=(--bucket-mb 0.001)
    "$bin" --strategy $s "${G[@]}" "${x[@]}" --trace "$tmp/gpt2_$s.json" --out "$tmp/g.csv" >/dev/null 2>"$tmp/err" \
        || cat "$tmp/err"
    check "gpt2 $s" "$tmp/gpt2_$s.json" 1 0
done
if [ "$n_dev" -ge 2 ]; then
    for s in naive nccl pipeline; do
        x=(); [ $s = pipeline ] && x=(--micro-batches 4 --schedule 1f1b)
        "$bin" --strategy $s --gpus 2 "${L[@]}" "${x[@]}" --trace "$tmp/$s.json" --out "$tmp/b.csv" >/dev/null \
            2>"$tmp/err" || cat "$tmp/err"
        need=1; [ $s = naive ] && need=first
        check $s "$tmp/$s.json" 2 $need
    done
    # The pipeline's ranges name their micro-batch: 5 steps x 4 micro-batches of forward and of backward per GPU.
    if python3 - "$tmp/pipeline.json" <<'PY'
import json, sys
x = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]
for g in {e["pid"] for e in x}:
    for kind in ("forward", "backward"):
        n = sum(1 for e in x if e["pid"] == g and e["name"].startswith(kind + " mb"))
        assert n == 20, (g, kind, n)
    assert sum(1 for e in x if e["pid"] == g and e["name"] == "update") == 5, g
PY
    then pass=$((pass + 1)); echo "ok   pipeline ranges per micro-batch"; else fail=$((fail + 1)); echo "FAIL pipeline ranges per micro-batch"; fi
fi
summary
