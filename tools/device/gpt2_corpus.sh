#!/usr/bin/env bash
# gpt2_corpus.sh — one call of one GPU: GPT-2 through the command (tests/cli/gpu_gpt2.sh), then GPT-2 small trained on
# the corpus (data/sotu) by the command and by PyTorch (tools/torch/gpt2_corpus.py: the same model, recipe, batch
# and tokens), three seeds each, and the held-out loss of each epoch side by side.
#
#   OUT=/some/dir tools/device/gpt2_corpus.sh      (carry .carry: the offline bundle)
#
# The recipe both sides run: batch 16 x 1024, bf16, AdamW (lr 6e-4, betas 0.9/0.95, weight decay 0.1 on matrices,
# clipping at 1), warm-up over 0.1 epoch (given to both: 11 of the corpus's 114 steps), then cosine to 0.
# $OUT afterwards: summary.txt, engine.csv (the study), torch_SEED.csv, heldout.csv (epoch, side, seed, losses),
# report/ and logs/.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${CORPUS_BUDGET_S:-560}
epochs=${CORPUS_EPOCHS:-3}
seeds=${CORPUS_SEEDS:-1 2 3}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUT=$(cd "$OUT" && pwd)
device_begin --local-gpu
step gpu_gpt2 240 bash tests/cli/gpu_gpt2.sh build/scaling .
grep -E "^(ok|FAIL)|passed" "$L/gpu_gpt2.log" | head -n 20 | tee -a "$say_log"
step engine 240 ./scaling --model gpt2 --model-size small --dataset sotu --math bf16 --epochs "$epochs" \
    --warmup-epochs 0.1 --seed "$(echo $seeds | tr ' ' ,)" --out "$OUT/engine.csv"
./scaling tsv "$OUT/engine.csv" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { print $c["epoch"] ",engine," $c["seed"] "," $c["train_loss"] "," $c["test_loss"] "," $c["epoch_s"] "," \
      $c["tokens_per_s"] }' >"$OUT/heldout.body"
for s in $seeds; do
    step "torch_$s" $(($(left) - 30)) python3 tools/torch/gpt2_corpus.py --shape small --batch 16 --seq 1024 \
        --epochs "$epochs" --warmup-epochs 0.1 --seed "$s"
    grep -E "^[0-9]+," "$L/torch_$s.log" >"$OUT/torch_$s.csv"
    awk -F, -v s="$s" '{ print $1 ",torch," s "," $2 "," $3 "," $4 ",-" }' "$OUT/torch_$s.csv" >>"$OUT/heldout.body"
done
{ echo "epoch,side,seed,train_loss,heldout_loss,epoch_s,tokens_per_s"
  sort -t, -k1,1n -k2,2 -k3,3n "$OUT/heldout.body"; } \
    >"$OUT/heldout.csv"
rm -f "$OUT/heldout.body"
tee -a "$say_log" <"$OUT/heldout.csv"
step report 60 ./scaling report "$OUT/engine.csv" --out "$OUT/report"
say "done"
