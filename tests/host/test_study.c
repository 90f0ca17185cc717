/* test_study.c — one definition of a configuration, of "complete", of the run that stands for a configuration, of a
 * steady median and of T1 (study/key.h, study/study.h), checked on numbers: directly on keys and progress, and on a
 * study CSV written here and read by the report (study/table.h): a setup failure retried ok by --resume is one
 * configuration (its ok run), a diverged run and an oom run stand as they ended, a run killed part-way gives way to
 * its re-run, seeds and learning rates are configurations of their own; medians of the steady epochs only; T1 is
 * single's fastest at the same batch and math. Synthetic-data rows (no accuracy) have throughput and no accuracy. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "study/key.h"
#include "study/study.h"
#include "study/table.h"
#include "study/target.h"
#include "test.h"

#include <string.h>

static void key(study_key_t *k, const char *cells[RESULTS_KEY_FIELDS]) {
    memset(k, 0, sizeof *k);
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++) snprintf(k->cell[i], RESULTS_CELL_MAX, "%s", cells[i]);
}

static void test_key(void) {
    /* strategy model dataset seed gpus global_batch lr momentum weight_decay math grad_dtype init lr_schedule
     * warmup_epochs lr_epochs optimizer gns_every micro_batches schedule steps nodes nccl_transport nccl_algo */
    const char *ok[] = {"nccl", "resnet18", "fashion-mnist", "1", "2", "512", "0.2", "0.9", "0.0005", "tf32", "fp32",
                        "normal", "cosine", "1", "10", "sgd", "0", "", "", "117", "1", "default", "Ring"};
    const char *setup[] = {"nccl", "resnet18", "fashion-mnist", "1", "2", "512", "0.2", "0.9", "0.0005", "tf32",
                           "fp32", "normal", "cosine", "1", "10", "sgd", "0", "", "", "", "1", "default", ""};
    const char *seed2[] = {"nccl", "resnet18", "fashion-mnist", "2", "2", "512", "0.2", "0.9", "0.0005", "tf32",
                           "fp32", "normal", "cosine", "1", "10", "sgd", "0", "", "", "117", "1", "default", "Ring"};
    const char *lr4[] = {"nccl", "resnet18", "fashion-mnist", "1", "2", "512", "0.4", "0.9", "0.0005", "tf32", "fp32",
                         "normal", "cosine", "1", "10", "sgd", "0", "", "", "117", "1", "default", "Ring"};
    const char *tree[] = {"nccl", "resnet18", "fashion-mnist", "1", "2", "512", "0.2", "0.9", "0.0005", "tf32",
                          "fp32", "normal", "cosine", "1", "10", "sgd", "0", "", "", "117", "1", "default", "Tree"};
    const char *step[] = {"nccl", "resnet18", "fashion-mnist", "1", "2", "512", "0.2", "0.9", "0.0005", "tf32",
                          "fp32", "normal", "step", "1", "10", "sgd", "0", "", "", "117", "1", "default", "Ring"};
    const char *lars[] = {"nccl", "resnet18", "fashion-mnist", "1", "2", "512", "0.2", "0.9", "0.0005", "tf32",
                          "fp32", "normal", "cosine", "1", "10", "lars", "0", "", "", "117", "1", "default", "Ring"};
    const char *old[] = {"nccl", "resnet18", "fashion-mnist", "1", "2", "512", "0.2", "0.9", "0.0005", "tf32", "fp32",
                         "normal", "", "", "", "", "", "", "", "117", "1", "default", "Ring"};
    const char *gns[] = {"nccl", "resnet18", "fashion-mnist", "1", "2", "512", "0.2", "0.9", "0.0005", "tf32", "fp32",
                         "normal", "cosine", "1", "10", "sgd", "25", "", "", "117", "1", "default", "Ring"};
    study_key_t a, b, c, d, e, f, g, h, k;
    key(&a, ok);
    key(&b, setup);
    key(&c, seed2);
    key(&d, lr4);
    key(&e, tree);
    key(&f, step);
    key(&g, lars);
    key(&h, old);
    EXPECT(!study_key_match(&f, &g) && !study_key_match(&a, &f), "another schedule or optimizer is another "
           "configuration");
    EXPECT(study_key_match(&a, &h), "a CSV from before schedules (no such cells) matches any");
    key(&k, gns);
    EXPECT(!study_key_match(&a, &k) && study_key_match(&h, &k), "a run that measured the noise scale is another "
           "configuration than one that did not (--resume runs it)");
    EXPECT(study_key_match(&a, &b) && study_key_match(&b, &a),
           "a setup failure (no steps, no algorithm) matches its retry");
    EXPECT(!study_key_match(&a, &c), "another seed is another configuration");
    EXPECT(!study_key_match(&a, &d), "another learning rate is another configuration");
    EXPECT(!study_key_match(&a, &e), "another NCCL algorithm is another configuration");
    EXPECT(study_key_match(&b, &e), "an unknown algorithm matches any");
    study_key_t m = b;
    study_key_merge(&m, &a);
    EXPECT(strcmp(m.cell[RESULTS_KEY_steps], "117") == 0 && strcmp(m.cell[RESULTS_KEY_nccl_algo], "Ring") == 0, "merge fills the empty cells");
    EXPECT(!study_key_match(&m, &e), "once merged, the configuration knows its algorithm");
    /* The wildcard cells are the key columns RESULTS_SCHEMA flags WILD: these five (doc/csv.md), and no WILD column
     * outside the key. */
    char wild[256] = "";
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++)
        if (study_key_wildcard(i))
            snprintf(wild + strlen(wild), sizeof wild - strlen(wild), "%s ", study_key_columns[i]);
    EXPECT(strcmp(wild, "grad_dtype lr_schedule warmup_epochs lr_epochs optimizer gns_every micro_batches schedule steps nccl_algo ") == 0, "wildcards: %s", wild);
    int n_wild = 0;
    for (int c = 0; c < study_ncolumns(); c++) n_wild += (study_schema[c].flags & RESULTS_F_WILD) != 0;
    EXPECT(n_wild == 10, "every WILD column is a key column (%d flagged)", n_wild);
}

static study_progress_t progress(const int *epochs, const char *const *status, int n) {
    study_progress_t p;
    study_progress_init(&p);
    for (int i = 0; i < n; i++) study_progress_add(&p, epochs[i], status[i]);
    return p;
}

static void test_complete(void) {
    const int e0[] = {0}, e123[] = {1, 2, 3}, e12[] = {1, 2}, e1[] = {1};
    const char *failed[] = {"failed"}, *ok3[] = {"ok", "ok", "ok"}, *div[] = {"ok", "diverged"}, *oom[] = {"oom"},
               *ok1[] = {"ok"}, *timeout[] = {"ok", "timeout"}, *differ[] = {"ok", "replicas-differ"},
               *intr[] = {"ok", "interrupted"}, *fail_intr[] = {"ok", "failed", "interrupted"};
    const int e122[] = {1, 2, 2};
    study_progress_t setup = progress(e0, failed, 1), full = progress(e123, ok3, 3), diverged = progress(e12, div, 2),
                     oomp = progress(e0, oom, 1), killed = progress(e1, ok1, 1), to = progress(e12, timeout, 2),
                     rd = progress(e12, differ, 2), stopped = progress(e12, intr, 2),
                     mpi = progress(e122, fail_intr, 3);
    EXPECT(!study_complete(&setup, 3, 1) && study_complete(&setup, 3, 0), "failed: complete only without retry_failed");
    EXPECT(study_complete(&full, 3, 1) && !study_complete(&full, 5, 1), "ok: complete for the epochs it trained");
    EXPECT(study_complete(&diverged, 3, 1) && diverged.epochs == 2, "diverged: complete (re-running repeats it)");
    EXPECT(study_complete(&oomp, 3, 1), "oom: complete");
    EXPECT(!study_complete(&killed, 3, 1) && !study_complete(&killed, 3, 0), "killed part-way: not complete");
    EXPECT(!study_complete(&to, 3, 1) && study_complete(&to, 3, 0) && to.epochs == 1,
           "timeout ends like failed; its epochs are the ok ones");
    EXPECT(!study_complete(&stopped, 3, 0) && !study_complete(&stopped, 3, 1) && stopped.epochs == 1,
           "interrupted: no verdict, not complete");
    EXPECT(mpi.faulted && strcmp(mpi.status, "interrupted") == 0 && study_complete(&mpi, 3, 0) &&
           !study_complete(&mpi, 3, 1), "a failed row then rank 0's interrupted one (mpirun): faulted");
    EXPECT(!study_complete(&rd, 3, 1) && study_complete(&rd, 3, 0), "replicas-differ ends like failed: %s", rd.status);
    EXPECT(study_is_fault("failed") && study_is_fault("timeout") && study_is_fault("replicas-differ") &&
           !study_is_fault("interrupted") && !study_is_fault("oom") && !study_is_fault("ok") && !study_is_fault(NULL),
           "faults: failed, timeout, replicas-differ only");
    EXPECT(strcmp(study_verdict(&mpi), "failed") == 0 && strcmp(study_verdict(&stopped), "interrupted") == 0 &&
           strcmp(study_verdict(&to), "timeout") == 0, "verdicts: %s %s %s", study_verdict(&mpi),
           study_verdict(&stopped), study_verdict(&to));

    /* the run that stands for a configuration */
    const study_progress_t *retried[] = {&setup, &full};
    EXPECT(study_pick(retried, 2) == 1, "a setup failure gives way to its ok retry");
    const study_progress_t *resumed[] = {&killed, &full};
    EXPECT(study_pick(resumed, 2) == 1, "a run killed part-way gives way to its re-run");
    const study_progress_t *after[] = {&full, &killed};
    EXPECT(study_pick(after, 2) == 0, "a later run that trained fewer epochs does not replace a complete one");
    const study_progress_t *twice[] = {&diverged, &diverged};
    EXPECT(study_pick(twice, 2) == 1, "the latest of two complete runs");
    const study_progress_t *alone[] = {&setup};
    EXPECT(study_pick(alone, 1) == 0, "a configuration that only failed is its failure");
    EXPECT(study_pick(alone, 0) == -1, "no runs: none");
}

static void test_median_t1(void) {
    double a[] = {3, 1, 2}, b[] = {4, 1, 3, 2}, c[] = {7};
    EXPECT(study_median(a, 3) == 2 && study_median(b, 4) == 2.5 && study_median(c, 1) == 7, "medians");
    EXPECT(isnan(study_median(NULL, 0)), "no value: NAN");
    /* the registry's properties, asked through the strategies' own entries */
    const strategy_info_t *infos[16];
    strategy_infos(infos, 16);
    const strategy_info_t *single = strategy_info_find(infos, "single"), *nccl = strategy_info_find(infos, "nccl"),
                          *pipeline = strategy_info_find(infos, "pipeline");
    EXPECT(single && nccl && pipeline, "the registry has single, nccl and pipeline");
    study_t1_t t1;
    study_t1_init(&t1);
    study_t1_offer(&t1, nccl, 0, 1.0);
    study_t1_offer(&t1, NULL, 5, 0.5);
    EXPECT(t1.run < 0, "only the reference is T1, not another strategy nor one not known");
    study_t1_offer(&t1, single, 1, 2.1);
    study_t1_offer(&t1, single, 2, NAN);
    study_t1_offer(&t1, single, 3, 2.0);
    study_t1_offer(&t1, single, 4, 2.0);
    EXPECT(t1.run == 3 && t1.t == 2.0, "the fastest single, the first on a tie: run %d, %g", t1.run, t1.t);
    EXPECT(study_is_pipeline(pipeline, 0) && !study_is_pipeline(nccl, 0) && !study_is_pipeline(single, 0),
           "pipeline by property");
    EXPECT(study_is_pipeline(NULL, 4) && !study_is_pipeline(NULL, 0) && !study_is_pipeline(NULL, -1),
           "a strategy not known: a pipeline where micro_batches says so");
    EXPECT(study_t1_global(pipeline, 0) && !study_t1_global(nccl, 0) && study_t1_global(NULL, 4) &&
               !study_t1_global(NULL, -1),
           "T1 at the global batch: the pipeline's property, or micro_batches for one not known");
    EXPECT(study_is_reference(single) && !study_is_reference(nccl) && !study_is_reference(NULL), "reference");
    EXPECT(study_line_batch(1, 256, 1024) == 1024 && study_line_batch(0, 256, 1024) == 256, "line batch");
}

/* ---- a study CSV read by the report */

static FILE *csv;
static void header(void) {
    fputs("run_id,timestamp,strategy,model,dataset,seed,gpus,global_batch,per_gpu_batch,lr,momentum,weight_decay,math,"
          "grad_dtype,init,micro_batches,schedule,steps,nodes,nccl_transport,nccl_algo,epoch,phase,epoch_s,step_ms,"
          "images_per_s,test_acc,status\n",
          csv);
}
/* One row; steps and algo "" for a setup row. */
static void row(const char *id, const char *ts, const char *strategy, const char *dataset, int seed, int gpus,
                int per_gpu, const char *lr, const char *steps, const char *algo, int epoch, double epoch_s,
                const char *acc, const char *status) {
    fprintf(csv, "%s,%s,%s,resnet18,%s,%d,%d,%d,%d,%s,0.9,0.0005,tf32,%s,normal,,,%s,1,%s,%s,%d,%s,", id, ts, strategy,
            dataset, seed, gpus, gpus * per_gpu, per_gpu, lr, strcmp(strategy, "single") ? "fp32" : "", steps,
            strcmp(strategy, "nccl") ? "" : "default", algo, epoch,
            epoch == 0   ? "setup"
            : epoch == 1 ? "warmup"
                         : "steady");
    if (epoch_s > 0)
        fprintf(csv, "%.10g,%.10g,%.10g", epoch_s, epoch_s * 1e3 / 100, 100 * per_gpu * gpus / epoch_s);
    else
        fputs(",,", csv);
    fprintf(csv, ",%s,%s\n", acc, status);
}
/* A run of epochs 1..n: warm-up 9 s, then the steady times given; the last row ends with status. */
static void run(const char *id, const char *ts, const char *strategy, const char *dataset, int seed, int gpus,
                int per_gpu, const char *lr, const double *steady, int n, const char *status, int with_acc) {
    row(id, ts, strategy, dataset, seed, gpus, per_gpu, lr, "100", strcmp(strategy, "nccl") ? "" : "Ring", 1, 9,
        with_acc ? "0.5" : "", n == 0 ? status : "ok");
    for (int i = 0; i < n; i++)
        row(id, ts, strategy, dataset, seed, gpus, per_gpu, lr, "100", strcmp(strategy, "nccl") ? "" : "Ring", i + 2,
            steady[i], with_acc ? (i + 1 == n ? "0.9" : "0.8") : "", i + 1 == n ? status : "ok");
}

static const study_run_t *find(const study_runs_t *s, const char *id) {
    for (int i = 0; i < s->nr; i++)
        if (strcmp(s->run[i].run_id, id) == 0) return &s->run[i];
    return NULL;
}

static void test_study_csv(const char *dir) {
    char path[600], err[600];
    snprintf(path, sizeof path, "%s/study.csv", dir);
    csv = fopen(path, "w");
    if (!csv) {
        EXPECT(0, "cannot write %s", path);
        return;
    }
    header();
    const double a[] = {2.0, 2.2}, e[] = {1.9, 2.1}, f[] = {2.5, 2.6, 2.4}, b[] = {1.2, 1.0}, c[] = {1.3},
                 g[] = {0.7, 0.8}, s[] = {3.0, 3.2};
    run("A", "2026-01-05T08:00:00Z", "single", "fashion-mnist", 1, 1, 256, "0.1", a, 2, "ok", 1);
    /* B: failed at setup (no steps, no algorithm), then --resume's retry ended ok */
    row("B1", "2026-01-05T08:01:00Z", "nccl", "fashion-mnist", 1, 2, 256, "0.2", "", "", 0, -1, "", "failed");
    run("C", "2026-01-05T08:02:00Z", "nccl", "fashion-mnist", 1, 2, 256, "0.4", c, 1, "diverged", 1);
    row("D", "2026-01-05T08:03:00Z", "single", "fashion-mnist", 1, 1, 32768, "0.1", "", "", 0, -1, "", "oom");
    run("E", "2026-01-05T08:04:00Z", "single", "fashion-mnist", 2, 1, 256, "0.1", e, 2, "ok", 1);
    run("F", "2026-01-05T08:05:00Z", "single", "fashion-mnist", 1, 1, 256, "0.05", f, 3, "ok", 1);
    run("G1", "2026-01-05T08:06:00Z", "nccl", "fashion-mnist", 1, 4, 256, "0.4", g, 0, "ok",
        1); /* killed after epoch 1 */
    run("B2", "2026-01-05T09:00:00Z", "nccl", "fashion-mnist", 1, 2, 256, "0.2", b, 2, "ok", 1);
    run("G2", "2026-01-05T09:01:00Z", "nccl", "fashion-mnist", 1, 4, 256, "0.4", g, 2, "ok", 1);
    /* synthetic data: throughput, no accuracy */
    run("S", "2026-01-05T09:02:00Z", "single", "synthetic", 1, 1, 256, "0.1", s, 2, "ok", 0);
    fclose(csv);

    const strategy_info_t *infos[16];
    strategy_infos(infos, 16);
    study_runs_t st;
    int rc = study_load(&st, path, infos, err, sizeof err);
    EXPECT(rc == 0, "study_load: %s", err);
    if (rc) return;
    EXPECT(st.allruns == 10 && st.nr == 8 && st.leftout == 2, "10 runs, 8 configurations, 2 left out: %d %d %d",
           st.allruns, st.nr, st.leftout);
    EXPECT(!find(&st, "B1") && find(&st, "B2"), "the failed setup is replaced by its ok retry");
    EXPECT(!find(&st, "G1") && find(&st, "G2"), "the killed run is replaced by its re-run");
    const study_run_t *r;
    EXPECT((r = find(&st, "B2")) && strcmp(r->fstat, "ok") == 0 && r->med[RESULTS_COL_epoch_s] == 1.1, "B: ok, median 1.1");
    EXPECT((r = find(&st, "C")) && strcmp(r->fstat, "diverged") == 0 && r->last == 2 && r->med[RESULTS_COL_epoch_s] == 1.3,
           "C: diverged at epoch 2");
    EXPECT((r = find(&st, "D")) && strcmp(r->fstat, "oom") == 0 && r->last == 0 && isnan(r->med[RESULTS_COL_epoch_s]), "D: oom at setup");
    EXPECT((r = find(&st, "A")) && fabs(r->med[RESULTS_COL_epoch_s] - 2.1) < 1e-12 && fabs(r->facc - 90) < 1e-9,
           "A: median of the steady "
           "epochs only (2.1; warm-up 9 s left out), final accuracy 90 %%");
    EXPECT((r = find(&st, "F")) && r->med[RESULTS_COL_epoch_s] == 2.5, "F: median of three");
    EXPECT(st.ng == 2, "two groups (fashion-mnist, synthetic): %d", st.ng);
    int t1 = study_t1_run(&st, 0, 256, "tf32");
    EXPECT(t1 >= 0 && strcmp(st.run[t1].run_id, "E") == 0 && st.run[t1].med[RESULTS_COL_epoch_s] == 2.0,
           "T1 at 256/GPU: single's fastest over seeds and learning rates (E, 2.0 s)");
    EXPECT(study_t1_run(&st, 0, 512, "tf32") < 0, "no T1 at another batch");
    EXPECT(study_t1_run(&st, 0, 256, "bf16") < 0, "no T1 in another math");
    EXPECT((r = find(&st, "S")) && isnan(r->facc) && study_steady_count(r, RESULTS_COL_test_acc) == 0 &&
               fabs(r->med[RESULTS_COL_epoch_s] - 3.1) < 1e-12 &&
               fabs(r->med[RESULTS_COL_images_per_s] - (25600 / 3.0 + 25600 / 3.2) / 2) < 1e-6,
           "synthetic: throughput and no accuracy (imed %g)", r ? r->med[RESULTS_COL_images_per_s] : 0);
    EXPECT(!st.unknown.n && (r = find(&st, "B2")) && r->info == strategy_info_find(infos, "nccl"),
           "every strategy known, each run with its properties");
    study_free(&st);
    /* read by a binary whose registry lacks single: its rows are reported, not as the reference */
    const strategy_info_t *no_single[16];
    int n = 0;
    for (int i = 0; infos[i]; i++)
        if (!infos[i]->reference) no_single[n++] = infos[i];
    no_single[n] = NULL;
    rc = study_load(&st, path, no_single, err, sizeof err);
    EXPECT(rc == 0 && st.nr == 8 && st.unknown.n == 1 && strcmp(st.unknown.v[0], "single") == 0, "single not known: %d", st.unknown.n);
    EXPECT(rc == 0 && (r = find(&st, "E")) && !r->info && !r->pipe && r->line_batch == 256, "E: no properties, a replica");
    EXPECT(rc == 0 && study_t1_run(&st, 0, 256, "tf32") < 0, "no reference known: no T1");
    if (rc == 0) study_free(&st);
}

/* A run's rows for study/target.h: epochs of test accuracy acc[e] and the noise scale's norms, epoch 4 diverged. */
static void target_rows(study_row_t *w, const study_row_t **p) {
    const double acc[4] = {0.90, 0.91, 0.92, 0.10}, small[4] = {3.0, 3.0, INFINITY, 3.0}, big[4] = {2.0, 2.0, 2.0, 2.0};
    for (int e = 0; e < 4; e++) {
        study_row_init(&w[e]);
        w[e].epoch = e + 1;
        w[e].status = e == 3 ? "diverged" : "ok";
        w[e].test_acc = acc[e];
        w[e].stats.gns_small_sq = small[e], w[e].stats.gns_big_sq = big[e];
        w[e].stats.gns_b_small = 32, w[e].stats.gns_b_big = 64;
        p[e] = &w[e];
    }
}

/* Time to target's neighbours: a diverged epoch is no seed's noise, and an epoch whose norms overflowed (or that did
 * not end ok) is left out of the noise scale instead of making the run's estimate inf. */
static void test_target_rows(void) {
    study_row_t w[4];
    const study_row_t *p[4];
    target_rows(w, p);
    double lo, hi, g2, trace, b;
    study_acc_spread(p, 4, 3, &lo, &hi);
    EXPECT(lo == 0.90 && hi == 0.92, "spread of the last 3 ok epochs: %g-%g, want 0.90-0.92", lo, hi);
    /* epochs 1 and 2 only: small 3, big 2 at 32 and 64: |G|^2 = (64 x 2 - 32 x 3) / 32 = 1, tr = 1 / (1/32 - 1/64) = 64 */
    EXPECT(study_noise_scale(p, 4, &g2, &trace, &b) == 0 && fabs(g2 - 1) < 1e-12 && fabs(trace - 64) < 1e-9 &&
               fabs(b - 64) < 1e-9,
           "noise scale without the overflowed and the diverged epoch: |G|^2 %g, tr %g, B %g", g2, trace, b);
}

int main(void) {
    test_key();
    test_target_rows();
    test_complete();
    test_median_t1();
    char dir[] = "/tmp/test_study.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_study_csv(dir);
    test_scratch_remove(dir);
    return test_summary();
}
