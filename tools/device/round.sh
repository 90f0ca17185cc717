#!/usr/bin/env bash
# round.sh — the end of a round in one call of a 2- to 4-GPU node, from the repository root, everything under $OUT:
# setup, the default study exactly as README runs it (`./scaling`), then the GPU suite (ctest -L gpu) but the tests
# named in SKIP (gpu_memcheck alone takes over 5 minutes: its own call) with what is left of ROUND_BUDGET_S.
#
#   OUT=/some/dir [SKIP='gpu_memcheck|...'] [ROUND_BUDGET_S=540] tools/device/round.sh
#
# $OUT afterwards: setup.log, study.out / study.err (the study's stdout and stderr, as a newcomer sees them),
# study.tgz (its results/default-*/ folder: study.csv, study_allreduce.csv, REPORT.md), tests.log, summary.txt.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${ROUND_BUDGET_S:-540}
skip=${SKIP:-gpu_memcheck}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

say "setup"
device_setup "$OUT/setup.log"
nvidia-smi -L

say "the default study: ./scaling"
s0=$(date +%s)
timeout $(($(left) - 60)) ./scaling >"$OUT/study.out" 2>"$OUT/study.err"
study_rc=$?
study_s=$(($(date +%s) - s0))
tail -n 30 "$OUT/study.out"
# The study names its folder on its last line (the committed results/default-* folders sort after a fresh one's).
folder=$(sed -n 's|^# report: \(.*\)/REPORT.md$|\1|p' "$OUT/study.out" | tail -n 1)
[ -n "$folder" ] && tar czf "$OUT/study.tgz" "$folder"
say "the default study: exit $study_rc in $study_s s, folder ${folder:-none}"

say "GPU suite: ctest -L gpu -E '$skip' -j3 within $(($(left) - 10)) s"
timeout $(($(left) - 10)) ctest --test-dir build -L gpu -E "$skip" -j3 --timeout 240 --output-on-failure \
    >"$OUT/tests.log" 2>&1
tests_rc=$?
{
    echo "GPU: $(nvidia-smi -L | head -n 1), $(nvidia-smi -L | grep -c '^GPU') GPU(s)"
    echo "default study: exit $study_rc, $study_s s, $folder"
    echo "GPU suite (ctest -L gpu -E '$skip'): exit $tests_rc$([ $tests_rc -eq 124 ] && echo ' (stopped at the deadline)')"
    grep -E '^ *[0-9]+/[0-9]+ Test' "$OUT/tests.log" | sed 's/^ */  /'
    grep -E 'tests passed|^\s+[0-9]+ - ' "$OUT/tests.log"
} | tee "$OUT/summary.txt"
say "done"
