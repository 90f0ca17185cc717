# precision.awk — the maths of a study side by side in REPORT.md: report.awk calls precision_table(g) for each model
# and dataset whose rows hold more than one math. Needs lib.awk's study (after study_medians) and report.awk's f2/f3/pct.
#
# A row pairs the runs that differ in math only: strategy (pipeline: schedule and micro-batches too), GPU count,
# batch and gradient dtype. Per math: the best steady epoch time over learning rates and seeds, its ratio to the
# reference math's (tf32 where present, else the first), speedup T1/TN and efficiency T1/(N·TN) over single at the
# same batch and math, the communication share of a step (comm_ms / step_ms, the exposed part in parentheses),
# and the best final test accuracy.

# The group's maths in study order (fp32, tf32, bf16, others by name) into PM[1..return].
function precision_maths(g,    i, run, n, seen, key, parts) {
    n = 0
    for (i = 1; i <= nr; i++) {
        run = runs[i]
        if (R_g[run] != g || (R_m[run] in seen)) continue
        seen[R_m[run]] = 1
        key[++n] = math_rank(R_m[run]) SUBSEP R_m[run]
    }
    sortstr(key, n)
    for (i = 1; i <= n; i++) { split(key[i], parts, SUBSEP); PM[i] = parts[2] }
    return n
}

# A run's communication time per step as a share of its step, and the exposed part of it: "2.7 % (1.6 %)".
function precision_share(run,    w) {
    if (run == "" || qmed[run] == "" || smed[run] == "" || smed[run] + 0 <= 0) return "—"
    w = sprintf("%.1f %%", 100 * qmed[run] / smed[run])
    return xmed[run] == "" ? w : w sprintf(" (%.1f %%)", 100 * xmed[run] / smed[run])
}

function precision_table(g,    nm, ref, i, j, run, k, m, nrw, t, t1, grads, line, head, rule, b, cols) {
    if (G_nm[g] < 2) return
    nm = precision_maths(g)
    ref = 1
    for (j = 1; j <= nm; j++) if (PM[j] == "tf32") ref = j
    grads = G_ngd[g] > 1
    nrw = 0
    delete PAIR; delete PBEST; delete PACC; delete prow
    for (i = 1; i <= nr; i++) {
        run = runs[i]
        if (R_g[run] != g) continue
        k = row_key(run) SUBSEP math_rank(R_gd[run])
        if (!(k in PAIR)) { PAIR[k] = run; prow[++nrw] = k }
        m = R_m[run]
        if (tmed[run] != "" && (!((k, m) in PBEST) || tmed[run] + 0 < tmed[PBEST[k, m]] + 0)) PBEST[k, m] = run
        if (facc[run] != "" && (!((k, m) in PACC) || facc[run] + 0 > facc[PACC[k, m]] + 0)) PACC[k, m] = run
    }
    sortstr(prow, nrw)

    printf "### "
    for (j = 1; j <= nm; j++) printf "%s%s", (j > 1 ? " against " : ""), PM[j]
    printf "\n\nEach row holds the runs that differ in math only (the best over learning rates and seeds, as above); "
    printf "a column m / %s is the ratio of the two epoch times. ", PM[ref]
    printf "Speedup and efficiency are over `single` at the same batch and math; communication is the gradient "
    printf "reduction's time per step as a share of the step, with the part the compute waited for (exposed) in "
    printf "parentheses.\n\n"
    head = "| strategy | GPUs | batch" (grads ? " | grads" : ""); rule = "|---|---:|---:" (grads ? "|---" : "")
    for (j = 1; j <= nm; j++) { head = head " | epoch (s) " PM[j]; rule = rule "|---:" }
    for (j = 1; j <= nm; j++) if (j != ref) { head = head " | " PM[j] " / " PM[ref]; rule = rule "|---:" }
    cols[1] = "speedup"; cols[2] = "efficiency"; cols[3] = "communication"; cols[4] = "final test acc"
    for (i = 1; i <= 4; i++)
        for (j = 1; j <= nm; j++) { head = head " | " cols[i] " " PM[j]; rule = rule "|---:" }
    printf "%s |\n%s|\n", head, rule

    for (i = 1; i <= nrw; i++) {
        k = prow[i]; run = PAIR[k]
        line = "| " R_s[run] (R_pipe[run] ? " " R_sched[run] ", M=" R_M[run] : "") " | " R_n[run] \
               (R_link[run] == "" ? "" : " (" R_link[run] ")") " | " batch_word(run)
        if (grads) line = line " | " (R_gd[run] == "" ? "—" : R_gd[run])
        for (j = 1; j <= nm; j++) line = line " | " f3((k, PM[j]) in PBEST ? tmed[PBEST[k, PM[j]]] : "")
        for (j = 1; j <= nm; j++) {
            if (j == ref) continue
            t = (k, PM[j]) in PBEST && (k, PM[ref]) in PBEST ? tmed[PBEST[k, PM[j]]] / tmed[PBEST[k, PM[ref]]] : ""
            line = line " | " f2(t)
        }
        for (j = 1; j <= nm; j++) {
            b = (k, PM[j]) in PBEST ? PBEST[k, PM[j]] : ""
            t1 = (g, R_bk[run], PM[j]) in T1 ? T1[g, R_bk[run], PM[j]] : ""
            SP[j] = b != "" && t1 != "" ? t1 / tmed[b] : ""
            line = line " | " f2(SP[j])
        }
        for (j = 1; j <= nm; j++) line = line " | " pct(SP[j] != "" ? 100 * SP[j] / R_n[run] : "")
        for (j = 1; j <= nm; j++) line = line " | " precision_share((k, PM[j]) in PBEST ? PBEST[k, PM[j]] : "")
        for (j = 1; j <= nm; j++)
            line = line " | " ((k, PM[j]) in PACC ? sprintf("%.1f %%", facc[PACC[k, PM[j]]]) : "—")
        print line " |"
    }
    printf "\n"
}
