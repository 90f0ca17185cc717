#!/usr/bin/env bash
# gpu_kill.sh — a killed sweep loses at most the epoch in progress, the CSV stays well-formed, and --resume
# finishes the sweep: a real LeNet/MNIST sweep of two learning rates (8 epochs of 100 steps each) is killed with
# SIGKILL once the second run has written 2 rows; every record must then parse (Python's csv module where
# present, and `scaling tsv`) with the header's field count, and the rows must be whole epochs 1..k. Then
# --resume must skip the complete first run, re-run the second from epoch 1 under a new run_id (the partial rows
# stay), exit 0 and leave a well-formed file; a second --resume must add nothing.
set -u
bin=$1; root=$2
source "$(dirname "$0")/lib_gpu.sh"
gpu_require 1
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
csv=$tmp/kill.csv
EPOCHS=8
args=(--model lenet --dataset mnist --data-dir "$root/data/mnist" --batch 64 --lr "0.05,0.1" --epochs "$EPOCHS"
      --steps 100 --out "$csv")
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# well_formed: every record has the header's field count; prints the record count.
well_formed() {
    if command -v python3 >/dev/null; then
        python3 - "$csv" <<'EOF' || return 1
import csv, sys
with open(sys.argv[1], newline='') as f:
    rows = list(csv.reader(f, strict=True))
bad = [i + 1 for i, r in enumerate(rows) if len(r) != len(rows[0])]
if bad:
    print("records with the wrong field count: %s" % bad[:10]); sys.exit(1)
EOF
    fi
    "$bin" tsv "$csv" >"$tmp/rows.tsv" 2>"$tmp/csv.err" || return 1
    [ ! -s "$tmp/csv.err" ] || { cat "$tmp/csv.err"; return 1; }
}

# runs: one line per run, in file order: "lr run_id epochs-in-order statuses"
runs() {
    awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { r = $c["run_id"]; if (!(r in e)) { n++; id[n] = r; lr[r] = $c["lr"] }
          e[r] = e[r] (e[r] == "" ? "" : ",") $c["epoch"]; s[r] = s[r] (s[r] == "" ? "" : ",") $c["status"] }
        END { for (i = 1; i <= n; i++) print lr[id[i]], id[i], e[id[i]], s[id[i]] }' "$tmp/rows.tsv"
}

seq_to() { local k=$1 i s=1; for ((i = 2; i <= k; i++)); do s="$s,$i"; done; echo "$s"; }

# ---- run, and kill it once the second run has written 2 rows
"$bin" "${args[@]}" >"$tmp/run1.out" 2>"$tmp/run1.err" &
pid=$!
deadline=$((SECONDS + 600))
while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
    [ -f "$csv" ] && (($(wc -l <"$csv") >= 1 + EPOCHS + 2)) && break
    sleep 0.05
done
if ! kill -0 "$pid" 2>/dev/null; then
    bad "the sweep ended before it could be killed (make the epochs longer)"; cat "$tmp/run1.err"
    echo "$pass passed, $fail failed"; exit 1
fi
kill -9 "$pid"; wait "$pid" 2>/dev/null
echo "killed after $(($(wc -l <"$csv") - 1)) rows"
well_formed && ok || bad "CSV not well-formed after the kill"
runs >"$tmp/runs1"; cat "$tmp/runs1"
first=$(sed -n 1p "$tmp/runs1"); second=$(sed -n 2p "$tmp/runs1")
[ "$(wc -l <"$tmp/runs1")" -eq 2 ] && ok || bad "2 runs expected after the kill"
[ "$(echo "$first" | cut -d' ' -f3)" = "$(seq_to $EPOCHS)" ] && ok || bad "first run not complete: $first"
k=$(echo "$second" | cut -d' ' -f3 | tr ',' '\n' | wc -l)
[ "$k" -ge 2 ] && [ "$(echo "$second" | cut -d' ' -f3)" = "$(seq_to "$k")" ] && ok ||
    bad "second run: epochs not 1..k: $second"
[ "$k" -lt $EPOCHS ] && ok || bad "second run finished before the kill"

# ---- resume: skip the first, re-run the second from epoch 1
"$bin" "${args[@]}" --resume >"$tmp/run2.out" 2>"$tmp/run2.err"; rc=$?
[ $rc -eq 0 ] && ok || { bad "--resume exit $rc"; tail -5 "$tmp/run2.err"; }
grep -q 'skipped, complete in' "$tmp/run2.out" && ok || bad "--resume did not skip the complete run"
grep -q "stopped after epoch $k of $EPOCHS" "$tmp/run2.err" && ok || bad "--resume did not say it re-runs the cut run"
well_formed && ok || bad "CSV not well-formed after --resume"
runs >"$tmp/runs2"; cat "$tmp/runs2"
[ "$(wc -l <"$tmp/runs2")" -eq 3 ] && ok || bad "3 runs expected after --resume"
head -n 2 "$tmp/runs2" | cmp -s - "$tmp/runs1" && ok || bad "the rows before the kill changed"
third=$(sed -n 3p "$tmp/runs2")
[ "$(echo "$third" | cut -d' ' -f1)" = "$(echo "$second" | cut -d' ' -f1)" ] &&
    [ "$(echo "$third" | cut -d' ' -f2)" != "$(echo "$second" | cut -d' ' -f2)" ] &&
    [ "$(echo "$third" | cut -d' ' -f3)" = "$(seq_to $EPOCHS)" ] && ok ||
    bad "the re-run is not the cut configuration from epoch 1 under a new run_id: $third"
grep -q '# 2 run(s): 1 ok, 1 skipped, 0 diverged, 0 oom, 0 failed' "$tmp/run2.out" && ok ||
    bad "summary line: $(grep '^# 2 run' "$tmp/run2.out")"

# ---- resume again: nothing left to do
lines=$(wc -l <"$csv")
"$bin" "${args[@]}" --resume >"$tmp/run3.out" 2>"$tmp/run3.err"; rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <"$csv")" -eq "$lines" ] && grep -q '0 ok, 2 skipped' "$tmp/run3.out" && ok ||
    bad "second --resume: rc=$rc, $(($(wc -l <"$csv") - lines)) new rows"

summary
