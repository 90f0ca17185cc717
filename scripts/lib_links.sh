# shellcheck shell=bash
# lib_links.sh — one training configuration over several links, for slowlink.sh and twonode.sh: a run in one process,
# under `mpirun -np 2`, or on 2 nodes emulated on this host (scripts/node_emu.sh), plain or under Nsight Systems
# (one capture per process, summarised by lib_nsys.sh), and the tables that set the rows' compute, exposed and idle
# time beside what the kernels' own timestamps say. Sourced; the caller sets ROOT and defines die.
source "$ROOT/scripts/lib_nsys.sh"

# links_args DEFAULT_OUT [OUTDIR [DEBDIR]]: the scripts' arguments and environment: out (OUTDIR, else DEFAULT_OUT;
# created), DEBDIR, steps (STEPS, default 200) and bin (SCALING, else ./scaling, else build/scaling). Dies with one
# line on a bad STEPS, without the binary, or on a host with fewer than 2 GPUs.
links_args() {
    out=${2:-$1}
    DEBDIR=${3:-}
    steps=${STEPS:-200}
    [[ $steps =~ ^[1-9][0-9]*$ ]] || die "STEPS=$steps: not a positive integer"
    bin=$(scaling_bin)
    (($(nvidia-smi -L 2>/dev/null | grep -c '^GPU') >= 2)) || die "needs 2 GPUs (nvidia-smi lists fewer)"
    mkdir -p "$out"
}

# links_init: mpirun and its options (every NCCL_* of this environment to every rank, NCCL_NVLS_ENABLE=0 unless set,
# as scripts/study.sh; --bind-to none, as the README says for timings), nsys and its libraries where profiling
# (nsys set non-empty by the caller's NSYS_WANTED=1).
links_init() {
    export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
    mpirun=${MPIRUN:-mpirun}
    command -v "$mpirun" >/dev/null || die "no $mpirun on the PATH (apt-get install openmpi-bin)"
    mpi_opts=(--oversubscribe --bind-to none)
    [ "$(id -u)" -eq 0 ] && mpi_opts+=(--allow-run-as-root)
    # The names of the variables (compgen), not lines of `env`, where a value's newline could start a false one.
    for v in $(compgen -e | grep '^NCCL_[A-Z0-9_]*$'); do mpi_opts+=(-x "$v"); done
    nsys=""
    if [[ ${NSYS_WANTED:-0} == 1 ]]; then
        nsys=$(nsys_find)
        nsys_libs "$nsys" "${DEBDIR:-}"
    fi
}

# links_run NAME MODE [VAR=VALUE...] -- SCALING ARGS...: one run, MODE one (one process), mpi (mpirun -np 2) or emu
# (mpirun -np 2 on 2 emulated nodes), VAR=VALUE in every process's environment; its output in $out/NAME.log, its
# seconds printed. With LINKS_PROFILE=STEPS each process runs under nsys, capturing STEPS steps from step 0 of epoch
# 2 (the run must have them), and its summary lines go to $out/NAME.nsys (per process: "NAME rank R gpu D ...").
links_run() {
    local name=$1 mode=$2 vars=() x=() launch=() prof=() t0=$SECONDS rc=0
    shift 2
    while [[ $1 != -- ]]; do vars+=("$1"); x+=(-x "$1"); shift; done
    shift
    if [[ -n ${LINKS_PROFILE:-} ]]; then
        vars+=(SCALING_PROFILE_STEPS="$LINKS_PROFILE"); x+=(-x SCALING_PROFILE_STEPS="$LINKS_PROFILE")
        read -r -a prof <<<"$(nsys_capture_args)"
        prof=("$nsys" profile "${prof[@]}")     # nsys's path is one word, whatever its characters
        prof+=(-o "$out/$name.rank%q{OMPI_COMM_WORLD_RANK}")
        [[ $mode == one ]] && prof[${#prof[@]} - 1]="$out/$name.rank0"
    fi
    case $mode in
        one) launch=(env "${vars[@]}") ;;
        mpi) launch=("$mpirun" "${mpi_opts[@]}" "${x[@]}" -np 2) ;;
        emu) launch=("$mpirun" "${mpi_opts[@]}" "${x[@]}" -np 2 "$ROOT/scripts/node_emu.sh" 2) ;;
        *) die "links_run: mode $mode" ;;
    esac
    echo "+ ${launch[*]} ${prof[*]} $bin $*" >"$out/$name.log"
    "${launch[@]}" "${prof[@]}" "$bin" "$@" >>"$out/$name.log" 2>&1 || rc=$?
    echo "$name: exit $rc after $((SECONDS - t0)) s (log $out/$name.log)"
    ((rc == 0)) || { tail -n 20 "$out/$name.log"; return 1; }
    [[ -n ${LINKS_PROFILE:-} ]] || return 0
    : >"$out/$name.nsys"
    local rep r
    for rep in "$out/$name".rank*.nsys-rep; do
        [[ -f $rep ]] || die "$name: no report written (did the run reach epoch 2?)"
        r=${rep%.nsys-rep}; r=${r##*.rank}
        nsys_summarize "$nsys" "$rep" "$LINKS_PROFILE" "$name rank $r" "${rep%.nsys-rep}" >>"$out/$name.nsys"
    done
}

# links_rows NAME: the last breakdown line of NAME's log (its last epoch's) as "gpu step compute exposed idle" lines.
links_rows() {
    grep '^breakdown: ' "$out/$1.log" | tail -n 1 | tr ';' '\n' |
        sed -nE 's/.*(gpu|stage) ([0-9]+) step ([0-9.]+) = compute ([0-9.]+) \+ exposed ([0-9.]+) \+ idle ([0-9.]+).*/'\
'\2 \3 \4 \5 \6/p'
}

# links_nsys NAME G: the capture's "span kernels active wait idle nccl" of GPU G, "-" without one. GPU g of a
# one-process run is its device g (one report, every GPU in it); of an mpirun run, rank g (one report per rank).
links_nsys() {
    awk -v g="$2" '{ line[NR] = $0; rk[NR] = $3; dv[NR] = $5; if (!($3 in ranks)) { ranks[$3]; nr++ } }
        END { for (i = 1; i <= NR; i++) if ((nr > 1 ? rk[i] : dv[i]) == g) {
                  split(line[i], f, " "); print f[11], f[13], f[15], f[17], f[19], f[21]; exit }
              print "-" }' "$out/$1.nsys" 2>/dev/null || echo -
}

# links_table NAME...: per run and GPU, the rows' step = compute + exposed + idle (ms per step, the harness's CUDA
# events) beside, for profiled runs, the capture's span, kernel time, active time (kernels and gaps under 10 us),
# waits for NCCL, idle gaps and NCCL kernel time over the same steps (nsys_streams.awk).
links_table() {
    local name g step c x i
    printf '%-24s %3s | %8s %8s %8s %8s | %8s %8s %8s %8s %8s %8s\n' run gpu step compute exposed idle \
        span kernels active wait idle nccl
    for name in "$@"; do
        while read -r g step c x i; do
            printf '%-24s %3s | %8s %8s %8s %8s | %s\n' "$name" "$g" "$step" "$c" "$x" "$i" \
                "$(links_nsys "$name" "$g" | awk '{ for (k = 1; k <= NF; k++) printf "%8s ", $k }')"
        done < <(links_rows "$name")
    done
}
