/* test_fixture.c — builds the study fixture tests/fixtures/study.csv through results_write (so its header and
 * cell formats are this version's) plus the all-reduce benchmark fixture study_allreduce.csv, and checks that
 * the committed files are byte-identical. A schema change fails here first; regenerate with
 *
 *   build/tests/test_fixture --write tests/fixtures
 *
 * The study: ResNet-18 on Fashion-MNIST on one "NVIDIA H200" host, as a sequence of real sweeps would write it:
 *   single  1 GPU, batch 128,256,512,1024 at lr 0.1; batch 256 at lr 0.05,0.2; batch 32768 (oom at setup)
 *   naive   2,4 GPUs weak scaling, batch 128,256,512 at lr 0.1; batch 256 at lr 0.05,0.2
 *   nccl    the same, and lr 0.8 (diverges on 4 GPUs); its lr sweep was killed after epoch 1 of
 *           (2 GPUs, lr 0.2) and resumed: that configuration has a 1-epoch run and a later complete one
 *   pipeline 2,4 GPUs, global batch 1024, lr 0.4, micro-batches 1,2,4,8 (gpipe)
 *   nccl    2 GPUs as 2 emulated nodes (scripts/node_emu.sh) on NCCL's socket transport, batch 256/GPU, lr 0.2:
 *           the all-reduce 8x slower, the compute stream idle 9 ms a step (the host late to launch)
 * Data-parallel rows: compute + exposed + idle = the step (idle_ms).
 * Three epochs per run (warmup + 2 steady). Hand-checkable figures: single batch 256 lr 0.1 steady epochs
 * 2.80, 2.82 s (median 2.81); nccl 4 GPUs batch 256/GPU lr 0.4 steady 0.74, 0.76 s (median 0.75): speedup
 * 2.81/0.75 = 3.75, efficiency 2.81/(4 x 0.75) = 93.7 %. The all-reduce times follow
 * t = 2(n-1)a + 2(n-1)/n S b exactly (nccl: a = 8 us, 1/b = 150 GB/s; naive: t = 2(n-1)a + 2(n-1) S b with
 * a = 15 us, 1/b = 40 GB/s), so a least-squares fit must give those numbers back. */
#define _POSIX_C_SOURCE 200809L
#include "bench/results.h"
#include "test.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRAIN_IMAGES 60000
#define GRAD_BYTES 44696872.0       /* ResNet-18 (d2l, 10 classes) fp32 gradients */

static const results_env_t env = {
    .gpu_name = "NVIDIA H200", .driver = "580.82.07", .cuda = "13.0", .cudnn = "9.13.0", .nccl = "2.27.7",
    .host = "h200-node-3", .git_commit = "1a2b3c4",
};

/* The all-reduce models the fixture follows, in ms for S bytes on n GPUs. */
static double ring_ms(int n, double bytes) {
    return n < 2 ? 0 : (2.0 * (n - 1) * 8e-6 + 2.0 * (n - 1) / n * bytes / 150e9) * 1e3;
}
static double naive_ms(int n, double bytes) {
    return n < 2 ? 0 : (2.0 * (n - 1) * 15e-6 + 2.0 * (n - 1) * bytes / 40e9) * 1e3;
}

typedef struct {
    results_t out;
    time_t clock;           /* the fixture's wall clock: advances by each epoch's time */
    int pid;                /* one per sweep */
    int index;              /* sweep point */
} gen_t;

static void stamp(char *buf, size_t len, time_t t, const char *fmt) {
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, fmt, &tm);
}

static void sweep(gen_t *g) {
    g->pid += 1117;
    g->index = 0;
    g->clock += 30;
}

static void put(gen_t *g, const results_row_t *r) {
    char err[512];
    EXPECT(results_write(&g->out, r, err, sizeof err) == 0, "write: %s", err);
}

typedef struct {
    const char *strategy;
    int gpus, per_gpu_batch, global_batch;
    double lr;
    double steady_s;        /* median steady epoch time */
    double acc;             /* final test accuracy (epoch 3) */
    int epochs;             /* rows to write: 3, or 1 (killed) */
    int diverges;           /* 1: the loss is NaN at epoch 2 and the run stops there */
    int micro_batches;      /* pipeline only */
} cfg_t;

/* Where a data-parallel run's GPUs are, when not on one node with NCCL's default transports. */
typedef struct {
    int nodes;
    const char *transport;  /* nccl_transport */
    double slow;            /* the all-reduce takes this many times as long */
    double idle;            /* idle_ms: the compute stream without work */
} link_t;

/* Writes one run of c over link (NULL: one node): epoch 1 warmup (35 % slower), epochs 2 and 3 at steady_s -/+
 * 0.01 s. */
static void run_over(gen_t *g, const cfg_t *c, const link_t *link) {
    results_row_t r = {
        .strategy = c->strategy, .model = "resnet18", .dataset = "fashion-mnist", .math = "tf32", .init = "normal",
        .seed = 1, .gpus = c->gpus, .global_batch = c->global_batch, .per_gpu_batch = c->per_gpu_batch,
        .lr = c->lr, .momentum = 0, .weight_decay = 0, .compute_ms = -1, .comm_ms = -1, .exposed_comm_ms = -1,
        .bytes_per_step = -1, .algbw_gbs = -1, .busbw_gbs = -1, .stages = -1, .micro_batches = -1, .bubble = -1,
        .bubble_ideal = -1, .idle_ms = -1, .nodes = link ? link->nodes : 1, .env = &env,
        .nccl_transport = strcmp(c->strategy, "nccl") ? NULL : link ? link->transport : "default",
    };
    r.gpus_per_node = c->gpus / r.nodes;
    char t[32];
    stamp(t, sizeof t, g->clock, "%Y%m%dT%H%M%SZ");
    snprintf(r.run_id, sizeof r.run_id, "%s-%d-%d", t, g->index++, g->pid);
    int steps = TRAIN_IMAGES / c->global_batch;
    int dp = strcmp(c->strategy, "naive") == 0 || strcmp(c->strategy, "nccl") == 0;
    int pipe = strcmp(c->strategy, "pipeline") == 0;
    static const double loss[] = {0.56, 0.34, 0.27}, dacc[] = {-0.045, -0.015, 0};
    int stop = 0;
    for (int e = 1; e <= c->epochs && !stop; e++) {
        int diverged = c->diverges && e == 2;
        r.epoch = e;
        r.phase = e == 1 ? "warmup" : "steady";
        r.steps = steps;
        r.epoch_s = e == 1 ? c->steady_s * 1.35 : c->steady_s + (e == 2 ? -0.01 : 0.01);
        r.step_ms = r.epoch_s / steps * 1e3;
        r.images_per_s = (double)steps * c->global_batch / r.epoch_s;
        r.train_loss = diverged ? NAN : loss[e - 1] + (c->lr > 1 ? 0.3 : 0);
        r.train_acc = diverged ? 0.1 : 0.95 - r.train_loss / 2;
        r.test_acc = diverged ? 0.1 : c->acc + dacc[e - 1];
        r.status = diverged ? "diverged" : "ok";
        r.peak_mem_mb = 1200 + 2.9 * c->per_gpu_batch;
        if (diverged) stop = 1;
        if (dp) {
            /* Compute as on one GPU at this per-GPU batch; the rest of the step is communication and idle. */
            double single_step = (c->per_gpu_batch == 128 ? 3.35 : c->per_gpu_batch == 256 ? 2.81 : 2.55) /
                                 (TRAIN_IMAGES / c->per_gpu_batch) * 1e3;
            int nccl = strcmp(c->strategy, "nccl") == 0;
            r.compute_ms = single_step * (1 + 0.002 * e);
            r.comm_ms = nccl ? ring_ms(c->gpus, GRAD_BYTES) * 1.08 : naive_ms(c->gpus, GRAD_BYTES) * 1.05;
            if (link) r.comm_ms *= link->slow;
            r.exposed_comm_ms = nccl ? 0.6 * r.comm_ms : r.comm_ms;
            r.idle_ms = link ? link->idle : r.step_ms - r.compute_ms - r.exposed_comm_ms;
            if (r.idle_ms < 0) r.idle_ms = 0;
            r.bytes_per_step = GRAD_BYTES;
            r.algbw_gbs = GRAD_BYTES / (r.comm_ms * 1e-3) / 1e9;
            r.busbw_gbs = r.algbw_gbs * 2.0 * (c->gpus - 1) / c->gpus;
            r.nccl_algo = nccl ? "Ring" : "";
            r.replicas = "identical";
        }
        if (pipe) {
            int p = c->gpus, m = c->micro_batches;
            r.stages = p;
            r.micro_batches = m;
            r.schedule = "gpipe";
            r.split = p == 2 ? "9" : "5,9,13";
            r.bubble_ideal = (double)(p - 1) / (m + p - 1);
            r.bubble = r.bubble_ideal + 0.02 + 0.005 * p;
            char busy[128];
            double b = r.step_ms * (1 - r.bubble);
            if (p == 2) snprintf(busy, sizeof busy, "%.3f;%.3f", b, b * 0.97);
            else snprintf(busy, sizeof busy, "%.3f;%.3f;%.3f;%.3f", b * 0.98, b, b * 0.96, b * 0.93);
            r.stage_busy_ms = busy;
            stamp(r.timestamp, sizeof r.timestamp, g->clock += (time_t)(r.epoch_s + 1.5), "%Y-%m-%dT%H:%M:%SZ");
            put(g, &r);
            continue;
        }
        stamp(r.timestamp, sizeof r.timestamp, g->clock += (time_t)(r.epoch_s + 1.5), "%Y-%m-%dT%H:%M:%SZ");
        put(g, &r);
    }
}

static void run(gen_t *g, const cfg_t *c) { run_over(g, c, NULL); }

/* One configuration that could not be set up: one row, epoch 0, phase setup. */
static void setup_failure(gen_t *g, const char *strategy, int gpus, int batch, double lr, const char *status) {
    results_row_t r = {
        .strategy = strategy, .model = "resnet18", .dataset = "fashion-mnist", .math = "tf32", .init = "normal",
        .seed = 1, .gpus = gpus, .global_batch = batch, .per_gpu_batch = batch / gpus, .lr = lr, .epoch = 0,
        .phase = "setup", .steps = -1, .epoch_s = -1, .images_per_s = -1, .step_ms = -1, .train_loss = -1,
        .train_acc = -1, .test_acc = -1, .status = status, .compute_ms = -1, .comm_ms = -1, .exposed_comm_ms = -1,
        .bytes_per_step = -1, .algbw_gbs = -1, .busbw_gbs = -1, .stages = -1, .micro_batches = -1, .bubble = -1,
        .bubble_ideal = -1, .peak_mem_mb = -1, .env = &env,
    };
    char t[32];
    stamp(t, sizeof t, g->clock, "%Y%m%dT%H%M%SZ");
    snprintf(r.run_id, sizeof r.run_id, "%s-%d-%d", t, g->index++, g->pid);
    stamp(r.timestamp, sizeof r.timestamp, g->clock += 4, "%Y-%m-%dT%H:%M:%SZ");
    put(g, &r);
}

/* Final accuracy after 3 epochs: best near lr 0.1 per 256 images (too small an lr costs more than too large),
 * a little lower for large batches. */
static double acc_of(int global_batch, double lr) {
    double ref = 0.1 * global_batch / 256.0;
    double off = lr > ref ? lr / ref : ref / lr;
    double a = 0.912 - 0.004 * (global_batch / 256.0 > 1 ? log2(global_batch / 256.0) : 0);
    return a - (lr > ref ? 0.008 : 0.012) * log2(off) * log2(off);
}

static int write_study(const char *path) {
    gen_t g = {.clock = 1767603600, .pid = 40000};      /* 2026-01-05T09:00:00Z */
    char err[512];
    unlink(path);
    if (results_open(&g.out, path, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); return -1; }
    static const int batches[] = {128, 256, 512};
    static const double single_s[] = {3.35, 2.81, 2.55};
    /* single: the T1 of every speedup */
    sweep(&g);
    for (int b = 0; b < 4; b++) {
        int batch = b < 3 ? batches[b] : 1024;
        cfg_t c = {"single", 1, batch, batch, 0.1, b < 3 ? single_s[b] : 2.45, acc_of(batch, 0.1), 3, 0, 0};
        run(&g, &c);
    }
    sweep(&g);
    for (int l = 0; l < 2; l++) {
        double lr = l ? 0.2 : 0.05;
        cfg_t c = {"single", 1, 256, 256, lr, 2.81 * 1.03, acc_of(256, lr), 3, 0, 0};
        run(&g, &c);
    }
    sweep(&g);
    setup_failure(&g, "single", 1, 32768, 0.1, "oom");
    /* naive and nccl, weak scaling: batch sweep at lr 0.1, then an lr sweep at 256 per GPU */
    for (int s = 0; s < 2; s++) {
        const char *name = s ? "nccl" : "naive";
        sweep(&g);
        for (int n = 2; n <= 4; n *= 2)
            for (int b = 0; b < 3; b++) {
                int per = batches[b], global = per * n, steps = TRAIN_IMAGES / global;
                double single_step = single_s[b] / (TRAIN_IMAGES / per) * 1e3;
                double step = s ? single_step + 0.6 * ring_ms(n, GRAD_BYTES) * 1.08 + 0.45
                                : single_step + naive_ms(n, GRAD_BYTES) * 1.05 + 0.6;
                double t = steps * step / 1e3;
                if (s && n == 4 && per == 256) t = 0.75;
                t = (double)(long)(t * 1000 + 0.5) / 1000;
                cfg_t c = {name, n, per, global, 0.1 * n, t, acc_of(global, 0.1 * n), 3, 0, 0};
                run(&g, &c);
            }
        sweep(&g);
        int killed_pid = g.pid;
        double lrs[] = {0.05, 0.2, 0.8};
        int n_lr = s ? 3 : 2;
        for (int n = 2; n <= 4; n *= 2)
            for (int l = 0; l < n_lr; l++) {
                int global = 256 * n, steps = TRAIN_IMAGES / global;
                double single_step = 2.81 / (TRAIN_IMAGES / 256) * 1e3;
                double step = s ? single_step + 0.6 * ring_ms(n, GRAD_BYTES) * 1.08 + 0.45
                                : single_step + naive_ms(n, GRAD_BYTES) * 1.05 + 0.6;
                double t = (double)(long)(steps * step * 1.03 + 0.5) / 1000;
                double lr = lrs[l] * n;
                int diverges = s && n == 4 && l == 2;
                cfg_t c = {name, n, 256, global, lr, t, diverges ? 0.66 : acc_of(global, lr), 3, diverges, 0};
                if (s && n == 2 && l == 1 && g.pid == killed_pid) {
                    /* killed after epoch 1; `--resume` skips the first point and re-runs this one */
                    c.epochs = 1;
                    c.acc = 0.5;    /* wrong on purpose: summaries must not pick this run */
                    run(&g, &c);
                    sweep(&g);
                    g.index = 1;
                    c.epochs = 3;
                    c.acc = acc_of(global, lr);
                }
                run(&g, &c);
            }
    }
    /* nccl on 2 emulated nodes over sockets: compute as on one GPU, exposed 0.6 of an all-reduce 8x slower, idle
     * 9 ms */
    sweep(&g);
    {
        double single_step = 2.81 / (TRAIN_IMAGES / 256) * 1e3, comm = ring_ms(2, GRAD_BYTES) * 1.08 * 8;
        double step = single_step * (1 + 0.002 * 2.5) + 0.6 * comm + 9.0;
        double t = (double)(long)(TRAIN_IMAGES / 512 * step + 0.5) / 1000;
        cfg_t c = {"nccl", 2, 256, 512, 0.2, t, acc_of(512, 0.2), 3, 0, 0};
        link_t two = {2, "NCCL_HOSTID=h200-node-3.node0|h200-node-3.node1", 8, 9.0};
        run_over(&g, &c, &two);
    }
    /* pipeline: strong scaling of global batch 1024, one sweep per micro-batch count */
    for (int m = 1; m <= 8; m *= 2) {
        sweep(&g);
        for (int p = 2; p <= 4; p *= 2) {
            double bubble = (double)(p - 1) / (m + p - 1) + 0.02 + 0.005 * p;
            double t = 2.45 / p / (1 - bubble) * (1.04 + 0.015 * m);
            t = (double)(long)(t * 1000 + 0.5) / 1000;
            cfg_t c = {"pipeline", p, 1024 / p, 1024, 0.4, t, acc_of(1024, 0.4), 3, 0, m};
            run(&g, &c);
        }
    }
    results_close(&g.out);
    return 0;
}

static int write_allreduce(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); return -1; }
    /* bench/allreduce_bench.c's header (BENCH_HEADER); report.awk finds its columns by name */
    fprintf(f, "strategy,gpus,algo,size_bytes,count,type,redop,time_us,algbw_gbs,busbw_gbs,wrong,"
               "gpu_name,driver,cuda,nccl,host,git_commit,timestamp\n");
    for (int s = 0; s < 2; s++)
        for (int n = 2; n <= 4; n *= 2)
            for (double bytes = 4096; bytes <= 268435456.0; bytes *= 4) {
                double us = (s ? ring_ms(n, bytes) : naive_ms(n, bytes)) * 1e3;
                double alg = bytes / us / 1e3;
                fprintf(f, "%s,%d,%s,%.0f,%.0f,float,sum,%.4f,%.4f,%.4f,0,%s,%s,%s,%s,%s,%s,2026-01-05T08:50:00Z\n",
                        s ? "nccl" : "naive", n, s ? "Ring" : "p2p", bytes, bytes / 4, us, alg,
                        alg * 2.0 * (n - 1) / n, env.gpu_name, env.driver, env.cuda, env.nccl, env.host,
                        env.git_commit);
            }
    return fclose(f);
}


static void expect_same(const char *made, const char *committed) {
    size_t a_len, b_len;
    char *a = test_slurp(made, &a_len), *b = test_slurp(committed, &b_len);
    EXPECT(a && b && a_len == b_len && memcmp(a, b, a_len) == 0,
           "%s differs from what this version writes: regenerate with build/tests/test_fixture --write "
           "tests/fixtures (then review the diff)", committed);
    free(a);
    free(b);
}

int main(int argc, char **argv) {
    char study[600], allreduce[600];
    if (argc == 3 && strcmp(argv[1], "--write") == 0) {
        snprintf(study, sizeof study, "%s/study.csv", argv[2]);
        snprintf(allreduce, sizeof allreduce, "%s/study_allreduce.csv", argv[2]);
        if (write_study(study) || write_allreduce(allreduce)) return 1;
        printf("wrote %s and %s\n", study, allreduce);
        return test_summary();
    }
    char dir[256];
    snprintf(dir, sizeof dir, "%s/test_fixture.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    snprintf(study, sizeof study, "%s/study.csv", dir);
    snprintf(allreduce, sizeof allreduce, "%s/study_allreduce.csv", dir);
    EXPECT(write_study(study) == 0 && write_allreduce(allreduce) == 0, "fixtures written to %s", dir);
    expect_same(study, FIXTURES "/study.csv");
    expect_same(allreduce, FIXTURES "/study_allreduce.csv");
    /* The fixture is a real study CSV: the resume scan reads every row of it. */
    results_scan_t s;
    char err[512];
    EXPECT(results_scan(study, &s, err, sizeof err) == 0 && s.bad_rows == 0 && s.n == 39,
           "scan: %s, %d runs, %d bad rows", err, s.n, s.bad_rows);
    results_scan_free(&s);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary();
}
