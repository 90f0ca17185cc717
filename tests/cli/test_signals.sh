#!/usr/bin/env bash
# test_signals.sh — verdicts and exits of one process when something outside the run stops it, without a GPU (CI):
# the real driver with the test strategy fake (scaling_fake, beside the command's build) and the command itself.
#   - stdout closed (`| head -2`): no fault of a configuration; every run completes, ok, one stderr line says the
#     table stopped, exit 0 (before: the run's process died of SIGPIPE, a failed row, and --resume skipped it);
#   - SIGTERM while the data load (a --data-dir of FIFOs: a hung file system): exit 143 within seconds, one line
#     (before: the signal was swallowed and the command still ran 606 s later);
#   - SIGTERM while a step hangs: the run's deadline ends it as interrupted, not timeout, exit 143, and --resume runs
#     it again (before: a timeout row, and --resume skipped it);
#   - progress on stderr, a line at a time when stderr is a file: a 10.5 s setup and a 12 s epoch say where they are
#     (step k/N, images/s, ETA) about every 10 s;
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


# ---- SIGTERM while the data load: the FIFOs have no writer, so opening them blocks for good
mkdir -p "$tmp/fifos"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    mkfifo "$tmp/fifos/$f"
done
"$bin" --model lenet --dataset mnist --data-dir "$tmp/fifos" --out "$tmp/fifo.csv" >"$tmp/fifo.out" \
    2>"$tmp/fifo.err" &
pid=$!
# the signal once it waits for a FIFO's writer (its start-up, which may take seconds on a loaded machine, over), so
# that it meets the command's handler rather than the default action, which exits 143 too
for _ in $(seq 600); do
    [ "$(cat /proc/$pid/wchan 2>/dev/null)" = wait_for_partner ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
waited=$(cat /proc/$pid/wchan 2>/dev/null)
kill -TERM $pid 2>/dev/null
t0=$(date +%s.%N)
for _ in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
kill -KILL $pid 2>/dev/null
wait $pid; rc=$?
took=$(seconds_since "$t0")
check "SIGTERM in data loading (waiting in: $waited): exit $rc after $took s, want 143 within 5 s" \
    $([ $rc -eq 143 ] && awk -v t="$took" 'BEGIN { exit !(t < 5) }'; echo $?)
check "SIGTERM in data loading: one line says so, nothing written: $(cat "$tmp/fifo.err")" \
    $([ "$(cat "$tmp/fifo.err")" = "scaling: SIGTERM: stopped at once (no run was under way)" ] &&
     [ ! -e "$tmp/fifo.csv" ]; echo $?)

# ---- SIGTERM while a step hangs: its deadline (--timeout 3) ends it; the verdict is the signal's
SCALING_FAULT=stall:5:run=1 "$fake" "${run[@]}" --lr 0.1,0.2 --timeout 3 --out "$tmp/hung.csv" >"$tmp/hung.out" \
    2>"$tmp/hung.err" &
pid=$!
until grep -q 'injecting a fault at stall' "$tmp/hung.err" 2>/dev/null || ! kill -0 $pid 2>/dev/null; do
    sleep 0.05
done
kill -TERM $pid
t0=$(date +%s.%N)
wait $pid; rc=$?
took=$(seconds_since "$t0")
runs "$tmp/hung.csv" >"$tmp/hung.runs"
check "SIGTERM in a hung step: exit $rc after $took s, want 143 within 3 + 12 s" \
    $([ $rc -eq 143 ] && awk -v t="$took" 'BEGIN { exit !(t < 15) }'; echo $?)
check "SIGTERM in a hung step: one run, an interrupted row naming the signal and the step: $(cat "$tmp/hung.runs")" \
    $(grep -q '^0.1|[^|]*|1|interrupted|SIGTERM, then epoch 1 step [0-9]*: no progress for [0-9]* s (--timeout 3)' \
          "$tmp/hung.runs" && [ "$(wc -l <"$tmp/hung.runs")" -eq 1 ]; echo $?)
"$fake" "${run[@]}" --lr 0.1,0.2 --timeout 3 --out "$tmp/hung.csv" --resume >"$tmp/hung2.out" 2>&1; rc=$?
runs "$tmp/hung.csv" >"$tmp/hung.runs"
check "SIGTERM in a hung step: --resume runs it again, and the next (exit $rc): $(tr '\n' ' ' <"$tmp/hung.runs")" \
    $([ $rc -eq 0 ] && [ "$(grep -c '|1,2|ok,ok|' "$tmp/hung.runs")" -eq 2 ]; echo $?)

# ---- progress: a 10.5 s setup, then 234 steps of 50 ms (11.7 s); stderr a file
FAKE_SETUP_MS=10500 FAKE_STEP_MS=50 "$fake" "${run[@]}" --epochs 1 --out "$tmp/progress.csv" >"$tmp/progress.out" \
    2>"$tmp/progress.err"; rc=$?
cat "$tmp/progress.err"
check "progress: exit $rc" $rc
# its 8 layers at 1.3 s each into the run's setup counter: the line at 10 s has 7 of them (a loaded host: fewer)
check "progress: the setup said how far it was, k of 8 layers" \
    $(grep -qE '^\[run 1/1\] setup 1[0-9] s: [1-8] of 8 layers set up, [1-8] convolution search(es)?$' \
          "$tmp/progress.err"; echo $?)
check "progress: a line inside the epoch: step k of 234, images/s from the finished steps (256 / 50 ms), the ETAs" \
    $(grep -qE '^\[run 1/1  epoch 1/1\] step [0-9]+/234  [0-9]+ images/s  epoch ETA [0-9]+s  study ETA [0-9]+s$' \
          "$tmp/progress.err"; echo $?)
check "progress: one line at a time, no carriage return, in a file" \
    $([ "$(tr -cd '\r' <"$tmp/progress.err" | wc -c)" -eq 0 ]; echo $?)

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
