# lib.sh — what the command-line tests share: a scratch folder, pass/fail counters with check and the closing
# summary, and expect_error, which runs `scaling` with bad input and wants exit 2, exactly one stderr line holding
# the given text, nothing on stdout and no CSV written. Sourced by tests/cli/test_*.sh (after they set bin, the
# scaling binary, where they use expect_error) and by lib_gpu.sh.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv=$tmp/out.csv
pass=0; fail=0
check() {   # check "<what>" <condition exit status>
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}
summary() { echo "$pass passed, $fail failed"; [ $fail -eq 0 ]; }
expect_error() {   # expect_error "<substring of the message>" args...
    local want=$1; shift
    rm -f "$csv"
    "$bin" --out "$csv" "$@" >"$tmp/stdout" 2>"$tmp/stderr"; local rc=$?
    local lines; lines=$(wc -l <"$tmp/stderr")
    if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$want" "$tmp/stderr" && [ ! -s "$tmp/stdout" ] &&
       [ ! -e "$csv" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: scaling $* -> rc=$rc, $lines stderr line(s), $(wc -c <"$tmp/stdout") stdout byte(s)," \
             "csv $( [ -e "$csv" ] && echo written || echo absent ); wanted '$want'; got:"
        cat "$tmp/stderr"
    fi
}
