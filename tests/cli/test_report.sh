#!/usr/bin/env bash
# test_report.sh — scripts/report.sh on the study fixture: REPORT.md has its sections, the figures it links
# exist, and its numbers are the ones computed by hand from tests/fixtures/study.csv (see test_fixture.c):
#   single 256/GPU steady epochs 2.80, 2.82 s -> T1 = 2.81; nccl 4 GPUs 256/GPU steady 0.74, 0.76 -> T4 = 0.75
#   speedup 2.81 / 0.75 = 3.75, efficiency 2.81 / (4 x 0.75) = 93.7 %
#   model: 58 steps x (single's median step 12.00855 ms + t(4, 44696872 B)) with t = 2*3*8 us + 2*3/4 * S / 150 GB/s
#          = 0.495 ms  ->  58 x 12.5035 ms = 0.725 s; model speedup 2.81 / 0.725 = 3.87
#   pipeline p = 4, M = 8: ideal bubble 3/11 = 27.3 %
# Without a benchmark CSV the model line is omitted with a one-line note. gnuplot is not needed: without it the
# report is written without figures.
set -u
root=$2
fixture=$root/tests/fixtures/study.csv
report=$root/scripts/report.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
has() { grep -qF -- "$2" "$1" && ok || bad "$1 lacks: $2"; }
hasre() { grep -qE -- "$2" "$1" && ok || bad "$1 lacks /$2/"; }

# ---- without an all-reduce benchmark
cp "$fixture" "$tmp/study.csv"
"$report" "$tmp/study.csv" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
md=$tmp/study/REPORT.md
[ $rc -eq 0 ] && [ -s "$md" ] && grep -qx "$md" "$tmp/stdout" && ok || { bad "report.sh exit $rc"; cat "$tmp/stderr"; }
has "$md" "# Scaling study: $tmp/study.csv"
has "$md" "NVIDIA H200; host h200-node-3; commit 1a2b3c4; 2026-01-05"
has "$md" "112 rows, 39 runs, 38 configurations; 1 run(s) left out"
has "$md" "no all-reduce benchmark: model line omitted"
for s in "## All-reduce model" "## resnet18 on fashion-mnist" "### Figures" "### Summary" "#### single" "#### naive" \
         "#### nccl" "#### pipeline" "### Runs that did not end ok"; do
    grep -qx -- "$s" "$md" && ok || bad "no section '$s'"
done
# nccl, 4 GPUs, 256/GPU: GPUs | batch | steps | best | speedup | efficiency | accuracy | status
hasre "$md" '^\| 4 \| 256 \| 58 \| 0\.750 \| 3\.75 \| 93\.7 % \| 90\.4 % \(lr 0\.4\) \| ok \(3\), diverged \(1\) \|$'
hasre "$md" '^\| 1 \| 256 \| 234 \| 2\.810 \| 1\.00 \| 100\.0 % \|'
# the emulated 2-node nccl run is a row of its own beside the one-node 2-GPU run, its link named
hasre "$md" '^\| 2 \(2 nodes\) \| 256 \| 117 \| 2\.655 \| 1\.06 \| 52\.9 % \|'
# pipeline, 4 stages, 8 micro-batches: measured bubble beside the formula
hasre "$md" '^\| 4 \| gpipe \| 1024 \| 8 \| 1\.034 \| 0\.842 \| 2\.37 \| 59\.2 % \| 31\.3 % \| 27\.3 % \|'
# the failure rows, and the killed run left out
hasre "$md" '^\| single \| 1 \| 32768 \| 0\.1 \| — \| oom \| 0 \|'
hasre "$md" '^\| nccl \| 4 \| 1024 \| 3\.2 \| — \| diverged \| 2 \|'
grep -q '20260105T090659Z-1-47819' "$md" && bad "the killed run appears in the report" || ok
# every linked figure exists beside the report (when gnuplot made them)
if command -v gnuplot >/dev/null; then
    n=0
    for f in $(grep -o '](\([^)]*\.png\))' "$md" | sed 's/^](//; s/)$//'); do
        n=$((n + 1))
        [ -s "$tmp/study/$f" ] && ok || bad "linked figure $f missing"
    done
    [ $n -eq 10 ] && ok || bad "$n figures linked, want 10"
else
    has "$md" "(no figures: gnuplot not found"
fi

# ---- with the benchmark next to the CSV (the default --allreduce): the alpha-beta fit and the model line
cp "$root/tests/fixtures/study_allreduce.csv" "$tmp/study_allreduce.csv"
"$report" "$tmp/study.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && ok || { bad "report.sh with benchmark: exit $rc"; cat "$tmp/stderr"; }
hasre "$md" '^\| nccl \(Ring\) \| 2\(n−1\)α \+ 2\(n−1\)/n·S·β \(ring\) \| 8\.00 \| 150\.0 \| 18 \| 2, 4 \|'
hasre "$md" '^\| naive \(p2p\) \| 2\(n−1\)α \+ 2\(n−1\)·S·β \(through GPU 0\) \| 15\.00 \| 40\.0 \| 18 \| 2, 4 \|'
# nccl 4 GPUs: GPUs | batch | steps | best | model | speedup | model speedup | efficiency | all-reduce measured / model
hasre "$md" '^\| 4 \| 256 \| 58 \| 0\.750 \| 0\.725 \| 3\.75 \| 3\.87 \| 93\.7 % \| 0\.535 / 0\.495 \|'
grep -q 'model line omitted' "$md" && bad "model line still omitted with a benchmark" || ok

# ---- two models in one CSV: a section and tables each (the fixture again, relabelled LeNet on MNIST)
{ cat "$fixture"; tail -n +2 "$fixture" | sed 's/,resnet18,fashion-mnist,/,lenet,mnist,/; s/^\([0-9TZ]*\)-/\1L-/'; } >"$tmp/two.csv"
"$report" "$tmp/two.csv" --out "$tmp/two" --allreduce "$root/tests/fixtures/study_allreduce.csv" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && grep -qx '## lenet on mnist' "$tmp/two/REPORT.md" && grep -qx '## resnet18 on fashion-mnist' "$tmp/two/REPORT.md" &&
    [ "$(grep -c '^| 4 | 256 | 58 | 0\.750 | 0\.725 | 3\.75 |' "$tmp/two/REPORT.md")" -eq 2 ] &&
    [ "$(grep -c '^#### nccl$' "$tmp/two/REPORT.md")" -eq 2 ] && ok || bad "two models: rc=$rc, tables missing"

# ---- --allreduce FILE and --out DIR; a benchmark without the needed columns omits the model with a reason
printf 'size,time\n4096,10\n' >"$tmp/odd.csv"
"$report" "$tmp/study.csv" --allreduce "$tmp/odd.csv" --out "$tmp/r2" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && ok || bad "--allreduce odd.csv: exit $rc"
has "$tmp/r2/REPORT.md" "no columns strategy, gpus, size_bytes (or bytes), time_us: model line omitted"
"$report" "$tmp/study.csv" --allreduce "$tmp/none.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && ok || bad "missing --allreduce file: rc=$rc"
"$report" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok || bad "no argument: rc=$rc"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
