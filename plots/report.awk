# report.awk — REPORT.md of a study from select.awk's TSV: per model and dataset, the figures plot.sh made, a
# summary table per strategy (best steady epoch time, speedup T1/TN, efficiency T1/(N*TN), final test accuracy)
# with a model beside the measured figures, the maths side by side where there are several (precision.awk), and
# the runs that ended oom, diverged or failed. A table row is one precision (math and gradient dtype): T1 is
# single's at the same batch and math.
#
# Model. Data-parallel epoch = steps x (t_compute + t_allreduce(n, S)), no overlap: t_compute is the strategy
# single's median step at the same per-GPU batch and math, S the gradient bytes reduced per step (the bytes on the
# wire: half for bf16 gradients), and t_allreduce the alpha-beta model fitted to the all-reduce benchmark rows of
# the run's gradient type (float, or bfloat16 for bf16 gradients; least squares on the relative error, so the
# small sizes set alpha and the large ones beta):
#   ring (nccl and any other):  t(n, S) = 2(n-1) alpha + 2(n-1)/n S beta
#   naive (every byte into and out of GPU 0):  t(n, S) = 2(n-1) alpha + 2(n-1) S beta (1/beta: both directions)
# Pipeline epoch = steps x t_compute(global batch) / p x (M + p - 1) / M: p balanced stages, the GPipe bubble
# (p-1)/(M+p-1) and nothing else; the measured bubble stands beside that formula.
#
#   awk -F'\t' -v bench=BENCH.tsv -v benchsrc=X_allreduce.csv -v figs=FIGS -v src=X.csv -v rows=N -v allruns=N \
#       -v leftout=N (and project.awk's variables) -f plots/lib.awk -f plots/fit.awk -f plots/precision.awk \
#       -f plots/project.awk -f plots/report.awk selected.tsv > REPORT.md
# The projection (project.awk) is its last section.

NR == 1 { study_header(); next }
{ study_row(); project_row() }

function f3(x) { return x == "" ? "—" : sprintf("%.3f", x) }
function f2(x) { return x == "" ? "—" : sprintf("%.2f", x) }
function pct(x) { return x == "" ? "—" : sprintf("%.1f %%", x) }

# The alpha-beta fit of the benchmark (fit_bench, fit_of, allreduce_ms) is plots/fit.awk.

# The columns a summary table starts with where its group holds more than one math or gradient dtype.
function prec_head(g) { return (G_nm[g] > 1 ? "| math " : "") (G_ngd[g] > 1 ? "| grads " : "") }
function prec_rule(g) { return (G_nm[g] > 1 ? "|---" : "") (G_ngd[g] > 1 ? "|---" : "") }
function prec_cells(run,    g) {
    g = R_g[run]
    return (G_nm[g] > 1 ? "| " R_m[run] " " : "") (G_ngd[g] > 1 ? "| " (R_gd[run] == "" ? "—" : R_gd[run]) " " : "")
}

function figure(name, alt) {
    if (name in FIG) printf "![%s](%s)\n\n", alt, name
}

END {
    study_medians()
    fit_bench()
    # figures plot.sh wrote
    if (figs != "") { while ((getline line < figs) > 0) { FIG[line] = 1; nfigl++; figl[nfigl] = line }; close(figs) }

    printf "# Scaling study: %s\n\n", src
    for (gi = 1; gi <= ng; gi++) {
        g = groups[gi]
        printf "- **%s**: %s; host %s; commit %s; %s\n", G_sub[g], G_gpus[g] == "" ? "GPU unknown" : G_gpus[g],
            G_hosts[g] == "" ? "?" : G_hosts[g], G_commits[g] == "" ? "?" : G_commits[g], study_dates(g)
    }
    printf "- %d rows, %d runs, %d configurations", rows, allruns, nr
    if (leftout > 0) printf "; %d run(s) left out (killed part-way and run again later by `--resume`, or superseded by a later run of the same configuration)", leftout
    printf "\n\n"
    printf "Times are medians over each run's steady epochs (epoch 1 is warmup). A table row stands for the runs of one "
    printf "strategy, GPU count, batch, math and gradient dtype; **best** is the lowest epoch time over their learning "
    printf "rates and seeds, and the final test accuracy is the best over them, with its learning rate. Speedup T1/TN "
    printf "and efficiency T1/(N·TN) take T1 from the strategy `single` at the same batch and math (weak scaling: the "
    printf "same batch per GPU).\n\n"

    printf "## All-reduce model\n\n"
    if (bench == "") {
        printf "no all-reduce benchmark: model line omitted (run `./scaling --bench allreduce --gpus 2,4 --out %s`, or pass `--allreduce FILE`).\n\n", benchdefault
    } else if (bench_err != "" || nfit == 0) {
        printf "%s: %s: model line omitted.\n\n", benchsrc, bench_err != "" ? bench_err : "no usable rows (gpus >= 2, bytes and time_us > 0, wrong = 0)"
    } else {
        printf "α-β fit to `%s` (least squares on the relative error; t in µs, S in bytes):\n\n", benchsrc
        printf "| strategy | model t(n, S) | α (µs) | 1/β (GB/s) | points | GPU counts | sizes | max error |\n"
        printf "|---|---|---:|---:|---:|---|---|---:|\n"
        for (i = 1; i <= nfit; i++) {
            s = fits[i]
            if (s in FIT_bad) { printf "| %s | — | — | — | %d | %s | | not enough distinct points |\n", s, FIT_n[s], FIT_gl[s]; continue }
            printf "| %s | %s | %.2f | %s | %d | %s | %s–%s B | %.1f %% |\n", s,
                ring_form(s) ? "2(n−1)α + 2(n−1)/n·S·β (ring)" : "2(n−1)α + 2(n−1)·S·β (in and out of GPU 0)",
                ALPHA[s], (BETA[s] > 0 ? sprintf("%.1f", 1e-3 / BETA[s]) : "—"), FIT_n[s], FIT_gl[s],
                FIT_bmin[s], FIT_bytes[s], 100 * FIT_err[s]
        }
        printf "\nThe model epoch time is steps × (single's median step at the same per-GPU batch and math + t(n, S)), "
        printf "with S the gradient bytes reduced per step (the bytes on the wire) and t the fit of the gradients' type: "
        printf "no overlap of communication with backward, so an overlapping strategy can beat it.\n\n"
    }

    for (gi = 1; gi <= ng; gi++) {
        g = groups[gi]
        printf "## %s\n\n", G_sub[g]

        # table rows: (strategy, GPUs, batch) for single and data-parallel; (GPUs, schedule, batch, M) for the pipeline
        delete rowk; nrow = 0
        for (i = 1; i <= nr; i++) {
            run = runs[i]
            if (R_g[run] != g) continue
            k = g SUBSEP row_key(run) SUBSEP prec_key(run)
            if (!(k in ROW)) { ROW[k] = 1; nrow++; rowk[nrow] = k; ROWS_S[k] = R_s[run] }
            # best time, best accuracy, statuses
            if (tmed[run] != "" && (!(k in BEST) || tmed[run] + 0 < tmed[BEST[k]] + 0)) BEST[k] = run
            if (facc[run] != "" && (!(k in BACC) || facc[run] + 0 > facc[BACC[k]] + 0)) BACC[k] = run
            if (!((k, fstat[run]) in ST)) { nst[k]++; stn[k, nst[k]] = fstat[run] }
            ST[k, fstat[run]]++
            ANY[k] = run
        }
        sortstr(rowk, nrow)

        printf "### Figures\n\n"
        figure("epoch_time-" g ".png", "epoch time against GPU count")
        figure("speedup-" g ".png", "speedup and efficiency against GPU count")
        figure("throughput-" g ".png", "throughput against per-GPU batch")
        figure("breakdown-" g ".png", "per-step compute, exposed communication and idle time")
        figure("bubble-" g ".png", "pipeline bubble against micro-batches")
        figure("acc_lr-" g ".png", "final test accuracy against learning rate")
        for (i = 1; i <= nfigl; i++)
            if (index(figl[i], "acc_epoch-" g "-") == 1) figure(figl[i], "test accuracy against epoch")
        if (nfigl == 0) printf "(no figures: %s)\n\n", figs_note == "" ? "plot.sh made none" : figs_note

        printf "### Summary\n"
        cur = ""
        for (r = 1; r <= nrow; r++) {
            k = rowk[r]; s = ROWS_S[k]; run = ANY[k]; b = BEST[k]; a = BACC[k]
            pipe = R_pipe[run]
            if (s != cur) {
                cur = s
                printf "\n#### %s\n\n", s
                if (pipe) {
                    pipenote = 1
                    printf "%s| GPUs (stages) | schedule | batch | M | best epoch (s) | model epoch (s) | speedup | efficiency | bubble measured | bubble ideal (p−1)/(M+p−1) | images/s | final test acc (lr) | status |\n", prec_head(g)
                    printf "%s|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n", prec_rule(g)
                } else if (bench != "" && nfit > 0 && s != "single") {
                    printf "%s| GPUs | batch/GPU | steps | best epoch (s) | model epoch (s) | speedup | model speedup | efficiency | all-reduce ms/step (measured / model) | final test acc (lr) | status |\n", prec_head(g)
                    printf "%s|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n", prec_rule(g)
                } else {
                    printf "%s| GPUs | batch/GPU | steps | best epoch (s) | speedup | efficiency | final test acc (lr) | status |\n", prec_head(g)
                    printf "%s|---:|---:|---:|---:|---:|---:|---|---|\n", prec_rule(g)
                }
            }
            n = R_n[run]; bk = R_bk[run]; m = R_m[run]
            gl = n (R_link[run] == "" ? "" : " (" R_link[run] ")")     # GPUs, and the link where not one node's default
            t = b != "" ? tmed[b] : ""
            t1 = (g, bk, m) in T1 ? T1[g, bk, m] : ""
            sp = t != "" && t1 != "" ? t1 / t : ""
            ef = sp != "" ? 100 * sp / n : ""
            acc = a != "" ? sprintf("%.1f %% (lr %s)", facc[a], R_lr[a]) : "—"
            steps = b != "" ? nmed[b] : ""
            stl = ""
            for (j = 1; j <= nst[k]; j++) {
                stl = stl (j > 1 ? ", " : "") stn[k, j]
                if (nst[k] > 1 || ST[k, stn[k, j]] > 1) stl = stl " (" ST[k, stn[k, j]] ")"
            }
            if (pipe) {
                M = R_M[run] + 0; p = n
                model = (g, bk, m) in STEP1 && steps != "" ? steps * STEP1[g, bk, m] / p * (M + p - 1) / M / 1e3 : ""
                printf "%s| %d | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", prec_cells(run), n,
                    R_sched[run], bk, M,
                    f3(t), f3(model), f2(sp), pct(ef), b != "" && bmed[b] != "" ? pct(100 * bmed[b]) : "—",
                    pct(100 * (p - 1) / (M + p - 1)), b != "" && imed[b] != "" ? sprintf("%.0f", imed[b]) : "—", acc, stl
            } else if (bench != "" && nfit > 0 && s != "single") {
                tc = (g, bk, m) in STEP1 ? STEP1[g, bk, m] : (b != "" ? cmed[b] : "")
                mark = (g, bk, m) in STEP1 ? "" : " †"
                tar = b != "" ? allreduce_ms(fit_of_grads(s, R_algo[b], R_gd[b]), n, ymed[b]) : ""
                lent = b != "" && tar != "" && FIT_LENT ? " ‡" : ""
                model = tc != "" && tar != "" && steps != "" ? steps * (tc + tar) / 1e3 : ""
                msp = model != "" && t1 != "" ? t1 / model : ""
                comm = (b != "" && qmed[b] != "" ? sprintf("%.3f", qmed[b]) : "—") " / " (tar != "" ? sprintf("%.3f", tar) : "—") lent
                if (model != "" && mark != "") dagger = 1
                if (lent != "") ddagger = 1
                printf "%s| %s | %d | %s | %s | %s%s | %s | %s | %s | %s | %s | %s |\n", prec_cells(run), gl, bk,
                    steps == "" ? "—" : steps, f3(t), f3(model), model != "" ? mark : "", f2(sp), f2(msp), pct(ef), comm,
                    acc, stl
            } else {
                printf "%s| %s | %d | %s | %s | %s | %s | %s | %s |\n", prec_cells(run), gl, bk, steps == "" ? "—" : steps,
                    f3(t), f2(sp), pct(ef), acc, stl
            }
        }
        if (dagger) printf "\n† no `single` run at this batch and math: the model uses this run's own compute time per step.\n"
        if (ddagger) {
            printf "\n‡ the benchmark has no bfloat16 rows (run `--bench allreduce` of this version): the float fit, at the "
            printf "bf16 gradients' bytes.\n"
        }
        if (pipenote) {
            printf "\nPipeline: T1 and the model use `single` at the same global batch; model epoch = steps × single's "
            printf "median step / p × (M + p − 1)/M, i.e. p balanced stages with the ideal bubble (p−1)/(M+p−1) and free "
            printf "transfers between them.\n"
        }
        dagger = ddagger = pipenote = 0
        printf "\n"
        precision_table(g)

        # runs that did not end ok
        nf = 0
        for (i = 1; i <= nr; i++) {
            run = runs[i]
            if (R_g[run] != g || fstat[run] == "ok") continue
            if (!nf++) {
                printf "### Runs that did not end ok\n\n"
                printf "| strategy | GPUs | batch | lr | M | status | last epoch | run |\n|---|---:|---:|---:|---:|---|---:|---|\n"
            }
            printf "| %s | %d | %d | %s | %s | %s | %d | `%s` |\n", with_prec(R_s[run], run), R_n[run], R_G[run], R_lr[run],
                R_M[run] == "" ? "—" : R_M[run], fstat[run], last[run], run
        }
        if (nf) printf "\n"
    }
    projection()
}
