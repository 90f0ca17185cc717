# lib_report.sh — what the report's tests share: the binary and fixture from their arguments (1: scaling, 2: the
# source root), a scratch folder, pass/fail counters and the checks on a file. Sourced by test_report.sh,
# test_report_counts.sh, test_baseline.sh and test_untrusted.sh.
report=$1
root=$2
fixture=$root/tests/fixtures/study.csv
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
has() { grep -qF -- "$2" "$1" && ok || bad "$1 lacks: $2"; }
hasre() { grep -qE -- "$2" "$1" && ok || bad "$1 lacks /$2/"; }
