/* pipeline.c — the model-split strategy: consecutive layer ranges (stages) on consecutive GPUs, each global batch
 * cut into micro-batches run in GPipe, 1F1B or zero-bubble order (pipe_schedule.c), stages balanced by measured
 * layer times. */
#include "pipeline.h"
#include "../../engine/timing.h"
#include "../../engine/check.h"
#include "../../engine/nvtx.h"
#include "../../engine/model_info.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pipe_teardown(void *state);

static int setup_fail_(pipe_t *pp, model_t *m) {
    free(m);
    pipe_teardown(pp);
    return -1;
}

/* The image classifiers' checks: the steps of an epoch, the model, one stage per GPU, the split. */
static int check_model(pipe_t *pp, const run_cfg_t *cfg, model_t *m, char *err, size_t errlen) {
    int p = pp->p;
    pp->steps_per_epoch = cfg->data->train.n / cfg->global_batch;
    if (pp->steps_per_epoch < 1) {
        snprintf(err, errlen, "global batch %d is larger than the %d training images", cfg->global_batch,
                 cfg->data->train.n);
        return -1;
    }
    if (model_build_input(m, cfg->model, pp->micro_batch, model_input_of(cfg->data)) != 0) {
        snprintf(err, errlen, "unknown model \"%s\"", cfg->model);
        return -1;
    }
    for (int i = 0; i < p; i++)   /* a language model's stages may share a GPU (its tests on one GPU); these not */
        for (int j = 0; j < i; j++)
            if (cfg->devices[i] == cfg->devices[j]) {
                snprintf(err, errlen, "pipeline: GPU %d given twice (one stage per GPU)", cfg->devices[i]);
                return -1;
            }
    return pipe_check_split(pp, cfg, m, err, errlen) != 0 ? -1 : 0;
}

/* Checks everything that needs no GPU, so a bad --split or batch fails before any device is touched. */
static int check_cfg(pipe_t *pp, const run_cfg_t *cfg, model_t *m, char *err, size_t errlen) {
    int p = cfg->n_gpus, mbs = cfg->micro_batches > 0 ? cfg->micro_batches : 1;
    if (p < 1 || p > SCHED_MAX_STAGES) {
        snprintf(err, errlen, "pipeline: %d GPUs (1..%d stages supported)", p, SCHED_MAX_STAGES);
        return -1;
    }
    if (cfg->global_batch % mbs) {
        snprintf(err, errlen, "pipeline: --micro-batches %d does not divide the global batch %d", mbs,
                 cfg->global_batch);
        return -1;
    }
    pp->p = p;
    pp->micro = mbs;
    pp->global_batch = cfg->global_batch;
    pp->micro_batch = cfg->global_batch / mbs;
    pp->lm = model_info_lm(model_info(cfg->model));
    if (pp->lm) {   /* GPT-2's units are its layers, every boundary a cut */
        if (pipe_lm_check(pp, cfg, err, errlen)) return -1;
    } else if (check_model(pp, cfg, m, err, errlen)) {
        return -1;
    }
    return sched_build(&pp->sched, p, mbs, (sched_order_t)cfg->schedule, err, errlen);
}

/* Stage s's image-classifier slots on its GPU: slot 0 owns the stage's slice of the flat buffers, the others add
 * activations. -1 with a message when a slot's activations do not fit. */
static int stage_alloc_model(pipe_t *pp, int s, const run_cfg_t *cfg, char *err, size_t errlen) {
    pipe_stage_t *S = &pp->st[s];
    gpu_t *g = &S->gpu;
    S->slot = calloc((size_t)S->n_slots, sizeof *S->slot);
    if (!S->slot) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    size_t ws = 0;
    for (int k = 0; k < S->n_slots; k++) {
        model_build_input(&S->slot[k], cfg->model, pp->micro_batch, model_input_of(cfg->data));
        int grads = pp->sched.order == SCHED_ZB ? MODEL_GRADS_DEFERRED : MODEL_GRADS_SHARED;
        int rc = k == 0 ? model_alloc_range(&S->slot[0], g, S->first, S->end)
                        : model_alloc_slot(&S->slot[k], g, &S->slot[0], grads);
        if (rc != 0) {
            snprintf(err, errlen, "out of memory: stage %d activation slot %d needs %.0f MiB on GPU %d", s, k,
                     (double)S->slot[k].act_bytes / (1024.0 * 1024.0), g->device);
            return -1;
        }
        if (S->slot[k].workspace_bytes > ws) ws = S->slot[k].workspace_bytes;
    }
    gpu_workspace_set(g, ws);   /* every slot's layers run from the one arena, one at a time on the stream */
    /* After every slot's setup: BN's algorithm probes update the running statistics they share. */
    model_init_params(&S->slot[0], cfg->init, cfg->seed);
    pipe_scale_init(pp, s, cfg->math);
    optim_cfg_t oc = run_cfg_optim(cfg);
    if (optim_init(&S->opt, oc.kind, (float)cfg->momentum, (float)cfg->weight_decay, &oc.sched, pp->run_steps,
                   &S->slot[0], err,
                   errlen) != 0)
        return -1;
    const model_t *m = &S->slot[0];
    if (s == 0) S->n_in = 1, S->in_t[0] = m->input;
    else S->n_in = model_crossing(m, S->first, S->in_t, MODEL_MAX_CROSS);
    S->n_out = s == pp->p - 1 ? 0 : model_crossing(m, S->end, S->out_t, MODEL_MAX_CROSS);
    return 0;
}

/* Stage s on its GPU: its model's slots (a language model's: pipe_lm_run.c), the plan's events, its streams and
 * graphs. -1 with a message when a slot's activations do not fit. */
static int stage_alloc(pipe_t *pp, int s, const run_cfg_t *cfg, char *err, size_t errlen) {
    pipe_stage_t *S = &pp->st[s];
    S->first = pp->starts[s];
    S->end = pp->starts[s + 1];
    S->n_slots = pp->sched.slots[s];
    if (pp->lm ? pipe_lm_alloc(pp, s, cfg, err, errlen) : stage_alloc_model(pp, s, cfg, err, errlen)) return -1;
    for (int k = 0; k < SCHED_KINDS; k++) {
        S->ev[k] = calloc((size_t)pp->micro, sizeof(cudaEvent_t));
        if (!S->ev[k]) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
        for (int j = 0; j < pp->micro; j++) CHECK_CUDA(cudaEventCreateWithFlags(&S->ev[k][j], cudaEventDisableTiming));
    }
    CHECK_CUDA(cudaEventCreateWithFlags(&S->updated, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreateWithFlags(&S->eval_fwd, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreateWithFlags(&S->eval_in, cudaEventDisableTiming));
    CHECK_CUDA(cudaStreamCreateWithFlags(&S->grad_stream, cudaStreamNonBlocking));
    pipe_timing_init(pp, s);
    S->fwd_graph = calloc((size_t)(s == 0 ? pp->micro : S->n_slots), sizeof *S->fwd_graph);
    S->bwd_graph = calloc((size_t)S->n_slots * 2, sizeof *S->bwd_graph);
    S->wgt_graph = calloc((size_t)S->n_slots * 2, sizeof *S->wgt_graph);
    if (!S->fwd_graph || !S->bwd_graph || !S->wgt_graph) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    return 0;
}

static void graphs_free(graph_seg_t *g, int n) {
    for (int i = 0; g && i < n; i++) graph_seg_free(&g[i]);
    free(g);
}

/* The pipeline at cfg->micro_batches (> 0) micro-batches. */
static int setup_fixed(void **state, const run_cfg_t *cfg, char *err, size_t errlen) {
    pipe_t *pp = calloc(1, sizeof *pp);
    model_t *m = calloc(1, sizeof *m);
    if (!pp || !m) {
        free(pp); free(m);
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    if (check_cfg(pp, cfg, m, err, errlen) != 0) return setup_fail_(pp, m);
    pp->seed = cfg->seed;
    pp->use_graphs = cfg->cuda_graph && pp->micro <= PIPE_GRAPH_MAX_MICRO;
    pp->trace = cfg->trace;
    pp->ops_per_stage = (pp->sched.order == SCHED_ZB ? 3 : 2) * pp->micro;
    /* Timed steps spread over the steps an epoch will run: under --steps, far fewer than an ImageNet epoch's. */
    int run_steps = pp->run_steps = cfg->steps_cap > 0 && cfg->steps_cap < pp->steps_per_epoch ? cfg->steps_cap
                                                                                                : pp->steps_per_epoch;
    pp->stride = (run_steps + PIPE_TIMED_MAX - 1) / PIPE_TIMED_MAX;
    int cap = PIPE_TIMED_EVENTS / pp->ops_per_stage;   /* many micro-batches: time fewer steps */
    if (cap < 1) cap = 1;
    if (cap < PIPE_TIMED_MAX) pp->stride = (run_steps + cap - 1) / cap;
    pp->n_timed = (run_steps + pp->stride - 1) / pp->stride;   /* later steps (never run) go untimed */

    for (int s = 0; s < pp->p; s++) {
        pp->st[s].mem_base = gpu_mem_baseline(cfg->devices[s]);
        gpu_init(&pp->st[s].gpu, cfg->devices[s], cfg->math);
        pp->st[s].gpu.setup = run_cfg_gpu_setup(cfg);
    }
    if (!pp->lm && pipe_choose_split(pp, cfg, m, err, errlen) != 0) return setup_fail_(pp, m);
    free(m);
    m = NULL;
    for (int s = 0; s < pp->p; s++) {
        CHECK_CUDA(cudaSetDevice(cfg->devices[s]));
        if (stage_alloc(pp, s, cfg, err, errlen) != 0) return setup_fail_(pp, m);
        if (s == 0) {
            if (!pp->lm) {   /* a language model's corpus is its stage's (pipe_lm_alloc) */
                dataset_upload(&pp->st[0].data, cfg->data);
                pp->st[0].has_data = 1;
            }
            CHECK_ALLOC(cudaMalloc((void **)&pp->d_step, sizeof(int)));
            CHECK_CUDA(cudaMemset(pp->d_step, 0, sizeof(int)));
        }
    }
    if (pipe_links_init(pp, cfg->naive_path, err, errlen) != 0) return setup_fail_(pp, m);
    /* Per step: M activations and M gradients per boundary, M label sets; a language model's boundaries all carry the
     * residual stream, and its tied token embedding's gradient goes between the ends and back. */
    if (pp->lm && pp->p > 1)
        pp->bytes_per_step = (pp->p - 1) * 2.0 * pp->micro * pipe_lm_act_bytes(pp) +
                             pp->micro * (double)pipe_lm_tgt_bytes(pp) + 2.0 * pipe_lm_wte_bytes(pp);
    for (int s = 1; !pp->lm && s < pp->p; s++) {
        const model_t *b = &pp->st[s].slot[0];
        for (int i = 0; i < pp->st[s].n_in; i++)
            pp->bytes_per_step += 2.0 * pp->micro * model_tensor_bytes(b, pp->st[s].in_t[i]);
    }
    if (!pp->lm && pp->p > 1) pp->bytes_per_step += (double)pp->global_batch * sizeof(int);
    CHECK_CUDA(cudaSetDevice(cfg->devices[0]));
    pp->step_events = calloc((size_t)pp->steps_per_epoch + 1, sizeof(cudaEvent_t));
    if (!pp->step_events) {
        snprintf(err, errlen, "out of host memory");
        return setup_fail_(pp, m);
    }
    for (int i = 0; i <= pp->steps_per_epoch; i++) CHECK_CUDA(cudaEventCreate(&pp->step_events[i]));
    for (int s = 0; s < pp->p; s++) {
        CHECK_CUDA(cudaSetDevice(cfg->devices[s]));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    fprintf(stderr, "pipeline: %d stage(s), %d micro-batch(es) of %d, %s; activation slots and device memory:",
            pp->p, pp->micro, pp->micro_batch, sched_order_name(pp->sched.order));
    for (int s = 0; s < pp->p; s++)
        fprintf(stderr, "%s GPU %d: %d slot(s), %.1f MiB activations, %.1f MiB in use", s ? ";" : "",
                pp->st[s].gpu.device, pp->st[s].n_slots, pipeline_act_bytes(pp, s) / 1048576.0,
                pipeline_stage_mem_mb(pp, s));
    fprintf(stderr, "\n");
    *state = pp;
    return 0;
}

static int pipe_steps(void *state) { return ((pipe_t *)state)->steps_per_epoch; }

static void pipe_epoch_begin(void *state, int epoch) {
    pipe_t *pp = state;
    pipe_stage_t *S0 = &pp->st[0], *L = &pp->st[pp->p - 1];
    if (pp->lm) pipe_lm_epoch_begin(pp, epoch);   /* before the start event: it synchronises the order's upload */
    CHECK_CUDA(cudaSetDevice(S0->gpu.device));
    CHECK_CUDA(cudaEventRecord(pp->step_events[0], S0->gpu.stream));
    if (!pp->lm) dataset_shuffle(&S0->data, pp->seed, epoch, S0->gpu.stream);
    CHECK_CUDA(cudaMemsetAsync(pp->d_step, 0, sizeof(int), S0->gpu.stream));
    if (pp->lm) return;
    CHECK_CUDA(cudaSetDevice(L->gpu.device));
    CHECK_CUDA(cudaMemsetAsync(L->slot[0].acc, 0, 2 * sizeof(double), L->gpu.stream));
}

static void pipe_train_step(void *state, int step) { pipe_step(state, step); }

static void pipe_epoch_end(void *state, int steps, epoch_stats_t *out) {
    pipe_t *pp = state;
    if (!pp->lm) dataset_shuffle_ahead(&pp->st[0].data);   /* before the waits: the draw overlaps the last steps */
    for (int s = 0; s < pp->p; s++) {
        CHECK_CUDA(cudaSetDevice(pp->st[s].gpu.device));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    out->steps = steps;
    out->epoch_s = steps > 0 ? timing_ms(pp->step_events[0], pp->step_events[steps]) / 1000.0 : 0;
    out->step_ms = timing_median_step_ms(pp->step_events, steps);
    if (pp->lm) {   /* the mean cross-entropy over the epoch's targets; a language model has no accuracy */
        out->train_loss = pipe_lm_epoch_loss(pp);
        out->train_acc = -1;
    } else {
        double h[2];
        pipe_stage_t *L = &pp->st[pp->p - 1];
        CHECK_CUDA(cudaSetDevice(L->gpu.device));
        CHECK_CUDA(cudaMemcpy(h, L->slot[0].acc, sizeof h, cudaMemcpyDeviceToHost));
        double images = (double)steps * pp->global_batch;
        out->train_loss = images > 0 ? h[0] / images : 0;
        out->train_acc = images > 0 ? h[1] / images : 0;
    }
    pipe_scale_epoch(pp, out);
    CHECK_CUDA(cudaSetDevice(pp->st[0].gpu.device));
    out->lr_now = optim_lr_read(&pp->st[0].opt, pp->st[0].gpu.stream);

    double step_mean = pipe_timing_epoch(pp, steps, out);
    out->bytes_per_step = pp->bytes_per_step;
    out->stages = pp->p;
    out->micro_batches = pp->micro;
    snprintf(out->schedule, sizeof out->schedule, "%s", sched_order_name(pp->sched.order));
    snprintf(out->split, sizeof out->split, "%s", pp->split);
    out->peak_mem_mb = 0;
    for (int s = 0; s < pp->p; s++)
        if (pipeline_stage_mem_mb(pp, s) > out->peak_mem_mb) out->peak_mem_mb = pipeline_stage_mem_mb(pp, s);
    if (pp->quiet) return;
    fprintf(stderr, "pipeline: busy ms/step %s of %.3f ms steps (bubble %.3f, ideal %.3f); MiB in use:",
            out->stage_busy_ms, step_mean, out->bubble, out->bubble_ideal);
    for (int s = 0; s < pp->p; s++) fprintf(stderr, " gpu%d %.0f", pp->st[s].gpu.device, pipeline_stage_mem_mb(pp, s));
    fprintf(stderr, "\n");
    if (pp->predicted_balance > 0) {   /* how well the measured segments predicted the stages */
        fprintf(stderr, "pipeline: stage busy ms/step predicted by the balance (segments x M):");
        for (int s = 0; s < pp->p; s++) fprintf(stderr, "%s%.3f", s ? ";" : " ", pp->predicted_ms[s] * pp->micro);
        fprintf(stderr, " (slowest %.3f x the mean), measured %s (%.3f)\n", pp->predicted_balance, out->stage_busy_ms,
                out->stage_balance);
    }
}

static double pipe_evaluate_(void *state) { return pipe_evaluate(state); }

static void pipe_teardown(void *state) {
    pipe_t *pp = state;
    if (!pp) return;
    for (int s = 0; s < pp->p; s++) {
        pipe_stage_t *S = &pp->st[s];
        if (!S->gpu.stream) continue;
        CHECK_CUDA(cudaSetDevice(S->gpu.device));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    pipe_links_free(pp);
    if (pp->step_events) {
        CHECK_CUDA(cudaSetDevice(pp->st[0].gpu.device));
        for (int i = 0; i <= pp->steps_per_epoch; i++) CHECK_CUDA(cudaEventDestroy(pp->step_events[i]));
        free(pp->step_events);
    }
    for (int s = 0; s < pp->p; s++) {
        pipe_stage_t *S = &pp->st[s];
        if (!S->gpu.stream) continue;
        CHECK_CUDA(cudaSetDevice(S->gpu.device));
        graphs_free(S->fwd_graph, s == 0 ? pp->micro : S->n_slots);
        graphs_free(S->bwd_graph, S->n_slots * 2);
        graphs_free(S->wgt_graph, S->n_slots * 2);
        for (int k = S->n_slots - 1; S->slot && k >= 0; k--) model_free(&S->slot[k]);   /* slots before owner */
        pipe_lm_free(pp, s);
        free(S->slot);
        for (int k = 0; k < SCHED_KINDS; k++) {
            for (int j = 0; S->ev[k] && j < pp->micro; j++) CHECK_CUDA(cudaEventDestroy(S->ev[k][j]));
            free(S->ev[k]);
        }
        pipe_timing_free(pp, s);
        pipe_scale_free(pp, s);
        optim_free(&S->opt);
        if (S->updated) CHECK_CUDA(cudaEventDestroy(S->updated));
        if (S->eval_fwd) CHECK_CUDA(cudaEventDestroy(S->eval_fwd));
        if (S->eval_in) CHECK_CUDA(cudaEventDestroy(S->eval_in));
        if (S->grad_stream) CHECK_CUDA(cudaStreamDestroy(S->grad_stream));
        if (s == 0 && pp->d_step) CHECK_CUDA(cudaFree(pp->d_step));
        if (S->has_data) dataset_free(&S->data);
        gpu_free(&S->gpu);
    }
    sched_free(&pp->sched);
    free(pp);
}

void pipeline_download_params(pipe_t *pp, float *host) {
    if (pp->lm) {
        pipe_lm_params(pp, host);
        return;
    }
    for (int s = 0; s < pp->p; s++) {
        const model_t *m = &pp->st[s].slot[0];
        CHECK_CUDA(cudaSetDevice(pp->st[s].gpu.device));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(host + m->param_first, m->params, m->n_params * sizeof(float), cudaMemcpyDeviceToHost));
    }
}

double pipeline_stage_mem_mb(const pipe_t *pp, int s) {
    /* as signed: another process on the GPU may free what it held when the base was read */
    return ((double)gpu_mem_used(&pp->st[s].gpu) - (double)pp->st[s].mem_base) / (1024.0 * 1024.0);
}

size_t pipeline_act_bytes(const pipe_t *pp, int s) {
    const pipe_stage_t *S = &pp->st[s];
    if (pp->lm) return pipe_lm_stage_act_bytes(pp, s);
    size_t b = 0;
    for (int k = 0; k < S->n_slots; k++) {
        const model_t *m = &S->slot[k];
        for (int t = 0; t < m->n_tensors; t++)
            if (m->tensors[t].val) b += model_tensor_bytes(m, t);
    }
    return b;
}

/* The whole flat parameter buffer, for SCALING_DUMP_PARAMS and tests: the stages' slices side by side. */
static size_t pipe_params(void *state, float *host, size_t max) {
    pipe_t *pp = state;
    size_t n = pp->lm ? pipe_lm_n_params(pp) : pp->st[0].slot[0].n_params_all;
    if (!host) return n;
    float *all = max >= n ? host : malloc((n ? n : 1) * sizeof *all);
    if (!all) check_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    pipeline_download_params(pp, all);
    if (all != host) {
        memcpy(host, all, max * sizeof *all);
        free(all);
    }
    return n;
}

#define AUTO_WARM 3             /* a probe's untimed epoch: eager, captured, replayed once */
#define AUTO_TIMED 4            /* its timed epoch */
#define AUTO_MIN_IMAGES 8       /* smaller micro-batches leave the GPU idle inside every kernel: not tried */

/* What a probe balanced: its stage starts and the balance's predictions, which the run it wins keeps. */
typedef struct {
    int starts[SCHED_MAX_STAGES + 1];
    double predicted_ms[SCHED_MAX_STAGES], predicted_balance, block_balance;
} probe_split_t;

/* A probe of M micro-batches, the pipeline set up and torn down as a run would: a warm-up epoch of AUTO_WARM steps
 * (eager, captured, replayed), then a timed one of AUTO_TIMED; its figures in *s (step_ms the median step) and its
 * split in *split. 0, or -1 with its setup's message in err. */
static int probe(const run_cfg_t *cfg, int m, epoch_stats_t *s, probe_split_t *split, char *err, size_t errlen) {
    run_cfg_t c = *cfg;
    c.micro_batches = m;
    c.steps_cap = AUTO_TIMED > AUTO_WARM ? AUTO_TIMED : AUTO_WARM;
    c.trace = NULL;
    void *state = NULL;
    if (setup_fixed(&state, &c, err, errlen) != 0) return -1;
    pipe_t *pp = state;
    pp->quiet = 1;
    for (int e = 0; e < 2; e++) {
        int want = e ? AUTO_TIMED : AUTO_WARM, steps = want < pp->steps_per_epoch ? want : pp->steps_per_epoch;
        epoch_stats_init(s);
        pipe_epoch_begin(pp, e);
        for (int i = 0; i < steps; i++) pipe_step(pp, i);
        pipe_epoch_end(pp, steps, s);
    }
    memcpy(split->starts, pp->starts, sizeof split->starts);
    memcpy(split->predicted_ms, pp->predicted_ms, sizeof split->predicted_ms);
    split->predicted_balance = pp->predicted_balance;
    split->block_balance = pp->block_balance;
    pipe_teardown(pp);
    return 0;
}

/* --micro-batches auto: M = the smallest power of two >= the stage count, doubled while it divides the global batch,
 * leaves micro-batches of AUTO_MIN_IMAGES or more and stays within PIPE_AUTO_MAX_MICRO, each timed by a short probe;
 * the fastest that fits wins. Throughput against M rises while the bubble shrinks and falls once micro-batches get
 * too small for the GPU, so the probes stop past the peak. The run keeps the winning probe's split (given: a new
 * balance would measure again, and at one micro-batch size measurements cut different splits 4 % apart in speed on
 * 4 H200s), so it runs what was timed. */
static int setup_auto(void **state, const run_cfg_t *cfg, char *err, size_t errlen) {
    int first = 1, best = 0;
    probe_split_t split, best_split;
    double best_ips = 0;
    char why[512] = "";
    while (first < cfg->n_gpus) first *= 2;
    for (int m = first; m <= PIPE_AUTO_MAX_MICRO && cfg->global_batch % m == 0; m *= 2) {
        if (m > first && cfg->global_batch / m < AUTO_MIN_IMAGES) break;
        char e[512] = "";
        epoch_stats_t s;
        if (probe(cfg, m, &s, &split, e, sizeof e) != 0) {
            if (!strstr(e, "out of memory")) return snprintf(err, errlen, "%s", e), -1;
            fprintf(stderr, "pipeline: --micro-batches auto: M = %d: %s\n", m, e);
            snprintf(why, sizeof why, "%s", e);   /* smaller micro-batches need less memory: the next may fit */
            continue;
        }
        double ips = s.step_ms > 0 ? cfg->global_batch * 1000.0 / s.step_ms : 0;
        fprintf(stderr, "pipeline: --micro-batches auto: M = %d: %.3f ms per step, %.0f images/s (stage busy ms %s, "
                "bubble %.3f, ideal %.3f)\n", m, s.step_ms, ips, s.stage_busy_ms, s.bubble, s.bubble_ideal);
        if (ips > best_ips) {
            best_ips = ips, best = m;
            best_split = split;
        } else if (ips < 0.97 * best_ips) {
            break;
        }
    }
    if (!best) {
        snprintf(err, errlen, "%s", *why ? why : "pipeline: --micro-batches auto: no power of two from the stage count "
                 "up divides the global batch");
        return -1;
    }
    fprintf(stderr, "pipeline: --micro-batches auto: M = %d (%.0f images/s in its probe)\n", best, best_ips);
    run_cfg_t c = *cfg;
    c.micro_batches = best;
    int probed = !c.split && cfg->n_gpus > 1;
    if (probed) {
        c.split = best_split.starts + 1;
        c.n_split = cfg->n_gpus - 1;
        c.split_probed = 1;
    }
    if (setup_fixed(state, &c, err, errlen) != 0) return -1;
    if (probed) {   /* the balance's predictions, for the line that sets them beside the measured busy times */
        pipe_t *pp = *state;
        memcpy(pp->predicted_ms, best_split.predicted_ms, sizeof pp->predicted_ms);
        pp->predicted_balance = best_split.predicted_balance;
        pp->block_balance = best_split.block_balance;
    }
    return 0;
}

static int pipe_setup(void **state, const run_cfg_t *cfg, char *err, size_t errlen) {
    return cfg->micro_batches > 0 ? setup_fixed(state, cfg, err, errlen) : setup_auto(state, cfg, err, errlen);
}

static int pipe_steps_done(void *state, int launched, double *ms) {
    return timing_steps_done(((pipe_t *)state)->step_events, launched, ms);
}

const strategy_t strategy_pipeline = {
    .info = &strategy_info_pipeline,
    .setup = pipe_setup,
    .steps_per_epoch = pipe_steps,
    .epoch_begin = pipe_epoch_begin,
    .train_step = pipe_train_step,
    .epoch_end = pipe_epoch_end,
    .evaluate = pipe_evaluate_,
    .teardown = pipe_teardown,
    .params = pipe_params,
    .steps_done = pipe_steps_done,
};
