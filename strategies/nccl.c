/* nccl.c — `--strategy nccl`: data parallelism with NCCL's ring all-reduce, one process driving every GPU
 * (ncclCommInitRankConfig for each in one group + group calls), or one process per GPU under mpirun/srun
 * (ncclCommInitRankConfig, strategies/dist.h). Gradients are reduced in buckets of consecutive layers, each launched
 * on the comm streams as soon as backward has produced it (--overlap on), so communication hides behind backward;
 * each bucket's SGD runs right after its all-reduce there too, so only the last bucket's all-reduce and update
 * follow backward. --grad-dtype bf16 | fp16 is DDP's bf16_compress_hook / fp16_compress_hook: each bucket is
 * rounded to the 2-byte type on the comm stream and all-reduced in it. */
#include "dp.h"
#include "buckets.h"
#include "../engine/trace.h"
#include "dist.h"
#include "../engine/check.h"
#include "../engine/timing.h"
#include "../engine/nvtx.h"
#include "../engine/knob.h"
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

/* The all-reduce on raw buffers (training and the all-reduce benchmark run this same code). */
typedef struct {
    int n;                          /* GPUs this process drives */
    int world;                      /* GPUs in the all-reduce: n, or dist->size with one process per GPU */
    gpu_t *g[DP_MAX_GPUS];          /* borrowed */
    dtype_t wire;                   /* the type all-reduced */
    ncclComm_t comm[DP_MAX_GPUS];   /* none for one GPU: nothing to exchange */
    cudaEvent_t ready[DP_MAX_GPUS]; /* GPU i: the slice to reduce is final (compute stream) */
    cudaEvent_t done[DP_MAX_GPUS];  /* GPU i: every queued all-reduce has finished (comm stream) */
    char algo[64];                  /* the NCCL_ALGO the communicators were created under */
    int max_ctas;                   /* ncclConfig_t.maxCTAs, from SCALING_NCCL_CTAS; 0: NCCL's own choice */
    struct trace *trace;            /* --trace recorder, or NULL */
} nccl_reducer_t;

/* The communicators' configuration: NCCL's defaults, but for SCALING_NCCL_CTAS=N, at most N CTAs (SMs) per
 * collective kernel, the SMs an all-reduce takes from the compute running beside it. */
static ncclConfig_t reducer_config_(const nccl_reducer_t *nr) {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    if (nr->max_ctas > 0) c.maxCTAs = nr->max_ctas;
    return c;
}

/* One communicator per GPU of this process (ncclCommInitAll), or with dist one per process: rank dist->rank of
 * dist->size (ncclCommInitRank, the unique id broadcast from rank 0 over MPI). */
static int nccl_reducer_init(nccl_reducer_t *nr, gpu_t *const *gpus, int n, const dist_t *dist, dtype_t wire,
                             char *err, size_t errlen) {
    memset(nr, 0, sizeof *nr);
    nr->wire = wire;
    nr->max_ctas = knob_get(KNOB_NCCL_CTAS);
    if (n < 1 || n > DP_MAX_GPUS) {
        snprintf(err, errlen, "nccl: %d GPUs (1..%d supported)", n, DP_MAX_GPUS);
        return -1;
    }
    /* The strategy is the ring all-reduce (the study compares it with naive's copy-sum-broadcast); left alone,
     * NCCL picks NVLS or tree for some sizes and machines. A user's own NCCL_ALGO wins, and the row says which. */
    setenv("NCCL_ALGO", "Ring", 0);
    snprintf(nr->algo, sizeof nr->algo, "%s", getenv("NCCL_ALGO"));
    int devs[DP_MAX_GPUS];
    for (int i = 0; i < n; i++) {
        nr->g[i] = gpus[i];
        devs[i] = gpus[i]->device;
    }
    if (dist) {
        if (n != 1) {
            snprintf(err, errlen, "nccl: one process per GPU drives 1 GPU (asked for %d)", n);
            return -1;
        }
        ncclUniqueId id;
        dist_nccl_id(dist, &id, sizeof id);
        CHECK_CUDA(cudaSetDevice(devs[0]));
        ncclConfig_t config = reducer_config_(nr);
        ncclResult_t r = ncclCommInitRankConfig(&nr->comm[0], dist->size, id, dist->rank, &config);
        if (r != ncclSuccess)
            snprintf(err, errlen, "ncclCommInitRankConfig (rank %d of %d, GPU %d): %s (%s)", dist->rank, dist->size,
                     devs[0], ncclGetErrorString(r), ncclGetLastError(NULL));
        /* Every rank learns of a failure anywhere; the others drop their communicator without talking to it. */
        if (dist_agree(dist, r == ncclSuccess ? 0 : -1, err, errlen) != 0) {
            if (r == ncclSuccess) CHECK_NCCL(ncclCommAbort(nr->comm[0]));
            memset(nr->comm, 0, sizeof nr->comm);
            return -1;
        }
        nr->world = dist->size;
    } else if (n > 1) {
        /* What ncclCommInitAll does, with a configuration: one unique id, every rank's init in one group. */
        ncclUniqueId id;
        ncclConfig_t config[DP_MAX_GPUS];
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r == ncclSuccess) {
            CHECK_NCCL(ncclGroupStart());
            for (int i = 0; i < n && r == ncclSuccess; i++) {
                config[i] = reducer_config_(nr);
                CHECK_CUDA(cudaSetDevice(devs[i]));
                r = ncclCommInitRankConfig(&nr->comm[i], n, id, i, &config[i]);
            }
            ncclResult_t e = ncclGroupEnd();
            if (r == ncclSuccess) r = e;
        }
        if (r != ncclSuccess) {
            snprintf(err, errlen, "ncclCommInitRankConfig over %d GPUs: %s (%s)", n, ncclGetErrorString(r),
                     ncclGetLastError(NULL));
            for (int i = 0; i < n; i++)
                if (nr->comm[i]) ncclCommAbort(nr->comm[i]);   /* unchecked: the group already failed */
            memset(nr->comm, 0, sizeof nr->comm);
            return -1;
        }
    }
    if (!dist) nr->world = n;
    nr->n = n;
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(devs[i]));
        CHECK_CUDA(cudaEventCreateWithFlags(&nr->ready[i], cudaEventDisableTiming));
        CHECK_CUDA(cudaEventCreateWithFlags(&nr->done[i], cudaEventDisableTiming));
    }
    return 0;
}

/* A bucket's cast where backward has written parts of it into the 2-byte wire already (dp_bind_wire): the n parts left,
 * (offset, count) pairs of the whole buffer in device memory on each GPU, the longest max_count. */
typedef struct {
    int n;
    size_t max_count;
    const size_t *ranges[DP_MAX_GPUS];
} nccl_cast_t;

/* All-reduces elements [offset, offset + count) of every bufs[i], in place, once the work already queued on each
 * compute stream is done; with src (a 2-byte wire), each GPU's comm stream first rounds src[i]'s same elements into
 * bufs[i] (with cast, only its parts). t_begin / t_end (GPU 0 events, or NULL) bracket it, cast included, on GPU
 * 0's comm stream.
 * NCCL's bf16 and fp16 sums add two 2-byte values and round at every step of the ring (__hadd on sm_80 and later,
 * src/device/reduce_kernel.h): n - 1 roundings per element, one for 2 GPUs. */
static void nccl_reduce_slice(nccl_reducer_t *nr, const float *const *src, void *const *bufs, size_t offset,
                              size_t count, const nccl_cast_t *cast, int bucket, const dp_gns_local_t *gns,
                              cudaEvent_t t_begin, cudaEvent_t t_end) {
    if (src && !dtype_is_low(nr->wire)) check_fail(__FILE__, __LINE__, "nccl_reduce_slice", "a cast to an fp32 wire");
    /* One GPU: nothing to exchange (dp_update rounds a lone replica's gradients for a 2-byte wire). */
    if (count == 0 || nr->world == 1) return;
    size_t esize = dtype_size(nr->wire);
    int tr[DP_MAX_GPUS];
    char name[32];
    snprintf(name, sizeof name, "cast %d", bucket);
    for (int i = 0; i < nr->n; i++) {
        CHECK_CUDA(cudaSetDevice(nr->g[i]->device));
        CHECK_CUDA(cudaEventRecord(nr->ready[i], nr->g[i]->stream));
        CHECK_CUDA(cudaStreamWaitEvent(nr->g[i]->comm_stream, nr->ready[i], 0));
    }
    if (t_begin) {
        CHECK_CUDA(cudaSetDevice(nr->g[0]->device));
        CHECK_CUDA(cudaEventRecord(t_begin, nr->g[0]->comm_stream));
    }
    for (int i = 0; src && i < nr->n; i++) {
        CHECK_CUDA(cudaSetDevice(nr->g[i]->device));
        if (!cast)
            dp_cast_wire(nr->trace, nr->g[i]->device, (char *)bufs[i] + offset * esize, nr->wire, src[i] + offset,
                         count, NULL, 0, nr->g[i]->comm_stream, name);
        else if (cast->n > 0)
            dp_cast_wire(nr->trace, nr->g[i]->device, bufs[i], nr->wire, src[i], cast->max_count, cast->ranges[i],
                         cast->n, nr->g[i]->comm_stream, name);
    }
    /* The noise scale's local |g_i|^2: the slice as it goes on the wire (cast, where it is cast), before the sum
     * replaces it. */
    for (int i = 0; gns && i < nr->n; i++) {
        CHECK_CUDA(cudaSetDevice(nr->g[i]->device));
        optim_sumsq((char *)bufs[i] + offset * esize, nr->wire, NULL, DTYPE_FP32, count, gns->ls[i], gns->acc[i],
                    nr->g[i]->comm_stream);
    }
    snprintf(name, sizeof name, "allreduce %d", bucket);
    for (int i = 0; i < nr->n; i++)
        tr[i] = trace_begin(nr->trace, nr->g[i]->device, TRACE_COMM, nr->g[i]->comm_stream, name);
    static const ncclDataType_t nccl_type[DTYPE_COUNT] = {ncclFloat, ncclBfloat16, ncclHalf};
    const ncclDataType_t type = nccl_type[nr->wire];
    /* One thread drives every GPU: the calls must be one group, or the first would wait for its peers forever. */
    CHECK_NCCL(ncclGroupStart());
    for (int i = 0; i < nr->n; i++) {
        nvtx_push("allreduce bucket %d gpu%d", bucket, nr->g[i]->device);
        char *b = (char *)bufs[i] + offset * esize;
        ncclResult_t rr = ncclAllReduce(b, b, count, type, ncclSum, nr->comm[i], nr->g[i]->comm_stream);
        if (rr == ncclSuccess && fault_inject(FAULT_COLLECTIVE)) rr = ncclRemoteError;   /* test-only */
        CHECK_NCCL(rr);
        nvtx_pop();
    }
    CHECK_NCCL(ncclGroupEnd());
    for (int i = 0; i < nr->n; i++) trace_end(nr->trace, tr[i], nr->g[i]->comm_stream);
    if (t_end) {
        CHECK_CUDA(cudaSetDevice(nr->g[0]->device));
        CHECK_CUDA(cudaEventRecord(t_end, nr->g[0]->comm_stream));
    }
}

/* Every compute stream waits for every all-reduce queued so far on its GPU's comm stream. */
static void nccl_reduce_finish(nccl_reducer_t *nr) {
    if (nr->world == 1) return;
    for (int i = 0; i < nr->n; i++) {
        CHECK_CUDA(cudaSetDevice(nr->g[i]->device));
        CHECK_CUDA(cudaEventRecord(nr->done[i], nr->g[i]->comm_stream));
        CHECK_CUDA(cudaStreamWaitEvent(nr->g[i]->stream, nr->done[i], 0));
    }
}

static void nccl_reducer_free(nccl_reducer_t *nr) {
    if (!nr->n) return;
    for (int i = 0; i < nr->n; i++) {
        CHECK_CUDA(cudaSetDevice(nr->g[i]->device));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaEventDestroy(nr->ready[i]));
        CHECK_CUDA(cudaEventDestroy(nr->done[i]));
    }
    if (nr->world > 1) {
        /* Finalising is collective: from one thread, the communicators finalise together in one group. */
        CHECK_NCCL(ncclGroupStart());
        for (int i = 0; i < nr->n; i++) CHECK_NCCL(ncclCommFinalize(nr->comm[i]));
        CHECK_NCCL(ncclGroupEnd());
        for (int i = 0; i < nr->n; i++) CHECK_NCCL(ncclCommDestroy(nr->comm[i]));
    }
    memset(nr, 0, sizeof *nr);
}

// ---- the reduction as a reduce_ops_t (benchmark, tests): one bucket over the whole buffer

static int nccl_ops_open(void **ctx, gpu_t *const *gpus, int n, size_t max_count, int naive_path, dtype_t wire,
                         char *err, size_t errlen) {
    (void)max_count;
    (void)naive_path;
    nccl_reducer_t *nr = malloc(sizeof *nr);
    if (!nr) { snprintf(err, errlen, "out of host memory"); return -1; }
    if (nccl_reducer_init(nr, gpus, n, NULL, wire, err, errlen) != 0) {
        free(nr);
        return -1;
    }
    *ctx = nr;
    return 0;
}

static void nccl_ops_run(void *ctx, const float *const *src, void *const *bufs, size_t count) {
    nccl_reduce_slice(ctx, src, bufs, 0, count, NULL, 0, NULL, NULL, NULL);
    nccl_reduce_finish(ctx);
}

static const char *nccl_ops_algo(void *ctx) { return ((nccl_reducer_t *)ctx)->algo; }

static void nccl_ops_close(void *ctx) {
    nccl_reducer_free(ctx);
    free(ctx);
}

static const reduce_ops_t nccl_reduce_ops = {
    .open = nccl_ops_open, .run = nccl_ops_run, .algo = nccl_ops_algo, .close = nccl_ops_close,
};

// ---- the strategy

/* SCALING_DP_UPDATE: where the SGD step runs. bucket (the default with more than one GPU): each bucket's slice right
 * after its all-reduce on the comm stream, beside the rest of backward, and only the last bucket's in the update
 * segment; step: the whole buffer in the update segment, after every all-reduce. Per element the same arithmetic,
 * so the two give bit-identical parameters (tests/gpu/test_dp_update.c). */
enum { UPDATE_BUCKET = 0, UPDATE_STEP = 1 };   /* SCALING_DP_UPDATE's words, in order */
/* SCALING_WGRAD (replica_wgrad_direct), with a wire of the math's activation type (--grad-dtype bf16 under --math
 * bf16, fp16 under fp16) on more than one GPU: direct (the default), cuDNN's 2-byte weight gradients are written
 * straight into the wire buffer and only the rest is cast; widen, they are widened into the fp32 gradients by
 * backward and cast back by the reduction. The same bits on the wire either way. */

typedef struct {
    dp_t dp;                        /* first: tests reach the replicas through (dp_t *)state */
    nccl_reducer_t red;
    int overlap;
    int update;                     /* UPDATE_BUCKET or UPDATE_STEP (with one GPU: step, nothing to wait for) */
    int n_buckets;
    bucket_t buckets[MODEL_MAX_LAYERS];
    /* SCALING_WGRAD=direct where it applies: each bucket's parts still cast (dp_bind_wire), in cast_dev[i] on GPU
     * i; NULL cast_dev: every bucket is cast whole. */
    nccl_cast_t cast[MODEL_MAX_LAYERS];
    size_t *cast_dev[DP_MAX_GPUS];
    size_t bound;                   /* gradients written in the wire's 2-byte type by backward */
} nccl_t;

/* Binds the 2-byte weight gradients to the wire buffers and builds each bucket's cast of the rest. */
static void cast_plan_(nccl_t *s) {
    size_t ranges[2 * (MODEL_MAX_LAYERS + 1)];
    int n = dp_bind_wire(&s->dp, ranges, MODEL_MAX_LAYERS + 1);
    size_t total = dp_n_params(&s->dp), rest = 0;
    for (int r = 0; r < n; r++) rest += ranges[2 * r + 1];
    s->bound = total - rest;
    /* Each bucket's parts: the ranges cut at its ends (a range split by a bucket boundary adds one). */
    size_t *host = malloc(2 * (size_t)(n + s->n_buckets) * sizeof *host);
    if (!host) { fprintf(stderr, "nccl: out of host memory\n"); exit(1); }
    int k = 0, first[MODEL_MAX_LAYERS];
    for (int b = 0; b < s->n_buckets; b++) {
        size_t lo = s->buckets[b].offset, hi = lo + s->buckets[b].count;
        nccl_cast_t *c = &s->cast[b];
        first[b] = k;
        c->max_count = 0;
        for (int r = 0; r < n; r++) {
            size_t a = ranges[2 * r] > lo ? ranges[2 * r] : lo, e = ranges[2 * r] + ranges[2 * r + 1];
            if (e > hi) e = hi;
            if (e <= a) continue;
            host[2 * k] = a;
            host[2 * k + 1] = e - a;
            if (e - a > c->max_count) c->max_count = e - a;
            k++;
        }
        c->n = k - first[b];
    }
    for (int i = 0; i < s->dp.n; i++) {
        CHECK_CUDA(cudaSetDevice(dp_gpu(&s->dp, i)->device));
        CHECK_ALLOC(cudaMalloc((void **)&s->cast_dev[i], (k ? 2 * (size_t)k : 2) * sizeof(size_t)));
        CHECK_CUDA(cudaMemcpy(s->cast_dev[i], host, 2 * (size_t)k * sizeof(size_t), cudaMemcpyHostToDevice));
    }
    for (int b = 0; b < s->n_buckets; b++)
        for (int i = 0; i < s->dp.n; i++) s->cast[b].ranges[i] = s->cast_dev[i] + 2 * (size_t)first[b];
    free(host);
}

static void nccl_teardown(void *state) {
    nccl_t *s = state;
    for (int i = 0; i < s->dp.n; i++)
        if (s->cast_dev[i]) {
            CHECK_CUDA(cudaSetDevice(dp_gpu(&s->dp, i)->device));
            CHECK_CUDA(cudaDeviceSynchronize());
            CHECK_CUDA(cudaFree(s->cast_dev[i]));
        }
    nccl_reducer_free(&s->red);
    dp_teardown(&s->dp);
    free(s);
}

static int nccl_setup(void **state, const run_cfg_t *cfg, char *err, size_t errlen) {
    nccl_t *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, errlen, "out of host memory"); return -1; }
    int mine = dp_setup(&s->dp, cfg, err, errlen);
    /* One process per GPU: a rank that cannot set up (out of memory on its GPU) must not leave the others waiting
     * in ncclCommInitRank; every rank reports the first failure. */
    if (dist_agree(cfg->dist, mine, err, errlen) != 0) {
        if (mine == 0) dp_teardown(&s->dp);
        free(s);
        return -1;
    }
    gpu_t *g[DP_MAX_GPUS];
    dp_gpus(&s->dp, g);
    if (nccl_reducer_init(&s->red, g, s->dp.n, cfg->dist, s->dp.wire, err, errlen) != 0) {
        nccl_teardown(s);
        return -1;
    }
    s->red.trace = cfg->trace;
    s->overlap = cfg->overlap;
    size_t first[MODEL_MAX_LAYERS];
    int layers = dp_layers(&s->dp, first);
    s->n_buckets = buckets_build(layers, first, dp_n_params(&s->dp), sizeof(float),
                                 cfg->bucket_bytes ? cfg->bucket_bytes : 1, s->buckets);
    /* One GPU reduces nothing, and a lone 2-byte replica rounds its whole buffer in the update segment (dp_update). A
     * loss-scaled step is skipped or not as a whole, known once every bucket is reduced and checked; LARS needs
     * every layer's whole gradient for its norms, and a language model's AdamW the global norm it clips by: only an
     * image classifier's SGD may step a bucket before. */
    s->update = s->dp.world > 1 && s->dp.reps && !math_loss_scaled(cfg->math) && cfg->optim.kind == OPTIM_SGD
                    ? knob_get(KNOB_DP_UPDATE) : UPDATE_STEP;
    if (s->update == UPDATE_BUCKET) {
        const bucket_t *last = &s->buckets[s->n_buckets - 1];
        for (int i = 0; i < s->dp.n; i++) replica_set_update_slice(&s->dp.reps[i], last->offset, last->count);
    }
    /* A lone replica's update rounds its whole fp32 buffer (dp_update): nothing may bypass it there. */
    if (s->dp.reps && dtype_is_low(s->dp.wire) && s->dp.wire == math_act_dtype(cfg->math) && s->dp.world > 1 &&
        replica_wgrad_direct())
        cast_plan_(s);
    if (!cfg->dist || cfg->dist->is_root) {
        const bucket_t *last = &s->buckets[s->n_buckets - 1];
        char ctas[16] = "NCCL's";
        if (s->red.max_ctas) snprintf(ctas, sizeof ctas, "%d", s->red.max_ctas);
        fprintf(stderr, "nccl: %d buckets, the last %.2f MiB; %s per %s (SCALING_DP_UPDATE); comm stream priority %s "
                "(SCALING_COMM_PRIORITY); max CTAs %s (SCALING_NCCL_CTAS); %zu of %zu gradients written in %s by "
                "backward (SCALING_WGRAD)\n", s->n_buckets,
                (double)last->count * dtype_size(s->dp.wire) / 1048576.0, s->dp.reps ? "SGD" : "AdamW",
                !s->dp.reps ? "step (its clipping reads the global norm of every bucket first)"
                : math_loss_scaled(cfg->math) ? "step (loss-scaled: one check of every bucket first)"
                                              : knob_word(KNOB_DP_UPDATE, s->update),
                dp_gpu(&s->dp, 0)->comm_high ? "high" : "normal", ctas, s->bound, dp_n_params(&s->dp),
                dtype_name(s->dp.wire));
    }
    dp_busy_timing(&s->dp, s->n_buckets);
    if (s->overlap && s->n_buckets > 1 && s->dp.world > 1) dp_solo_timing(&s->dp);
    if (s->dp.world > 1) {
        dp_comm_timing(&s->dp, s->n_buckets);
        snprintf(s->dp.algo, sizeof s->dp.algo, "%s", s->red.algo);
    }
    *state = s;
    return 0;
}

static int nccl_steps(void *state) { return dp_steps_per_epoch(&((nccl_t *)state)->dp); }

static void nccl_epoch_begin(void *state, int epoch) { dp_epoch_begin(&((nccl_t *)state)->dp, epoch); }

/* Bucket b's all-reduce and, per bucket, its SGD slice after it on each comm stream (the last bucket's slice is the
 * update segment's, on the compute stream). */
static void launch_bucket_(nccl_t *s, const float *const *src, void *const *bufs, const dp_gns_local_t *gns,
                           int step, int b) {
    const bucket_t *k = &s->buckets[b];
    nccl_reduce_slice(&s->red, src, bufs, k->offset, k->count, s->cast_dev[0] ? &s->cast[b] : NULL, b, gns,
                      dp_comm_event(&s->dp, step, b, 0), dp_comm_event(&s->dp, step, b, 1));
    if (s->update != UPDATE_BUCKET || b == s->n_buckets - 1) return;
    char name[32];
    snprintf(name, sizeof name, "update %d", b);
    for (int i = 0; i < s->dp.n; i++) {   /* UPDATE_BUCKET: image classifiers' replicas (SGD) only */
        replica_t *r = &s->dp.reps[i];
        CHECK_CUDA(cudaSetDevice(r->gpu.device));
        int tr = trace_begin(r->trace, r->gpu.device, TRACE_COMM, r->gpu.comm_stream, name);
        nvtx_push("update bucket %d gpu%d", b, r->gpu.device);
        replica_sgd_slice(r, k->offset, k->count, r->gpu.comm_stream);
        nvtx_pop();
        trace_end(r->trace, tr, r->gpu.comm_stream);
    }
}

static void nccl_train_step(void *state, int step) {
    nccl_t *s = state;
    dp_t *dp = &s->dp;
    const float *src_store[DP_MAX_GPUS];
    void *bufs[DP_MAX_GPUS];
    const float *const *src = dp_grad_buffers(dp, src_store, bufs);
    dp_gns_local_t gns_store;
    const dp_gns_local_t *gns = dp_gns_local(dp, &gns_store);
    /* The epoch's solo step (dp.h) runs as --overlap off: its backward segments alone time the compute that the
     * other steps' segments, beside the all-reduces, may stretch. */
    int overlap = s->overlap && !dp_solo_step(dp, step);
    for (int i = 0; i < dp->n; i++) dp_forward(dp, i);
    /* Backward bucket by bucket, every replica in turn, so bucket b's all-reduce is queued while bucket b+1's
     * backward is still computing. */
    for (int b = 0; b < s->n_buckets; b++) {
        for (int i = 0; i < dp->n; i++) {
            nvtx_push("backward bucket %d gpu%d", b, dp_gpu(dp, i)->device);
            dp_backward(dp, i, b, s->buckets[b].lo, s->buckets[b].hi);
            nvtx_pop();
        }
        if (overlap) launch_bucket_(s, src, bufs, gns, step, b);
    }
    if (!overlap)
        for (int b = 0; b < s->n_buckets; b++) launch_bucket_(s, src, bufs, gns, step, b);
    nccl_reduce_finish(&s->red);
    dp_update(dp, step);
}

/* The watchdog's question (strategy.h): NCCL reports a peer that died or a network error asynchronously, on the
 * communicator; the collective itself would only wait. The communicator is aborted so nothing waits on it. */
static int nccl_health(void *state, char *why, size_t len) {
    nccl_t *s = state;
    for (int i = 0; s->red.world > 1 && i < s->red.n; i++) {
        ncclResult_t async = ncclSuccess;
        ncclResult_t r = ncclCommGetAsyncError(s->red.comm[i], &async);
        if (r == ncclSuccess && (async == ncclSuccess || async == ncclInProgress)) continue;
        snprintf(why, len, "NCCL asynchronous error on GPU %d: %s (%s)", s->red.g[i]->device,
                 ncclGetErrorString(r != ncclSuccess ? r : async), ncclGetLastError(s->red.comm[i]));
        ncclCommAbort(s->red.comm[i]);    /* unchecked: the communicator is already broken */
        return 1;
    }
    return 0;
}

static void nccl_epoch_end(void *state, int steps, epoch_stats_t *out) { dp_epoch_end(&((nccl_t *)state)->dp, steps, out); }

static double nccl_evaluate(void *state) { return dp_evaluate(&((nccl_t *)state)->dp); }

static size_t nccl_params(void *state, float *host, size_t max) { return dp_params(&((nccl_t *)state)->dp, host, max); }

static int nccl_steps_done(void *state, int launched, double *ms) {
    return dp_steps_done(&((nccl_t *)state)->dp, launched, ms);
}

const strategy_t strategy_nccl = {
    .info = &strategy_info_nccl,
    .setup = nccl_setup,
    .steps_per_epoch = nccl_steps,
    .epoch_begin = nccl_epoch_begin,
    .train_step = nccl_train_step,
    .epoch_end = nccl_epoch_end,
    .evaluate = nccl_evaluate,
    .teardown = nccl_teardown,
    .reduce = &nccl_reduce_ops,
    .params = nccl_params,
    .health = nccl_health,
    .steps_done = nccl_steps_done,
};
