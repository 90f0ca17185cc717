#!/usr/bin/env bash
# node_emu.sh — one rank of a multi-node job emulated on one host, to run the multi-node path on one machine: the
# launcher's ranks are cut into NODES nodes of equal size in rank order, each rank sees only its own GPU
# (CUDA_VISIBLE_DEVICES, as Slurm's GPU binding does) and counts as its node for scaling (SCALING_NODE_ID) and for
# NCCL (NCCL_HOSTID), which then joins the nodes over its network transport (InfiniBand where present, else
# sockets; NCCL_NET=Socket forces sockets), never over NVLink or shared memory.
#
#   mpirun -np 2 --bind-to none -x NCCL_NET=Socket scripts/node_emu.sh 2 ./scaling --strategy nccl ...
#
# Rank and size come from Open MPI's mpirun (OMPI_COMM_WORLD_*), MPICH/Intel mpiexec (PMI_RANK, PMI_SIZE) or an
# srun step (SLURM_PROCID, SLURM_STEP_NUM_TASKS); the GPU is the rank's index among this host's ranks
# (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID), taken from CUDA_VISIBLE_DEVICES where set, else from
# nvidia-smi's list. Node n is "<host>.node<n>". Bad input — NODES not a positive integer, no launcher, NODES not
# dividing the ranks, fewer GPUs on this host than ranks on it — is one line on stderr (from rank 0, or from this
# host's first rank) and exit 2 on every rank.
set -u

rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-}}}
size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-${SLURM_STEP_NUM_TASKS:-}}}
local=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-}}}
host_ranks=${OMPI_COMM_WORLD_LOCAL_SIZE:-${MPI_LOCALNRANKS:-}}
# die WHO MESSAGE...: the rank named by WHO prints the words of MESSAGE as one line (rank0: rank 0; host0: this
# host's first rank; self: this one); every rank exits 2.
die() {
    local who=$1; shift
    case $who in
        rank0) [ "${rank:-0}" = 0 ] && echo "node_emu: $*" >&2 ;;
        host0) [ "${local:-0}" = 0 ] && echo "node_emu: $*" >&2 ;;
        *) echo "node_emu: $*" >&2 ;;
    esac
    exit 2
}

nodes=${1:-}
usage="usage: mpirun -np N scripts/node_emu.sh NODES COMMAND..."
[[ $nodes =~ ^[1-9][0-9]*$ ]] || die rank0 "NODES \"$nodes\": want a positive integer ($usage)"
shift
(($# >= 1)) || die rank0 "no command to run ($usage)"
# Every launcher value is checked to be a number before it reaches bash arithmetic, where a word such as a[$(cmd)]
# would run cmd.
[[ $rank =~ ^[0-9]+$ && $size =~ ^[1-9][0-9]*$ && $local =~ ^[0-9]+$ && $host_ranks =~ ^[0-9]*$ ]] ||
    die rank0 "not started by a launcher that states rank, size and local rank (mpirun, mpiexec, srun)"
((size % nodes == 0)) || die rank0 "$size ranks on $nodes nodes: the node count does not divide the ranks"

if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    IFS=, read -r -a gpus <<<"$CUDA_VISIBLE_DEVICES"
else
    mapfile -t gpus < <(nvidia-smi -L 2>/dev/null | sed -n 's/^GPU \([0-9]*\):.*/\1/p')
fi
if [ -n "$host_ranks" ]; then
    ((host_ranks <= ${#gpus[@]})) || die host0 "$(hostname): ${#gpus[@]} GPU(s) but the launcher started" \
        "$host_ranks ranks on this host (one GPU per rank)"
elif ((local >= ${#gpus[@]})); then     # the host's rank count unknown: the ranks past the GPUs say so
    die self "$(hostname): ${#gpus[@]} GPU(s) but the launcher started at least $((local + 1)) ranks on this host" \
        "(one GPU per rank)"
fi

per=$((size / nodes))
host=$(hostname | tr -c '[:alnum:]._\n-' '_' | cut -c1-40)
export CUDA_VISIBLE_DEVICES=${gpus[$local]}
export SCALING_NODE_ID=$host.node$((rank / per))
export NCCL_HOSTID=$SCALING_NODE_ID
exec "$@"
