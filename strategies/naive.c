/* naive.c — `--strategy naive`: data parallelism with a hand-written all-reduce, the baseline that NCCL is measured
 * against: once backward has ended, GPU 0 gathers every replica's gradients, sums them and sends the sum back, all
 * through GPU 0 (no ring, no overlap with backward); every replica then runs the same SGD step. Over a peer link it
 * is one kernel on GPU 0 that reads each peer's buffer and writes the sum back into it; without one, the buffers are
 * staged through pinned host memory. With --grad-dtype bf16 | fp16 every GPU first rounds its gradients to that type,
 * half the bytes move, and GPU 0 forms each element's sum in fp32 from the 2-byte values, rounding it once. */
#include "dp.h"
#include "../engine/trace.h"
#include "../engine/check.h"
#include "../engine/timing.h"
#include "../engine/nvtx.h"
#include <stdlib.h>
#include <string.h>

/* The copy-sum-broadcast reduction, on raw buffers (training and the all-reduce benchmark run this same code). */
typedef struct {
    int n;
    gpu_t *g[DP_MAX_GPUS];          /* borrowed */
    int p2p[DP_MAX_GPUS];           /* source i >= 1: 1 GPU 0 reads and writes its buffer over the peer link, 0
                                     * staged through host */
    int any_host;
    dtype_t wire;                   /* the type of the buffers copied and summed */
    void *recv[DP_MAX_GPUS];        /* on GPU 0: recv[i] receives host-staged GPU i's buffer (i >= 1, no p2p) */
    void *host[DP_MAX_GPUS];        /* pinned: host[i] stages GPU i's buffer, host[0] the broadcast of the sum */
    cudaEvent_t ready[DP_MAX_GPUS]; /* GPU i: its buffer is final (compute stream) */
    cudaEvent_t sent[DP_MAX_GPUS];  /* GPU i: its buffer can be read (cast, or staged in host memory) */
    cudaEvent_t done[DP_MAX_GPUS];  /* GPU i, host-staged: the sum has arrived (comm stream) */
    cudaEvent_t summed, staged;     /* GPU 0: the sum is in buffer 0 / in host[0] */
    char algo[8];
    struct trace *trace;            /* --trace recorder, or NULL */
} naive_reducer_t;


static int naive_reducer_init(naive_reducer_t *nr, gpu_t *const *gpus, int n, size_t max_count, int path,
                              dtype_t wire, char *err, size_t errlen) {
    memset(nr, 0, sizeof *nr);
    if (n < 1 || n > DP_MAX_GPUS) {
        snprintf(err, errlen, "naive: %d GPUs (1..%d supported)", n, DP_MAX_GPUS);
        return -1;
    }
    nr->n = n;
    nr->wire = wire;
    for (int i = 0; i < n; i++) nr->g[i] = gpus[i];
    int d0 = gpus[0]->device, n_p2p = 0;
    for (int i = 1; i < n; i++) {
        int to = 0, from = 0, di = gpus[i]->device;
        if (di == d0) {   /* two replicas on one GPU (tests): GPU 0's kernel reads its own memory */
            nr->p2p[i] = 1;
            n_p2p++;
            continue;
        }
        CHECK_CUDA(cudaDeviceCanAccessPeer(&to, d0, di));
        CHECK_CUDA(cudaDeviceCanAccessPeer(&from, di, d0));
        if (path == NAIVE_PATH_P2P && !(to && from)) {
            snprintf(err, errlen, "--naive-path p2p: GPU %d and GPU %d have no peer access (use auto or host)", d0, di);
            return -1;
        }
        nr->p2p[i] = path != NAIVE_PATH_HOST && to && from;
        if (nr->p2p[i]) {
            gpu_enable_peer(d0, di);
            gpu_enable_peer(di, d0);
            n_p2p++;
        } else {
            nr->any_host = 1;
        }
    }
    snprintf(nr->algo, sizeof nr->algo, "%s", n == 1 ? "none" : n_p2p == n - 1 ? "p2p" : n_p2p ? "mixed" : "host");
    size_t bytes = (max_count ? max_count : 1) * dtype_size(wire);
    for (int i = 1; i < n; i++) {
        if (nr->p2p[i]) continue;
        CHECK_CUDA(cudaSetDevice(d0));
        CHECK_ALLOC(cudaMalloc((void **)&nr->recv[i], bytes));
        /* Portable: the staging buffer is written by one GPU's context and read by another's. */
        CHECK_CUDA(cudaHostAlloc((void **)&nr->host[i], bytes, cudaHostAllocPortable));
    }
    if (nr->any_host) CHECK_CUDA(cudaHostAlloc((void **)&nr->host[0], bytes, cudaHostAllocPortable));
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(gpus[i]->device));
        CHECK_CUDA(cudaEventCreateWithFlags(&nr->ready[i], cudaEventDisableTiming));
        CHECK_CUDA(cudaEventCreateWithFlags(&nr->sent[i], cudaEventDisableTiming));
        CHECK_CUDA(cudaEventCreateWithFlags(&nr->done[i], cudaEventDisableTiming));
    }
    CHECK_CUDA(cudaSetDevice(d0));
    CHECK_CUDA(cudaEventCreateWithFlags(&nr->summed, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreateWithFlags(&nr->staged, cudaEventDisableTiming));
    return 0;
}

/* In place over bufs[i] (on GPU i; src: cast into them first, see reduce_ops_t.run). Each GPU's comm stream casts
 * its buffer (all concurrently); a GPU without peer access then stages it through host memory into recv[i] on GPU
 * 0. One kernel on GPU 0's comm stream sums GPU 0's own gradients (cast on load) with every other buffer — read
 * over the peer link where there is one — and writes the sum into buffer 0 and straight back into every peer's
 * buffer; the sum goes back through host memory to the others. Only events order the GPUs. t_begin / t_end (GPU 0
 * events, or NULL) bracket the exchange, casts included, from "every gradient is final" to "every GPU has the
 * sum". */
static void naive_reduce(naive_reducer_t *nr, const float *const *src, void *const *bufs, size_t count,
                         cudaEvent_t t_begin, cudaEvent_t t_end) {
    int n = nr->n;
    if (src && !dtype_is_low(nr->wire)) check_fail(__FILE__, __LINE__, "naive_reduce", "a cast to an fp32 wire");
    if (count == 0) return;
    if (n == 1) return;   /* nothing to exchange (dp_update rounds a lone replica's gradients for a 2-byte wire) */
    size_t bytes = count * dtype_size(nr->wire);
    int d0 = nr->g[0]->device;
    cudaStream_t comm0 = nr->g[0]->comm_stream;
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(nr->g[i]->device));
        CHECK_CUDA(cudaEventRecord(nr->ready[i], nr->g[i]->stream));
    }
    for (int i = 1; i < n; i++) {
        int di = nr->g[i]->device;
        cudaStream_t cs = nr->g[i]->comm_stream;
        CHECK_CUDA(cudaSetDevice(di));
        CHECK_CUDA(cudaStreamWaitEvent(cs, nr->ready[i], 0));
        char what[32];
        snprintf(what, sizeof what, "cast to %s", dtype_name(nr->wire));
        if (src) dp_cast_wire(nr->trace, di, bufs[i], nr->wire, src[i], count, NULL, 0, cs, what);
        if (!nr->p2p[i]) {
            int tr = trace_begin(nr->trace, di, TRACE_COMM, cs, "copy to host");
            nvtx_push("host copy gpu%d->host", di);
            CHECK_CUDA(cudaMemcpyAsync(nr->host[i], bufs[i], bytes, cudaMemcpyDeviceToHost, cs));
            nvtx_pop();
            trace_end(nr->trace, tr, cs);
        }
        CHECK_CUDA(cudaEventRecord(nr->sent[i], cs));
    }
    CHECK_CUDA(cudaSetDevice(d0));
    CHECK_CUDA(cudaStreamWaitEvent(comm0, nr->ready[0], 0));
    if (t_begin) {
        for (int i = 1; i < n; i++) CHECK_CUDA(cudaStreamWaitEvent(comm0, nr->ready[i], 0));
        CHECK_CUDA(cudaEventRecord(t_begin, comm0));
    }
    const void *in[DP_MAX_GPUS];
    void *out[DP_MAX_GPUS];
    int n_out = 0;
    for (int i = 1; i < n; i++) {
        CHECK_CUDA(cudaStreamWaitEvent(comm0, nr->sent[i], 0));
        if (nr->p2p[i]) {
            in[i - 1] = bufs[i];
            out[n_out++] = bufs[i];
        } else {
            nvtx_push("host copy host->gpu%d (from gpu%d)", d0, nr->g[i]->device);
            CHECK_CUDA(cudaMemcpyAsync(nr->recv[i], nr->host[i], bytes, cudaMemcpyHostToDevice, comm0));
            nvtx_pop();
            in[i - 1] = nr->recv[i];
        }
    }
    nvtx_push("sum on gpu%d, %d peer%s written back", d0, n_out, n_out == 1 ? "" : "s");
    int tr_sum = trace_begin(nr->trace, d0, TRACE_COMM, comm0, "sum");
    reduce_sum_into(bufs[0], src ? src[0] : NULL, in, n - 1, out, n_out, nr->wire, count, comm0);
    trace_end(nr->trace, tr_sum, comm0);
    nvtx_pop();
    CHECK_CUDA(cudaEventRecord(nr->summed, comm0));
    if (nr->any_host) {
        nvtx_push("host copy gpu%d->host", d0);
        CHECK_CUDA(cudaMemcpyAsync(nr->host[0], bufs[0], bytes, cudaMemcpyDeviceToHost, comm0));
        nvtx_pop();
        CHECK_CUDA(cudaEventRecord(nr->staged, comm0));
    }
    for (int i = 1; i < n; i++) {
        int di = nr->g[i]->device;
        cudaStream_t cs = nr->g[i]->comm_stream;
        CHECK_CUDA(cudaSetDevice(di));
        if (nr->p2p[i]) {   /* the sum is already in bufs[i] */
            CHECK_CUDA(cudaStreamWaitEvent(nr->g[i]->stream, nr->summed, 0));
            continue;
        }
        CHECK_CUDA(cudaStreamWaitEvent(cs, nr->staged, 0));
        int tr = trace_begin(nr->trace, di, TRACE_COMM, cs, "copy from host");
        nvtx_push("host copy host->gpu%d", di);
        CHECK_CUDA(cudaMemcpyAsync(bufs[i], nr->host[0], bytes, cudaMemcpyHostToDevice, cs));
        nvtx_pop();
        trace_end(nr->trace, tr, cs);
        CHECK_CUDA(cudaEventRecord(nr->done[i], cs));
        CHECK_CUDA(cudaStreamWaitEvent(nr->g[i]->stream, nr->done[i], 0));
    }
    CHECK_CUDA(cudaSetDevice(d0));
    if (t_end) {
        for (int i = 1; i < n; i++)
            if (!nr->p2p[i]) CHECK_CUDA(cudaStreamWaitEvent(comm0, nr->done[i], 0));
        CHECK_CUDA(cudaEventRecord(t_end, comm0));
    }
    /* GPU 0 also waits for the host-staged broadcast: host[0] is read until then, and the next step's reduction
     * rewrites it. */
    CHECK_CUDA(cudaStreamWaitEvent(nr->g[0]->stream, nr->summed, 0));
    for (int i = 1; i < n; i++)
        if (!nr->p2p[i]) CHECK_CUDA(cudaStreamWaitEvent(nr->g[0]->stream, nr->done[i], 0));
}

static void naive_reducer_free(naive_reducer_t *nr) {
    if (!nr->n) return;
    for (int i = 0; i < nr->n; i++) {
        CHECK_CUDA(cudaSetDevice(nr->g[i]->device));
        CHECK_CUDA(cudaDeviceSynchronize());
        /* A failed init may have returned before creating the events. */
        if (nr->ready[i]) CHECK_CUDA(cudaEventDestroy(nr->ready[i]));
        if (nr->sent[i]) CHECK_CUDA(cudaEventDestroy(nr->sent[i]));
        if (nr->done[i]) CHECK_CUDA(cudaEventDestroy(nr->done[i]));
    }
    CHECK_CUDA(cudaSetDevice(nr->g[0]->device));
    if (nr->summed) CHECK_CUDA(cudaEventDestroy(nr->summed));
    if (nr->staged) CHECK_CUDA(cudaEventDestroy(nr->staged));
    for (int i = 0; i < nr->n; i++) {
        if (nr->recv[i]) CHECK_CUDA(cudaFree(nr->recv[i]));
        if (nr->host[i]) CHECK_CUDA(cudaFreeHost(nr->host[i]));
    }
    memset(nr, 0, sizeof *nr);
}

// ---- the reduction as a reduce_ops_t (benchmark, tests)

static int naive_ops_open(void **ctx, gpu_t *const *gpus, int n, size_t max_count, int naive_path, dtype_t wire,
                          char *err, size_t errlen) {
    naive_reducer_t *nr = malloc(sizeof *nr);
    if (!nr) { snprintf(err, errlen, "out of host memory"); return -1; }
    if (naive_reducer_init(nr, gpus, n, max_count, naive_path, wire, err, errlen) != 0) {
        naive_reducer_free(nr);
        free(nr);
        return -1;
    }
    *ctx = nr;
    return 0;
}

static void naive_ops_run(void *ctx, const float *const *src, void *const *bufs, size_t count) {
    naive_reduce(ctx, src, bufs, count, NULL, NULL);
}

static const char *naive_ops_algo(void *ctx) { return ((naive_reducer_t *)ctx)->algo; }

static void naive_ops_close(void *ctx) {
    naive_reducer_free(ctx);
    free(ctx);
}

static const reduce_ops_t naive_reduce_ops = {
    .open = naive_ops_open, .run = naive_ops_run, .algo = naive_ops_algo, .close = naive_ops_close,
};

// ---- the strategy

typedef struct {
    dp_t dp;                        /* first: tests reach the replicas through (dp_t *)state */
    naive_reducer_t red;
} naive_t;

static void naive_teardown(void *state) {
    naive_t *s = state;
    naive_reducer_free(&s->red);
    dp_teardown(&s->dp);
    free(s);
}

static int naive_setup(void **state, const run_cfg_t *cfg, char *err, size_t errlen) {
    naive_t *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, errlen, "out of host memory"); return -1; }
    if (dp_setup(&s->dp, cfg, err, errlen) != 0) {
        free(s);
        return -1;
    }
    gpu_t *g[DP_MAX_GPUS];
    dp_gpus(&s->dp, g);
    if (naive_reducer_init(&s->red, g, s->dp.n, dp_n_params(&s->dp), cfg->naive_path, s->dp.wire, err, errlen) != 0) {
        naive_teardown(s);
        return -1;
    }
    s->red.trace = cfg->trace;
    dp_busy_timing(&s->dp, 1);
    if (s->dp.n > 1) {
        dp_comm_timing(&s->dp, 1);
        /* The rows' nccl_algo: the copy path, as the all-reduce benchmark names it (its fit is looked up by it). */
        snprintf(s->dp.algo, sizeof s->dp.algo, "%s", s->red.algo);
    }
    *state = s;
    return 0;
}

static int naive_steps(void *state) { return dp_steps_per_epoch(&((naive_t *)state)->dp); }

static void naive_epoch_begin(void *state, int epoch) { dp_epoch_begin(&((naive_t *)state)->dp, epoch); }

static void naive_train_step(void *state, int step) {
    naive_t *s = state;
    dp_t *dp = &s->dp;
    const float *src_store[DP_MAX_GPUS];
    void *bufs[DP_MAX_GPUS];
    const float *const *src = dp_grad_buffers(dp, src_store, bufs);
    dp_gns_local_t gns_store;
    const dp_gns_local_t *gns = dp_gns_local(dp, &gns_store);
    int layers = dp_layers(dp, NULL);
    size_t n_params = dp_n_params(dp);
    for (int i = 0; i < dp->n; i++) {
        dp_forward(dp, i);
        dp_backward(dp, i, 0, 0, layers);
        /* The reduction sums in place: the shard's own gradient, still whole in fp32 (naive binds no wire), first. */
        if (gns)
            optim_sumsq(src_store[i], DTYPE_FP32, NULL, DTYPE_FP32, n_params, gns->ls[i], gns->acc[i],
                        dp_gpu(dp, i)->stream);
    }
    naive_reduce(&s->red, src, bufs, n_params, dp_comm_event(dp, step, 0, 0), dp_comm_event(dp, step, 0, 1));
    dp_update(dp, step);
}

static void naive_epoch_end(void *state, int steps, epoch_stats_t *out) { dp_epoch_end(&((naive_t *)state)->dp, steps, out); }

static double naive_evaluate(void *state) { return dp_evaluate(&((naive_t *)state)->dp); }

static size_t naive_params(void *state, float *host, size_t max) { return dp_params(&((naive_t *)state)->dp, host, max); }

static int naive_steps_done(void *state, int launched, double *ms) {
    return dp_steps_done(&((naive_t *)state)->dp, launched, ms);
}

const strategy_t strategy_naive = {
    .info = &strategy_info_naive,
    .setup = naive_setup,
    .steps_per_epoch = naive_steps,
    .epoch_begin = naive_epoch_begin,
    .train_step = naive_train_step,
    .epoch_end = naive_epoch_end,
    .evaluate = naive_evaluate,
    .teardown = naive_teardown,
    .reduce = &naive_reduce_ops,
    .params = naive_params,
    .steps_done = naive_steps_done,
};
