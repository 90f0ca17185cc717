#!/usr/bin/env bash
# asan_ubsan.sh — the host-only build (-DSCALING_CUDA=OFF: `scaling` without CUDA, CMakeLists.txt) under
# AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer, every error fatal: a build of this tree with
# -DSCALING_SANITIZE=address,undefined in BUILD (configured once, then incremental; C code only, so it costs no CUDA
# compile), then
#   1. the host-only build's own test suite (ctest there: the host tests, and the command-line tests of what it does,
#      test_host_only.sh among them);
#   2. its `scaling report` on every committed study CSV (results/, tests/fixtures/): exit 0 or 2, no sanitizer report;
#   3. the fuzz test on it for SCALING_SANITIZE_FUZZ_SECONDS (default 20; its seed is printed).
# A sanitizer's report exits 98 (UBSan) or 99 (ASan), which every check above counts as a failure.
#   tests/cli/asan_ubsan.sh ROOT BUILD [cmake -D options of the main build: compilers and dependencies]
set -u
root=$(realpath "$1"); build=$2; shift 2
export ASAN_OPTIONS=exitcode=99:detect_leaks=1:abort_on_error=0:strict_string_checks=1
export UBSAN_OPTIONS=exitcode=98:halt_on_error=1:print_stacktrace=1
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
t0=$SECONDS

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DSCALING_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" \
        >"$build.configure.log" 2>&1 ||
        { echo "FAIL: configure (log: $build.configure.log)"; tail -20 "$build.configure.log"; exit 1; }
fi
cmake --build "$build" -j2 >"$build.build.log" 2>&1 ||
    { echo "FAIL: build (log: $build.build.log)"; grep -E "error|Error" "$build.build.log" | head -20; exit 1; }
echo "asan_ubsan: built in $((SECONDS - t0)) s"
report=$build/scaling

# Negative control: the sanitizers are in the binary (its symbols name them).
nm "$report" 2>/dev/null | grep -q __asan_init && nm "$report" | grep -q __ubsan_handle && ok ||
    bad "$report is not instrumented (no __asan_init / __ubsan_handle symbols)"
# The build is the host-only one: no CUDA library linked.
ldd "$report" 2>/dev/null | grep -qE 'libcudart|libcudnn|libnccl' && bad "$report links CUDA libraries" || ok

# 1. the host-only build's tests (the fuzz test runs in step 3, for its own time)
(cd "$build" && ctest -j2 -E '^fuzz_report$' --output-on-failure >"$build/ctest.log" 2>&1); rc=$?
[ $rc -eq 0 ] && ok || { bad "the host-only build's tests: exit $rc (log: $build/ctest.log)"; tail -40 "$build/ctest.log"; }
echo "asan_ubsan: the host-only build's tests done ($((SECONDS - t0)) s)"

# 2. every committed study CSV
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0
while IFS= read -r -d '' csv; do
    head -c 7 "$csv" | grep -q '^run_id,' || continue
    n=$((n + 1))
    out=$tmp/r$n
    PATH=/nonexistent "$report" report "$csv" --out "$out" >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then bad "scaling report $csv: exit $rc"; tail -30 "$tmp/err"; else ok; fi
    rm -rf "$out"
done < <(find "$root/results" "$root/tests/fixtures" -name '*.csv' -print0 | sort -z)
[ $n -ge 5 ] && ok || bad "only $n study CSVs found"
echo "asan_ubsan: $n committed study CSVs reported ($((SECONDS - t0)) s)"

# 3. the fuzz test
SCALING_FUZZ_SECONDS=${SCALING_SANITIZE_FUZZ_SECONDS:-20} "$build/tests/fuzz_report" "$report" "$root"; rc=$?
[ $rc -eq 0 ] && ok || bad "fuzz_report on the host-only scaling: exit $rc"

echo "asan_ubsan: $pass passed, $fail failed ($((SECONDS - t0)) s)"
[ $fail -eq 0 ]
