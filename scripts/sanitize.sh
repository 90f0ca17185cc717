#!/usr/bin/env bash
# sanitize.sh — compute-sanitizer memcheck and racecheck on a short run of every strategy, keeping the full logs:
# the test gpu_memcheck (tests/cli/gpu_memcheck.sh says what is instrumented and why) with its logs in OUTDIR.
#
#   scripts/sanitize.sh [OUTDIR]      (needs build/ from setup.sh, data/mnist, 2 GPUs for the multi-GPU runs)
#   SANITIZE_ONLY=REGEX scripts/sanitize.sh [OUTDIR]   (only the checks whose "tool name" REGEX matches)
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-results/sanitize}
[ -x build/scaling ] || { echo "sanitize: error: build/scaling not found (run scripts/setup.sh first)" >&2; exit 2; }
SANITIZE_KEEP=$out bash tests/cli/gpu_memcheck.sh "$PWD/build/scaling" "$PWD"
