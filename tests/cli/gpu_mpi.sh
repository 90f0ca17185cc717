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
mpirun=${MPIRUN:-mpirun}
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 2
if ! command -v "$mpirun" >/dev/null 2>&1; then
    echo "SKIP: no $mpirun on the PATH (Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev, then rebuild)"
    exit 77
fi
opts=(--oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && opts+=(--allow-run-as-root)
for v in $(env | sed -n 's/^\(NCCL_[A-Z0-9_]*\)=.*/\1/p'); do opts+=(-x "$v"); done
if "$mpirun" "${opts[@]}" -np 2 "$bin" --help 2>&1 | grep -qF "this build has no MPI"; then
    echo "SKIP: this scaling was built without MPI (install libopenmpi-dev and rebuild)"; exit 77
fi
# Columns by header name (no cell before the environment columns holds a comma in these runs).
col() {     # col FILE NAME: the column's cells of every row, one per line
    awk -F, -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next } { print $c }' "$1"
}
close() {   # close A B EXTRA: |A - B| <= 1e-5 |B| + one unit of B's 6th significant digit + EXTRA
    awk -v a="$1" -v b="$2" -v extra="$3" 'BEGIN {
        if (a == "" || b == "") exit 1
        d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b
        ulp = 0; if (m > 0) { l = log(m) / log(10); f = int(l); if (f > l) f--; ulp = 10 ^ (f - 5) }
        exit !(d <= 1e-5 * m + 1.0001 * ulp + extra) }'
}
run=(--strategy nccl --model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --epochs 1 --steps 30
     --seed 3 --math fp32)

counts=2; [ "$n_dev" -ge 4 ] && counts="2 4"
for n in $counts; do
    a=$tmp/mpi$n; b=$tmp/one$n
    "$mpirun" "${opts[@]}" -np "$n" -x SCALING_DUMP_PARAMS="$a.params" "$bin" "${run[@]}" --out "$a.csv" \
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

    for c in status replicas gpus global_batch lr steps; do
        va=$(col "$a.csv" $c); vb=$(col "$b.csv" $c)
        check "-np $n: $c \"$va\" (mpirun) vs \"$vb\" (one process)" $([ -n "$va" ] && [ "$va" = "$vb" ]; echo $?)
    done
    check "-np $n: status $(col "$a.csv" status), replicas $(col "$a.csv" replicas)" \
        $([ "$(col "$a.csv" status)" = ok ] && [ "$(col "$a.csv" replicas)" = identical ]; echo $?)
    # The CSV holds 6 significant digits: one unit of the last one is allowed on top of the relative 1e-5.
    la=$(col "$a.csv" train_loss); lb=$(col "$b.csv" train_loss)
    check "-np $n: train_loss $la (mpirun) vs $lb (one process), want within 1e-5 relative" \
        $(close "$la" "$lb" 0; echo $?)
    ta=$(col "$a.csv" test_acc); tb=$(col "$b.csv" test_acc)
    check "-np $n: test_acc $ta (mpirun) vs $tb (one process), want within 1e-5 relative or one image of 10000" \
        $(close "$ta" "$tb" 1.0001e-4; echo $?)

    # Final parameters, float by float: relative L2 error of rank 0's against the single process's replica 0.
    sa=$(stat -c %s "$a.params" 2>/dev/null || echo 0); sb=$(stat -c %s "$b.params" 2>/dev/null || echo 0)
    check "-np $n: parameter dumps of $sa and $sb bytes" $([ "$sa" -gt 0 ] && [ "$sa" -eq "$sb" ]; echo $?)
    if [ "$sa" -gt 0 ] && [ "$sa" -eq "$sb" ]; then
        rel=$(paste <(od -An -v -t f4 -w4 "$a.params") <(od -An -v -t f4 -w4 "$b.params") |
              awk '{ d = $1 - $2; num += d * d; den += $2 * $2 }
                   END { printf "%.3g", (den > 0 ? sqrt(num / den) : sqrt(num)) }')
        same=$(cmp -s "$a.params" "$b.params" && echo "bit-identical" || echo "not bit-identical")
        echo "-np $n: parameters rel err $rel ($same), train_loss $la vs $lb, test_acc $ta vs $tb"
        check "-np $n: parameters rel err $rel, want <= 1e-5" \
            $(awk -v r="$rel" 'BEGIN { exit !(r != "" && r + 0 <= 1e-5) }'; echo $?)
    fi
done

summary
