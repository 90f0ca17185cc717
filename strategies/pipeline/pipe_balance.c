/* pipe_balance.c — where the pipeline's stages start: every segment between two cut points timed on one GPU at the
 * micro-batch size as a stage runs it (captured CUDA graphs, replayed back to back), the copies across each cut
 * timed between the first two GPUs, then the cuts that minimise the slowest stage (partition.c): between residual
 * blocks, or inside them where block cuts leave a stage more than 5 % over the mean. Or a hand split. */
#include "pipeline.h"
#include "partition.h"
#include "../../engine/check.h"
#include "../../engine/split.h"
#include "../../engine/nvtx.h"
#include "../../engine/timing.h"
#include "../../engine/knob.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BALANCE_WARMUP 3        /* eager, captured, replayed once: then timed */
#define BALANCE_REPS 5
#define BALANCE_TOLERANCE 1.05  /* block cuts whose slowest stage is within this of the mean need no finer cut */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    model_t *m;
    gpu_t *g;
    int first, end, split;      /* split: the backward as the zero-bubble schedule runs it, data part then weight part */
} seg_t;

static void seg_forward(void *ctx, const void *arg) {
    (void)arg;
    seg_t *s = ctx;
    model_forward_range(s->m, s->g, s->first, s->end, 1);
}

static void seg_backward(void *ctx, const void *arg) {
    (void)arg;
    seg_t *s = ctx;
    if (s->split) model_backward_data_range(s->m, s->g, s->first, s->end, 0.0f);
    else model_backward_range(s->m, s->g, s->first, s->end, 0.0f);
}

static void seg_weight(void *ctx, const void *arg) {
    (void)arg;
    seg_t *s = ctx;
    model_backward_weight_range(s->m, s->g, s->first, s->end, 0.0f);
}

static void noop_memset(void *ctx, const void *arg) {
    const seg_t *s = arg;
    CHECK_CUDA(cudaMemsetAsync(ctx, 0, 4, s->g->stream));
}

/* The stream time one graph launch adds beside its work: a one-memset graph replayed back to back. */
static double launch_overhead_ms(gpu_t *g) {
    enum { N = 200 };
    void *buf;
    graph_seg_t gr = {0};
    seg_t arg = {.g = g};
    cudaEvent_t a, b;
    CHECK_ALLOC(cudaMalloc(&buf, 4));
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++) graph_seg_run(&gr, g->stream, 1, noop_memset, buf, &arg);
    CHECK_CUDA(cudaEventRecord(a, g->stream));
    for (int i = 0; i < N; i++) graph_seg_run(&gr, g->stream, 1, noop_memset, buf, &arg);
    CHECK_CUDA(cudaEventRecord(b, g->stream));
    CHECK_CUDA(cudaEventSynchronize(b));
    double ms = timing_ms(a, b) / N;
    graph_seg_free(&gr);
    CHECK_CUDA(cudaEventDestroy(a));
    CHECK_CUDA(cudaEventDestroy(b));
    CHECK_CUDA(cudaFree(buf));
    return ms;
}

int pipe_measure_segments(gpu_t *g, const char *model, model_input_t in, int batch, const int *pos, int n_seg,
                          int split, double *seg_ms) {
    int n = n_seg, parts = split ? 3 : 2;
    model_t *m = calloc(1, sizeof *m);
    seg_t *seg = calloc((size_t)n, sizeof *seg);
    graph_seg_t *gr = calloc((size_t)n * 3, sizeof *gr);   /* [k]: forward, [n + k]: backward, [2n + k]: weights */
    cudaEvent_t *ev = calloc(3 * (size_t)n + 2, sizeof *ev);
    double *t = calloc((size_t)n * BALANCE_REPS, sizeof *t);
    if (!m || !seg || !gr || !ev || !t) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    CHECK_CUDA(cudaSetDevice(g->device));
    nvtx_push("pipeline balance: segment times gpu%d", g->device);
    if (model_build_input(m, model, batch, in) != 0 || pos[n] != m->n_layers)
        check_fail(__FILE__, __LINE__, "model_build", "the model to measure differs from the one to split");
    int rc = model_alloc(m, g);
    if (rc == 0) {
        double overhead = launch_overhead_ms(g);
        /* Activations and gradients hold model_alloc's uniform fill: kernels run at their real cost on non-zero
         * data. ev[k]: before segment k's forward (ev[n]: after the last); ev[n + 1 + k]: after segment k's
         * backward, which runs from the last segment down; split, ev[2n + 1] and ev[2n + 2 + k] the same for the
         * weight parts, after every data part (the zero-bubble schedule defers them: their inputs are no longer
         * in cache, which costs time the fused backward does not pay). */
        for (int i = 0; i < (split ? 3 * n + 2 : 2 * n + 2); i++) CHECK_CUDA(cudaEventCreate(&ev[i]));
        for (int k = 0; k < n; k++) seg[k] = (seg_t){m, g, pos[k], pos[k + 1], split};
        for (int r = 0; r < BALANCE_WARMUP + BALANCE_REPS; r++) {
            for (int k = 0; k < n; k++) {
                CHECK_CUDA(cudaEventRecord(ev[k], g->stream));
                graph_seg_run(&gr[k], g->stream, 1, seg_forward, &seg[k], NULL);
            }
            CHECK_CUDA(cudaEventRecord(ev[n], g->stream));
            for (int k = n - 1; k >= 0; k--) {
                graph_seg_run(&gr[n + k], g->stream, 1, seg_backward, &seg[k], NULL);
                CHECK_CUDA(cudaEventRecord(ev[n + 1 + k], g->stream));
            }
            if (split) {
                CHECK_CUDA(cudaEventRecord(ev[2 * n + 1], g->stream));
                for (int k = n - 1; k >= 0; k--) {
                    graph_seg_run(&gr[2 * n + k], g->stream, 1, seg_weight, &seg[k], NULL);
                    CHECK_CUDA(cudaEventRecord(ev[2 * n + 2 + k], g->stream));
                }
            }
            CHECK_CUDA(cudaStreamSynchronize(g->stream));
            if (r < BALANCE_WARMUP) continue;
            for (int k = 0; k < n; k++) {
                cudaEvent_t before = k == n - 1 ? ev[n] : ev[n + 2 + k];
                double v = timing_ms(ev[k], ev[k + 1]) + timing_ms(before, ev[n + 1 + k]);
                if (split) v += timing_ms(k == n - 1 ? ev[2 * n + 1] : ev[2 * n + 3 + k], ev[2 * n + 2 + k]);
                v -= parts * overhead;   /* a stage runs its segments in one graph per op */
                t[(size_t)k * BALANCE_REPS + (r - BALANCE_WARMUP)] = v > 0 ? v : 0;
            }
        }
        for (int k = 0; k < n; k++) {
            qsort(t + (size_t)k * BALANCE_REPS, BALANCE_REPS, sizeof *t, cmp_double);
            seg_ms[k] = t[(size_t)k * BALANCE_REPS + BALANCE_REPS / 2];
        }
        for (int i = 0; i < 3 * n + 2; i++)
            if (ev[i]) CHECK_CUDA(cudaEventDestroy(ev[i]));
        for (int k = 0; k < 3 * n; k++) graph_seg_free(&gr[k]);
        model_free(m);
    }
    nvtx_pop();
    free(m); free(seg); free(gr); free(ev); free(t);
    return rc;
}

/* Milliseconds per byte of a copy from stage 0's GPU to stage 1's as the pipeline makes it (peer access enabled
 * where the link will use it): the median of a few copies of `bytes`. */
static double copy_ms_per_byte(pipe_t *pp, int naive_path, size_t bytes) {
    int a = pp->st[0].gpu.device, b = pp->st[1].gpu.device, ab = 0, ba = 0;
    CHECK_CUDA(cudaDeviceCanAccessPeer(&ab, a, b));
    CHECK_CUDA(cudaDeviceCanAccessPeer(&ba, b, a));
    if (naive_path != NAIVE_PATH_HOST && ab && ba) {
        gpu_enable_peer(a, b);
        gpu_enable_peer(b, a);
    }
    void *src, *dst;
    double t[BALANCE_REPS];
    CHECK_CUDA(cudaSetDevice(a));
    CHECK_ALLOC(cudaMalloc(&src, bytes));
    CHECK_CUDA(cudaSetDevice(b));
    CHECK_ALLOC(cudaMalloc(&dst, bytes));
    cudaStream_t s = pp->st[1].gpu.comm_stream;
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    for (int r = 0; r < 2 + BALANCE_REPS; r++) {
        CHECK_CUDA(cudaEventRecord(e0, s));
        CHECK_CUDA(cudaMemcpyPeerAsync(dst, b, src, a, bytes, s));
        CHECK_CUDA(cudaEventRecord(e1, s));
        CHECK_CUDA(cudaEventSynchronize(e1));
        if (r >= 2) t[r - 2] = timing_ms(e0, e1);
    }
    qsort(t, BALANCE_REPS, sizeof *t, cmp_double);
    CHECK_CUDA(cudaEventDestroy(e0));
    CHECK_CUDA(cudaEventDestroy(e1));
    CHECK_CUDA(cudaFree(dst));
    CHECK_CUDA(cudaSetDevice(a));
    CHECK_CUDA(cudaFree(src));
    return t[BALANCE_REPS / 2] / (double)bytes;
}

/* partition_t's stage_ok over a model's spans (model_spans_t). */
static int stage_ok(const void *ctx, int first, int end) { return model_spans_stage_valid(ctx, first, end, NULL); }

int pipe_check_split(pipe_t *pp, const run_cfg_t *cfg, const model_t *m, char *err, size_t errlen) {
    int cuts[MODEL_MAX_LAYERS];
    int n_cuts = model_cut_points(m, MODEL_MAX_CROSS, cuts);
    const char *labels[MODEL_MAX_LAYERS];
    for (int i = 0; i < m->n_layers; i++) labels[i] = m->layers[i].label;
    pp->starts[0] = 0;
    pp->starts[pp->p] = m->n_layers;
    if (cfg->split)
        return split_check(cfg->split, cfg->n_split, m->n_layers, cuts, n_cuts, pp->p, labels, pp->starts, err,
                           errlen) || model_split_valid(m, pp->starts, pp->p, err, errlen) ? -1 : 0;
    if (split_feasible(pp->p, m->n_layers, n_cuts, err, errlen)) return -1;
    /* Whether any split into p valid stages exists, before a GPU is touched: balance unit costs. */
    double *unit = malloc((size_t)m->n_layers * sizeof *unit);
    int *starts = malloc(((size_t)pp->p + 1) * sizeof *starts);
    if (!unit || !starts) check_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    for (int i = 0; i < m->n_layers; i++) unit[i] = 1;
    model_spans_t *spans = malloc(sizeof *spans);
    if (!spans) check_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    model_spans(m, spans);
    partition_t pb = {.cost = unit, .n_layers = m->n_layers, .cuts = cuts, .n_cuts = n_cuts, .micro = pp->micro,
                      .stage_ok = stage_ok, .ctx = spans};
    int rc = partition_balance(&pb, pp->p, starts, err, errlen);
    free(unit);
    free(starts);
    free(spans);
    return rc;
}

/* The predicted stage costs of pp->starts and their slowest over their mean. */
static double predict(pipe_t *pp, const double *cost, int n_layers) {
    for (int s = 0; s < pp->p; s++) pp->predicted_ms[s] = partition_stage_cost(cost, n_layers, pp->starts, pp->p, s);
    return partition_imbalance(cost, n_layers, pp->starts, pp->p);
}

/* The step the schedule would take on split `starts`: each stage's forward + backward per micro-batch from the
 * measured segments, a third each to forward, data gradient and weight gradient (Qi et al.'s equal thirds; GPipe and
 * 1F1B run the last two as one), and each boundary's copy one way (half its cut cost, which is there and back). */
static double simulated_step(const pipe_t *pp, const double *cost, int n_layers, const int *starts,
                             const double *fine_cost, int n_fine, const int *fine) {
    double f[SCHED_MAX_STAGES], copy[SCHED_MAX_STAGES];
    for (int s = 0; s < pp->p; s++) f[s] = partition_stage_cost(cost, n_layers, starts, pp->p, s) / 3.0;
    for (int k = 0; k + 1 < pp->p; k++) {
        copy[k] = 0;
        for (int c = 0; c < n_fine; c++)
            if (fine[c] == starts[k + 1]) copy[k] = fine_cost[c] / 2.0;
    }
    double t = sched_step_time(&pp->sched, f, f, f, copy);
    if (t < 0) check_fail(__FILE__, __LINE__, "sched_step_time", "no schedule, or out of host memory");
    return t;
}

/* SCALING_PIPE_SPLIT: how the split is chosen between the best block cuts and the best cuts inside blocks. balance
 * (the default): the finer split where block cuts leave a stage more than 5 % over the mean and it is better
 * balanced; step: whichever has the shorter simulated step (sched_step_time). Both simulated steps are printed. */
enum { SPLIT_BY_BALANCE = 0, SPLIT_BY_STEP = 1 };   /* its words, in order */

/* Balances over block cuts, then over cuts inside blocks where those leave a stage more than 5 % over the mean and
 * the finer split is better (or, SCALING_PIPE_SPLIT=step, by simulated step). Returns which ("block cuts" / "cuts
 * inside blocks"); the two candidates' simulated steps in sim[0] (block cuts) and sim[1] (inside), -1 for none. */
static const char *balance(pipe_t *pp, const model_t *m, const double *cost, const double *fine_cost, int n_fine,
                           const int *fine, double *sim) {
    int by_step = knob_get(KNOB_PIPE_SPLIT) == SPLIT_BY_STEP;
    sim[0] = sim[1] = -1;
    int blocks[MODEL_MAX_LAYERS], n_blocks = model_cut_points(m, 1, blocks);
    double block_cost[MODEL_MAX_LAYERS];   /* a block cut's copies: its entry among the fine cuts */
    for (int i = 0, j = 0; i < n_blocks; i++) {
        while (fine[j] != blocks[i]) j++;
        block_cost[i] = fine_cost[j];
    }
    char err[256];
    int alt[SCHED_MAX_STAGES + 1];
    partition_t pb = {.cost = cost, .n_layers = m->n_layers, .cuts = blocks, .n_cuts = n_blocks,
                      .cut_cost = block_cost, .micro = pp->micro};
    int rc_block = n_blocks >= pp->p - 1 ? partition_balance(&pb, pp->p, pp->starts, err, sizeof err) : -1;
    double block_balance = rc_block == 0 ? partition_imbalance(cost, m->n_layers, pp->starts, pp->p) : -1;
    pp->block_balance = block_balance;
    if (rc_block == 0) sim[0] = simulated_step(pp, cost, m->n_layers, pp->starts, fine_cost, n_fine, fine);
    if (rc_block == 0 && n_fine == n_blocks) return "block cuts";
    if (rc_block == 0 && block_balance <= BALANCE_TOLERANCE && !by_step) return "block cuts";
    model_spans_t spans;
    model_spans(m, &spans);
    pb.cuts = fine, pb.n_cuts = n_fine, pb.cut_cost = fine_cost, pb.stage_ok = stage_ok, pb.ctx = &spans;
    if (partition_balance(&pb, pp->p, alt, err, sizeof err) != 0)   /* pipe_check_split found one: a bug */
        check_fail(__FILE__, __LINE__, "partition_balance", err);
    alt[pp->p] = m->n_layers;
    sim[1] = simulated_step(pp, cost, m->n_layers, alt, fine_cost, n_fine, fine);
    if (rc_block == 0 && (by_step ? sim[0] <= sim[1]
                                  : partition_imbalance(cost, m->n_layers, alt, pp->p) >= block_balance - 0.005))
        return "block cuts";
    memcpy(pp->starts, alt, (size_t)pp->p * sizeof *alt);
    return "cuts inside blocks";
}

int pipe_choose_split(pipe_t *pp, const run_cfg_t *cfg, const model_t *m, char *err, size_t errlen) {
    double cost[MODEL_MAX_LAYERS] = {0}, seg_ms[MODEL_MAX_LAYERS], cut_cost[MODEL_MAX_LAYERS], sim[2] = {-1, -1};
    int measured = !cfg->split && pp->p > 1;
    const char *how = cfg->split ? (cfg->split_probed ? "balanced by its probe" : "--split") : "one stage";
    pp->predicted_balance = pp->block_balance = -1;
    if (measured) {
        int fine[MODEL_MAX_LAYERS], pos[MODEL_MAX_LAYERS + 1];
        int n_fine = model_cut_points(m, MODEL_MAX_CROSS, fine);
        pos[0] = 0;
        memcpy(pos + 1, fine, (size_t)n_fine * sizeof *fine);
        pos[n_fine + 1] = m->n_layers;
        if (pipe_measure_segments(&pp->st[0].gpu, cfg->model, model_input_of(cfg->data), pp->micro_batch, pos,
                                  n_fine + 1, pp->sched.order == SCHED_ZB, seg_ms) != 0) {
            snprintf(err, errlen, "out of memory: measuring the layers of %s at micro-batch %d needs the whole model "
                     "on GPU %d", m->name, pp->micro_batch, pp->st[0].gpu.device);
            return -1;
        }
        for (int k = 0; k <= n_fine; k++) cost[pos[k]] = seg_ms[k];   /* a segment's time on its first layer */
        size_t biggest = 0, bytes[MODEL_MAX_LAYERS];
        for (int c = 0; c < n_fine; c++) {
            int t[MODEL_MAX_CROSS], n = model_crossing(m, fine[c], t, MODEL_MAX_CROSS);
            bytes[c] = 0;
            for (int i = 0; i < n; i++)
                bytes[c] += shape_numel(m->tensors[t[i]].shape) * dtype_size(model_act_dtype(&pp->st[0].gpu));
            if (bytes[c] > biggest) biggest = bytes[c];
        }
        double per_byte = copy_ms_per_byte(pp, cfg->naive_path, biggest);
        for (int c = 0; c < n_fine; c++) cut_cost[c] = 2.0 * per_byte * (double)bytes[c];   /* there and back */
        how = balance(pp, m, cost, cut_cost, n_fine, fine, sim);
        pp->predicted_balance = predict(pp, cost, m->n_layers);
    }
    pp->starts[pp->p] = m->n_layers;
    partition_format(pp->starts, pp->p, pp->split, sizeof pp->split);
    fprintf(stderr, "pipeline: split %s of %s at micro-batch %d (%s", pp->split, m->name, pp->micro_batch, how);
    if (measured)
        fprintf(stderr, ", balanced by segment times measured as graphs%s: slowest stage %.3f x the mean, %.3f with "
                "block cuts", pp->sched.order == SCHED_ZB ? ", weight gradients after every input gradient" : "",
                pp->predicted_balance, pp->block_balance);
    if (measured && (sim[0] > 0 || sim[1] > 0)) {   /* what the schedule itself would take on each candidate */
        char a[32] = "none", b[32] = "none";
        if (sim[0] > 0) snprintf(a, sizeof a, "%.3f ms", sim[0]);
        if (sim[1] > 0) snprintf(b, sizeof b, "%.3f ms", sim[1]);
        fprintf(stderr, "; simulated step %s with block cuts, %s with cuts inside blocks (SCALING_PIPE_SPLIT)", a, b);
    }
    fprintf(stderr, "):");
    for (int s = 0; s < pp->p; s++) {
        int a = pp->starts[s], b = pp->starts[s + 1];
        fprintf(stderr, "%s stage %d on GPU %d: layers %d-%d (%s..%s)", s ? ";" : "", s, cfg->devices[s], a, b - 1,
                m->layers[a].label, m->layers[b - 1].label);
        if (measured) fprintf(stderr, " %.3f ms", pp->predicted_ms[s]);
    }
    fprintf(stderr, "\n");
    return 0;
}
