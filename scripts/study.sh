#!/usr/bin/env bash
# study.sh — a scaling study in one command: tf32 against bf16 on 1 and 2 GPUs, every strategy, fp32 and bf16
# gradients for naive and nccl, the all-reduce benchmark (float and bfloat16), then REPORT.md and figures with the
# maths side by side. Prints its elapsed time last.
#
#   scripts/study.sh [OUTDIR]        (default results/study-<UTC date>; needs ./scaling and data/ from setup.sh)
#   MODELS="resnet50" MATHS=bf16 scripts/study.sh OUTDIR      (the ImageNet-class study: synthetic 224x224 data)
#
# MODELS (default "resnet18 lenet": ResNet-18 on Fashion-MNIST, LeNet on MNIST; resnet50 and resnet101 train on the
# synthetic ImageNet-shaped set, STEPS steps per epoch, default 60), MATHS (default tf32,bf16).
# Resumable: rerun the same command after an interruption; training runs are skipped where complete (--resume),
# the benchmark where its CSV is complete (it is written aside and moved in place when it ends well).
# Every sweep point is a separate run of 3 epochs (warmup + 2 steady), one seed, lr 0.1 per GPU (weak scaling).
# Every run shares OUTDIR/conv_algos.tsv (--conv-cache): all of them run the same convolution kernels, so the
# strategies' bf16 results differ only where their arithmetic does.
# Per model, 16 runs: single at the data-parallel batch and at the pipeline's; naive and nccl on 2 GPUs at one
# batch per GPU (ResNet-18 and ResNet-50 256, ResNet-101 128, LeNet 64) x 2 maths x 2 gradient dtypes; the pipeline
# on 2 GPUs, 1F1B, M = 2, 4 (the fastest in results/study-h200x2-2026-11-22); each in tf32 and bf16. Trimmed from
# that study (78 runs in 274 s on 2 H200s) to fit about 5 minutes there with both maths and both gradient dtypes:
# no batch or learning-rate sweep (that study has them in tf32), no 1-GPU naive/nccl runs (single is their 1-GPU
# point), no GPipe and no M = 1 or 8, no 4-GPU runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-results/study-$(date -u +%Y-%m-%d)}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
n_dev=$(nvidia-smi -L | grep -c '^GPU')
multi=""; [ "$n_dev" -ge 2 ] && multi=2
csv=$out/study.csv
bench=${csv%.csv}_allreduce.csv
log=$out/commands.txt
maths=${MATHS:-tf32,bf16}
run() {   # a failed configuration is a row of its own: the study goes on
    echo "./scaling $*" | tee -a "$log"
    ./scaling "$@" --out "$csv" --conv-cache "$out/conv_algos.tsv" --resume | grep -E '^# (summary|run)' || true
}

echo "# $(date -u +%FT%TZ) on $n_dev x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" >> "$log"
read -r -a models <<<"${MODELS:-resnet18 lenet}"     # words, never file names: MODELS='*' is no glob
for model in "${models[@]}"; do
    # bs: single's batches; dps: the data-parallel ones per GPU; pb: the pipeline's global batch
    case $model in
        resnet18) d=(--model resnet18 --dataset fashion-mnist); bs=256; dps=256; pb=512 ;;
        lenet) d=(--model lenet --dataset mnist); bs=64; dps=64; pb=128 ;;
        resnet50) d=(--model resnet50 --dataset synthetic --steps "${STEPS:-60}"); bs=256; dps=256; pb=512 ;;
        resnet101) d=(--model resnet101 --dataset synthetic --steps "${STEPS:-60}"); bs=128; dps=128; pb=256 ;;
        *) echo "study: unknown model $model (resnet18, lenet, resnet50, resnet101)" >&2; exit 2 ;;
    esac
    d+=(--epochs 3)
    run --strategy single "${d[@]}" --batch "$bs" --lr 0.1 --math "$maths"
    [ -n "$multi" ] || continue
    for s in naive nccl; do
        run --strategy $s --gpus "$multi" "${d[@]}" --batch "$dps" --lr 0.1 --math "$maths" --grad-dtype fp32,bf16
    done
    run --strategy single "${d[@]}" --batch "$pb" --lr 0.1 --math "$maths"       # the pipeline's T1 (strong scaling)
    run --strategy pipeline --gpus "$multi" --scale strong "${d[@]}" --batch "$pb" --lr 0.1 --micro-batches 2,4 \
        --schedule 1f1b --math "$maths"
done
if [ -n "$multi" ] && [ ! -s "$bench" ]; then
    echo "./scaling --bench allreduce --gpus $multi --grad-dtype fp32,bf16 --out $bench" >> "$log"
    rm -f "$bench.part"
    if ./scaling --bench allreduce --gpus "$multi" --grad-dtype fp32,bf16 --out "$bench.part" >"$out/bench.log"; then
        mv "$bench.part" "$bench"
    else
        echo "study: the all-reduce benchmark failed (see $out/bench.log); the report has no model line" >&2
    fi
    grep -E '^# [A-Za-z]' "$out/bench.log" || true
fi
# Without gnuplot (GPU nodes often lack it) the report is written without figures; rerun report.sh where it is.
scripts/report.sh "$csv" >/dev/null
command -v gnuplot >/dev/null || echo "study: no gnuplot here: run scripts/report.sh $csv where it is installed"
echo "# study took ${SECONDS} s" >> "$log"
echo "study: $csv, ${bench##*/}, REPORT.md and figures in ${csv%.csv}/, commands in $log"
# The summary: each model's tf32-against-bf16 table from REPORT.md
awk '/^## / && !/All-reduce/ { print; next } /^### .* against / { on = 1; next } on && /^\|/ { print; t = 1; next }
     on && t && !/^\|/ { on = t = 0; print "" }' "${csv%.csv}/REPORT.md"
echo "study: ${SECONDS} s elapsed"
