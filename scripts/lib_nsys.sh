# shellcheck shell=bash
# lib_nsys.sh — Nsight Systems for the scripts that profile (profile.sh, slowlink.sh, twonode.sh): finding nsys and
# the libraries the Nsight Compute copy of it lacks, profiling every rank of an mpirun job, and the per-GPU summary
# of a capture (scripts/nsys_streams.awk). Sourced; the caller defines ROOT and die (its arguments as one line on
# stderr, exit 2).

# scaling_bin: prints the binary to run: $SCALING, else ./scaling, else build/scaling; dies without one.
scaling_bin() {
    local c bin=${SCALING:-}
    for c in "$ROOT/scaling" "$ROOT/build/scaling"; do [[ -z $bin && -x $c ]] && bin=$c; done
    [[ -n $bin && -x $bin ]] || die "scaling binary not found (scripts/setup.sh builds it; or set SCALING)"
    echo "$bin"
}

# nsys_find: prints the nsys to use: $NSYS, the PATH, then where CUDA, Nsight Systems and Nsight Compute install it
# (newest version last).
nsys_find() {
    local c found=""
    if [[ -n ${NSYS:-} ]]; then
        [[ -x $NSYS && ! -d $NSYS ]] || die "NSYS=$NSYS: not an executable"
        echo "$NSYS"; return
    fi
    if c=$(command -v nsys); then echo "$c"; return; fi
    shopt -s nullglob
    for c in /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
             /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys; do
        [[ -x $c ]] && found=$c
    done
    shopt -u nullglob
    [[ -n $found ]] || die "nsys not found: not on the PATH, NSYS not set, none under /usr/local/cuda or /opt/nvidia;" \
        "install Nsight Systems or set NSYS=/path/to/nsys"
    echo "$found"
}

# nsys_libs NSYS [DEBDIR]: puts libdw.so.1 and libelf.so.1 on LD_LIBRARY_PATH for nsys: the libdw1_*.deb and
# libelf1_*.deb in DEBDIR are unpacked (dpkg -x) into /tmp/dw; .deps/prefix (unpacked there by hand, README:
# Profiling) and /tmp/dw are used where present. Dies with one line when nsys still cannot start.
nsys_libs() {
    local nsys=$1 debs=${2:-} p d missing
    if [[ -n $debs ]]; then
        [[ -d $debs ]] || die "$debs: no such folder (want the libdw1 and libelf1 .debs)"
        shopt -s nullglob
        local pkgs=("$debs"/libdw1_*.deb "$debs"/libelf1_*.deb)
        shopt -u nullglob
        ((${#pkgs[@]} > 0)) || die "$debs: no libdw1_*.deb or libelf1_*.deb in it"
        for p in "${pkgs[@]}"; do dpkg -x "$p" /tmp/dw || die "dpkg -x $p /tmp/dw failed"; done
    fi
    for d in "$ROOT/.deps/prefix/usr/lib/x86_64-linux-gnu" /tmp/dw/usr/lib/x86_64-linux-gnu; do
        if [[ -d $d ]]; then export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
    done
    if missing=$(ldd "$nsys" 2>/dev/null | awk '/not found/ { printf "%s%s", sep, $1; sep = ", " }') &&
        [[ -n $missing ]]; then
        die "$nsys cannot start: missing $missing (unpack libdw1 and libelf1 into .deps/prefix, or give their" \
            ".debs; README: Profiling)"
    fi
}

# nsys_capture_args: how every capture here is taken: the steps between the harness's cudaProfilerStart and Stop
# (SCALING_PROFILE_STEPS), CUDA and NVTX, each kernel of a CUDA graph on its own. --trace-fork-before-exec: a
# configuration runs in a child process forked by scaling (doc/faults.md), without exec.
nsys_capture_args() {
    echo --trace=cuda,nvtx --cuda-graph-trace=node --capture-range=cudaProfilerApi --capture-range-end=stop \
        --force-overwrite=true --trace-fork-before-exec=true
}

# nsys_summarize NSYS REPORT STEPS LABEL OUTPREFIX: the capture's summaries beside it (OUTPREFIX_cuda_gpu_kern_sum.csv,
# OUTPREFIX_nvtx_sum.csv, small) and one line per GPU from nsys_streams.awk on stdout; the kernel trace it reads
# (large) and the SQLite export are removed again.
nsys_summarize() {
    local nsys=$1 rep=$2 steps=$3 label=$4 prefix=$5 trace
    "$nsys" stats --force-export=true --format csv --report cuda_gpu_kern_sum --report nvtx_sum \
        --report cuda_gpu_trace --output "$prefix" "$rep" >/dev/null 2>"$prefix.stats.err" ||
        die "nsys stats on $rep failed: $(tail -n 1 "$prefix.stats.err")"
    trace=$(ls "$prefix"*cuda_gpu_trace*.csv 2>/dev/null | head -n 1)
    [[ -n $trace ]] || die "nsys stats wrote no cuda_gpu_trace CSV for $rep"
    # The capture closes at the epoch's end too: an epoch shorter than STEPS leaves fewer steps in it, counted
    # from the harness's NVTX step ranges where the summary has them.
    local nvtx captured
    nvtx=$(ls "$prefix"*nvtx_sum*.csv 2>/dev/null | head -n 1)
    if [[ -n $nvtx ]]; then
        captured=$(grep -Ec ',scaling:step [0-9]+"?$' "$nvtx" || true)
        ((captured > 0 && captured < steps)) && steps=$captured
    fi
    "$(scaling_bin)" tsv "$trace" |
        awk -F'\t' -v steps="$steps" -v label="$label" -f "$ROOT/scripts/nsys_streams.awk"
    rm -f "$trace" "${rep%.nsys-rep}.sqlite" "$prefix.stats.err"
}
