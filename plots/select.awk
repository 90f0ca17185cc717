# select.awk — keeps the rows of the latest complete run of every configuration (TSV in, TSV out, header kept).
# A configuration is what results.h says (strategy, model, dataset, seed, gpus, global_batch, lr, momentum,
# weight_decay, math, grad_dtype, init, micro_batches, schedule, steps, nodes, nccl_transport, nccl_algo; a column
# an older CSV lacks counts as empty). A run is complete when it reached the highest epoch
# any run of its configuration reached, or ended with status diverged, oom or failed. A run killed part-way
# (its rows stay in the CSV) is replaced by the later run that --resume made; the number of runs left out is
# written to stderr. Reads the file twice:
#
#   awk -F'\t' -f plots/select.awk X.tsv X.tsv > selected.tsv
BEGIN {
    OFS = "\t"
    nkeys = split("strategy model dataset seed gpus global_batch lr momentum weight_decay math grad_dtype init " \
                  "micro_batches schedule steps nodes nccl_transport nccl_algo", KEYCOL, " ")
}
FNR == 1 {
    if (NR == 1) for (i = 1; i <= NF; i++) col[$i] = i
    else print
    next
}
NR == FNR {
    run = $col["run_id"]
    if (!(run in first)) {
        k = ""
        for (i = 1; i <= nkeys; i++) k = k SUBSEP (KEYCOL[i] in col ? $col[KEYCOL[i]] : "")
        key[run] = k
        first[run] = $col["timestamp"]
        nruns++
    }
    if ($col["timestamp"] < first[run]) first[run] = $col["timestamp"]
    e = $col["epoch"] + 0
    if (e > ep[run]) ep[run] = e
    if (e > kmax[key[run]]) kmax[key[run]] = e
    s = $col["status"]
    if (s == "diverged" || s == "oom" || s == "failed") ended[run] = 1
    next
}
FNR == 2 {      # second pass begins: choose one run per configuration
    for (run in key) {
        k = key[run]
        if (!ended[run] && ep[run] < kmax[k]) continue
        if (!(k in pick) || first[run] > first[pick[k]] || (first[run] == first[pick[k]] && run > pick[k])) pick[k] = run
    }
    for (k in pick) chosen[pick[k]] = 1
    for (run in key) if (!(run in chosen)) left++
    if (left) printf "select: %d run(s) left out: killed part-way and run again later, or superseded by a later run of the same configuration\n", left > "/dev/stderr"
}
($col["run_id"] in chosen) { print }
