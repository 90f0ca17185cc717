# nsys_streams.awk — where the steps of one process's Nsight Systems capture went on each GPU's compute stream, from
# `nsys stats --report cuda_gpu_trace` (made TSV by `scaling tsv`): the same split as strategies/breakdown.h, seen
# from the kernels' own start and end times instead of the harness's events.
#
#   awk -F'\t' -v steps=K -v label=NAME -f scripts/nsys_streams.awk trace.tsv
#
# Per GPU, the compute stream is the stream with the most non-NCCL kernel time (NCCL's kernels, ncclDevKernel_* and
# ncclKernel_*, run on the communication stream). On it, over the capture (K steps): kernels = the time at least one
# of its kernels or copies runs (a CUDA graph's parallel branches overlap on one stream: counted once); gaps
# shorter than gap_us (10 us) count as busy too (a CUDA graph's kernels follow each other with a few us between
# them), so active = kernels + those gaps; a longer gap that ends within tol_us (50 us) of the end of an NCCL kernel
# on the same GPU that was still running when the gap began is waiting for the all-reduce (wait: the stream waited
# on an event, or its next kernel waited for the SMs the NCCL kernel held; such a kernel can start a few us before
# the NCCL kernel's recorded end); every other longer gap is idle. span = the first op's start to the last op's
# end. One line per GPU, in ms per step:
#   LABEL gpu DEVICE stream S steps K span X kernels X active X wait X idle X nccl X
BEGIN {
    if (gap_us == "") gap_us = 10
    if (tol_us == "") tol_us = 50
    if (steps + 0 <= 0) { print "nsys_streams.awk: -v steps=K (K > 0) is required" > "/dev/stderr"; exit 2 }
}
NR == 1 {
    for (i = 1; i <= NF; i++) {
        if ($i ~ /^Start/) cs = i
        else if ($i ~ /^Duration/) cd = i
        else if ($i == "Device") cdev = i
        else if ($i ~ /^Strm/) cst = i
        else if ($i == "Name") cn = i
    }
    if (!cs || !cd || !cdev || !cst || !cn) {
        print "nsys_streams.awk: no columns Start, Duration, Device, Strm, Name in " FILENAME > "/dev/stderr"
        bad = 1; exit 2
    }
    next
}
{
    s = $cs + 0; e = s + $cd; dev = $cdev; k = dev SUBSEP $cst
    if (!(dev in DEV)) { DEV[dev] = 1; ndev++; devs[ndev] = dev }
    if ($cn ~ /^nccl(Dev)?Kernel/) {
        nn[dev]++; NS[dev, nn[dev]] = s; NE[dev, nn[dev]] = e; nccl[dev] += $cd
        next
    }
    if (!(k in n)) { nst[dev]++; st[dev, nst[dev]] = $cst }
    n[k]++; S[k, n[k]] = s; E[k, n[k]] = e; busy[k] += $cd
}
END {
    if (bad) exit 2
    for (v = 1; v <= ndev; v++) {
        dev = devs[v]; best = ""
        for (i = 1; i <= nst[dev]; i++) {
            k = dev SUBSEP st[dev, i]
            if (best == "" || busy[k] > busy[best]) { best = k; strm = st[dev, i] }
        }
        if (best == "") continue
        k = best; union = E[k, 1] - S[k, 1]; end = E[k, 1]; gaps = wait = idle = 0; j = 0
        for (i = 2; i <= n[k]; i++) {
            g = S[k, i] - end
            if (g <= 0) {                       # beside an op still running: only what it adds past that
                if (E[k, i] > end) { union += E[k, i] - end; end = E[k, i] }
                continue
            }
            union += E[k, i] - S[k, i]
            if (g < gap_us * 1e3) gaps += g
            else {
                # the last NCCL kernel of this GPU that ended by tol after the stream resumed
                while (j < nn[dev] && NE[dev, j + 1] <= S[k, i] + tol_us * 1e3) j++
                if (j > 0 && NE[dev, j] >= end && NE[dev, j] >= S[k, i] - tol_us * 1e3) wait += g
                else idle += g
            }
            end = E[k, i]
        }
        span = end - S[k, 1]                    # end: the latest end of any op
        id = dev
        if (match(id, /\([0-9]+\)$/)) id = substr(id, RSTART + 1, RLENGTH - 2)     # "NVIDIA H200 (1)": 1
        printf "%s gpu %s stream %s steps %d span %.3f kernels %.3f active %.3f wait %.3f idle %.3f nccl %.3f\n",
            label, id, strm, steps, span / steps / 1e6, union / steps / 1e6, (union + gaps) / steps / 1e6,
            wait / steps / 1e6, idle / steps / 1e6, nccl[dev] / steps / 1e6
    }
}
