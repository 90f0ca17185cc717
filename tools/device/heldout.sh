#!/usr/bin/env bash
# heldout.sh — one call of one GPU on GPT-2's held-out loss between processes: the GPT-2 and data-parallel GPU tests,
# the tiny model's held-out loss over three processes each in bf16 and fp32, and the tiny run under
# compute-sanitizer's memcheck and initcheck. Run from the repository root with OUT set.
set -u
source tools/device/lib.sh   # OUT required, budget BUDGET or 585
device_begin --local-gpu
step gpu_subset 200 ctest --test-dir build -L gpu -j4 --timeout 150 -R 'gpt2|test_dp_|gpu_trace' --output-on-failure
grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$L/gpu_subset.log" | tee -a "$say_log"
tiny=(--model gpt2 --model-size tiny --dataset sotu --epochs 1 --steps 20 --strategy single)
for math in bf16 fp32; do
    for r in 1 2 3; do
        ./scaling "${tiny[@]}" --math $math --out "$OUT/repro_$math.csv" >"$L/repro_${math}_$r.log" 2>&1
    done
    ./scaling tsv "$OUT/repro_$math.csv" | awk -F'\t' -v m=$math 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { print m, $c["status"], $c["train_loss"], $c["test_loss"] }' | tee -a "$say_log"
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
small=(--model gpt2 --model-size tiny --dataset sotu --epochs 1 --steps 3 --strategy single --math bf16)
for tool in memcheck initcheck; do
    [ "$(left)" -gt 100 ] && step "san_$tool" $(($(left) - 60 < 150 ? $(left) - 60 : 150)) "$CS" --tool $tool \
        --print-limit 20 ./scaling "${small[@]}" --out "$OUT/san_$tool.csv"
    grep -E "ERROR SUMMARY|Invalid|Uninitialized|at 0x|by thread" "$L/san_$tool.log" | head -30 | tee -a "$say_log"
done
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$OUT/logs"
say done
