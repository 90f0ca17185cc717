#!/usr/bin/env bash
# test_report.sh — `scaling report` on the study fixture: REPORT.md has its sections, the figures it links
# exist, and its numbers are the ones computed by hand from tests/fixtures/study.csv (see test_fixture.c):
#   single 256/GPU steady epochs 2.80, 2.82 s -> T1 = 2.81; nccl 4 GPUs 256/GPU steady 0.74, 0.76 -> T4 = 0.75
#   speedup 2.81 / 0.75 = 3.75, efficiency 2.81 / (4 x 0.75) = 93.7 %
#   model: 58 steps x (single's median step 12.00855 ms + t(4, 44696872 B)) with t = 2*3*8 us + 2*3/4 * S / 150 GB/s
#          = 0.495 ms  ->  58 x 12.5035 ms = 0.725 s; model speedup 2.81 / 0.725 = 3.87
#   pipeline p = 4, M = 8: ideal bubble 3/11 = 27.3 %
# Without a benchmark CSV the model line is omitted with a one-line note. gnuplot is not needed: without it the
# report is written without figures. --runs (the reported runs as TSV) is checked against medians computed by hand
# below.
# The precision fixture tests/fixtures/study_math.csv (constructed, see test_fixture.c; 2 GPUs, tf32 and bf16, fp32
# and bf16 gradients) with its benchmark study_math_allreduce.csv (float: nccl 10 us + 300 GB/s; bfloat16: nccl
# 12 us + 280 GB/s), by hand:
#   single 256 steady 1.49 s (tf32), 0.80 s (bf16): median steps 6.367521 and 3.418803 ms
#   nccl 256/GPU, 117 steps, steady epochs (median) tf32/fp32 0.790, tf32/bf16 0.785, bf16/fp32 0.440, bf16/bf16 0.430
#   bf16/bf16: speedup 0.80/0.43 = 1.86, efficiency 93.0 %; bytes on the wire 22351744, bfloat16 fit
#     t = 2*12 us + 22351744 B / 280 GB/s = 103.828 us; model 117 x (3.418803 + 0.103828) ms = 0.412 s, model speedup
#     0.80/0.412148 = 1.94; measured all-reduce 1.08 x 103.828 us = 0.112 ms (exposed 60 %: 0.0673 ms)
#   tf32/fp32: t = 2*10 us + 44703488 B / 300 GB/s = 169.012 us; model 117 x 6.536533 ms = 0.765 s; speedup
#     1.49/0.79 = 1.89, model 1.49/0.764774 = 1.95; measured 1.08 x 169.012 us = 0.183 ms
#   side by side, bf16 gradients: 0.430/0.785 = 0.55; speedups 1.49/0.785 = 1.90 and 1.86; communication
#     0.112134/6.709402 ms = 1.7 % (exposed 0.0672804 ms: 1.0 %) and 0.112134/3.675214 = 3.1 % (1.8 %); final
#     accuracy 90.7 % and 90.4 %
#   with study_allreduce.csv instead (float only: nccl 8 us + 150 GB/s) the bf16 rows borrow the float fit at their
#     bytes, marked ‡: 2*8 us + 22351744 B / 150 GB/s = 165.012 us; fp32 rows 16 + 298.023 = 314.023 us
#   with a "Ring+cast" bfloat16 table added (nccl 20 us + 200 GB/s, the cast from fp32 that bf16 rows pay), the bf16
#     rows take it: t = 2*20 us + 22351744 B / 200 GB/s = 151.759 us; model 117 x (3.418803 + 0.151759) ms = 0.418 s,
#     model speedup 0.80/0.417756 = 1.91
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_report.sh"

# ---- without an all-reduce benchmark
cp "$fixture" "$tmp/study.csv"
"$report" report "$tmp/study.csv" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
md=$tmp/study/REPORT.md
[ $rc -eq 0 ] && [ -s "$md" ] && grep -qx "$md" "$tmp/stdout" && ok || { bad "scaling report exit $rc"; cat "$tmp/stderr"; }
has "$md" "# Scaling study: \`$tmp/study.csv\`"
has "$md" "NVIDIA H200; host h200-node-3; commit 1a2b3c4; 2026-01-05"
has "$md" "112 rows, 39 runs, 38 configurations; 1 run(s) left out"
has "$md" "no all-reduce benchmark: model line omitted"
for s in "## All-reduce model" "## resnet18 on fashion-mnist" "### Figures" "### Summary" "#### single" "#### naive" \
         "#### nccl" "#### pipeline" "### Runs that did not end ok"; do
    grep -qx -- "$s" "$md" && ok || bad "no section '$s'"
done
# nccl, 4 GPUs, 256/GPU: GPUs | batch | steps | best | speedup | efficiency | accuracy | status
hasre "$md" '^\| 4 \| 256 \| 0\.4 \| 58 \| 0\.750 \| 3\.75 \| 93\.7 % \| 90\.4 % \| ok \|$'
# the diverged learning rate is a row of its own
hasre "$md" '^\| 4 \| 256 \| 3\.2 \| 58 \| 0\.753 \| 3\.73 \| 93\.3 % \| 10\.0 % \| diverged \|$'
hasre "$md" '^\| 1 \| 256 \| 0\.1 \| 234 \| 2\.810 \| 1\.00 \| 100\.0 % \|'
# the emulated 2-node nccl run is a row of its own beside the one-node 2-GPU run, its link named
hasre "$md" '^\| 2 \(2 nodes\) \| 256 \| 0\.2 \| 117 \| 2\.655 \| 1\.06 \| 52\.9 % \|'
# pipeline, 4 stages, 8 micro-batches: the speedup against single at the same batch and at its fastest (here the
# same, 1024), the measured bubble beside the formula
hasre "$md" '^\| 4 \| gpipe \| 1024 \| 8 \| 0\.4 \| 1\.034 \| 0\.842 \| 2\.37 \| 59\.2 % \| 2\.37 \(batch 1024\) \| 31\.3 % \| 27\.3 % \|'
# the failure rows, and the killed run left out
hasre "$md" '^\| single \| 1 \| 32768 \| 0\.1 \| — \| oom \| 0 \|'
hasre "$md" '^\| nccl \| 4 \| 1024 \| 3\.2 \| — \| diverged \| 2 \|'
grep -q '20260105T090659Z-1-47819' "$md" && bad "the killed run appears in the report" || ok
# one data file per figure, with or without gnuplot (the figures only draw them)
g=resnet18-fashion-mnist
for f in epoch_time speedup throughput acc_lr breakdown bubble bubble_ideal acc_epoch-$g-naive acc_epoch-$g-nccl \
         acc_epoch-$g-pipeline acc_epoch-$g-single; do
    case $f in acc_epoch-*) d=$tmp/study/$f.dat ;; *) d=$tmp/study/$f-$g.dat ;; esac
    [ -s "$d" ] && head -n 1 "$d" | grep -q '^"\|^label ' && ok || bad "$d: missing, empty or without its header line"
done
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

# ---- summary.csv beside REPORT.md: it parses as CSV (libcsv's quoting), holds one row per configuration (38) with the
#      key columns, and says what REPORT.md says: single 256 at lr 0.1 (20260105T090044Z-1-41117) steady images/s
#      21394.3, 21242.6 -> 21318.45, epoch 2.81 s; nccl 4 GPUs 256/GPU lr 0.4: 0.75 s, speedup 2.81/0.75 = 3.7467,
#      efficiency 0.9367, as the summary table's "| 4 | 256 | 0.4 | 58 | 0.750 | 3.75 | 93.7 % |"
python3 - "$tmp/study/summary.csv" >"$tmp/summary.txt" 2>&1 <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
key = ["strategy", "model", "dataset", "seed", "gpus", "global_batch", "lr", "momentum", "weight_decay", "math",
       "grad_dtype", "init", "micro_batches", "schedule", "steps", "nodes", "nccl_transport", "nccl_algo"]
print("rows", len(rows))
print("key", all(k in rows[0] for k in key))
s = [r for r in rows if r["run_id"] == "20260105T090044Z-1-41117"][0]
print("single", "%.7g" % float(s["images_per_s"]), "%.6g" % float(s["epoch_s"]), s["speedup"], s["status"])
n = [r for r in rows if r["strategy"] == "nccl" and r["gpus"] == "4" and r["global_batch"] == "1024" and r["lr"] == "0.4"
     and r["nodes"] in ("", "1")][0]
print("nccl", n["epoch_s"], "%.2f" % float(n["speedup"]), "%.1f" % (100 * float(n["efficiency"])), n["final_test_acc"])
EOF
grep -qx 'rows 38' "$tmp/summary.txt" && grep -qx 'key True' "$tmp/summary.txt" && ok ||
    bad "summary.csv: $(cat "$tmp/summary.txt")"
grep -qx 'single 21318.45 2.81 1 ok' "$tmp/summary.txt" && ok || bad "summary.csv single: $(grep single "$tmp/summary.txt")"
grep -qx 'nccl 0.75 3.75 93.7 0.904' "$tmp/summary.txt" && ok || bad "summary.csv nccl: $(grep nccl "$tmp/summary.txt")"
hasre "$md" '^\| 4 \| 256 \| 0\.4 \| 58 \| 0\.750 \| 3\.75 \| 93\.7 % \|'

# ---- the answer first: REPORT.md's first section after the header, per model and math
[ "$(grep -m1 '^## ' "$md")" = '## Answer' ] && grep -qx '### resnet18 on fashion-mnist, tf32' "$md" && ok ||
    bad "the answer is not REPORT.md's first section"

# ---- a configuration whose first run failed at setup (no steps, no algorithm yet) and whose --resume retry ended ok
#      is one configuration, reported by its ok run: its row ends "ok", no failure is listed, the failed run is left
#      out (40 runs, 38 configurations)
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    { print }
    !done && $c["strategy"] == "nccl" && $c["gpus"] == 2 && $c["per_gpu_batch"] == 256 && $c["lr"] == "0.2" &&
    $c["nodes"] == 1 && $c["epoch"] == 1 {
        done = 1
        $c["run_id"] = "20260101T000000Z-0-1"; $c["timestamp"] = "2026-01-01T00:00:00Z"; $c["epoch"] = 0
        $c["phase"] = "setup"; $c["steps"] = ""; $c["nccl_algo"] = ""; $c["status"] = "failed"
        for (k in c) if (k ~ /_ms$|_s$|^test_acc$|^train_|^bytes_per_step$|^algbw|^busbw/) $c[k] = ""
        print
    }' "$fixture" >"$tmp/retried.csv"
"$report" report "$tmp/retried.csv" >/dev/null 2>&1; rc=$?
rr=$tmp/retried/REPORT.md
[ $rc -eq 0 ] && grep -q '20260101T000000Z-0-1' "$tmp/retried.csv" && ok || bad "retried fixture: rc=$rc"
has "$rr" "113 rows, 40 runs, 38 configurations; 2 run(s) left out"
hasre "$rr" '^\| 2 \| 256 \| 0\.2 \| 117 \| 1\.481 \| 1\.90 \| 94\.9 % \| 90\.8 % \| ok \|$'
grep -q '20260101T000000Z-0-1\|failed (1)' "$rr" && bad "the failed setup run still counts in the report" || ok

# ---- with the benchmark next to the CSV (the default --allreduce): the alpha-beta fit and the model line
cp "$root/tests/fixtures/study_allreduce.csv" "$tmp/study_allreduce.csv"
"$report" report "$tmp/study.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && ok || { bad "scaling report with benchmark: exit $rc"; cat "$tmp/stderr"; }
hasre "$md" '^\| nccl \(Ring\) \| 2\(n−1\)α \+ 2\(n−1\)/n·S·β \(ring\) \| 8\.00 \| 150\.0 \| 18 \| 2, 4 \|'
hasre "$md" '^\| naive \(p2p\) \| 2\(n−1\)α \+ 2\(n−1\)·S·β \(in and out of GPU 0\) \| 15\.00 \| 40\.0 \| 18 \| 2, 4 \|'
# nccl 4 GPUs: GPUs | batch | steps | best | model | speedup | model speedup | efficiency | all-reduce measured / model
hasre "$md" '^\| 4 \| 256 \| 0\.4 \| 58 \| 0\.750 \| 0\.725 \| 3\.75 \| 3\.87 \| 93\.7 % \| 0\.535 / 0\.495 \|'
grep -q 'model line omitted' "$md" && bad "model line still omitted with a benchmark" || ok

# ---- two models in one CSV: a section and tables each (the fixture again, relabelled LeNet on MNIST)
{ cat "$fixture"; tail -n +2 "$fixture" | sed 's/,resnet18,fashion-mnist,/,lenet,mnist,/; s/^\([0-9TZ]*\)-/\1L-/'; } >"$tmp/two.csv"
"$report" report "$tmp/two.csv" --out "$tmp/two" --allreduce "$root/tests/fixtures/study_allreduce.csv" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && grep -qx '## lenet on mnist' "$tmp/two/REPORT.md" && grep -qx '## resnet18 on fashion-mnist' "$tmp/two/REPORT.md" &&
    [ "$(grep -c '^| 4 | 256 | 0\.4 | 58 | 0\.750 | 0\.725 | 3\.75 |' "$tmp/two/REPORT.md")" -eq 2 ] &&
    [ "$(grep -c '^#### nccl$' "$tmp/two/REPORT.md")" -eq 2 ] && ok || bad "two models: rc=$rc, tables missing"

# ---- one precision: no math or grads columns, no side-by-side section; a CSV older than grad_dtype reads the same
grep -q '^| math |\|^### [a-z0-9]* against ' "$md" && bad "a one-precision study has precision columns or sections" || ok
gcol=$(head -n 1 "$fixture" | tr ',' '\n' | grep -nx grad_dtype | cut -d: -f1)
cut -d, -f"1-$((gcol - 1)),$((gcol + 1))-" "$fixture" >"$tmp/older.csv"    # no quoted commas in the fixture
"$report" report "$tmp/older.csv" --allreduce "$tmp/study_allreduce.csv" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && cmp -s <(tail -n +2 "$tmp/older/REPORT.md") <(tail -n +2 "$md") && ok ||
    { bad "a CSV without grad_dtype reports differently (rc=$rc)"; diff <(tail -n +2 "$tmp/older/REPORT.md") <(tail -n +2 "$md") | head; }
# the committed study of 2026-11-22 (older than grad_dtype) still reports: nccl, 2 GPUs, 256/GPU, 0.785 s, 94.9 %
old=$root/results/study-h200x2-2026-11-22
"$report" report "$old/study.csv" --allreduce "$old/study_allreduce.csv" --out "$tmp/old" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && ok || bad "report on $old/study.csv: exit $rc"
hasre "$tmp/old/REPORT.md" '^\| 2 \| 256 \| 0\.2 \| 117 \| 0\.785 \| [0-9.]+ \| 1\.90 \| [0-9.]+ \| 94\.9 % \|'

# ---- tf32 against bf16, fp32 against bf16 gradients
mkdir -p "$tmp/m"
cp "$root/tests/fixtures/study_math.csv" "$root/tests/fixtures/study_math_allreduce.csv" "$tmp/m/"
"$report" report "$tmp/m/study_math.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
mm=$tmp/m/study_math/REPORT.md
[ $rc -eq 0 ] && ok || { bad "scaling report on the math fixture: exit $rc"; cat "$tmp/stderr"; }
has "$mm" "78 rows, 26 runs, 26 configurations"
hasre "$mm" '^\| nccl \(Ring\) \| 2\(n−1\)α \+ 2\(n−1\)/n·S·β \(ring\) \| 10\.00 \| 300\.0 \| 9 \| 2 \|'
hasre "$mm" '^\| nccl \(Ring, bfloat16\) \| 2\(n−1\)α \+ 2\(n−1\)/n·S·β \(ring\) \| 12\.00 \| 280\.0 \| 9 \| 2 \|'
hasre "$mm" '^\| naive \(p2p, bfloat16\) \| 2\(n−1\)α \+ 2\(n−1\)·S·β \(in and out of GPU 0\) \| 18\.00 \| 280\.0 \| 9 \| 2 \|'
# math | grads | GPUs | batch | steps | best | model | speedup | model speedup | efficiency | all-reduce | accuracy | status
hasre "$mm" '^\| bf16 \| bf16 \| 2 \| 256 \| 0\.2 \| 117 \| 0\.430 \| 0\.412 \| 1\.86 \| 1\.94 \| 93\.0 % \| 0\.112 / 0\.104 \| 90\.4 % \| ok \|$'
hasre "$mm" '^\| tf32 \| fp32 \| 2 \| 256 \| 0\.2 \| 117 \| 0\.790 \| 0\.765 \| 1\.89 \| 1\.95 \| 94\.3 % \| 0\.183 / 0\.169 \| 90\.8 % \| ok \|$'
hasre "$mm" '^\| bf16 \| — \| 1 \| 256 \| 0\.1 \| 234 \| 0\.800 \| 1\.00 \| 100\.0 % \| 90\.9 % \| ok \|$'
grep -qx '### tf32 against bf16' "$mm" && ok || bad "no section '### tf32 against bf16'"
# strategy | GPUs | batch | grads | epoch tf32, bf16 | bf16/tf32 | speedup x2 | efficiency x2 | communication x2 | accuracy x2
hasre "$mm" '^\| nccl \| 2 \| 256/GPU \| 0\.2 \| bf16 \| 0\.785 \| 0\.430 \| 0\.55 \| 1\.90 \| 1\.86 \| 94\.9 % \| 93\.0 % \| 1\.7 % \(1\.0 %\) \| 3\.1 % \(1\.8 %\) \| 90\.7 % \| 90\.4 % \|$'
hasre "$mm" '^\| single \| 1 \| 256/GPU \| 0\.1 \| — \| 1\.490 \| 0\.800 \| 0\.54 \| 1\.00 \| 1\.00 \| 100\.0 % \| 100\.0 % \| — \| — \| 91\.2 % \| 90\.9 % \|$'
grep -q '‡' "$mm" && bad "a ‡ with a benchmark that has bfloat16 rows" || ok
# a benchmark older than bf16 gradients: the bf16 rows borrow its float fit at their own bytes, and say so
"$report" report "$tmp/m/study_math.csv" --allreduce "$root/tests/fixtures/study_allreduce.csv" --out "$tmp/m2" >/dev/null 2>&1
hasre "$tmp/m2/REPORT.md" '^\| bf16 \| bf16 \| 2 \| 256 \| 0\.2 \| 117 \| 0\.430 \| [0-9.]+ \| 1\.86 \| [0-9.]+ \| 93\.0 % \| 0\.112 / 0\.165 ‡ \|'
hasre "$tmp/m2/REPORT.md" '^\| tf32 \| fp32 \| 2 \| 256 \| 0\.2 \| 117 \| 0\.790 \| [0-9.]+ \| 1\.89 \| [0-9.]+ \| 94\.3 % \| 0\.183 / 0\.314 \|'
has "$tmp/m2/REPORT.md" "‡ the benchmark has no bfloat16 rows"
# a benchmark with the cast-inclusive table: bf16 rows are modelled with it, fp32 rows as before
cp "$root/tests/fixtures/study_math_allreduce.csv" "$tmp/m/cast_allreduce.csv"
for S in 4096 65536 1048576 16777216 268435456; do
    awk -v S=$S 'BEGIN { printf "nccl,2,Ring+cast,%d,%d,bfloat16,sum,%.6f,0,0,0,", S, S / 2, 40 + S / 200e3 }'
    echo "NVIDIA H200,580.82.07,13.0,2.27.7,h200-node-3,1a2b3c4,2026-01-05T08:50:00Z"
done >>"$tmp/m/cast_allreduce.csv"
"$report" report "$tmp/m/study_math.csv" --allreduce "$tmp/m/cast_allreduce.csv" --out "$tmp/m3" >/dev/null 2>&1
hasre "$tmp/m3/REPORT.md" '^\| nccl \(Ring\+cast, bfloat16\) \| 2\(n−1\)α \+ 2\(n−1\)/n·S·β \(ring\) \| 20\.00 \| 200\.0 \| 5 \| 2 \|'
hasre "$tmp/m3/REPORT.md" '^\| bf16 \| bf16 \| 2 \| 256 \| 0\.2 \| 117 \| 0\.430 \| 0\.418 \| 1\.86 \| 1\.91 \| 93\.0 % \| 0\.112 / 0\.152 \|'
hasre "$tmp/m3/REPORT.md" '^\| tf32 \| fp32 \| 2 \| 256 \| 0\.2 \| 117 \| 0\.790 \| 0\.765 \| 1\.89 \| 1\.95 \| 94\.3 % \| 0\.183 / 0\.169 \|'

# ---- --allreduce FILE and --out DIR; a benchmark without the needed columns omits the model with a reason
printf 'size,time\n4096,10\n' >"$tmp/odd.csv"
"$report" report "$tmp/study.csv" --allreduce "$tmp/odd.csv" --out "$tmp/r2" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && ok || bad "--allreduce odd.csv: exit $rc"
has "$tmp/r2/REPORT.md" "\`no columns strategy, gpus, size_bytes (or bytes), time_us\`: model line omitted"
"$report" report "$tmp/study.csv" --allreduce "$tmp/none.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && ok || bad "missing --allreduce file: rc=$rc"
"$report" report >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok || bad "no argument: rc=$rc"
# a CSV that is not a study's: one line, exit 2, and no output folder left behind
printf 'a,b\n1,2\n' >"$tmp/other.csv"
"$report" report "$tmp/other.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q 'no run_id column: not a scaling CSV' "$tmp/stderr" &&
    ok ||
    bad "a foreign CSV: rc=$rc, stderr: $(cat "$tmp/stderr")"
[ ! -e "$tmp/other" ] && ok || bad "a foreign CSV left $tmp/other behind"

# ---- --runs: the reported runs (REPORT.md's 38 configurations) as one tab-separated line each, nothing written.
# By hand from the fixture's rows:
#   single 256, lr 0.1 (20260105T090044Z-1-41117): steady epoch_s 2.800000, 2.820000 -> median 2.81 [2.8, 2.82];
#     images/s 21394.3, 21242.6 -> 21318.45; step_ms 11.9658, 12.0513 -> 12.00855; last epoch's test_acc 0.912
#   nccl 4 GPUs 256/GPU (20260105T090608Z-4-46702): 0.740000, 0.760000 -> 0.75
#   single 32768 (20260105T090245Z-0-43351): one setup row, oom: no steady epoch, no median
mkdir "$tmp/runs"
cp "$fixture" "$tmp/runs/study.csv"
"$report" report "$tmp/runs/study.csv" --runs >"$tmp/runs.tsv" 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && [ "$(ls "$tmp/runs")" = study.csv ] && ok ||
    { bad "--runs: exit $rc, or it wrote beside the CSV"; cat "$tmp/stderr"; }
head -n 1 "$tmp/runs.tsv" | grep -q '^run_id	strategy	model	dataset	math	grad_dtype	gpus	global_batch	per_gpu_batch	' &&
    ok || bad "--runs header: $(head -n 1 "$tmp/runs.tsv")"
n=$(tail -n +2 "$tmp/runs.tsv" | wc -l)
[ "$n" -eq 38 ] && ok || bad "--runs: $n runs, want 38"
[ "$(awk -F'\t' '{ print NF }' "$tmp/runs.tsv" | sort -u)" = 33 ] && ok ||
    bad "--runs: a line without the header's 33 cells"
grep -q '20260105T090659Z-1-47819' "$tmp/runs.tsv" && bad "--runs lists the killed run" || ok
cell() {   # cell RUN_ID COLUMN
    awk -F'\t' -v id="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next } $1 == id { print $k[c] }' \
        "$tmp/runs.tsv"
}
near() {   # near RUN_ID COLUMN VALUE: the cell is VALUE within 1e-9
    local v; v=$(cell "$1" "$2")
    awk -v a="$v" -v b="$3" 'BEGIN { exit !(a != "" && a - b < 1e-9 && b - a < 1e-9) }' && ok ||
        bad "--runs $1 $2: '$v', want $3"
}
near 20260105T090044Z-1-41117 epoch_s_median 2.81
near 20260105T090044Z-1-41117 epoch_s_min 2.8
near 20260105T090044Z-1-41117 epoch_s_max 2.82
near 20260105T090044Z-1-41117 images_per_s_median 21318.45
near 20260105T090044Z-1-41117 step_ms_median 12.00855
near 20260105T090044Z-1-41117 final_test_acc 0.912
near 20260105T090044Z-1-41117 steady_epochs 2
near 20260105T090608Z-4-46702 epoch_s_median 0.75
[ "$(cell 20260105T090608Z-4-46702 per_gpu_batch)" = 256 ] && ok || bad "--runs: nccl per_gpu_batch"
[ "$(cell 20260105T090245Z-0-43351 status)/$(cell 20260105T090245Z-0-43351 steady_epochs)/$(cell 20260105T090245Z-0-43351 epoch_s_median)" = oom/0/ ] &&
    ok || bad "--runs: the oom run"
# --runs writes no report: with --out (or any option of the report) it is one line and exit 2, nothing created
"$report" report "$tmp/runs/study.csv" --runs --out "$tmp/runs/out" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && [ ! -s "$tmp/stdout" ] && [ ! -e "$tmp/runs/out" ] && ok ||
    bad "--runs --out: rc=$rc, stderr: $(cat "$tmp/stderr")"
"$report" report --allreduce "$tmp/study_allreduce.csv" "$tmp/runs/study.csv" --runs >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && ok || bad "--runs --allreduce: rc=$rc"
"$report" report "$tmp/none.csv" --runs >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && ok || bad "--runs on a missing file: rc=$rc"

# ---- a one-GPU study (tests/fixtures/study_one_gpu.csv, constructed, see test_fixture.c): the section "One GPU" with
# images/s and accuracy per batch and math, the fastest (bf16 at 4096: 57344 images in 0.54 and 0.56 s, median
# 104296 images/s; tf32 there 47790, 2.18x slower), the largest batch that fit and the first oom per math; nothing
# that scales (no all-reduce model, projection, epoch-time or speedup figure); accuracy against batch as data
cp "$root/tests/fixtures/study_one_gpu.csv" "$tmp/one.csv"
"$report" report "$tmp/one.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
md=$tmp/one/REPORT.md
[ $rc -eq 0 ] && [ -s "$md" ] && ok || { bad "one GPU: exit $rc"; cat "$tmp/stderr"; }
grep -qx '### One GPU' "$md" && ok || bad "one GPU: no section '### One GPU'"
has "$md" "| 4096 | bf16 | 104296 | 59.3 % | ok |"
has "$md" "| 16384 | tf32 | — | — | oom |"
has "$md" "- **Fastest**: bf16 at batch 256, 73967 images/s, the fastest within 1 point of the best accuracy (90.4 %); tf32 there: 40478 images/s (1.83× slower)."
has "$md" "- **Largest batch that fit**: tf32 4096 (16384 did not: oom); bf16 16384 (60000 did not: oom)."
has "$md" "- **A second GPU** would add"
for s in "## All-reduce model" "## Projection past this host"; do
    grep -qx -- "$s" "$md" && bad "one GPU: section '$s'" || ok
done
grep -q 'epoch_time-\|speedup-' "$md" && bad "one GPU: a scaling figure is linked" || ok
grep -q '^scaling report: skip speedup .*every run is on one GPU' "$tmp/stderr" && ok || bad "one GPU: the skip says why"
d=$tmp/one/acc_batch-resnet18-fashion-mnist.dat
[ "$(sed -n 1p "$d")" = '"single, tf32"' ] && grep -qx '4096 59.6' "$d" && grep -qx '16384 29.7' "$d" && ok ||
    bad "one GPU: $d: $(cat "$d" 2>/dev/null)"
if command -v gnuplot >/dev/null; then
    for f in throughput acc_batch; do
        grep -qF "]($f-resnet18-fashion-mnist.png)" "$md" && [ -s "$tmp/one/$f-resnet18-fashion-mnist.png" ] && ok ||
            bad "one GPU: figure $f not drawn and linked"
    done
fi

# ---- a language model (tests/fixtures/study_gpt2.csv: GPT-2 small on one H200, seeds 1-3 of 3 epochs, the command's
# own CSV of results/gpt2-h200-2026-11-29): its held-out loss where an image model's accuracy is. The seeds' final
# losses 5.19115, 5.23081 and 5.24015: the answer's and the summary's 5.231 (5.191-5.240), each run's in the one-GPU
# table and summary.csv's final_test_loss. The control: the image fixture's report (above) names no held-out loss.
cp "$root/tests/fixtures/study_gpt2.csv" "$tmp/lm.csv"
"$report" report "$tmp/lm.csv" >/dev/null 2>"$tmp/stderr"; rc=$?
md=$tmp/lm/REPORT.md
[ $rc -eq 0 ] && [ -s "$md" ] && ok || { bad "language model: exit $rc"; cat "$tmp/stderr"; }
has "$md" "| tokens/s | per GPU | speedup | efficiency | held-out loss | Δ loss (nats) |"
has "$md" "| single | 1 | 16/GPU | lr 0.0006 | 519083 | 519083 | — | — | 5.231 (5.191–5.240) | — |"
has "$md" "**Answer**: on 1 GPU the fastest setting whose held-out loss is within the noise of the best is single at \
16/GPU in bf16, 519083 tokens/s, final held-out loss 5.231."
has "$md" "| batch | math | tokens/s | held-out loss | status |"
has "$md" "| 16 | bf16 | 519252 | 5.191 | ok |"
has "$md" "| 1 | 16 | 0.0006 | 114 | 3.599 (3.597–3.600) | 1.00 | 99.9 % | 5.231 (5.191–5.240) | ok (3) |"
grep -qF '| final test acc |' "$md" && bad "language model: an accuracy column" || ok
loss_cells() {   # summary.csv FILE: its final_test_acc and final_test_loss cells, and tokens_per_s over images_per_s
    python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print("acc", " ".join(r["final_test_acc"] for r in rows))
print("loss", " ".join(sorted(r["final_test_loss"] for r in rows)))
print("tok", " ".join("%.0f" % (float(r["tokens_per_s"]) / float(r["images_per_s"])) if r["tokens_per_s"] else "-"
                      for r in rows))' "$1"
}
loss_cells "$tmp/lm/summary.csv" >"$tmp/lm.txt" 2>&1
grep -qx 'acc   ' "$tmp/lm.txt" && grep -qx 'loss 5.19115 5.23081 5.24015' "$tmp/lm.txt" &&
    grep -qx 'tok 1024 1024 1024' "$tmp/lm.txt" && ok || bad "language model: summary.csv: $(cat "$tmp/lm.txt")"
grep -q 'held-out loss\|Δ loss' "$tmp/study/REPORT.md" && bad "image fixture: a held-out loss is named" || ok
loss_cells "$tmp/study/summary.csv" >"$tmp/img.txt" 2>&1
grep -qx 'loss *' "$tmp/img.txt" && grep -q '^acc .*0\.' "$tmp/img.txt" && grep -qx 'tok[ -]*' "$tmp/img.txt" && ok ||
    bad "image fixture: summary.csv: $(cat "$tmp/img.txt")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
