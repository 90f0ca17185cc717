#!/usr/bin/env bash
# gpu_memcheck.sh — compute-sanitizer memcheck and racecheck on a short real LeNet run (MNIST, 2 epochs of a few
# steps: shuffle, gather, training, evaluation and the epoch boundary) of every strategy, each also in bf16 mixed
# precision (naive and nccl with bf16 gradients on the wire too), and memcheck over test_reduce_kernels; no error
# may be reported.
#
# What is checked, and why not more:
# - memcheck instruments every kernel. It also reports CUDA API calls that return an error. NCCL 2.28 makes such
#   calls itself and handles them (cudaFuncGetAttributes on kernels not built for this GPU, error 209; enabling
#   peer access it already has, 704): a report whose first frame past libcuda is in libnccl is counted and shown,
#   not failed. Every other report fails, ours included (our API calls are checked anyway, see engine/check.h).
# - racecheck over test_layers also instruments cuDNN's and cuBLAS's kernels. A shared-memory race report names
#   two instructions of one kernel; where that kernel is not ours it is the library's own, whatever its inputs:
#   counted and shown, not failed (seen on 2 H200s, 2026-11-23: 2 reports in cuDNN 9.14's Hopper bf16 dgrad kernel
#   sm90_xmma_dgrad_implicit_gemm_indexed_bf16..._strided, with test_layers' results all correct).
# - racecheck instruments this project's kernels (the __global__ functions under engine/ and strategies/, read
#   from the sources) in runs with --math fp32, plus a full run over test_layers, which drives every cuDNN/cuBLAS
#   layer at small shapes. Measured with compute-sanitizer 2025.3.1 on H100/H200 (2026-11-22): instrumenting every
#   kernel of a real run grew to 130 GB of host memory and was OOM-killed, and at batch 8 did not finish in 60 s;
#   restricted to our kernels with TF32 cuDNN kernels in the run, the tool stops with "Internal Sanitizer Error:
#   failed to handle a hardware exception" inside cudnnFind; with --math fp32 it runs clean in 9 s. --math only
#   changes cuDNN's and cuBLAS's math mode: our kernels are the same code either way.
# - test_layers runs with SCALING_CONV=backend: each direction then takes its first backend engine config, untimed,
#   so backend kernels are instrumented without timing every candidate five times under racecheck (the timed search
#   in bf16 and tf32 took this test from 130 s to 538 s on an H200, 2026-11-24).
# - The checks run in lanes of two GPUs each, the longest first to the least loaded lane, each printing its line and
#   seconds as it ends: one after another they took over 580 s on 4 H200s (2026-11-28), past a device call's limit,
#   with nothing shown; dealt in turn to two lanes, one lane took 260 s and the other over 440 s.
# SANITIZE_KEEP=DIR keeps every log there (scripts/sanitize.sh). Needs data/mnist; 2 GPUs for the multi-GPU runs.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 1
# The GPUs the lanes below may use: those the caller made visible (CUDA_VISIBLE_DEVICES), if any.
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    IFS=, read -ra vis <<<"$CUDA_VISIBLE_DEVICES"
    ((${#vis[@]} < n_dev)) && n_dev=${#vis[@]}
else
    vis=(); for ((k = 0; k < n_dev; k++)); do vis[k]=$k; done
fi
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
if [ ! -x "$cs" ]; then echo "SKIP: compute-sanitizer not found (set COMPUTE_SANITIZER)"; exit 77; fi
logs=${SANITIZE_KEEP:-$tmp}; mkdir -p "$logs"

# One report block: "========= Program hit ..." or "========= Invalid ..." up to the next blank "=========" line.
# Prints "<ours> <nccl>": reports outside NCCL's own API calls, and those inside them.
classify() {
    awk -v mine=" $kernels " '
        /^========= [A-Z]/ && !/ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|COMPUTE-SANITIZER|Target application|process didn.t/ {
            if (open) n[kind]++
            open = 1; kind = ($0 ~ /^========= Program hit/) ? "api" : "ours"; frame = 0
            # compute-sanitizer 2025.3 may name the calling library in the header and leave the frames unnamed
            # (seen on 2 H200s, 2026-11-23: "Program hit .../libnccl.so.2 (error 209) ... on CUDA API call to
            # .../libcuda.so.1", frames "[0x4cb045] in ").
            if (kind == "api" && $0 ~ /^========= Program hit [^ ]*libnccl\.so/) { kind = "nccl"; frame = 1 }
            # A shared-memory race is between two instructions of one kernel: outside our kernels it is the
            # library kernel'"'"'s own, whatever inputs it is given.
            if ($0 ~ /Race reported between/) {
                t = $0; sub(/.*Race reported between [A-Za-z]+ access at /, "", t); sub(/\+0x.*/, "", t)
                lib = 1; nm = split(mine, M, " ")
                for (j = 1; j <= nm; j++) if (index(t, M[j] "<") || index(t, M[j] "(") || t == M[j]) lib = 0
                if (lib) kind = "lib"
            }
            next }
        open && /Host Frame:/ && !/libcuda\.so/ && frame == 0 {
            frame = 1; if (kind == "api" && $0 ~ /libnccl\.so/) kind = "nccl"; else if (kind == "api") kind = "ours" }
        END { if (open) n[kind]++; printf "%d %d %d\n", n["ours"] + n["api"], n["nccl"], n["lib"] }' "$1"
}

# check TOOL NAME sanitizer-and-program-args...: one line, "ok" or "FAIL" with the seconds it took, and "pass" or
# "fail" appended to $tally (checks run in parallel lanes: the counters live in a file, not in a lane's subshell).
check() {
    local tool=$1 name=$2; shift 2
    local log=$logs/$tool-$name.log s=$SECONDS
    "$cs" --tool "$tool" --print-limit 100000 "$@" >"$log" 2>&1
    local rc=$? ours nccl lib took=$((SECONDS - s))
    read -r ours nccl lib < <(classify "$log")
    local summary; summary=$(grep -h -E "(ERROR|RACECHECK) SUMMARY" "$log" | head -1)
    if [ $rc -eq 0 ] && [ "$ours" -eq 0 ] && [ -n "$summary" ]; then
        echo pass >>"$tally"
        echo "ok   $tool $name ($took s): ${summary#========= }$(
            [ "$nccl" -gt 0 ] && echo " (all $nccl inside NCCL's own API calls)")$(
            [ "$lib" -gt 0 ] && echo " ($lib shared-memory race report(s) inside cuDNN/cuBLAS kernels, not ours)")"
    else
        echo fail >>"$tally"
        echo "FAIL $tool $name ($took s): exit $rc, $ours report(s) not inside NCCL or a library kernel"
        { grep -m 30 -E "^=========" "$log"; tail -n 5 "$log"; } | sed "s/^/[$tool $name] /"
    fi
}

ours=()
kernels=$(grep -rhoE '__global__ (static )?void [A-Za-z_0-9]+' "$root/engine" "$root/strategies" | awk '{print $NF}' | sort -u)
kernels=$(echo $kernels)   # one line, space-separated: classify matches reports against it
for k in $kernels; do
    ours+=(--kernel-name "kns=$k")
done
[ ${#ours[@]} -gt 0 ] || { echo "FAIL: no __global__ functions found under $root/engine"; exit 1; }

# The checks, a line each: tool, name (as check reports it) and the seconds it took on 4 H200s (2026-11-28, two lanes
# side by side; racecheck nccl-bf16 estimated from racecheck nccl), by which the lanes are dealt, the longest first to
# the lane with the least so far. A name "S-bf16" is strategy S with --math bf16 (and bf16 gradients on the wire for
# naive and nccl); racecheck runs --math fp32 (see above for why). Those of 2 GPUs only where 2 are present.
L=(--model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --epochs 2 --steps 8)
checks=("racecheck layers 76" "memcheck single 7" "memcheck single-bf16 5" "memcheck naive-1gpu-bf16 5"
        "racecheck single 58" "memcheck reduce_kernels 2")
if [ "$n_dev" -ge 2 ]; then
    checks+=("memcheck naive 9" "memcheck naive-bf16 7" "racecheck naive 75" "memcheck nccl 63" "memcheck nccl-bf16 68"
             "racecheck nccl 94" "memcheck pipeline 6" "memcheck pipeline-bf16 7" "racecheck pipeline 63"
             "racecheck naive-bf16 70" "racecheck nccl-bf16 95")
else
    echo "note: 1 GPU: naive, nccl and pipeline are not sanitised here"
fi
run_check() {   # run_check "TOOL NAME SECONDS": the check with its program and arguments
    local tool name s pre=() x=()   # pre: the sanitizer's own options, before the program
    read -r tool name _ <<<"$1"
    case $name in
    layers) SCALING_CONV=backend check racecheck layers "$(dirname "$bin")/tests/test_layers"; return ;;
    reduce_kernels) check memcheck reduce_kernels "$(dirname "$bin")/tests/test_reduce_kernels"; return ;;
    # A lone replica with bf16 gradients rounds them in its update segment (strategies/dp.c, dp_update).
    naive-1gpu-bf16) check memcheck "$name" "$bin" --strategy naive --gpus 1 "${L[@]}" --math bf16 --grad-dtype bf16 \
                         --out "$tmp/$tool-$name.csv"; return ;;
    esac
    s=${name%-bf16}
    [ "$s" != single ] && x=(--gpus 2)
    [ "$s" = pipeline ] && x+=(--micro-batches 2)
    [ "$tool" = memcheck ] && [ "$name" = single ] && pre=(--leak-check full)
    [ "$tool" = racecheck ] && pre=("${ours[@]}") && x+=(--math fp32)
    [ "$tool" = memcheck ] && [ "$s" != "$name" ] && x+=(--math bf16)
    [ "$s" != "$name" ] && [ "$s" != pipeline ] && [ "$s" != single ] && x+=(--grad-dtype bf16)
    check "$tool" "$name" "${pre[@]}" "$bin" --strategy "$s" "${x[@]}" "${L[@]}" --out "$tmp/$tool-$name.csv"
}
# SANITIZE_ONLY=REGEX (an extended regular expression over "tool name", e.g. 'pipeline|racecheck nccl-bf16'): only
# the checks it matches, to rerun those a change concerns.
if [ -n "${SANITIZE_ONLY:-}" ]; then
    kept=()
    for c in "${checks[@]}"; do grep -qE -- "$SANITIZE_ONLY" <<<"${c% *}" && kept+=("$c"); done
    echo "SANITIZE_ONLY: ${#kept[@]} of ${#checks[@]} checks"
    [ ${#kept[@]} -gt 0 ] || { echo "FAIL: SANITIZE_ONLY matches no check"; exit 1; }
    checks=("${kept[@]}")
fi

# Lanes of two GPUs each (one where fewer than 4 are present): on 4 GPUs the test takes about half as long. Each
# lane runs its checks one after another.
tally=$tmp/tally; : >"$tally"
lanes=$((n_dev / 2)); [ "$lanes" -ge 1 ] || lanes=1
load=(); queue=()
for ((k = 0; k < lanes; k++)); do load[k]=0; queue[k]=""; done
for j in $(for i in "${!checks[@]}"; do echo "${checks[i]##* } $i"; done | sort -rn | awk '{print $2}'); do
    best=0
    for ((k = 1; k < lanes; k++)); do ((load[k] < load[best])) && best=$k; done
    load[best]=$((load[best] + ${checks[j]##* })); queue[best]+=" $j"
done
for ((k = 0; k < lanes; k++)); do
    devs=${vis[2 * k]}; [ "$n_dev" -ge 2 ] && devs="${vis[2 * k]},${vis[2 * k + 1]}"
    echo "lane $k (GPUs $devs): checks${queue[k]}, about ${load[k]} s"
    (
        export CUDA_VISIBLE_DEVICES=$devs
        for j in ${queue[k]}; do run_check "${checks[j]}"; done
    ) &
done
wait
pass=$(grep -c '^pass$' "$tally"); fail=$(grep -c '^fail$' "$tally")
if [ $((pass + fail)) -ne ${#checks[@]} ]; then
    echo "FAIL: $((pass + fail)) of ${#checks[@]} checks reported"
    fail=$((fail + 1))
fi
summary
