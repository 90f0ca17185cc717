# shellcheck shell=bash
# lib_llmc.sh — llm.c beside the engine, for the device scripts that time GPT-2 (gpt2_profile.sh, gpt2_final.sh):
# karpathy/llm.c's Makefile, train_gpt2.cu and llmc/ (f1e2ace) with NVIDIA/cudnn-frontend's include/ in .carry/llmc
# (never committed), built as ../shared/anchors/README.md says, trained on the corpus's tokens in its format.
# Sourced after lib.sh, from the repository root, with L set (device_begin).

LLMC=/tmp/llmc
LLMC_B=16 LLMC_T=1024
# llm.c's command: GPT-2 small from random weights (-e d12), batch B x T, no evaluation or sampling to speak of
LLMC_CMD=("$LLMC/train_gpt2cu" -i "$LLMC/tok_train.bin" -j "$LLMC/tok_val.bin" -e d12 -b $LLMC_B -t $LLMC_T
          -d $((LLMC_B * LLMC_T)) -v 1000 -m 1 -s 0 -o "$LLMC/log")

# llmc_prepare: the sources copied to $LLMC, the corpus's tokens in llm.c's format (a 256 int32 header: 20240520, 1,
# the count; then uint16 tokens), and CUDA 13's cudaMemAdvise signature (a cudaMemLocation) on llm.c's out-of-memory
# fallback line.
llmc_prepare() {
    rm -rf "$LLMC" && cp -r .carry/llmc "$LLMC" || return 1
    python3 - data/sotu/train.bin "$LLMC/tok_train.bin" data/sotu/val.bin "$LLMC/tok_val.bin" <<'PY'
import struct, sys
for src, dst in zip(sys.argv[1::2], sys.argv[2::2]):
    b = open(src, "rb").read()
    n = struct.unpack_from("<Q", b, 16)[0]
    open(dst, "wb").write(struct.pack("<256i", 20240520, 1, n, *([0] * 253)) + b[32:32 + 2 * n])
PY
    local host='cudaMemLocation{cudaMemLocationTypeHost, 0}'
    sed -i "s/cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId)/cudaMemAdviseSetPreferredLocation, $host)/" \
        "$LLMC/llmc/cuda_utils.cuh"
}

# The build command (an array, for step or the background)
LLMC_MAKE=(env PATH=/usr/local/cuda/bin:$PATH make -C "$LLMC" train_gpt2cu NO_MULTI_GPU=1 USE_CUDNN=1
           GPU_COMPUTE_CAPABILITY=90 NVCC_LDLIBS="-lnvrtc -lcuda" CUDNN_FRONTEND_PATH="$LLMC/cudnn-frontend/include")

# llmc_median LOG: "llmc,B,T,median_step_ms X,tokens_per_s Y,steps N,min_ms,max_ms": the median step (of an even
# count, the mean of the middle two, as study_median) of those after the tenth (the first include cuDNN's and
# cuBLASLt's setup).
llmc_median() {
    awk '/^step / { for (i = 1; i <= NF; i++) if ($i == "ms") { n++; if (n > 10) print $(i - 1) } }' "$1" |
        sort -g | awk -v b=$LLMC_B -v t=$LLMC_T '{ v[NR] = $1 } END { if (!NR) exit
            m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "llmc,%d,%d,median_step_ms %.2f,tokens_per_s %.0f,steps %d,min_ms %.2f,max_ms %.2f\n", b, t, m,
                b * t / m * 1000, NR, v[1], v[NR] }'
}
