/* dp.c — the replicas, timing, replica check and evaluation that the naive and nccl strategies share, so the
 * two differ only in how gradients are exchanged (and their rows are measured the same way). */
#include "dp.h"
#include "shard.h"
#include "../engine/check.h"
#include <stdlib.h>
#include <string.h>

int dp_setup(dp_t *dp, const run_cfg_t *cfg, char *err, size_t errlen) {
    memset(dp, 0, sizeof *dp);
    int n = cfg->n_gpus;
    if (n > DP_MAX_GPUS) {
        snprintf(err, errlen, "at most %d GPUs for a data-parallel strategy (asked for %d)", DP_MAX_GPUS, n);
        return -1;
    }
    shard_t sh;
    if (shard_split(cfg->global_batch, n, 0, &sh, err, errlen) != 0) return -1;
    dp->reps = calloc((size_t)n, sizeof *dp->reps);
    if (!dp->reps) { snprintf(err, errlen, "out of host memory"); return -1; }
    dp->n = n;
    for (int i = 0; i < n; i++)
        if (replica_init(&dp->reps[i], cfg->devices[i], cfg->model, sh.count, cfg->global_batch, cfg->math,
                         cfg->init, cfg->seed, (float)cfg->lr, (float)cfg->momentum, (float)cfg->weight_decay,
                         cfg->data, err, errlen) != 0) {
            dp_teardown(dp);
            return -1;
        }
    /* Timing events on an even sample of the steps keeps the event count bounded for small batches
     * (LeNet at batch 4 has 15000 steps) while every part of the epoch is represented. */
    int steps = dp->reps[0].steps_per_epoch;
    dp->stride = (steps + DP_TIMED_MAX - 1) / DP_TIMED_MAX;
    dp->n_slots = (steps + dp->stride - 1) / dp->stride;
    dp->marks = calloc((size_t)n * dp->n_slots * 2, sizeof(cudaEvent_t));
    if (!dp->marks) { snprintf(err, errlen, "out of host memory"); dp_teardown(dp); return -1; }
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(dp->reps[i].gpu.device));
        for (int k = 0; k < dp->n_slots * 2; k++) CHECK_CUDA(cudaEventCreate(&dp->marks[i * dp->n_slots * 2 + k]));
        CHECK_CUDA(cudaMalloc((void **)&dp->checksum[i], sizeof(unsigned long long)));
    }
    return 0;
}

void dp_comm_timing(dp_t *dp, int comm_per_step) {
    if (comm_per_step <= 0) return;
    size_t count = (size_t)dp->n_slots * comm_per_step * 2;
    dp->comm = calloc(count, sizeof(cudaEvent_t));
    if (!dp->comm) { fprintf(stderr, "dp_comm_timing: out of host memory\n"); exit(1); }
    dp->comm_per_step = comm_per_step;
    CHECK_CUDA(cudaSetDevice(dp->reps[0].gpu.device));
    for (size_t k = 0; k < count; k++) CHECK_CUDA(cudaEventCreate(&dp->comm[k]));
}

void dp_gpus(dp_t *dp, gpu_t **out) {
    for (int i = 0; i < dp->n; i++) out[i] = &dp->reps[i].gpu;
}

void dp_epoch_begin(dp_t *dp, int epoch) {
    for (int i = 0; i < dp->n; i++) replica_epoch_begin(&dp->reps[i], epoch);
}

static int slot_of(const dp_t *dp, int step) {
    if (step % dp->stride) return -1;
    int s = step / dp->stride;
    return s < dp->n_slots ? s : -1;
}

static cudaEvent_t mark_event(const dp_t *dp, int gpu, int slot, int resume) {
    return dp->marks[((size_t)gpu * dp->n_slots + slot) * 2 + resume];
}

void dp_mark(dp_t *dp, int step, int resume) {
    int s = slot_of(dp, step);
    if (s < 0) return;
    for (int i = 0; i < dp->n; i++) {
        CHECK_CUDA(cudaSetDevice(dp->reps[i].gpu.device));
        CHECK_CUDA(cudaEventRecord(mark_event(dp, i, s, resume), dp->reps[i].gpu.stream));
    }
}

cudaEvent_t dp_comm_event(const dp_t *dp, int step, int k, int end) {
    int s = slot_of(dp, step);
    if (s < 0 || !dp->comm || k >= dp->comm_per_step) return NULL;
    return dp->comm[((size_t)s * dp->comm_per_step + k) * 2 + end];
}

void dp_update(dp_t *dp, int step) {
    for (int i = 0; i < dp->n; i++) replica_update(&dp->reps[i], step);
}

static float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

void dp_epoch_end(dp_t *dp, int steps, epoch_stats_t *out) {
    out->steps = steps;
    out->epoch_s = out->step_ms = out->train_loss = out->train_acc = 0;
    out->peak_mem_mb = 0;
    for (int i = 0; i < dp->n; i++) {
        replica_t *r = &dp->reps[i];
        double es, ms, loss, acc;
        replica_epoch_end(r, steps, &es, &ms, &loss, &acc);
        /* The comm stream's events may trail the compute stream's last one: wait for everything, once. */
        CHECK_CUDA(cudaDeviceSynchronize());
        if (es > out->epoch_s) out->epoch_s = es;
        if (ms > out->step_ms) out->step_ms = ms;
        out->train_loss += loss / dp->n;    /* equal shards: the mean over replicas is the mean over images */
        out->train_acc += acc / dp->n;
        double mem = replica_mem_mb(r);
        if (mem > out->peak_mem_mb) out->peak_mem_mb = mem;
    }
    /* Per GPU: mean over the timed steps of (step time - exposed wait) and of the exposed wait; the row gets
     * the slowest GPU, because the step ends when it does. Communication is timed on GPU 0's comm stream. */
    double compute = 0, exposed = 0, comm = 0;
    int timed = 0;
    for (int i = 0; i < dp->n; i++) {
        double c = 0, x = 0;
        timed = 0;
        for (int s = 0; s < dp->n_slots && s * dp->stride < steps; s++, timed++) {
            int step = s * dp->stride;
            double wait = elapsed_ms(mark_event(dp, i, s, 0), mark_event(dp, i, s, 1));
            x += wait;
            c += elapsed_ms(dp->reps[i].step_events[step], dp->reps[i].step_events[step + 1]) - wait;
            if (i == 0)
                for (int k = 0; k < dp->comm_per_step; k++)
                    comm += elapsed_ms(dp->comm[((size_t)s * dp->comm_per_step + k) * 2],
                                       dp->comm[((size_t)s * dp->comm_per_step + k) * 2 + 1]);
        }
        if (timed && c / timed > compute) compute = c / timed;
        if (timed && x / timed > exposed) exposed = x / timed;
    }
    out->compute_ms = compute;
    out->exposed_comm_ms = exposed;
    double grad_bytes = (double)dp->reps[0].model.n_params * sizeof(float);
    if (dp->n > 1 && timed && comm > 0) {
        out->comm_ms = comm / timed;
        out->bytes_per_step = grad_bytes;
        /* nccl-tests' definitions for an all-reduce of S bytes in t seconds: algbw = S/t, busbw = algbw*2(n-1)/n. */
        out->algbw_gbs = grad_bytes / (out->comm_ms * 1e-3) / 1e9;
        out->busbw_gbs = out->algbw_gbs * 2.0 * (dp->n - 1) / dp->n;
    } else {
        out->comm_ms = 0;               /* one replica: nothing to exchange */
        out->bytes_per_step = 0;
    }
    out->replicas_identical = dp_replicas_identical(dp);
    snprintf(out->nccl_algo, sizeof out->nccl_algo, "%s", dp->algo);
}

int dp_replicas_identical(dp_t *dp) {
    unsigned long long sums[DP_MAX_GPUS];
    for (int i = 0; i < dp->n; i++) {
        replica_t *r = &dp->reps[i];
        CHECK_CUDA(cudaSetDevice(r->gpu.device));
        reduce_checksum(r->model.params, r->model.n_params, dp->checksum[i], r->gpu.stream);
        CHECK_CUDA(cudaMemcpyAsync(&sums[i], dp->checksum[i], sizeof sums[i], cudaMemcpyDeviceToHost, r->gpu.stream));
    }
    int same = 1;
    for (int i = 0; i < dp->n; i++) {
        CHECK_CUDA(cudaSetDevice(dp->reps[i].gpu.device));
        CHECK_CUDA(cudaStreamSynchronize(dp->reps[i].gpu.stream));
        same &= sums[i] == sums[0];
    }
    return same;
}

double dp_evaluate(dp_t *dp) { return replica_evaluate(&dp->reps[0]); }

void dp_teardown(dp_t *dp) {
    for (int i = 0; i < dp->n; i++) {
        replica_t *r = &dp->reps[i];
        if (!r->gpu.stream) continue;
        CHECK_CUDA(cudaSetDevice(r->gpu.device));
        CHECK_CUDA(cudaDeviceSynchronize());
        for (int k = 0; dp->marks && k < dp->n_slots * 2; k++)
            CHECK_CUDA(cudaEventDestroy(dp->marks[i * dp->n_slots * 2 + k]));
        if (i == 0)
            for (int k = 0; dp->comm && k < dp->n_slots * dp->comm_per_step * 2; k++)
                CHECK_CUDA(cudaEventDestroy(dp->comm[k]));
        if (dp->checksum[i]) CHECK_CUDA(cudaFree(dp->checksum[i]));
        replica_free(r);
    }
    free(dp->marks);
    free(dp->comm);
    free(dp->reps);
    memset(dp, 0, sizeof *dp);
}

unsigned long long dp_check_reduce(const reduce_ops_t *ops, void *ctx, gpu_t *const *gpus, int n, float *const *bufs,
                                   size_t count) {
    unsigned long long *wrong[DP_MAX_GPUS];
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(gpus[i]->device));
        CHECK_CUDA(cudaMalloc((void **)&wrong[i], sizeof(unsigned long long)));
        CHECK_CUDA(cudaMemsetAsync(wrong[i], 0, sizeof(unsigned long long), gpus[i]->stream));
        reduce_fill_pattern(bufs[i], count, i, gpus[i]->stream);
    }
    ops->run(ctx, bufs, count);
    unsigned long long total = 0;
    for (int i = 0; i < n; i++) {
        unsigned long long w = 0;
        CHECK_CUDA(cudaSetDevice(gpus[i]->device));
        reduce_count_wrong(bufs[i], count, n, wrong[i], gpus[i]->stream);
        CHECK_CUDA(cudaMemcpyAsync(&w, wrong[i], sizeof w, cudaMemcpyDeviceToHost, gpus[i]->stream));
        CHECK_CUDA(cudaStreamSynchronize(gpus[i]->stream));
        CHECK_CUDA(cudaFree(wrong[i]));
        total += w;
    }
    return total;
}
