/* test_report_model.c — the report's models on numbers computed by hand: the α-β least-squares fit (exact points give
 * α and β back; three points whose normal equations are solved by hand give α = 14, β = −0.004 and the error figure
 * 0.4, and are not usable), the naive form, the fit a row's gradients take (the +cast table for bf16, the float fit
 * lent to bf16 rows of an older benchmark), NCCL's ring and tree cost model at hand-computed points, and the
 * precision table of the math fixture (tests/fixtures/study_math.csv, test_fixture.c). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "report/report.h"
#include "test.h"

#include <string.h>

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(1, fabs(b)); }

static void test_fit(void) {
    /* ring on 2 GPUs: t = 2 α + S β, α = 10 µs, 300 GB/s */
    fit_t k = {.ring = 1};
    const double S[] = {4096, 1048576, 268435456};
    for (int i = 0; i < 3; i++) fit_add(&k, 2, S[i], 20 + S[i] / 300e3);
    fit_solve(&k);
    EXPECT(!k.bad && near(k.alpha, 10, 1e-9) && near(k.beta, 1 / 300e3, 1e-9) && k.err < 1e-9,
           "exact ring points: α %g, 1/β %g GB/s, err %g", k.alpha, 1e-3 / k.beta, k.err);
    EXPECT(k.n == 3 && strcmp(k.gpus, "2") == 0 && k.bmin == 4096 && k.bmax == 268435456, "points, GPU counts, sizes");
    EXPECT(fit_usable(&k), "usable");
    EXPECT(near(fit_allreduce_ms(&k, 4, 44696872), (60 + 1.5 * 44696872 / 300e3) / 1e3, 1e-12), "ring at 4 GPUs");
    EXPECT(fit_allreduce_ms(&k, 1, 44696872) == 0, "one GPU: no all-reduce");
    fit_free(&k);

    /* Relative-error least squares by hand, n = 2 (x1 = 2, x2 = S): points (S, t) = (1000, 20), (2000, 20), (1000,
     * 40) give a = x1/t = 0.1, 0.1, 0.05 and b = x2/t = 50, 100, 25. Σaa = 0.0225, Σab = 16.25, Σbb = 13125,
     * Σa = 0.25, Σb = 175, det = 295.3125 − 264.0625 = 31.25; α = (0.25·13125 − 175·16.25)/31.25 = 14,
     * β = (0.0225·175 − 16.25·0.25)/31.25 = −0.004; residuals 0.2, 0, −0.4: error 0.4. */
    fit_t h = {.ring = 1};
    fit_add(&h, 2, 1000, 20);
    fit_add(&h, 2, 2000, 20);
    fit_add(&h, 2, 1000, 40);
    fit_solve(&h);
    EXPECT(!h.bad && near(h.alpha, 14, 1e-9) && near(h.beta, -0.004, 1e-9) && near(h.err, 0.4, 1e-9),
           "hand fit: α %g, β %g, err %g", h.alpha, h.beta, h.err);
    EXPECT(!fit_usable(&h), "β < 0: not usable for a projection");
    fit_free(&h);

    fit_t one = {.ring = 1};
    fit_add(&one, 2, 4096, 30);
    fit_solve(&one);
    EXPECT(one.bad && isnan(fit_allreduce_ms(&one, 2, 4096)), "one point cannot separate α from β");
    fit_free(&one);

    /* naive on 4 GPUs: t = 6 α + 6 S β, α = 15 µs, 40 GB/s */
    fit_t n = {.ring = 0};
    for (int i = 0; i < 3; i++) fit_add(&n, 4, S[i], 90 + 6 * S[i] / 40e3);
    fit_solve(&n);
    EXPECT(near(n.alpha, 15, 1e-9) && near(n.beta, 1 / 40e3, 1e-9), "naive: α %g, 1/β %g", n.alpha, 1e-3 / n.beta);
    EXPECT(near(fit_allreduce_ms(&n, 4, 44696872), 6.7945308, 1e-9), "naive at 4 GPUs: %.7f ms",
           fit_allreduce_ms(&n, 4, 44696872));
    fit_free(&n);
}

static void test_fit_of(const char *dir) {
    char path[600], err[600];
    snprintf(path, sizeof path, "%s/bench.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        EXPECT(0, "cannot write %s", path);
        return;
    }
    fputs("strategy,gpus,algo,size_bytes,type,time_us,wrong\n", f);
    const double S[] = {4096, 1048576, 268435456};
    for (int i = 0; i < 3; i++) {
        fprintf(f, "nccl,2,Ring,%.0f,float,%.6f,0\n", S[i], 16 + S[i] / 150e3);
        fprintf(f, "nccl,2,Ring+cast,%.0f,bfloat16,%.6f,0\n", S[i], 40 + S[i] / 200e3);
        fprintf(f, "nccl,2,Ring,%.0f,float,%.6f,3\n", S[i], 1e6); /* wrong results: left out */
    }
    fputs("nccl,1,Ring,4096,float,5,0\n", f); /* one GPU: left out */
    fclose(f);
    fits_t fits = {0};
    const strategy_info_t *infos[16];
    strategy_infos(infos, 16);
    EXPECT(fits_read(&fits, path, "", infos, err, sizeof err) == 0, "fits_read: %s", err);
    EXPECT(fits.n == 2 && strcmp(fits.fit[0].name, "nccl (Ring)") == 0 &&
               strcmp(fits.fit[1].name, "nccl (Ring+cast, bfloat16)") == 0,
           "two fits: %d", fits.n);
    EXPECT(fits.n == 2 && fits.fit[0].n == 3 && near(fits.fit[0].alpha, 8, 1e-6) && near(fits.fit[1].alpha, 20, 1e-6),
           "wrong rows and one GPU left out; α 8 and 20");
    int lent = -1;
    const fit_t *k = fit_of_grads(&fits, "nccl", "Ring", "bf16", &lent);
    EXPECT(k && strcmp(k->name, "nccl (Ring+cast, bfloat16)") == 0 && lent == 0, "bf16 gradients pay the cast");
    k = fit_of_grads(&fits, "nccl", "Ring", "fp32", &lent);
    EXPECT(k && strcmp(k->name, "nccl (Ring)") == 0 && lent == 0, "fp32 gradients: the float fit");
    k = fit_of_grads(&fits, "nccl", "", "", &lent);
    EXPECT(k && strcmp(k->name, "nccl (Ring)") == 0, "no algorithm recorded: the strategy's first float fit");
    EXPECT(!fit_of_grads(&fits, "naive", "p2p", "", &lent), "no naive rows: no fit");
    EXPECT(fits.fit[0].ring && fits.fit[0].nccl && fit_nccl(&fits, "", "float") == &fits.fit[0] &&
               fit_nccl(&fits, "", "bfloat16") == &fits.fit[1] && !fit_nccl(&fits, "net ", "float"),
           "nccl: the ring form, NCCL's all-reduce (its property), the projection's fit");
    fits_free(&fits);
    /* the form from the strategy's property: naive's is central, one not known a ring without projection */
    f = fopen(path, "w");
    fputs("strategy,gpus,algo,size_bytes,type,time_us,wrong\n", f);
    for (int i = 0; i < 3; i++) fprintf(f, "naive,4,p2p,%.0f,float,%.6f,0\n", S[i], 6 * 15 + 6 * S[i] / 40e3);
    for (int i = 0; i < 3; i++) fprintf(f, "other,2,,%.0f,float,%.6f,0\n", S[i], 16 + S[i] / 150e3);
    fclose(f);
    EXPECT(fits_read(&fits, path, "", infos, err, sizeof err) == 0 && fits.n == 2, "naive and other: %s", err);
    EXPECT(fits.n == 2 && !fits.fit[0].ring && !fits.fit[0].nccl && near(fits.fit[0].alpha, 15, 1e-6) &&
               fits.fit[1].ring && !fits.fit[1].nccl && !fit_nccl(&fits, "", "float"),
           "naive: central (α 15 µs); other: a ring, not projected");
    fits_free(&fits);
    /* a benchmark older than bf16 gradients: its float fit, lent */
    f = fopen(path, "w");
    fputs("strategy,gpus,bytes,time_us\n", f); /* the oldest header: bytes, no algo, type or wrong */
    for (int i = 0; i < 3; i++) fprintf(f, "nccl,2,%.0f,%.6f\n", S[i], 16 + S[i] / 150e3);
    fclose(f);
    EXPECT(fits_read(&fits, path, "", infos, err, sizeof err) == 0, "an older benchmark: %s", err);
    k = fit_of_grads(&fits, "nccl", "Ring", "bf16", &lent);
    EXPECT(k && strcmp(k->name, "nccl") == 0 && lent == 1, "bf16 rows borrow the float fit, marked");
    fits_free(&fits);
    f = fopen(path, "w");
    fputs("size,time\n4096,10\n", f);
    fclose(f);
    EXPECT(fits_read(&fits, path, "", infos, err, sizeof err) == 1 && strstr(err, "no columns strategy"),
           "not a benchmark: %s", err);
    fits_free(&fits);
}

static void test_projection(void) {
    /* S = 44696872 B; intra 8 µs, 150 GB/s; inter 14 µs, 50 GB/s per GPU (test_projection.sh's hand computation) */
    const double S = 44696872, ai = 8, bi = 1 / 150e3, ae = 14, be = 1 / 50e3;
    /* one node of 8: ring 2·7·8 + 2·7/8·297.97915 = 633.46 µs; tree 2·7·8 + 2·297.97915 = 707.96 µs */
    EXPECT(near(project_ar_ms(0, 1, 8, S, ai, bi, NAN, NAN), 0.63346351, 1e-7), "ring, 1 × 8");
    EXPECT(near(project_ar_ms(1, 1, 8, S, ai, bi, NAN, NAN), 0.70795829, 1e-7), "tree, 1 × 8");
    /* 8 × 8: ring (126 − 14)·8 + 14·14 + 2·63/64·297.97915 = 1678.65 µs; tree 2·(7·8 + 3·14) + 2·297.97915 = 791.96 */
    EXPECT(near(project_ar_ms(0, 8, 8, S, ai, bi, ae, be), 1.67864644, 1e-7), "ring, 8 × 8");
    EXPECT(near(project_ar_ms(1, 8, 8, S, ai, bi, ae, be), 0.79195829, 1e-7), "tree, 8 × 8");
    /* 128 × 8: ring 17892 + 595.376 = 18487.38 µs; tree 2·(56 + 7·14) + 595.958 = 903.96 µs */
    EXPECT(near(project_ar_ms(0, 128, 8, S, ai, bi, ae, be), 18.4873763, 1e-7), "ring, 128 × 8");
    EXPECT(near(project_ar_ms(1, 128, 8, S, ai, bi, ae, be), 0.90395829, 1e-7), "tree, 128 × 8");
    /* 4 × 4 at 10 GB/s per GPU: β = max(1/150, 1/(4·10)) = 1/40 per GB: ring 276 + 2·15/16·1117.4218 = 2371.17 µs,
     * tree 2·(3·8 + 2·14) + 2·1117.4218 = 2338.84 µs */
    EXPECT(near(project_ar_ms(0, 4, 4, S, ai, bi, ae, 1 / 10e3), 2.37116588, 1e-7), "ring, 4 × 4, slow network");
    EXPECT(near(project_ar_ms(1, 4, 4, S, ai, bi, ae, 1 / 10e3), 2.3388436, 1e-7), "tree, 4 × 4, slow network");
    EXPECT(project_ar_ms(0, 1, 1, S, ai, bi, NAN, NAN) == 0, "one GPU: nothing to reduce");
    EXPECT(isnan(project_ar_ms(0, 2, 8, S, ai, bi, NAN, NAN)), "past one node without a path: none");
}

static void test_precision(void) {
    const strategy_info_t *infos[16];
    strategy_infos(infos, 16);
    study_runs_t s;
    char err[600];
    int rc = study_load(&s, FIXTURES "/study_math.csv", infos, err, sizeof err);
    EXPECT(rc == 0, "study_load: %s", err);
    if (rc) return;
    precision_t t;
    EXPECT(precision_table(&s, 0, &t) == 0 && t.nm == 2 && strcmp(t.math[0], "tf32") == 0 &&
               strcmp(t.math[1], "bf16") == 0 && t.ref == 0 && t.grads,
           "tf32 against bf16, reference tf32, grads apart");
    int found = 0;
    for (int i = 0; i < t.nrow; i++) {
        const precision_row_t *w = &t.row[i];
        const study_run_t *u = &s.run[w->pair];
        /* test_report.sh's hand values: nccl 2 GPUs 256/GPU bf16 gradients: 0.785 s (tf32), 0.430 s (bf16), ratio
         * 0.430/0.785, speedups 1.49/0.785 and 0.80/0.43, communication 0.112134/6.709402 ms = 1.67 % (exposed
         * 0.0672804: 1.00 %) and 0.112134/3.675214 = 3.05 % (1.83 %), accuracy 90.7 and 90.4 % */
        if (strcmp(u->strategy, "nccl") == 0 && u->gpus == 2 && u->line_batch == 256 && strcmp(u->gd, "bf16") == 0) {
            found++;
            EXPECT(near(w->t[0], 0.785, 1e-9) && near(w->t[1], 0.430, 1e-9), "epochs %g %g", w->t[0], w->t[1]);
            EXPECT(near(w->ratio[1], 0.430 / 0.785, 1e-9) && w->ratio[0] == 1, "ratio %g", w->ratio[1]);
            EXPECT(near(w->speedup[0], 1.49 / 0.785, 1e-9) && near(w->speedup[1], 0.80 / 0.43, 1e-9) &&
                       near(w->efficiency[1], 100 * 0.80 / 0.43 / 2, 1e-9),
                   "speedups %g %g", w->speedup[0], w->speedup[1]);
            EXPECT(near(w->comm[0], 100 * 0.112134 / 6.709402, 1e-5) &&
                       near(w->exposed[0], 100 * 0.0672804 / 6.709402, 1e-5) &&
                       near(w->comm[1], 100 * 0.112134 / 3.675214, 1e-5),
                   "communication %g (%g), %g", w->comm[0], w->exposed[0], w->comm[1]);
            EXPECT(near(w->accuracy[0], 90.7, 1e-3) && near(w->accuracy[1], 90.4, 1e-3), "accuracy %g %g",
                   w->accuracy[0], w->accuracy[1]);
        }
        if (strcmp(u->strategy, "single") == 0 && u->line_batch == 256) {
            found++;
            EXPECT(near(w->t[0], 1.49, 1e-9) && near(w->t[1], 0.80, 1e-9) && w->speedup[0] == 1 && w->speedup[1] == 1 &&
                       isnan(w->comm[0]),
                   "single: 1.49, 0.80, speedups 1");
        }
    }
    EXPECT(found == 2, "rows found: %d", found);
    precision_free(&t);
    study_free(&s);
}

int main(void) {
    test_fit();
    char dir[] = "/tmp/test_report_model.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_fit_of(dir);
    test_scratch_remove(dir);
    test_projection();
    test_precision();
    return test_summary();
}
