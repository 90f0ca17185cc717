# shellcheck shell=bash
# lib.sh — what the device scripts share, sourced from the repository root once OUT is set: the environment every
# run keeps, the call's clock and budget, the offline setup and a timed, logged step.
#
# Set before sourcing: OUT (the folder that comes back); budget (seconds, for left) where the script keeps one, else
# BUDGET or 585; say_log (a file say also appends to) where wanted. STEP_LIMIT, a function, may shorten each step's
# limit.

: "${OUT:?set OUT to the directory that comes back}"
export OUT
budget=${budget:-${BUDGET:-585}}
export NCCL_NVLS_ENABLE=0   # NVLink multicast stays off on these machines
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
t0=$(date +%s)

say() {    # say TEXT: a line with the script's name and the seconds since it began
    local line
    line="[$(basename "$0") $(($(date +%s) - t0)) s] $*"
    echo "$line"
    [ -z "${say_log:-}" ] || echo "$line" >>"$say_log"
}
left() { echo $((budget - ($(date +%s) - t0))); }

# device_setup LOG [LIMIT_S [SETUP_ARGS...]]: scripts/setup.sh with the offline bundle (.carry/offline) and SETUP_ARGS
# (--local-gpu, --cuda-arch LIST), its output in LOG; where it fails, the log's tail and exit 1.
device_setup() {
    local log=$1 lim=${2:-300}
    shift $(($# < 2 ? $# : 2))
    if ! timeout "$lim" scripts/setup.sh --offline .carry/offline "$@" >"$log" 2>&1; then
        tail -n 40 "$log"
        say "setup failed: see $log"
        exit 1
    fi
}

# step NAME LIMIT_S COMMAND...: COMMAND under a limit (STEP_LIMIT LIMIT_S where the script defines it; killed 5 s
# after), its output in $OUT/logs/NAME.log, "NAME rc seconds" appended to $OUT/steps.tsv, the log's last lines shown.
step() {
    local name=$1 lim=$2 s rc
    shift 2
    declare -F STEP_LIMIT >/dev/null && lim=$(STEP_LIMIT "$lim")
    s=$(date +%s)
    mkdir -p "$OUT/logs"
    echo "== $name (limit ${lim} s, at $((s - t0)) s): $*"
    timeout --kill-after=5 "$lim" "$@" >"$OUT/logs/$name.log" 2>&1
    rc=$?
    printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - s))" >>"$OUT/steps.tsv"
    tail -n 4 "$OUT/logs/$name.log"
}

# device_begin [SETUP_ARGS...]: what a one-call script does first, with OUT and budget set: its logs folder
# L=$OUT/logs, the summary say appends to, the offline setup (device_setup, with SETUP_ARGS) and the GPUs in the
# summary.
device_begin() {
    say_log=$OUT/summary.txt
    L=$OUT/logs
    mkdir -p "$L"
    say "setup $*"
    device_setup "$L/setup.log" 300 "$@"
    nvidia-smi -L | tee -a "$say_log"
}

# device_gpu_suite KEEP_S: the one-GPU suite (ctest -L gpu -j4) but ResNet-50's from-scratch test and gpu_memcheck,
# then ResNet-50's alone (its algorithms are chosen by timing), each leaving KEEP_S seconds of the budget; their
# logs in L (gpu_tests.log, gpu_last.log: ctest's whole output, resnet50.log) and their verdicts in the summary.
device_gpu_suite() {
    local keep=$1
    say "GPU tests: ctest -L gpu -j4 (but test_train_resnet50, gpu_memcheck)"
    timeout $(($(left) - keep - 60)) ctest --test-dir build -L gpu -j4 --timeout 300 \
        -E 'test_train_resnet50|gpu_memcheck' >"$L/gpu_tests.log" 2>&1
    say "gpu tests: exit $?"
    grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" "$L/gpu_tests.log" | tee -a "$say_log"
    cp build/Testing/Temporary/LastTest.log "$L/gpu_last.log" 2>/dev/null
    say "test_train_resnet50 alone"
    timeout $(($(left) - keep)) ctest --test-dir build -R test_train_resnet50 --timeout 200 --output-on-failure \
        >"$L/resnet50.log" 2>&1
    say "resnet50: exit $?"
    grep -E "tests passed|Failed|Timeout" "$L/resnet50.log" | tee -a "$say_log"
}
