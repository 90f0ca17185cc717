#!/usr/bin/env bash
# test_signals.sh — verdicts and exits of one process when something outside the run stops it, without a GPU (CI):
# the real driver with the test strategy fake (scaling_fake, beside the command's build) and the command itself.
#   - stdout closed (`| head -2`): no fault of a configuration; every run completes, ok, one stderr line says the
#     table stopped, exit 0 (before: the run's process died of SIGPIPE, a failed row, and --resume skipped it);
# (doc/faults.md's table says what the user sees for each.)
set -u
bin=$1; root=$2
fake=$(dirname "$bin")/tests/scaling_fake
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_faults.sh"
check() { if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
[ -x "$fake" ] || { echo "SKIP: no $fake (build the target scaling_fake)"; exit 77; }
run=(--strategy fake --model lenet --dataset synthetic --epochs 2)

# ---- stdout closed: head takes the first 2 lines and leaves; the three runs go on and complete
"$fake" "${run[@]}" --lr 0.1,0.2,0.3 --out "$tmp/pipe.csv" 2>"$tmp/pipe.err" | head -n 2 >/dev/null
rc=${PIPESTATUS[0]}
statuses=$(cells "$tmp/pipe.csv" status | sort | uniq -c | tr -s ' ' | tr '\n' ';')
check "stdout closed: exit $rc, want 0" $([ "$rc" -eq 0 ]; echo $?)
check "stdout closed: 3 runs of 2 epochs, all ok: $statuses" $([ "$statuses" = " 6 ok;" ]; echo $?)
check "stdout closed: one stderr line says so: $(grep -c 'stdout is closed' "$tmp/pipe.err")" \
    $([ "$(grep -c 'scaling: stdout is closed (its reader went away): the table is no longer printed' "$tmp/pipe.err")" \
        -eq 1 ]; echo $?)
"$fake" "${run[@]}" --lr 0.1,0.2,0.3 --out "$tmp/pipe.csv" --resume >"$tmp/resume.out" 2>&1
check "stdout closed: --resume finds all 3 complete: $(grep -c 'skipped, complete' "$tmp/resume.out")" \
    $([ "$(grep -c 'skipped, complete' "$tmp/resume.out")" -eq 3 ]; echo $?)

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
