#!/usr/bin/env bash
# twonode.sh — the emulated two-node study on a host with 2 GPUs: ResNet-18 on Fashion-MNIST (256 per
# GPU) and LeNet on MNIST (64 per GPU), 3 epochs of STEPS steps each, on 1 GPU (single: the reference of speedup,
# efficiency and the projection) and on 2 GPUs:
#   nccl   one process per GPU over NVLink (mpirun -np 2), and on 2 emulated nodes (scripts/node_emu.sh: one GPU
#          and one NCCL_HOSTID per rank) over NCCL's socket transport (NCCL_NET=Socket);
#   naive  one process driving both GPUs (it has no one-process-per-GPU mode, so it cannot span nodes): peer
#          copies, and copies staged through host memory (--naive-path host), the nearest it has to a slow link.
# Every run's rows go to OUTDIR/twonode.csv (nodes, gpus_per_node and nccl_transport tell the runs apart); the two
# nccl ResNet-18 runs are repeated under Nsight Systems (epoch 2's STEPS steps captured; their rows in
# OUTDIR/twonode-nsys.csv, per-process kernel and NVTX summaries, per-GPU stream summaries); the all-reduce
# benchmark over NVLink and over the socket transport (OUTDIR/twonode_allreduce{,_net}.csv, the projection's
# intra- and inter-node paths); then REPORT.md and, where gnuplot is installed, the figures (scripts/report.sh).
# Prints the durations and the table last.
#
#   scripts/twonode.sh [OUTDIR] [DEBDIR]       (default results/twonode-<UTC date>)
#
# DEBDIR, SCALING, NSYS, MPIRUN, STEPS (default 200) as in scripts/slowlink.sh; NSYS=none skips the profiled runs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "twonode: $*" >&2; exit 2; }
source "$ROOT/scripts/lib_links.sh"
links_args "$ROOT/results/twonode-$(date -u +%Y-%m-%d)" "$@"
profile=1; [[ ${NSYS:-} == none ]] && { profile=0; unset NSYS; }
NSYS_WANTED=$profile links_init
csv=$out/twonode.csv
t0=$SECONDS
names=()
for model in resnet18 lenet; do
    if [[ $model == resnet18 ]]; then d=(--model resnet18 --dataset fashion-mnist --batch 256)
    else d=(--model lenet --dataset mnist --batch 64); fi
    d+=(--data-dir "$ROOT/data/${d[3]}" --epochs 3 --steps "$steps" --out "$csv")
    # t1 of speedup and projection, over as many images per epoch as a 2-GPU run's STEPS steps
    links_run "$model-single" one -- --strategy single --gpus 1 "${d[@]}" --steps $((2 * steps))
    links_run "$model-nccl-nvlink" mpi -- --strategy nccl "${d[@]}"
    links_run "$model-nccl-2nodes" emu NCCL_NET=Socket -- --strategy nccl "${d[@]}"
    links_run "$model-naive-p2p" one -- --strategy naive --gpus 2 --naive-path p2p "${d[@]}"
    links_run "$model-naive-host" one -- --strategy naive --gpus 2 --naive-path host "${d[@]}"
    names+=("$model-nccl-nvlink" "$model-nccl-2nodes" "$model-naive-p2p" "$model-naive-host")
done
# The projection's two paths (scripts/report.sh finds them beside the CSV): the all-reduce benchmark over NVLink
# (both strategies) and over NCCL's socket transport (nccl; P2P and shared memory off, one process).
links_run allreduce-nvlink one -- --bench allreduce --gpus 2 --grad-dtype fp32,bf16 --out "${csv%.csv}_allreduce.csv"
links_run allreduce-socket one NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- --bench allreduce --strategy nccl --gpus 2 \
    --grad-dtype fp32,bf16 --out "${csv%.csv}_allreduce_net.csv"
if ((profile)); then
    p=(--strategy nccl --model resnet18 --dataset fashion-mnist --batch 256 --data-dir "$ROOT/data/fashion-mnist"
       --epochs 2 --steps "$steps" --out "$out/twonode-nsys.csv")
    LINKS_PROFILE=$steps links_run resnet18-nccl-nvlink-nsys mpi -- "${p[@]}"
    LINKS_PROFILE=$steps links_run resnet18-nccl-2nodes-nsys emu NCCL_NET=Socket -- "${p[@]}"
    names+=(resnet18-nccl-nvlink-nsys resnet18-nccl-2nodes-nsys)
fi
# Without gnuplot, report.sh writes the tables and says how to add the figures.
if "$ROOT/scripts/report.sh" "$csv" >/dev/null; then echo "twonode: REPORT.md in ${csv%.csv}/"
else echo "twonode: scripts/report.sh $csv failed (the CSV is complete; run it again where it works)"; fi

echo
echo "twonode: $((SECONDS - t0)) s; ms per step of each run's last epoch (profiled runs: the captured steps); see"
echo "scripts/slowlink.sh for the columns. nodes, gpus_per_node, nccl_transport of the rows:"
"$(scaling_bin)" tsv "$csv" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    !seen[$c["run_id"]]++ { printf "  %-8s %-8s %s node(s) x %s: %s\n", $c["model"], $c["strategy"], $c["nodes"],
                            $c["gpus_per_node"], $c["nccl_transport"] == "" ? "-" : $c["nccl_transport"] }'
links_table "${names[@]}"
