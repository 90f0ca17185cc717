#!/usr/bin/env bash
# test_projection.sh — the projection past this host of `scaling report` (report/project.c) on the study fixture,
# against values computed by hand; its omission lines; and its options' bad input (one line, exit 2, nothing
# written). gnuplot is not needed: without it the projection is written without its figure.
#
# Hand computation. The fixture (tests/fixtures/study.csv, see test_fixture.c): single 256/GPU steady epochs 2.80,
# 2.82 s of 234 steps -> median step t1 = (11.9658 + 12.0513) / 2 = 12.00855 ms; nccl rows reduce S = 44696872 B
# and expose 0.6 of their all-reduce time -> phi = 0.600 (its 2-node run too, so past one node as well); the
# benchmark fits alpha_i = 8 us, 1/beta_i = 150 GB/s (S beta_i = 297.97915 us). Options --net-latency-us 14 --net-gbs 50: alpha_e = 14 us, 1/beta_e = 50 GB/s.
#   n = 8, one node: ring = 2*7*8 + 2*7/8*297.97915 = 112 + 521.4635 = 633.46 us; tree = 2*7*8 + 2*297.97915
#     = 707.96 us -> ring; exposed 0.6 * 0.63346 = 0.380 ms; step 12.389 ms; epoch 234/8 * 12.38863 ms = 0.3624 s;
#     speedup 8 * 12.00855 / 12.38863 = 7.75; efficiency 96.9 %
#   n = 64 = 8 nodes x 8: beta = max(1/150, 1/(8*50)) per GB = beta_i.
#     ring = (2*63 - 2*7)*8 + 2*7*14 + 2*63/64*297.97915 = 896 + 196 + 586.6489 = 1678.6 us
#     tree = 2*(7*8 + log2(8)*14) + 2*297.97915 = 196 + 595.9583 = 792.0 us -> tree
#     exposed 0.475 ms; step 12.484 ms; epoch 234/64 * 12.48372 ms = 0.0456 s; speedup 61.56; efficiency 96.2 %
#   n = 1024 = 128 x 8: ring = (2046 - 254)*8 + 254*14 + 2*1023/1024*297.97915 = 17892 + 595.376 = 18487.4 us;
#     tree = 2*(56 + 7*14) + 595.958 = 904.0 us; step 12.00855 + 0.6 * 0.90396 = 12.551 ms; epoch 234/1024 * 12.551
#     ms = 0.0029 s (global batch 262144 > the training set: marked); speedup 979.75; efficiency 95.7 %
#   --gpus-per-node 4 --net-gbs 10, n = 16 = 4 x 4: beta = max(1/150, 1/(4*10)) = 1/40 ns/B: S beta = 1117.4218 us;
#     ring = (30 - 6)*8 + 6*14 + 2*15/16*1117.4218 = 276 + 2095.166 = 2371.2 us; tree = 2*(3*8 + 2*14) + 2234.844 =
#     2338.8 us -> tree; exposed 1.403 ms; step 13.412 ms; epoch 234/16 * 13.41186 = 0.1961 s; speedup 14.33; 89.5 %
#   pipeline, batch 1024, best at p = 4 is M = 8 (steady 1.024, 1.044 s of 58 steps; bubble 3/11 + 0.04): stage 2's
#     busy times 17.6552 and 18.0000 ms x 0.687273 -> 12.134, 12.371, median max B = 12.2525 ms; p' = 8 stages:
#     step = 15/8 * sum(B)/8 * max(B)/mean(B) = 15/8 * 12.2525 * 4/8 = 11.487 ms; epoch 58 * 11.48672 = 0.666 s;
#     t1 (single, 1024: 2.44, 2.46 s of 58 steps) = 42.2414 ms -> speedup 3.68, efficiency 46.0 %
# Errors at the measured points: nccl 4 GPUs 256/GPU: 58 * (12.00855 + 0.6 * (48 + 1.5 * 297.97915) us) = 0.714 s
#   against 0.750 s: -4.8 %, exposed 0.321 measured / 0.297 model; pipeline p = 4, M = 8: 58 * 11/8 * 12.2525 ms =
#   0.977 s against 1.034 s: -5.5 %.
# Emulated two nodes (a copy of the fixture with the columns idle_ms, nodes, gpus_per_node and nccl_transport, plus
# nccl 2 x 1 GPU at 256/GPU over sockets: steady 3.03, 3.05 s of 117 steps, all-reduce 14.958957 ms of which 13.463
# exposed) and a network benchmark following 2 alpha + S beta with alpha_e = 30 us, 1/beta_e = 3 GB/s, which the fit
# must give back. Past one node phi is the runs across nodes' (the fixture's own 2-node run: exposed 1.62767 of
# 2.71278 ms, and the socket run): (13.463 + 1.62767) / (14.958957 + 2.71278) = 0.853944. The model's all-reduce at
# 2 nodes x 1 is 2*30 + 44696872/3000 = 14958.957 us, exposed 0.853944 * 14.958957 = 12.774 ms, epoch 117 * (12.00855
# + 12.774109) ms = 2.900 s against 3.040 s (-4.6 %) and 2.655 s (+9.2 %). At n = 16 = 2 x 8: beta = max(1/150,
# 1/(8*3)) = 1/24 ns/B (S beta = 1862.3697 us): ring = 28*8 + 2*30 + 1.875*1862.3697 = 3775.9 us; tree = 2*(56 + 30)
# + 3724.739 = 3896.7 us.
set -u
root=$2
report=$1
source "$(dirname "$0")/lib.sh"      # tmp (removed on exit), pass, fail
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
has() { grep -qF -- "$2" "$1" && ok || bad "$1 lacks: $2"; }
lacks() { grep -qF -- "$2" "$1" && bad "$1 has: $2" || ok; }
run_report() {   # run_report OUTDIR args...: scaling report must succeed
    local dir=$1; shift
    "$report" report "$@" --out "$dir" >/dev/null 2>"$tmp/stderr" && ok || { bad "scaling report $* failed"; cat "$tmp/stderr"; }
}
# The projection section of a REPORT.md (the report's own model line says "model line omitted" elsewhere).
proj() { sed -n '/^## Projection past this host$/,$p' "$1/REPORT.md" >"$1/proj.md"; echo "$1/proj.md"; }

cp "$root/tests/fixtures/study.csv" "$root/tests/fixtures/study_allreduce.csv" "$tmp/"

# ---- the fixture with the benchmark beside it and a given network
run_report "$tmp/a" "$tmp/study.csv" --net-latency-us 14 --net-gbs 50
p=$(proj "$tmp/a")
has "$p" "| intra-node | 8.00 | 150.0 | ring fit \`nccl (Ring)\` to \`$tmp/study_allreduce.csv\` (above) |"
has "$p" "| inter-node, per GPU | 14.00 | 50.0 | α from --net-latency-us, bandwidth from --net-gbs |"
has "$p" "S = 44696872 B per step, t₁ = 12.009 ms (\`single\`, 234 steps per epoch), φ = 0.600 on one node"
# the 128/GPU line has no run across nodes: past one node no overlap is assumed (phi = 1), and the report says so
has "$p" "φ = 1.000 across nodes (no nccl run across nodes in the CSV: no overlap assumed)"
has "$p" "| 8 | 1 × 8 | 0.633 | 0.708 | ring | 0.380 | 12.389 | 0.3624 | 7.75 | 96.9 % |"
has "$p" "| 64 | 8 × 8 | 1.679 | 0.792 | tree | 0.475 | 12.484 | 0.0456 | 61.56 | 96.2 % |"
has "$p" "| 1024 | 128 × 8 | 18.487 | 0.904 | tree | 0.542 | 12.551 | 0.0029 † | 979.75 | 95.7 % |"
has "$p" "| 8 | 46.7 % | 11.487 | 0.666 | 3.68 | 46.0 % |"
has "$p" "| single, 256/GPU, tf32 | 1 | 1 × 1 | 2.810 | 2.810 | +0.0 % | — | — |"
has "$p" "| nccl, 256/GPU, tf32 | 4 | 1 × 4 | 0.750 | 0.714 | -4.8 % | 0.321 / 0.297 | 0.542 |"
has "$p" "| pipeline, batch 1024, tf32, gpipe, M = 8 | 4 | 1 × 4 | 1.034 | 0.977 | -5.5 % | — | — |"
lacks "$p" "projection omitted"
for d in projection projection_measured; do
    [ -s "$tmp/a/$d-resnet18-fashion-mnist.dat" ] && ok || bad "$d-resnet18-fashion-mnist.dat missing"
done
grep -qx '"nccl 256/GPU tf32, φ 0.60, 0.60 across nodes"' "$tmp/a/projection-resnet18-fashion-mnist.dat" &&
    grep -qx '64 61.5639 96.1936' "$tmp/a/projection-resnet18-fashion-mnist.dat" && ok ||
    bad "projection data: the 256/GPU curve's title or its 64-GPU point (61.56x, 96.2 %) missing"
if command -v gnuplot >/dev/null; then
    [ -s "$tmp/a/projection-resnet18-fashion-mnist.png" ] && [ -s "$tmp/a/projection-resnet18-fashion-mnist.svg" ] &&
        ok || bad "projection figure missing"
    has "$p" "![projected speedup and efficiency, 1 to 1024 GPUs](projection-resnet18-fashion-mnist.png)"
else
    lacks "$p" "projection-resnet18-fashion-mnist.png"
fi

# ---- another node size, and a network slower than NVLink per node: the bandwidth term takes the network's
run_report "$tmp/b" "$tmp/study.csv" --gpus-per-node 4 --net-latency-us=14 --net-gbs=10
p=$(proj "$tmp/b")
has "$p" "| 16 | 4 × 4 | 2.371 | 2.339 | tree | 1.403 | 13.412 | 0.1961 | 14.33 | 89.5 % |"
lacks "$p" "| 8 | 1 × 8 |"

# ---- the emulated two-node run and its network benchmark (columns of the newer CSV)
awk -F, -v OFS=, '
    # The fixture has the columns of this version (nodes, gpus_per_node, nccl_transport, idle_ms): the emulated run
    # is a copy of the one-node nccl run on 2 GPUs at 256 per GPU (seed 2), over
    # NCCL'"'"'s socket transport. Its rows have no quoted cells (split is empty), so splitting on commas is safe.
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    { print }
    $c["strategy"] != "nccl" || $c["gpus"] != 2 || $c["per_gpu_batch"] != 256 || $c["lr"] != "0.2" ||
        $c["nodes"] != 1 { next }
    {
        $c["run_id"] = $c["run_id"] "E"; $c["seed"] = 2
        $c["epoch_s"] = $c["phase"] == "warmup" ? 4.1 : $c["epoch"] == 2 ? 3.03 : 3.05
        $c["step_ms"] = $c["epoch_s"] / 117 * 1e3; $c["images_per_s"] = 117 * 512 / $c["epoch_s"]
        $c["comm_ms"] = 14.958957; $c["exposed_comm_ms"] = 13.463; $c["idle_ms"] = 0.5
        $c["nodes"] = 2; $c["gpus_per_node"] = 1; $c["nccl_transport"] = "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1"
        print
    }' "$tmp/study.csv" >"$tmp/emu.csv"
cp "$tmp/study_allreduce.csv" "$tmp/emu_allreduce.csv"
{
    head -n 1 "$tmp/study_allreduce.csv"
    for s in 4096 65536 1048576 16777216 268435456; do
        awk -v s=$s 'BEGIN { printf "nccl,2,Ring,%d,%d,float,sum,%.4f,0,0,0,", s, s / 4, 60 + s / 3000 }'
        echo "NVIDIA H200,580.82.07,13.0,2.27.7,h200-node-3,1a2b3c4,2026-01-05T08:50:00Z"
    done
} >"$tmp/emu_allreduce_net.csv"
run_report "$tmp/c" "$tmp/emu.csv"
p=$(proj "$tmp/c")
has "$p" "| inter-node, per GPU | 30.00 | 3.0 | ring fit to \`$tmp/emu_allreduce_net.csv\` |"
emu="nccl, 256/GPU, tf32, across nodes (\`NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1\`)"
has "$p" "| $emu | 2 | 2 × 1 | 3.040 | 2.900 | -4.6 % | 13.463 / 12.774 | 0.500 |"
has "$p" "| nccl, 256/GPU, tf32, across nodes (\`NCCL_HOSTID=h200-node-3.node0|h200-node-3.node1\`) | 2 | 2 × 1 | 2.655 | 2.900 | +9.2 % |"
has "$p" "| nccl, 256/GPU, tf32 | 2 | 1 × 2 | 1.481 |"
has "$p" "φ = 0.600 on one node (exposed / all-reduce time over 8 nccl run(s) on this host), φ = 0.854 across nodes (over 2 nccl run(s) across nodes)"
has "$p" "| 16 | 2 × 8 | 3.776 | 3.897 | ring |"
run_report "$tmp/d" "$tmp/emu.csv" --net-gbs 50
has "$(proj "$tmp/d")" \
    "| inter-node, per GPU | 30.00 | 50.0 | ring fit to \`$tmp/emu_allreduce_net.csv\`, bandwidth from --net-gbs |"

# ---- omitted: no benchmark; a benchmark without nccl rows; no inter-node path (one node only)
cp "$tmp/study.csv" "$tmp/bare.csv"
run_report "$tmp/e" "$tmp/bare.csv"
p=$(proj "$tmp/e")
has "$p" "no all-reduce benchmark: projection omitted"
[ "$(wc -l <"$p")" -eq 3 ] && ok || bad "the omitted projection is more than its heading and one line"
grep -v '^nccl,' "$tmp/study_allreduce.csv" >"$tmp/naive_only.csv"
run_report "$tmp/f" "$tmp/study.csv" --allreduce "$tmp/naive_only.csv"
has "$(proj "$tmp/f")" "\`$tmp/naive_only.csv\`: no nccl rows that fit α ≥ 0 and β > 0: projection omitted."
run_report "$tmp/g" "$tmp/study.csv"
p=$(proj "$tmp/g")
has "$p" "data parallelism projected on one node only, up to 8 GPUs."
has "$p" "| 8 | 1 × 8 | 0.633 | 0.708 | ring | 0.380 | 12.389 | 0.3624 | 7.75 | 96.9 % |"
lacks "$p" "| 16 | 2 × 8 |"

# ---- no `single` rows (twonode.sh's first CSV): nothing to draw, one line, no figure (gnuplot failed on the empty
# curve where installed)
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "strategy") c = i } NR == 1 || $c != "single"' \
    "$tmp/study.csv" >"$tmp/nosingle.csv"
cp "$tmp/study_allreduce.csv" "$tmp/nosingle_allreduce.csv"
run_report "$tmp/h" "$tmp/nosingle.csv"
p=$(proj "$tmp/h")
has "$p" "Not projected: no \`single\` run at the batch and math of any nccl or pipeline run"
lacks "$p" "![projected speedup"
ls "$tmp/h"/projection-* >/dev/null 2>&1 && bad "a projection figure without a curve" || ok

# ---- time to target at GPU counts that ran nothing: every run given a 92 % target reached in its second epoch, and one
# recipe (the linear rule from 0.1: lr_base_batch = global batch x 0.1 / lr), so the batch curve's steps fall as about
# 1/B (2 epochs of 60000/B steps each): the nccl line's table gains the steps of the curve's fit at 256 x G times the
# projected step, inside the batches fitted, and a dash past them.
awk -F, -v OFS=, '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print; next }
    {
        base = $c["global_batch"] * 0.1 / $c["lr"]
        if (base != int(base) || base < 1) next
        $c["lr_scaling"] = "linear"; $c["lr_base_batch"] = base; $c["target_acc"] = 0.92
        $c["test_acc"] = $c["epoch"] >= 2 ? 0.93 : 0.5
        print
    }' "$tmp/study.csv" >"$tmp/target.csv"
cp "$tmp/study_allreduce.csv" "$tmp/target_allreduce.csv"
run_report "$tmp/t" "$tmp/target.csv"
p=$(proj "$tmp/t")
has "$p" "To target: the steps of the batch curve's fit at the global batch (256/GPU × GPUs, within the batches fitted"
# the 2-GPU row of the 256/GPU line: its step (ms) times the fit's steps at 512, about 2 x 60000 / 512 = 234.4
awk -F'|' -v want=234.375 '
    /^#### nccl, 256\/GPU/ { line = 1; next } /^#### / { line = 0 }
    line && $2 + 0 == 2 && $3 ~ /1 × 2/ {
        split($12, t, " "); steps = t[1] * 1000 / $8
        found = 1; exit !(steps > 0.97 * want && steps < 1.03 * want)
    }
    END { if (!found) exit 1 }' "$p" && ok || bad "the 2-GPU row's time to target is not the fit's steps at 512 x its step"
# the 512/GPU line at 8 GPUs: a global batch of 4096, past the largest fitted (2048): a dash
awk '/^#### nccl, 512\/GPU/ { line = 1; next } /^#### / { line = 0 } line && /^\| 8 \| 1 × 8 \|/ { print }' "$p" |
    grep -q ' — |$' && ok || bad "past the batches fitted: no dash at 512/GPU x 8"

# ---- bad input: one line naming the option, exit 2, nothing written (no folder; an earlier report untouched)
cp "$tmp/a/REPORT.md" "$tmp/kept.md"
for args in "--net-gbs 0" "--net-gbs -1" "--net-gbs abc" "--net-latency-us x" "--net-gbs=0" "--net-latency-us 1e999" \
            "--gpus-per-node 6" "--gpus-per-node 0" "--gpus-per-node 08" "--net-gbs 50"; do
    opt=${args%% *}; opt=${opt%%=*}
    for dir in "$tmp/none" "$tmp/a"; do
        # shellcheck disable=SC2086
        "$report" report "$tmp/study.csv" --out "$dir" $args >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
        if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -qF -- "$opt" "$tmp/stderr" &&
           [ ! -s "$tmp/stdout" ] && [ ! -e "$tmp/none" ] && cmp -s "$tmp/kept.md" "$tmp/a/REPORT.md"; then
            ok
        else
            bad "scaling report $args --out $dir: rc=$rc, stderr: $(cat "$tmp/stderr")"
        fi
    done
done
# the same options well formed are taken (the checks above do not refuse everything)
run_report "$tmp/h" "$tmp/study.csv" --net-gbs .5 --net-latency-us 1e1 --gpus-per-node 16
has "$(proj "$tmp/h")" "| inter-node, per GPU | 10.00 | 0.5 |"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
