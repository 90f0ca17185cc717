/* fake_strategy.c — test-only strategies: no CUDA work at all, epoch statistics from a formula, so a host test can
 * run them through the real driver and report them (tests/cli/fake_strategy.sh), showing that a strategy is one file
 * and one registry line (fake_registry.c): fake, replicas, and fake_ref, the same formula declared the reference
 * (its 1-GPU runs are fake's T1, as single's are on a GPU). A global batch over FAKE_MAX_BATCH fails setup as out of
 * memory, like a real one. FAKE_SETUP_MS and FAKE_STEP_MS make its setup and steps take that long on the host (a
 * long setup, a long epoch: the progress lines), its setup counted as FAKE_LAYERS layers per GPU, each searched (as
 * the engine counts a model's), its steps "finished" as they return. */
#define _POSIX_C_SOURCE 200809L
#include "strategies/strategy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define FAKE_MAX_BATCH 65536
#define FAKE_LAYERS 8

typedef struct {
    int gpus, global_batch, steps_per_epoch, epoch, steps_run;
    int step_ms;                /* FAKE_STEP_MS */
} fake_t;

static void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&t, &t) != 0) {}
}

static int fake_setup(void **state, const run_cfg_t *cfg, char *err, size_t errlen) {
    if (cfg->global_batch > FAKE_MAX_BATCH) {
        snprintf(err, errlen, "fake: out of memory (global batch %d over %d)", cfg->global_batch, FAKE_MAX_BATCH);
        return -1;
    }
    fake_t *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "fake: out of host memory");
        return -1;
    }
    f->gpus = cfg->n_gpus;
    f->global_batch = cfg->global_batch;
    f->steps_per_epoch = cfg->data->train.n / cfg->global_batch;
    const char *step = getenv("FAKE_STEP_MS"), *setup = getenv("FAKE_SETUP_MS");
    f->step_ms = step ? atoi(step) : 0;
    /* GPU after GPU, layer after layer, into the run's setup counter as the engine's model_alloc counts */
    int layer_ms = setup ? atoi(setup) / (FAKE_LAYERS * (cfg->n_gpus > 0 ? cfg->n_gpus : 1)) : 0;
    for (int i = 0; setup && i < cfg->n_gpus; i++) {
        setup_count_begin(cfg->setup_count, cfg->devices[i], FAKE_LAYERS);
        for (int k = 0; k < FAKE_LAYERS; k++) {
            sleep_ms(layer_ms);
            setup_count_layer_done(cfg->setup_count, 1, 0);
        }
    }
    *state = f;
    return 0;
}

static int fake_steps(void *state) { return ((fake_t *)state)->steps_per_epoch; }

static void fake_epoch_begin(void *state, int epoch) {
    fake_t *f = state;
    f->epoch = epoch;
    f->steps_run = 0;
}

static void fake_train_step(void *state, int step) {
    (void)step;
    fake_t *f = state;
    sleep_ms(f->step_ms);
    __atomic_add_fetch(&f->steps_run, 1, __ATOMIC_RELEASE);
}

/* Its steps are done as they return: the progress line's GPU count, at FAKE_STEP_MS each. */
static int fake_steps_done(void *state, int launched, double *ms) {
    fake_t *f = state;
    int done = __atomic_load_n(&f->steps_run, __ATOMIC_ACQUIRE);
    if (done > launched) done = launched;
    *ms = (double)done * f->step_ms;
    return f->step_ms > 0 ? done : -1;
}

/* A step costs 1 ms per 256 images on each GPU plus 0.1 ms per extra GPU; the loss halves every epoch. */
static void fake_epoch_end(void *state, int steps, epoch_stats_t *out) {
    fake_t *f = state;
    double step_ms = (double)f->global_batch / f->gpus / 256.0 + 0.1 * (f->gpus - 1);
    out->steps = steps;
    out->step_ms = step_ms;
    out->epoch_s = steps * step_ms / 1e3;
    out->train_loss = 2.3 * pow(0.5, f->epoch);
    out->train_acc = 1 - out->train_loss / 2.5;
    out->peak_mem_mb = 1;
    if (f->gpus > 1) {
        out->comm_ms = out->exposed_comm_ms = 0.1 * (f->gpus - 1);
        out->compute_ms = step_ms - out->comm_ms;
        out->idle_ms = 0;
        out->replicas_identical = 1;
    }
}

static double fake_evaluate(void *state) { return 0.5 + 0.1 * ((fake_t *)state)->epoch; }

static void fake_teardown(void *state) { free(state); }

/* Eight "parameters" from the run's shape and last epoch, for SCALING_DUMP_PARAMS. */
static size_t fake_params(void *state, float *host, size_t max) {
    const fake_t *f = state;
    for (size_t i = 0; host && i < max && i < 8; i++) host[i] = (float)(f->gpus * 1000 + f->epoch * 10 + (int)i);
    return 8;
}

#define FAKE_CALLS                                                                                                     \
    .setup = fake_setup, .steps_per_epoch = fake_steps, .epoch_begin = fake_epoch_begin,                               \
    .train_step = fake_train_step, .epoch_end = fake_epoch_end, .evaluate = fake_evaluate,                             \
    .teardown = fake_teardown, .params = fake_params, .steps_done = fake_steps_done

static const strategy_info_t fake_info = {.name = "fake",
                                          .summary = "test only: no GPU work, epoch statistics from a formula",
                                          .no_gpu = 1},
                              fake_ref_info = {.name = "fake_ref",
                                               .summary = "test only: fake's formula as the reference of its speedups",
                                               .no_gpu = 1,
                                               .reference = 1};

const strategy_t strategy_fake = {
    .info = &fake_info,
    FAKE_CALLS,
};

const strategy_t strategy_fake_ref = {
    .info = &fake_ref_info,
    FAKE_CALLS,
};
