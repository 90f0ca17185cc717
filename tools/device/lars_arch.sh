#!/usr/bin/env bash
# lars_arch.sh — one call of one GPU: why LARS's test accuracy sits at 10 % while its training accuracy climbs (the
# harness and tools/torch/torch_lars.py at batch 4096, rate 10, 4 and 10 epochs: test accuracy with batch norm's
# running statistics and, in PyTorch, with each test batch's own); the default build's GPU code per architecture
# (cuobjdump --list-elf, built beside the runs); gpu_memcheck with what is left.
#
#   OUT=/some/dir tools/device/lars_arch.sh
#
# $OUT afterwards: summary.txt, lars.csv (the harness's rows), torch_lars_*.csv, logs.tar.gz.
set -uo pipefail
: "${OUT:?set OUT to the directory that comes back}"
budget=${LARS_BUDGET_S:-560}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
device_begin --local-gpu
csv_root=$(sed -n 's/^CSV_ROOT:[A-Z]*=//p' build/CMakeCache.txt)
say "the default build (every architecture) in build-all, in the background"
( cmake -S . -B build-all -DCMAKE_BUILD_TYPE=Release ${csv_root:+"-DCSV_ROOT=$csv_root"} >"$L/build_all.log" 2>&1 &&
  nice cmake --build build-all -j12 --target scaling >>"$L/build_all.log" 2>&1; echo "rc $?" >>"$L/build_all.log" ) &
bpid=$!

base=(--model resnet18 --dataset fashion-mnist --math bf16 --lr-schedule cosine --warmup-epochs 1 --batch 4096
      --optimizer lars --lr 10 --lr-scaling none --seed 1 --out "$OUT/lars.csv")
for e in 4 10; do
    say "harness: LARS 4096, rate 10, $e epochs"
    timeout 150 ./scaling "${base[@]}" --epochs "$e" >"$L/lars_$e.out" 2>&1
    say "torch_lars.py: the same, $e epochs"
    timeout 150 python3 tools/torch/torch_lars.py data/fashion-mnist "$e" 10 >"$OUT/torch_lars_$e.csv" 2>"$L/torch_$e.err"
    cat "$OUT/torch_lars_$e.csv" | tee -a "$say_log"
done
# the rows through `scaling tsv` (quoted cells may hold commas), columns by their header names
./scaling tsv "$OUT/lars.csv" |
    awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print "lr_epochs,epoch,lr_now,train_acc,test_acc"; next }
                { print $c["lr_epochs"] "," $c["epoch"] "," $c["lr_now"] "," $c["train_acc"] "," $c["test_acc"] }' |
    tee -a "$say_log"

say "waiting for the default build"
wait $bpid
tail -n 2 "$L/build_all.log" | tee -a "$say_log"
if [ -x build-all/scaling ]; then
    build-all/scaling --version | tee -a "$say_log"
    { echo "cuobjdump --list-elf build-all/scaling (architectures, files per architecture):"
      cuobjdump --list-elf build-all/scaling | grep -o 'sm_[0-9a-z]*' | sort | uniq -c
      echo "cuobjdump --list-ptx build-all/scaling:"
      cuobjdump --list-ptx build-all/scaling | grep -o 'sm_[0-9a-z]*' | sort | uniq -c; } 2>&1 | tee -a "$say_log"
fi
if (($(left) > 100)); then
    say "gpu_memcheck (limit $(($(left) - 20)) s)"
    timeout $(($(left) - 20)) ctest --test-dir build -R gpu_memcheck --output-on-failure >"$L/memcheck.log" 2>&1
    say "gpu_memcheck: exit $?"
    grep -E "tests passed|Failed|Timeout|ERROR SUMMARY" "$L/memcheck.log" | tail -n 5 | tee -a "$say_log"
fi
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
say "done"
