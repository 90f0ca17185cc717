#!/usr/bin/env bash
# test_tsv.sh — `scaling tsv` (bench/tsv.c), the one way a script reads a CSV, without a GPU (CI): quoted commas,
# doubled quotes, a line break and a tab inside a cell, CRLF line ends, a record cut short (left out and counted on
# stderr), stdin, a file that is not there (exit 2), a NUL byte (exit 2), a full stdout (exit 1), and a committed
# study read column by column.
set -u
bin=$1
ROOT=$(cd "$2" && pwd)
source "$(dirname "$0")/lib.sh"

printf 'a,b,c\r\n1,"x, y",3\r\n"say ""hi""","two\nlines","t\tab"\r\n4,5\r\n7,8,9' >"$tmp/in.csv"
"$bin" tsv "$tmp/in.csv" >"$tmp/out" 2>"$tmp/err"; rc=$?
printf 'a\tb\tc\n1\tx, y\t3\nsay "hi"\ttwo lines\tt ab\n7\t8\t9\n' >"$tmp/want"
check "exit 0 (got $rc)" $([ $rc -eq 0 ]; echo $?)
check "cells: $(tr '\t\n' '|;' <"$tmp/out")" $(cmp -s "$tmp/out" "$tmp/want"; echo $?)
check "the cut record is counted: $(cat "$tmp/err")" \
    $(grep -q "in.csv: 1 record(s) with the wrong number of fields skipped" "$tmp/err"; echo $?)
# Negative control: the same file whole has nothing to skip and says nothing.
sed '/^4,5/d' "$tmp/in.csv" >"$tmp/whole.csv"
"$bin" tsv "$tmp/whole.csv" >/dev/null 2>"$tmp/err"
check "a whole file: nothing on stderr" $([ ! -s "$tmp/err" ]; echo $?)

printf 'x,y\n1,2\n' | "$bin" tsv - >"$tmp/out" 2>&1
check "stdin: $(tr '\t\n' '|;' <"$tmp/out")" $([ "$(cat "$tmp/out")" = "$(printf 'x\ty\n1\t2')" ]; echo $?)
"$bin" tsv "$tmp/none.csv" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "a missing file: exit 2, one line (got $rc, $(wc -l <"$tmp/err") lines)" \
    $([ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -s "$tmp/out" ]; echo $?)
"$bin" tsv >/dev/null 2>&1; rc=$?
check "no file named: exit 2 (got $rc)" $([ $rc -eq 2 ]; echo $?)

# A NUL byte is refused (exit 2, one line), from a file before anything is written, from stdin at its record; a full
# stdout (/dev/full) is a failed write, exit 1, never a silent 0.
printf 'a,b\n1,x\0y\n' >"$tmp/nul.csv"
"$bin" tsv "$tmp/nul.csv" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "a NUL in a file: exit 2, one line, nothing written (got $rc, $(cat "$tmp/err"))" \
    $([ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q NUL "$tmp/err"; echo $?)
"$bin" tsv - <"$tmp/nul.csv" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "a NUL on stdin: exit 2, the record not cut (got $rc, $(tr '\t\n' '|;' <"$tmp/out"))" \
    $([ $rc -eq 2 ] && ! grep -q '^1' "$tmp/out"; echo $?)
if [ -w /dev/full ]; then
    "$bin" tsv "$tmp/whole.csv" >/dev/full 2>"$tmp/err"; rc=$?
    check "stdout on /dev/full: exit 1, one line (got $rc, $(cat "$tmp/err"))" \
        $([ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; echo $?)
fi

# A committed study: one TSV line per row, and a column picked by name holds the CSV's cells.
csv=$ROOT/results/pipeline-h200x2-2026-11-22/pipeline.csv
"$bin" tsv "$csv" >"$tmp/study.tsv" 2>"$tmp/err"
rows=$(($(wc -l <"$tmp/study.tsv") - 1))
check "every row of $csv ($rows) and none skipped" \
    $([ "$rows" -eq $(($(grep -c '^20' "$csv"))) ] && [ ! -s "$tmp/err" ]; echo $?)
splits=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { print $c["split"] }' "$tmp/study.tsv" |
         grep -c ',')
check "the split cells keep their commas ($splits rows)" $([ "$splits" -gt 0 ]; echo $?)

summary
