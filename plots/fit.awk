# fit.awk — the alpha-beta model of an all-reduce benchmark (`./scaling --bench allreduce`, as TSV): one least-
# squares fit per strategy, algorithm and element type. report.awk prints it and models with it; project.awk reuses it.
#
# A fit is keyed "strategy (algo)", "strategy (algo, type)" for an element type other than float, after the
# caller's tag (project.awk fits the emulated-network benchmark under the tag "net "). FITFOR[tag strategy, algo,
# type] and FITDEF[tag strategy, type] find it again; fits[1..nfit] lists every fit in the order first seen. Per
# fit: ALPHA (us), BETA (us per byte), FIT_n points, FIT_gl GPU counts, FIT_bmin/FIT_bytes sizes, FIT_err the largest
# relative error, FIT_bad when the points cannot separate alpha from beta. Least squares on the relative error, so
# the small sizes set alpha and the large ones beta:
#   ring (nccl and any other):  t(n, S) = 2(n-1) alpha + 2(n-1)/n S beta
#   naive (every byte into and out of GPU 0):  t(n, S) = 2(n-1) alpha + 2(n-1) S beta (1/beta: both directions)

function ring_form(s) { return FIT_ring[s] }

# report.awk's benchmark (the variable bench) under no tag; bench_err says why it has no fit.
function fit_bench() { if (bench != "") bench_err = fit_file(bench, "") }

# Fits every strategy, algorithm and type of the benchmark TSV `file` under `tag`. Returns "" or what is wrong.
function fit_file(file, tag,    line, f, i, s, n, S, t, a, b, k, nf, wrong, algo, type, par, strat, bcol, bytescol,
                  first, saa, sab, sbb, sa, sb, det, e) {
    first = nfit + 1
    if ((getline line < file) <= 0) return ""
    nf = split(line, f, "\t")
    for (i = 1; i <= nf; i++) bcol[f[i]] = i
    bytescol = ("size_bytes" in bcol) ? bcol["size_bytes"] : bcol["bytes"]
    if (!("strategy" in bcol) || !("gpus" in bcol) || bytescol == "" || !("time_us" in bcol)) {
        close(file)
        return "no columns strategy, gpus, size_bytes (or bytes), time_us"
    }
    while ((getline line < file) > 0) {
        split(line, f, "\t")
        strat = tag f[bcol["strategy"]]
        algo = ("algo" in bcol) ? f[bcol["algo"]] : ""
        type = ("type" in bcol) && f[bcol["type"]] != "" ? f[bcol["type"]] : "float"
        par = algo (type != "float" ? (algo != "" ? ", " : "") type : "")
        s = strat (par != "" ? " (" par ")" : "")
        n = f[bcol["gpus"]] + 0; S = f[bytescol] + 0; t = f[bcol["time_us"]] + 0
        wrong = ("wrong" in bcol) ? f[bcol["wrong"]] : 0
        if (n < 2 || S <= 0 || t <= 0 || (isnum(wrong) && wrong + 0 > 0)) continue
        if (!(s in FIT_n)) {
            nfit++; fits[nfit] = s; FIT_ring[s] = f[bcol["strategy"]] != "naive"
            FITFOR[strat, algo, type] = s
            if (!((strat, type) in FITDEF)) FITDEF[strat, type] = s
            if (algo ~ /\+cast$/ && !((strat, type) in FITCAST)) FITCAST[strat, type] = s
        }
        k = ++FIT_n[s]
        FIT_x1[s, k] = 2 * (n - 1)
        FIT_x2[s, k] = (ring_form(s) ? 2 * (n - 1) / n : 2 * (n - 1)) * S
        FIT_t[s, k] = t
        if (!((s, n) in FIT_gpus)) { FIT_gpus[s, n] = 1; FIT_gl[s] = FIT_gl[s] (FIT_gl[s] == "" ? "" : ", ") n }
        FIT_bytes[s] = max(FIT_bytes[s], S); FIT_bmin[s] = min(FIT_bmin[s], S)
    }
    close(file)
    for (i = first; i <= nfit; i++) {
        s = fits[i]
        saa = sab = sbb = sa = sb = 0
        for (k = 1; k <= FIT_n[s]; k++) {
            a = FIT_x1[s, k] / FIT_t[s, k]; b = FIT_x2[s, k] / FIT_t[s, k]
            saa += a * a; sab += a * b; sbb += b * b; sa += a; sb += b
        }
        det = saa * sbb - sab * sab
        if (FIT_n[s] < 2 || det == 0) { FIT_bad[s] = 1; continue }
        ALPHA[s] = (sa * sbb - sb * sab) / det      # us
        BETA[s] = (saa * sb - sab * sa) / det       # us per byte
        FIT_err[s] = 0
        for (k = 1; k <= FIT_n[s]; k++) {
            e = (ALPHA[s] * FIT_x1[s, k] + BETA[s] * FIT_x2[s, k]) / FIT_t[s, k] - 1
            if (e < 0) e = -e
            if (e > FIT_err[s]) FIT_err[s] = e
        }
    }
    return ""
}

# The fit for strategy s (tag included) whose rows record algorithm algo and reduce elements of type (float when
# empty): that algorithm's, else the strategy's first of that type; "" without one.
function fit_of(s, algo, type) {
    if (type == "") type = "float"
    return (s, algo, type) in FITFOR ? FITFOR[s, algo, type] : ((s, type) in FITDEF ? FITDEF[s, type] : "")
}

# The fit for rows whose gradients travel as gd (the CSV's grad_dtype: "bf16", or "fp32"/"" for float): that
# type's, else, for bf16 rows and a benchmark older than bf16 gradients, the float fit at the rows' bf16 payload,
# with FIT_LENT = 1 so the report can say so. bf16 rows pay the cast from fp32 in their communication time, so their
# fit is the benchmark's "+cast" table where it has one (the row's algorithm's, else the strategy's first), then the
# bare bfloat16 one.
function fit_of_grads(s, algo, gd,    k) {
    FIT_LENT = 0
    if (gd == "bf16" && (s, algo "+cast", "bfloat16") in FITFOR) return FITFOR[s, algo "+cast", "bfloat16"]
    if (gd == "bf16" && (s, "bfloat16") in FITCAST) return FITCAST[s, "bfloat16"]
    k = fit_of(s, algo, gd == "bf16" ? "bfloat16" : "float")
    if (k != "" || gd != "bf16") return k
    k = fit_of(s, algo, "float")
    FIT_LENT = k != ""
    return k
}

# Model all-reduce time in ms for fit s on n GPUs and S bytes; "" without a fit.
function allreduce_ms(s, n, S) {
    if (n < 2) return 0
    if (!(s in ALPHA) || S == "") return ""
    return (2 * (n - 1) * ALPHA[s] + (ring_form(s) ? 2 * (n - 1) / n : 2 * (n - 1)) * S * BETA[s]) / 1e3
}
