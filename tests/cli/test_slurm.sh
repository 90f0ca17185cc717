#!/usr/bin/env bash
# test_slurm.sh — scripts/slurm/scaling.sbatch without Slurm (CI): its syntax (bash -n), its #SBATCH lines (all
# before the first command, each "--option[=value]" of sbatch, the output folder present), and a dry run inside a
# stand-in job: a stand-in srun starts each task as Slurm would (SLURM_STEP_*, SLURM_PROCID, SLURM_LOCALID, PMIX_RANK
# under --mpi=pmix, one visible GPU under --gpus-per-task=1) and each task runs `test_dist_env --probe`, so
# strategies/dist_env.h must detect every task's rank, size, local rank and GPU. A layout with uneven nodes or fewer
# GPUs than tasks on a node is one line and exit 2, srun never called.
set -u
bin=$(realpath "$1"); root=$(cd "$2" && pwd)
sbatch=$root/scripts/slurm/scaling.sbatch
probe_bin=$(dirname "$bin")/tests/test_dist_env
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() {   # check "<what>" <condition exit status>
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}

bash -n "$sbatch"; check "bash -n $sbatch" $?
# sbatch reads #SBATCH lines up to the first line that is neither a comment nor blank.
bad=$(awk '/^#SBATCH/ { if (body) print "after the first command: " $0
                        else if ($0 !~ /^#SBATCH --[a-z][a-z-]*(=[^ ]+)?$/) print "not --option[=value]: " $0; next }
           /^[^#]/ && NF { body = 1 }' "$sbatch")
check "#SBATCH lines: $bad" $([ -z "$bad" ]; echo $?)
known=" job-name nodes ntasks ntasks-per-node gpus gpus-per-node gpus-per-task cpus-per-task time output error
        partition account exclusive mem qos constraint "
for o in $(sed -n 's/^#SBATCH --\([a-z-]*\).*/\1/p' "$sbatch"); do
    check "#SBATCH --$o: not an sbatch option this test knows" $(case $known in *" $o "*) echo 0 ;; *) echo 1 ;; esac)
done
dir=$(sed -n 's/^#SBATCH --output=\(.*\)\/[^/]*$/\1/p' "$sbatch")
check "#SBATCH --output's folder \"$dir\" exists in the checkout (Slurm does not create it)" \
    $([ -n "$dir" ] && [ -d "$root/$dir" ]; echo $?)
n=$(sed -n 's/^#SBATCH --nodes=//p' "$sbatch"); g=$(sed -n 's/^#SBATCH --ntasks-per-node=//p' "$sbatch")
check "default layout ${n:-?} nodes x ${g:-?} tasks, one GPU each" \
    $([ -n "$n" ] && [ -n "$g" ] && grep -qx '#SBATCH --gpus-per-task=1' "$sbatch"; echo $?)

# ---- a dry run in a stand-in job of 2 nodes x 2 GPUs
mkdir -p "$tmp/bin" "$tmp/submit/results"
cat >"$tmp/bin/srun" <<'EOF'
#!/usr/bin/env bash
# A stand-in srun: records its arguments, then starts the step's tasks one after another with the variables Slurm
# gives each (node by node, --output's %t replaced by the task id).
echo "srun $*" >>"$FAKE_SRUN_LOG"
pmix=0 bind=0 per=$SLURM_NTASKS out=/dev/stdout
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
    case $1 in
        --mpi=pmix) pmix=1 ;;
        --gpus-per-task=1) bind=1 ;;
        --ntasks-per-node=*) per=${1#*=} ;;
        --output=*) out=${1#*=} ;;
    esac
    shift
done
for ((t = 0; t < SLURM_NTASKS; t++)); do
    vars=(SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS="$SLURM_NTASKS" SLURM_PROCID=$t SLURM_LOCALID=$((t % per))
          SLURM_NODEID=$((t / per)))
    [ $pmix -eq 1 ] && vars+=(PMIX_RANK=$t)
    if [ $bind -eq 1 ]; then vars+=(CUDA_VISIBLE_DEVICES=0); else vars+=(CUDA_VISIBLE_DEVICES=0,1); fi
    env "${vars[@]}" "$@" >"${out//%t/$t}" 2>&1
done
EOF
cat >"$tmp/bin/probe" <<EOF
#!/bin/sh
echo "args \$*"
echo "nvls \${NCCL_NVLS_ENABLE:-unset}"
exec "$probe_bin" --probe
EOF
chmod +x "$tmp/bin/srun" "$tmp/bin/probe"
# job NAME [VAR=VALUE...]: runs the script as Slurm would in a job of 2 nodes x 2 tasks (VAR=VALUE override), from
# the submit folder; its output in $tmp/NAME.out, exit status in $rc, srun's arguments in $tmp/NAME.srun.
job() {
    local name=$1; shift
    (cd "$tmp/submit" && env -i PATH="$tmp/bin:$PATH" HOME="$tmp" SCALING="$tmp/bin/probe" \
        FAKE_SRUN_LOG="$tmp/$name.srun" SLURM_JOB_ID=4242 SLURM_NNODES=2 SLURM_NTASKS=4 \
        SLURM_TASKS_PER_NODE='2(x2)' SLURM_GPUS_ON_NODE=2 \
        SLURM_JOB_NODELIST='gpu[1-2]' SLURM_SUBMIT_DIR="$tmp/submit" SLURM_NTASKS_PER_NODE=2 "$@" \
        bash "$sbatch" --strategy nccl --model lenet >"$tmp/$name.out" 2>&1)
    rc=$?
}
job even
check "dry run: exit $rc" $rc
[ $rc -eq 0 ] || cat "$tmp/even.out"
args=$(cat "$tmp/even.srun" 2>/dev/null)
for a in --mpi=pmix --export=ALL --ntasks-per-node=2 --gpus-per-task=1 --kill-on-bad-exit=1 --output=results/slurm-4242/rank-%t.log; do
    check "srun called with $a: $args" $(case " $args " in *" $a "*) echo 0 ;; *) echo 1 ;; esac)
done
logs=$tmp/submit/results/slurm-4242
for t in 0 1 2 3; do
    want="launcher srun size 4 rank $t local $((t % 2)) multi 1 device 0"
    check "task $t: \"$(tail -n 1 "$logs/rank-$t.log" 2>/dev/null)\", want \"$want\"" \
        $(grep -qx "$want" "$logs/rank-$t.log" 2>/dev/null; echo $?)
done
check "task 0's arguments: $(grep '^args' "$logs/rank-0.log" 2>/dev/null)" \
    $(grep -qx 'args --out results/slurm-4242/scaling.csv --strategy nccl --model lenet' "$logs/rank-0.log"; echo $?)
check "NCCL_NVLS_ENABLE in the tasks: $(grep '^nvls' "$logs/rank-3.log" 2>/dev/null), want 0 by default" \
    $(grep -qx 'nvls 0' "$logs/rank-3.log" 2>/dev/null; echo $?)
job nvls NCCL_NVLS_ENABLE=1
check "NCCL_NVLS_ENABLE=1 of the submitting shell reaches the tasks" \
    $(grep -qx 'nvls 1' "$logs/rank-2.log" 2>/dev/null; echo $?)

# ---- layouts refused before srun
refused() {     # refused NAME NEEDLE
    check "$1: exit $rc, want 2" $([ $rc -eq 2 ]; echo $?)
    check "$1: $(wc -l <"$tmp/$1.out") lines, want 1 with \"$2\": $(cat "$tmp/$1.out")" \
        $([ "$(wc -l <"$tmp/$1.out")" -eq 1 ] && grep -qF -- "$2" "$tmp/$1.out"; echo $?)
    check "$1: srun was called" $([ ! -e "$tmp/$1.srun" ]; echo $?)
}
job uneven SLURM_NTASKS=3 SLURM_TASKS_PER_NODE=2,1
refused uneven "scaling.sbatch: 3 tasks on 2 nodes (2,1 per node): the node count does not divide the tasks"
job fewgpus SLURM_GPUS_ON_NODE=1
refused fewgpus "scaling.sbatch: 2 tasks per node but 1 GPU(s) on "
job nogres SLURM_GPUS_ON_NODE=
check "a Slurm that does not state the node's GPUs: exit $rc, srun called (scaling checks the GPUs itself)" \
    $([ $rc -eq 0 ] && [ -s "$tmp/nogres.srun" ]; echo $?)

# ---- a value of the environment is data: a word that bash arithmetic would run (a[$(cmd)], a[`cmd`]) is refused,
# and never runs
for v in 'SLURM_NNODES=a[$(touch PWNED)]' 'SLURM_TASKS_PER_NODE=a[`touch PWNED`]' 'SLURM_NTASKS=a[$(touch PWNED)]' \
         'SLURM_GPUS_ON_NODE=a[$(touch PWNED)]' 'SLURM_JOB_ID=1$(touch PWNED)'; do
    name=inject-${v%%=*}
    job "$name" "$v"
    refused "$name" "scaling.sbatch: ${v%%=*}=\"${v#*=}\": not a count"
    check "$name: the payload ran" $([ ! -e "$tmp/submit/PWNED" ]; echo $?)
    rm -f "$tmp/submit/PWNED"
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
