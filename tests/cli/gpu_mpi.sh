#!/usr/bin/env bash
# gpu_mpi.sh — one process per GPU equals one process driving every GPU: LeNet trained 30 steps (fp32, seed 3) by
# `mpirun -np N ./scaling --strategy nccl` and by `./scaling --strategy nccl --gpus N` gives the same train loss
# and test accuracy (relative 1e-5; the accuracy may differ by one test image, a near-tie flipped by rounding), the
# same final parameters (SCALING_DUMP_PARAMS: relative L2 error <= 1e-5), identical replicas and status ok; only
# rank 0 writes (1 header + 1 row) and prints the table. N = 2, and 4 where 4 GPUs are present.
# Skips (77) with a message without 2 GPUs, without mpirun, or in a build without MPI. MPIRUN overrides the
# launcher; NCCL_* variables of this environment (NCCL_NVLS_ENABLE=0 on H200 hosts) are passed to every rank.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
source "$(dirname "$0")/lib_mpi.sh"
mpi_require 2
run=(--strategy nccl --model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --epochs 1 --steps 30
     --seed 3 --math fp32)
mpi_pin_algos "${run[@]}"
run+=("${pin[@]}")

counts=2; [ "$n_dev" -ge 4 ] && counts="2 4"
for n in $counts; do
    a=$tmp/mpi$n; b=$tmp/one$n
    "$mpirun" "${mpi_opts[@]}" -np "$n" -x SCALING_DUMP_PARAMS="$a.params" "$bin" "${run[@]}" --out "$a.csv" \
        >"$a.log" 2>&1
    rc=$?
    check "mpirun -np $n scaling --strategy nccl exits $rc" $rc
    [ $rc -eq 0 ] || tail -n 30 "$a.log"
    SCALING_DUMP_PARAMS="$b.params" "$bin" "${run[@]}" --gpus "$n" --out "$b.csv" >"$b.log" 2>&1
    rc=$?
    check "scaling --strategy nccl --gpus $n exits $rc" $rc
    [ $rc -eq 0 ] || tail -n 30 "$b.log"

    lines=$(wc -l <"$a.csv" 2>/dev/null || echo 0)
    check "-np $n: CSV has $lines lines, want 1 header + 1 row (rank 0 alone writes)" $([ "$lines" -eq 2 ]; echo $?)
    k=$(grep -c '^# scaling: strategy' "$a.log")
    check "-np $n: table header printed $k times, want once" $([ "$k" -eq 1 ]; echo $?)
    k=$(grep -c '^\[run 1/1  epoch 1/1\]' "$a.log")
    check "-np $n: progress line printed $k times, want once" $([ "$k" -eq 1 ]; echo $?)
    k=$(grep -c '^#   rank ' "$a.log")
    check "-np $n: per-rank report has $k lines, want $n" $([ "$k" -eq "$n" ]; echo $?)
    grep -E '^# one process per GPU|^#   rank ' "$a.log"
    # Every rank of a node on its own GPU: the PCI bus ids of one host differ.
    dup=$(awk '/^#   rank / { k = $5 " " $NF; if (seen[k]++) print k }' "$a.log")
    check "-np $n: two ranks on one GPU: $dup" $([ -z "$dup" ]; echo $?)

    same_training "-np $n" "$a" "$b"
done

summary
