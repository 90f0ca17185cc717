/* single.c — the one-GPU strategy: one replica, no communication. It is the reference every other strategy
 * is checked against, and the T1 of every speedup. A language model (engine/model_info.h's kind) trains through
 * engine/gpt2/gpt2_train.h instead of a replica of layers: the state says which. */
#include "strategy.h"
#include "../engine/replica.h"
#include "../engine/model_info.h"
#include "../engine/gpt2/gpt2_train.h"
#include "../engine/trace.h"
#include "../engine/check.h"
#include "../engine/timing.h"
#include <stdio.h>
#include <stdlib.h>

/* The state: the image classifier's replica, or the language model's trainer (lm NULL for the former). The replica
 * comes first, so the state is the replica_t the GPU tests take it for. */
typedef struct {
    replica_t r;
    gpt2_train_t *lm;
} single_t;

static int single_setup_lm(gpt2_train_t **out, const run_cfg_t *cfg, char *err, size_t errlen) {
    gpt2_train_t *g = calloc(1, sizeof *g);
    if (!g) { snprintf(err, errlen, "out of host memory"); return -1; }
    if (run_cfg_lm_init(g, cfg, cfg->devices[0], cfg->global_batch, 0, err, errlen) != 0) {
        free(g);
        return -1;
    }
    *out = g;
    return 0;
}

static int single_setup_replica(replica_t *r, const run_cfg_t *cfg, char *err, size_t errlen) {
    optim_cfg_t oc = run_cfg_optim(cfg);
    if (oc.gns_every > 0 && cfg->global_batch < 2) {   /* two halves of the step's batch */
        snprintf(err, errlen, "the gradient noise scale needs a batch of at least 2 images (has %d)",
                 cfg->global_batch);
        return -1;
    }
    if (replica_init(r, cfg->devices[0], cfg->model, cfg->global_batch, cfg->global_batch, cfg->math,
                     run_cfg_gpu_setup(cfg), cfg->init, cfg->seed, &oc, (float)cfg->momentum,
                     (float)cfg->weight_decay, cfg->data, err, errlen) != 0) {
        replica_free(r);
        return -1;
    }
    if (replica_wgrad_direct() && replica_bind_lp_grads(r, err, errlen) != 0) {
        replica_free(r);
        return -1;
    }
    r->use_graphs = cfg->cuda_graph;
    r->trace = cfg->trace;
    return 0;
}

static int single_setup(void **state, const run_cfg_t *cfg, char *err, size_t errlen) {
    if (cfg->n_gpus != strategy_info_single.max_gpus) {    /* options_validate refuses it first; a caller may not */
        snprintf(err, errlen, "strategy single runs on exactly %d GPU (asked for %d)", strategy_info_single.max_gpus,
                 cfg->n_gpus);
        return -1;
    }
    single_t *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, errlen, "out of host memory"); return -1; }
    int rc = model_info_lm(model_info(cfg->model)) ? single_setup_lm(&s->lm, cfg, err, errlen)
                                                   : single_setup_replica(&s->r, cfg, err, errlen);
    if (rc != 0) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static int single_steps(void *state) {
    const single_t *s = state;
    return s->lm ? s->lm->steps_per_epoch : s->r.steps_per_epoch;
}

static void single_epoch_begin(void *state, int epoch) {
    single_t *s = state;
    if (s->lm) gpt2_train_epoch_begin(s->lm, epoch);
    else replica_epoch_begin(&s->r, epoch);
}

static void single_train_step(void *state, int step) {
    single_t *s = state;
    replica_t *r = &s->r;
    if (s->lm) gpt2_train_step(s->lm, step);   /* graphed or eager as --cuda-graph says */
    else if (r->trace && r->trace->active) replica_step_traced(r, step);   /* forward, backward, update apart */
    else replica_step_graphed(r, step);   /* eager when --cuda-graph off: the same segment, not captured */
}

/* A language model's epoch: its loss; no accuracy, loss scale or noise scale (empty cells). */
static void single_epoch_end_lm(gpt2_train_t *g, int steps, epoch_stats_t *out) {
    gpt2_train_epoch_end(g, steps, &out->epoch_s, &out->step_ms, &out->train_loss);
    out->peak_mem_mb = gpt2_train_mem_mb(g);
    out->lr_now = gpt2_train_lr_now(g);
}

/* An image classifier's epoch: loss and accuracy, the loss scale's state, the noise scale's halves. */
static void single_epoch_end_replica(replica_t *r, int steps, epoch_stats_t *out) {
    dataset_shuffle_ahead(&r->data);   /* before the wait: the draw overlaps the epoch's last steps */
    replica_epoch_end(r, steps, &out->epoch_s, &out->step_ms, &out->train_loss, &out->train_acc);
    out->peak_mem_mb = replica_mem_mb(r);
    replica_loss_scale_read(r, &out->loss_scale, &out->skipped_steps);
    out->lr_now = replica_lr_now(r);
    replica_epoch_gns_halves(r, &out->gns_small_sq, &out->gns_big_sq, &out->gns_b_small, &out->gns_b_big);
}

static void single_epoch_end(void *state, int steps, epoch_stats_t *out) {
    single_t *s = state;
    out->steps = steps;
    if (s->lm) single_epoch_end_lm(s->lm, steps, out);
    else single_epoch_end_replica(&s->r, steps, out);
    char who[32];
    snprintf(who, sizeof who, "gpu %d", s->lm ? s->lm->gpu.device : s->r.gpu.device);
    timing_print_steps(who, s->lm ? s->lm->step_events : s->r.step_events, steps);
}

static double single_evaluate(void *state) {
    single_t *s = state;
    return s->lm ? gpt2_train_evaluate(s->lm) : replica_evaluate(&s->r);
}

static void single_teardown(void *state) {
    single_t *s = state;
    if (s->lm) gpt2_train_free(s->lm);
    else replica_free(&s->r);
    free(s->lm);
    free(s);
}

/* SCALING_DUMP_PARAMS: the flat parameter buffer, to compare strategies parameter by parameter. */
static size_t single_params(void *state, float *host, size_t max) {
    single_t *s = state;
    if (s->lm) return gpt2_train_params(s->lm, host, max);
    return gpu_params_download(&s->r.gpu, s->r.model.params, s->r.model.n_params, host, max);
}

static int single_steps_done(void *state, int launched, double *ms) {
    const single_t *s = state;
    return timing_steps_done(s->lm ? s->lm->step_events : s->r.step_events, launched, ms);
}

const strategy_t strategy_single = {
    .info = &strategy_info_single,
    .setup = single_setup,
    .steps_per_epoch = single_steps,
    .epoch_begin = single_epoch_begin,
    .train_step = single_train_step,
    .epoch_end = single_epoch_end,
    .evaluate = single_evaluate,
    .teardown = single_teardown,
    .params = single_params,
    .steps_done = single_steps_done,
};
