#!/usr/bin/env bash
# dp.sh — the data-parallel work of one device call on a 4-GPU node, from the repository root, everything under $OUT:
# setup (scripts/setup.sh --offline .carry/offline), the data-parallel GPU tests (ctest -R 'test_dp|gpu_dp'), then
# the A/B benchmark (bench_dp.sh: ResNet-50 and ResNet-18, nccl with each knob, mpirun, PyTorch DDP eager and
# compiled) within what is left of DP_BUDGET_S (default 470 s for the whole script); its summary table is printed
# last. $OUT receives setup.log, tests.log, bench.tgz (every run's CSV, output and GPU clocks), summary.txt.
#
#   OUT=/some/dir tools/device/dp.sh
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
total=${DP_BUDGET_S:-470}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

say "setup"
device_setup "$OUT/setup.log"
nvidia-smi -L
nvidia-smi topo -m | head -n 6

# The tests run side by side (-j3: they check values, not time); -V keeps test_dp_update's table in the log.
say "GPU tests: ctest -R 'test_dp|gpu_dp'"
ctest --test-dir build -R 'test_dp|gpu_dp' -V -j3 --timeout 200 >"$OUT/tests.log" 2>&1
test_rc=$?
grep -E '^ *[0-9]+/[0-9]+ Test|tests passed|FAIL' "$OUT/tests.log" | sed 's/^/  /' | head -n 40
grep -E 'SGD per bucket|weight gradients into the wire' "$OUT/tests.log" | sed 's/^[0-9]*: /  /' | head -n 12
say "tests: exit $test_rc"

bench=tools/bench_dp.sh
left=$((total - ($(date +%s) - t0) - 15))   # 15 s for the summary and the tarball
say "benchmark: $bench, BUDGET_S=$left"
work=$(mktemp -d)
SCALING=./scaling BUDGET_S=$left STEPS=${STEPS:-100} EPOCHS=${EPOCHS:-3} bash "$bench" "$work/bench" \
    >"$work/bench.log" 2>&1
bench_rc=$?
grep -E '^== |^   exit|^   [0-9]+ s' "$work/bench.log" | cut -c1-200
mv "$work/bench.log" "$work/bench/"
cp "$work/bench/summary.txt" "$OUT/summary.txt" 2>/dev/null
tar czf "$OUT/bench.tgz" -C "$work" bench
rm -rf "$work"
say "benchmark: exit $bench_rc; tests: exit $test_rc"
echo
cat "$OUT/summary.txt" 2>/dev/null || echo "no summary: see bench.tgz (bench/bench.log)"
