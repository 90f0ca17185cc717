#!/usr/bin/env bash
# test_profile.sh — scripts/profile.sh without a GPU: with a stand-in nsys that records how it is called, the
# capture flags, SCALING_PROFILE_STEPS, the report path, the run's options (its defaults before the user's) and
# the NVTX summary call; an NSYS that is not an executable, or a scaling binary that is missing, gets one line and
# exit 2. (The real capture is exercised on a GPU machine: README, Profiling.)
set -u
bin=$1; root=$2
profile=$root/scripts/profile.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

cat >"$tmp/nsys" <<'EOF'
#!/usr/bin/env bash
# stand-in nsys: logs its arguments, makes the report `profile -o X` names, prints a summary for `stats`
echo "$* | SCALING_PROFILE_STEPS=${SCALING_PROFILE_STEPS:-unset}" >>"${NSYS_LOG:?}"
if [ "$1" = profile ]; then
    while [ $# -gt 0 ]; do [ "$1" = -o ] && { : >"$2.nsys-rep"; break; }; shift; done
    exit 0
fi
[ "$1" = stats ] && echo " Time (%)  Total Time (ns)  Instances  Range"
EOF
chmod +x "$tmp/nsys"
export NSYS_LOG=$tmp/log

NSYS=$tmp/nsys SCALING=$bin PROFILE_OUT=$tmp/p/run SCALING_PROFILE_STEPS=7 \
    "$profile" --strategy single --model lenet >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && ok || { bad "profile.sh exit $rc"; cat "$tmp/stderr"; }
p=$(grep '^profile ' "$tmp/log")
want="profile --trace=cuda,nvtx,cudnn,cublas --capture-range=cudaProfilerApi --capture-range-end=stop --force-overwrite=true --trace-fork-before-exec=true -o $tmp/p/run $bin --epochs 2 --steps 17 --out $tmp/p/run.csv --strategy single --model lenet | SCALING_PROFILE_STEPS=7"
[ "$p" = "$want" ] && ok || bad "nsys profile call:\n got  $p\n want $want"
grep -q "^stats --report nvtx_sum $tmp/p/run.nsys-rep |" "$tmp/log" && ok ||
    bad "no nvtx_sum stats call: $(cat "$tmp/log")"
grep -qx "profile: wrote $tmp/p/run.nsys-rep" "$tmp/stdout" && grep -q 'Range' "$tmp/stdout" && ok ||
    bad "report path or summary not printed: $(cat "$tmp/stdout")"

# where nsys writes no report (the run never reached epoch 2): one line, exit 2
printf '#!/bin/sh\nexit 0\n' >"$tmp/nsys0"; chmod +x "$tmp/nsys0"
NSYS=$tmp/nsys0 SCALING=$bin PROFILE_OUT=$tmp/q/run "$profile" --epochs 1 >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && grep -q 'nothing was captured' "$tmp/stderr" && ok || bad "no report: rc=$rc: $(cat "$tmp/stderr")"

# errors: one line naming the problem, exit 2
expect2() {
    local want=$1; shift
    env "$@" "$profile" --model lenet >/dev/null 2>"$tmp/stderr"; local rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -qF -- "$want" "$tmp/stderr" && ok ||
        bad "$* -> rc=$rc: $(cat "$tmp/stderr"), wanted '$want'"
}
expect2 "NSYS=$tmp/none: not an executable" NSYS="$tmp/none"
expect2 "scaling binary not found" NSYS="$tmp/nsys" SCALING="$tmp/none"
expect2 "SCALING_PROFILE_STEPS=x: not a positive integer" NSYS="$tmp/nsys" SCALING="$bin" SCALING_PROFILE_STEPS=x
# no nsys anywhere: only checkable where none is installed in the usual places
if ! ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
        /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys >/dev/null 2>&1; then
    mkdir -p "$tmp/bin"
    for t in bash env dirname sed date mkdir ldd awk; do ln -s "$(command -v $t)" "$tmp/bin/$t" 2>/dev/null; done
    expect2 "nsys not found: not on the PATH, NSYS not set" PATH="$tmp/bin" NSYS=
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
