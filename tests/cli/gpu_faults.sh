#!/usr/bin/env bash
# gpu_faults.sh — on one GPU, a fault costs one configuration and never the sweep (doc/faults.md). Each case sweeps
# two configurations (LeNet on MNIST, lr 0.05 then 0.1) with a fault made in the first one:
#   - SCALING_FAULT alloc / cudnn / cuda (engine/fault.h) in every one-GPU strategy (single; nccl on one GPU) and
#     math: the first configuration's last row is oom (alloc) or failed (the CHECK line as its reason), and the
#     second runs complete;
#   - a real batch past the GPU's memory (ResNet-18, batch 60000, the whole training set: 409 / 205 GiB of
#     activations in tf32 / bf16; 32768 fit an H200 in bf16 and spent 136 s in the algorithm search before its
#     oom): an oom row with the device's free and total memory, then batch 64 runs;
#   - a stalled step (SCALING_FAULT stall) under --timeout 5: a timeout row within 5 + 10 s, then the next one;
#   - SIGTERM mid-epoch: an interrupted row, exit 143 soon after; --resume then completes the sweep, no
#     configuration twice; a run that cannot stop (stalled) ends at a second SIGTERM, at once.
# The seconds each fault took to end are printed for the fault table.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
source "$(dirname "$0")/lib_faults.sh"
gpu_require 1
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
lenet=(--model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --lr 0.05,0.1 --epochs 2 --steps 30)

# expect_two CSV WHAT STATUS: the first configuration's run ends with STATUS (its reason non-empty), the second
# (lr 0.1) has epochs 1,2 ok.
expect_two() {
    local csv=$1 what=$2 want=$3 first second
    runs "$csv" >"$tmp/runs"
    first=$(grep '^0.05|' "$tmp/runs" | tail -n 1); second=$(grep '^0.1|' "$tmp/runs" | tail -n 1)
    check "$what: first configuration ends $want with a reason: '$first'" \
        $(echo "$first" | awk -F'|' -v w="$want" '{ n = split($4, s, ","); exit !(s[n] == w && $5 != "") }'; echo $?)
    check "$what: the next configuration ran: '$second'" \
        $(echo "$second" | awk -F'|' '{ exit !($3 == "1,2" && $4 == "ok,ok") }'; echo $?)
    check "$what: one run per configuration" $([ "$(wc -l <"$tmp/runs")" -eq 2 ]; echo $?)
}

# ---- injected faults: every one-GPU strategy x math x kind
for strategy in single nccl; do
    for math in fp32 tf32 bf16; do
        for fault in alloc:3 cudnn:5 cuda:40; do
            csv=$tmp/inj-$strategy-$math-${fault%%:*}.csv
            SCALING_FAULT=$fault:run=1 "$bin" --strategy "$strategy" --gpus 1 --math "$math" "${lenet[@]}" \
                --out "$csv" >"$tmp/inj.out" 2>"$tmp/inj.err"; rc=$?
            want=failed; [ "${fault%%:*}" = alloc ] && want=oom
            check "$strategy $math $fault: the injection happened" \
                $(grep -q "SCALING_FAULT: injecting a fault at ${fault%%:*} ${fault#*:}" "$tmp/inj.err"; echo $?)
            expect_two "$csv" "$strategy $math $fault" "$want"
            # exit 1 where a run failed; an oom is a result (exit 0)
            check "$strategy $math $fault: exit $rc" $([ $rc -eq $([ $want = oom ] && echo 0 || echo 1) ]; echo $?)
            [ $fail -eq 0 ] || { tail -n 3 "$tmp/inj.err"; }
        done
    done
done

# ---- a real batch past memory, every math: oom with the device's memory, then the next batch
for math in fp32 tf32 bf16; do
    csv=$tmp/oom-$math.csv
    t0=$(date +%s.%N)
    "$bin" --strategy single --model resnet18 --dataset fashion-mnist --data-dir "$root/data/fashion-mnist" \
        --batch 60000,64 --math "$math" --epochs 1 --steps 5 --out "$csv" >"$tmp/oom.out" 2>"$tmp/oom.err"; rc=$?
    echo "oom $math: sweep of two ended in $(seconds_since "$t0") s (exit $rc)"
    st=$(cells "$csv" status | tr '\n' ' '); gb=$(cells "$csv" global_batch | tr '\n' ' ')
    check "oom $math: statuses '$st' for batches '$gb', want oom then ok" \
        $([ "$st" = "oom ok " ] && [ "$gb" = "60000 64 " ]; echo $?)
    free=$(cells "$csv" mem_free_mb | head -n 1); total=$(cells "$csv" mem_total_mb | head -n 1)
    check "oom $math: free $free MiB of $total MiB recorded" \
        $(awk -v f="$free" -v t="$total" 'BEGIN { exit !(f != "" && t > 1000 && f >= 0 && f <= t) }'; echo $?)
    check "oom $math: reason '$(cells "$csv" reason | head -n 1)'" \
        $(cells "$csv" reason | head -n 1 | grep -q "out of memory"; echo $?)
    check "oom $math: exit $rc, want 0" $([ $rc -eq 0 ]; echo $?)
done

# ---- a stalled step: the parent's deadline
csv=$tmp/stall.csv
t0=$(date +%s.%N)
SCALING_FAULT=stall:10:run=1 "$bin" --strategy single "${lenet[@]}" --timeout 5 --out "$csv" \
    >"$tmp/stall.out" 2>"$tmp/stall.err"; rc=$?
took=$(seconds_since "$t0")
echo "stall: sweep of two ended in $took s (exit $rc)"
expect_two "$csv" "stall" timeout
check "stall: the timeout is recorded: $(cells "$csv" timeout_s | head -n 1)" \
    $([ "$(cells "$csv" timeout_s | head -n 1)" = 5 ]; echo $?)
check "stall: exit $rc, want 1" $([ $rc -eq 1 ]; echo $?)

# ---- SIGTERM mid-epoch, then --resume
csv=$tmp/term.csv
long=(--strategy single --model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --lr 0.05,0.1
      --epochs 3 --steps 300 --out "$csv")
"$bin" "${long[@]}" >"$tmp/term.out" 2>"$tmp/term.err" &
pid=$!
wait_rows "$csv" 1 "$pid" 600
t0=$(date +%s.%N)
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=""
echo "SIGTERM: exited $rc after $(seconds_since "$t0") s"
check "SIGTERM: exit $rc, want 143" $([ $rc -eq 143 ]; echo $?)
runs "$csv" >"$tmp/runs"; cat "$tmp/runs"
check "SIGTERM: the run ends interrupted, naming the signal" \
    $(tail -n 1 "$tmp/runs" | awk -F'|' '{ n = split($4, s, ","); exit !(s[n] == "interrupted" && $5 ~ /SIGTERM/) }'
      echo $?)
check "SIGTERM: the second configuration never started" $([ "$(wc -l <"$tmp/runs")" -eq 1 ]; echo $?)
"$bin" "${long[@]}" --resume >"$tmp/resume.out" 2>"$tmp/resume.err"; rc=$?
check "--resume after SIGTERM: exit $rc" $([ $rc -eq 0 ]; echo $?)
runs "$csv" >"$tmp/runs"; cat "$tmp/runs"
check "--resume: each configuration complete exactly once" \
    $(awk -F'|' '$4 == "ok,ok,ok" { c[$1]++ } END { exit !(c["0.05"] == 1 && c["0.1"] == 1) }' "$tmp/runs"; echo $?)
n=$(rows_of "$csv")
"$bin" "${long[@]}" --resume >/dev/null 2>&1
check "a second --resume adds nothing" $([ "$(rows_of "$csv")" -eq "$n" ]; echo $?)

# ---- two SIGTERMs: a run that cannot reach a step boundary (stalled) ends at the second one, at once
csv=$tmp/term2.csv
SCALING_FAULT=stall:50:run=1 "$bin" --strategy single "${lenet[@]}" --timeout 120 --out "$csv" \
    >"$tmp/term2.out" 2>"$tmp/term2.err" &
pid=$!
deadline=$((SECONDS + 300))
until grep -q 'SCALING_FAULT: injecting a fault at stall' "$tmp/term2.err" || ((SECONDS > deadline)) ||
      ! kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
kill -TERM "$pid"; sleep 2
check "one SIGTERM does not end a stalled run" $(kill -0 "$pid" 2>/dev/null; echo $?)
t0=$(date +%s.%N)
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=""
took=$(seconds_since "$t0")
echo "second SIGTERM: exited $rc after $took s"
check "second SIGTERM: exit $rc, want 143, within 5 s ($took s)" \
    $([ $rc -eq 143 ] && awk -v t="$took" 'BEGIN { exit !(t < 5) }'; echo $?)
runs "$csv" >"$tmp/runs"; cat "$tmp/runs"
check "second SIGTERM: one interrupted row naming it, the next configuration not started" \
    $(awk -F'|' '{ n++; k = split($4, s, ","); last = s[k]; why = $5 }
                 END { exit !(n == 1 && last == "interrupted" && why ~ /SIGTERM twice/) }' "$tmp/runs"; echo $?)
summary
