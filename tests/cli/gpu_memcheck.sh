#!/usr/bin/env bash
# gpu_memcheck.sh — compute-sanitizer memcheck on a short real LeNet run (MNIST, 2 epochs of 20 steps, so
# shuffling, gather, training, evaluation and the epoch boundary are all exercised): no error may be reported.
set -u
bin=$1; root=$2
if ! "$bin" --help >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no CUDA device (nvidia-smi found none)"; exit 77
fi
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
if [ ! -x "$cs" ]; then echo "SKIP: compute-sanitizer not found (set COMPUTE_SANITIZER)"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cs" --tool memcheck --leak-check full --error-exitcode 9 "$bin" --model lenet --dataset mnist \
    --data-dir "$root/data/mnist" --batch 64 --epochs 2 --steps 20 --out "$tmp/m.csv" >"$tmp/log" 2>&1
rc=$?
tail -n 5 "$tmp/log"
if [ $rc -eq 0 ] && grep -q "ERROR SUMMARY: 0 errors" "$tmp/log"; then echo "1 passed, 0 failed"; exit 0; fi
echo "FAIL: compute-sanitizer exit $rc"; grep -m 20 -E "=========" "$tmp/log"; echo "0 passed, 1 failed"; exit 1
