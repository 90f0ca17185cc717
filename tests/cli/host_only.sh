#!/usr/bin/env bash
# host_only.sh — the host-only build's `scaling` (configured with -DSCALING_CUDA=OFF or where no CUDA toolkit was
# found): --version says what it is; a training command (the default study, a sweep, --bench) gets one line saying
# this build has no CUDA and exit 2, writing nothing; --dry-run, `scaling tsv` and `scaling report` (with its figures
# where gnuplot is installed) work on a committed study; --help lists the strategies from their one table.
set -u
bin=$1
ROOT=$(cd "$2" && pwd)
source "$(dirname "$0")/lib.sh"

"$bin" --version >"$tmp/out" 2>&1; rc=$?
check "--version: exit 0, says host-only (got $rc: $(head -c 300 "$tmp/out"))" \
    $([ $rc -eq 0 ] && grep -q "built without CUDA (host-only)" "$tmp/out"; echo $?)
"$bin" --help >"$tmp/out" 2>&1; rc=$?
check "--help: exit 0, every strategy listed" $([ $rc -eq 0 ] && for s in single naive nccl pipeline; do
    grep -qE "^  $s " "$tmp/out" || exit 1; done; echo $?)

# Training, in every form: one line naming the missing CUDA, nothing written.
expect_error "this build of scaling has no CUDA" --dataset synthetic --epochs 1
expect_error "this build of scaling has no CUDA" --strategy nccl --gpus 2 --dataset synthetic
expect_error "this build of scaling has no CUDA" --bench allreduce --gpus 2
(cd "$tmp" && "$bin" >"$tmp/stdout" 2>"$tmp/stderr"); rc=$?
check "the default study: exit 2, one line (got $rc, $(wc -l <"$tmp/stderr") lines)" \
    $([ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q "no CUDA" "$tmp/stderr" && [ ! -s "$tmp/stdout" ] &&
      [ -z "$(ls "$tmp" | grep -v -e stdout -e stderr -e out)" ]; echo $?)
# Bad input is still named as such, before the missing CUDA.
expect_error "--gpus" --gpus 0 --dataset synthetic --dry-run

# --dry-run: the runs, nothing written.
"$bin" --dry-run --strategy nccl --gpus 1,2 --dataset synthetic --epochs 2 --out "$csv" >"$tmp/out" 2>&1; rc=$?
check "--dry-run: exit 0, two runs, no CSV (got $rc: $(head -c 300 "$tmp/out"))" \
    $([ $rc -eq 0 ] && grep -q "dry run: strategy nccl" "$tmp/out" && [ ! -e "$csv" ]; echo $?)

# A committed study: tsv reads it; the report makes REPORT.md (and figures where gnuplot is installed).
study=$ROOT/results/default-h200x2-2026-11-27/study.csv
"$bin" tsv "$study" >"$tmp/tsv" 2>&1; rc=$?
check "tsv of a committed study: exit 0, its header and rows" \
    $([ $rc -eq 0 ] && head -1 "$tmp/tsv" | grep -q "^run_id	" && [ "$(wc -l <"$tmp/tsv")" -gt 10 ]; echo $?)
"$bin" report "$study" --out "$tmp/report" >"$tmp/out" 2>&1; rc=$?
check "report of a committed study: exit 0, REPORT.md (got $rc: $(tail -c 300 "$tmp/out"))" \
    $([ $rc -eq 0 ] && [ -s "$tmp/report/REPORT.md" ]; echo $?)
if command -v gnuplot >/dev/null; then
    check "report: its figures drawn" $(ls "$tmp/report"/*.svg >/dev/null 2>&1; echo $?)
fi
summary
