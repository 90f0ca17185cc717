#!/usr/bin/env bash
# test_node_emu.sh — scripts/node_emu.sh without a GPU (CI): the ranks a launcher states are cut into equal nodes
# in rank order, each rank gets its own GPU from CUDA_VISIBLE_DEVICES by its index on the host and its node as
# SCALING_NODE_ID and NCCL_HOSTID; bad input is one line (from one rank) and exit 2. The launchers' variables are
# set by hand here; tests/cli/test_mpi.sh runs it under a real mpirun.
set -u
root=$2
emu=$root/scripts/node_emu.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() {   # check "<what>" <condition exit status>
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
host=$(hostname | tr -c '[:alnum:]._\n-' '_' | cut -c1-40)
# rank R SIZE LOCAL LOCAL_SIZE NODES [VAR=VALUE...]: what node_emu.sh hands the command, as "gpu node hostid",
# with Open MPI's variables; its stderr in $tmp/err, its exit status in $rc.
rank() {
    local r=$1 n=$2 l=$3 ls=$4 nodes=$5; shift 5
    out=$(env -i PATH="$PATH" OMPI_COMM_WORLD_RANK="$r" OMPI_COMM_WORLD_SIZE="$n" OMPI_COMM_WORLD_LOCAL_RANK="$l" \
          OMPI_COMM_WORLD_LOCAL_SIZE="$ls" "$@" bash "$emu" "$nodes" \
          sh -c 'echo "$CUDA_VISIBLE_DEVICES $SCALING_NODE_ID $NCCL_HOSTID"' 2>"$tmp/err")
    rc=$?
}
want() {    # want WHAT EXPECTED: the last rank() printed EXPECTED and exited 0
    check "$1: got \"$out\" (exit $rc), want \"$2\"" $([ $rc -eq 0 ] && [ "$out" = "$2" ]; echo $?)
}

# Two ranks on one host with GPUs 3 and 5 as two nodes: one GPU and one node each.
rank 0 2 0 2 2 CUDA_VISIBLE_DEVICES=3,5; want "2 nodes, rank 0" "3 $host.node0 $host.node0"
rank 1 2 1 2 2 CUDA_VISIBLE_DEVICES=3,5; want "2 nodes, rank 1" "5 $host.node1 $host.node1"
# Four ranks as two nodes of two: nodes in rank order, GPUs by the index on the host.
rank 1 4 1 4 2 CUDA_VISIBLE_DEVICES=0,1,2,3; want "2 nodes of 2, rank 1" "1 $host.node0 $host.node0"
rank 2 4 2 4 2 CUDA_VISIBLE_DEVICES=0,1,2,3; want "2 nodes of 2, rank 2" "2 $host.node1 $host.node1"
# One node: every rank on node 0, still one GPU each.
rank 3 4 3 4 1 CUDA_VISIBLE_DEVICES=0,1,2,3; want "1 node, rank 3" "3 $host.node0 $host.node0"
# srun's variables (a step of 2 tasks on this host), no local size: the rank's index picks its GPU.
out=$(env -i PATH="$PATH" SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=2 SLURM_LOCALID=1 CUDA_VISIBLE_DEVICES=6,7 \
      bash "$emu" 2 sh -c 'echo "$CUDA_VISIBLE_DEVICES $SCALING_NODE_ID"' 2>"$tmp/err"); rc=$?
want "srun step, task 1" "7 $host.node1"

# Bad input: exit 2 on every rank, one line from one of them, the command never runs.
refused() {     # refused WHAT NEEDLE PRINTS(1: this rank prints, 0: silent)
    local lines
    lines=$(wc -l <"$tmp/err")
    check "$1: exit $rc, want 2" $([ $rc -eq 2 ]; echo $?)
    check "$1: ran the command (\"$out\")" $([ -z "$out" ]; echo $?)
    if [ "$3" -eq 1 ]; then
        check "$1: $lines stderr lines, want 1 naming \"$2\": $(cat "$tmp/err")" \
            $([ "$lines" -eq 1 ] && grep -qF -- "$2" "$tmp/err"; echo $?)
    else
        check "$1: this rank printed: $(cat "$tmp/err")" $([ "$lines" -eq 0 ]; echo $?)
    fi
}
rank 0 3 0 3 2 CUDA_VISIBLE_DEVICES=0,1,2; refused "3 ranks on 2 nodes, rank 0" \
    "node_emu: 3 ranks on 2 nodes: the node count does not divide the ranks" 1
rank 2 3 2 3 2 CUDA_VISIBLE_DEVICES=0,1,2; refused "3 ranks on 2 nodes, rank 2" "" 0
rank 0 4 0 4 2 CUDA_VISIBLE_DEVICES=0,1; refused "4 ranks on a host with 2 GPUs, its first rank" \
    "2 GPU(s) but the launcher started 4 ranks on this host (one GPU per rank)" 1
rank 3 4 3 4 2 CUDA_VISIBLE_DEVICES=0,1; refused "4 ranks on a host with 2 GPUs, rank 3" "" 0
rank 0 2 0 2 0 CUDA_VISIBLE_DEVICES=0,1; refused "NODES 0" "NODES \"0\": want a positive integer" 1
rank 0 2 0 2 two CUDA_VISIBLE_DEVICES=0,1; refused "NODES two" "NODES \"two\": want a positive integer" 1
out=$(env -i PATH="$PATH" CUDA_VISIBLE_DEVICES=0 bash "$emu" 2 echo ran 2>"$tmp/err"); rc=$?
refused "no launcher" "not started by a launcher that states rank, size and local rank" 1

# A launcher's value is data: a local size that bash arithmetic would run (a[$(cmd)]) is refused, and never runs.
rank 0 2 0 'rank[$(touch '"$tmp"'/PWNED)]' 2 CUDA_VISIBLE_DEVICES=0,1
refused "a local size with a command in it" "not started by a launcher that states rank, size and local rank" 1
check "the local size's command ran" $([ ! -e "$tmp/PWNED" ]; echo $?)

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
