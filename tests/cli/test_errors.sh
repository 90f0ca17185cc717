#!/usr/bin/env bash
# test_errors.sh — bad input to `scaling` gets one line naming the problem, exit status 2, and leaves the CSV
# untouched. Runs on CI (no GPU): the no-device case hides devices with CUDA_VISIBLE_DEVICES.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib.sh"
printf 'precious,existing,content\n' > "$tmp/other.csv"

data=(--data-dir "$root/data/mnist" --model lenet --dataset mnist)
expect_error 'unknown strategy "warp" (valid: single'   --strategy warp "${data[@]}"
expect_error 'unknown model "vgg" (valid: lenet, resnet18, resnet50, resnet101, gpt2)' --model vgg
expect_error 'unknown dataset'                           --dataset cifar
expect_error '--batch: "12x"'                            --batch 12x "${data[@]}"
expect_error '--batch: "0"'                              --batch 0 "${data[@]}"
expect_error '--timeout: "0" must be a positive number'  --timeout 0 "${data[@]}"
expect_error '--retry-failed: only with --resume'       --retry-failed "${data[@]}"
if [ -z "${SCALING_NO_FAULT_INJECTION:-}" ]; then
    SCALING_FAULT=cuda:0 expect_error 'SCALING_FAULT: "cuda:0": K must be a positive integer' "${data[@]}"
    # past the integer's range: refused, not taken as the largest value (a fault that would never fire)
    SCALING_FAULT=cuda:99999999999999999999 expect_error 'K must be a positive integer' "${data[@]}"
    SCALING_FAULT=cuda:1:rank=4294967296 expect_error '"rank=4294967296" is not rank=R or run=N' "${data[@]}"
else    # built with -DSCALING_FAULT_INJECTION=OFF (tests/CMakeLists.txt): any value is refused
    SCALING_FAULT=cuda:1 expect_error 'SCALING_FAULT: "cuda:1": this build has no fault injection' "${data[@]}"
fi
# the benchmark knobs (engine/knob.c), read at each run's setup, refused before the first
SCALING_PIPE_SPLIT=even expect_error 'SCALING_PIPE_SPLIT=even: expected balance or step' "${data[@]}"
SCALING_NCCL_CTAS=65 expect_error 'SCALING_NCCL_CTAS=65: expected an integer from 0 to 64' "${data[@]}"
SCALING_DP_WGRAD=direct expect_error 'SCALING_DP_WGRAD: renamed SCALING_WGRAD' "${data[@]}"
for v in abc -1 5x 99999999999999999999; do
    SCALING_PROFILE_STEPS=$v expect_error "SCALING_PROFILE_STEPS=$v: expected an integer from 0 to" "${data[@]}"
done
# the noise scale: the pipeline has none; data parallel compares replicas, so not on one GPU
expect_error '--gns-every: strategy pipeline does not measure the gradient noise scale (single, naive, nccl' \
    --strategy pipeline --gpus 2 --gns-every 10 "${data[@]}"
expect_error 'strategy nccl measures the noise scale between its replicas, so on 2 GPUs or more (--gpus has 1;' \
    --strategy nccl --gpus 1,2 --gns-every 10 "${data[@]}"
# a value holding a newline is quoted with it escaped: the refusal stays one line
expect_error '--strategy: unknown strategy "a\nb"'      --strategy $'a\nb' "${data[@]}"
expect_error '--gpus: "1\n2" is not a positive integer' --gpus $'1\n2' "${data[@]}"
expect_error "$tmp/a\\nb/train-images-idx3-ubyte"      --data-dir "$tmp/a"$'\n'"b" --model lenet --dataset mnist
expect_error '--conv-cache a\nb/x: directory a\nb'      --conv-cache $'a\nb/x' "${data[@]}"
SCALING_BN=$'own\n' expect_error 'SCALING_BN=own\n: expected own, cudnn or auto' "${data[@]}"
# a value twice in a list would run one configuration twice, and the report keeps only the later run
expect_error '--seed: "1" repeats an earlier value in "1,2,1"' --seed 1,2,1 "${data[@]}"
expect_error '--lr: "0.10" repeats an earlier value in "0.1,0.10"' --lr 0.1,0.10 "${data[@]}"
expect_error '--math: "tf32" repeats an earlier value'   --math tf32,bf16,tf32 "${data[@]}"
expect_error '--gpus: "2" repeats an earlier value'      --gpus 2,2 "${data[@]}"
# a bucket past any model, and past what its byte count can hold
expect_error '--bucket-mb 1e+20 is larger than'          --bucket-mb 99999999999999999999 "${data[@]}"
expect_error '--lr: "-0.1"'                              --lr -0.1 "${data[@]}"
expect_error '--epochs: "abc"'                           --epochs abc "${data[@]}"
expect_error '--gpus: "0"'                               --gpus 0 "${data[@]}"
expect_error '--math: unknown math mode "fp8" (valid: fp32, tf32, bf16, fp16)' --math fp8 "${data[@]}"
expect_error '--math: unknown math mode "half"'          --math tf32,bf16,fp16,half "${data[@]}"
expect_error '--grad-dtype: unknown gradient dtype "int8" (valid: fp32, bf16, fp16)' --grad-dtype int8 "${data[@]}"
# bf16 gradients need a gradient reduction, wherever bf16 stands in the list; refused before any GPU is touched
for s in single pipeline; do
    CUDA_VISIBLE_DEVICES= expect_error "--grad-dtype bf16: strategy $s has no gradient reduction" \
        --strategy $s --gpus 2 --grad-dtype fp32,bf16 --math tf32,bf16 "${data[@]}"
done
# ... and naive and nccl take it: the same command gets as far as the device check
for s in naive nccl; do
    CUDA_VISIBLE_DEVICES= expect_error 'no CUDA device' --strategy $s --gpus 2 --grad-dtype fp32,bf16 --math tf32,bf16 \
        "${data[@]}"
done
# fp16: a math every strategy takes, a wire only a gradient reduction has
CUDA_VISIBLE_DEVICES= expect_error '--grad-dtype fp16: strategy single has no gradient reduction' --grad-dtype fp16 \
    "${data[@]}"
for s in naive nccl pipeline; do
    CUDA_VISIBLE_DEVICES= expect_error 'no CUDA device' --strategy $s --gpus 2 --math fp16,bf16 "${data[@]}"
done
# single's bound is its property (one GPU): said before the device is asked
CUDA_VISIBLE_DEVICES= expect_error 'strategy single runs on at most 1 GPU' --strategy single --gpus 2 --math fp16,bf16 \
    "${data[@]}"
CUDA_VISIBLE_DEVICES= expect_error 'no CUDA device' --strategy nccl --gpus 2 --grad-dtype fp16 --math fp16 "${data[@]}"
# A language model (gpt2) and an image classifier each with the other's data, optimizer or options; gpt2's sizes, its
# maths and the strategies that do not train it yet: refused before anything is read (no GPU asked for either).
lm=(--model gpt2 --dataset sotu --data-dir "$root/data/sotu")
expect_error 'model gpt2 learns from tokens, and fashion-mnist holds images (gpt2 takes: sotu, synthetic)' --model gpt2
expect_error 'model lenet learns from images, and sotu holds tokens (lenet takes: fashion-mnist, mnist,' \
    --model lenet --dataset sotu
expect_error '--optimizer sgd: it steps the image classifiers, not model gpt2 (gpt2 takes: adamw)' --optimizer sgd \
    "${lm[@]}"
expect_error '--optimizer lars: it steps the image classifiers, not model gpt2' --optimizer lars "${lm[@]}"
expect_error '--optimizer adamw: it steps a language model, not model lenet (lenet takes: sgd, lars)' \
    --optimizer adamw "${data[@]}"
expect_error '--model-size: model lenet has one size (models with sizes: gpt2)' --model-size small "${data[@]}"
expect_error '--model-size: unknown size "huge" of gpt2 (valid: tiny, small, medium, large, xl)' --model-size huge \
    "${lm[@]}"
expect_error '--math fp16: model gpt2 trains in fp32, tf32 or bf16' --math bf16,fp16 "${lm[@]}"
[ -f "$root/data/sotu/train.bin" ] &&    # the corpus's windows are known only once it is read
    expect_error '--batch 4096: the training split has 1828 windows of 1024 tokens, so a step takes at most' \
        --batch 16,4096 "${lm[@]}"
CUDA_VISIBLE_DEVICES= expect_error "--schedule zb: not with --model gpt2 (zero bubble splits backward into its data \
and weight parts, which GPT-2's layers do not; --schedule gpipe or 1f1b)" --strategy pipeline --gpus 2 --schedule zb \
    "${lm[@]}"
for o in "--image-size 64" "--target-acc 0.5" "--init kaiming" "--momentum 0.9" "--gns-every 2" \
         "--conv-cache $tmp/c.tsv"; do
    expect_error "${o%% *}: not with --model gpt2 (" $o "${lm[@]}"
done
expect_error "$tmp/nocorpus/train.bin: cannot open: " --data-dir "$tmp/nocorpus" --model gpt2 --dataset sotu
expect_error "give --data-dir DIR, or train on --dataset synthetic" --data-dir "$tmp/nocorpus" --model gpt2 \
    --dataset sotu
# --image-size: not a positive integer, too small for the model, given to a model with a fixed input; a --split
# between a projection and the batch norm that folds its bias, and two inside one residual block (refused from the
# layer graph, before any GPU is looked for)
expect_error '--image-size: "big" is not a positive integer' --model resnet50 --image-size big "${data[@]:0:2}"
expect_error '--image-size 16 is too small for resnet50' --model resnet50 --image-size 16 --dataset synthetic
expect_error '--image-size 96: model lenet has a fixed 28x28 input' --image-size 96 "${data[@]}"
CUDA_VISIBLE_DEVICES= expect_error '--split: layer 14 (s2.b0.bn2) is not a valid cut' --model resnet18 \
    --strategy pipeline --gpus 2 --split 14 --dataset synthetic
CUDA_VISIBLE_DEVICES= expect_error '--split: stage 2 (layers 11-11, s1.b1.conv1..s1.b1.conv1) would pass the output of s1.b0.bn3 through unread' \
    --model resnet101 --strategy pipeline --gpus 3 --split 11,12 --dataset synthetic
expect_error 'not divisible by 3'        --strategy nccl --scale strong --gpus 3 --batch 64 "${data[@]}"
# --conv-cache: a folder that is not there, and a file that is not a conv cache (left as it was)
expect_error "--conv-cache $tmp/none/algos.tsv: directory $tmp/none" --conv-cache "$tmp/none/algos.tsv" "${data[@]}"
printf 'epoch,loss\n1,0.5\n' > "$tmp/algos.tsv"
expect_error "--conv-cache $tmp/algos.tsv:1: not a conv-cache line" --conv-cache "$tmp/algos.tsv" "${data[@]}"
[ "$(cat "$tmp/algos.tsv")" = "$(printf 'epoch,loss\n1,0.5')" ] && pass=$((pass + 1)) ||
    { echo "FAIL: --conv-cache: the refused file changed"; fail=$((fail + 1)); }
expect_error '--conv-cache: empty path'                   --conv-cache '' "${data[@]}"
expect_error "$tmp/nodata"                               --data-dir "$tmp/nodata" --model lenet --dataset mnist
# a corrupt file: a truncated copy of the real test labels
mkdir -p "$tmp/bad"; cp "$root"/data/mnist/* "$tmp/bad/" 2>/dev/null
lbl=$(ls "$tmp"/bad/t10k-labels-idx1-ubyte* 2>/dev/null | head -1)
if [ -n "$lbl" ]; then
    if [[ $lbl == *.gz ]]; then zcat "$lbl" | head -c 5000 | gzip -c > "$lbl.tmp"; else head -c 5000 "$lbl" > "$lbl.tmp"; fi
    mv "$lbl.tmp" "$lbl"
    expect_error 'truncated' --data-dir "$tmp/bad" --model lenet --dataset mnist
else
    echo "FAIL: no MNIST under $root/data/mnist (run scripts/setup.sh)"; fail=$((fail + 1))
fi
CUDA_VISIBLE_DEVICES= expect_error 'no CUDA device' "${data[@]}" --epochs 1
# --bench allreduce: a CSV of another layout is refused before the device is looked for, and left as it was
printf 'precious,existing,content\n' > "$tmp/other_bench.csv"
CUDA_VISIBLE_DEVICES= "$bin" --bench allreduce --gpus 2 --out "$tmp/other_bench.csv" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q "other_bench.csv: header differs" "$tmp/stderr" &&
    [ ! -s "$tmp/stdout" ] && [ "$(cat "$tmp/other_bench.csv")" = precious,existing,content ] && pass=$((pass + 1)) ||
    { echo "FAIL: --bench allreduce into a foreign CSV: rc=$rc"; cat "$tmp/stderr"; fail=$((fail + 1)); }

# The default study (no options) checks the environment as a sweep does, before it looks for a GPU or makes its
# folder: where no GPU is visible, the bad value is named instead of "no CUDA device", and nothing is created.
default_refused() {   # default_refused "<substring of the message>" VAR=value...
    local want=$1; shift
    rm -rf "$tmp/cwd"; mkdir "$tmp/cwd"
    (cd "$tmp/cwd" && env CUDA_VISIBLE_DEVICES= "$@" "$bin" >"$tmp/stdout" 2>"$tmp/stderr"); local rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -qF -- "$want" "$tmp/stderr" &&
       [ ! -s "$tmp/stdout" ] && [ -z "$(ls -A "$tmp/cwd")" ]; then pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $* scaling -> rc=$rc, created: $(ls -A "$tmp/cwd" | tr '\n' ' '); wanted '$want'; got:"
        cat "$tmp/stderr"
    fi
}
default_refused 'SCALING_PIPE_SPLIT=even: expected balance or step' SCALING_PIPE_SPLIT=even
default_refused 'SCALING_PROFILE_STEPS=x: expected an integer' SCALING_PROFILE_STEPS=x
default_refused 'SCALING_FAULT: "bogus"' SCALING_FAULT=bogus
default_refused "SCALING_DUMP_PARAMS $tmp: a directory" SCALING_DUMP_PARAMS="$tmp"

# A CSV with another header is refused and left byte-identical.
cp "$tmp/other.csv" "$tmp/other.orig"
"$bin" --out "$tmp/other.csv" --dataset synthetic --model lenet >/dev/null 2>"$tmp/stderr"; rc=$?
if [ $rc -eq 2 ] && cmp -s "$tmp/other.csv" "$tmp/other.orig" && grep -q 'header' "$tmp/stderr" \
   && [ "$(wc -l <"$tmp/stderr")" -eq 1 ]; then pass=$((pass + 1))
else fail=$((fail + 1)); echo "FAIL: foreign-header CSV: rc=$rc"; cat "$tmp/stderr"; fi

# A strategy's GPU bound, from its properties: before anything is read, in a dry run too.
expect_error '--gpus 2: strategy single runs on at most 1 GPU' --strategy single --gpus 2 "${data[@]}"
expect_error '--gpus 4: strategy single runs on at most 1 GPU' --gpus 1,4 --dry-run "${data[@]}"
# a mistyped option, and an option's name without its dashes
expect_error 'unknown option "--stratgy" (did you mean --strategy?)' --stratgy nccl
expect_error 'unexpected argument "help" (did you mean --help?)' help
# --help fits a terminal of 80 columns, and its usage names the subcommands
"$bin" --help >"$tmp/help80" 2>&1
wide=$(LC_ALL=C tr -d '\200-\277' <"$tmp/help80" | LC_ALL=C awk 'length($0) > 80' | wc -l)
[ "$wide" -eq 0 ] && grep -q 'scaling report STUDY.csv' "$tmp/help80" && grep -q 'scaling tsv FILE' "$tmp/help80" &&
    pass=$((pass + 1)) || { echo "FAIL: --help: $wide lines past 80 columns, or no subcommands"; fail=$((fail + 1)); }

# --help: exit 0, every long option listed.
"$bin" --help >"$tmp/help" 2>&1; rc=$?
for o in strategy gpus model dataset data-dir batch lr scale epochs seed momentum weight-decay math grad-dtype init out \
         help; do
    grep -q -- "--$o" "$tmp/help" || { echo "FAIL: --help lacks --$o"; fail=$((fail + 1)); }
done
[ $rc -eq 0 ] && pass=$((pass + 1)) || { echo "FAIL: --help exit $rc"; fail=$((fail + 1)); }

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
