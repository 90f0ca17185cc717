#!/usr/bin/env bash
# gpt2_dp_final.sh — one call of one GPU at the end of a round that gave GPT-2 to the data-parallel strategies: the
# one-GPU suite (ResNet-50's from-scratch test alone after it; gpu_memcheck apart), the equivalence tests' own output,
# GPT-2 small on the corpus through single, naive and nccl (3 epochs, seeds 1-2, one study CSV: on one GPU the three
# train alike to the bit), nccl under mpirun with one rank against one process, and the engine's step speed
# (build/gpt2_bench). Run from the repository root with OUT set.
#
# $OUT afterwards: summary.txt, corpus_dp.csv, equiv.txt, engine.csv, steps.tsv, logs.tgz.
set -u
source tools/device/lib.sh   # OUT required, budget BUDGET or 585
device_begin --local-gpu
device_gpu_suite 150
for t in test_dp_gpt2 test_gpt2_model; do step "$t" 60 "build/tests/$t"; done
grep -hE "bit-identical|params |backward over units|[0-9]+ passed" "$L"/test_dp_gpt2.log "$L"/test_gpt2_model.log \
    | tee "$OUT/equiv.txt" | tee -a "$say_log"
for st in single naive nccl; do
    [ "$(left)" -gt 80 ] && step "corpus_$st" $(($(left) - 60)) ./scaling --model gpt2 --model-size small \
        --dataset sotu --math bf16 --epochs 3 --warmup-epochs 0.1 --seed 1,2 --strategy "$st" --gpus 1 \
        --out "$OUT/corpus_dp.csv"
done
./scaling tsv "$OUT/corpus_dp.csv" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { print $c["strategy"], $c["seed"], $c["epoch"], $c["status"], $c["train_loss"], $c["test_loss"], \
      $c["tokens_per_s"] }' | tee -a "$say_log"
# One process per GPU (mpirun, strategies/dist.c) with one rank: its rows against one process's, tiny on the corpus.
tiny=(--model gpt2 --model-size tiny --dataset sotu --math bf16 --epochs 2 --steps 20)
[ "$(left)" -gt 60 ] && step mpi_nccl 40 mpirun --allow-run-as-root -np 1 ./scaling "${tiny[@]}" --strategy nccl \
    --out "$OUT/mpi.csv" && step one_nccl 40 ./scaling "${tiny[@]}" --strategy nccl --out "$OUT/one.csv"
for f in mpi one; do
    ./scaling tsv "$OUT/$f.csv" 2>/dev/null | awk -F'\t' -v f=$f 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { print f, $c["epoch"], $c["status"], $c["train_loss"], $c["test_loss"], $c["nodes"] }'
done | tee -a "$say_log"
[ "$(left)" -gt 30 ] && step gpt2_bench 40 build/gpt2_bench small 16 1024 20
grep -E "^(variant|engine)" "$L/gpt2_bench.log" | tee "$OUT/engine.csv" | tee -a "$say_log"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$OUT/logs"
say done
