#!/usr/bin/env bash
# recheck_gpt2.sh — one call (two GPUs where lent, else one) for what the session of 2026-11-29 could not re-run:
# gpu_default (on two GPUs: its epoch count and the printed answer's width, mended on the host), GPT-2 small's
# held-out loss in single and in nccl on one GPU (the same training, so the same loss to the digit: the gather's
# mend through the command), test_gpt2_repeat (its gathers at device steps 0 and 1), the engine against PyTorch
# (tools/device/gpt2_torch.sh), then gpu_memcheck.
#
#   OUT=/some/dir tools/device/recheck_gpt2.sh      (carry .carry: the offline bundle)
#
# $OUT afterwards: summary.txt, steps.tsv, heldout.csv, heldout.txt, torch/ (gpt2_torch.sh's), logs/.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"   # OUT required; the budget BUDGET or 585 s
device_begin --local-gpu
step gpu_default 150 ctest --test-dir build -R '^gpu_default$' --output-on-failure
grep -E "^FAIL|^# gpu_default|tests passed" "$L/gpu_default.log" | tee -a "$say_log"

run=(./scaling --model gpt2 --model-size small --dataset sotu --math bf16 --epochs 2 --warmup-epochs 0.1 --seed 1,2
     --gpus 1 --out "$OUT/heldout.csv")
step heldout_single 60 "${run[@]}" --strategy single
step heldout_nccl 60 "${run[@]}" --strategy nccl
# each (seed, epoch): single's held-out loss and nccl's, and whether they are equal as the rows print them
./scaling tsv "$OUT/heldout.csv" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { k = $c["seed"] " " $c["epoch"]; v[k, $c["strategy"]] = $c["test_loss"]; keys[k] = 1 }
    END { for (k in keys) { n++; same += v[k, "single"] == v[k, "nccl"] && v[k, "single"] != ""
                            print "seed, epoch " k ": single " v[k, "single"] ", nccl " v[k, "nccl"] }
          print "held-out equal in " same + 0 " of " n + 0 " (seed, epoch) pairs" }' | sort | tee "$OUT/heldout.txt" |
    tee -a "$say_log"

step repeat 120 build/tests/test_gpt2_repeat
grep -E "^gather|passed|FAIL" "$L/repeat.log" | tee -a "$say_log"

mkdir -p "$OUT/torch"
step gpt2_torch 300 env OUT="$(cd "$OUT" && pwd)/torch" BUDGET=290 bash tools/device/gpt2_torch.sh
grep -E "test_gpt2_torch rc|FAIL|passed" "$OUT/torch/summary.txt" | tee -a "$say_log"

step gpu_memcheck $(($(left) - 15)) ctest --test-dir build -R '^gpu_memcheck$' --output-on-failure
grep -E "^FAIL|ERROR SUMMARY|tests passed" "$L/gpu_memcheck.log" | tee -a "$say_log"
cat "$OUT/steps.tsv" | tee -a "$say_log"
say done
