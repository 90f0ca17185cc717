#!/usr/bin/env bash
# pipe.sh — the pipeline's GPU work in one device call on 4 GPUs, from the repository root, everything it measures
# under $OUT: the build (scripts/setup.sh --offline .carry/offline), the pipeline GPU tests (ctest -R pipeline: the
# backward split, zero bubble and the cuts inside blocks against `single`, memory, hand splits, the command's rows and
# --micro-batches auto), then tools/bench_pipeline.sh in its short form with what is left of 7 minutes 40 s (it runs
# in priority order: single's batches, zb on 4 and 2 stages, PyTorch's pipelining, 1f1b, gpipe, and lists what it
# skipped), its table printed last.
#
#   OUT=/path tools/device/pipe.sh
#
# $OUT afterwards: pipe.log (this script's output), setup.log, tests.log (every test's output), summary.txt (the
# table and the targets), bench.tar.gz (the bench's CSVs, logs, PyTorch's output).
set -u
: "${OUT:?set OUT to the folder the results go to}"
total=${PIPE_TOTAL_S:-460}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
exec > >(tee "$OUT/pipe.log") 2>&1
echo "== pipe.sh: $(date -u +%FT%TZ), $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s):" \
    "$(nvidia-smi -L 2>/dev/null | head -1)"
echo "   commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo -dirty)"

echo "== setup ($(($(date +%s) - t0)) s)"
device_setup "$OUT/setup.log" 300

# Side by side (-j3: they check values, not time), but the memory test alone: it reads each GPU's memory in use.
echo "== pipeline GPU tests ($(($(date +%s) - t0)) s)"
timeout 300 ctest --test-dir build -R pipeline -E test_pipeline_memory -j3 --timeout 240 --output-on-failure \
    >"$OUT/tests.log" 2>&1
echo "   ctest -R pipeline (but memory): exit $?"
timeout 120 ctest --test-dir build -R test_pipeline_memory --timeout 100 --output-on-failure >>"$OUT/tests.log" 2>&1
echo "   ctest -R test_pipeline_memory: exit $?"
grep -E "^ *[0-9]+/[0-9]+ Test|tests passed|^FAIL" "$OUT/tests.log" | sed 's/^/   /' | head -n 40

left=$((total - ($(date +%s) - t0)))
budget=$((left - 110))   # what may start; the last step started runs on past it
[ "$budget" -lt 60 ] && budget=60
echo "== bench_pipeline.sh short ($(($(date +%s) - t0)) s; steps start until ${budget} s from now, killed at ${left} s)"
bench="$OUT/bench"
mkdir -p "$bench"
BUDGET_S=$budget SCALING=./scaling timeout "$left" tools/bench_pipeline.sh "$bench" short >"$OUT/bench.log" 2>&1
rc=$?
grep -E "^== |^   " "$OUT/bench.log" | grep -v "^   [0-9]" | cut -c1-200
[ $rc -eq 124 ] && echo "   (bench stopped at the deadline: the summary below is of what ran)"
SUMMARY_ONLY=1 SCALING=./scaling tools/bench_pipeline.sh "$bench" short >/dev/null 2>&1
cp "$bench/summary.txt" "$OUT/summary.txt" 2>/dev/null
tar -czf "$OUT/bench.tar.gz" -C "$OUT" bench bench.log 2>/dev/null && rm -rf "$bench" "$OUT/bench.log"
echo "== done in $(($(date +%s) - t0)) s"
echo
cat "$OUT/summary.txt" 2>/dev/null || echo "(no summary: see bench.tar.gz)"
