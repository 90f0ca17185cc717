#!/usr/bin/env bash
# gpu_default.sh — the README's first command: `./scaling` with no options, run in a scratch folder whose data/ links
# to the checkout's. It must exit 0 and write one folder results/default-<UTC>/ holding study.csv with every run the
# plan makes for the GPUs present (5 epochs each, all ok), REPORT.md, and the figures where gnuplot is (else the
# one-line note saying how to get them); the progress line counts runs over the whole study; and the printed answer
# must match numbers recomputed here from the CSV (plots/csv.awk, medians of the steady epochs, single at the same
# batch as T1). Ends with a summary: GPUs, runs, wall time, the answer.
set -u
bin=$1; root=$2
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac     # it runs from a scratch folder
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 1

work=$tmp/work
mkdir -p "$work" && ln -s "$root/data" "$work/data"
t0=$(date +%s)
(cd "$work" && "$bin" >"$tmp/out" 2>"$tmp/err"); rc=$?
wall=$(($(date +%s) - t0))
check "scaling with no options exits $rc" $rc
[ $rc -eq 0 ] || tail -n 30 "$tmp/err"

dirs=$(find "$work/results" -mindepth 1 -maxdepth 1 -type d -name 'default-*' 2>/dev/null)
check "one folder results/default-* ($(echo "$dirs" | grep -c .))" $([ "$(echo "$dirs" | grep -c .)" -eq 1 ]; echo $?)
dir=$(echo "$dirs" | head -n 1)
csv=$dir/study.csv
awk -f "$root/plots/csv.awk" "$csv" >"$tmp/rows.tsv" 2>/dev/null || : >"$tmp/rows.tsv"

# The plan for n_dev GPUs, as README and --help say: GPU counts 1, 2, 4, ... and n_dev; single on 1 (batch 256, and
# 1024 with a pipeline); naive and nccl on every count from 2; the pipeline on those up to 8 that divide 1024.
counts=$(awk -v n="$n_dev" 'BEGIN { for (g = 1; g <= n; g = (g * 2 > n && g < n) ? n : g * 2) { printf "%d ", g; if (g == n) break } }')
multi=0; pipe=0
for g in $counts; do
    [ "$g" -ge 2 ] && multi=$((multi + 1))
    [ "$g" -ge 2 ] && [ "$g" -le 8 ] && [ $((1024 % g)) -eq 0 ] && pipe=$((pipe + 1))
done
runs=$((1 + (pipe > 0 ? 1 : 0) + 2 * multi + pipe))
set -- $(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { run[$c["run_id"]]++; n++; if ($c["status"] != "ok") bad++; if ($c["epoch"] > 5) bad++
      s[$c["strategy"] " " $c["gpus"]] = 1 }
    END { for (r in run) { k++; if (run[r] != 5) short++ }; for (x in s) m++; print n + 0, k + 0, short + 0, bad + 0, m + 0 }' \
    "$tmp/rows.tsv")
check "study.csv: $2 runs, want $runs" $([ "${2:-0}" -eq $runs ]; echo $?)
check "study.csv: $1 rows, want $((5 * runs)); $3 run(s) without 5 epochs, $4 row(s) not ok" \
    $([ "${1:-0}" -eq $((5 * runs)) ] && [ "${3:-1}" -eq 0 ] && [ "${4:-1}" -eq 0 ]; echo $?)
check "study.csv: $5 strategy x GPU-count pairs, want $((1 + 2 * multi + pipe))" $([ "${5:-0}" -eq $((1 + 2 * multi + pipe)) ]; echo $?)
grep -q "^\[run 1/$runs " "$tmp/err" && grep -q "^\[run $runs/$runs  epoch 5/5\]" "$tmp/err"
check "the progress line counts runs over the whole study (1/$runs .. $runs/$runs)" $?

md=$dir/REPORT.md
check "REPORT.md written" $([ -s "$md" ]; echo $?)
if command -v gnuplot >/dev/null; then
    figs="$dir/speedup-*.png $dir/epoch_time-*.png"; [ "$n_dev" -gt 1 ] || figs="$dir/*.png"   # 1 GPU: nothing scales
    check "figures beside REPORT.md" $(ls $figs >/dev/null 2>&1; echo $?)
else
    grep -q '(no figures: gnuplot not found' "$md" 2>/dev/null && [ "$(grep -c 'gnuplot not found' "$tmp/err")" -eq 1 ]
    check "no gnuplot here: REPORT.md without figures, and one stderr line saying how to get them" $?
fi

# The answer, recomputed: per run the median of its steady epochs; T1 = the fastest single run on 1 GPU at the line's
# batch (per GPU; the pipeline's global); each other strategy at its largest GPU count, its fastest run there.
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { r = $c["run_id"]; S[r] = $c["strategy"]; G[r] = $c["gpus"] + 0
      P[r] = $c["micro_batches"] != "" || S[r] == "pipeline"; B[r] = P[r] ? $c["global_batch"] : $c["per_gpu_batch"]
      if ($c["phase"] == "steady") { n[r]++; t[r, n[r]] = $c["epoch_s"] + 0 } }
    function median(r,    i, j, x, v) {
        for (i = 1; i <= n[r]; i++) { x = t[r, i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
        return n[r] % 2 ? v[(n[r] + 1) / 2] : (v[n[r] / 2] + v[n[r] / 2 + 1]) / 2 }
    END {
        for (r in S) { m[r] = median(r); if (G[r] > gmax) gmax = G[r]; if (G[r] > top[S[r]]) top[S[r]] = G[r]
                       if (S[r] == "single" && G[r] == 1 && (!((B[r]) in T1) || m[r] < T1[B[r]])) T1[B[r]] = m[r] }
        for (r in S) if (S[r] != "single" && G[r] == top[S[r]] && (!(S[r] in best) || m[r] < m[best[S[r]]])) best[S[r]] = r
        for (s in best) { r = best[s]; sp = T1[B[r]] / m[r]
            printf "%s %d %d %.6f %.6f %.6f %.6f\n", s, G[r], B[r], m[r], T1[B[r]], sp, 100 * sp / G[r]
            if (G[r] == gmax && (f == "" || m[r] < m[best[f]])) f = s }
        if (gmax > 1) printf "fastest %s %.6f\n", f, m[best[f]] }' "$tmp/rows.tsv" >"$tmp/want"
sed -n '/^# answer:/,$p' "$tmp/out" >"$tmp/answer"
compared=0
while read -r s g b t t1 sp ef; do
    [ "$s" = fastest ] && continue
    line=$(awk -v s="$s" '$1 == s' "$tmp/answer" | head -n 1)
    set -- $line
    ok=$(awk -v g="$g" -v t="$t" -v t1="$t1" -v sp="$sp" -v ef="$ef" -v G="${2:-0}" -v T="${4:-x}" -v T1="${5:-x}" \
        -v SP="${6:-x}" -v EF="${7:-x}" 'function d(a, b) { return a > b ? a - b : b - a }
        BEGIN { sub(/x$/, "", SP); print (G == g && d(T, t) < 0.0011 && d(T1, t1) < 0.0011 && d(SP, sp) < 0.011 &&
                                         d(EF, ef) < 0.11) ? 0 : 1 }')
    check "answer for $s: printed '$line', recomputed $g GPUs $t s, T1 $t1 s, ${sp}x, ${ef} %" "$ok"
    compared=$((compared + 1))
done <"$tmp/want"
want_lines=$(( n_dev > 1 ? 3 : 0 ))
check "answer lines compared: $compared, want $want_lines (naive, nccl, pipeline on 2+ GPUs)" \
    $([ $compared -eq $want_lines ]; echo $?)
if [ "$n_dev" -gt 1 ]; then
    f=none ft=0
    read -r _ f ft < <(grep '^fastest' "$tmp/want")
    grep -q "^# fastest on $n_dev GPUs: $f, $(printf '%.3f' "$ft") s per epoch" "$tmp/answer"
    check "fastest on $n_dev GPUs: $f (recomputed)" $?
else
    grep -q '^# one GPU: nothing to scale' "$tmp/answer"; check "one GPU: the answer says so" $?
fi
grep -qF "# report: results/$(basename "$dir")/REPORT.md" "$tmp/answer"; check "the answer names REPORT.md" $?

echo "# gpu_default: $n_dev GPU(s), $runs runs, ${wall} s wall (setup, $((5 * runs)) epochs, report)"
cat "$tmp/answer"
summary
