#!/usr/bin/env bash
# test_baseline.sh — two studies compared and two commits in one CSV, on tests/fixtures/study.csv:
# `scaling report NEW.csv --baseline OLD.csv [--threshold PCT]` exits 0 without a regression and 1 with one (after
# writing everything), names it on stdout, in REPORT.md's section and in baseline.dat; the gate fails closed (a
# configuration failed, diverged, timed out, out of memory, without steady images/s or missing here is a regression; a
# fall inside the spread is within noise; a new one never gates); a baseline that cannot gate (no shared
# configuration, no runs, not a study, another GPU without --baseline-any-gpu) and a --threshold outside (0, 100) are
# bad input, exit 2 writing nothing; an input linked into --out is refused; a CSV holding two commits' runs reports
# each commit's configurations side by side, none superseded.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_report.sh"

# ---- --baseline: the fixture against itself has no regression (exit 0); with nccl on 4 GPUs at 256/GPU, lr 0.4 made
#      10 % slower (images/s x 0.9: medians 79203.45 -> 71283.105, -10.0 %; epoch_s / 0.9) it is the one regression
#      past the default 5 % (exit 1, stdout's line and REPORT.md's section name it), and none past --threshold 15
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    $c["strategy"] == "nccl" && $c["gpus"] == 4 && $c["per_gpu_batch"] == 256 && $c["lr"] == "0.4" {
        $c["images_per_s"] = $c["images_per_s"] * 0.9; $c["epoch_s"] = sprintf("%.6f", $c["epoch_s"] / 0.9) }
    { print }' "$fixture" >"$tmp/slower.csv"
"$report" report "$fixture" --baseline "$fixture" --out "$tmp/same" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && grep -q '^# 0 regression(s) past 5.0 % (images/s below the baseline.s by more than that' "$tmp/stdout" &&
    grep -qx '\*\*No regression\*\* past 5.0 %.' "$tmp/same/REPORT.md" && ok ||
    bad "baseline against itself: rc=$rc, $(tail -1 "$tmp/stdout") $(cat "$tmp/stderr")"
"$report" report "$tmp/slower.csv" --baseline "$fixture" --out "$tmp/slower" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
sm=$tmp/slower/REPORT.md
[ $rc -eq 1 ] && ok || bad "a 10 % regression: rc=$rc, want 1"
grep -c 'REGRESSION$' "$tmp/stdout" | grep -qx 1 &&
    grep -qE '^ +71283 +2\.7 % +79203 +2\.7 % +-10\.0% +83\.6 % +92\.9 % +-9\.3  nccl, 4 GPUs, 256/GPU, lr 0\.4, tf32, fp32 grads  REGRESSION$' \
        "$tmp/stdout" && ok || bad "baseline stdout: $(cat "$tmp/stdout")"
grep -q '^scaling report: 1 regression(s) against .*: images/s fell past 5.0 % and both spreads' "$tmp/stderr" && ok ||
    bad "baseline stderr: $(cat "$tmp/stderr")"
has "$sm" "38 configuration(s) both ran (every key column but the seed and the commit), 0 only here (new: listed, not judged), 0 only there."
has "$sm" "| nccl, 4 GPUs, 256/GPU, lr 0.4, tf32, fp32 grads | 71283 | 2.7 % | 79203 | 2.7 % | **-10.0 %** | 83.6 % | 92.9 % | -9.3 | 1, 1 | **REGRESSION** |"
has "$sm" "| this study | \`NVIDIA H200\` | \`580.82.07\` | \`13.0\` | \`9.13.0\` | \`2.27.7\` |"
has "$sm" "- nccl, 4 GPUs, 256/GPU, lr 0.4, tf32, fp32 grads: 71283 images/s against 79203 (-10.0 %; spreads 2.7 % and 2.7 %)"
[ "$(grep -m2 '^## ' "$sm" | tail -1)" = '## Against the baseline' ] && ok || bad "the baseline's section is not after the answer"
grep -c '^"' "$tmp/slower/baseline.dat" | grep -qx 38 &&
    grep -qE '^"nccl, 4 GPUs, 256/GPU, lr 0\.4, tf32, fp32 grads" -(10|9\.999[0-9]*) 4 -5$' "$tmp/slower/baseline.dat" && ok ||
    bad "baseline.dat: $(grep -- ' 4 ' "$tmp/slower/baseline.dat")"
if command -v gnuplot >/dev/null; then
    [ -s "$tmp/slower/baseline.png" ] && grep -qF '](baseline.png)' "$sm" && ok || bad "the baseline figure is not drawn and linked"
fi
"$report" report "$tmp/slower.csv" --baseline "$fixture" --threshold 15 --out "$tmp/slower15" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && ok || bad "--threshold 15: rc=$rc, want 0"
# bad input: exit 2, nothing written
for args in "--threshold 5" "--baseline $tmp/none.csv" "--baseline $root/README.md" "--baseline $fixture --threshold 0" \
            "--baseline $fixture --threshold x" "--baseline $fixture --runs" "--baseline $fixture --threshold 100" \
            "--baseline $fixture --threshold 0x10" "--baseline $fixture --threshold 1e2" "--baseline $fixture --threshold inf" \
            "--baseline $fixture --threshold nan" "--baseline $fixture --threshold -3" "--baseline-any-gpu"; do
    "$report" report "$tmp/slower.csv" $args --out "$tmp/bad" >/dev/null 2>"$tmp/stderr"; rc=$?
    [ $rc -eq 2 ] && [ ! -e "$tmp/bad" ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && ok ||
        bad "report $args: rc=$rc, $(cat "$tmp/stderr")"
done

# ---- the threshold's bounds: a decimal above 0 and below 100
for t in 0.5 99.9; do
    "$report" report "$fixture" --baseline "$fixture" --threshold $t --out "$tmp/t" >/dev/null 2>&1; rc=$?
    [ $rc -eq 0 ] && ok || bad "--threshold $t: rc=$rc, want 0"
done

# ---- the gate fails closed: nccl on 4 GPUs at 256/GPU, lr 0.4 (one run: epochs 1 warm-up, 2 and 3 steady) broken
#      one way each is a regression (exit 1) with its reason, the other configurations unchanged
cfg='$c["strategy"] == "nccl" && $c["gpus"] == 4 && $c["per_gpu_batch"] == 256 && $c["lr"] == "0.4"'
label='nccl, 4 GPUs, 256/GPU, lr 0.4, tf32, fp32 grads'
broken() {  # NAME AWK-ACTION REASON: the fixture with the action on that configuration's rows, against the fixture
    awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next } '"$cfg"' { '"$2"' } { print }' \
        "$fixture" >"$tmp/$1.csv"
    PATH=/nonexistent "$report" report "$tmp/$1.csv" --baseline "$fixture" --out "$tmp/$1" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
    [ $rc -eq 1 ] && grep -qF "$label  REGRESSION: $3" "$tmp/stdout" && grep -q '^# 1 regression(s)' "$tmp/stdout" &&
        grep -qF -- "- $label: $3" "$tmp/$1/REPORT.md" && ok ||
        bad "$1: rc=$rc, want 1 and '$3': $(grep -F "$label" "$tmp/stdout") $(cat "$tmp/stderr")"
}
broken failed 'if ($c["phase"] == "steady") { $c["status"] = "failed"; $c["images_per_s"] = "nan" }' "failed here"
broken crashed 'if ($c["phase"] == "steady") next' "no steady images/s here"
broken nan 'if ($c["phase"] == "steady") $c["images_per_s"] = "nan"' "no steady images/s here"
broken minus1 'if ($c["phase"] == "steady") $c["images_per_s"] = -1' "no steady images/s here"
broken inf 'if ($c["phase"] == "steady") $c["images_per_s"] = "inf"' "failed here"
broken diverged '$c["status"] = "diverged"' "diverged here"
broken timeout 'if ($c["epoch"] == 3) $c["status"] = "timeout"' "timeout here"
broken oom '$c["status"] = "oom"' "oom here"
broken missing 'next' "not in this study"
grep -qF '38 configuration(s) both ran' "$tmp/failed/REPORT.md" && ok || bad "failed: not counted as both ran"
grep -qF '37 configuration(s) in both, 0 only here (new: not judged), 1 only there' "$tmp/stdout" && ok ||
    bad "missing: $(head -1 "$tmp/stdout")"
# an infinite images/s is no measurement: the row is failed, never an inf speedup
grep -q 'inf' "$tmp/inf/summary.csv" && bad "inf reached summary.csv" || ok

# a new configuration is listed and never gates: the baseline without that configuration
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next } '"$cfg"' { next } { print }' \
    "$fixture" >"$tmp/fewer.csv"
"$report" report "$fixture" --baseline "$tmp/fewer.csv" --out "$tmp/new" >"$tmp/stdout" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -qF "$label  new" "$tmp/stdout" && ok || bad "a new configuration: rc=$rc, want 0 and 'new'"

# a fall past the threshold but inside both spreads (2.7 % here) is within noise: exit 0
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next } '"$cfg"' {
    $c["images_per_s"] = $c["images_per_s"] * 0.98 } { print }' "$fixture" >"$tmp/noise.csv"
"$report" report "$tmp/noise.csv" --baseline "$fixture" --threshold 1 --out "$tmp/noise" >"$tmp/stdout" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -qF "$label  within noise" "$tmp/stdout" && grep -qF '| within noise |' "$tmp/noise/REPORT.md" &&
    ok || bad "a fall inside the spread: rc=$rc, $(grep -F "$label" "$tmp/stdout")"

# ---- a baseline that cannot gate is bad input (exit 2, one line, nothing written): another model, a header only,
#      a report's summary.csv, a FIFO, a directory
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next } { $c["model"] = "vgg" } { print }' \
    "$fixture" >"$tmp/vgg.csv"
head -1 "$fixture" >"$tmp/header.csv"
mkfifo "$tmp/fifo"
for b in vgg.csv header.csv same/summary.csv fifo same; do
    "$report" report "$fixture" --baseline "$tmp/$b" --out "$tmp/bad" >/dev/null 2>"$tmp/stderr"; rc=$?
    [ $rc -eq 2 ] && [ ! -e "$tmp/bad" ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && ok ||
        bad "--baseline $b: rc=$rc, $(cat "$tmp/stderr")"
done
grep -q 'not a regular file' "$tmp/stderr" && ok || bad "a directory as --baseline: $(cat "$tmp/stderr")"

# ---- another GPU: refused (exit 2) unless --baseline-any-gpu, then labelled across GPUs with the difference marked
sed 's/NVIDIA H200/NVIDIA H100/' "$fixture" >"$tmp/h100.csv"
"$report" report "$tmp/h100.csv" --baseline "$fixture" --out "$tmp/bad" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ ! -e "$tmp/bad" ] && grep -q 'NVIDIA H200, this study on NVIDIA H100' "$tmp/stderr" && ok ||
    bad "another GPU: rc=$rc, $(cat "$tmp/stderr")"
"$report" report "$tmp/h100.csv" --baseline "$fixture" --baseline-any-gpu --out "$tmp/gpus" >"$tmp/stdout" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q '^# baseline: .*, across GPUs:' "$tmp/stdout" &&
    grep -q '^# this study: GPU NVIDIA H100 (differs), driver 580.82.07, CUDA' "$tmp/stdout" &&
    grep -qx '## Against the baseline, across GPUs' "$tmp/gpus/REPORT.md" && ok ||
    bad "--baseline-any-gpu: rc=$rc, $(head -3 "$tmp/stdout")"

# ---- a name is data: a newline in the baseline's or the folder's name stays inside its line
nl=$'\n'
cp "$fixture" "$tmp/a${nl}b.csv"
PATH=/nonexistent "$report" report "$fixture" --baseline "$tmp/a${nl}b.csv" --out "$tmp/n${nl}l" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && grep -q '^# baseline: .*a\\nb\.csv (commit' "$tmp/stdout" && ! grep -q '^b\.csv' "$tmp/stdout" &&
    grep -q 'n\\nl/REPORT\.md$' "$tmp/stdout" && ! grep -q '^l/REPORT' "$tmp/stdout" && ! grep -q '^b\.csv' "$tmp/stderr" &&
    grep -qF "\$'$tmp/a\\x0ab.csv'" "$tmp/stderr" && ok ||
    bad "a newline in --baseline's name: rc=$rc, $(head -2 "$tmp/stdout")"

# ---- an input is compared with the outputs by what it resolves to: a link to the folder's summary.csv, as the study
#      or as the baseline, is refused (exit 2) and the file stays as it was
mkdir -p "$tmp/o"
cp "$fixture" "$tmp/o/summary.csv"
ln -s "$tmp/o/summary.csv" "$tmp/s.csv"
ln -s o/summary.csv "$tmp/rel.csv"
for args in "$tmp/s.csv" "$tmp/rel.csv" "$fixture --baseline $tmp/s.csv"; do
    "$report" report $args --out "$tmp/o" >/dev/null 2>"$tmp/stderr"; rc=$?
    [ $rc -eq 2 ] && cmp -s "$fixture" "$tmp/o/summary.csv" && [ ! -e "$tmp/o/REPORT.md" ] &&
        grep -qF 'is there (as summary.csv), a name the report writes' "$tmp/stderr" && ok ||
        bad "report $args --out o (the input a link into o): rc=$rc, $(cat "$tmp/stderr")"
done

# ---- two commits in one CSV: each commit's runs are configurations of their own, side by side (the variant names
#      the commit), none superseded: the fixture twice, the second copy at commit 9f9f9f9 (git_commit, counted from
#      the end, before the language model's two columns: a quoted cell holds commas) with its run ids changed
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next } { print; $c["run_id"] = "b" $c["run_id"];
    $(NF - 2) = "9f9f9f9"; later[++n] = $0 } END { for (i = 1; i <= n; i++) print later[i] }' "$fixture" \
    >"$tmp/commits.csv"
"$report" report "$tmp/commits.csv" --out "$tmp/commits" >/dev/null 2>&1; rc=$?
cm=$tmp/commits/REPORT.md
[ $rc -eq 0 ] && ok || bad "two commits: rc=$rc"
has "$cm" "224 rows, 78 runs, 76 configurations; 2 run(s) left out"
has "$cm" "| nccl (commit 9f9f9f9) | 4 | 512/GPU | lr 0.4 | 90835 |"
has "$cm" "| nccl (commit 1a2b3c4) | 4 | 512/GPU | lr 0.4 | 90835 |"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
