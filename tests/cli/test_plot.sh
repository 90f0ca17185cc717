#!/usr/bin/env bash
# test_plot.sh — the figures of `scaling report` on the study fixture (tests/fixtures/study.csv, made by
# test_fixture.c): every figure the fixture has data for has its data file and is drawn as a non-empty PNG of the
# size plots/common.gp sets (read from the IHDR chunk) and as an SVG holding its title and the caption with the GPU
# and the date; figures without data are skipped with one line each; a line cut by a kill and a quoted GPU name (a
# comma) are read correctly; the
# breakdown takes idle from idle_ms, keeps runs over another link apart, and reads an older CSV without the column.
# The precision fixture (tests/fixtures/study_math.csv: tf32 and bf16, fp32 and bf16 gradients; constructed, see
# test_fixture.c) gets a line per strategy, batch and precision, each naming it, and its speedups are over single
# in the same math, checked against hand-computed values; a study in one precision names none, and reads the same
# without the grad_dtype column (a CSV older than it).
# Skips (77) where gnuplot is missing (scripts/setup.sh installs gnuplot-nox; CI has it).
set -u
root=$2
fixture=$root/tests/fixtures/study.csv
scaling=$1
plot() {   # plot CSV [OUTDIR]: the report's figures (and REPORT.md) into OUTDIR, default the CSV's path less .csv
    if [ $# -ge 2 ]; then "$scaling" report "$1" --out "$2"; else "$scaling" report "$1"; fi
}
if ! command -v gnuplot >/dev/null; then echo "SKIP: gnuplot not found (scripts/setup.sh installs gnuplot-nox)"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

W=1000; H=640       # plots/common.gp
g=resnet18-fashion-mnist
figures="epoch_time-$g speedup-$g throughput-$g acc_epoch-$g-naive acc_epoch-$g-nccl acc_epoch-$g-pipeline
         acc_epoch-$g-single acc_lr-$g breakdown-$g bubble-$g"

# png_size FILE: "width height" from the IHDR chunk (bytes 16..23, big-endian), or nothing if not a PNG.
png_size() {
    local sig
    sig=$(od -An -tx1 -N8 "$1" | tr -d ' \n')
    [ "$sig" = 89504e470d0a1a0a ] || return 1
    od -An -tu1 -j16 -N8 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }'
}

# check_png FILE: a PNG of W x H with some content.
check_png() {
    local size
    if [ ! -s "$1" ]; then bad "$1: missing or empty"; return; fi
    size=$(png_size "$1") || { bad "$1: not a PNG"; return; }
    [ "$size" = "$W $H" ] && [ "$(wc -c <"$1")" -gt 10000 ] && ok || bad "$1: size '$size', $(wc -c <"$1") bytes; want $W $H"
}

# ---- the whole fixture
plot "$fixture" "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && ok || { bad "scaling report exit $rc"; cat "$tmp/stderr"; }
for f in $figures; do
    check_png "$tmp/out/$f.png"
    [ -s "$tmp/out/$f.dat" ] && ok || bad "$f.dat: missing or empty"
    grep -qF "]($f.png)" "$tmp/out/REPORT.md" && ok || bad "$f.png not linked from REPORT.md"
    svg=$tmp/out/$f.svg
    if [ -s "$svg" ] && grep -q '<svg' "$svg" && grep -q 'GPU: NVIDIA H200' "$svg" && grep -q '2026-01-05' "$svg"; then ok
    else bad "$svg: missing, or no caption with the GPU and the date"; fi
done
n=$(ls "$tmp/out"/*.png | grep -vc '/projection-')
[ "$n" -eq 10 ] && ok || bad "10 study PNGs expected, $n written"
# titles, axis units and legends, spot-checked in the SVG text
grep -q 'Steady epoch time against GPU count' "$tmp/out/epoch_time-$g.svg" && grep -q 'epoch time (s' "$tmp/out/epoch_time-$g.svg" &&
    grep -q 'nccl, 256/GPU' "$tmp/out/epoch_time-$g.svg" && ok || bad "epoch_time: title, y unit or legend missing"
grep -q 'ideal (100 %)' "$tmp/out/speedup-$g.svg" && grep -q 'efficiency T1/(N x TN) (%)' "$tmp/out/speedup-$g.svg" &&
    ok || bad "speedup: ideal line or efficiency axis missing"
grep -q 'exposed communication' "$tmp/out/breakdown-$g.svg" && grep -q 'time per step (ms' "$tmp/out/breakdown-$g.svg" &&
    grep -q 'nccl 4x 256/GPU' "$tmp/out/breakdown-$g.svg" && ok || bad "breakdown: legend, unit or bar label missing"
grep -q 'ideal (p-1)/(M+p-1), p = 4' "$tmp/out/bubble-$g.svg" && grep -q 'measured, 4 stages' "$tmp/out/bubble-$g.svg" &&
    ok || bad "bubble: measured or ideal line missing"
grep -q '(diverged)' "$tmp/out/acc_epoch-$g-nccl.svg" && ok || bad "acc_epoch: the diverged run is not marked"
# the run killed after epoch 1 (its test accuracy 45.5 %) is replaced by its resumed run
grep -q 'scaling report: 1 run(s) left out' "$tmp/stderr" && ok || bad "left-out note missing: $(cat "$tmp/stderr")"

# ---- one run of one strategy: most figures have no data and say so, one line each (on one GPU, accuracy against
# batch too; the batch curve, which needs runs measured to a target)
head -n 1 "$fixture" >"$tmp/one.csv"
grep ',single,resnet18,fashion-mnist,1,1,256,256,0.1,' "$fixture" >>"$tmp/one.csv"
plot "$tmp/one.csv" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
skips=$(grep -c '^scaling report: skip ' "$tmp/stderr")
if [ $rc -eq 0 ] && [ "$skips" -eq 8 ] && [ "$(ls "$tmp/one"/*.png | wc -l)" -eq 1 ]; then ok
else bad "one run: rc=$rc, $skips skip notes (want 8), PNGs: $(ls "$tmp/one")"; cat "$tmp/stderr"; fi
for w in epoch_time speedup throughput acc_batch acc_lr breakdown bubble; do
    grep -q "^scaling report: skip $w (resnet18 on fashion-mnist): " "$tmp/stderr" && ok || bad "no skip note for $w"
done
check_png "$tmp/one/acc_epoch-$g-single.png"      # default OUTDIR: the CSV's path without .csv

# ---- a line cut by a kill inside a quoted cell, and a GPU name that needs quoting
sed 's/,NVIDIA H200,/,"NVIDIA H200, SXM",/' "$fixture" >"$tmp/cut.csv"
printf '20260105T100000Z-0-1,2026-01-05T10:00:05Z,nccl,resnet18,fashion-mnist,1,2,512,256,0.2,0,0,tf32,normal,1,warmup,117,2.4,2,3,4,5,6,ok,,,,,,,,,,,,,,,,1,"NVIDIA H2' >>"$tmp/cut.csv"
plot "$tmp/cut.csv" "$tmp/cut" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && grep -q '1 record(s) with the wrong number of fields or a cell that does not parse' "$tmp/stderr" &&
    ok ||
    { bad "cut line: rc=$rc"; cat "$tmp/stderr"; }
grep -q 'GPU: NVIDIA H200, SXM' "$tmp/cut/epoch_time-$g.svg" && ok ||
    bad "quoted GPU name not in the caption: $(grep -o 'GPU: [^<]*' "$tmp/cut/epoch_time-$g.svg" | head -1)"
cmp -s <(sed -n '/<path/p' "$tmp/cut/bubble-$g.svg") <(sed -n '/<path/p' "$tmp/out/bubble-$g.svg") && ok ||
    bad "the quoted GPU name changed the data of a figure"

# ---- one precision: no line names a math or a gradient dtype, and a CSV without the grad_dtype column (older than
#      it) draws the same figures
for f in $figures; do
    grep -q ', tf32\|fp32 grads\| tf32 \| tf32"' "$tmp/out/$f.svg" && bad "$f.svg names a precision in a one-precision study" || ok
done
gcol=$(head -n 1 "$fixture" | tr ',' '\n' | grep -nx grad_dtype | cut -d: -f1)
cut -d, -f"1-$((gcol - 1)),$((gcol + 1))-" "$fixture" >"$tmp/older.csv"    # no quoted commas in the fixture
head -n 1 "$tmp/older.csv" | grep -q ',math,init,' && ok || bad "older.csv still has grad_dtype"
plot "$tmp/older.csv" "$tmp/older" >/dev/null 2>&1 && ok || bad "scaling report on a CSV without grad_dtype failed"
for f in $figures; do
    cmp -s <(grep -v 'older.csv\|study.csv' "$tmp/older/$f.svg") <(grep -v 'older.csv\|study.csv' "$tmp/out/$f.svg") && ok ||
        bad "$f.svg differs without the grad_dtype column"
done

# ---- tf32 against bf16, fp32 against bf16 gradients
math=$root/tests/fixtures/study_math.csv
plot "$math" "$tmp/math" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
n=$(ls "$tmp/math"/*.png | grep -vc '/projection-')
[ $rc -eq 0 ] && [ "$n" -eq 9 ] && grep -q '^scaling report: skip acc_lr ' "$tmp/stderr" && ok ||
    { bad "math fixture: rc=$rc, $n figures (want 9)"; cat "$tmp/stderr"; }
for f in epoch_time-$g speedup-$g throughput-$g breakdown-$g bubble-$g acc_epoch-$g-nccl; do check_png "$tmp/math/$f.png"; done
for want in "epoch_time:nccl, 256/GPU, bf16, bf16 grads" "epoch_time:nccl, 256/GPU, tf32, fp32 grads" \
            "epoch_time:pipeline, batch 512, gpipe (best M), bf16" "speedup:naive, 128/GPU, bf16, fp32 grads" \
            "throughput:single, 1 GPU, bf16" "throughput:nccl, 2 GPUs, tf32, bf16 grads" \
            "breakdown:nccl 2x 256/GPU bf16, bf16 grads" "breakdown:single 1x 256/GPU tf32" \
            "bubble:measured, 2 stages, gpipe, batch 512, bf16" "acc_epoch:2 GPUs, 256/GPU, lr 0.2, bf16, bf16 grads"; do
    f=${want%%:*}; [ "$f" = acc_epoch ] && f=acc_epoch-$g-nccl || f=$f-$g
    grep -qF -- "${want#*:}" "$tmp/math/$f.svg" && ok || bad "$f.svg lacks the line '${want#*:}'"
done
# The figures' data, computed by hand from the fixture: single's bf16 epoch at 256 is 0.80 s, nccl's bf16/bf16 0.43 s
# and tf32/fp32 0.79 s against single's tf32 1.49 s: speedups 0.80/0.43 = 1.86047 (93.0233 %) and 1.49/0.79 =
# 1.88608 (94.3038 %). Over single in tf32 the bf16 line would read 1.49/0.43 = 3.4651.
plot "$math" "$tmp/dat" >/dev/null 2>&1
block() { awk -v t="\"$2\"" '$0 == t { on = 1; next } on && NF == 0 { exit } on' "$1"; }
[ "$(block "$tmp/dat/speedup-$g.dat" 'nccl, 256/GPU, bf16, bf16 grads' | tr '\n' ' ')" = "1 1 100 2 1.86047 93.0233 " ] && ok ||
    bad "speedup of nccl bf16/bf16: $(block "$tmp/dat/speedup-$g.dat" 'nccl, 256/GPU, bf16, bf16 grads' | tr '\n' ' ')"
[ "$(block "$tmp/dat/speedup-$g.dat" 'nccl, 256/GPU, tf32, fp32 grads' | tr '\n' ' ')" = "1 1 100 2 1.88608 94.3038 " ] && ok ||
    bad "speedup of nccl tf32/fp32: $(block "$tmp/dat/speedup-$g.dat" 'nccl, 256/GPU, tf32, fp32 grads' | tr '\n' ' ')"
[ "$(block "$tmp/dat/epoch_time-$g.dat" 'nccl, 256/GPU, bf16, bf16 grads' | tr '\n' ' ')" = "1 0.8 2 0.43 " ] && ok ||
    bad "epoch time of nccl bf16/bf16: $(block "$tmp/dat/epoch_time-$g.dat" 'nccl, 256/GPU, bf16, bf16 grads' | tr '\n' ' ')"
[ "$(grep -c '^"' "$tmp/dat/epoch_time-$g.dat")" -eq 18 ] && ok ||
    bad "epoch_time: $(grep -c '^"' "$tmp/dat/epoch_time-$g.dat") lines, want 18 (2 strategies x 2 batches x 4 precisions + 2 pipeline)"

# ---- the breakdown's data: idle from the idle_ms column, runs over other links as bars of their own, and an older
#      CSV without the columns idle_ms, nodes, gpus_per_node, nccl_transport (idle = step - compute - exposed)
breakdown_dat() {   # breakdown_dat CSV GROUP: the breakdown data file that scaling report writes from CSV
    local d=$tmp/dat$((++nd))
    plot "$1" "$d" >/dev/null 2>&1
    cat "$d/breakdown-$2.dat"
}
nd=0
# The emulated 2-node nccl run (test_fixture.c): compute 12.0566, 12.0806 -> 12.0686, exposed 1.62767, idle 9.
breakdown_dat "$fixture" $g >"$tmp/bd"
grep -qx '"nccl 2x 256/GPU, 2 nodes" 12.0686 1.62767 9' "$tmp/bd" && ok || bad "2-node bar: $(grep '2 nodes' "$tmp/bd")"
grep -q '^"nccl 2x 256/GPU" ' "$tmp/bd" && ok || bad "the one-node 2-GPU nccl bar is gone: $(cat "$tmp/bd")"
# The same rows with another idle_ms: the bar follows the column, not step - compute - exposed.
sed '/node-3.node1/ s/,1\.62767,9,44696872,/,1.62767,7.75,44696872,/' "$fixture" >"$tmp/idle.csv"
breakdown_dat "$tmp/idle.csv" $g | grep -qx '"nccl 2x 256/GPU, 2 nodes" 12.0686 1.62767 7.75' && ok ||
    bad "idle_ms not read: $(breakdown_dat "$tmp/idle.csv" $g | grep '2 nodes')"
# An older CSV (results/study-h200x2-2026-11-22, before idle_ms): its best pipeline run (1f1b, M = 4) has median
# step 16.50295 ms and compute 13.6124 ms, so idle 2.89055.
old=$root/results/study-h200x2-2026-11-22/study.csv
if [ -f "$old" ] && ! head -n 1 "$old" | grep -q idle_ms; then
    breakdown_dat "$old" $g | grep -qx '"pipeline 2x b1024" 13.6124 0 2.89055' && ok ||
        bad "older CSV: $(breakdown_dat "$old" $g | grep pipeline)"
    plot "$old" "$tmp/old" >/dev/null 2>"$tmp/stderr" && [ -s "$tmp/old/breakdown-$g.png" ] && ok ||
        { bad "scaling report on an older CSV"; cat "$tmp/stderr"; }
else
    bad "$old: missing, or not the older layout this case needs"
fi

# ---- scripts/plot.sh, the old command: the same figures through scaling report, their PNGs listed
SCALING=$scaling "$root/scripts/plot.sh" "$fixture" "$tmp/wrap" >"$tmp/stdout" 2>/dev/null; rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '\.png$' "$tmp/stdout")" -ge 10 ] && [ -s "$(head -n 1 "$tmp/stdout")" ] && ok ||
    bad "scripts/plot.sh: rc=$rc, $(wc -l <"$tmp/stdout") PNGs listed"

# ---- bad input: one line, exit 2
plot "$tmp/none.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q 'no such file' "$tmp/stderr" && ok || bad "missing CSV: rc=$rc"
# the batch figure on a study measured to a target whose global_batch column is gone (a CSV is data; found by
# fuzz_report): its runs have no batch to draw on log-scale axes, and the figure is skipped, not a gnuplot failure
tta=$root/results/tta-h200-2026-11-29/study.csv
sed '1s/,global_batch,/,renamed,/' "$tta" >"$tmp/nobatch.csv"
plot "$tmp/nobatch.csv" "$tmp/nobatch" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && grep -q 'skip batch' "$tmp/stderr" && ok || bad "no global_batch: rc=$rc: $(tail -3 "$tmp/stderr")"
# and the study itself draws its batch figure
plot "$tta" "$tmp/tta" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && [ -s "$tmp/tta/batch-resnet18-fashion-mnist.png" ] && ok || bad "the batch figure: rc=$rc"

printf 'a,b\n1,2\n' >"$tmp/other.csv"
plot "$tmp/other.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q 'no run_id column: not a scaling CSV' "$tmp/stderr" &&
    ok ||
    bad "foreign CSV: rc=$rc: $(cat "$tmp/stderr")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
