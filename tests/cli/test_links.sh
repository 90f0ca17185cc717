#!/usr/bin/env bash
# test_links.sh — what slowlink.sh and twonode.sh compute, without a GPU (CI): scripts/nsys_streams.awk on a
# hand-made kernel trace (every figure worked out below), and scripts/lib_links.sh with stand-ins for mpirun, nsys
# and scaling: the command lines it builds for one process, mpirun and emulated nodes, plain and profiled, and the
# table that joins the rows' breakdown to each GPU's capture (by device in one process, by rank under mpirun, where
# emulated nodes all see their GPU as device 0).
set -u
bin=$1
ROOT=$(cd "$2" && pwd)
source "$(dirname "$0")/lib.sh"

# ---- nsys_streams.awk: 2 steps on GPU 1. Compute stream 7: a kernel 0-1 ms, one 1.002-2 ms (a 2 us gap: active),
# a 3 ms gap that ends 10 us after an NCCL kernel on stream 14 (1.5-4.99 ms: a wait), a kernel 5-6 ms with a graph
# branch 5.5-5.8 ms beside it (counted once), a 3 ms gap whose next kernel starts 2 us before the NCCL kernel of
# 6.5-9.002 ms ends (a kernel waiting for the SMs NCCL holds: a wait), a kernel 9-10 ms, a 2 ms gap with no NCCL
# kernel ending near its end (idle), a kernel 12-13 ms; stream 15 has a small kernel (not the compute stream).
# Per step: span 6.5, kernels (1 + 0.998 + 1 + 1 + 1) / 2, active + 0.002 / 2, wait 6 / 2, idle 2 / 2, nccl
# (3.49 + 2.502) / 2.
cat >"$tmp/trace.csv" <<'EOF'
"Start (ns)","Duration (ns)","CorrId","Device","Ctx","Strm","Name"
0,1000000,1,"NVIDIA H200 (1)",1,7,"conv, fwd"
1002000,998000,2,"NVIDIA H200 (1)",1,7,k2
1500000,3490000,3,"NVIDIA H200 (1)",1,14,ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096>)
5000000,1000000,4,"NVIDIA H200 (1)",1,7,k3
5500000,300000,5,"NVIDIA H200 (1)",1,7,k3b
6500000,2502000,6,"NVIDIA H200 (1)",1,14,ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096>)
9000000,1000000,7,"NVIDIA H200 (1)",1,7,k4
9100000,100000,8,"NVIDIA H200 (1)",1,15,k5
12000000,1000000,9,"NVIDIA H200 (1)",1,7,k6
EOF
got=$("$bin" tsv "$tmp/trace.csv" | awk -F'\t' -v steps=2 -v label="x rank 0" \
      -f "$ROOT/scripts/nsys_streams.awk")
want="x rank 0 gpu 1 stream 7 steps 2 span 6.500 kernels 2.499 active 2.500 wait 3.000 idle 1.000 nccl 2.996"
check "nsys_streams.awk: got \"$got\", want \"$want\"" $([ "$got" = "$want" ]; echo $?)
printf 'a,b\n1,2\n' | "$bin" tsv - | awk -F'\t' -v steps=2 -f "$ROOT/scripts/nsys_streams.awk" \
    >/dev/null 2>"$tmp/err"
check "nsys_streams.awk on a foreign CSV: exit $?, want 2 with a message" \
    $([ "$(grep -c 'no columns Start, Duration, Device, Strm, Name' "$tmp/err")" -eq 1 ]; echo $?)

# ---- lib_links.sh with stand-ins
mkdir -p "$tmp/bin" "$tmp/out"
cat >"$tmp/bin/mpirun" <<'EOF'
#!/usr/bin/env bash
# stand-in mpirun: records its arguments, runs the command as ranks 0 and 1 one after the other (-x VAR=VALUE set)
echo "mpirun $*" >>"$STANDIN_LOG"
vars=()
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
    case $1 in -x) [[ $2 == *=* ]] && vars+=("$2"); shift ;; -np | --bind-to) shift ;; esac
    shift
done
for r in 0 1; do
    env "${vars[@]}" OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=$r \
        OMPI_COMM_WORLD_LOCAL_SIZE=2 CUDA_VISIBLE_DEVICES=0,1 "$@" || exit
done
EOF
cat >"$tmp/bin/nsys" <<'EOF'
#!/usr/bin/env bash
# stand-in nsys: `profile ... -o OUT CMD...` records, writes OUT.nsys-rep (%q{OMPI_COMM_WORLD_RANK} expanded) naming
# the devices the process drives, and runs CMD; `stats ... --output PREFIX REP` writes PREFIX_cuda_gpu_trace.csv with
# one kernel of 2 ms every 3 ms, 3 steps, per device. Devices: an emulated node's only GPU is its device 0; a rank
# of plain mpirun drives device RANK; one process drives 0 and 1.
echo "nsys $*" >>"$STANDIN_LOG"
if [ "$1" = profile ]; then
    shift
    while [ "$1" != -o ]; do shift; done
    o=${2//%q\{OMPI_COMM_WORLD_RANK\}/${OMPI_COMM_WORLD_RANK:-0}}; shift 2
    if [ -n "${SCALING_NODE_ID:-}" ]; then echo 0; elif [ -n "${OMPI_COMM_WORLD_RANK:-}" ]; then
        echo "$OMPI_COMM_WORLD_RANK"; else echo 0 1; fi >"$o.nsys-rep"
    exec "$@"
fi
while [ "$1" != --output ]; do shift; done
{ echo '"Start (ns)","Duration (ns)","Device","Strm","Name"'
  for dev in $(cat "$3"); do
      for s in 0 1 2; do echo "$((s * 3000000)),2000000,\"NVIDIA H200 ($dev)\",7,k"; done
  done; } >"$2_cuda_gpu_trace.csv"
EOF
cat >"$tmp/bin/scaling" <<'EOF'
#!/usr/bin/env bash
# stand-in scaling: its arguments, then a breakdown line as the harness prints it (rank 0 only under mpirun)
echo "scaling $* nodeid=${SCALING_NODE_ID:-} net=${NCCL_NET:-} steps=${SCALING_PROFILE_STEPS:-}"
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] &&
    echo "breakdown: ms per step, mean of 3 timed steps: gpu 0 step 3.000 = compute 2.000 + exposed 0.500 +" \
         "idle 0.500 (row); gpu 1 step 3.000 = compute 1.900 + exposed 0.600 + idle 0.500" >&2
exit 0
EOF
chmod +x "$tmp/bin/"*
export STANDIN_LOG=$tmp/log PATH="$tmp/bin:$PATH"
(
    die() { echo "die: $*"; exit 2; }
    source "$ROOT/scripts/lib_links.sh"
    out=$tmp/out bin=$tmp/bin/scaling NSYS=$tmp/bin/nsys
    NSYS_WANTED=1 links_init
    links_run plain mpi -- --strategy nccl >/dev/null
    links_run one one A=1 -- --strategy naive >/dev/null
    LINKS_PROFILE=3 links_run emu emu NCCL_NET=Socket -- --strategy nccl >/dev/null
    LINKS_PROFILE=3 links_run oneprof one -- --strategy naive >/dev/null
    links_table emu oneprof plain >"$tmp/table"
) >"$tmp/lib.out" 2>&1
check "lib_links.sh: $(cat "$tmp/lib.out")" $([ ! -s "$tmp/lib.out" ]; echo $?)
grep -q "^mpirun .*--bind-to none.* -np 2 $tmp/bin/scaling --strategy nccl$" "$tmp/log"
check "plain mpirun run: $(grep -m1 '^mpirun' "$tmp/log")" $?
grep -q "^scaling --strategy naive nodeid= net= steps=$" "$tmp/out/one.log"
check "one-process run: $(grep '^scaling' "$tmp/out/one.log")" $?
k=$(grep -c "^scaling --strategy nccl nodeid=[^ ]*\.node[01] net=Socket steps=3$" "$tmp/out/emu.log")
check "emulated nodes under nsys: each rank on its node, NCCL_NET and the capture steps ($k of 2)" \
    $([ "$k" -eq 2 ]; echo $?)
grep -q "^nsys profile --trace=cuda,nvtx --cuda-graph-trace=node --capture-range=cudaProfilerApi" "$tmp/log"
check "nsys profile flags: $(grep -m1 '^nsys profile' "$tmp/log")" $?
check "one report per rank (emu), one for the one-process run" \
    $([ -f "$tmp/out/emu.rank0.nsys-rep" ] && [ -f "$tmp/out/emu.rank1.nsys-rep" ] &&
      [ -f "$tmp/out/oneprof.rank0.nsys-rep" ]; echo $?)
check "the kernel trace is removed after summing up" $(! ls "$tmp/out/"*cuda_gpu_trace* >/dev/null 2>&1; echo $?)
# 3 steps of one 2 ms kernel every 3 ms: span (8 ms) / 3, kernels 2, active 2, idle (2 gaps of 1 ms) / 3.
cat "$tmp/table"
row="1.900 0.600 0.500 | 2.667 2.000 2.000 0.000 0.667 0.000"
for n in emu oneprof; do
    got=$(awk -v n="$n" '$1 == n && $2 == 1 { $1 = $2 = $3 = $4 = ""; print }' "$tmp/table" | xargs)
    check "$n, GPU 1: \"$got\", want \"$row\"" $([ "$got" = "$row" ]; echo $?)
done
got=$(awk '$1 == "plain" && $2 == 0 { print $NF }' "$tmp/table")
check "a run without a capture shows \"-\": got \"$got\"" $([ "$got" = - ]; echo $?)

summary
