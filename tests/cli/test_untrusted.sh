#!/usr/bin/env bash
# test_untrusted.sh — a CSV and its file name are data, never code: `scaling report` on crafted inputs runs nothing
# and writes nothing outside its output folder.
#   1. A newline, a quote, a backslash or a NUL in a name cell (model, dataset, strategy, math, gpu_name, host, ...):
#      the CSV is refused with one line naming the record and the column, exit 2, no output folder.
#   2. A CSV whose file name holds a quote, a newline and a gnuplot command: the report is written (the name goes
#      into each figure's caption as an escaped string) and the command never runs.
#   3. A relative CSV name or --out that starts with '<' ("<touch PWNED;x.csv"): gnuplot would run a data file named
#      so as a command; the figures are drawn from the files and nothing runs.
#   4. HTML, a '|' or a backtick in the all-reduce benchmark's strategy, algo or type: that CSV is refused as in 1.
#   5. A CSV file name holding backticks, newlines, HTML, a table row and a heading: in REPORT.md (title, baseline,
#      a benchmark's error) each stays inside a code span.
# Negative control: the untouched fixture reads (exit 0), so the refusal in 1 comes from the cell alone.
# Parts 2 and 3 skip without gnuplot (the caption and the data files only reach gnuplot); part 1 does not need it.
set -u
source "$(dirname "$0")/lib_report.sh"   # the arguments, the fixture, a scratch folder, ok and bad
scaling=$report
cd "$tmp" || exit 1

# set_cells COLUMN VALUE IN OUT: every cell of COLUMN in IN set to VALUE (a literal; may hold newlines and quotes),
# written with CSV quoting.
set_cells() {
    python3 - "$@" <<'EOF'
import csv, sys
col, val, src, dst = sys.argv[1:5]
rows = list(csv.reader(open(src, newline='')))
j = rows[0].index(col)
for r in rows[1:]:
    if len(r) == len(rows[0]):
        r[j] = val
csv.writer(open(dst, 'w', newline=''), lineterminator='\n').writerows(rows)
EOF
}

# negative control: the fixture itself is read
"$scaling" report "$fixture" --out "$tmp/plain" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && ok || { bad "the untouched fixture: exit $rc"; cat "$tmp/err"; }

# 1. crafted name cells
payload_nl=$'resnet18\'\n!touch PWNED\n#'
payload_sys='x" . system("touch PWNED") . "'
for col in model dataset strategy math gpu_name host schedule; do
    for payload in "$payload_nl" "$payload_sys" 'a\b'; do
        set_cells "$col" "$payload" "$fixture" "$tmp/evil.csv"
        out=$tmp/evil-out-$col
        "$scaling" report "$tmp/evil.csv" --out "$out" >"$tmp/out" 2>"$tmp/err"; rc=$?
        [ $rc -eq 2 ] && ok || bad "$col = $(printf %q "$payload"): exit $rc, expected 2"
        [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "column $col" "$tmp/err" && ok ||
            { bad "$col: not one line naming the column:"; cat "$tmp/err"; }
        [ ! -e "$out" ] && ok || bad "$col: $out was written"
        [ ! -e "$tmp/PWNED" ] && ok || { bad "$col: the payload ran"; rm -f "$tmp/PWNED"; }
    done
done

# a NUL byte inside a name cell ("res\0net18"): a byte outside the set like any other, not the name's end
python3 - "$fixture" "$tmp/nul.csv" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
j = rows[0].index('model')
for r in rows[1:]:
    if len(r) == len(rows[0]):
        r[j] = r[j][:3] + '\0' + r[j][3:]
csv.writer(open(sys.argv[2], 'w', newline=''), lineterminator='\n').writerows(rows)
EOF
"$scaling" report "$tmp/nul.csv" --out "$tmp/nul-out" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "column model: byte 0x00" "$tmp/err" && [ ! -e "$tmp/nul-out" ] && ok ||
    { bad "a NUL in a model name: exit $rc"; cat "$tmp/err"; }

# 2. a crafted file name reaches the figures' captions only as data
if command -v gnuplot >/dev/null; then
    evil_dir=$tmp/$'d\'ir\n!touch PWNED\n#'
    mkdir -p "$evil_dir"
    cp "$fixture" "$evil_dir/"$'s"tudy\'\n!touch PWNED\n#.csv'
    for f in "$evil_dir"/*.csv; do
        "$scaling" report "$f" --out "$tmp/named" >/dev/null 2>"$tmp/err"; rc=$?
        [ $rc -eq 0 ] && ok || { bad "a crafted CSV file name: exit $rc"; cat "$tmp/err"; }
        ls "$tmp/named"/*.png >/dev/null 2>&1 && ok || bad "a crafted CSV file name: no figure drawn"
        grep -q 'touch PWNED' "$tmp/err" && bad "gnuplot read part of the file name as code: $(cat "$tmp/err")" || ok
    done
    [ ! -e "$tmp/PWNED" ] && [ ! -e "$root/PWNED" ] && ok || bad "a crafted CSV file name ran its payload"
else
    echo "note: gnuplot not found: the file-name case is not run"
fi

# 3. a relative path that starts with '<' (gnuplot reads a data file named "<cmd" as a command to run): as the CSV's
#    name (the output folder follows it) and as --out, from the folder that holds them
if command -v gnuplot >/dev/null; then
    mkdir -p "$tmp/rel" && cd "$tmp/rel" || exit 1
    cp "$fixture" '<touch PWNED;x.csv'
    cp "$fixture" study.csv
    for args in "<touch PWNED;x.csv" "study.csv|--out|<touch PWNED;y"; do
        IFS='|' read -r -a argv <<<"$args"
        "$scaling" report "${argv[@]}" >/dev/null 2>"$tmp/err"; rc=$?
        [ $rc -eq 0 ] && ok || { bad "report ${argv[*]}: exit $rc"; cat "$tmp/err"; }
        [ ! -e PWNED ] && ok || { bad "report ${argv[*]}: the path ran as a command"; rm -f PWNED; }
        ls ./'<touch PWNED;'?/*.png >/dev/null 2>&1 && ok || bad "report ${argv[*]}: no figure drawn"
        rm -rf ./'<touch PWNED;'?
    done
    cd "$tmp" || exit 1
fi

# 4. the all-reduce benchmark's name cells (strategy, algo, type) go into REPORT.md's tables and code spans: a byte
#    outside a name's set (HTML, a table's '|', a backtick) refuses the benchmark CSV, as the study's (negative
#    control: the untouched pair is read)
mkdir -p "$tmp/ar" && cp "$fixture" "$tmp/ar/study.csv"
cp "$root/tests/fixtures/study_allreduce.csv" "$tmp/ar/study_allreduce.csv"
"$scaling" report "$tmp/ar/study.csv" --out "$tmp/ar/plain" >/dev/null 2>"$tmp/err" && ok ||
    { bad "the untouched benchmark CSV: exit $?"; cat "$tmp/err"; }
for col in strategy algo type; do
    for payload in 'nccl <img src=x onerror=alert(1)>' 'Ring | forged | cell' 'Ring`<b>x</b>'; do
        set_cells "$col" "$payload" "$root/tests/fixtures/study_allreduce.csv" "$tmp/ar/study_allreduce.csv"
        out=$tmp/ar/out-$col
        "$scaling" report "$tmp/ar/study.csv" --out "$out" >/dev/null 2>"$tmp/err"; rc=$?
        [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "column $col" "$tmp/err" && [ ! -e "$out" ] &&
            ok || { bad "benchmark $col = $payload: exit $rc, $(ls "$out" 2>/dev/null | wc -l) file(s) written:"
                    cat "$tmp/err"; }
    done
done

# 5. file names in REPORT.md: the study's (its title), the baseline's, the benchmark's (its fit, a table cell of the
#    projection) and the network benchmark's that cannot be read (its error names it too) stay inside code spans,
#    whatever their bytes: no HTML, table row or heading comes of them
mkdir -p "$tmp/md"
name=$tmp/md/$'n`a``me\n<img src=x onerror=alert(1)>\n| a | b |\n# h'
cp "$fixture" "$name.csv"
cp "$root/tests/fixtures/study_allreduce.csv" "${name}_allreduce.csv"
: >"${name}_allreduce_net.csv"      # empty: the inter-node path's note names the file and the error
"$scaling" report "$name.csv" --baseline "$name.csv" --out "$tmp/md/out" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && ok || { bad "crafted file names in REPORT.md: exit $rc"; cat "$tmp/err"; }
python3 - "$tmp/md/out/REPORT.md" >"$tmp/md/check" <<'EOF'
import re, sys
md = open(sys.argv[1], encoding='utf-8').read()
# code spans (CommonMark: a run of n backticks up to the next run of exactly n) taken out; what is left is Markdown
rest = re.sub(r'(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)', '', md)
for bad in ('<img', 'onerror'):
    if bad in rest:
        print('outside a code span:', bad)
for line in md.splitlines():
    if line.startswith(('<img', '| a |', '# h')):
        print('a line of its own:', line)
if md.count('onerror') < 6:     # title, baseline, fit, projection table, network note (file and error)
    print('the names in', md.count('onerror'), 'places, not 6')
EOF
[ ! -s "$tmp/md/check" ] && ok || { bad "crafted file names in REPORT.md:"; cat "$tmp/md/check"; }

echo "test_untrusted: $pass passed, $fail failed"
[ $fail -eq 0 ]
