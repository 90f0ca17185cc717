/* dp.c — the replicas, timing, replica check and evaluation that the naive and nccl strategies share, so the
 * two differ only in how gradients are exchanged (compute, exposed time and the replica check are measured alike). */
#include "dp.h"
#include "breakdown.h"
#include "dist.h"
#include "shard.h"
#include "../engine/check.h"
#include "../engine/trace.h"
#include "../engine/nvtx.h"
#include "../engine/timing.h"
#include "../engine/gpt2/gpt2_train.h"
#include "../engine/model_info.h"
#include <stdlib.h>
#include <string.h>

/* A lone replica with a 2-byte wire (nothing to exchange) still rounds its gradients to the wire's type, as DDP's
 * hooks do in one process, so a run's numerics do not depend on its GPU count. */
static int rounds_alone_(const dp_t *dp) { return dp->world == 1 && dtype_is_low(dp->wire); }

/* --grad-dtype bf16 | fp16: every replica's update reads its 2-byte wire buffer, set before the first step because
 * the update segment may be captured into a CUDA graph with the pointer it has then. Even one replica rounds
 * (rounds_alone_). */
static int wire_setup_(dp_t *dp, dtype_t wire, char *err, size_t errlen) {
    dp->wire = wire;
    if (!dtype_is_low(wire)) return 0;
    for (int i = 0; i < dp->n; i++) {
        size_t bytes = dp_n_params(dp) * dtype_size(wire);
        CHECK_CUDA(cudaSetDevice(dp_gpu(dp, i)->device));
        if (gpu_try_malloc(&dp->wire_grads[i], bytes) != 0) {   /* the sweep goes on */
            snprintf(err, errlen, "out of memory: %s gradient buffer of %.0f MiB on GPU %d", dtype_name(wire),
                     (double)bytes / (1024.0 * 1024.0), dp_gpu(dp, i)->device);
            return -1;
        }
        /* A language model's update widens the wire itself, and rounds a lone replica's gradients into it first. */
        if (dp->lms) gpt2_train_set_update_grads(&dp->lms[i], dp->wire_grads[i], wire, rounds_alone_(dp));
        else replica_set_update_grads(&dp->reps[i], dp->wire_grads[i], wire);
    }
    return 0;
}

gpu_t *dp_gpu(dp_t *dp, int i) { return dp->lms ? &dp->lms[i].gpu : &dp->reps[i].gpu; }

size_t dp_n_params(const dp_t *dp) { return dp->lms ? dp->lms[0].m.n_params : dp->reps[0].model.n_params; }

int dp_steps_per_epoch(const dp_t *dp) { return dp->lms ? dp->lms[0].steps_per_epoch : dp->reps[0].steps_per_epoch; }

static cudaEvent_t *step_events_(const dp_t *dp, int i) {
    return dp->lms ? dp->lms[i].step_events : dp->reps[i].step_events;
}

static float *params_(const dp_t *dp, int i) { return dp->lms ? dp->lms[i].m.params : dp->reps[i].model.params; }

int dp_steps_done(dp_t *dp, int launched, double *ms) { return timing_steps_done(step_events_(dp, 0), launched, ms); }

int dp_layers(const dp_t *dp, size_t *first) {
    if (dp->lms) {
        const gpt2_model_t *m = &dp->lms[0].m;
        if (first) gpt2_layout_units(&m->shape, m->slices, m->n_slices, first);
        return GPT2_UNITS(m->shape.layers);
    }
    const model_t *m = &dp->reps[0].model;
    for (int i = 0; first && i < m->n_layers; i++) first[i] = m->layers[i].param_offset;
    return m->n_layers;
}

/* Language models: replica i's trainer for shard shard0 + i of every global batch. */
static int lm_setup_(dp_t *dp, const run_cfg_t *cfg, char *err, size_t errlen) {
    const gpt2_shape_t *shape = gpt2_shape(cfg->model_size);   /* NULL: the trainer says why */
    if (shape && GPT2_UNITS(shape->layers) > MODEL_MAX_LAYERS) {   /* dp_layers' room */
        snprintf(err, errlen, "GPT-2 %s: more than %d units to bucket", cfg->model_size, MODEL_MAX_LAYERS);
        return -1;
    }
    dp->lms = calloc((size_t)dp->n, sizeof *dp->lms);
    if (!dp->lms) { snprintf(err, errlen, "out of host memory"); return -1; }
    for (int i = 0; i < dp->n; i++) {
        shard_t sh;
        if (shard_split(cfg->global_batch, dp->world, dp->shard0 + i, &sh, err, errlen) != 0 ||
            run_cfg_lm_init(&dp->lms[i], cfg, cfg->devices[i], sh.count, sh.first, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int dp_setup(dp_t *dp, const run_cfg_t *cfg, char *err, size_t errlen) {
    memset(dp, 0, sizeof *dp);
    int n = cfg->n_gpus;
    if (n > DP_MAX_GPUS) {
        snprintf(err, errlen, "at most %d GPUs for a data-parallel strategy (asked for %d)", DP_MAX_GPUS, n);
        return -1;
    }
    /* One process per GPU: this process's replica is shard `rank` of the world's (cfg->n_gpus is 1 there). */
    if (cfg->dist && n != 1) {
        snprintf(err, errlen, "one process per GPU: each process drives 1 GPU (asked for %d)", n);
        return -1;
    }
    int world = cfg->dist ? cfg->dist->size : n;
    /* One replica's gradient is the reduced one: two batches of one step would be one (options_validate refuses it
     * first; a caller may not). */
    if (cfg->optim.gns_every > 0 && world < 2) {
        snprintf(err, errlen, "the gradient noise scale between replicas needs 2 GPUs or more (has %d)", world);
        return -1;
    }
    shard_t sh;
    if (shard_split(cfg->global_batch, world, 0, &sh, err, errlen) != 0) return -1;
    dp->n = n;
    dp->dist = cfg->dist;
    dp->world = world;
    dp->shard0 = cfg->dist ? cfg->dist->rank : 0;
    if (model_info_lm(model_info(cfg->model))) {
        if (lm_setup_(dp, cfg, err, errlen) != 0) {
            dp_teardown(dp);
            return -1;
        }
    } else if (!(dp->reps = calloc((size_t)n, sizeof *dp->reps))) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    optim_cfg_t oc = run_cfg_optim(cfg);
    for (int i = 0; dp->reps && i < n; i++)
        if (replica_init(&dp->reps[i], cfg->devices[i], cfg->model, sh.count, cfg->global_batch, cfg->math,
                         run_cfg_gpu_setup(cfg), cfg->init, cfg->seed, &oc, (float)cfg->momentum,
                         (float)cfg->weight_decay, cfg->data, err, errlen) != 0) {
            dp_teardown(dp);
            return -1;
        } else {
            dp->reps[i].use_graphs = cfg->cuda_graph;
            dp->reps[i].trace = cfg->trace;
        }
    /* Timing events on an even sample of the steps keeps the event count bounded for small batches
     * (LeNet at batch 4 has 15000 steps) while every part of the epoch is represented: of the steps an epoch runs,
     * which --steps may cap far below an ImageNet epoch's 5,004 (later steps go untimed). */
    int steps = dp_steps_per_epoch(dp);
    if (cfg->steps_cap > 0 && cfg->steps_cap < steps) steps = cfg->steps_cap;
    dp->stride = (steps + DP_TIMED_MAX - 1) / DP_TIMED_MAX;
    dp->n_slots = (steps + dp->stride - 1) / dp->stride;
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(dp_gpu(dp, i)->device));
        CHECK_ALLOC(cudaMalloc((void **)&dp->checksum[i], sizeof(unsigned long long)));
    }
    if (wire_setup_(dp, cfg->grad_dtype, err, errlen) != 0) {
        dp_teardown(dp);
        return -1;
    }
    return 0;
}

const float *const *dp_grad_buffers(dp_t *dp, const float **src, void **bufs) {
    for (int i = 0; i < dp->n; i++) {
        src[i] = dp->lms ? dp->lms[i].m.grads : dp->reps[i].model.grads;
        bufs[i] = dtype_is_low(dp->wire) ? dp->wire_grads[i] : (void *)src[i];
    }
    return dtype_is_low(dp->wire) ? src : NULL;
}

void dp_comm_timing(dp_t *dp, int comm_per_step) {
    if (comm_per_step <= 0) return;
    size_t count = (size_t)dp->n_slots * comm_per_step * 2;
    dp->comm = calloc(count, sizeof(cudaEvent_t));
    if (!dp->comm) { fprintf(stderr, "dp_comm_timing: out of host memory\n"); exit(1); }
    dp->comm_per_step = comm_per_step;
    CHECK_CUDA(cudaSetDevice(dp_gpu(dp, 0)->device));
    for (size_t k = 0; k < count; k++) CHECK_CUDA(cudaEventCreate(&dp->comm[k]));
}

void dp_busy_timing(dp_t *dp, int backward_segments) {
    dp->n_segs = backward_segments + 2;
    size_t per_gpu = (size_t)dp->n_slots * dp->n_segs * 2;
    dp->busy = calloc((size_t)dp->n * per_gpu, sizeof(cudaEvent_t));
    if (!dp->busy) { fprintf(stderr, "dp_busy_timing: out of host memory\n"); exit(1); }
    for (int i = 0; i < dp->n; i++) {
        CHECK_CUDA(cudaSetDevice(dp_gpu(dp, i)->device));
        for (size_t k = 0; k < per_gpu; k++) CHECK_CUDA(cudaEventCreate(&dp->busy[i * per_gpu + k]));
    }
}

void dp_solo_timing(dp_t *dp) { dp->solo = 1; }

int dp_solo_step(const dp_t *dp, int step) { return dp->solo && step == 0; }

void dp_gpus(dp_t *dp, gpu_t **out) {
    for (int i = 0; i < dp->n; i++) out[i] = dp_gpu(dp, i);
}

void dp_epoch_begin(dp_t *dp, int epoch) {
    dp->step = 0;
    for (int i = 0; i < dp->n; i++)
        if (dp->lms) gpt2_train_epoch_begin(&dp->lms[i], epoch);
        else replica_epoch_begin(&dp->reps[i], epoch);
}

static int slot_of(const dp_t *dp, int step) {
    if (step % dp->stride) return -1;
    int s = step / dp->stride;
    return s < dp->n_slots ? s : -1;
}

static cudaEvent_t busy_event(const dp_t *dp, int gpu, int slot, int seg, int end) {
    return dp->busy[(((size_t)gpu * dp->n_slots + slot) * dp->n_segs + seg) * 2 + end];
}

/* The busy event of compute segment `seg` (end: 0 begin, 1 end) of the step being enqueued on replica i's compute
 * stream, where that step is timed; the device set to replica i's. */
static void busy_mark_(dp_t *dp, int i, int seg, int end) {
    gpu_t *g = dp_gpu(dp, i);
    int s = dp->busy && seg < dp->n_segs ? slot_of(dp, dp->step) : -1;
    CHECK_CUDA(cudaSetDevice(g->device));
    if (s >= 0) CHECK_CUDA(cudaEventRecord(busy_event(dp, i, s, seg, end), g->stream));
}

/* Runs segment `slot` of replica i (as replica_run_traced) between the busy events of compute segment `seg`. */
static void run_busy_(dp_t *dp, int i, int seg, const char *name, int slot, void (*fn)(replica_t *, const void *),
                      const void *arg) {
    busy_mark_(dp, i, seg, 0);
    replica_run_traced(&dp->reps[i], name, slot, fn, arg);
    busy_mark_(dp, i, seg, 1);
}

cudaEvent_t dp_comm_event(const dp_t *dp, int step, int k, int end) {
    int s = slot_of(dp, step);
    if (s < 0 || !dp->comm || k >= dp->comm_per_step) return NULL;
    return dp->comm[((size_t)s * dp->comm_per_step + k) * 2 + end];
}

/* rounds_alone_'s rounding of an image classifier's replica: in its update segment, compute like the update it feeds
 * (and captured with it), where a strategy's reduction would have run it between segments. The wire's type is the
 * update's gradients' (replica_set_update_grads). */
static void seg_round_update_(replica_t *r, const void *wire) {
    reduce_cast((void *)wire, r->update_grad_dtype, r->model.grads, r->model.n_params, r->gpu.stream);
    replica_seg_update(r, NULL);
}

const dp_gns_local_t *dp_gns_local(const dp_t *dp, dp_gns_local_t *store) {
    if (dp->lms || !replica_gns_due(&dp->reps[0])) return NULL;   /* a language model's is not measured */
    for (int i = 0; i < dp->n; i++) {
        store->acc[i] = dp->reps[i].d_gns;
        store->ls[i] = dp->reps[i].ls;
    }
    return store;
}

/* The update segment of a step measuring the noise scale: |g|^2 of the reduced gradient it reads, first (a segment of
 * its own, so the other steps' graph stays as it was). */
static void seg_gns_update_(replica_t *r, const void *unused) {
    replica_update_sumsq(r, r->d_gns + 1);
    replica_seg_update(r, unused);
}

void dp_update(dp_t *dp, int step) {
    dp->step = step;
    if (dp->lms) {   /* a language model's update rounds and widens its wire itself */
        for (int i = 0; i < dp->n; i++) {
            busy_mark_(dp, i, dp->n_segs - 1, 0);
            gpt2_train_update(&dp->lms[i]);
            busy_mark_(dp, i, dp->n_segs - 1, 1);
            gpt2_train_mark_step(&dp->lms[i], step);
        }
        dp->step = step + 1;
        return;
    }
    int round = rounds_alone_(dp), gns = replica_gns_due(&dp->reps[0]);
    for (int i = 0; i < dp->n; i++) {
        if (round) run_busy_(dp, i, dp->n_segs - 1, "update", REPLICA_SEG_UPDATE, seg_round_update_, dp->wire_grads[i]);
        else if (gns) run_busy_(dp, i, dp->n_segs - 1, "update", REPLICA_SEG_GNS, seg_gns_update_, NULL);
        else run_busy_(dp, i, dp->n_segs - 1, "update", REPLICA_SEG_UPDATE, replica_seg_update, NULL);
        dp->reps[i].gns_n += gns;
        dp->reps[i].steps++;
        replica_mark_step(&dp->reps[i], step);
    }
    dp->step = step + 1;
}

void dp_forward(dp_t *dp, int i) {
    for (int k = 0; i == 0 && k < dp->n; k++) {   /* every GPU's time zero, back to back (only while tracing) */
        gpu_t *g = dp_gpu(dp, k);
        trace_origin(dp->lms ? dp->lms[k].trace : dp->reps[k].trace, g->device, g->stream);
    }
    if (dp->lms) {   /* its shard is its trainer's own */
        busy_mark_(dp, i, 0, 0);
        gpt2_train_forward(&dp->lms[i]);
        busy_mark_(dp, i, 0, 1);
        return;
    }
    int shard = dp->shard0 + i;
    run_busy_(dp, i, 0, "forward", REPLICA_SEG_FORWARD, replica_seg_forward, &shard);
}

void dp_backward(dp_t *dp, int i, int segment, int lo, int hi) {
    if (dp->lms) {
        busy_mark_(dp, i, 1 + segment, 0);
        gpt2_train_backward(&dp->lms[i], segment, lo, hi);
        busy_mark_(dp, i, 1 + segment, 1);
        return;
    }
    int range[2] = {lo, hi};
    char name[32];
    snprintf(name, sizeof name, "backward %d", segment);
    run_busy_(dp, i, 1 + segment, name, REPLICA_SEG_BACKWARD + segment, replica_seg_backward, range);
}

/* What one replica measured in an epoch; with dist, every process's replicas are gathered to rank 0, which
 * combines them in replica order exactly as one process driving them all would. */
typedef struct {
    double epoch_s, step_ms, loss, acc, mem_mb;
    breakdown_t b;                  /* means over the timed steps (breakdown.h) */
    double stall_ms;                /* the part of b.exposed_ms spent inside backward segments (breakdown_stall) */
    double gns[2];                  /* the epoch's noise-scale sums: |g_i|^2 of its shard's gradient, |G|^2 reduced */
    int gns_n;                      /* its steps measuring the noise scale */
} rep_stats_t;

/* Replica i's breakdown over the epoch's first `steps` steps that carry events. With solo steps, the backward
 * segments that can run beside an all-reduce (buckets 1.., segments 2 .. n_segs - 2) count at most their time in
 * step 0 (slot 0, the solo step) as compute, the rest as exposed (breakdown_stall). */
static breakdown_t replica_breakdown_(const dp_t *dp, int i, int steps, double *stall_ms) {
    breakdown_t sum = {0};
    double stalls = 0;
    const cudaEvent_t *ev = step_events_(dp, i);
    for (int s = 0; s < dp->n_slots && s * dp->stride < steps; s++) {
        int step = s * dp->stride;
        double busy = 0, stall = 0, wait = 0;
        for (int k = 0; dp->busy && k < dp->n_segs; k++) {
            double t = timing_ms(busy_event(dp, i, s, k, 0), busy_event(dp, i, s, k, 1));
            busy += t;
            if (dp->solo && s > 0 && k >= 2 && k < dp->n_segs - 1)
                stall += breakdown_stall(t, timing_ms(busy_event(dp, i, 0, k, 0), busy_event(dp, i, 0, k, 1)));
        }
        /* The wait for the reduced gradients: from the last backward segment's end to the update's start (only
         * event records and the wait itself lie between them on the compute stream). */
        if (dp->busy)
            wait = timing_ms(busy_event(dp, i, s, dp->n_segs - 2, 1), busy_event(dp, i, s, dp->n_segs - 1, 0));
        breakdown_add(&sum, timing_ms(ev[step], ev[step + 1]), busy - stall, wait + stall);
        stalls += stall;
    }
    *stall_ms = sum.steps ? stalls / sum.steps : 0;
    return breakdown_mean(sum);
}

/* The noise scale's means over the epoch (< 0: not measured). Each replica's gradient is its shard's sum over the
 * global batch (model_loss), so the mean over its shard is world times it, and |.|^2 world^2 times. */
static void gns_means_(const dp_t *dp, const rep_stats_t *all, epoch_stats_t *out) {
    int w = dp->world, n = all[0].gns_n;
    out->gns_small_sq = out->gns_big_sq = -1;
    out->gns_b_small = out->gns_b_big = -1;
    if (n < 1) return;
    double local = 0;
    for (int i = 0; i < w; i++) local += all[i].gns[0];
    out->gns_small_sq = (double)w * local / n;   /* the mean over replicas of world^2 |g_i|^2: w^2 (local / w) */
    out->gns_big_sq = all[0].gns[1] / n;
    out->gns_b_small = dp->reps[0].shard_batch;
    out->gns_b_big = dp->reps[0].global_batch;
}

/* Replica i's epoch: its seconds, median step, mean loss (and accuracy), memory and noise-scale sums. */
static void replica_epoch_end_(dp_t *dp, int i, int steps, rep_stats_t *st) {
    if (dp->lms) {   /* a language model: no accuracy, no noise scale */
        gpt2_train_t *g = &dp->lms[i];
        gpt2_train_epoch_end(g, steps, &st->epoch_s, &st->step_ms, &st->loss);
        st->acc = -1;
        CHECK_CUDA(cudaDeviceSynchronize());
        st->mem_mb = gpt2_train_mem_mb(g);
        st->gns_n = 0;
        return;
    }
    replica_t *r = &dp->reps[i];
    replica_epoch_end(r, steps, &st->epoch_s, &st->step_ms, &st->loss, &st->acc);
    /* The comm stream's events may trail the compute stream's last one: wait for everything, once. */
    CHECK_CUDA(cudaDeviceSynchronize());
    st->mem_mb = replica_mem_mb(r);
    st->gns_n = replica_gns_sums(r, st->gns);
}

void dp_epoch_end(dp_t *dp, int steps, epoch_stats_t *out) {
    out->steps = steps;
    rep_stats_t local[DP_MAX_GPUS];
    /* Every replica's next order drawn before the first wait, while the GPUs still run the epoch's last steps. */
    for (int i = 0; dp->reps && i < dp->n; i++) dataset_shuffle_ahead(&dp->reps[i].data);
    for (int i = 0; i < dp->n; i++) {
        replica_epoch_end_(dp, i, steps, &local[i]);
        local[i].b = replica_breakdown_(dp, i, steps, &local[i].stall_ms);
    }
    /* Where this process's slowest replica's epoch goes beyond its median step (images/s by epoch against by step). */
    int slow = 0;
    for (int i = 1; i < dp->n; i++)
        if (local[i].epoch_s > local[slow].epoch_s) slow = i;
    if (!dp->dist || dp->dist->is_root) {
        char who[32];
        snprintf(who, sizeof who, "gpu %d", dp->shard0 + slow);
        timing_print_steps(who, step_events_(dp, slow), steps);
    }
    /* Communication is timed on GPU 0's comm stream, over the same timed steps. */
    double comm = 0;
    int timed = local[0].b.steps;
    for (int s = 0; s < timed; s++)
        for (int k = 0; k < dp->comm_per_step; k++)
            comm += timing_ms(dp->comm[((size_t)s * dp->comm_per_step + k) * 2],
                               dp->comm[((size_t)s * dp->comm_per_step + k) * 2 + 1]);
    double scale = -1;
    int skipped = -1;
    /* Every replica checks the same reduced gradients, so their loss scales agree: replica 0 speaks for all. */
    if (dp->reps) replica_loss_scale_read(&dp->reps[0], &scale, &skipped);
    out->lr_now = dp->lms ? gpt2_train_lr_now(&dp->lms[0]) : replica_lr_now(&dp->reps[0]);
    rep_stats_t *all = local;
    if (dp->dist) {
        all = malloc((size_t)dp->world * sizeof *all);
        if (!all) { fprintf(stderr, "dp_epoch_end: out of host memory\n"); exit(1); }
        dist_gather(dp->dist, local, (size_t)dp->n * sizeof *local, all);
    }
    if (!dp->dist || dp->dist->is_root) {
        int w = dp->world;
        out->epoch_s = out->step_ms = out->train_loss = out->train_acc = 0;
        out->loss_scale = scale;
        out->skipped_steps = skipped;
        out->peak_mem_mb = 0;
        breakdown_t *per_gpu = calloc((size_t)w, sizeof *per_gpu);
        if (!per_gpu) { fprintf(stderr, "dp_epoch_end: out of host memory\n"); exit(1); }
        for (int i = 0; i < w; i++) {
            if (all[i].epoch_s > out->epoch_s) out->epoch_s = all[i].epoch_s;
            if (all[i].step_ms > out->step_ms) out->step_ms = all[i].step_ms;
            out->train_loss += all[i].loss / w;     /* equal shards: the mean over replicas is the mean over images */
            out->train_acc += all[i].acc < 0 ? 0 : all[i].acc / w;   /* a language model's: none */
            if (all[i].mem_mb > out->peak_mem_mb) out->peak_mem_mb = all[i].mem_mb;
            per_gpu[i] = all[i].b;
        }
        if (all[0].acc < 0) out->train_acc = -1;
        gns_means_(dp, all, out);
        int g = breakdown_pick(per_gpu, w);
        out->compute_ms = per_gpu[g].compute_ms;
        out->exposed_comm_ms = per_gpu[g].exposed_ms;
        out->idle_ms = per_gpu[g].idle_ms;
        breakdown_print(stderr, "gpu", per_gpu, w, g);
        if (w > 1)
            fprintf(stderr, "exposed: gpu %d: %.3f ms per step = %.3f waiting after backward + %.3f stalled inside "
                    "backward segments\n", g, per_gpu[g].exposed_ms, per_gpu[g].exposed_ms - all[g].stall_ms,
                    all[g].stall_ms);
        free(per_gpu);
        double grad_bytes = (double)dp_n_params(dp) * dtype_size(dp->wire);   /* on the wire */
        if (w > 1 && timed && comm > 0) {
            out->comm_ms = comm / timed;
            out->bytes_per_step = grad_bytes;
            /* nccl-tests' definitions for an all-reduce of S bytes in t seconds: algbw = S/t,
             * busbw = algbw*2(n-1)/n. */
            out->algbw_gbs = grad_bytes / (out->comm_ms * 1e-3) / 1e9;
            out->busbw_gbs = out->algbw_gbs * 2.0 * (w - 1) / w;
        } else {
            out->comm_ms = 0;               /* one replica: nothing to exchange */
            out->bytes_per_step = 0;
        }
    }
    if (all != local) free(all);
    out->replicas_identical = dp_replicas_identical(dp);
    snprintf(out->nccl_algo, sizeof out->nccl_algo, "%s", dp->algo);
    /* Every rank leaves with rank 0's figures, so the status of the row, and what the run does next, agree. */
    dist_bcast(dp->dist, out, sizeof *out);
}

int dp_replicas_identical(dp_t *dp) {
    unsigned long long sums[DP_MAX_GPUS];
    for (int i = 0; i < dp->n; i++) {
        gpu_t *g = dp_gpu(dp, i);
        CHECK_CUDA(cudaSetDevice(g->device));
        reduce_checksum(params_(dp, i), dp_n_params(dp), dp->checksum[i], g->stream);
        CHECK_CUDA(cudaMemcpyAsync(&sums[i], dp->checksum[i], sizeof sums[i], cudaMemcpyDeviceToHost, g->stream));
    }
    int same = 1;
    for (int i = 0; i < dp->n; i++) {
        CHECK_CUDA(cudaSetDevice(dp_gpu(dp, i)->device));
        CHECK_CUDA(cudaStreamSynchronize(dp_gpu(dp, i)->stream));
        same &= sums[i] == sums[0];
    }
    if (dp->dist) {
        /* One replica per process: every rank's checksum to every rank, compared with rank 0's. */
        unsigned long long *all = malloc((size_t)dp->world * sizeof *all);
        if (!all) { fprintf(stderr, "dp_replicas_identical: out of host memory\n"); exit(1); }
        dist_allgather_u64(dp->dist, sums[0], all);
        for (int r = 0; r < dp->world; r++) same &= all[r] == all[0];
        free(all);
    }
    return same;
}

/* Replica 0's test accuracy, or a language model's held-out loss. */
static double evaluate_(dp_t *dp) {
    return dp->lms ? gpt2_train_evaluate(&dp->lms[0]) : replica_evaluate(&dp->reps[0]);
}

double dp_evaluate(dp_t *dp) {
    if (!dp->dist) return evaluate_(dp);
    /* Rank 0 holds replica 0 (shard 0, its running statistics): the figure single-process mode reports. */
    double acc = dp->dist->is_root ? evaluate_(dp) : 0;
    dist_bcast(dp->dist, &acc, sizeof acc);
    return acc;
}

size_t dp_params(dp_t *dp, float *host, size_t max) {
    size_t n = dp_n_params(dp);
    if (!host) return n;
    CHECK_CUDA(cudaSetDevice(dp_gpu(dp, 0)->device));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(host, params_(dp, 0), (n < max ? n : max) * sizeof(float), cudaMemcpyDeviceToHost));
    return n;
}

void dp_teardown(dp_t *dp) {
    for (int i = 0; (dp->reps || dp->lms) && i < dp->n; i++) {
        gpu_t *g = dp_gpu(dp, i);
        if (!g->stream) continue;
        CHECK_CUDA(cudaSetDevice(g->device));
        CHECK_CUDA(cudaDeviceSynchronize());
        for (int k = 0; dp->busy && k < dp->n_slots * dp->n_segs * 2; k++)
            CHECK_CUDA(cudaEventDestroy(dp->busy[(size_t)i * dp->n_slots * dp->n_segs * 2 + k]));
        if (i == 0)
            for (int k = 0; dp->comm && k < dp->n_slots * dp->comm_per_step * 2; k++)
                CHECK_CUDA(cudaEventDestroy(dp->comm[k]));
        if (dp->checksum[i]) CHECK_CUDA(cudaFree(dp->checksum[i]));
        if (dp->wire_grads[i]) CHECK_CUDA(cudaFree(dp->wire_grads[i]));
        if (dp->lms) gpt2_train_free(&dp->lms[i]);
        else replica_free(&dp->reps[i]);
    }
    free(dp->busy);
    free(dp->comm);
    free(dp->reps);
    free(dp->lms);
    memset(dp, 0, sizeof *dp);
}

int dp_bind_wire(dp_t *dp, size_t *ranges, int max) {
    if (!dp->reps) check_fail(__FILE__, __LINE__, "dp_bind_wire", "a language model binds no 2-byte gradients");
    int n = 0;
    for (int i = 0; i < dp->n; i++) {
        replica_t *r = &dp->reps[i];
        n = model_bind_grads_lp(&r->model, dtype_is_low(dp->wire) ? dp->wire_grads[i] : NULL, ranges, max);
        if (n < 0) check_fail(__FILE__, __LINE__, "dp_bind_wire", "more fp32 parts than room for them");
    }
    return n;
}

unsigned long long dp_check_reduce(const reduce_ops_t *ops, void *ctx, gpu_t *const *gpus, int n, dtype_t wire,
                                   const float *const *src, void *const *bufs, size_t count, int base) {
    unsigned long long *wrong[DP_MAX_GPUS];
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(gpus[i]->device));
        CHECK_ALLOC(cudaMalloc((void **)&wrong[i], sizeof(unsigned long long)));
        CHECK_CUDA(cudaMemsetAsync(wrong[i], 0, sizeof(unsigned long long), gpus[i]->stream));
        if (src) reduce_fill_pattern((void *)src[i], DTYPE_FP32, count, i, base, gpus[i]->stream);
        else reduce_fill_pattern(bufs[i], wire, count, i, base, gpus[i]->stream);
    }
    ops->run(ctx, src, bufs, count);
    unsigned long long total = 0;
    for (int i = 0; i < n; i++) {
        unsigned long long w = 0;
        CHECK_CUDA(cudaSetDevice(gpus[i]->device));
        reduce_count_wrong(bufs[i], wire, count, n, base, wrong[i], gpus[i]->stream);
        CHECK_CUDA(cudaMemcpyAsync(&w, wrong[i], sizeof w, cudaMemcpyDeviceToHost, gpus[i]->stream));
        CHECK_CUDA(cudaStreamSynchronize(gpus[i]->stream));
        CHECK_CUDA(cudaFree(wrong[i]));
        total += w;
    }
    return total;
}

void dp_cast_wire(struct trace *trace, int device, void *wire, dtype_t t, const float *src, size_t count,
                  const size_t *ranges, int n_ranges, cudaStream_t stream, const char *name) {
    int tr = trace_begin(trace, device, TRACE_COMM, stream, name);
    nvtx_push("%s gpu%d", name, device);
    if (ranges) reduce_cast_ranges(wire, t, src, ranges, n_ranges, count, stream);
    else reduce_cast(wire, t, src, count, stream);
    nvtx_pop();
    trace_end(trace, tr, stream);
}
