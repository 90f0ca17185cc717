# shellcheck shell=bash
# lib_mpi.sh — what the GPU tests that use mpirun share (gpu_mpi.sh, gpu_twonode.sh, gpu_breakdown.sh): mpirun and
# its options, the convolution algorithms pinned, cells of a CSV by column name, and the comparison of an mpirun run
# with the one-process run of the same training. Sourced after lib_gpu.sh (bin set). MPIRUN overrides the launcher; NCCL_* variables of this
# environment (NCCL_NVLS_ENABLE=0 on H200 hosts) go to every rank.

# mpi_require N: skips (77, with the reason) unless N GPUs, mpirun and an MPI build are present (mpi_setup).
mpi_require() {
    gpu_require "$1"
    mpi_setup || { echo "SKIP: $mpi_missing"; exit 77; }
}

# mpi_setup: sets mpirun and mpi_opts; returns 1 with the reason in mpi_missing where there is no mpirun or this
# scaling was built without MPI.
mpi_setup() {
    mpirun=${MPIRUN:-mpirun}
    mpi_opts=(--oversubscribe --bind-to none)
    [ "$(id -u)" -eq 0 ] && mpi_opts+=(--allow-run-as-root)
    for v in $(env | sed -n 's/^\(NCCL_[A-Z0-9_]*\)=.*/\1/p'); do mpi_opts+=(-x "$v"); done
    mpi_missing="no $mpirun on the PATH (Debian/Ubuntu: apt-get install openmpi-bin libopenmpi-dev, then rebuild)"
    command -v "$mpirun" >/dev/null 2>&1 || return 1
    mpi_missing="this scaling was built without MPI (install libopenmpi-dev and rebuild)"
    ! "$mpirun" "${mpi_opts[@]}" -np 2 "$bin" --help 2>&1 | grep -qF "this build has no MPI"
}

# mpi_pin_algos RUN-ARGS...: one GPU searches the convolution algorithms of RUN-ARGS into $tmp/conv_algos.tsv and
# sets pin=(--conv-cache that file) for the runs compared, so they run the same kernels: the search is timed, and a
# process searching on two GPUs side by side can pick otherwise than ranks searching alone, which changes rounding.
mpi_pin_algos() {
    pin=(--conv-cache "$tmp/conv_algos.tsv")
    "$bin" "$@" --gpus 1 --epochs 1 --steps 1 "${pin[@]}" --out "$tmp/pin.csv" >"$tmp/pin.log" 2>&1
    local rc=$?
    check "the convolution search into $tmp/conv_algos.tsv exits $rc" $rc
    [ $rc -eq 0 ] || tail -n 20 "$tmp/pin.log"
}

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

# same_training LABEL A B: the runs that wrote A.csv / A.params (one process per GPU) and B.csv / B.params (one
# process) trained alike: the same status, replicas, gpus, batch, lr and steps; train loss within 1e-5 relative;
# test accuracy within 1e-5 or one image of 10000 (a near-tie flipped by rounding); final parameters within 1e-5
# (relative L2 error of A's against B's, float by float); A's status ok and replicas identical.
same_training() {
    local what=$1 a=$2 b=$3 c va vb la lb ta tb sa sb rel same
    for c in status replicas gpus global_batch lr steps; do
        va=$(col "$a.csv" $c); vb=$(col "$b.csv" $c)
        check "$what: $c \"$va\" (mpirun) vs \"$vb\" (one process)" $([ -n "$va" ] && [ "$va" = "$vb" ]; echo $?)
    done
    check "$what: status $(col "$a.csv" status), replicas $(col "$a.csv" replicas)" \
        $([ "$(col "$a.csv" status)" = ok ] && [ "$(col "$a.csv" replicas)" = identical ]; echo $?)
    # The CSV holds 6 significant digits: one unit of the last one is allowed on top of the relative 1e-5.
    la=$(col "$a.csv" train_loss); lb=$(col "$b.csv" train_loss)
    check "$what: train_loss $la (mpirun) vs $lb (one process), want within 1e-5 relative" \
        $(close "$la" "$lb" 0; echo $?)
    ta=$(col "$a.csv" test_acc); tb=$(col "$b.csv" test_acc)
    check "$what: test_acc $ta (mpirun) vs $tb (one process), want within 1e-5 relative or one image of 10000" \
        $(close "$ta" "$tb" 1.0001e-4; echo $?)
    sa=$(stat -c %s "$a.params" 2>/dev/null || echo 0); sb=$(stat -c %s "$b.params" 2>/dev/null || echo 0)
    check "$what: parameter dumps of $sa and $sb bytes" $([ "$sa" -gt 0 ] && [ "$sa" -eq "$sb" ]; echo $?)
    if [ "$sa" -gt 0 ] && [ "$sa" -eq "$sb" ]; then
        rel=$(paste <(od -An -v -t f4 -w4 "$a.params") <(od -An -v -t f4 -w4 "$b.params") |
              awk '{ d = $1 - $2; num += d * d; den += $2 * $2 }
                   END { printf "%.3g", (den > 0 ? sqrt(num / den) : sqrt(num)) }')
        same=$(cmp -s "$a.params" "$b.params" && echo "bit-identical" || echo "not bit-identical")
        echo "$what: parameters rel err $rel ($same), train_loss $la vs $lb, test_acc $ta vs $tb"
        check "$what: parameters rel err $rel, want <= 1e-5" \
            $(awk -v r="$rel" 'BEGIN { exit !(r != "" && r + 0 <= 1e-5) }'; echo $?)
    fi
}
