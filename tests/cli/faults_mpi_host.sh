#!/usr/bin/env bash
# faults_mpi_host.sh (ctest test_faults_mpi, label host) — one process per GPU's fault paths under a real
# `mpirun -np 2`, without a GPU: tests/run/fake_dist_sweep.c runs bench/run.c with a fake strategy whose steps do one
# MPI all-reduce each. Two configurations (lr 0.01, 0.02), the fault in the first, --timeout 3:
#   - a stalled rank (SCALING_FAULT stall on rank 1; also with steps that make no MPI call, so that rank 0 waits in
#     the stop vote), a stopped rank (SIGSTOP to rank 1): rank 0's watchdog;
#   - a killed rank (SIGKILL to rank 1): the launcher, rank 0's handler;
#   - a CHECK failure on rank 1, and on rank 0;
#   - SIGTERM to every rank (a time limit), to one rank, and in an epoch's last steps: the ranks stop together
#     before the same step (or after the epoch), exit 143;
#   - a rank stopped for good before the first run, or between the two runs (FAKE_HANG), and, through the real
#     command (the third argument), rank 1 stuck in data loading (its --data-dir made of FIFOs, a hung file system):
#     the ranks' deadline outside a run ends them, one line naming the rank and the phase, no row lost;
# each: every rank gone within --timeout + 10 s, a line naming the rank, the configuration's row with its reason,
# and --resume then runs the second configuration. The seconds are printed (doc/faults.md). Skips without mpirun.
set -u
bin=$1; root=$2; scaling=$3    # scaling: reads the CSVs (scaling tsv)
mpirun=${MPIRUN:-mpirun}
command -v "$mpirun" >/dev/null 2>&1 || { echo "SKIP: no $mpirun on the PATH"; exit 77; }
opts=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && opts+=(--allow-run-as-root)
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
summary() { echo "$pass passed, $fail failed"; [ $fail -eq 0 ]; }
source "$(dirname "$0")/lib_faults.sh"
TIMEOUT=3
args=(--model lenet --epochs 2 --steps 40 --timeout $TIMEOUT)   # 40: the fake's steps, so --resume knows a run complete

# start NAME [ENV=VALUE...]: the sweep in the background ($pid), output in $tmp/NAME.log, CSV $tmp/NAME.csv
start() {
    local name=$1; shift
    env "$@" FAKE_PIDS="$tmp/$name.pid" "$mpirun" "${opts[@]}" -np 2 "$bin" "${args[@]}" --out "$tmp/$name.csv" \
        >"$tmp/$name.log" 2>&1 &
    pid=$!
}
# finish NAME T0 WANT_STATUSES: waits, then checks the deadline, the row and --resume
finish() {
    local name=$1 t0=$2 want=$3 rc took first
    wait "$pid"; rc=$?; pid=""
    local rank p deadline=$((SECONDS + TIMEOUT + 12))
    for rank in 0 1; do     # mpirun may exit before a rank it signalled: the time is the last rank's
        p=$(cat "$tmp/$name.pid.$rank" 2>/dev/null)
        while [ -n "$p" ] && ! gone $p && ((SECONDS < deadline)); do sleep 0.05; done
    done
    took=$(seconds_since "$t0")
    echo "$name: mpirun exited $rc, every rank gone $took s after the fault"
    check "$name: exit $rc, want non-zero" $([ $rc -ne 0 ]; echo $?)
    check "$name: gone after $took s, want <= $((TIMEOUT + 10))" \
        $(awk -v t="$took" -v m=$((TIMEOUT + 10)) 'BEGIN { exit !(t <= m) }'; echo $?)
    for rank in 0 1; do
        p=$(cat "$tmp/$name.pid.$rank" 2>/dev/null)
        [ -n "$p" ] && ! gone $p && { check "$name: rank $rank (pid $p) still there" 1; kill_same 9 $p; }
    done
    runs "$tmp/$name.csv" >"$tmp/runs"; cat "$tmp/runs"
    first=$(grep '^0.01|' "$tmp/runs" | tail -n 1)
    # a row of the run has one of the statuses (a failing rank's failed row may be followed by rank 0's interrupted
    # one, written when the launcher ends the job), and the last row a reason
    check "$name: the first configuration's run has a row in one of: $want, with a reason: '$first'" \
        $(echo "$first" | awk -F'|' -v w=" $want " '{ n = split($4, s, ","); f = 0
                                                        for (i = 1; i <= n; i++) f = f || index(w, " " s[i] " ")
                                                        exit !(f && $5 != "") }'
          echo $?)
    env FAKE_PIDS="$tmp/$name.pid" "$mpirun" "${opts[@]}" -np 2 "$bin" "${args[@]}" --out "$tmp/$name.csv" --resume \
        >"$tmp/$name-resume.log" 2>&1; rc=$?
    runs "$tmp/$name.csv" >"$tmp/runs"
    check "$name: --resume exits $rc and completes the second configuration" \
        $([ $rc -eq 0 ] && grep -q '^0.02|[^|]*|1,2|ok,ok|' "$tmp/runs"; echo $?)
    [ $fail -eq 0 ] || { tail -n 8 "$tmp/$name.log"; }
}

# ---- a stalled rank: rank 1 sleeps at step 10 of the first configuration
start stall SCALING_FAULT=stall:10:rank=1:run=1
until grep -q 'injecting a fault at stall' "$tmp/stall.log" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
finish stall "$(date +%s.%N)" timeout
check "stall: a line names the rank and 'no progress'" $(grep -q 'rank [01] on .*no progress for' "$tmp/stall.log"; echo $?)

# ---- the same with steps that make no MPI call (as NCCL's): rank 0 waits in the stop vote, and its watchdog ends it
start stallvote SCALING_FAULT=stall:10:rank=1:run=1 FAKE_NO_COLLECTIVE=1
until grep -q 'injecting a fault at stall' "$tmp/stallvote.log" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null; do
    sleep 0.02
done
finish stallvote "$(date +%s.%N)" timeout
check "stallvote: rank 0's line names the deadline" \
    $(grep -q 'rank 0 on .*no progress for' "$tmp/stallvote.log"; echo $?)

# ---- a stopped rank and a killed rank, mid-epoch (50 ms steps: an epoch of 2 s)
for sig in STOP KILL; do
    name=sig$sig
    start "$name" FAKE_STEP_MS=50
    wait_rows "$tmp/$name.csv" 1 "$pid" 60
    sleep 0.3
    t0=$(date +%s.%N)
    kill_same $sig $(cat "$tmp/$name.pid.1")
    want=timeout; [ $sig = KILL ] && want="interrupted failed timeout"
    finish "$name" "$t0" "$want"
    [ $sig = STOP ] && check "$name: rank 0's line names the deadline" \
        $(grep -q 'rank 0 on .*no progress for' "$tmp/$name.log"; echo $?)
done

# stops NAME: each rank's stop line ("rank R on HOST: SIGTERM: stopped before step S of epoch E", or "stopped after
# epoch E"), the part after the signal, one line per rank in rank order
stops() {
    local rank
    for rank in 0 1; do
        sed -n "s/^scaling: rank $rank on [^:]*: SIGTERM: \(stopped .*\)/\1/p" "$tmp/$1.log" | head -n 1
    done
}
# raised NAME ENV...: a run whose ranks raise SIGTERM themselves (FAKE_RAISE in ENV): waits for it, sets rc and
# stopped (each rank's "stopped ..." line), writes its runs to $tmp/runs, and checks both ranks exit 143
raised() {
    local name=$1
    start "$@"
    wait "$pid"; rc=$?; pid=""
    stopped=$(stops "$name")
    echo "$name: mpirun exited $rc; stops: $(echo $stopped)"
    runs "$tmp/$name.csv" >"$tmp/runs"; cat "$tmp/runs"
    check "$name: exit $rc, want 143, both ranks too" $([ $rc -eq 143 ] && [ -n "$(exits "$name" 143)" ]; echo $?)
}
# exits NAME RC: both ranks said they exit with RC; prints the later one's wall-clock time
exits() {
    sed -n "s/^fake_dist_sweep: rank [01] exits $2 at //p" "$tmp/$1.log" | sort -n | awk '{ t = $1; n++ }
        END { if (n == 2) print t }'
}

# ---- SIGTERM to every rank (Slurm's time limit) early in epoch 2 of 3: rank 0's handler writes the interrupted row
# at once, the ranks' votes stop them all before the same step a few steps (50 ms each) later, long before the
# epoch's end (1.7 s away), exit 143; --resume runs that configuration again and completes the sweep
name=term
args=(--model lenet --epochs 3 --steps 40 --timeout $TIMEOUT)
start "$name" FAKE_STEP_MS=50
wait_rows "$tmp/$name.csv" 1 "$pid" 60
sleep 0.3
t0=$(date +%s.%N)
kill_same TERM $(cat "$tmp/$name.pid.0"); kill_same TERM $(cat "$tmp/$name.pid.1")
wait "$pid"; rc=$?; pid=""
took=$(seconds_since "$t0")
for rank in 0 1; do
    p=$(cat "$tmp/$name.pid.$rank"); deadline=$((SECONDS + 5))
    while ! gone $p && ((SECONDS < deadline)); do sleep 0.02; done
done
gone_s=$(seconds_since "$t0")
end=$(exits "$name" 143)
stop_s=$(awk -v a="$t0" -v b="$end" 'BEGIN { if (b == "") print "never"; else printf "%.2f", b - a }')
stopped=$(stops "$name")
echo "$name: both ranks ended their run $stop_s s after SIGTERM to every rank (mpirun exited $rc after $took s, every" \
     "rank gone after $gone_s s); stops: $(echo $stopped | tr '\n' ' ')"
check "$name: exit $rc, want 143" $([ $rc -eq 143 ]; echo $?)
check "$name: both ranks end their run, status 143, within 1.0 s (the epoch's end was 1.7 s away): $stop_s" \
    $(awk -v t="$stop_s" 'BEGIN { exit !(t != "never" && t < 1.0) }'; echo $?)
check "$name: every rank gone within $((TIMEOUT + 10)) s: $gone_s" \
    $(awk -v t="$gone_s" -v m=$((TIMEOUT + 10)) 'BEGIN { exit !(t <= m) }'; echo $?)
check "$name: both ranks stopped before the same step of epoch 2: '$(echo $stopped)'" \
    $([ "$(echo "$stopped" | grep -c '^stopped before step [0-9]* of epoch 2$')" -eq 2 ] &&
     [ "$(echo "$stopped" | sort -u | wc -l)" -eq 1 ]; echo $?)
runs "$tmp/$name.csv" >"$tmp/runs"; cat "$tmp/runs"
check "$name: one run, one interrupted row (rank 0's handler's) at epoch 2, which never finished" \
    $(awk -F'|' '{ n++; k = split($4, s, ","); for (i = 1; i <= k; i++) c += s[i] == "interrupted"; e = $3 }
                 END { exit !(n == 1 && c == 1 && e == "1,2") }' "$tmp/runs"; echo $?)
env FAKE_PIDS="$tmp/$name.pid" "$mpirun" "${opts[@]}" -np 2 "$bin" "${args[@]}" --out "$tmp/$name.csv" --resume \
    >"$tmp/$name-resume.log" 2>&1; rc=$?
runs "$tmp/$name.csv" >"$tmp/runs"; cat "$tmp/runs"
check "$name: --resume exits $rc, runs the interrupted configuration again and completes both" \
    $([ $rc -eq 0 ] && [ "$(grep -c '|1,2,3|ok,ok,ok|' "$tmp/runs")" -eq 2 ]; echo $?)

# ---- SIGTERM to rank 1 alone, during step 10 of epoch 2: rank 0 learns it from the vote of step 11, read at step
# 11 + DIST_VOTE_LAG (3): both ranks stop before step 14, and rank 0 (no handler's row) writes the row that says so
name=term1
raised "$name" FAKE_STEP_MS=50 FAKE_RAISE=2:10:1
check "$name: both ranks stopped before step 14 of epoch 2: '$(echo $stopped)'" \
    $([ "$(echo "$stopped" | grep -c '^stopped before step 14 of epoch 2$')" -eq 2 ]; echo $?)
check "$name: rank 0's interrupted row at epoch 2 says so" \
    $(grep -q '|1,2|ok,interrupted|SIGTERM: stopped before step 14 of epoch 2$' "$tmp/runs"; echo $?)

# ---- SIGTERM to every rank during step 38 of epoch 2's 40: too late for a vote, so the agreement at the epoch's end
# stops them, after epoch 2's row
name=termlate
raised "$name" FAKE_STEP_MS=50 FAKE_RAISE=2:38
check "$name: both ranks stopped after epoch 2: '$(echo $stopped)'" \
    $([ "$(echo "$stopped" | grep -c '^stopped after epoch 2$')" -eq 2 ]; echo $?)
check "$name: epoch 2's row written, epoch 3 never reached" \
    $(awk -F'|' '{ n++; e = $3; s = $4 } END { exit !(n == 1 && e == "1,2,2" && s == "ok,interrupted,ok") }' \
          "$tmp/runs"; echo $?)
args=(--model lenet --epochs 2 --steps 40 --timeout $TIMEOUT)   # 40: the fake's steps, so --resume knows a run complete

# gone_all NAME: waits up to 5 s for every rank of NAME (pids in $tmp/NAME.pid.R) to be gone; a rank still there
# is a failure, and killed
gone_all() {
    local rank p deadline
    for rank in 0 1; do
        p=$(cat "$tmp/$1.pid.$rank" 2>/dev/null); deadline=$((SECONDS + 5))
        while [ -n "$p" ] && ! gone $p && ((SECONDS < deadline)); do sleep 0.05; done
        [ -n "$p" ] && ! gone $p && { check "$1: rank $rank (pid $p) still there" 1; kill_same 9 $p; }
    done
}
# ended NAME T0 RC [MORE]: mpirun exited non-zero and every rank is gone within --timeout + 10 (+ MORE) s of T0
ended() {
    local took max=$((TIMEOUT + 10 + ${4:-0}))
    took=$(seconds_since "$2")
    echo "$1: mpirun exited $3, every rank gone $took s after the stop"
    check "$1: exit $3, want non-zero" $([ "$3" -ne 0 ]; echo $?)
    check "$1: gone after $took s, want <= $max" $(awk -v t="$took" -v m=$max 'BEGIN { exit !(t <= m) }'; echo $?)
}

# ---- a rank stopped for good outside a run: before the first run (nothing written yet), then between the two runs
# (the first one's rows written): rank 0's deadline names the phase, every rank ends, and --resume completes the sweep
for where in start between; do
    name=hang$where
    start "$name" FAKE_HANG=$where:1
    until grep -q 'stops for good' "$tmp/$name.log" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
    t0=$(date +%s.%N)
    wait "$pid"; rc=$?; pid=""
    gone_all "$name"
    ended "$name" "$t0" $rc
    check "$name: a line names the rank and the phase: $(grep 'ending every rank' "$tmp/$name.log" | head -n 2)" \
        $(grep -q '^scaling: rank [01] on .*: no progress for [0-9]* s in the agreement between runs (--timeout 3)' \
              "$tmp/$name.log"; echo $?)
    runs "$tmp/$name.csv" >"$tmp/runs"; cat "$tmp/runs"
    want=0; [ $where = between ] && want=1
    check "$name: $want run(s) in the CSV, whole, none lost: $(wc -l <"$tmp/runs")" \
        $([ "$(wc -l <"$tmp/runs")" -eq $want ] && ! grep -qv '|1,2|ok,ok|' "$tmp/runs"; echo $?)
    env FAKE_PIDS="$tmp/$name.pid" "$mpirun" "${opts[@]}" -np 2 "$bin" "${args[@]}" --out "$tmp/$name.csv" --resume \
        >"$tmp/$name-resume.log" 2>&1; rc=$?
    runs "$tmp/$name.csv" >"$tmp/runs"
    check "$name: --resume exits $rc and completes both configurations" \
        $([ $rc -eq 0 ] && [ "$(grep -c '|1,2|ok,ok|' "$tmp/runs")" -eq 2 ]; echo $?)
    [ $fail -eq 0 ] || tail -n 8 "$tmp/$name.log"
done

# ---- the real command, rank 1 stuck in data loading: its --data-dir holds FIFOs nobody writes (a hung file system),
# rank 0 loads MNIST and waits for it in the data agreement. Rank 1's deadline names data loading and ends every rank
# before the CSV is opened. No GPU is needed: the data come before the GPUs. --timeout 8: rank 0's own loading must
# fit in it on a busy machine.
mnist=$(ls "$root"/data/mnist/train-labels-idx1-ubyte* 2>/dev/null | head -n 1)
if [ -n "$scaling" ] && [ -n "$mnist" ]; then
    mkdir -p "$tmp/fifos"
    for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
        mkfifo "$tmp/fifos/$f"
    done
    # one rank of the job: its pid for the test, then scaling, rank 1 with the FIFOs as its data
    printf '%s\n' '#!/bin/sh' 'read -r l </proc/$$/stat; set -- ${l##*) }' \
        'echo "$$ ${20}" >"$PIDS.$OMPI_COMM_WORLD_RANK"     # pid and start time (tests/cli/lib_faults.sh)' \
        'dir=$REAL; [ "$OMPI_COMM_WORLD_RANK" = 1 ] && dir=$FIFOS' \
        'exec "$SCALING" --strategy nccl --model lenet --dataset mnist --data-dir "$dir" --timeout 8 --out "$OUT"' \
        >"$tmp/by_rank.sh"
    chmod +x "$tmp/by_rank.sh"
    name=dataload
    t0=$(date +%s.%N)
    env PIDS="$tmp/$name.pid" REAL="$root/data/mnist" FIFOS="$tmp/fifos" SCALING="$scaling" OUT="$tmp/$name.csv" \
        "$mpirun" "${opts[@]}" -x PIDS -x REAL -x FIFOS -x SCALING -x OUT -np 2 "$tmp/by_rank.sh" \
        >"$tmp/$name.log" 2>&1 &
    pid=$!
    deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.05; done
    kill -0 "$pid" 2>/dev/null && { check "$name: mpirun still there after 30 s" 1; kill -9 "$pid"; }
    wait "$pid"; rc=$?; pid=""
    gone_all "$name"
    ended "$name" "$t0" $rc 15     # --timeout 8, from mpirun's start: MPI's start-up (seconds on a busy machine)
    check "$name: rank 1's line names data loading: $(grep 'ending every rank' "$tmp/$name.log" | head -n 2)" \
        $(grep -q '^scaling: rank 1 on .*: no progress for [0-9]* s in data loading (--timeout 8)' "$tmp/$name.log"
          echo $?)
    check "$name: no CSV written" $([ ! -e "$tmp/$name.csv" ]; echo $?)
    [ $fail -eq 0 ] || tail -n 8 "$tmp/$name.log"
else
    echo "note: no scaling binary or no data/mnist: the data-loading case is not run"
fi

# ---- a CHECK failure on rank 1, then on rank 0: the failing rank's line, a failed row
for r in 1 0; do
    name=check$r
    t0=$(date +%s.%N)
    start "$name" FAKE_CHECK_RANK=$r
    finish "$name" "$t0" failed
    check "$name: one line names rank $r and the CHECK" \
        $(grep -q "rank $r on .*strategies/nccl.c:124: .*ending every rank" "$tmp/$name.log"; echo $?)
done
summary
