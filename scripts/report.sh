#!/usr/bin/env bash
# report.sh — `scaling report` under its old name, for the scripts and habits that call it: REPORT.md, the figures'
# data files and the figures of a study CSV (doc/report.md says what they mean). Every argument goes to
# `scaling report` (see `scaling report --help`). The binary: $SCALING, else build/scaling of this tree, else
# `scaling` on the PATH.
#
#   scripts/report.sh results/X.csv [--out DIR] [--allreduce FILE] [--net-allreduce FILE] [--net-gbs GBS]
#                     [--net-latency-us US] [--gpus-per-node G]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin=${SCALING:-$ROOT/build/scaling}
if [[ ! -x $bin ]]; then
    bin=$(command -v scaling) || { echo "report: no scaling binary (build it: cmake -S . -B build && cmake --build build)" >&2; exit 2; }
fi
exec "$bin" report "$@"
