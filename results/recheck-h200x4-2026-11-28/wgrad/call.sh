#!/usr/bin/env bash
# one call: setup, test_dp_update (single's split gradients + nccl), A/B of SCALING_WGRAD on single
export NCCL_NVLS_ENABLE=0; s0=$(date +%s); t() { echo "[$(( $(date +%s)-s0 )) s] $*"; }
t setup; scripts/setup.sh --offline .carry/offline > $OUT/setup.log 2>&1 || { tail -20 $OUT/setup.log; exit 1; }
nvidia-smi -L
t test_dp_update; timeout 150 build/tests/test_dp_update > $OUT/dp_update.log 2>&1; echo "test_dp_update rc $?"
grep -E "single|bit-identical|DIFFERS|FAIL|passed" $OUT/dp_update.log | head -30
R18=(--model resnet18 --dataset fashion-mnist --batch 256 --math bf16 --lr 0.1 --momentum 0.9 --epochs 4 --conv-cache $OUT/c18.tsv)
R50=(--model resnet50 --dataset synthetic --batch 256 --math bf16 --epochs 3 --steps 40 --conv-cache $OUT/c50.tsv)
for rep in 1 2; do for w in widen direct; do
  t "r18 $w $rep"; SCALING_WGRAD=$w timeout 60 ./scaling --strategy single "${R18[@]}" --out $OUT/r18_$w.csv > $OUT/r18_${w}_$rep.log 2>&1
  grep -h "^# summary\|^steps: gpu 0" $OUT/r18_${w}_$rep.log | tail -2
done; done
for w in widen direct; do
  t "r50 $w"; SCALING_WGRAD=$w timeout 80 ./scaling --strategy single "${R50[@]}" --out $OUT/r50_$w.csv > $OUT/r50_$w.log 2>&1
  grep -h "^# summary\|^steps: gpu 0" $OUT/r50_$w.log | tail -2
done
t "r18 fp16 direct"; timeout 60 ./scaling --strategy single "${R18[@]/bf16/fp16}" --out $OUT/r18_fp16.csv > $OUT/r18_fp16.log 2>&1; grep -h "^# summary" $OUT/r18_fp16.log
t done
