#!/usr/bin/env bash
# tta.sh — one call of one GPU for time to target accuracy: ResNet-18 on Fashion-MNIST in bf16 at global batches 256
# to 4096 with the linearly scaled rate (0.1 at 256), 2 epochs of warm-up and a cosine decay over 10 epochs, 3 seeds
# each, the noise scale measured every 25 steps; LARS at 2048 and 4096 at the rate a short probe picks; the
# square-root rule at 2048 and 4096. Every run appends to one CSV, the study `scaling report` reads.
#
#   OUT=/some/dir tools/device/tta.sh
#
# $OUT afterwards: study.csv, summary.txt, logs.tar.gz.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${TTA_BUDGET_S:-560}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
device_begin
csv=$OUT/study.csv
common=(--model resnet18 --dataset fashion-mnist --math bf16 --lr-schedule cosine --warmup-epochs 2 --epochs 10
        --seed 1,2,3 --gns-every 25 --out "$csv")

# LARS's rate: the best final test accuracy of 4 epochs at batch 4096, one seed, each of three rates.
say "LARS probe at 4096"
timeout 120 ./scaling --model resnet18 --dataset fashion-mnist --math bf16 --lr-schedule cosine --warmup-epochs 1 \
    --epochs 4 --batch 4096 --optimizer lars --lr 5,10,20 --lr-scaling none --out "$L/lars_probe.csv" \
    >"$L/lars_probe.out" 2>&1
lars_lr=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                   $c["epoch"] == 4 && $c["test_acc"] > best { best = $c["test_acc"]; lr = $c["lr"] }
                   END { print lr ? lr : 10 }' "$L/lars_probe.csv")
grep '^# summary' "$L/lars_probe.out" | tee -a "$OUT/summary.txt"
say "LARS rate at 4096: $lars_lr"

say "SGD, linear rule, batches 256..4096 x 3 seeds"
timeout $(($(left) - 150)) ./scaling "${common[@]}" --batch 256,512,1024,2048,4096 --lr 0.1 --lr-base-batch 256 \
    --lr-scaling linear >"$L/sgd.out" 2>&1
say "SGD: exit $?"
say "LARS at 2048 and 4096 x 3 seeds (rate $lars_lr at 4096, square-root rule)"
timeout $(($(left) - 70)) ./scaling "${common[@]}" --batch 2048,4096 --optimizer lars --lr "$lars_lr" \
    --lr-base-batch 4096 --lr-scaling sqrt >"$L/lars.out" 2>&1
say "LARS: exit $?"
say "SGD, square-root rule, 2048 and 4096 x 3 seeds"
(($(left) > 60)) && timeout $(($(left) - 10)) ./scaling "${common[@]}" --batch 2048,4096 --lr 0.1 \
    --lr-base-batch 256 --lr-scaling sqrt >"$L/sqrt.out" 2>&1
say "sqrt: exit $?"
grep -h '^# summary' "$L/sgd.out" "$L/lars.out" "$L/sqrt.out" | tee -a "$OUT/summary.txt"
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
say "done"
