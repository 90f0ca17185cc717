/* test_fixture.c — builds the study fixtures tests/fixtures/study.csv, study_math.csv and study_one_gpu.csv through
 * study_write (so their header and cell formats are this version's) plus their all-reduce benchmark fixtures, and
 * checks that the committed files are byte-identical. A schema change fails here first; regenerate with
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
 * a = 15 us, 1/b = 40 GB/s), so a least-squares fit must give those numbers back.
 *
 * The precision study (study_math.csv, study_math_allreduce.csv; write_study_math below says how it is made):
 * constructed, plausible numbers for what scripts/study.sh's math axis runs on 2 GPUs: tf32 against bf16, fp32
 * against bf16 gradients. */
#define _POSIX_C_SOURCE 200809L
#include "study/writer.h"
#include "study/runs.h"
#include "study/allreduce.h"
#include "test.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRAIN_IMAGES 60000
#define GRAD_BYTES 44696872.0       /* ResNet-18 (d2l, 10 classes) fp32 gradients */

static const study_env_t env = {
    .gpu_name = "NVIDIA H200", .driver = "580.82.07", .cuda = "13.0", .cudnn = "9.13.0", .nccl = "2.27.7",
    .host = "h200-node-3", .git_commit = "1a2b3c4",
};

/* The alpha-beta all-reduce model the fixtures follow, in ms for S bytes on n GPUs (alpha in s, bandwidth in
 * bytes/s): a ring moves 2(n-1)/n S per GPU, naive moves 2(n-1) S through GPU 0. */
static double ab_ms(int naive, double alpha, double bw, int n, double bytes) {
    return n < 2 ? 0 : (2.0 * (n - 1) * alpha + (naive ? 2.0 * (n - 1) : 2.0 * (n - 1) / n) * bytes / bw) * 1e3;
}
static double ring_ms(int n, double bytes) { return ab_ms(0, 8e-6, 150e9, n, bytes); }
static double naive_ms(int n, double bytes) { return ab_ms(1, 15e-6, 40e9, n, bytes); }

typedef struct {
    study_csv_t out;
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

static void put(gen_t *g, const study_row_t *r) {
    char err[512];
    EXPECT(study_write(&g->out, r, err, sizeof err) == 0, "write: %s", err);
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
    const struct prec *prec;    /* NULL: tf32, fp32 gradients, the study's single times and all-reduce models */
} cfg_t;

/* A run's precision and what follows from it for a data-parallel run. */
typedef struct prec {
    const char *math, *grad;    /* grad: the gradient dtype of naive and nccl rows */
    double single_s;            /* single's steady epoch at this per-GPU batch and math */
    double bytes;               /* gradient bytes on the wire per step */
    double comm_model_ms;       /* the reduction's modelled time for those bytes on this run's GPUs */
} prec_t;

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
    const prec_t *pr = c->prec;
    int dp = strcmp(c->strategy, "naive") == 0 || strcmp(c->strategy, "nccl") == 0;
    int pipe = c->micro_batches > 0;     /* only pipeline runs have micro-batches */
    study_row_t r;
    study_row_init(&r);
    r.strategy = c->strategy, r.model = "resnet18", r.dataset = "fashion-mnist", r.math = pr ? pr->math : "tf32";
    r.grad_dtype = !dp ? "" : pr ? pr->grad : "fp32", r.init = "normal";
    r.seed = 1, r.gpus = c->gpus, r.global_batch = c->global_batch, r.per_gpu_batch = c->per_gpu_batch;
    r.lr = c->lr, r.momentum = 0, r.weight_decay = 0, r.nodes = link ? link->nodes : 1, r.env = env;
    if (strcmp(c->strategy, "nccl") == 0)
        snprintf(r.env.nccl_transport, sizeof r.env.nccl_transport, "%s", link ? link->transport : "default");
    r.gpus_per_node = c->gpus / r.nodes;
    char t[32];
    stamp(t, sizeof t, g->clock, "%Y%m%dT%H%M%SZ");
    snprintf(r.run_id, sizeof r.run_id, "%s-%d-%d", t, g->index++, g->pid);
    int steps = TRAIN_IMAGES / c->global_batch;
    static const double loss[] = {0.56, 0.34, 0.27}, dacc[] = {-0.045, -0.015, 0};
    int stop = 0;
    for (int e = 1; e <= c->epochs && !stop; e++) {
        int diverged = c->diverges && e == 2;
        r.epoch = e;
        r.phase = e == 1 ? "warmup" : "steady";
        r.stats.steps = steps;
        r.stats.epoch_s = e == 1 ? c->steady_s * 1.35 : c->steady_s + (e == 2 ? -0.01 : 0.01);
        r.stats.step_ms = r.stats.epoch_s / steps * 1e3;
        r.images_per_s = (double)steps * c->global_batch / r.stats.epoch_s;
        r.stats.train_loss = diverged ? NAN : loss[e - 1] + (c->lr > 1 ? 0.3 : 0);
        r.stats.train_acc = diverged ? 0.1 : 0.95 - r.stats.train_loss / 2;
        r.test_acc = diverged ? 0.1 : c->acc + dacc[e - 1];
        r.status = diverged ? "diverged" : "ok";
        r.reason = diverged ? "the loss is not finite" : NULL;
        r.stats.peak_mem_mb = 1200 + 2.9 * c->per_gpu_batch;
        if (diverged) stop = 1;
        if (dp) {
            /* Compute as on one GPU at this per-GPU batch; the rest of the step is communication and idle. */
            double single_s = pr                        ? pr->single_s
                            : c->per_gpu_batch == 128 ? 3.35 : c->per_gpu_batch == 256 ? 2.81 : 2.55;
            double single_step = single_s / (TRAIN_IMAGES / c->per_gpu_batch) * 1e3;
            int nccl = strcmp(c->strategy, "nccl") == 0;
            double bytes = pr ? pr->bytes : GRAD_BYTES;
            double model = pr ? pr->comm_model_ms : nccl ? ring_ms(c->gpus, bytes) : naive_ms(c->gpus, bytes);
            r.stats.compute_ms = single_step * (1 + 0.002 * e);
            r.stats.comm_ms = model * (nccl ? 1.08 : 1.05);
            if (link) r.stats.comm_ms *= link->slow;
            r.stats.exposed_comm_ms = nccl ? 0.6 * r.stats.comm_ms : r.stats.comm_ms;
            r.stats.idle_ms = link ? link->idle : r.stats.step_ms - r.stats.compute_ms - r.stats.exposed_comm_ms;
            if (r.stats.idle_ms < 0) r.stats.idle_ms = 0;
            r.stats.bytes_per_step = bytes;
            r.stats.algbw_gbs = bytes / (r.stats.comm_ms * 1e-3) / 1e9;
            r.stats.busbw_gbs = r.stats.algbw_gbs * 2.0 * (c->gpus - 1) / c->gpus;
            snprintf(r.stats.nccl_algo, sizeof r.stats.nccl_algo, "%s", nccl ? "Ring" : "");
            r.stats.replicas_identical = 1;
        }
        if (pipe) {
            int p = c->gpus, m = c->micro_batches;
            r.stats.stages = p;
            r.stats.micro_batches = m;
            snprintf(r.stats.schedule, sizeof r.stats.schedule, "gpipe");
            snprintf(r.stats.split, sizeof r.stats.split, "%s", p == 2 ? "9" : "5,9,13");
            r.stats.bubble_ideal = (double)(p - 1) / (m + p - 1);
            r.stats.bubble = r.stats.bubble_ideal + 0.02 + 0.005 * p;
            char *busy = r.stats.stage_busy_ms;
            size_t nb = sizeof r.stats.stage_busy_ms;
            double b = r.stats.step_ms * (1 - r.stats.bubble);
            if (p == 2) snprintf(busy, nb, "%.3f;%.3f", b, b * 0.97);
            else snprintf(busy, nb, "%.3f;%.3f;%.3f;%.3f", b * 0.98, b, b * 0.96, b * 0.93);
            stamp(r.timestamp, sizeof r.timestamp, g->clock += (time_t)(r.stats.epoch_s + 1.5), "%Y-%m-%dT%H:%M:%SZ");
            put(g, &r);
            continue;
        }
        stamp(r.timestamp, sizeof r.timestamp, g->clock += (time_t)(r.stats.epoch_s + 1.5), "%Y-%m-%dT%H:%M:%SZ");
        put(g, &r);
    }
}

static void run(gen_t *g, const cfg_t *c) { run_over(g, c, NULL); }

/* One configuration that could not be set up: one row, epoch 0, phase setup. */
static void setup_failure(gen_t *g, const char *strategy, int gpus, int batch, double lr, const char *status) {
    study_row_t r;
    study_row_init(&r);
    r.strategy = strategy, r.model = "resnet18", r.dataset = "fashion-mnist", r.math = "tf32", r.init = "normal";
    r.seed = 1, r.gpus = gpus, r.global_batch = batch, r.per_gpu_batch = batch / gpus, r.lr = lr, r.epoch = 0;
    r.phase = "setup", r.status = status, r.env = env;
    if (strcmp(status, "oom") == 0) {   /* as the device would report it: an H200's 140 GiB, 2 GiB left */
        r.reason = "cudaMalloc: out of memory";
        r.mem_free_mb = 2048, r.mem_total_mb = 143771;
    }
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
    if (study_open(&g.out, path, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); return -1; }
    static const int batches[] = {128, 256, 512};
    static const double single_s[] = {3.35, 2.81, 2.55};
    /* single: the T1 of every speedup */
    sweep(&g);
    for (int b = 0; b < 4; b++) {
        int batch = b < 3 ? batches[b] : 1024;
        cfg_t c = {"single", 1, batch, batch, 0.1, b < 3 ? single_s[b] : 2.45, acc_of(batch, 0.1), 3, 0, 0, NULL};
        run(&g, &c);
    }
    sweep(&g);
    for (int l = 0; l < 2; l++) {
        double lr = l ? 0.2 : 0.05;
        cfg_t c = {"single", 1, 256, 256, lr, 2.81 * 1.03, acc_of(256, lr), 3, 0, 0, NULL};
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
                cfg_t c = {name, n, per, global, 0.1 * n, t, acc_of(global, 0.1 * n), 3, 0, 0, NULL};
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
                cfg_t c = {name, n, 256, global, lr, t, diverges ? 0.66 : acc_of(global, lr), 3, diverges, 0, NULL};
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
        cfg_t c = {"nccl", 2, 256, 512, 0.2, t, acc_of(512, 0.2), 3, 0, 0, NULL};
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
            cfg_t c = {"pipeline", p, 1024 / p, 1024, 0.4, t, acc_of(1024, 0.4), 3, 0, m, NULL};
            run(&g, &c);
        }
    }
    study_close(&g.out);
    return 0;
}

/* One family of all-reduce benchmark rows: a strategy's reduction of one element type, following the alpha-beta
 * model (alpha in s, bandwidth in bytes/s) on 2, 4, ... max_gpus GPUs. */
typedef struct {
    const char *strategy, *algo, *type;
    double elem, alpha, bw;
    int max_gpus;
} bench_line_t;

static int write_bench(const char *path, const bench_line_t *lines, int n_lines) {
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); return -1; }
    /* the benchmark's header (study/allreduce.h); the report finds its columns by name */
    fprintf(f, "%s\n", allreduce_header());
    for (int i = 0; i < n_lines; i++) {
        const bench_line_t *b = &lines[i];
        for (int n = 2; n <= b->max_gpus; n *= 2)
            for (double bytes = 4096; bytes <= 268435456.0; bytes *= 4) {
                double us = ab_ms(strcmp(b->strategy, "naive") == 0, b->alpha, b->bw, n, bytes) * 1e3;
                double alg = bytes / us / 1e3;
                fprintf(f, "%s,%d,%s,%.0f,%.0f,%s,sum,%.4f,%.4f,%.4f,0,%s,%s,%s,%s,%s,%s,2026-01-05T08:50:00Z\n",
                        b->strategy, n, b->algo, bytes, bytes / b->elem, b->type, us, alg, alg * 2.0 * (n - 1) / n,
                        env.gpu_name, env.driver, env.cuda, env.nccl, env.host, env.git_commit);
            }
    }
    return fclose(f);
}

/* The study's benchmark follows ring_ms and naive_ms exactly, on 2 and 4 GPUs. */
static int write_allreduce(const char *path) {
    static const bench_line_t lines[] = {
        {"naive", "p2p", "float", 4, 15e-6, 40e9, 4},
        {"nccl", "Ring", "float", 4, 8e-6, 150e9, 4},
    };
    return write_bench(path, lines, 2);
}

// ---- the precision study

/* 2 GPUs (one host, NVLink): float all-reduces as measured on 2 H200s (ring about 10 us + 300 GB/s); bf16 ones
 * a little slower per byte (the cast kernels add latency), so a report that fits the wrong type is caught. */
static const bench_line_t math_bench[] = {
    {"naive", "p2p", "float", 4, 15e-6, 300e9, 2},
    {"naive", "p2p", "bfloat16", 2, 18e-6, 280e9, 2},
    {"nccl", "Ring", "float", 4, 10e-6, 300e9, 2},
    {"nccl", "Ring", "bfloat16", 2, 12e-6, 280e9, 2},
};

#define MATH_GRAD_BYTES 44703488.0  /* ResNet-18's fp32 gradients as the engine counts them; bf16 on the wire: half */

/* The precision study: ResNet-18 on Fashion-MNIST, lr 0.1 per 256 images, as scripts/study.sh runs it on 2 GPUs:
 *   single   1 GPU, batch 128, 256 and 512, tf32 and bf16 (steady epochs 1.79/1.49/1.32 s and 1.02/0.80/0.70 s:
 *            bf16 at 0.54-0.57 of tf32, the engine's target)
 *   naive    2 GPUs weak scaling, batch 128 and 256 per GPU, tf32 and bf16, fp32 and bf16 gradients: compute as
 *   nccl     single's at that batch and math (+2 %), the reduction from math_bench's model at the bytes on the wire
 *            (x1.08 nccl, x1.05 naive; exposed 60 % of it for nccl, all of it for naive) and 0.15 ms of overhead
 *   pipeline 2 stages, global batch 512, 2 and 4 micro-batches, tf32 and bf16
 * Final accuracy as the first study, 0.3 points lower in bf16 and 0.1 lower with bf16 gradients. Hand-checkable:
 * nccl at 256 per GPU takes 0.790, 0.785, 0.440 and 0.430 s per steady epoch (median of 2) in tf32/fp32,
 * tf32/bf16, bf16/fp32 and bf16/bf16 (math/gradients); single's bf16 epoch at 256 is 0.80 s. */
static int write_study_math(const char *path) {
    gen_t g = {.clock = 1767690000, .pid = 50000};      /* 2026-01-06T09:00:00Z */
    char err[512];
    unlink(path);
    if (study_open(&g.out, path, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); return -1; }
    static const char *const maths[] = {"tf32", "bf16"}, *const grads[] = {"fp32", "bf16"};
    static const int batches[] = {128, 256, 512};
    static const double single_s[2][3] = {{1.79, 1.49, 1.32}, {1.02, 0.80, 0.70}};
    static const double nccl_256[2][2] = {{0.790, 0.785}, {0.440, 0.430}};
    for (int b0 = 0; b0 < 3; b0 += 2) {     /* one sweep of 128 and 256, then 512 (the pipeline's T1) */
        sweep(&g);
        for (int b = b0; b < (b0 ? 3 : 2); b++)
            for (int m = 0; m < 2; m++) {
                prec_t pr = {maths[m], "", single_s[m][b], 0, 0};
                double acc = acc_of(batches[b], 0.1) - 0.003 * m;
                cfg_t c = {"single", 1, batches[b], batches[b], 0.1, single_s[m][b], acc, 3, 0, 0, &pr};
                run(&g, &c);
            }
    }
    for (int s = 0; s < 2; s++) {
        int nccl = s == 1;
        sweep(&g);
        for (int b = 0; b < 2; b++)
            for (int m = 0; m < 2; m++)
                for (int d = 0; d < 2; d++) {
                    int per = batches[b], global = 2 * per, steps = TRAIN_IMAGES / global;
                    const bench_line_t *bl = &math_bench[2 * s + d];
                    double bytes = MATH_GRAD_BYTES / (d ? 2 : 1);
                    prec_t pr = {maths[m], grads[d], single_s[m][b], bytes, ab_ms(!nccl, bl->alpha, bl->bw, 2, bytes)};
                    double single_step = pr.single_s / (TRAIN_IMAGES / per) * 1e3;
                    double comm = pr.comm_model_ms * (nccl ? 1.08 : 1.05);
                    double t = steps * (single_step * 1.02 + (nccl ? 0.6 : 1) * comm + 0.15) / 1e3;
                    if (nccl && per == 256) t = nccl_256[m][d];
                    t = (double)(long)(t * 1000 + 0.5) / 1000;
                    double acc = acc_of(global, 0.2) - 0.003 * m - 0.001 * d;
                    cfg_t c = {nccl ? "nccl" : "naive", 2, per, global, 0.2, t, acc, 3, 0, 0, &pr};
                    run(&g, &c);
                }
    }
    sweep(&g);
    for (int m = 0; m < 2; m++)
        for (int mb = 2; mb <= 4; mb *= 2) {
            double bubble = 1.0 / (mb + 1) + 0.02 + 0.005 * 2;
            double t = single_s[m][2] / 2 / (1 - bubble) * (1.04 + 0.015 * mb);
            t = (double)(long)(t * 1000 + 0.5) / 1000;
            prec_t pr = {maths[m], "", single_s[m][2], 0, 0};
            cfg_t c = {"pipeline", 2, 256, 512, 0.1, t, acc_of(512, 0.1) - 0.003 * m, 3, 0, mb, &pr};
            run(&g, &c);
        }
    study_close(&g.out);
    return 0;
}

/* The one-GPU default study (study_one_gpu.csv; constructed, plausible numbers after results/bf16-single-h200-2026-
 * 11-23): single on 1 GPU at lr 0.05, batches 64, 256, 1024, 4096, 16384 and 60000, each in tf32 then bf16 (the
 * order of the sweep). tf32 does not fit at 16384 and 60000, bf16 not at 60000: one setup row of status oom each.
 * Steady epochs as the first study (median -/+ 0.01 s): tf32 2.71, 1.48, 1.26, 1.20 s; bf16 1.81, 0.81, 0.59, 0.55,
 * 0.55 s. Hand-checkable: bf16 at 4096 trains 14 steps (57344 images) in 0.54 and 0.56 s: 106193 and 102400
 * images/s, median 104296, the fastest; tf32 there 1.19 and 1.21 s: median 47790 images/s, 2.18x slower. */
static int write_study_one_gpu(const char *path) {
    gen_t g = {.clock = 1767776400, .pid = 60000};      /* 2026-01-07T09:00:00Z */
    char err[512];
    unlink(path);
    if (study_open(&g.out, path, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); return -1; }
    static const char *const maths[] = {"tf32", "bf16"};
    static const int batches[] = {64, 256, 1024, 4096, 16384, 60000};
    static const double steady[2][6] = {{2.71, 1.48, 1.26, 1.20, 0, 0}, {1.81, 0.81, 0.59, 0.55, 0.55, 0}};
    sweep(&g);
    for (int b = 0; b < 6; b++)
        for (int m = 0; m < 2; m++) {
            if (steady[m][b] > 0) {
                prec_t pr = {maths[m], "", steady[m][b], 0, 0};
                double acc = acc_of(batches[b], 0.05) - 0.003 * m;
                cfg_t c = {"single", 1, batches[b], batches[b], 0.05, steady[m][b], acc, 3, 0, 0, &pr};
                run(&g, &c);
                continue;
            }
            study_row_t r;        /* did not fit: as setup_failure writes it, in this math */
            study_row_init(&r);
            r.strategy = "single", r.model = "resnet18", r.dataset = "fashion-mnist", r.math = maths[m];
            r.init = "normal", r.seed = 1, r.gpus = 1, r.global_batch = r.per_gpu_batch = batches[b], r.lr = 0.05;
            r.epoch = 0, r.phase = "setup", r.status = "oom", r.reason = "cudaMalloc: out of memory", r.env = env;
            r.mem_free_mb = 2048, r.mem_total_mb = 143771, r.nodes = 1, r.gpus_per_node = 1;
            char t[32];
            stamp(t, sizeof t, g.clock, "%Y%m%dT%H%M%SZ");
            snprintf(r.run_id, sizeof r.run_id, "%s-%d-%d", t, g.index++, g.pid);
            stamp(r.timestamp, sizeof r.timestamp, g.clock += 2, "%Y-%m-%dT%H:%M:%SZ");
            put(&g, &r);
        }
    study_close(&g.out);
    return 0;
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

static int write_math_allreduce(const char *path) { return write_bench(path, math_bench, 4); }

/* The fixtures, each written by its function and scanned back where it is a study (runs > 0). */
static const struct {
    const char *name;
    int (*write)(const char *path);
    int runs;
} fixtures[] = {
    {"study.csv", write_study, 39},
    {"study_allreduce.csv", write_allreduce, 0},
    {"study_math.csv", write_study_math, 26},
    {"study_math_allreduce.csv", write_math_allreduce, 0},
    {"study_one_gpu.csv", write_study_one_gpu, 12},
};
#define N_FIXTURES (int)(sizeof fixtures / sizeof fixtures[0])

int main(int argc, char **argv) {
    char path[600];
    if (argc == 3 && strcmp(argv[1], "--write") == 0) {
        for (int i = 0; i < N_FIXTURES; i++) {
            snprintf(path, sizeof path, "%s/%s", argv[2], fixtures[i].name);
            if (fixtures[i].write(path)) return 1;
            printf("wrote %s\n", path);
        }
        return test_summary();
    }
    char dir[256];
    snprintf(dir, sizeof dir, "%s/test_fixture.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    for (int i = 0; i < N_FIXTURES; i++) {
        char committed[600];
        snprintf(path, sizeof path, "%s/%s", dir, fixtures[i].name);
        snprintf(committed, sizeof committed, "%s/%s", FIXTURES, fixtures[i].name);
        EXPECT(fixtures[i].write(path) == 0, "%s written to %s", fixtures[i].name, dir);
        expect_same(path, committed);
        if (!fixtures[i].runs) continue;
        /* A study fixture is a real study CSV: the resume scan reads every row of it. */
        study_scan_t s;
        char err[512];
        EXPECT(study_scan(path, &s, err, sizeof err) == 0 && s.bad_rows == 0 && s.n == fixtures[i].runs,
               "scan %s: %s, %d runs, %d bad rows", fixtures[i].name, err, s.n, s.bad_rows);
        study_scan_free(&s);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary();
}
