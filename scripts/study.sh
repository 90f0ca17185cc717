#!/usr/bin/env bash
# study.sh — the study of issue 5 in one command: every strategy on 1, 2 and 4 GPUs (as many as the machine
# has), ResNet-18 on Fashion-MNIST and LeNet on MNIST, a batch sweep and a learning-rate sweep, the all-reduce
# benchmark, then plots and REPORT.md. Resumable: rerun the same command after an interruption (--resume).
#
#   scripts/study.sh [OUTDIR]        (default results/study-<UTC date>; needs ./scaling and data/ from setup.sh)
#
# Every sweep point is a separate run of 3 epochs. Run on 2 H200s in 274 s (results/study-h200x2-2026-11-22/);
# not yet on 4 GPUs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-results/study-$(date -u +%Y-%m-%d)}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
n_dev=$(nvidia-smi -L | grep -c '^GPU')
counts=(1); for g in 2 4; do [ "$g" -le "$n_dev" ] && counts+=("$g"); done
gpus=$(IFS=,; echo "${counts[*]}"); multi=$(IFS=,; echo "${counts[*]:1}")
csv=$out/study.csv
log=$out/commands.txt
run() {   # a failed configuration is a row of its own: the study goes on
    echo "./scaling $*" | tee -a "$log"
    ./scaling "$@" --out "$csv" --resume | grep -E '^# (summary|run)' || true
}

echo "# $(date -u +%FT%TZ) on $n_dev x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" >> "$log"
for model in resnet18 lenet; do
    if [ $model = resnet18 ]; then d=(--model resnet18 --dataset fashion-mnist --epochs 3); b=256; bs=128,256,512; pb=1024
    else d=(--model lenet --dataset mnist --epochs 3); b=64; bs=32,64,128; pb=256; fi
    for s in single naive nccl; do
        g=$gpus; [ $s = single ] && g=1
        run --strategy $s --gpus "$g" "${d[@]}" --batch "$bs" --lr 0.1          # batch sweep, weak scaling
        run --strategy $s --gpus "$g" "${d[@]}" --batch "$b" --lr 0.05,0.2,0.4  # learning-rate sweep
    done
    if [ -n "$multi" ]; then
        run --strategy single "${d[@]}" --batch "$pb" --lr 0.1
        for sch in gpipe 1f1b; do
            run --strategy pipeline --gpus "$multi" --scale strong "${d[@]}" --batch "$pb" --lr 0.1 \
                --micro-batches 1,2,4,8 --schedule $sch
        done
    fi
done
if [ -n "$multi" ]; then
    echo "./scaling --bench allreduce --gpus $multi --out ${csv%.csv}_allreduce.csv" >> "$log"
    ./scaling --bench allreduce --gpus "$multi" --out "${csv%.csv}_allreduce.csv" | grep -E '^# [A-Za-z]' || true
fi
if command -v gnuplot >/dev/null; then
    scripts/report.sh "$csv"
    echo "study: $csv, plots and REPORT.md in ${csv%.csv}/, commands in $log"
else   # GPU nodes often have no gnuplot: the CSVs are the study; plots and report can be made anywhere
    echo "study: $csv and commands in $log; no gnuplot here: run scripts/report.sh $csv where it is installed"
fi
