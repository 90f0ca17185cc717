#!/usr/bin/env bash
# gpu_memcheck.sh — compute-sanitizer memcheck on short real LeNet runs (MNIST, 2 epochs of a few steps, so
# shuffling, gather, training, evaluation and the epoch boundary are all exercised) of single and, where 2 GPUs
# are present, naive: no error may be reported. scripts/sanitize.sh runs the rest (racecheck, nccl, pipeline),
# which reported errors on 2 H200s that are not yet understood (see the README).
set -u
bin=$1; root=$2
n_dev=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if ! "$bin" --help >/dev/null 2>&1 || [ "$n_dev" -lt 1 ]; then
    echo "SKIP: no CUDA device (nvidia-smi found none)"; exit 77
fi
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
if [ ! -x "$cs" ]; then echo "SKIP: compute-sanitizer not found (set COMPUTE_SANITIZER)"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
# run TOOL NAME scaling-args...
run() {
    local tool=$1 name=$2; shift 2
    "$cs" --tool "$tool" --error-exitcode 9 "$@" >"$tmp/$name.log" 2>&1
    local rc=$?
    if [ $rc -eq 0 ] && grep -q "ERROR SUMMARY: 0 errors" "$tmp/$name.log"; then
        pass=$((pass + 1)); echo "ok   $tool $name"
    else
        fail=$((fail + 1)); echo "FAIL $tool $name: exit $rc"; grep -m 20 -E "=========" "$tmp/$name.log"; tail -n 5 "$tmp/$name.log"
    fi
}
L=(--model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --epochs 2 --steps 8)
run memcheck single --leak-check full "$bin" --strategy single "${L[@]}" --out "$tmp/a.csv"
if [ "$n_dev" -ge 2 ]; then
    run memcheck naive "$bin" --strategy naive --gpus 2 "${L[@]}" --out "$tmp/c.csv"
else
    echo "note: 1 GPU: naive is not sanitised here"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
