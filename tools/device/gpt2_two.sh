#!/usr/bin/env bash
# gpt2_two.sh — one call of two GPUs for GPT-2 small through the command on the corpus (bf16, 2 epochs, seeds 1
# and 2): single on one GPU, nccl on one and two, the pipeline on two (its stages balanced by FLOPs, 1F1B), into one
# CSV, then `scaling report` of it (results/gpt2-h200x2-2026-11-29 ran these commands inline). On one GPU nccl
# trains as single does, so their held-out losses should agree to the digit.
#
#   OUT=/some/dir tools/device/gpt2_two.sh      (carry .carry: the offline bundle)
#
# $OUT afterwards: summary.txt, steps.tsv, gpt2_two.csv, report/, logs/.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"   # OUT required; the budget BUDGET or 585 s
device_begin --local-gpu
run=(./scaling --model gpt2 --model-size small --dataset sotu --math bf16 --epochs 2 --warmup-epochs 0.1 --seed 1,2
     --out "$OUT/gpt2_two.csv")
step single 120 "${run[@]}" --strategy single --gpus 1
step nccl 150 "${run[@]}" --strategy nccl --gpus 1,2
step pipeline 120 "${run[@]}" --strategy pipeline --gpus 2 --schedule 1f1b
step report 60 ./scaling report "$OUT/gpt2_two.csv" --out "$OUT/report"
head -n 40 "$OUT/report/REPORT.md" 2>/dev/null | tee -a "$say_log"
cat "$OUT/steps.tsv" | tee -a "$say_log"
say done
