# lib_gpu.sh — what the GPU command-line tests share: a skip (exit 77, with a message) where `scaling` cannot run or
# too few GPUs are present, a run of the command checked (run), and lib.sh's scratch folder, pass/fail counters with
# check, and the closing summary.
# Sourced by tests/cli/gpu_*.sh after they set bin (the scaling binary); not a test itself, so not named gpu_*.sh.
gpu_require() {   # gpu_require N: skip unless bin runs and N CUDA devices are present; sets n_dev
    n_dev=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    if ! "$bin" --help >/dev/null 2>&1 || [ "$n_dev" -lt "$1" ]; then
        echo "SKIP: needs $1 CUDA device(s), found $n_dev"; exit 77
    fi
}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"   # the scratch folder, the counters, check and summary
run() {   # run NAME ARGS...: "$bin" ARGS, its output in $tmp/NAME.log, its exit status checked, the log's tail shown
    local name=$1; shift    # on failure
    "$bin" "$@" >"$tmp/$name.log" 2>&1
    local rc=$?
    check "$name exits $rc" $rc
    [ $rc -eq 0 ] || tail -n 20 "$tmp/$name.log"
}
