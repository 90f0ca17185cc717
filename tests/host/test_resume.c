/* test_resume.c — --resume's scan of an existing CSV and its skip decision: complete, killed, diverged, oom
 * and failed runs; the wildcard cells of data-parallel and setup-failure rows; --steps and --epochs changes;
 * math and gradient dtype as parts of a configuration; a line cut by a kill; a foreign or older header. */
#define _POSIX_C_SOURCE 200809L
#include "study/writer.h"
#include "study/runs.h"
#include "study/reader.h"
#include "test.h"

#include <string.h>
#include <unistd.h>

static char tmp_root[256];

static const study_env_t env = {.gpu_name = "NVIDIA H200, \"test\"", .driver = "580", .cuda = "13.0",
                                  .cudnn = "9", .nccl = "2.27", .host = "h", .git_commit = "abc"};

/* A data-parallel row of the given run; the pipeline columns are empty, as the nccl strategy writes them. */
static study_row_t row_of(const char *run_id, const char *strategy, int gpus, double lr, int epoch,
                          const char *status) {
    study_row_t r;
    study_row_init(&r);
    r.strategy = strategy, r.model = "resnet18", r.dataset = "fashion-mnist", r.math = "tf32", r.init = "normal";
    r.seed = 1, r.gpus = gpus, r.global_batch = 256 * gpus, r.per_gpu_batch = 256, r.lr = lr, r.momentum = 0;
    r.weight_decay = 0, r.epoch = epoch, r.phase = epoch <= 1 ? "warmup" : "steady";
    r.stats.steps = 60000 / (256 * gpus), r.stats.epoch_s = 1.0, r.images_per_s = 60000, r.stats.step_ms = 4;
    r.stats.train_loss = 0.5, r.stats.train_acc = 0.8, r.test_acc = 0.8, r.status = status;
    r.nodes = 1, r.gpus_per_node = gpus, r.env = env;
    if (strcmp(strategy, "nccl") == 0) snprintf(r.env.nccl_transport, sizeof r.env.nccl_transport, "default");
    snprintf(r.run_id, sizeof r.run_id, "%s", run_id);
    snprintf(r.timestamp, sizeof r.timestamp, "2026-01-05T10:00:%02dZ", epoch);
    return r;
}

/* The key scaling.c builds before a run: every option's value, micro-batches and schedule included. */
static study_key_t query(const char *strategy, int gpus, double lr, int micro_batches, int steps) {
    study_row_t r = row_of("", strategy, gpus, lr, 0, NULL);
    r.stats.micro_batches = micro_batches;
    snprintf(r.stats.schedule, sizeof r.stats.schedule, "gpipe");
    r.stats.steps = steps;
    study_key_t k;
    study_key_of_row(&r, &k);
    return k;
}

/* Sets key cell `name` (a column of study_key_columns) to value. */
static void set_cell(study_key_t *k, const char *name, const char *value) {
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++)
        if (strcmp(study_key_columns[i], name) == 0) snprintf(k->cell[i], sizeof k->cell[i], "%s", value);
}

static void write_rows(const char *path, const study_row_t *rows, int n) {
    study_csv_t r;
    char err[512];
    EXPECT(study_open(&r, path, err, sizeof err) == 0, "open %s: %s", path, err);
    for (int i = 0; i < n; i++) EXPECT(study_write(&r, &rows[i], err, sizeof err) == 0, "write: %s", err);
    study_close(&r);
}

/* Writes rows to tmp_root/name and scans that file into s, which must find `runs` runs. */
static void write_and_scan(const char *name, const study_row_t *rows, int n, int runs, study_scan_t *s) {
    char path[600], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", tmp_root, name);
    write_rows(path, rows, n);
    EXPECT(study_scan(path, s, err, sizeof err) == 0 && s->n == runs, "scan %s: %s (%d runs, want %d)", name, err,
           s->n, runs);
}

static void test_key(void) {
    study_key_t k = query("nccl", 4, 0.1 * 3, 1, 58);
    int col = -1;
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++)
        if (strcmp(study_key_columns[i], "lr") == 0) col = i;
    EXPECT(col >= 0 && strcmp(k.cell[col], "0.3") == 0, "lr 0.1*3 keys as the CSV writes it: '%s'",
           col >= 0 ? k.cell[col] : "?");
    EXPECT(strcmp(k.cell[0], "nccl") == 0 && strcmp(k.cell[4], "4") == 0 && strcmp(k.cell[5], "1024") == 0,
           "strategy, gpus, global batch: %s %s %s", k.cell[0], k.cell[4], k.cell[5]);
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++) {
        int found = 0;
        for (int c = 0; study_columns[c]; c++) found |= strcmp(study_columns[c], study_key_columns[i]) == 0;
        EXPECT(found, "key column %s is a CSV column", study_key_columns[i]);
    }
}

static void test_scan(void) {
    char path[512], err[512];
    study_scan_t s;
    snprintf(path, sizeof path, "%s/none.csv", tmp_root);
    EXPECT(study_scan(path, &s, err, sizeof err) == 0 && s.n == 0 && s.rows == 0, "missing file: empty scan");
    study_key_t k = query("nccl", 2, 0.2, 1, 117);
    int best = -1;
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0 && best == 0, "nothing done in an empty scan");
    study_scan_free(&s);

    snprintf(path, sizeof path, "%s/study.csv", tmp_root);
    study_row_t rows[32];
    int n = 0;
    /* complete: nccl 2 GPUs lr 0.2, 3 epochs */
    for (int e = 1; e <= 3; e++) rows[n++] = row_of("A-0-1", "nccl", 2, 0.2, e, "ok");
    /* killed after epoch 1: nccl 4 GPUs lr 0.4 */
    rows[n++] = row_of("A-1-1", "nccl", 4, 0.4, 1, "ok");
    /* diverged at epoch 2: naive 2 GPUs lr 1.6 */
    rows[n++] = row_of("A-2-1", "naive", 2, 1.6, 1, "ok");
    rows[n++] = row_of("A-2-1", "naive", 2, 1.6, 2, "diverged");
    /* setup failures: oom (naive 4) and failed (single 2) at epoch 0, no steps */
    study_row_t oom = row_of("A-3-1", "naive", 4, 0.4, 0, "oom");
    oom.stats.steps = -1; oom.phase = "setup"; oom.stats.epoch_s = oom.stats.step_ms = oom.stats.train_loss = oom.test_acc = -1;
    rows[n++] = oom;
    study_row_t failed = oom;
    snprintf(failed.run_id, sizeof failed.run_id, "A-4-1");
    failed.strategy = "single";
    failed.gpus = 2;
    failed.lr = 0.2;
    failed.global_batch = 512;
    failed.status = "failed";
    rows[n++] = failed;
    /* pipeline, 4 micro-batches, complete */
    for (int e = 1; e <= 3; e++) {
        study_row_t p = row_of("A-5-1", "pipeline", 2, 0.2, e, "ok");
        p.stats.stages = 2; p.stats.micro_batches = 4; strcpy(p.stats.schedule, "gpipe"); strcpy(p.stats.split, "0,9");
        rows[n++] = p;
    }
    write_rows(path, rows, n);
    /* A later sweep: the killed configuration re-run under a new run id, cut short again by a kill mid-row. */
    study_row_t again = row_of("B-1-2", "nccl", 4, 0.4, 1, "ok");
    write_rows(path, &again, 1);
    FILE *f = fopen(path, "a");
    fputs("B-1-2,2026-01-05T11:00:02Z,nccl,resnet18,fashion-mnist,1,4,1024,256,0.4,0,0,tf32,normal,2,ste", f);
    fclose(f);

    EXPECT(study_scan(path, &s, err, sizeof err) == 0, "scan: %s", err);
    EXPECT(s.rows == n + 1, "rows read: %d want %d", s.rows, n + 1);
    EXPECT(s.bad_rows == 1, "the cut line is skipped: %d", s.bad_rows);
    EXPECT(s.n == 7, "runs: %d", s.n);

    k = query("nccl", 2, 0.2, 1, 117);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1 && best == 3, "complete run skipped (best %d)", best);
    EXPECT(study_scan_done(&s, &k, 5, 0, &best) == 0 && best == 3, "--epochs 5 runs it again (best %d)", best);
    k = query("nccl", 2, 0.2, 1, 20);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0 && best == 0, "another --steps is another configuration");
    k = query("nccl", 4, 0.1 * 4, 1, 58);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0 && best == 1, "killed twice: runs again (best %d)", best);
    EXPECT(study_scan_done(&s, &k, 1, 0, &best) == 1, "--epochs 1: epoch 1 is complete");
    k = query("naive", 2, 1.6, 1, 117);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1 && best == 2, "diverged: skipped (best %d)", best);
    k = query("naive", 4, 0.4, 1, 58);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1 && best == 0, "oom at setup: skipped, whatever the steps");
    k = query("single", 2, 0.2, 1, 117);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "failed at setup: the sweep goes on past it");
    EXPECT(study_scan_done(&s, &k, 3, 1, &best) == 0, "failed at setup, --retry-failed: tried again");
    k = query("pipeline", 2, 0.2, 4, 117);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "pipeline M=4 complete");
    k = query("pipeline", 2, 0.2, 8, 117);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0, "pipeline M=8 is another configuration");
    k = query("nccl", 2, 0.2, 1, 117);
    memcpy(k.cell[1], "lenet", 6);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0, "another model is another configuration");
    k = query("nccl", 4, 0.1 * 3, 1, 58);
    set_cell(&k, "nccl_transport", "NCCL_P2P_DISABLE=1;NCCL_SHM_DISABLE=1");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0, "the complete run over another NCCL transport is another one");
    k = query("nccl", 4, 0.1 * 3, 1, 58);
    set_cell(&k, "nodes", "2");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0, "the complete run on 2 nodes is another configuration");
    study_scan_free(&s);

    /* Appending after the cut line (study_open repairs it) keeps the file readable. */
    again = row_of("B-1-2", "nccl", 4, 0.4, 2, "ok");
    write_rows(path, &again, 1);
    EXPECT(study_scan(path, &s, err, sizeof err) == 0 && s.bad_rows == 1, "scan after repair: %s", err);
    k = query("nccl", 4, 0.4, 1, 58);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0 && best == 2, "epoch 2 of the re-run counted: %d", best);
    study_scan_free(&s);

    /* A foreign header is an error naming the column; an empty file is an empty scan. */
    snprintf(path, sizeof path, "%s/other.csv", tmp_root);
    f = fopen(path, "w");
    fputs("run_id,timestamp,strategy,modelx\n", f);
    fclose(f);
    EXPECT(study_scan(path, &s, err, sizeof err) == 2 && strstr(err, "column 4: 'modelx' vs 'model'"),
           "foreign header: %s", err);
    f = fopen(path, "w");
    fclose(f);
    EXPECT(study_scan(path, &s, err, sizeof err) == 0 && s.n == 0, "empty file: %s", err);
    study_scan_free(&s);
}

/* The key of a run at the given math and gradient dtype ("" for a strategy without a gradient reduction). */
static study_key_t query_prec(const char *strategy, const char *math, const char *grad_dtype) {
    study_row_t r = row_of("", strategy, 2, 0.2, 0, NULL);
    r.math = math;
    r.grad_dtype = grad_dtype;
    r.stats.steps = 117;
    study_key_t k;
    study_key_of_row(&r, &k);
    return k;
}

static study_row_t row_prec(const char *run_id, const char *strategy, const char *math, const char *grad_dtype,
                            int epoch) {
    study_row_t r = row_of(run_id, strategy, 2, 0.2, epoch, "ok");
    r.math = math;
    r.grad_dtype = grad_dtype;
    return r;
}

static void test_precision(void) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/precision.csv", tmp_root);
    study_row_t rows[16];
    int n = 0;
    for (int e = 1; e <= 3; e++) rows[n++] = row_prec("P-0-1", "nccl", "tf32", "fp32", e);
    for (int e = 1; e <= 3; e++) rows[n++] = row_prec("P-1-1", "nccl", "bf16", "bf16", e);
    rows[n++] = row_prec("P-2-1", "nccl", "bf16", "fp32", 1);             /* killed after epoch 1 */
    for (int e = 1; e <= 3; e++) rows[n++] = row_prec("P-3-1", "single", "bf16", "", e);
    for (int e = 1; e <= 3; e++) rows[n++] = row_prec("P-4-1", "naive", "tf32", "", e);   /* empty: any dtype */
    write_rows(path, rows, n);
    study_scan_t s;
    int best = -1;
    EXPECT(study_scan(path, &s, err, sizeof err) == 0 && s.n == 5 && s.bad_rows == 0, "scan: %s (%d runs)", err, s.n);

    int col = -1;
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++)
        if (strcmp(study_key_columns[i], "grad_dtype") == 0) col = i;
    study_key_t k = query_prec("nccl", "bf16", "bf16");
    EXPECT(col >= 0 && strcmp(k.cell[col], "bf16") == 0, "the key holds the gradient dtype: '%s'",
           col >= 0 ? k.cell[col] : "?");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1 && best == 3, "nccl bf16/bf16 complete");
    k = query_prec("nccl", "tf32", "fp32");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "nccl tf32/fp32 complete");
    k = query_prec("nccl", "tf32", "bf16");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0 && best == 0, "another gradient dtype is another configuration");
    k = query_prec("nccl", "bf16", "fp32");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0 && best == 1, "killed bf16/fp32 runs again (best %d)", best);
    k = query_prec("single", "bf16", "");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "single bf16 complete");
    k = query_prec("single", "tf32", "");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0 && best == 0, "another math is another configuration");
    k = query_prec("naive", "tf32", "bf16");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "an empty grad_dtype cell matches any, as the pipeline cells do");
    study_scan_free(&s);

    /* A CSV of the version before grad_dtype: refused by the scan and by the append check, left as it was. */
    snprintf(path, sizeof path, "%s/older.csv", tmp_root);
    FILE *f = fopen(path, "w");
    for (int i = 0; study_columns[i]; i++)
        if (strcmp(study_columns[i], "grad_dtype") != 0) fprintf(f, "%s%s", i ? "," : "", study_columns[i]);
    fputc('\n', f);
    fclose(f);
    EXPECT(study_scan(path, &s, err, sizeof err) == 2 && strstr(err, "column 14: 'init' vs 'grad_dtype'") != NULL,
           "older header refused by --resume: %s", err);
    EXPECT(study_check(path, err, sizeof err) == 2 && strstr(err, "column 14: 'init' vs 'grad_dtype'") != NULL,
           "older header refused for appending: %s", err);
}

/* Two transports that agree on their first 63 characters are two configurations: the key keeps whole cells. */
static void test_long_transport(void) {
    static const char *const t1 = "NCCL_NET=Socket;NCCL_IB_DISABLE=1;NCCL_P2P_DISABLE=1;NCCL_SHM_DISABLE=1;"
                                  "NCCL_HOSTID=node-a|node-b", *const t2 = "NCCL_NET=Socket;NCCL_IB_DISABLE=1;"
                                  "NCCL_P2P_DISABLE=1;NCCL_SHM_DISABLE=1;NCCL_HOSTID=node-c|node-d";
    study_row_t rows[3];
    for (int e = 1; e <= 3; e++) {
        rows[e - 1] = row_of("L-0-1", "nccl", 2, 0.2, e, "ok");
        snprintf(rows[e - 1].env.nccl_transport, sizeof rows[e - 1].env.nccl_transport, "%s", t1);
    }
    study_scan_t s = {0};
    int best = 0;
    write_and_scan("long.csv", rows, 3, 1, &s);
    study_key_t k = query("nccl", 2, 0.2, 1, 117);
    set_cell(&k, "nccl_transport", t1);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "the same long transport: complete");
    set_cell(&k, "nccl_transport", t2);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0, "a transport differing after character 63 is another one");
    study_scan_free(&s);
}

/* naive over peer copies and over host memory are two experiments; a query that does not know the path yet (auto)
 * finds either, and a row of the version that left the path empty matches any. */
static void test_naive_path(void) {
    study_row_t rows[4];
    for (int e = 1; e <= 3; e++) {
        rows[e - 1] = row_of("H-0-1", "naive", 2, 0.2, e, "ok");
        strcpy(rows[e - 1].stats.nccl_algo, "host");
    }
    rows[3] = row_of("O-0-1", "naive", 4, 0.2, 1, "oom");     /* older: no path recorded */
    study_scan_t s = {0};
    int best = 0;
    write_and_scan("naive.csv", rows, 4, 2, &s);
    study_key_t k = query("naive", 2, 0.2, 1, 117);
    set_cell(&k, "nccl_algo", "p2p");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0, "--naive-path p2p after a host run: not done");
    set_cell(&k, "nccl_algo", "host");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "--naive-path host: done");
    set_cell(&k, "nccl_algo", "");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "--naive-path auto: the host run may be its run");
    k = query("naive", 4, 0.2, 1, 58);
    set_cell(&k, "nccl_algo", "p2p");
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "a row without a path matches any path");
    study_scan_free(&s);
}

/* Runs that faulted: failed, timeout and replicas-differ are skipped unless --retry-failed, an interrupted run is
 * run again, and only the latest run of a configuration decides (a retry that was interrupted runs again). */
static void test_faults(void) {
    study_row_t rows[16];
    int n = 0;
    rows[n++] = row_of("F-0-1", "nccl", 2, 0.2, 1, "ok");
    study_row_t f = row_of("F-0-1", "nccl", 2, 0.2, 2, "failed");   /* the child died in epoch 2 */
    f.reason = "engine/layers/conv.cu:88: cudnnConvolutionForward(...) -> CUDNN_STATUS_EXECUTION_FAILED";
    f.stats.steps = -1;
    rows[n++] = f;
    study_row_t t = row_of("F-1-1", "nccl", 4, 0.4, 1, "timeout");
    t.reason = "rank 1: no progress for 300 s in the all-reduce";
    t.timeout_s = 300;
    rows[n++] = t;
    rows[n++] = row_of("F-2-1", "naive", 2, 1.6, 1, "ok");
    rows[n++] = row_of("F-2-1", "naive", 2, 1.6, 2, "interrupted");
    rows[n++] = row_of("F-3-1", "naive", 4, 0.4, 1, "replicas-differ");
    /* failed, then retried and interrupted: the latest run is not a fault verdict */
    rows[n++] = row_of("F-4-1", "single", 2, 0.2, 1, "failed");
    rows[n++] = row_of("F-4-2", "single", 2, 0.2, 1, "ok");
    rows[n++] = row_of("F-4-2", "single", 2, 0.2, 2, "interrupted");
    /* interrupted, then failed on the retry: skipped */
    rows[n++] = row_of("F-5-1", "pipeline", 2, 0.2, 1, "interrupted");
    rows[n++] = row_of("F-5-2", "pipeline", 2, 0.2, 1, "failed");
    /* mpirun: rank 1's failed row, then rank 0's interrupted one (the launcher's SIGTERM), in one run: skipped */
    rows[n++] = row_of("F-6-1", "nccl", 8, 0.8, 2, "failed");
    rows[n++] = row_of("F-6-1", "nccl", 8, 0.8, 2, "interrupted");
    study_scan_t s;
    write_and_scan("faults.csv", rows, n, 9, &s);
    int best = -1;
    study_key_t k = query("nccl", 2, 0.2, 1, 117);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1 && best == 1, "failed mid-run: skipped (best %d)", best);
    EXPECT(study_scan_done(&s, &k, 3, 1, &best) == 0, "failed mid-run, --retry-failed: runs again");
    k = query("nccl", 4, 0.4, 1, 58);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1 && best == 0, "timeout: skipped (best %d)", best);
    EXPECT(study_scan_done(&s, &k, 3, 1, &best) == 0, "timeout, --retry-failed: runs again");
    k = query("naive", 2, 1.6, 1, 117);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0 && best == 1, "interrupted: runs again (best %d)", best);
    k = query("naive", 4, 0.4, 1, 58);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "replicas-differ: skipped");
    EXPECT(study_scan_done(&s, &k, 3, 1, &best) == 0, "replicas-differ, --retry-failed: runs again");
    k = query("single", 2, 0.2, 1, 117);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 0, "failed, retried, interrupted: runs again");
    k = query("pipeline", 2, 0.2, 1, 117);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "interrupted, retried, failed: skipped");
    k = query("nccl", 8, 0.8, 1, 29);
    EXPECT(study_scan_done(&s, &k, 3, 0, &best) == 1, "failed then interrupted in one run: skipped");
    study_scan_free(&s);
}

/* Every cell of two keys the same string. */
static int same_key(const study_key_t *a, const study_key_t *b) {
    for (int i = 0; i < RESULTS_KEY_FIELDS; i++)
        if (strcmp(a->cell[i], b->cell[i]) != 0) return 0;
    return 1;
}

/* One table of the runs of a CSV: the rows read back (study_read) and added one by one give the runs --resume's scan
 * finds in the file: the same run ids in the same order, keys and progress. */
static void test_rows_as_file(void) {
    study_row_t rows[] = {
        row_of("a", "nccl", 2, 0.2, 1, "ok"), row_of("a", "nccl", 2, 0.2, 2, "ok"),
        row_of("a", "nccl", 2, 0.2, 3, "ok"),
        row_of("b", "naive", 2, 0.2, 0, "failed"), row_of("c", "single", 1, 0.1, 1, "ok"),
        row_of("c", "single", 1, 0.1, 2, "diverged"), row_of("d", "nccl", 4, 0.4, 1, "ok"),
        row_of("d", "nccl", 4, 0.4, 2, "interrupted"),
    };
    int n = (int)(sizeof rows / sizeof rows[0]);
    rows[3].phase = "setup", rows[3].stats.steps = -1;
    study_scan_t file, mem = {0};
    write_and_scan("rows.csv", rows, n, 4, &file);
    char path[600], err[512] = "";
    snprintf(path, sizeof path, "%s/rows.csv", tmp_root);
    study_rows_t t;
    EXPECT(study_read(path, &t, err, sizeof err) == 0 && t.n == n, "read back: %s", err);
    for (int i = 0; i < t.n; i++) EXPECT(study_scan_add_row(&mem, &t.row[i]) == 0, "row %d added", i);
    EXPECT(mem.n == file.n && mem.rows == file.rows, "%d runs of %d rows, the scan %d of %d", mem.n, mem.rows, file.n,
           file.rows);
    for (int i = 0; i < mem.n && i < file.n; i++) {
        const study_scan_run_t *a = &mem.runs[i], *b = &file.runs[i];
        EXPECT(strcmp(a->run_id, b->run_id) == 0 && same_key(&a->key, &b->key) &&
               a->progress.epochs == b->progress.epochs && a->progress.faulted == b->progress.faulted &&
               strcmp(a->progress.status, b->progress.status) == 0, "run %s as the scan finds it", b->run_id);
    }
    /* Negative control: a row of another configuration under one of the run ids changes that run's key. */
    study_row_t other = rows[0];
    other.lr = 0.3;
    study_scan_add_row(&mem, &other);
    EXPECT(!same_key(&mem.runs[0].key, &file.runs[0].key), "another lr: another key");
    study_rows_free(&t);
    study_scan_free(&mem);
    study_scan_free(&file);
}

int main(void) {
    snprintf(tmp_root, sizeof tmp_root, "%s/test_resume.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp_root)) { perror("mkdtemp"); return 1; }
    test_key();
    test_scan();
    test_precision();
    test_long_transport();
    test_naive_path();
    test_faults();
    test_rows_as_file();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_root);
    return test_summary();
}
