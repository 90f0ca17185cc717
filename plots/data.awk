# data.awk — turns the selected rows (select.awk's TSV) into the small whitespace .dat files that the gnuplot
# scripts read, one set per model and dataset, and prints the manifest plot.sh follows: one line per figure,
# fields separated by the ASCII unit separator (\037, never in a name; a tab would collapse empty fields in
# `read`):
#   plot US script US output name US data file US second data file US subtitle US caption
#   skip US script US model/dataset US reason
# Times are medians over a run's steady epochs (phase steady); a point of a line is the best (lowest time,
# highest throughput) over the runs it stands for (learning rates, seeds, pipeline micro-batch counts).
# The batch of a line: the per-GPU batch for single and the data-parallel strategies (weak scaling keeps it
# fixed), the global batch for the pipeline (every stage sees all of it). N = 1 of every line is the single
# strategy at that batch and math where the strategy has no 1-GPU run of its own. Where a model's rows hold more
# than one math (or gradient dtype), every line, bar and figure entry is split by it and names it.
#
#   awk -F'\t' -v dir=TMPDIR -v src=results/X.csv -f plots/lib.awk -f plots/data.awk selected.tsv

NR == 1 { study_header(); next }
{ study_row() }


# Adds point (x, y) to series k of figure f, keeping the best y per x (lowest when lo, else highest).
function point(f, k, x, y, lo, label,    p) {
    if (!((f, k) in SER)) { SER[f, k] = 1; nser[f]++; serk[f, nser[f]] = k; slabel[f, k] = label }
    p = f SUBSEP k SUBSEP x
    if (!(p in PT)) { PT[p] = y; npt[f, k]++; ptx[f, k, npt[f, k]] = x }
    else if (lo ? y + 0 < PT[p] + 0 : y + 0 > PT[p] + 0) PT[p] = y
}

# Writes figure f's series (sorted by key) as gnuplot data blocks: a quoted title line, then "x y" sorted by x.
# Returns how many series have at least `need` points; with drop, the others are left out of the file.
function write_series(f, file, need, drop,    i, j, c, k, keys, xs, ok, x, w) {
    c = nser[f] + 0
    for (i = 1; i <= c; i++) keys[i] = serk[f, i]
    sortstr(keys, c)
    printf "" > file
    ok = w = 0
    for (i = 1; i <= c; i++) {
        k = keys[i]
        if (drop && npt[f, k] < need) continue
        delete xs
        for (j = 1; j <= npt[f, k]; j++) xs[j] = nkey(ptx[f, k, j]) SUBSEP ptx[f, k, j]
        sortstr(xs, npt[f, k])
        if (w++) printf "\n\n" >> file
        printf "\"%s\"\n", slabel[f, k] >> file
        for (j = 1; j <= npt[f, k]; j++) {
            split(xs[j], x, SUBSEP)
            printf "%s %s\n", x[2], PT[f SUBSEP k SUBSEP x[2]] >> file
        }
        if (npt[f, k] >= need) ok++
    }
    close(file)
    return ok
}

function emit(script, name, g, file, file2) {
    printf "plot\037%s\037%s-%s\037%s\037%s\037%s\037%s\n", script, name, g, file, file2, G_sub[g], caption[g]
}
function skip(script, g, why) { printf "skip\037%s\037%s\037%s\n", script, G_sub[g], why }

END {
    study_medians()
    for (gi = 1; gi <= ng; gi++) {
        g = groups[gi]
        caption[g] = "GPU: " (G_gpus[g] == "" ? "unknown" : G_gpus[g]) "  |  " study_dates(g) "  |  " src
    }

    # (a) epoch time and (b) speedup: one line per strategy, batch and precision. Its N = 1 point is the
    # strategy's own 1-GPU run, else single's at that batch and math. T1 of the speedup is single's where there is
    # one (single is the reference of every strategy), else the line's own N = 1.
    for (i = 1; i <= nr; i++) {
        run = runs[i]; g = R_g[run]
        if (R_s[run] == "single" || tmed[run] == "") continue
        k = R_s[run] SUBSEP nkey(R_bk[run]) SUBSEP prec_key(run) SUBSEP R_link[run]
        point("time" g, k, R_n[run], tmed[run], 1,
              with_prec(R_s[run] ", " batch_word(run) link_word(run) (R_pipe[run] ? " (best M)" : ""), run))
        sert1["time" g, k] = g SUBSEP R_bk[run] SUBSEP R_m[run]     # its T1's key
    }
    for (gi = 1; gi <= ng; gi++) {
        g = groups[gi]; f = "time" g
        for (i = 1; i <= nser[f]; i++) {
            k = serk[f, i]; t1k = sert1[f, k]
            if (!((f SUBSEP k SUBSEP 1) in PT) && (t1k in T1)) point(f, k, 1, T1[t1k], 1)
        }
        for (i = 1; i <= nser[f]; i++) {
            k = serk[f, i]; t1k = sert1[f, k]
            t1 = t1k in T1 ? T1[t1k] : PT[f SUBSEP k SUBSEP 1]
            if (t1 == "") continue
            for (j = 1; j <= npt[f, k]; j++) {
                n = ptx[f, k, j]
                tn = PT[f SUBSEP k SUBSEP n]
                point("speed" g, k, n, sprintf("%.6g %.6g", t1 / tn, 100 * t1 / (n * tn)), 1, slabel[f, k])
            }
        }
        file = dir "/epoch_time-" g ".dat"
        if (write_series(f, file, 2, 0) > 0) emit("epoch_time.gp", "epoch_time", g, file, "")
        else skip("epoch_time.gp", g, "no strategy has steady epoch times on 2 or more GPU counts")
        file = dir "/speedup-" g ".dat"
        if (write_series("speed" g, file, 2, 0) > 0) emit("speedup.gp", "speedup", g, file, "")
        else skip("speedup.gp", g, "no line with a 1-GPU time (strategy single at the same batch) and another GPU count")
    }

    # (c) throughput against the per-GPU batch: one line per strategy and GPU count (single and data-parallel)
    for (i = 1; i <= nr; i++) {
        run = runs[i]; g = R_g[run]
        if (R_pipe[run] || imed[run] == "") continue
        point("thr" g, R_s[run] SUBSEP nkey(R_n[run]) SUBSEP prec_key(run) SUBSEP R_link[run], R_b[run], imed[run], 0,
              with_prec(R_s[run] ", " gpus_word(R_n[run]) link_word(run), run))
    }
    for (gi = 1; gi <= ng; gi++) {
        g = groups[gi]; file = dir "/throughput-" g ".dat"
        if (write_series("thr" g, file, 2, 0) > 0) emit("throughput.gp", "throughput", g, file, "")
        else skip("throughput.gp", g, "no strategy and GPU count with 2 or more batch sizes")
    }

    # (d) test accuracy against epoch: one figure per strategy, one line per configuration
    for (i = 1; i <= nr; i++) {
        run = runs[i]; g = R_g[run]
        if (!An[run]) continue
        f = "acc" g SUBSEP R_s[run]
        if (!(f in accfig)) { accfig[f] = 1; nacc[g]++; accs[g, nacc[g]] = R_s[run] }
        k = nkey(R_n[run]) SUBSEP nkey(R_bk[run]) SUBSEP nkey(R_lr[run]) SUBSEP nkey(R_M[run]) SUBSEP prec_key(run) \
            SUBSEP R_link[run] SUBSEP R_seed[run] SUBSEP run
        label = with_prec(gpus_word(R_n[run]) link_word(run) ", " batch_word(run) ", lr " R_lr[run], run)
        if (R_pipe[run]) label = label ", M=" R_M[run]
        if (nseeds(g) > 1) label = label ", seed " R_seed[run]
        if (fstat[run] != "ok") label = label " (" fstat[run] ")"
        for (j = 1; j <= An[run]; j++) {
            split(A[run, j], ev, " ")
            point(f, k, ev[1], ev[2], 0, label)
        }
    }
    for (gi = 1; gi <= ng; gi++) {
        g = groups[gi]
        c = nacc[g] + 0
        for (i = 1; i <= c; i++) names[i] = accs[g, i]
        sortstr(names, c)
        for (i = 1; i <= c; i++) {
            file = dir "/acc_epoch-" g "-" safe(names[i]) ".dat"
            write_series("acc" g SUBSEP names[i], file, 1, 0)
            printf "plot\037%s\037%s-%s-%s\037%s\037%s\037%s\037%s\n", "acc_epoch.gp", "acc_epoch", g, safe(names[i]), file,
                "", G_sub[g] ", strategy " names[i], caption[g]
        }
        if (!c) skip("acc_epoch.gp", g, "no epoch with a test accuracy")
    }

    # (e) final test accuracy against learning rate: one line per strategy, GPU count, global batch and precision;
    #     seeds of a configuration give their median
    for (i = 1; i <= nr; i++) {
        run = runs[i]; g = R_g[run]
        if (facc[run] == "") continue
        k = R_s[run] SUBSEP nkey(R_n[run]) SUBSEP nkey(R_G[run]) SUBSEP nkey(R_M[run]) SUBSEP prec_key(run) SUBSEP R_link[run]
        kk = g SUBSEP k SUBSEP R_lr[run]
        push(FA, FAn, kk, facc[run])
        if (!(kk in FK)) { FK[kk] = 1; nfk++; fks[nfk] = kk; fkrun[kk] = run }
    }
    for (i = 1; i <= nfk; i++) {
        kk = fks[i]; run = fkrun[kk]; g = R_g[run]
        k = R_s[run] SUBSEP nkey(R_n[run]) SUBSEP nkey(R_G[run]) SUBSEP nkey(R_M[run]) SUBSEP prec_key(run) SUBSEP R_link[run]
        label = with_prec(R_s[run] ", " gpus_word(R_n[run]) link_word(run) ", batch " R_G[run] \
                          (R_pipe[run] ? ", M=" R_M[run] : ""), run)
        point("lr" g, k, R_lr[run], kmedian(FA, FAn, kk), 0, label)
    }
    for (gi = 1; gi <= ng; gi++) {
        g = groups[gi]
        # only lines with 2 or more learning rates: a single point says nothing about the lr
        file = dir "/acc_lr-" g ".dat"
        if (write_series("lr" g, file, 2, 1) > 0) emit("acc_lr.gp", "acc_lr", g, file, "")
        else skip("acc_lr.gp", g, "no configuration swept over 2 or more learning rates")
    }

    # (f) per-step compute, exposed communication and idle: one bar per strategy, GPU count, batch and link, from
    #     the run with the best median step, grouped by batch; single shows its whole step as compute, at the
    #     batches the other strategies ran. Idle is the idle_ms column (the row's GPU: compute + exposed + idle is
    #     its mean step); an older CSV without it gets step - compute - exposed, clipped at 0.
    for (i = 1; i <= nr; i++) {
        run = runs[i]
        if (smed[run] != "" && cmed[run] != "") { hascomp[R_g[run]] = 1; compbk[R_g[run], R_bk[run]] = 1 }
    }
    for (i = 1; i <= nr; i++) {
        run = runs[i]; g = R_g[run]
        if (smed[run] == "") continue
        if (cmed[run] == "" && (R_s[run] != "single" || !((g, R_bk[run]) in compbk))) continue
        k = nkey(R_bk[run]) SUBSEP (R_s[run] == "single" ? "0" : "1") R_s[run] SUBSEP nkey(R_n[run]) SUBSEP prec_key(run) \
            SUBSEP R_link[run]
        if (!((g, k) in BAR) || smed[run] + 0 < smed[BAR[g, k]] + 0) {
            if (!((g, k) in BAR)) { nbar[g]++; bark[g, nbar[g]] = k }
            BAR[g, k] = run
        }
    }
    for (gi = 1; gi <= ng; gi++) {
        g = groups[gi]
        if (!hascomp[g]) { skip("breakdown.gp", g, "no rows with compute_ms (data-parallel strategies)"); continue }
        c = nbar[g] + 0
        for (i = 1; i <= c; i++) keys[i] = bark[g, i]
        sortstr(keys, c)
        file = dir "/breakdown-" g ".dat"
        printf "label compute exposed_comm idle\n" > file
        for (i = 1; i <= c; i++) {
            run = BAR[g, keys[i]]
            comp = cmed[run] != "" ? cmed[run] : smed[run]
            expo = xmed[run] != "" ? xmed[run] : 0
            idle = dmed[run] != "" ? dmed[run] : smed[run] - comp - expo
            if (idle < 0) idle = 0
            w = prec_word(run)
            printf "\"%s %dx %s%s%s\" %.6g %.6g %.6g\n", R_s[run], R_n[run], R_pipe[run] ? "b" R_bk[run] : R_bk[run] "/GPU",
                link_word(run), w == "" ? "" : " " w, comp, expo, idle >> file
        }
        close(file)
        emit("breakdown.gp", "breakdown", g, file, "")
    }

    # (g) pipeline bubble against micro-batches: measured per stage count, schedule and batch; ideal per stage count
    for (i = 1; i <= nr; i++) {
        run = runs[i]; g = R_g[run]
        if (bmed[run] == "" || !isnum(R_M[run])) continue
        k = nkey(R_n[run]) SUBSEP R_sched[run] SUBSEP nkey(R_G[run]) SUBSEP prec_key(run)
        kk = g SUBSEP k SUBSEP R_M[run]
        push(BB, BBn, kk, bmed[run])
        if (!(kk in BK)) { BK[kk] = 1; nbk++; bks[nbk] = kk; bkrun[kk] = run }
    }
    for (i = 1; i <= nbk; i++) {
        kk = bks[i]; run = bkrun[kk]; g = R_g[run]
        k = nkey(R_n[run]) SUBSEP R_sched[run] SUBSEP nkey(R_G[run]) SUBSEP prec_key(run)
        point("bub" g, k, R_M[run] + 0, 100 * kmedian(BB, BBn, kk), 0,
              with_prec("measured, " R_n[run] " stages, " R_sched[run] ", batch " R_G[run], run))
        p = R_n[run]
        point("bubi" g, nkey(p), R_M[run] + 0, 100 * (p - 1) / (R_M[run] + p - 1), 0, "ideal (p-1)/(M+p-1), p = " p)
    }
    for (gi = 1; gi <= ng; gi++) {
        g = groups[gi]
        if (!nser["bub" g]) { skip("bubble.gp", g, "no pipeline rows (columns micro_batches, bubble)"); continue }
        file = dir "/bubble-" g ".dat"; file2 = dir "/bubble_ideal-" g ".dat"
        write_series("bub" g, file, 1, 0)
        write_series("bubi" g, file2, 1, 0)
        emit("bubble.gp", "bubble", g, file, file2)
    }
}

function nseeds(g,    k, c, parts) {
    if (g in NSEEDS) return NSEEDS[g]
    c = 0
    for (k in seeds) { split(k, parts, SUBSEP); if (parts[1] == g) c++ }
    NSEEDS[g] = c
    return c
}
