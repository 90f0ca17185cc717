#!/usr/bin/env bash
# slowlink.sh — the evidence for the breakdown on a slow link: ResNet-18 on Fashion-MNIST, 256 images per
# GPU, nccl under `mpirun -np 2` on a 2-GPU host, once over NVLink and once over NCCL's socket transport
# (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1: a stand-in for an inter-node link). Each link runs twice: plain (3 epochs
# of STEPS steps: the rows to quote) and under Nsight Systems (2 epochs, epoch 2's STEPS steps captured, each kernel
# of the CUDA graphs traced), so the rows of the profiled run and the kernels' timestamps describe the same steps.
#
#   scripts/slowlink.sh [OUTDIR] [DEBDIR]      (default results/slowlink-<UTC date>)
#
# DEBDIR holds libdw1_*.deb and libelf1_*.deb for the nsys of Nsight Compute (unpacked into /tmp/dw; README:
# Profiling). Environment: SCALING (default ./scaling, then build/scaling), NSYS, MPIRUN, STEPS (default 200).
# Writes OUTDIR/slowlink.csv (plain runs' rows), OUTDIR/slowlink-nsys.csv (profiled runs' rows), a log per run, per
# process the capture's kernel and NVTX summaries (*_cuda_gpu_kern_sum.csv, *_nvtx_sum.csv) and per run the
# per-GPU stream summary (*.nsys); the .nsys-rep files stay beside them (not for committing). Prints the table last.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "slowlink: $*" >&2; exit 2; }
source "$ROOT/scripts/lib_links.sh"
links_args "$ROOT/results/slowlink-$(date -u +%Y-%m-%d)" "$@"
NSYS_WANTED=1 links_init
run=(--strategy nccl --model resnet18 --dataset fashion-mnist --data-dir "$ROOT/data/fashion-mnist" --batch 256)
slow=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1)
t0=$SECONDS

links_run nvlink mpi -- "${run[@]}" --epochs 3 --steps "$steps" --out "$out/slowlink.csv"
links_run socket mpi "${slow[@]}" -- "${run[@]}" --epochs 3 --steps "$steps" --out "$out/slowlink.csv"
LINKS_PROFILE=$steps links_run nvlink-nsys mpi -- "${run[@]}" --epochs 2 --steps "$steps" \
    --out "$out/slowlink-nsys.csv"
LINKS_PROFILE=$steps links_run socket-nsys mpi "${slow[@]}" -- "${run[@]}" --epochs 2 --steps "$steps" \
    --out "$out/slowlink-nsys.csv"

echo
echo "slowlink: $((SECONDS - t0)) s; ms per step, epoch 2 (profiled runs: the captured steps); rows: the harness's"
echo "events (compute = busy, exposed = waiting for the all-reduce, idle = the rest); nsys: the compute stream's"
echo "kernels, active = kernels + gaps < 10 us, wait = gaps ending at an NCCL kernel's end, idle = other gaps"
links_table nvlink socket nvlink-nsys socket-nsys
