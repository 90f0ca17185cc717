#!/usr/bin/env bash
# gpt2_torch.sh — one call of one GPU: the whole GPT-2 against PyTorch. tools/torch/gpt2_export.py writes the initial
# weights, a batch of the corpus's tokens and PyTorch's 20 losses; build/tests/test_gpt2_torch runs the engine from
# them and compares: tiny in fp32 first (the layout, quickly), then small at 16 x 1024 in bf16 (the real test).
#
#   OUT=/some/dir tools/device/gpt2_torch.sh      (carry .carry: the offline bundle)
#
# $OUT afterwards: summary.txt, steps.tsv, torch_NAME.csv (PyTorch's losses), logs/ (test_NAME.log: the tables).
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OUT=$(cd "$OUT" && pwd)
device_begin --local-gpu
files=$(mktemp -d /tmp/gpt2_torch.XXXXXX)   # small's file is 0.5 GB: not in OUT

rc_of() { awk -v t="$1" '$1 == t { print $2 }' "$OUT/steps.tsv"; }

compare() {    # compare NAME EXPORT_ARGS...: PyTorch's file, then the engine's test on it
    local name=$1
    shift
    step "export_$name" 120 python3 tools/torch/gpt2_export.py "$@" --out "$files/$name.bin"
    grep -E "^(# gpt2_export|step,|[0-9]+,)" "$L/export_$name.log" >"$OUT/torch_$name.csv"
    if [ "$(rc_of "export_$name")" != 0 ]; then
        tail -n 20 "$L/export_$name.log" | tee -a "$say_log"
        say "$name: gpt2_export.py failed (rc $(rc_of "export_$name")): no comparison"
        return
    fi
    head -n 1 "$OUT/torch_$name.csv" | tee -a "$say_log"
    step "test_$name" 120 build/tests/test_gpt2_torch "$files/$name.bin"
    grep -E "^(ok|FAIL|SKIP|#)|passed" "$L/test_$name.log" | sed "s/^/$name: /" | tee -a "$say_log"
    say "$name: test_gpt2_torch rc $(rc_of "test_$name")"
}
compare tiny_fp32 --shape tiny --batch 8 --seq 64 --dtype fp32
compare small_bf16 --shape small --batch 16 --seq 1024 --dtype bf16
rm -rf "$files"
say "done"
