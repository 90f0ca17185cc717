#!/usr/bin/env bash
# test_dry_run.sh — `--version` and `--dry-run` on a machine without a GPU (CI): both exit 0 and write nothing; the
# dry run lists the runs as the scaling rules make them, their count, and an estimate from --out's earlier rows.
set -u
bin=$(realpath "$1"); root=$2
fake=$(dirname "$bin")/tests/scaling_fake
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_faults.sh"
check() { if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
mkdir -p "$tmp/cwd"; cd "$tmp/cwd" || exit 1
untouched() { [ -z "$(ls -A "$tmp/cwd")" ]; }

# ---- --version: the commit and the libraries built against
"$bin" --version >"$tmp/v.out" 2>"$tmp/v.err"; rc=$?
cat "$tmp/v.out"
check "--version: exit $rc, want 0; stderr empty" $([ $rc -eq 0 ] && [ ! -s "$tmp/v.err" ]; echo $?)
check "--version: the commit on line 1" $(grep -qE '^scaling ([0-9a-f]{7,}|unknown)(-dirty)?$' "$tmp/v.out"; echo $?)
if grep -q "built without CUDA (host-only)" "$tmp/v.out"; then   # the host-only build: no libraries, no GPU code
    check "--version: no training in the host-only build" $(grep -q "no training" "$tmp/v.out"; echo $?)
else
    check "--version: CUDA, cuDNN, NCCL and MPI built against" \
        $(v='[0-9]+\.[0-9]+'
          grep -qE "^built against: CUDA $v, cuDNN $v\.[0-9]+, NCCL $v\.[0-9]+, (Open MPI|MPI|no MPI)" "$tmp/v.out"
          echo $?)
    check "--version: the GPUs and the code built for them" \
        $(grep -qE "^GPUs: NVIDIA, compute capability 8\.0 or newer; code built: .*(sm_[0-9]+|PTX compute_[0-9]+)" \
              "$tmp/v.out"; echo $?)
fi
check "--version: nothing written" $(untouched; echo $?)

# ---- --dry-run: weak scaling multiplies batch and lr by the GPUs; no device is probed (there is none here)
"$bin" --dry-run --strategy nccl --model lenet --dataset mnist --data-dir "$root/data/mnist" --gpus 1,2,4 \
    --batch 64 --lr 0.1 --math fp32,bf16 --out "$tmp/cwd/study.csv" >"$tmp/d.out" 2>"$tmp/d.err"; rc=$?
cat "$tmp/d.out" "$tmp/d.err"
check "--dry-run: exit $rc, want 0, stderr empty" $([ $rc -eq 0 ] && [ ! -s "$tmp/d.err" ]; echo $?)
# run gpus gbatch per-gpu lr math grads M seed steps: 60000 images / global batch
want='1 1 64 64 0.1 fp32 937;2 1 64 64 0.1 bf16 937;3 2 128 64 0.2 fp32 468;4 2 128 64 0.2 bf16 468;'
want+='5 4 256 64 0.4 fp32 234;6 4 256 64 0.4 bf16 234;'
check "--dry-run: weak scaling's runs" $(awk '!/^#/ { printf "%s %s %s %s %s %s %s;", $1, $2, $3, $4, $5, $6, $10 }' \
    "$tmp/d.out" | grep -qxF "$want"; echo $?)
check "--dry-run: the count" $(grep -qE '^# 6 run\(s\); 6 without an estimate$' "$tmp/d.out"; echo $?)
check "--dry-run: nothing written" $(untouched; echo $?)

# strong scaling: the global batch and lr stay, the per-GPU batch splits; pipeline's micro-batches are listed
"$bin" --dry-run --strategy pipeline --model lenet --dataset mnist --data-dir "$root/data/mnist" --gpus 2,4 \
    --batch 256 --scale strong --micro-batches 2,8 --out "$tmp/cwd/study.csv" >"$tmp/s.out" 2>&1; rc=$?
check "--dry-run, strong, pipeline: exit $rc" $rc
check "--dry-run, strong, pipeline: runs" $(awk '!/^#/ { printf "%s %s %s %s %s;", $2, $3, $4, $5, $8 }' "$tmp/s.out" |
    grep -qxF '2 256 128 0.1 2;2 256 128 0.1 8;4 256 64 0.1 2;4 256 64 0.1 8;'; echo $?)
check "--dry-run, strong: nothing written" $(untouched; echo $?)

# bad input is still bad input
expect_error "--dry-run: not with --bench" --dry-run --bench allreduce

# ---- --dry-run of gpt2: sequences of its context from the text corpus (train.bin's windows / batch a step), GPT-2's
# recipe (AdamW at 6e-4) and its size in the model's name; --steps caps the epoch; synthetic tokens list alike
if [ -f "$root/data/sotu/train.bin" ]; then
    "$bin" --dry-run --model gpt2 --dataset sotu --data-dir "$root/data/sotu" --batch 8,16 >"$tmp/g.out" 2>"$tmp/g.err"
    rc=$?
    cat "$tmp/g.out" "$tmp/g.err"
    windows=$(( ( ($(stat -c %s "$root/data/sotu/train.bin") - 32) / 2 - 1) / 1024 ))
    check "--dry-run gpt2: exit $rc, the header names gpt2-small on sotu" \
        $([ $rc -eq 0 ] && grep -q '^# dry run: strategy single, model gpt2-small on sotu, 2 run(s)' "$tmp/g.out"
          echo $?)
    check "--dry-run gpt2: batch, lr 6e-4 and steps of $windows windows" \
        $([ "$(awk '!/^#/ { printf "%s %s %s;", $3, $5, $10 }' "$tmp/g.out")" = \
            "8 0.0006 $((windows / 8));16 0.0006 $((windows / 16));" ]; echo $?)
    "$bin" --dry-run --model gpt2 --model-size tiny --dataset sotu --data-dir "$root/data/sotu" --steps 50 \
        >"$tmp/t.out" 2>&1
    check "--dry-run gpt2 tiny --steps 50: $(awk '!/^#/ { print $10 }' "$tmp/t.out") steps" \
        $([ "$(awk '!/^#/ { print $10 }' "$tmp/t.out")" = 50 ] && grep -q 'model gpt2-tiny on sotu' "$tmp/t.out"
          echo $?)
else
    echo "FAIL: no text corpus under $root/data/sotu (run scripts/setup.sh)"; fail=$((fail + 1))
fi
"$bin" --dry-run --model gpt2 --dataset synthetic >"$tmp/y.out" 2>&1; rc=$?
check "--dry-run gpt2 on synthetic tokens: exit $rc, $(awk '!/^#/ { print $10 }' "$tmp/y.out") steps of 16 x 1024" \
    $([ $rc -eq 0 ] && [ "$(awk '!/^#/ { print $10 }' "$tmp/y.out")" = $(( (2000001 - 1) / 1024 / 16 )) ]; echo $?)
check "--dry-run gpt2: nothing written" $(untouched; echo $?)

# ---- an estimate from --out's rows: scaling_fake's epochs are a formula, so the expected sums are known
if [ -x "$fake" ]; then
    run=(--strategy fake --model lenet --dataset synthetic)
    "$fake" "${run[@]}" --gpus 1,2 --epochs 2 --out "$tmp/old.csv" >/dev/null 2>&1
    before=$(sha1sum <"$tmp/old.csv")
    "$fake" "${run[@]}" --gpus 1,2,4 --epochs 3 --dry-run --out "$tmp/old.csv" >"$tmp/e.out" 2>&1; rc=$?
    cat "$tmp/e.out"
    # the warm-up epoch plus 2 steady epochs, from the CSV's own cells
    want=$(paste -d, <(cells "$tmp/old.csv" gpus) <(cells "$tmp/old.csv" epoch) <(cells "$tmp/old.csv" epoch_s) |
        awk -F, '{ t[$1] += ($2 == 1 ? $3 : 2 * $3) } END { printf "%.1f s;%.1f s;?;", t[1], t[2] }')
    got=$(awk '!/^#/ { $1 = $2 = $3 = $4 = $5 = $6 = $7 = $8 = $9 = $10 = ""; sub(/^ +/, ""); printf "%s;", $0 }' \
        "$tmp/e.out")
    check "--dry-run: exit $rc; estimates $got, want $want" $([ $rc -eq 0 ] && [ "$got" = "$want" ]; echo $?)
    check "--dry-run: the total says 2 of 3 runs have one" \
        $(grep -qE '^# 3 run\(s\); 2 with earlier rows of their configuration in .*: about [0-9hms]+ of epochs ' \
              "$tmp/e.out" && grep -qE '; 1 without an estimate$' "$tmp/e.out"; echo $?)
    "$fake" "${run[@]}" --gpus 1,2,4 --epochs 2 --dry-run --resume --out "$tmp/old.csv" >"$tmp/r.out" 2>&1; rc=$?
    check "--dry-run --resume: exit $rc; the complete runs said skipped" \
        $([ $rc -eq 0 ] && [ "$(grep -c 'skipped by --resume$' "$tmp/r.out")" -eq 2 ]; echo $?)
    check "--dry-run: the CSV unchanged, nothing else written" \
        $([ "$(sha1sum <"$tmp/old.csv")" = "$before" ] && untouched; echo $?)
else
    echo "note: no $fake: the estimate is not tested (build the target scaling_fake)"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
