#!/usr/bin/env bash
# test.sh — the project's test command (README and CI): sets the machine up and builds (scripts/setup.sh, which
# takes the same arguments), then runs every ctest test but the sanitized build's (CI runs that too, below). GPU tests
# exit 77 without a GPU and show as skipped.
# A first build on a machine without a GPU holds PTX for compute_80 alone: the GPU tests cannot run there, and one
# architecture compiles several times faster than the user build's seven (scripts/setup.sh builds those). With a GPU,
# a first build is for that GPU alone (--local-gpu). An existing build keeps its architectures.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
args=()
if [[ ! -f build/CMakeCache.txt ]]; then
  if nvidia-smi -L >/dev/null 2>&1; then
    echo "test: a GPU is here: building for it alone (scripts/setup.sh --local-gpu)" >&2
    args+=(--local-gpu)
  else
    echo "test: no GPU here: building PTX for compute_80 alone, enough for the host tests (scripts/setup.sh builds every architecture)" >&2
    args+=(--cuda-arch 80-virtual)
  fi
fi
bash scripts/setup.sh "${args[@]}" "$@"
# The sanitized host-only build (label sanitize, a second build of the C code) runs where SCALING_TEST_SANITIZE=1: CI.
if [[ ${SCALING_TEST_SANITIZE:-0} == 1 ]]; then
  ctest --test-dir build --output-on-failure -j2
else
  echo "test: the sanitized host-only build (ctest -L sanitize) is left out; SCALING_TEST_SANITIZE=1 runs it too" >&2
  ctest --test-dir build --output-on-failure -j2 -LE sanitize
fi
