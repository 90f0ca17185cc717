#!/usr/bin/env bash
# schedule_check.sh — one call of one GPU for the learning-rate schedule, LARS and the noise scale: their GPU tests
# (and those of the update path they changed), then short runs that size the study: the noise scale's cost at
# --gns-every 100 against none, and LARS's rate at batch 4096.
#
#   OUT=/some/dir tools/device/schedule_check.sh
#
# $OUT afterwards: summary.txt and logs.tar.gz (every log and CSV).
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${CHECK_BUDGET_S:-540}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
device_begin

for t in test_lars test_schedule test_loss_scale_gpu test_graph test_oom test_dp_update; do
    (($(left) > 200)) || break
    timeout 240 "build/tests/$t" >"$L/$t.log" 2>&1
    echo "$t: exit $?; $(tail -n 1 "$L/$t.log")" | tee -a "$OUT/summary.txt"
    grep -E '^FAIL|^LARS|^sum of|noise scale|graph = host' "$L/$t.log" | head -n 12 | tee -a "$OUT/summary.txt"
done

base=(--model resnet18 --dataset fashion-mnist --math bf16 --lr-schedule cosine --warmup-epochs 1 --seed 1)
say "noise scale's cost: batch 256, 4 epochs, --gns-every 0 then 100 (twice each, interleaved)"
for k in 0 100 0 100; do
    (($(left) > 120)) || break
    timeout 120 ./scaling "${base[@]}" --batch 256 --lr 0.1 --epochs 4 --gns-every "$k" \
        --out "$L/gns_cost.csv" >>"$L/gns_cost.out" 2>&1
done
grep '^# summary' "$L/gns_cost.out" | tee -a "$OUT/summary.txt"

say "LARS at 4096, 4 epochs: rate 2, 5, 10, 20 (no scaling rule), and SGD linear-scaled (1.6)"
if (($(left) > 90)); then
    timeout 200 ./scaling "${base[@]}" --batch 4096 --lr 2,5,10,20 --lr-scaling none --optimizer lars --epochs 4 \
        --gns-every 4 --out "$L/lars.csv" >"$L/lars.out" 2>&1
    timeout 60 ./scaling "${base[@]}" --batch 4096 --lr 1.6 --lr-scaling none --epochs 4 --gns-every 4 \
        --out "$L/lars.csv" >>"$L/lars.out" 2>&1
    grep '^# summary' "$L/lars.out" | tee -a "$OUT/summary.txt"
fi
say "done"
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
