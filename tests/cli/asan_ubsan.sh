#!/usr/bin/env bash
# asan_ubsan.sh — the report and the CSV code under AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer,
# every error fatal: a build of this tree with -DSCALING_SANITIZE=address,undefined in BUILD (configured once, then
# incremental), of the host targets only (report_host: `scaling report` without CUDA; the CSV and report host tests;
# fuzz_report), then
#   1. every host test that links no CUDA library (the CSV writer and reader, the lock, --resume's scan, the
#      fixtures, options, sweep, conv cache, watchdog, ...);
#   2. report_host on every committed study CSV (results/, tests/fixtures/): exit 0 or 2, no sanitizer report;
#   3. the report's command-line tests (test_report, test_projection, test_untrusted, test_report_files, test_baseline,
#      test_report_folder) on report_host;
#   4. the fuzz test on report_host for SCALING_SANITIZE_FUZZ_SECONDS (default 20; its seed is printed).
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
# Every host test that links no CUDA library (tests/CMakeLists.txt: test_models links the engine, these the
# registry's strategies; test_report_run runs the scaling binary): those build only with the CUDA toolkit's code,
# which would double CI's time.
cuda_linked=" test_models test_default_plan test_options test_study test_report_model test_answer test_host_infos
              test_report_run "
host_tests=()
for src in "$root"/tests/host/test_*.c; do
    t=$(basename "$src" .c)
    [[ " $(echo $cuda_linked) " == *" $t "* ]] || host_tests+=("$t")
done
cmake --build "$build" -j2 --target report_host fuzz_report "${host_tests[@]}" >"$build.build.log" 2>&1 ||
    { echo "FAIL: build (log: $build.build.log)"; grep -E "error|Error" "$build.build.log" | head -20; exit 1; }
echo "asan_ubsan: built in $((SECONDS - t0)) s"
report=$build/tests/report_host

# Negative control: the sanitizers are in the binary (its symbols name them).
nm "$report" 2>/dev/null | grep -q __asan_init && nm "$report" | grep -q __ubsan_handle && ok ||
    bad "report_host is not instrumented (no __asan_init / __ubsan_handle symbols)"

# 1. the CSV and report host tests
for t in "${host_tests[@]}"; do
    # test_isolate crashes its children on purpose: the kernel, not ASan's handler, must deliver their SIGSEGV
    segv=$([ "$t" = test_isolate ] && echo ":handle_segv=0" || true)
    (cd "$build/tests" && ASAN_OPTIONS=$ASAN_OPTIONS$segv "./$t" >"$build/$t.log" 2>&1); rc=$?
    [ $rc -eq 0 ] && ok || { bad "$t: exit $rc"; tail -30 "$build/$t.log"; }
done

# 2. every committed study CSV
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0
while IFS= read -r -d '' csv; do
    head -c 7 "$csv" | grep -q '^run_id,' || continue
    n=$((n + 1))
    out=$tmp/r$n
    PATH=/nonexistent "$report" report "$csv" --out "$out" >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then bad "report_host report $csv: exit $rc"; tail -30 "$tmp/err"; else ok; fi
    rm -rf "$out"
done < <(find "$root/results" "$root/tests/fixtures" -name '*.csv' -print0 | sort -z)
[ $n -ge 5 ] && ok || bad "only $n study CSVs found"
echo "asan_ubsan: $n committed study CSVs reported ($((SECONDS - t0)) s)"

# 3. the report's command-line tests, on report_host
for t in test_report test_projection test_untrusted test_report_files test_baseline test_report_folder; do
    bash "$root/tests/cli/$t.sh" "$report" "$root" >"$tmp/$t.log" 2>&1; rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 77 ] && ok || { bad "$t on report_host: exit $rc"; tail -30 "$tmp/$t.log"; }
done
echo "asan_ubsan: command-line tests done ($((SECONDS - t0)) s)"

# 4. the fuzz test
SCALING_FUZZ_SECONDS=${SCALING_SANITIZE_FUZZ_SECONDS:-20} "$build/tests/fuzz_report" "$report" "$root"; rc=$?
[ $rc -eq 0 ] && ok || bad "fuzz_report on report_host: exit $rc"

echo "asan_ubsan: $pass passed, $fail failed ($((SECONDS - t0)) s)"
[ $fail -eq 0 ]
