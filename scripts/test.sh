#!/usr/bin/env bash
# test.sh — the project's test command (README and CI): sets the machine up and builds (scripts/setup.sh, which
# takes the same arguments), then runs every ctest test. GPU tests exit 77 without a GPU and show as skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh "$@"
ctest --test-dir build --output-on-failure -j2
