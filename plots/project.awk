# project.awk — the report's projection past this host: epoch time, speedup and efficiency of nccl data parallelism
# at 1 to 1024 GPUs (nodes x GPUs per node) and of the pipeline on one node, from the study's rows and the all-reduce
# benchmarks, with the model's error at every measured point. report.awk's pass calls project_row on every row and
# projection() last, so the study and the fits are read once.
#
# Data parallel, weak scaling (the per-GPU batch b of the measured runs), n = N nodes x g GPUs:
#   step(n) = t1 + phi x t_ar(N, g, S)    epoch = steps1 / n x step    speedup = n t1 / step    efficiency = t1 / step
# t1 single's median step at b (and the same math), steps1 its steps per epoch, S the bytes the nccl rows reduce per
# step (bytes_per_step: the gradients in the run's grad dtype), phi the measured overlap: exposed over total
# all-reduce time of the nccl rows run on this host, held constant. t_ar is NCCL's own cost model (src/graph/
# tuning.cc, ncclTopoTuneModel: latencies per step, bus bandwidth as nccl-tests' doc/PERFORMANCE.md defines it)
# over two levels: alpha_i, beta_i of the intra-node path (fit.awk's ring fit of the benchmark), alpha_e, beta_e of
# the inter-node path per GPU (the emulated-network benchmark's ring fit, or --net-latency-us / --net-gbs):
#   ring  t = (2(n-1) - 2(N-1)) alpha_i + 2(N-1) alpha_e + 2(n-1)/n S beta
#   tree  t = 2 ((g-1) alpha_i + log2(N) alpha_e) + 2 S beta      (a chain in each node, a double binary tree
#                                                                   across nodes; NCCL's algbw = busbw / 2)
#   beta = beta_i on one node, else max(beta_i, beta_e / g): a node's g rings (channels) leave it by g NICs.
# NCCL picks the algorithm its model says is faster; the projection takes the faster. At a measured point the
# model uses the algorithm the row records (the harness pins NCCL_ALGO=Ring unless told otherwise).
# Pipeline (strong scaling: every stage sees the global batch), measured stage busy times B_1..B_p at p stages:
#   step(p') = (M + p' - 1) / M x sum(B) / p' x imbalance     imbalance = max(B) / mean(B), 1 at p' = 1
# for p' up to one node (copies between nodes and the model's number of valid cuts are not modelled); at a measured
# point the step is (M + p - 1) / M x max(B), the bubble model with the measured stage times.
#
# Its variables (beside report.awk's): benchdefault, netbench (TSV), netsrc, net_gbs, net_lat, gpn, dir, gnuplot.
# Writes DIR/projection-<model>-<dataset>.dat (curves), DIR/projection_measured-<...>.dat (points) and
# DIR/manifest (plots/render.sh's format) for plots/projection.gp.

# Per run, beside lib.awk's: P_nodes, P_gpn (nodes and GPUs per node: 1 and the GPU count where the CSV predates
# them), P_tr nccl_transport, P_gd grad_dtype (fp32 where absent); steady lists SB[run, stage] of stage_busy_ms;
# P_ns stages with busy times.
function project_row(    run, k, i, parts) {
    run = $col["run_id"]
    if (!(run in P_nodes)) {
        P_nodes[run] = isnum(cell("nodes")) ? cell("nodes") + 0 : 1
        P_gpn[run] = isnum(cell("gpus_per_node")) ? cell("gpus_per_node") + 0 : R_n[run]
        P_tr[run] = cell("nccl_transport")
        P_gd[run] = R_gd[run] == "" ? "fp32" : R_gd[run]
    }
    if ($col["phase"] != "steady") return
    k = split(cell("stage_busy_ms"), parts, ";")
    for (i = 1; i <= k; i++) if (isnum(parts[i])) push(SB, SBn, run SUBSEP i, parts[i])
    if (k > P_ns[run]) P_ns[run] = k
}

function log2i(x,    k) { for (k = 0; x >= 2; x /= 2) k++; return k }

# A fit the model can use: alpha >= 0 and beta > 0 (a least-squares fit of odd points can give neither).
function usable(k) { return k != "" && (k in ALPHA) && ALPHA[k] >= 0 && BETA[k] > 0 }

# The intra-node fit for nccl rows of algorithm algo reducing gd gradients: the one the report's model uses
# (fit.awk's fit_of_grads: bf16 rows pay the cast), else float's.
function intra_fit(algo, gd,    k) {
    k = fit_of_grads("nccl", algo, gd)
    return usable(k) ? k : fit_of("nccl", algo, "float")
}

# All-reduce time (ms) of S bytes over N nodes x g GPUs by "ring" or "tree", intra-node fit ki.
function ar_ms(algo, N, g, S, ki,    n, b, lat) {
    n = N * g
    if (n < 2) return 0
    if (N > 1 && !inter) return ""
    b = N > 1 ? max(BETA[ki], BETA_E / g) : BETA[ki]
    if (algo == "ring") lat = (2 * (n - 1) - 2 * (N - 1)) * ALPHA[ki] + 2 * (N - 1) * ALPHA_E
    else lat = 2 * ((g - 1) * ALPHA[ki] + log2i(N) * ALPHA_E)
    return (lat + (algo == "ring" ? 2 * (n - 1) / n : 2) * S * b) / 1e3
}

# The all-reduce a row's algorithm runs (Ring, Tree; NCCL's choice, the faster, otherwise).
function ar_row_ms(algo, N, g, S, ki,    r, t) {
    r = ar_ms("ring", N, g, S, ki); t = ar_ms("tree", N, g, S, ki)
    if (tolower(algo) == "ring" || r == "") return r
    if (tolower(algo) == "tree") return t
    return min(r, t)
}

# The inter-node path: the emulated-network benchmark's nccl fit, each parameter replaced where given.
function inter_path(    k, err) {
    if (netbench != "") {
        err = fit_file(netbench, "net ")
        k = fit_of("net nccl", "", "float")
        if (err != "") INTER_NOTE = netsrc ": " err
        else if (!usable(k)) INTER_NOTE = netsrc ": no nccl rows that fit α ≥ 0 and β > 0"
        else { ALPHA_E = ALPHA[k]; BETA_E = BETA[k]; INTER_SRC = "ring fit to `" netsrc "`"; INTER_CAP = "fit" }
    }
    if (net_lat != "") {
        ALPHA_E = net_lat + 0
        INTER_SRC = (INTER_SRC == "" ? "" : INTER_SRC ", ") "α from --net-latency-us"
        INTER_CAP = (INTER_CAP == "" ? "" : INTER_CAP ", ") "--net-latency-us"
    }
    if (net_gbs != "") {
        BETA_E = 1 / (net_gbs * 1e3)
        INTER_SRC = (INTER_SRC == "" ? "" : INTER_SRC ", ") "bandwidth from --net-gbs"
        INTER_CAP = (INTER_CAP == "" ? "" : INTER_CAP ", ") "--net-gbs"
    }
    inter = ALPHA_E != "" && BETA_E != ""
}

# A new block of data file f under its title line; point() adds a line "GPUs speedup efficiency%" to it.
function curve(f, title) { printf "%s\"%s\"\n", (f in NBLK) ? "\n\n" : "", title >> f; NBLK[f]++ }
function point(f, x, sp, ef) { printf "%d %.6g %.6g\n", x, sp, ef >> f }

function projection(    err, gi) {
    printf "## Projection past this host\n\n"
    if (bench == "") {
        printf "no all-reduce benchmark: projection omitted (it needs the intra-node α-β fit: run `./scaling --bench "
        printf "allreduce --gpus 2,4 --out %s`, or pass `--allreduce FILE`).\n", benchdefault
        return
    }
    err = bench_err
    KI = fit_of("nccl", "", "float")
    if (err != "" || !usable(KI)) {
        printf "%s: %s: projection omitted.\n", benchsrc, err != "" ? err : "no nccl rows that fit α ≥ 0 and β > 0"
        return
    }
    inter_path()
    explain()
    for (gi = 1; gi <= ng; gi++) group(groups[gi])
}

function explain() {
    printf "Predicted from the measured steps, the all-reduce fits and NCCL's cost model, at 1 to 1024 GPUs as nodes × "
    printf "%d GPUs per node (`--gpus-per-node`). Data parallel (nccl), weak scaling at the measured per-GPU ", gpn
    printf "batch:\n\n"
    printf "- step(n) = t₁ + φ·t_AR(N, g, S); epoch = steps₁/n × step(n); speedup = n·t₁/step(n); efficiency = "
    printf "t₁/step(n). t₁ is `single`'s median step at that batch, steps₁ its steps per epoch, S the bytes the nccl "
    printf "rows reduce per step (the gradients in the run's grad dtype), φ the measured overlap: exposed over total "
    printf "all-reduce time of the nccl rows on this host, held constant as the all-reduce grows.\n"
    printf "- t_AR over N nodes × g GPUs (n = N·g) is NCCL's own cost model (`src/graph/tuning.cc`, "
    printf "`ncclTopoTuneModel`: latency per step, bus bandwidth as nccl-tests' `doc/PERFORMANCE.md` defines it, "
    printf "busbw = algbw·2(n−1)/n for a ring):\n"
    printf "  - ring: (2(n−1) − 2(N−1))·α_intra + 2(N−1)·α_inter + 2(n−1)/n·S·β: 2(n−1) steps, 2(N−1) of them "
    printf "between nodes, and 2(n−1)/n of the bytes through the slowest link;\n"
    printf "  - tree: 2((g−1)·α_intra + log₂N·α_inter) + 2·S·β: a chain inside each node and a double binary tree "
    printf "across nodes, reduce then broadcast (NCCL's tree algbw is half its busbw);\n"
    printf "  - β = β_intra on one node, else max(β_intra, β_inter/g): a node's g rings (NCCL channels) leave it "
    printf "through g NICs, one per GPU.\n"
    printf "  NCCL picks whichever its model says is faster (the harness pins `NCCL_ALGO=Ring` unless `NCCL_ALGO` is "
    printf "set: unset it at scale); the projection takes the faster and names it. At a measured point the model uses "
    printf "the algorithm the row records.\n"
    printf "- Pipeline (every stage sees the global batch), on one node only: step(p) = (M + p − 1)/M × ΣB/p × "
    printf "imbalance, with B the stage busy times measured at the largest stage count and imbalance = max B / mean B "
    printf "(1 at p = 1); at a measured point step = (M + p − 1)/M × max B: the bubble (p−1)/(M+p−1) with the "
    printf "measured stage times. Copies between stages are not modelled, nor how many stages a model can be cut "
    printf "into.\n\n"
    printf "| path | α (µs per step) | bandwidth (GB/s) | source |\n|---|---:|---:|---|\n"
    printf "| intra-node | %.2f | %.1f | ring fit `%s` to `%s` (above) |\n", ALPHA[KI], 1e-3 / BETA[KI], KI, benchsrc
    if (inter)
        printf "| inter-node, per GPU | %.2f | %.1f | %s |\n", ALPHA_E, 1e-3 / BETA_E, INTER_SRC
    printf "\n"
    if (INTER_NOTE != "") printf "%s.\n\n", INTER_NOTE
    if (!inter)
        printf "no inter-node path (no emulated-network benchmark: pass `--net-allreduce FILE`, or `--net-gbs` and "
    if (!inter)
        printf "`--net-latency-us`): data parallelism projected on one node only, up to %d GPUs.\n\n", gpn
}

function line_label(K) {
    return "nccl, " LB[K] "/GPU, " LM[K] (LG[K] != "fp32" ? ", " LG[K] " gradients" : "")
}
# The same, short, for the figure's legend.
function line_key(K) { return "nccl " LB[K] "/GPU " LM[K] (LG[K] != "fp32" ? " " LG[K] " grads" : "") }

# The runs of group g: nccl lines (per-GPU batch, math, grad dtype) with their best run per GPU count on this host
# and per emulated node layout, pipeline lines (global batch, math, schedule) with their best run per stage count
# and micro-batch count.
function gather(g,    i, run, K, k) {
    nl = np = nm = 0
    for (i = 1; i <= nr; i++) {
        run = runs[i]
        if (R_g[run] != g || tmed[run] == "") continue
        if (R_s[run] == "nccl" && R_n[run] >= 2) {
            K = g SUBSEP nkey(R_b[run]) SUBSEP R_m[run] SUBSEP P_gd[run]
            if (!(K in LB)) { nl++; lk[nl] = K; LB[K] = R_b[run]; LM[K] = R_m[run]; LG[K] = P_gd[run] }
            if (ymed[run] != "") LS[K] = max(LS[K], ymed[run])
            k = K SUBSEP nkey(R_n[run]) SUBSEP nkey(P_nodes[run]) SUBSEP P_tr[run]
            if (!(k in MEAS) || tmed[run] + 0 < tmed[MEAS[k]] + 0) MEAS[k] = run
            if (!(k in MK)) { MK[k] = K; nm++; mk[nm] = k }
            if (!on_host_link(run)) continue
            if (LALG[K] == "") LALG[K] = R_algo[run]
            if (xmed[run] != "" && qmed[run] + 0 > 0) { LX[K] += xmed[run]; LQ[K] += qmed[run]; LNR[K]++ }
        } else if (R_pipe[run] && P_ns[run] > 0) {
            K = g SUBSEP nkey(R_bk[run]) SUBSEP R_m[run] SUBSEP R_sched[run]
            if (!(K in PR)) { np++; pk[np] = K }
            if (!(K in PR) || R_n[run] > R_n[PR[K]] || (R_n[run] == R_n[PR[K]] && tmed[run] + 0 < tmed[PR[K]] + 0))
                PR[K] = run
            k = K SUBSEP nkey(R_n[run]) SUBSEP nkey(R_M[run])
            if (!(k in MEAS) || tmed[run] + 0 < tmed[MEAS[k]] + 0) MEAS[k] = run
            if (!(k in MK)) { MK[k] = K; nm++; mk[nm] = k }
        }
    }
    sortstr(lk, nl); sortstr(pk, np); sortstr(mk, nm)
}

# Stage busy times of pipeline run `run` (medians over its steady epochs): sets BSUM, BMAX and BLIST.
function busy(run,    s, v) {
    BSUM = BMAX = 0; BLIST = ""
    for (s = 1; s <= P_ns[run]; s++) {
        v = kmedian(SB, SBn, run SUBSEP s)
        BSUM += v; BMAX = max(BMAX, v); BLIST = BLIST (s > 1 ? "; " : "") sprintf("%.3f", v)
    }
}

function group(g,    i, K, r1, ki, S, t1, st1, phi, G, N, gg, r, t, tar, step, ex, run, k, p, M, imb, dagger, cap,
               drawn) {
    printf "### %s\n\n", G_sub[g]
    dat = dir "/projection-" g ".dat"; mdat = dir "/projection_measured-" g ".dat"
    printf "" > dat; printf "" > mdat
    delete NBLK
    gather(g)
    if (nl + np == 0) { printf "No nccl or pipeline runs to project.\n\n"; return }
    # Every curve starts from single's step at its batch and math: without one there is nothing to draw.
    drawn = 0
    for (i = 1; i <= nl; i++) drawn += T1RUN[g, LB[lk[i]], LM[lk[i]]] != "" && LS[lk[i]] != ""
    for (i = 1; i <= np; i++) drawn += T1RUN[g, R_bk[PR[pk[i]]], R_m[PR[pk[i]]]] != "" && R_M[PR[pk[i]]] + 0 >= 1
    if (!drawn) {
        printf "Not projected: no `single` run at the batch and math of any nccl or pipeline run (t₁); "
        printf "run one beside them.\n\n"
        return
    }
    if (gnuplot) printf "![projected speedup and efficiency, 1 to 1024 GPUs](projection-%s.png)\n\n", g
    for (i = 1; i <= nl; i++) {
        K = lk[i]
        printf "#### %s\n\n", line_label(K)
        r1 = T1RUN[g, LB[K], LM[K]]
        if (r1 == "" || LS[K] == "") {
            if (r1 == "") printf "Not projected: no `single` run at this batch and math (t₁).\n\n"
            else printf "Not projected: no bytes_per_step.\n\n"
            continue
        }
        ki = LKI[K] = intra_fit(LALG[K], LG[K])
        S = LS[K]; t1 = smed[r1]; st1 = nmed[r1]
        phi = LPHI[K] = LNR[K] ? LX[K] / LQ[K] : 1
        printf "S = %.0f B per step, t₁ = %.3f ms (`single`, %d steps per epoch), φ = %.3f ", S, t1, st1, phi
        if (LNR[K]) printf "(exposed / all-reduce time over %d nccl run(s))", LNR[K]
        else printf "(no overlap measured: none assumed)"
        printf ", intra-node fit `%s`.\n\n", ki
        printf "| GPUs | nodes × GPUs | ring (ms) | tree (ms) | faster | exposed (ms) | step (ms) | epoch (s) "
        printf "| speedup | efficiency |\n"
        printf "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|\n"
        curve(dat, line_key(K) sprintf(", φ %.2f", phi))
        dagger = 0
        for (G = 1; G <= 1024; G *= 2) {
            N = G <= gpn ? 1 : G / gpn; gg = G <= gpn ? G : gpn
            if (N > 1 && !inter) break
            r = ar_ms("ring", N, gg, S, ki); t = ar_ms("tree", N, gg, S, ki)
            tar = min(r, t); ex = phi * tar; step = t1 + ex
            if (G > st1) dagger = 1
            printf "| %d | %d × %d | %s | %s | %s | %s | %s | %.4f%s | %.2f | %.1f %% |\n", G, N, gg, f3(r), f3(t),
                G == 1 ? "—" : (t + 0 < r + 0 ? "tree" : "ring"), f3(ex), f3(step), st1 / G * step / 1e3,
                (G > st1 ? " †" : ""), G * t1 / step, 100 * t1 / step
            point(dat, G, G * t1 / step, 100 * t1 / step)
        }
        if (dagger)
            printf "\n† the global batch exceeds the training set: an epoch is less than a step (a throughput view).\n"
        printf "\n"
        measured_points(K, r1, 1)
    }
    for (i = 1; i <= np; i++) {
        K = pk[i]; run = PR[K]
        p = R_n[run]; M = R_M[run] + 0
        r1 = T1RUN[g, R_bk[run], R_m[run]]
        printf "#### pipeline, batch %d, %s, %s, M = %d\n\n", R_bk[run], R_m[run], R_sched[run], M
        if (r1 == "" || M < 1) {
            if (M < 1) printf "Not projected: no micro-batch count.\n\n"
            else printf "Not projected: no `single` run at this batch and math (t₁).\n\n"
            continue
        }
        busy(run)
        imb = BMAX / (BSUM / P_ns[run]); t1 = smed[r1]
        printf "Stage busy times measured at p = %d (%s ms per step, medians): ΣB = %.3f ms, imbalance %.3f; ", p,
            BLIST, BSUM, imb
        printf "t₁ = %.3f ms.\n\n", t1
        printf "| GPUs (stages) | bubble (p−1)/(M+p−1) | step (ms) | epoch (s) | speedup | efficiency |\n"
        printf "|---:|---:|---:|---:|---:|---:|\n"
        curve(dat, sprintf("pipeline batch %d %s %s M=%d", R_bk[run], R_m[run], R_sched[run], M))
        for (G = 1; G <= gpn && G <= 1024; G *= 2) {
            step = (M + G - 1) / M * BSUM / G * (G > 1 ? imb : 1)
            printf "| %d | %.1f %% | %.3f | %.3f | %.2f | %.1f %% |\n", G, 100 * (G - 1) / (M + G - 1), step,
                nmed[run] * step / 1e3, t1 / step, 100 * t1 / (G * step)
            point(dat, G, t1 / step, 100 * t1 / (G * step))
        }
        printf "\n"
        measured_points(K, r1, 0, M)
    }
    emulated_points(g)
    close(dat); close(mdat)
    errors(g)
    # the caption's lines are separated by a literal \n, which projection.gp turns into line breaks
    cap = "model: nccl step = t1 + phi x all-reduce (ring or tree, the faster: NCCL's cost model), weak scaling, "
    cap = cap gpn " GPUs per node\\n"
    cap = cap sprintf("all-reduce: intra-node %.1f us per step + %.1f GB/s (fit); ", ALPHA[KI], 1e-3 / BETA[KI])
    if (inter) cap = cap sprintf("inter-node %.1f us + %.1f GB/s per GPU (%s)\\n", ALPHA_E, 1e-3 / BETA_E, INTER_CAP)
    else cap = cap "no inter-node path: one node only\\n"
    cap = cap "pipeline: (M+p-1)/M x sum of measured stage times / p x imbalance, one node, copies free; "
    cap = cap "points: measured (T1: single's epoch)\\nGPU: " (G_gpus[g] == "" ? "unknown" : G_gpus[g]) "  |  " \
        study_dates(g) "  |  " src
    if (gnuplot)
        printf "plot\037projection.gp\037projection-%s\037%s\037%s\037%s\037%s\n", g, dat, mdat, G_sub[g], cap \
            > (dir "/manifest")
}

# A run on this host's own links (one node, NCCL's default transports): what the intra-node fit describes. A run
# over another link (emulated nodes, NCCL's socket transport forced on one node) is no point of its curves.
function on_host_link(run) { return R_link[run] == "" }

# The measured speedup and efficiency of line K (T1: single's epoch, run r1) on this host: 1 GPU, then its best run
# per GPU count (nccl, dp = 1) or per stage count at M micro-batches (pipeline).
function measured_points(K, r1, dp, M,    i, k, run) {
    curve(mdat, "")
    point(mdat, 1, 1, 100)
    for (i = 1; i <= nm; i++) {
        k = mk[i]; run = MEAS[k]
        if (MK[k] != K || !on_host_link(run) || (!dp && R_M[run] + 0 != M)) continue
        point(mdat, R_n[run], tmed[r1] / tmed[run], 100 * tmed[r1] / (R_n[run] * tmed[run]))
    }
}

# Runs across nodes (the emulated two-node run): a titled block each, after the lines' blocks.
function emulated_points(g,    i, k, run, r1) {
    for (i = 1; i <= nm; i++) {
        k = mk[i]; run = MEAS[k]
        if (R_g[run] != g || P_nodes[run] <= 1) continue
        r1 = T1RUN[g, LB[MK[k]], LM[MK[k]]]
        if (r1 == "") continue
        curve(mdat, sprintf("%s, %d nodes x %d, measured", line_key(MK[k]), P_nodes[run], P_gpn[run]))
        point(mdat, R_n[run], tmed[r1] / tmed[run], 100 * tmed[r1] / (R_n[run] * tmed[run]))
    }
}

# The model's error at every measured point of group g: single's epoch (steps x median step), each nccl line's best
# run per GPU count and node layout (the row's own algorithm, bytes and node layout), each pipeline's best run per
# stage and micro-batch count (the bubble model with its own stage times).
function errors(g,    i, k, K, run, r1, model, expo, N, lab, bk, seen) {
    printf "#### Model error at the measured points\n\n"
    printf "Error = (model − measured) / measured epoch time; exposed and idle are per step, from the rows.\n\n"
    printf "| run | GPUs | nodes × GPUs | measured epoch (s) | model epoch (s) | error | exposed ms (measured / model) "
    printf "| idle ms |\n"
    printf "|---|---:|---:|---:|---:|---:|---|---:|\n"
    for (i = 1; i <= nl + np; i++) {
        K = i <= nl ? lk[i] : pk[i - nl]
        run = i <= nl ? "" : PR[K]
        bk = i <= nl ? LB[K] : R_bk[run]
        r1 = T1RUN[g, bk, i <= nl ? LM[K] : R_m[run]]
        if (r1 == "" || (r1 in seen)) continue
        seen[r1] = 1
        err_row("single, " (i <= nl ? bk "/GPU" : "batch " bk) ", " R_m[r1], 1, "1 × 1", tmed[r1],
            nmed[r1] * smed[r1] / 1e3, "—", "—")
    }
    for (i = 1; i <= nm; i++) {
        k = mk[i]; run = MEAS[k]; K = MK[k]
        if (R_pipe[run]) {
            busy(run)
            model = nmed[run] * (R_M[run] + R_n[run] - 1) / R_M[run] * BMAX / 1e3
            err_row(sprintf("pipeline, batch %d, %s, %s, M = %d", R_bk[run], R_m[run], R_sched[run], R_M[run]),
                R_n[run], "1 × " R_n[run], tmed[run], model, "—", "—")
            continue
        }
        if (!(K in LKI)) continue
        N = P_nodes[run]
        if (N <= 1 && !on_host_link(run)) continue     # one node over a forced transport: no path the model has
        expo = ar_row_ms(R_algo[run], N, R_n[run] / N, ymed[run] != "" ? ymed[run] : LS[K], LKI[K])
        if (expo != "") expo *= LPHI[K]
        r1 = T1RUN[g, LB[K], LM[K]]
        model = expo == "" ? "" : nmed[run] * (smed[r1] + expo) / 1e3
        lab = line_label(K) (N > 1 ? ", across nodes" (P_tr[run] != "" ? " (`" P_tr[run] "`)" : "") : "")
        err_row(lab, R_n[run], N " × " P_gpn[run], tmed[run], model, f3(xmed[run]) " / " f3(expo),
            f3(dmed[run]))
    }
    printf "\n"
}

function err_row(label, n, layout, measured, model, expo, idle,    e) {
    e = model == "" ? "" : 100 * (model - measured) / measured
    if (e != "" && e > -0.05 && e < 0.05) e = 0       # no "-0.0 %"
    printf "| %s | %d | %s | %.3f | %s | %s | %s | %s |\n", label, n, layout, measured,
        model == "" ? "—" : sprintf("%.3f", model), e == "" ? "—" : sprintf("%+.1f %%", e),
        expo, idle
}
