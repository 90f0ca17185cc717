#!/usr/bin/env bash
# test_default.sh — `./scaling` with no options where it cannot run: without a GPU, or with a bad benchmark knob, it
# prints one line naming the problem, exits 2 and creates nothing; --help says what the default study runs; and the
# report it ends with, made where gnuplot is missing, says in one line how to get the figures, which that command
# then does.
set -u
bin=$1; root=$2
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac     # it runs from a scratch folder
source "$(dirname "$0")/lib.sh"

# No GPU: one line, exit 2, nothing created (no results/ folder, no stdout)
mkdir -p "$tmp/fresh"
(cd "$tmp/fresh" && ln -s "$root/data" data && CUDA_VISIBLE_DEVICES= "$bin" >"$tmp/stdout" 2>"$tmp/stderr"); rc=$?
lines=$(wc -l <"$tmp/stderr")
if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -q 'no CUDA device' "$tmp/stderr" && [ ! -s "$tmp/stdout" ] \
   && [ ! -e "$tmp/fresh/results" ]; then pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL: no GPU: rc=$rc, $lines stderr line(s), results/ $( [ -e "$tmp/fresh/results" ] && echo created || echo absent )"
    cat "$tmp/stderr" "$tmp/stdout"
fi

# A bad benchmark knob: its one line, before the device check, nothing created
(cd "$tmp/fresh" && SCALING_PIPE_SPLIT=even "$bin" >"$tmp/stdout" 2>"$tmp/stderr"); rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q 'SCALING_PIPE_SPLIT=even: expected balance or step' \
   "$tmp/stderr" && [ ! -s "$tmp/stdout" ] && [ ! -e "$tmp/fresh/results" ]; then pass=$((pass + 1))
else fail=$((fail + 1)); echo "FAIL: bad knob: rc=$rc"; cat "$tmp/stderr" "$tmp/stdout"; fi

# --help names the default study, its folder and its strategies
"$bin" --help 2>&1 | tr '\n' ' ' | tr -s ' ' >"$tmp/help"    # --help wraps to 80 columns: one line, blanks squeezed
for want in 'With no options at all' 'results/default-<UTC time>/' 'pipeline on those GPU counts up to 8' \
            'Fashion-MNIST' 'On one GPU nothing scales: the reference runs alone at batches 256,1024,4096,60000'; do
    grep -qF -- "$want" "$tmp/help" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: --help lacks '$want'"; }
done

# The report without gnuplot: a PATH of common tools, gnuplot left out
mkdir -p "$tmp/bin" "$tmp/study"
for t in bash awk cut dirname env grep head mkdir mktemp mv rm sed sort tail tr wc cat; do
    ln -s "$(command -v "$t")" "$tmp/bin/$t"
done
cp "$root/tests/fixtures/study.csv" "$tmp/study/study.csv"
PATH=$tmp/bin "$bin" report "$tmp/study/study.csv" --out "$tmp/study" >/dev/null 2>"$tmp/stderr"; rc=$?
note=$(grep -c 'gnuplot not found' "$tmp/stderr")
if [ $rc -eq 0 ] && [ "$note" -eq 1 ] && grep -q '(no figures: gnuplot not found' "$tmp/study/REPORT.md" \
   && ! grep -q '!\[' "$tmp/study/REPORT.md"; then pass=$((pass + 1))
else fail=$((fail + 1)); echo "FAIL: report without gnuplot: rc=$rc, $note note line(s)"; cat "$tmp/stderr"; fi
# The line's command, run where gnuplot is, makes the figures (CI has gnuplot; elsewhere this part is skipped)
again=$(sed -n 's/.*gnuplot not found.* and run //p' "$tmp/stderr")
if command -v gnuplot >/dev/null && [ -n "$again" ]; then
    eval "$again" >/dev/null 2>&1; rc=$?
    n=$(grep -c '!\[' "$tmp/study/REPORT.md")
    if [ $rc -eq 0 ] && [ "$n" -gt 0 ] && ls "$tmp"/study/*.png >/dev/null 2>&1; then pass=$((pass + 1))
    else fail=$((fail + 1)); echo "FAIL: '$again' -> rc=$rc, $n figure(s) in REPORT.md"; fi
elif [ -z "$again" ]; then fail=$((fail + 1)); echo "FAIL: no command in the note"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
