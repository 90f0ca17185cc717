# lib.sh — what the command-line tests share: a scratch folder, pass/fail counters, and expect_error, which runs
# `scaling` with bad input and wants exit 2, exactly one stderr line holding the given text, and no CSV written.
# Sourced by tests/cli/test_*.sh after they set bin (the scaling binary).
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv=$tmp/out.csv
pass=0; fail=0
expect_error() {   # expect_error "<substring of the message>" args...
    local want=$1; shift
    rm -f "$csv"
    "$bin" --out "$csv" "$@" >"$tmp/stdout" 2>"$tmp/stderr"; local rc=$?
    local lines; lines=$(wc -l <"$tmp/stderr")
    if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$want" "$tmp/stderr" && [ ! -e "$csv" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: scaling $* -> rc=$rc, $lines stderr line(s), csv $( [ -e "$csv" ] && echo written || echo absent ); wanted '$want'; got:"
        cat "$tmp/stderr"
    fi
}
