#!/usr/bin/env bash
# final.sh — one call of one GPU after the round's engine changes: the whole one-GPU test suite, the default study as
# README runs it (no options), and the regression gate on a real slowdown (ResNet-18 bf16, default against
# SCALING_BN=cudnn SCALING_CONV=legacy).
#
#   OUT=/some/dir tools/device/final.sh
#
# $OUT afterwards: summary.txt, default.tar.gz (the default study's folder), logs.tar.gz.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${FINAL_BUDGET_S:-560}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
device_begin

say "GPU tests: ctest -L gpu -j3"
timeout 300 ctest --test-dir build -L gpu -j3 --timeout 280 >"$L/gpu_tests.log" 2>&1
say "gpu tests: exit $?"
grep -E "tests passed|\*\*\*|Failed|Timeout|Not Run" "$L/gpu_tests.log" | tee -a "$OUT/summary.txt"

say "default study (./scaling, no options)"
timeout $(($(left) - 90)) ./scaling >"$L/default.out" 2>"$L/default.err"
say "default study: exit $?"
grep '^#' "$L/default.out" | grep -E 'answer|soonest|GPU:|missed|reached|fit' | tee -a "$OUT/summary.txt"
d=$(ls -d results/default-* 2>/dev/null | tail -n 1)
[ -n "$d" ] && tar -czf "$OUT/default.tar.gz" "$d"

say "gate on a real slowdown"
g=(--model resnet18 --dataset fashion-mnist --math bf16 --epochs 3 --seed 1 --lr 0.1)
if (($(left) > 50)); then
    timeout 40 ./scaling "${g[@]}" --out "$L/gate_base.csv" >"$L/gate_base.out" 2>&1
    SCALING_BN=cudnn SCALING_CONV=legacy timeout 40 ./scaling "${g[@]}" --out "$L/gate_new.csv" >"$L/gate_new.out" 2>&1
    ./scaling report "$L/gate_new.csv" --baseline "$L/gate_base.csv" --out "$L/gate_report" >"$L/gate.out" 2>&1
    say "gate: exit $? (1: a regression found)"
    grep -E '^# summary' "$L/gate_base.out" "$L/gate_new.out" | tee -a "$OUT/summary.txt"
    grep -iE 'regression|within noise' "$L/gate.out" | head -n 5 | tee -a "$OUT/summary.txt"
fi
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
say "done"
