#!/usr/bin/env bash
# harness.sh — the harness's GPU round in one call of a GPU node with 2 to 4 GPUs, from the repository root, everything
# under $OUT, within 8 minutes: setup (scripts/setup.sh --offline .carry/offline), then the fault and default-study
# tests on real GPUs, most important first, each with its own deadline from what is left of the budget: the faults
# under mpirun (the ranks' deadlines on GPUs), the default study (its all-reduce benchmark, model and projection),
# the one-process faults, a killed sweep, mpirun against one process; then the progress lines of a ResNet-50 epoch
# on synthetic data (stderr a file: one line at a time, every ~10 s, step k of N, images/s, ETA; during the setup, k
# of N layers set up). A summary table comes last. $OUT receives summary.txt and logs.tar.gz (setup.log, one log per
# test (ctest -V), progress*.err/.out).
#
#   OUT=/some/dir tools/device/harness.sh
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${HARNESS_BUDGET_S:-460}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
summary=()
note() { summary+=("$(printf '%-16s %-8s %6s s  %s' "$1" "$2" "$3" "$4")"); }

say "setup"
device_setup "$OUT/setup.log"
nvidia-smi -L
n_dev=$(nvidia-smi -L | grep -c '^GPU')

# ctest_one NAME WANT_S: one GPU test with a deadline of WANT_S seconds, or what is left less 60 s for the rest
ctest_one() {
    local name=$1 want=$2 limit start rc
    limit=$(left); limit=$((limit - 60)); ((limit > want)) && limit=$want
    if ((limit < 30)); then note "$name" skipped 0 "no time left in the budget"; return; fi
    say "ctest -R '^$name\$' (deadline $limit s)"
    start=$(date +%s)
    ctest --test-dir build -R "^$name\$" -V --timeout "$limit" >"$OUT/$name.log" 2>&1
    rc=$?
    local took=$(($(date +%s) - start)) verdict
    # ctest's own line: "1/1 Test #N: NAME ....   Passed" (or ***Failed, ***Skipped, ***Timeout)
    verdict=$(sed -n "s/^ *[0-9]*\/[0-9]* Test *#[0-9]*: $name [ .]*\**\([A-Za-z]*\).*/\1/p" "$OUT/$name.log" | tail -n 1)
    [ -n "$verdict" ] || verdict="rc=$rc"
    note "$name" "$verdict" "$took" "$(grep -E '^[0-9]+: [0-9]+ passed, [0-9]+ failed' "$OUT/$name.log" | tail -n 1 |
                                      sed 's/^[0-9]*: //')"
    grep -E '^[0-9]+: (FAIL|.*every rank gone|.*exited .* after|# gpu_default)' "$OUT/$name.log" | sed 's/^[0-9]*: /  /' |
        head -n 20
}

ctest_one gpu_faults_mpi 150
ctest_one gpu_default 200
ctest_one gpu_faults 120
ctest_one gpu_kill 60
ctest_one gpu_mpi 90

# Progress within an epoch: ResNet-50 bf16 on synthetic 224x224 data, 600 steps (about 20 s on an H100), on one GPU
# (single) and, where there are two, on two (nccl: the step events of the first GPU queried from the watchdog's
# thread), stderr a file: each progress line is a line of its own (no carriage return), about every 10 s, its
# images/s from the GPUs' finished steps (never "launched": every strategy has the steps_done hook). A setup that
# spans a tick (>= ~10 s: a cold convolution search, ~30 s for ResNet-50 on two GPUs) prints setup lines, and at least
# one of them counts "K of N layers set up" (the engine's setup counter: only a tick before the first layer begins
# says the seconds alone), never K > N.
setup_counts() {    # setup_counts FILE: "<lines with counts> <lines with K > N>"
    awk 'match($0, /^\[run 1\/1\] setup [0-9]+ s: [0-9]+ of [0-9]+ layers set up/) {
            n++; split(substr($0, RSTART, RLENGTH), w, " "); if (w[6] + 0 > w[8] + 0) bad++ }
         END { print n + 0, bad + 0 }' "$1"
}
progress_run() {    # progress_run NAME SCALING-ARGS...
    local name=$1; shift
    if (($(left) <= 70)); then note "$name" skipped 0 "no time left in the budget"; return; fi
    say "$name: ResNet-50, 600 steps, stderr a file: $*"
    local start rc took lines cr setup counted over launched verdict=passed
    start=$(date +%s)
    ./scaling "$@" --model resnet50 --dataset synthetic --math bf16 --epochs 1 --steps 600 --out "$OUT/$name.csv" \
        >"$OUT/$name.out" 2>"$OUT/$name.err"
    rc=$?
    took=$(($(date +%s) - start))
    lines=$(grep -c '^\[run 1/1  epoch 1/1\] step ' "$OUT/$name.err")
    launched=$(grep -c '(launched)' "$OUT/$name.err")
    cr=$(tr -cd '\r' <"$OUT/$name.err" | wc -c)
    setup=$(grep -c '^\[run 1/1\] setup ' "$OUT/$name.err")
    read -r counted over < <(setup_counts "$OUT/$name.err")
    { [ $rc -eq 0 ] && [ "$lines" -ge 1 ] && [ "$launched" -eq 0 ] && [ "$cr" -eq 0 ] &&
      { [ "$setup" -eq 0 ] || [ "$counted" -ge 1 ]; } && [ "$over" -eq 0 ]; } || verdict=FAILED
    note "$name" "$verdict" "$took" \
        "exit $rc, $lines step line(s) ($launched launched-only), $setup setup ($counted K of N, $over K>N), $cr CR"
    grep -E '^\[run 1/1|images/s' "$OUT/$name.err" | head -n 12 | sed 's/^/  /'
}
progress_run progress
((n_dev >= 2)) && progress_run progress_nccl2 --strategy nccl --gpus 2

{
    echo "# harness.sh on $n_dev GPU(s) ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)), $(git log -1 --format=%h 2>/dev/null || echo '?'), $(($(date +%s) - t0)) s"
    printf '%-16s %-8s %8s  %s\n' test verdict seconds detail
    printf '%s\n' "${summary[@]}"
} | tee "$OUT/summary.txt"
# At most 8 files come back: every log in one archive beside the summary.
(cd "$OUT" && find . -maxdepth 1 -type f ! -name summary.txt ! -name logs.tar.gz -printf '%P\n' |
    tar -czf logs.tar.gz -T - --remove-files)
