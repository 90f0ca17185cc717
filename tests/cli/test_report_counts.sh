#!/usr/bin/env bash
# test_report_counts.sh — counts are bounded on read: a study CSV whose gpus, per_gpu_batch, micro_batches, stages,
# nodes or gpus_per_node cell is not an integer from 1 to 65536, or whose global_batch is not one from 1 up, is
# refused by `scaling report` (and --runs) with one stderr line naming the record and the column, exit 2, nothing
# written; 65536 itself reads. Before, gpus=0 printed "inf %" and gpus=2147483647 overflowed a sum.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib_report.sh"

# set COLUMN of the first data record (single on 1 GPU: no quoted cell) to VALUE
edit() {
    awk -F, -v OFS=, -v col="$1" -v val="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
        NR == 2 { $c[col] = val } { print }' "$fixture" >"$tmp/x.csv"
}

for cv in gpus=0 gpus=2147483647 gpus=65537 gpus=-1 gpus=2.5 per_gpu_batch=0 per_gpu_batch=1000000 \
          micro_batches=70000 stages=0 nodes=0 gpus_per_node=99999 global_batch=0 global_batch=-256; do
    col=${cv%%=*} val=${cv#*=}
    edit "$col" "$val"
    for mode in report runs; do
        rm -rf "$tmp/out"
        if [ $mode = report ]; then "$report" report "$tmp/x.csv" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"
        else "$report" report "$tmp/x.csv" --runs >"$tmp/stdout" 2>"$tmp/stderr"; fi
        rc=$?
        [ $rc -eq 2 ] && [ ! -e "$tmp/out" ] && [ ! -s "$tmp/stdout" ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] &&
            grep -q "record 1, column $col: \"$val\" is not an integer from 1 to " "$tmp/stderr" && ok ||
            bad "$mode $col=$val: rc=$rc, $(cat "$tmp/stderr")"
    done
done

# a newline in the cell: refused, the cell not echoed (one stderr line)
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    NR == 2 { $c["gpus"] = "\"1\n!x\"" } { print }' "$fixture" >"$tmp/x.csv"
"$report" report "$tmp/x.csv" --out "$tmp/out" >/dev/null 2>"$tmp/stderr"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q 'column gpus: the cell is not an integer' "$tmp/stderr" &&
    ok || bad "gpus with a newline: rc=$rc, $(cat "$tmp/stderr")"

# the bounds themselves read: a single run on 65536 GPUs (its own configuration) and an untouched fixture
edit gpus 65536
"$report" report "$tmp/x.csv" --runs >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
[ $rc -eq 0 ] && grep -q '	65536	' "$tmp/stdout" && ok || bad "gpus=65536: rc=$rc, $(cat "$tmp/stderr")"
"$report" report "$fixture" --runs >/dev/null 2>&1 && ok || bad "the fixture is refused"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
