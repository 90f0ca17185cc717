#!/usr/bin/env bash
# gpu_faults_mpi.sh — under `mpirun -np 2 ./scaling --strategy nccl` (one process per GPU), a fault on one rank in
# the middle of an epoch ends every rank within --timeout + 10 s with a line naming the rank and the reason, leaves
# the configuration's row, and `--resume` then goes on from the next configuration (doc/faults.md):
#   - a stopped rank (SIGSTOP to rank 1): rank 0's watchdog, a timeout row;
#   - a killed rank (SIGKILL to rank 1): the launcher ends the job, rank 0 leaves an interrupted row (or NCCL's
#     asynchronous error or the deadline comes first: failed, timeout);
#   - an injected NCCL error (SCALING_FAULT nccl on rank 1) and a failed collective (SCALING_FAULT collective): the
#     failing rank's CHECK line, a failed row.
# Each sweeps lr 0.05 then 0.1 (LeNet, MNIST, 3 epochs of 900 steps), the fault in the first; weak scaling writes
# them as 0.1 and 0.2 (lr x 2 GPUs: LR1, LR2). The seconds from the
# fault to the last rank's exit are printed for the fault table. Skips (77) without 2 GPUs, mpirun or MPI.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
source "$(dirname "$0")/lib_mpi.sh"
source "$(dirname "$0")/lib_faults.sh"
mpi_require 2
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
TIMEOUT=20
LR1=0.1 LR2=0.2   # the two configurations' lr cells
run=(--strategy nccl --model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --lr 0.05,0.1
     --epochs 3 --steps 900 --timeout $TIMEOUT)

# within_deadline WHAT SECONDS: every rank gone within the timeout + 10 s
within_deadline() {
    check "$1: every rank gone after $2 s, want <= $((TIMEOUT + 10)) s" \
        $(awk -v t="$2" -v m=$((TIMEOUT + 10)) 'BEGIN { exit !(t <= m) }'; echo $?)
}

# resume_goes_on NAME CSV: --resume skips the faulted first configuration (or re-runs an interrupted one) and
# completes the second
resume_goes_on() {
    local name=$1 csv=$2 rc
    "$mpirun" "${mpi_opts[@]}" -np 2 "$bin" "${run[@]}" --out "$csv" --resume >"$tmp/$name-resume.log" 2>&1; rc=$?
    runs "$csv" >"$tmp/runs"; cat "$tmp/runs"
    check "$name: --resume exits $rc" $([ $rc -eq 0 ]; echo $?)
    check "$name: --resume completed the second configuration" \
        $(awk -F'|' -v lr=$LR2 '$1 == lr && $4 == "ok,ok,ok" { n++ } END { exit !(n == 1) }' "$tmp/runs"; echo $?)
}

# ---- a stopped rank and a killed rank: by hand, mid-epoch (after the first epoch's row)
for sig in STOP KILL; do
    name=sig$sig; csv=$tmp/$name.csv
    "$mpirun" "${mpi_opts[@]}" -np 2 "$bin" "${run[@]}" --out "$csv" >"$tmp/$name.log" 2>&1 &
    pid=$!
    wait_rows "$csv" 1 "$pid" 600
    # No sleep: an epoch of LeNet lasts ~0.2 s on an H200, and half a second here let the first configuration end
    # before the signal (2 H200s, 2026-11-24).
    rank1=$(sed -n 's/^#   rank 1 .* pid \([0-9]*\).*/\1/p' "$tmp/$name.log" | head -n 1)
    check "$name: rank 1's pid from the rank report: '$rank1'" $([ -n "$rank1" ]; echo $?)
    [ -n "$rank1" ] || { kill -9 "$pid"; continue; }
    t0=$(date +%s.%N)
    kill -$sig "$rank1"
    wait "$pid"; rc=$?; pid=""
    took=$(seconds_since "$t0")
    gone "$rank1" || { kill -9 "$rank1"; check "$name: rank 1 still there after mpirun exited" 1; }
    echo "$name: mpirun exited $rc, $took s after SIG$sig to rank 1"
    within_deadline "$name" "$took"
    check "$name: exit $rc, want non-zero" $([ $rc -ne 0 ]; echo $?)
    runs "$csv" >"$tmp/runs"; cat "$tmp/runs"
    # A stopped rank: rank 0's deadline. A killed rank: whichever comes first, the launcher's SIGTERM (interrupted,
    # from rank 0's handler), NCCL's asynchronous error (failed) or the deadline (timeout).
    want=timeout; [ $sig = KILL ] && want="interrupted failed timeout"
    check "$name: the first configuration's run has a row in one of: $want" \
        $(head -n 1 "$tmp/runs" | awk -F'|' -v w=" $want " '{ n = split($4, s, ","); f = 0
                                                             for (i = 1; i <= n; i++) f = f || index(w, " " s[i] " ")
                                                             exit !(f && $5 != "") }'
          echo $?)
    [ $sig = STOP ] && check "$name: one line names rank 0's deadline: $(grep -m1 'ending every rank' "$tmp/$name.log")" \
        $(grep -q "rank 0 on .*no progress for" "$tmp/$name.log"; echo $?)
    resume_goes_on "$name" "$csv"
done

# ---- an injected NCCL error and a failed collective on rank 1, mid-epoch
for fault in nccl:400 collective:400; do
    name=inj-${fault%%:*}; csv=$tmp/$name.csv
    t0=$(date +%s.%N)
    "$mpirun" "${mpi_opts[@]}" -np 2 -x SCALING_FAULT="$fault:rank=1:run=1" "$bin" "${run[@]}" --out "$csv" \
        >"$tmp/$name.log" 2>&1; rc=$?
    took=$(seconds_since "$t0")
    fault_at=$(grep -m1 'SCALING_FAULT: injecting' "$tmp/$name.log")
    echo "$name: mpirun exited $rc, $took s after its start; $fault_at"
    check "$name: the injection happened" $([ -n "$fault_at" ]; echo $?)
    check "$name: exit $rc, want non-zero" $([ $rc -ne 0 ]; echo $?)
    check "$name: one line names rank 1 and the NCCL error: $(grep -m1 'rank 1 on' "$tmp/$name.log")" \
        $(grep -q "rank 1 on .*ending every rank" "$tmp/$name.log"; echo $?)
    runs "$csv" >"$tmp/runs"; cat "$tmp/runs"
    # rank 1's failed row (with its CHECK line), possibly followed by rank 0's interrupted one (the launcher's SIGTERM)
    check "$name: the first configuration's run has a failed row naming rank 1" \
        $("$bin" tsv "$csv" 2>/dev/null | awk -F'\t' -v lr=$LR1 '
              NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
              $c["lr"] == lr && $c["status"] == "failed" && $c["reason"] ~ /rank 1/ { f = 1 } END { exit !f }'
          echo $?)
    resume_goes_on "$name" "$csv"
done
summary
