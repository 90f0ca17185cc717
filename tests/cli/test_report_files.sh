#!/usr/bin/env bash
# test_report_files.sh — `scaling report` writes only its own files, whole, where it was told (doc/files.md):
#   1. symlinks planted in the output folder at every name the report writes (REPORT.md, each figure's data file,
#      PNG and SVG) and at the names of the temporary files it used to write through (.REPORT.md.tmp,
#      .gnuplot_vars.gp, .gnuplot.err), all pointing at one canary file: the canary is unchanged, and each name the
#      report writes is now a regular file (the link replaced, never followed);
#   2. a figure that gnuplot leaves half-written (a gnuplot that writes a little and fails) replaces nothing: the
#      previous report's figures and REPORT.md are unchanged, and no temporary file is left;
#   3. bad --out targets, each one line and exit 2 with nothing written: a path over the limit (and longer than any
#      folder the report can write into), a file, a folder under a file, a device, a REPORT.md that is a folder, an
#      input (the study, --allreduce, --baseline) where the report would write one of its files; and a model name
#      too long to name a file after;
#   4. a long --out under the limit (1,109 characters, which an older report cut at 1,023) is written where named.
# Negative control: the untouched report of the same fixture (exit 0). Parts 1 (figures) and 2 need gnuplot.
set -u
scaling=$(realpath "$1")
root=$(realpath "$2")
fixture=$root/tests/fixtures/study.csv
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
cd "$tmp" || exit 1
cp "$root"/tests/fixtures/study.csv "$root"/tests/fixtures/study_allreduce.csv .
have_gnuplot=0; command -v gnuplot >/dev/null && have_gnuplot=1

# The names a report of the fixture writes (negative control: it is written).
"$scaling" report study.csv --out ref >/dev/null 2>"$tmp/err"; rc=$?
ok '[ $rc -eq 0 ]' "the untouched fixture: exit $rc ($(cat "$tmp/err"))"
mapfile -t names < <(cd ref && ls -A)
ok '[ ${#names[@]} -ge 8 ]' "the report wrote ${#names[@]} files: ${names[*]}"
[ $have_gnuplot -eq 1 ] && ok 'ls ref/*.png >/dev/null 2>&1' "no figure drawn with gnuplot on the PATH"

# 1. planted symlinks
echo "canary: nothing may write here" >canary
sum=$(sha256sum <canary)
mkdir o
for n in "${names[@]}" .REPORT.md.tmp .gnuplot_vars.gp .gnuplot.err; do ln -s ../canary "o/$n"; done
"$scaling" report study.csv --out o >/dev/null 2>"$tmp/err"; rc=$?
ok '[ $rc -eq 0 ]' "planted links: exit $rc ($(cat "$tmp/err"))"
ok '[ "$(sha256sum <canary)" = "$sum" ]' "the canary was written through a planted link"
for n in "${names[@]}"; do
    ok '[ -f "o/$n" ] && [ ! -L "o/$n" ]' "o/$n is still a link (or missing): written through, not replaced"
done
ok 'cmp -s o/REPORT.md ref/REPORT.md' "REPORT.md written through planted links differs from the reference"

# 2. a half-written figure replaces nothing
if [ $have_gnuplot -eq 1 ]; then
    mkdir bin
    printf '#!/bin/sh\nprintf "half a PNG"\nexit 1\n' >bin/gnuplot
    chmod +x bin/gnuplot
    cp -a ref before
    PATH=$tmp/bin:$PATH "$scaling" report study.csv --out ref >/dev/null 2>"$tmp/err"; rc=$?
    ok '[ $rc -eq 1 ]' "gnuplot failing: exit $rc, expected 1"
    ok 'grep -q "gnuplot failed" "$tmp/err"' "gnuplot failing: no line saying so: $(cat "$tmp/err")"
    ok 'diff -r before ref >/dev/null' "a failed figure changed the previous report: $(diff -rq before ref)"
    ok '[ -z "$(find ref -name ".*tmp-*")" ]' "temporary files left: $(find ref -name '.*tmp-*')"
fi

# 3. bad --out targets: one line, exit 2, nothing written
# refused "<message>" args...: the report of study.csv with args
refused() {
    local want=$1; shift
    local before after
    before=$(find . \( -path ./ref -o -path ./err -o -path ./out \) -prune -o -print | sort; sha256sum canary study.csv)
    timeout 20 "$scaling" report study.csv "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
    after=$(find . \( -path ./ref -o -path ./err -o -path ./out \) -prune -o -print | sort; sha256sum canary study.csv)
    local lines; lines=$(wc -l <"$tmp/err")
    if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$want" "$tmp/err" && [ "$before" = "$after" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        local files=CHANGED; [ "$before" = "$after" ] && files=unchanged
        echo "FAIL: report $(echo "${*:1:2}" | cut -c1-80) -> rc=$rc, $lines stderr line(s), files $files; wanted" \
             "'$want'; got:"
        head -c 400 "$tmp/err"; echo
    fi
}
long=$tmp$(printf '/%0200d' $(seq 1 25))      # 5,000 characters: over PATH_MAX
refused "--out: path longer than the limit" --out "$long"
mid=$tmp$(printf '/%0200d' $(seq 1 19))       # about 3,900: under PATH_MAX, no room for a file name below it
refused "is longer than the limit of" --out "$mid"
echo file >afile
refused "not a directory" --out afile
refused "afile: a file, not a directory" --out afile/sub/deeper
refused "a character device, not a directory" --out /dev/full
mkdir -p dirmd/REPORT.md
ln -s not_yet linked_out
refused "linked_out is a symbolic link to a missing folder" --out linked_out/sub
refused "REPORT.md is a directory" --out dirmd
# a name the report would name a file after, too long for a file name: the CSV is refused (the model column is
# the 4th, before any quoted cell)
long_name=$(printf 'm%.0s' $(seq 1 300))
awk -F, -v OFS=, -v m="$long_name" 'NR > 1 { $4 = m } { print }' study.csv >long_model.csv
timeout 20 "$scaling" report long_model.csv --out long_model_out >/dev/null 2>"$tmp/err"; rc=$?
ok '[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "column model: a name of 300 bytes" "$tmp/err" &&
    [ ! -e long_model_out ]' "a 300-byte model name: exit $rc, $(cat "$tmp/err")"
mkdir alias; cp study.csv alias/REPORT.md; cp study.csv alias/fig.dat
(
    cd alias
    for input in REPORT.md fig.dat; do
        before=$(sha256sum "$input")
        "$scaling" report "$input" --out . >/dev/null 2>"$tmp/err"; rc=$?
        [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "it would be replaced" "$tmp/err" &&
            [ "$(sha256sum "$input")" = "$before" ] && [ "$(ls -A | wc -l)" -eq 2 ] ||
            { echo "FAIL: an input at $input in --out: rc=$rc, $(cat "$tmp/err")"; exit 1; }
    done
) && pass=$((pass + 1)) || fail=$((fail + 1))
"$scaling" report study.csv --allreduce alias/fig.dat --out alias >/dev/null 2>"$tmp/err"; rc=$?
ok '[ $rc -eq 2 ] && grep -q "alias/fig.dat is there" "$tmp/err"' "--allreduce inside --out: rc=$rc, $(cat "$tmp/err")"
before=$(sha256sum alias/fig.dat)
"$scaling" report study.csv --baseline alias/fig.dat --out alias >/dev/null 2>"$tmp/err"; rc=$?
ok '[ $rc -eq 2 ] && grep -q "alias/fig.dat is there" "$tmp/err" && [ "$(sha256sum alias/fig.dat)" = "$before" ]' \
   "--baseline inside --out: rc=$rc, $(cat "$tmp/err")"

# 4. a long --out is written where it is named, whole
long_ok=$tmp/$(printf 'd%0199d/' $(seq 1 6))
long_ok=${long_ok:0:1109}
[[ $long_ok == */ ]] && long_ok=${long_ok%/}x
"$scaling" report study.csv --out "$long_ok" >/dev/null 2>"$tmp/err"; rc=$?
ok '[ $rc -eq 0 ] && cmp -s "$long_ok/REPORT.md" ref/REPORT.md' \
   "--out of ${#long_ok} characters: exit $rc, REPORT.md $([ -f "$long_ok/REPORT.md" ] && echo differs || echo missing)"
written=$(find "$tmp" \( -path "$tmp/alias" -o -path "$tmp/dirmd" -o -path "$tmp/before" \) -prune -o -name REPORT.md \
           -print | sort)
ok '[ "$written" = "$(printf "%s\n" "$long_ok/REPORT.md" "$tmp/o/REPORT.md" "$tmp/ref/REPORT.md" | sort)" ]' \
   "REPORT.md written elsewhere: $written"

echo "test_report_files: $pass passed, $fail failed"
[ $fail -eq 0 ]
