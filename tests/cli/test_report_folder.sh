#!/usr/bin/env bash
# test_report_folder.sh — a report's folder is always one study's (report/outdir.h): a report removes what the
# previous one wrote and this one does not make, and never a file it did not write; two reports into one --out at once
# (20 times) leave one study's whole set; SIGINT or SIGTERM at a random moment (50 times) leaves the previous set or
# the new one, whole, and no temporary file; a private folder a SIGKILL left is removed by the next report. Every
# check is on the folder's content, none on a timing: the random moments only vary where the signal lands.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_report.sh"

# A: the fixture; B: the fixture without its pipeline runs (fewer figures: A's pipeline files are B's stale ones)
grep -v ',pipeline,' "$fixture" >"$tmp/b.csv"
cp "$fixture" "$tmp/a.csv"
w=$tmp/w
sig() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum); }
# The set a report of $1 leaves in a fresh folder, as its file hashes, with or without gnuplot (PATH $2)
ref() {
    rm -rf "$w"
    PATH=$2 "$report" report "$tmp/$1.csv" --out "$w" >/dev/null 2>&1 || bad "report $1 (PATH $2)"
    sig "$w"
}
nogp=/nonexistent
sigA=$(ref a "$nogp"); cp -a "$w" "$tmp/refA"
sigB=$(ref b "$nogp")
[ "$sigA" != "$sigB" ] && grep -q 'pipeline' <<<"$sigA" && ! grep -q 'pipeline' <<<"$sigB" && ok ||
    bad "the two studies' sets are not told apart"

# ---- stale outputs go, a file the report did not write stays
rm -rf "$w"; cp -a "$tmp/refA" "$w"
echo mine >"$w/notes.png"; echo mine >"$w/keep.txt"
PATH=$nogp "$report" report "$tmp/b.csv" --out "$w" >/dev/null 2>&1; rc=$?
rm "$w/notes.png" "$w/keep.txt" 2>/dev/null && [ $rc -eq 0 ] && [ "$(sig "$w")" = "$sigB" ] && ok ||
    bad "B over A: rc=$rc, the folder is not B's set plus the user's two files: $(ls -A "$w" | tr '\n' ' ')"

# ---- a private folder and a temporary file a killed report left are removed by the next
mkdir "$w/.report.tmp-AbC123"; echo x >"$w/.report.tmp-AbC123/REPORT.md"; echo x >"$w/.summary.csv.tmp-XyZ789"
PATH=$nogp "$report" report "$tmp/b.csv" --out "$w" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && [ "$(sig "$w")" = "$sigB" ] && [ -z "$(find "$w" -name '*.tmp-*')" ] && ok ||
    bad "leftovers of a killed report: rc=$rc, $(ls -A "$w" | tr '\n' ' ')"

# ---- two reports into one folder at once, 20 times: the folder is A's set or B's, whole
mixed=0
for i in $(seq 1 20); do
    rm -rf "$w"
    PATH=$nogp "$report" report "$tmp/a.csv" --out "$w" >/dev/null 2>&1 & p1=$!
    PATH=$nogp "$report" report "$tmp/b.csv" --out "$w" >/dev/null 2>&1 & p2=$!
    wait $p1; r1=$?; wait $p2; r2=$?
    s=$(sig "$w")
    { [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && { [ "$s" = "$sigA" ] || [ "$s" = "$sigB" ]; }; } ||
        { mixed=$((mixed + 1)); echo "trial $i: rc $r1 $r2: $(ls -A "$w" | tr '\n' ' ')"; }
done
[ $mixed -eq 0 ] && ok || bad "two reports at once: $mixed of 20 folders not one study's whole set"

# ---- a signal at a random moment, 50 times: A's whole set (stopped before the swap) or B's (after), and no
#      temporary file. Most trials without gnuplot (a report of 0.2 s), some with it (figures take seconds).
check_signal() {    # PATH, the longest delay in ms, trials
    local bad_n=0 i sgn ms s rc
    for i in $(seq 1 "$3"); do
        rm -rf "$w"; cp -a "$tmp/refA" "$w"
        PATH=$1 "$report" report "$tmp/b.csv" --out "$w" >/dev/null 2>&1 & pid=$!
        ms=$((RANDOM % $2)); sgn=$([ $((RANDOM % 2)) -eq 0 ] && echo INT || echo TERM)
        sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
        kill -s "$sgn" $pid 2>/dev/null
        wait $pid; rc=$?
        s=$(sig "$w")
        if [ -n "$(find "$w" -name '*.tmp-*')" ] || { [ "$s" != "$sigA" ] && [ "$s" != "$sigB2" ]; }; then
            bad_n=$((bad_n + 1))
            echo "SIG$sgn after $ms ms: rc $rc: $(ls -A "$w" | tr '\n' ' ')"
        fi
    done
    [ $bad_n -eq 0 ] && ok || bad "a signal at a random moment: $bad_n of $3 folders mixed or with temporary files"
}
sigB2=$sigB; sigA_nogp=$sigA
check_signal "$nogp" 300 40
if command -v gnuplot >/dev/null; then
    sigA=$(ref a "$PATH"); rm -rf "$tmp/refA"; cp -a "$w" "$tmp/refA"
    sigB2=$(ref b "$PATH")
    check_signal "$PATH" 2500 10
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
