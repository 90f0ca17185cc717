# lib.awk — helpers shared by data.awk and report.awk (POSIX awk).

function isnum(x) { return x ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }

# Appends v to the list a[k, 1..n[k]].
function push(a, n, k, v) { a[k, ++n[k]] = v }

# Median of the list a[k, 1..n[k]], or "" when it is empty.
function kmedian(a, n, k,    i, j, c, t, x) {
    c = n[k] + 0
    if (c == 0) return ""
    for (i = 1; i <= c; i++) {
        x = a[k, i] + 0
        for (j = i - 1; j >= 1 && t[j] > x; j--) t[j + 1] = t[j]
        t[j + 1] = x
    }
    return c % 2 ? t[(c + 1) / 2] : (t[c / 2] + t[c / 2 + 1]) / 2
}

# Sorts s[1..c] as strings, ascending (insertion sort: the lists are short).
function sortstr(s, c,    i, j, x) {
    for (i = 2; i <= c; i++) {
        x = s[i]
        for (j = i - 1; j >= 1 && s[j] > x; j--) s[j + 1] = s[j]
        s[j + 1] = x
    }
}

# A number as a fixed-width string that sorts like the number (non-negative values).
function nkey(x) { return sprintf("%025.10f", x + 0) }

# File-name-safe text.
function safe(s) { gsub(/[^A-Za-z0-9._-]/, "_", s); return s }

function min(a, b) { return a == "" ? b : (b == "" ? a : (a + 0 < b + 0 ? a : b)) }
function max(a, b) { return a == "" ? b : (b == "" ? a : (a + 0 > b + 0 ? a : b)) }

function min_s(a, b) { return a == "" || b < a ? b : a }
function max_s(a, b) { return a == "" || b > a ? b : a }
function gpus_word(n) { return n == 1 ? "1 GPU" : n " GPUs" }

# ---- a study: the rows select.awk kept, gathered per run (one run per configuration)
#
# Per run: R_g (model-dataset group), R_s strategy, R_n GPUs, R_G global and R_b per-GPU batch, R_lr, R_seed,
# R_M micro-batches, R_sched, R_pipe (a pipeline row), R_bk (the batch of its line: per-GPU, or global for the
# pipeline), R_algo (nccl_algo), R_m math, R_gd grad_dtype ("" where the strategy has no gradient reduction, and
# in every row of a CSV older than the column: its gradients were fp32), R_link (link_tag: "" on one node with
# NCCL's default transports), facc (final test accuracy, %), fstat (final status), last (last epoch); lists of the
# steady epochs' T epoch_s, I images/s, S step_ms, C compute_ms, X exposed_comm_ms, D idle_ms, Q comm_ms, Y
# bytes_per_step, B bubble, BI bubble_ideal, N steps; A "epoch accuracy%" of every epoch. study_medians() fills
# tmed, imed, smed, cmed, xmed, dmed, qmed, ymed, bmed, bimed, nmed. Groups: groups[1..ng], G_sub "model on
# dataset", G_gpus, G_hosts, G_commits, G_nm and G_ngd (how many maths and gradient dtypes the group holds: figures
# and tables name them only past one). T1 and STEP1 (single's best epoch and its median step) are per group, batch
# and math. Columns an older CSV lacks (grad_dtype, idle_ms, nodes, nccl_transport) read as empty.

function batch_word(run) { return R_pipe[run] ? "batch " R_bk[run] : R_bk[run] "/GPU" }

# The link a run's GPUs talked over, for keys and labels: "" on one node with NCCL's default transports; else
# "2 nodes" and the NCCL settings without their NCCL_ prefix, less NCCL_HOSTID (it only names the nodes).
function link_tag(nodes, tr,    n, i, p, s, t) {
    t = nodes + 0 > 1 ? nodes " nodes" : ""
    if (tr == "" || tr == "default") return t
    n = split(tr, p, ";")
    for (i = 1; i <= n; i++) {
        if (p[i] ~ /^NCCL_HOSTID=/) continue
        s = p[i]; sub(/^NCCL_/, "", s)
        t = t (t == "" ? "" : ", ") s
    }
    return t
}
function link_word(run) { return R_link[run] == "" ? "" : ", " R_link[run] }

function study_header(    i) { for (i = 1; i <= NF; i++) col[$i] = i }

# A cell of a column that older CSVs lack: "" there ($col[name] of an absent name would be $0, the whole row).
function cell(name) { return name in col ? $col[name] : "" }

# Sort keys that put fp32 before tf32 before bf16 (and fp32 gradients before bf16 ones), as a study reads.
function math_rank(m) { return m == "fp32" ? "1" : m == "tf32" ? "2" : m == "bf16" ? "3" : "4" m }
function prec_key(run) { return math_rank(R_m[run]) SUBSEP math_rank(R_gd[run]) }

# The math and gradient dtype of a run, each only where its group holds more than one: "" for a study in one
# precision, so its figures and tables read as before the columns existed.
function prec_word(run,    g, w) {
    g = R_g[run]; w = ""
    if (G_nm[g] > 1) w = R_m[run]
    if (G_ngd[g] > 1 && R_gd[run] != "") w = w (w == "" ? "" : ", ") R_gd[run] " grads"
    return w
}
# A summary row's configuration less its precision: strategy (single first, the pipeline last), GPUs, schedule,
# batch, micro-batches, link. report.awk adds prec_key, precision.awk the gradient dtype.
function row_key(run) {
    return (R_pipe[run] ? "2" : R_s[run] == "single" ? "0" : "1") R_s[run] SUBSEP nkey(R_n[run]) SUBSEP R_sched[run] \
        SUBSEP nkey(R_bk[run]) SUBSEP nkey(R_M[run]) SUBSEP R_link[run]
}
function with_prec(label, run,    w) { w = prec_word(run); return w == "" ? label : label ", " w }

function study_fact(arr, list, g, v) {
    if (v != "" && !((g, v) in arr)) { arr[g, v] = 1; list[g] = list[g] (list[g] == "" ? "" : ", ") v }
}

function study_row(    run, g, e, d) {
    run = $col["run_id"]
    if (!(run in R_g)) {
        g = safe($col["model"] "-" $col["dataset"])
        R_g[run] = g
        if (!(g in G_sub)) { G_sub[g] = $col["model"] " on " $col["dataset"]; ng++; groups[ng] = g }
        R_s[run] = $col["strategy"]
        R_n[run] = $col["gpus"] + 0
        R_G[run] = $col["global_batch"] + 0
        R_b[run] = $col["per_gpu_batch"] + 0
        R_lr[run] = $col["lr"]
        R_seed[run] = $col["seed"]
        R_M[run] = $col["micro_batches"]
        R_sched[run] = $col["schedule"]
        R_pipe[run] = $col["micro_batches"] != "" || $col["strategy"] == "pipeline"
        R_bk[run] = R_pipe[run] ? R_G[run] : R_b[run]
        R_algo[run] = $col["nccl_algo"]
        R_m[run] = $col["math"]
        R_gd[run] = cell("grad_dtype")
        if (!((g, "m", R_m[run]) in G_prec)) { G_prec[g, "m", R_m[run]] = 1; G_nm[g]++ }
        if (R_gd[run] != "" && !((g, "d", R_gd[run]) in G_prec)) { G_prec[g, "d", R_gd[run]] = 1; G_ngd[g]++ }
        R_link[run] = link_tag(cell("nodes"), cell("nccl_transport"))
        nr++; runs[nr] = run
        if ($col["seed"] != "") seeds[g, $col["seed"]] = 1
    }
    g = R_g[run]
    study_fact(G_gpu, G_gpus, g, $col["gpu_name"])
    study_fact(G_host, G_hosts, g, $col["host"])
    study_fact(G_commit, G_commits, g, $col["git_commit"])
    d = substr($col["timestamp"], 1, 10)
    if (d != "") { G_d0[g] = min_s(G_d0[g], d); G_d1[g] = max_s(G_d1[g], d) }
    e = $col["epoch"]
    if (isnum(e) && e + 0 >= 1 && isnum($col["test_acc"])) push(A, An, run, (e + 0) " " 100 * $col["test_acc"])
    if (isnum(e) && (!(run in last) || e + 0 >= last[run])) {
        last[run] = e + 0
        facc[run] = isnum($col["test_acc"]) ? 100 * $col["test_acc"] : ""
        fstat[run] = $col["status"]
    }
    if ($col["phase"] == "steady") {
        if (isnum($col["epoch_s"])) push(T, Tn, run, $col["epoch_s"])
        if (isnum($col["images_per_s"])) push(I, In, run, $col["images_per_s"])
        if (isnum($col["step_ms"])) push(S, Sn, run, $col["step_ms"])
        if (isnum($col["compute_ms"])) push(C, Cn, run, $col["compute_ms"])
        if (isnum($col["exposed_comm_ms"])) push(X, Xn, run, $col["exposed_comm_ms"])
        if (isnum(cell("idle_ms"))) push(D, Dn, run, cell("idle_ms"))
        if (isnum($col["comm_ms"])) push(Q, Qn, run, $col["comm_ms"])
        if (isnum($col["bytes_per_step"])) push(Y, Yn, run, $col["bytes_per_step"])
        if (isnum($col["bubble"])) push(B, Bn, run, $col["bubble"])
        if (isnum($col["bubble_ideal"])) push(BI, BIn, run, $col["bubble_ideal"])
        if (isnum($col["steps"])) push(N, Nn, run, $col["steps"])
    }
}

function study_medians(    i, run) {
    for (i = 1; i <= nr; i++) {
        run = runs[i]
        tmed[run] = kmedian(T, Tn, run)
        imed[run] = kmedian(I, In, run)
        smed[run] = kmedian(S, Sn, run)
        cmed[run] = kmedian(C, Cn, run)
        xmed[run] = kmedian(X, Xn, run)
        dmed[run] = kmedian(D, Dn, run)
        qmed[run] = kmedian(Q, Qn, run)
        ymed[run] = kmedian(Y, Yn, run)
        bmed[run] = kmedian(B, Bn, run)
        bimed[run] = kmedian(BI, BIn, run)
        nmed[run] = kmedian(N, Nn, run)
    }
    # T1: the single strategy's best steady epoch time and median step per (group, batch, math), and its run
    # (T1RUN): a bf16 run's speedup is over single in bf16
    for (i = 1; i <= nr; i++) {
        run = runs[i]
        if (R_s[run] != "single" || tmed[run] == "") continue
        if (!((R_g[run], R_bk[run], R_m[run]) in T1) || tmed[run] + 0 < T1[R_g[run], R_bk[run], R_m[run]] + 0) {
            T1[R_g[run], R_bk[run], R_m[run]] = tmed[run]
            STEP1[R_g[run], R_bk[run], R_m[run]] = smed[run]
            T1RUN[R_g[run], R_bk[run], R_m[run]] = run
        }
    }
}

function study_dates(g) { return G_d0[g] == G_d1[g] ? G_d0[g] : G_d0[g] " to " G_d1[g] }
