#!/usr/bin/env bash
# test_baseline.sh — two studies compared and two commits in one CSV, on tests/fixtures/study.csv:
# `scaling report NEW.csv --baseline OLD.csv [--threshold PCT]` exits 0 without a regression and 1 with one (after
# writing everything), names it on stdout, in REPORT.md's section and in baseline.dat; bad input exits 2 and writes
# nothing; a CSV holding two commits' runs reports each commit's configurations side by side, none superseded.
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
[ $rc -eq 0 ] && grep -qx '# 0 regression(s) past 5.0 % (images/s below the baseline.s by more than that)' "$tmp/stdout" &&
    grep -qx '\*\*No regression\*\* past 5.0 %.' "$tmp/same/REPORT.md" && ok ||
    bad "baseline against itself: rc=$rc, $(tail -1 "$tmp/stdout") $(cat "$tmp/stderr")"
"$report" report "$tmp/slower.csv" --baseline "$fixture" --out "$tmp/slower" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
sm=$tmp/slower/REPORT.md
[ $rc -eq 1 ] && ok || bad "a 10 % regression: rc=$rc, want 1"
grep -c 'REGRESSION$' "$tmp/stdout" | grep -qx 1 &&
    grep -qE '^ +71283 +2\.7 % +79203 +2\.7 % +-10\.0% +83\.6 % +92\.9 % +-9\.3  nccl, 4 GPUs, 256/GPU, lr 0\.4, tf32, fp32 grads  REGRESSION$' \
        "$tmp/stdout" && ok || bad "baseline stdout: $(cat "$tmp/stdout")"
grep -q '^scaling report: 1 regression(s) against .*: images/s fell by more than 5.0 %' "$tmp/stderr" && ok ||
    bad "baseline stderr: $(cat "$tmp/stderr")"
has "$sm" "38 configuration(s) both ran (every key column but the seed and the commit), 0 only here, 0 only there."
has "$sm" "| nccl, 4 GPUs, 256/GPU, lr 0.4, tf32, fp32 grads | 71283 | 2.7 % | 79203 | 2.7 % | **-10.0 %** | 83.6 % | 92.9 % | -9.3 | 1, 1 |"
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
            "--baseline $fixture --threshold x" "--baseline $fixture --runs"; do
    "$report" report "$tmp/slower.csv" $args --out "$tmp/bad" >/dev/null 2>"$tmp/stderr"; rc=$?
    [ $rc -eq 2 ] && [ ! -e "$tmp/bad" ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && ok ||
        bad "report $args: rc=$rc, $(cat "$tmp/stderr")"
done

# ---- two commits in one CSV: each commit's runs are configurations of their own, side by side (the variant names
#      the commit), none superseded: the fixture twice, the second copy at commit 9f9f9f9 (the last column: a quoted
#      cell holds commas) with its run ids changed
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next } { print; $c["run_id"] = "b" $c["run_id"];
    $NF = "9f9f9f9"; later[++n] = $0 } END { for (i = 1; i <= n; i++) print later[i] }' "$fixture" >"$tmp/commits.csv"
"$report" report "$tmp/commits.csv" --out "$tmp/commits" >/dev/null 2>&1; rc=$?
cm=$tmp/commits/REPORT.md
[ $rc -eq 0 ] && ok || bad "two commits: rc=$rc"
has "$cm" "224 rows, 78 runs, 76 configurations; 2 run(s) left out"
has "$cm" "| nccl (commit 9f9f9f9) | 4 | 512/GPU | lr 0.4 | 90835 |"
has "$cm" "| nccl (commit 1a2b3c4) | 4 | 512/GPU | lr 0.4 | 90835 |"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
