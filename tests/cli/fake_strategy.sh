#!/usr/bin/env bash
# fake_strategy.sh — a strategy is one file and one registry line: scaling_fake is the real driver linked with a
# registry that adds the test-only strategies fake and fake_ref (tests/host/fake_strategy.c, no GPU work). fake must
# appear in --help, be validated by its properties, write rows through the real driver, resume and fail like any
# other, and be reported by its properties (its speedup against fake_ref, the reference); the real command must not
# know it, and reports its rows saying so. Runs on CI (no GPU).
set -u
bin=$1; root=$2; real=${3:-}
source "$(dirname "$0")/lib.sh"
ok() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
# cell FILE ROW COLUMN: the cell of data row ROW (1-based) in the column named COLUMN (no quoted commas before it)
cell() { awk -F, -v r="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
                                       NR == r + 1 { print $k }' "$1"; }

"$bin" --help >"$tmp/help" 2>&1; rc=$?
ok '[ $rc -eq 0 ] && grep -q "^  fake  *test only: no GPU work" "$tmp/help"' "--help lists fake (rc $rc)"
ok '! grep -q "fake" <(sed -n "/^With no options at all/,\$p" "$tmp/help")' "the default study does not run a test strategy"

run=(--strategy fake --model lenet --dataset synthetic --epochs 2 --batch 256)
"$bin" "${run[@]}" --gpus 1,2 --out "$csv" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
ok '[ $rc -eq 0 ]' "fake sweep exit $rc: $(cat "$tmp/stderr")"
ok '[ "$(wc -l <"$csv")" -eq 5 ] && [ "$(grep -c "^run_id," "$csv")" -eq 1 ]' "one header and 4 rows: $(wc -l <"$csv")"
for r in 1 2 3 4; do
    ok '[ "$(cell "$csv" $r strategy)" = fake ] && [ "$(cell "$csv" $r status)" = ok ]' "row $r: strategy fake, ok"
    ok 'awk "BEGIN { exit !($(cell "$csv" $r epoch_s) > 0 && $(cell "$csv" $r steps) > 0) }"' "row $r: epoch_s, steps"
done
ok '[ "$(cell "$csv" 3 gpus)" = 2 ] && [ "$(cell "$csv" 3 replicas)" = identical ] && [ -z "$(cell "$csv" 1 replicas)" ]' \
   "the 2-GPU run's replicas column is the strategy's; the 1-GPU run's is empty"
ok '[ -z "$(cell "$csv" 1 grad_dtype)" ] && [ -z "$(cell "$csv" 1 nccl_transport)" ]' \
   "no reduction, no NCCL: grad_dtype and nccl_transport empty"
ok 'grep -q "^# 2 run(s): 2 ok" "$tmp/stdout"' "outcome line: $(grep '^# 2 run' "$tmp/stdout")"

# --resume: both configurations are complete, nothing is added
"$bin" "${run[@]}" --gpus 1,2 --out "$csv" --resume >"$tmp/stdout" 2>&1; rc=$?
ok '[ $rc -eq 0 ] && [ "$(wc -l <"$csv")" -eq 5 ] && [ "$(grep -c "skipped, complete" "$tmp/stdout")" -eq 2 ]' \
   "--resume skips both (rc $rc)"

# the report asks its properties: fake is not the reference, so alone it has no speedup, its own 1-GPU run included
"$bin" report "$csv" --out "$tmp/alone" >/dev/null 2>"$tmp/stderr"; rc=$?
md=$tmp/alone/REPORT.md
ok '[ $rc -eq 0 ] && grep -qx "#### fake" "$md"' "report of fake's rows (rc $rc): $(head -3 "$tmp/stderr")"
ok 'grep -q "^| 2 | 256 | 0.2 | 117 | 0.129 | — | — |" "$md"' "fake alone: no T1, no speedup: $(grep '^| 2 |' "$md")"
ok '! grep -q "does not know" "$md"' "scaling_fake knows fake"
# beside fake_ref (fake's formula, declared the reference): T1 = 234 steps x 1 ms; fake on 2 GPUs 117 x 1.1 ms;
# speedup 0.234 / 0.1287 = 1.82, efficiency 90.9 %
"$bin" --strategy fake_ref --model lenet --dataset synthetic --epochs 2 --batch 256 --gpus 1 --out "$csv" \
    >/dev/null 2>"$tmp/stderr"; rc=$?
ok '[ $rc -eq 0 ] && [ "$(cell "$csv" 5 strategy)" = fake_ref ]' "fake_ref sweep (rc $rc): $(cat "$tmp/stderr")"
"$bin" report "$csv" --out "$tmp/ref" >/dev/null 2>"$tmp/stderr"; rc=$?
md=$tmp/ref/REPORT.md
ok '[ $rc -eq 0 ] && grep -q "^| 2 | 256 | 0.2 | 117 | 0.129 | 1.82 | 90.9 % |" "$md"' \
   "fake against fake_ref (rc $rc): $(grep '^| 2 |' "$md")"
ok 'grep -q "take T1 from the strategy \`fake_ref\`" "$md"' "the report names the reference it used"
ok '[ "$(grep -n "^#### fake" "$md" | cut -d: -f2 | tr "\n" " ")" = "#### fake_ref #### fake " ]' \
   "the reference's table first: $(grep "^#### " "$md" | tr '\n' ' ')"
line=$(grep -A2 -x '"fake, 256/GPU"' "$tmp/ref/speedup-lenet-synthetic.dat" | tr '\n' ' ')
ok '[ "$line" = "\"fake, 256/GPU\" 1 1 100 2 1.81818 90.9091 " ]' \
   "fake's speedup line: $(tr '\n' ' ' <"$tmp/ref/speedup-lenet-synthetic.dat")"
if [ -n "$real" ]; then
    # the command does not know them: reported without properties (no reference: no speedup), said in one line
    "$real" report "$csv" --out "$tmp/foreign" >/dev/null 2>"$tmp/stderr"; rc=$?
    md=$tmp/foreign/REPORT.md
    ok '[ $rc -eq 0 ] && [ "$(grep -c "does not know" "$md")" -eq 1 ] &&
        grep -q "^- strategies this binary does not know: fake, fake_ref (" "$md"' \
       "the command reports strategies it does not know (rc $rc): $(grep "does not know" "$md")"
    ok 'grep -q "^| 2 | 256 | 0.2 | 117 | 0.129 | — | — |" "$md"' "no reference known: no speedup"
fi

# a setup failure is a row, and the sweep goes on to the next configuration
rm -f "$csv"
"$bin" "${run[@]}" --batch 70000,256 --epochs 1 --out "$csv" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
ok '[ $rc -eq 0 ] && [ "$(cell "$csv" 1 status)" = oom ] && [ "$(cell "$csv" 1 epoch)" = 0 ]' "oom row (rc $rc)"
ok '[ "$(cell "$csv" 1 reason)" = "fake: out of memory (global batch 70000 over 65536)" ]' "oom reason: $(cell "$csv" 1 reason)"
ok '[ "$(cell "$csv" 2 status)" = ok ] && [ "$(cell "$csv" 2 global_batch)" = 256 ]' "the next configuration ran"

# its properties decide what applies
expect_error '--grad-dtype bf16: strategy fake has no gradient reduction (bf16 gradients apply to: naive, nccl)' \
    "${run[@]}" --grad-dtype bf16
expect_error '--micro-batches applies to --strategy pipeline only (strategy is fake)' "${run[@]}" --micro-batches 2

# the command itself has no such strategy
if [ -n "$real" ]; then
    bin=$real expect_error 'unknown strategy "fake" (valid: single, naive, nccl, pipeline)' "${run[@]}"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
