/* test_schedule.c — the learning-rate schedule on the device (engine/optim.h): 50 captured steps of a cosine schedule
 * with warm-up leave the parameters bit-identical to the same steps run eagerly with each step's rate written from the
 * host (lr_schedule_at), and a constant rate (the negative control) does not; the noise scale's step, with its extra
 * half-batch backward, updates exactly as a plain step. */
#include "gpu_test.h"
#include "restart.h"
#include "../../engine/idx.h"
#include "../../engine/schedule.h"
#include "../../strategies/strategy.h"

#define EPOCHS 2
#define STEPS 25    /* per epoch: 50 steps in all */

typedef enum { DEVICE_TABLE, HOST_STEPPED, HOST_CONSTANT } how_t;

/* EPOCHS x STEPS steps from the replica's present state; returns its parameters (host copy). Host-stepped: the table
 * is one entry, rewritten before each step on the replica's stream with the host's rate (or the peak). */
static float *train(const strategy_t *st, void *state, const lr_schedule_t *sched, how_t how, double *lr_end) {
    replica_t *r = state;
    long n_table = r->opt.n_steps, k = 0;
    if (how != DEVICE_TABLE) r->opt.n_steps = 1;
    for (int e = 1; e <= EPOCHS; e++) {
        epoch_stats_t s;
        epoch_stats_init(&s);
        st->epoch_begin(state, e);
        for (int i = 0; i < STEPS; i++, k++) {
            if (how != DEVICE_TABLE) {
                float lr = how == HOST_STEPPED ? (float)lr_schedule_at(sched, k, STEPS) : (float)sched->peak;
                CHECK_CUDA(cudaMemcpyAsync(r->opt.table, &lr, sizeof lr, cudaMemcpyHostToDevice, r->gpu.stream));
                CHECK_CUDA(cudaStreamSynchronize(r->gpu.stream));   /* lr lives on this stack frame */
            }
            st->train_step(state, i);
        }
        st->epoch_end(state, STEPS, &s);
        *lr_end = s.lr_now;
    }
    r->opt.n_steps = n_table;
    size_t n = st->params(state, NULL, 0);
    float *p = malloc(n * sizeof(float));
    st->params(state, p, n);
    return p;
}

typedef struct {
    float *p0, *v0, *s0;
} start_t;

static void start_save(const replica_t *r, start_t *s) {
    const model_t *m = &r->model;
    size_t pb = m->n_params * sizeof(float), sb = m->n_state * sizeof(float);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMalloc((void **)&s->p0, pb));
    CHECK_CUDA(cudaMalloc((void **)&s->v0, pb));
    s->s0 = NULL;
    if (sb) CHECK_CUDA(cudaMalloc((void **)&s->s0, sb));
    CHECK_CUDA(cudaMemcpy(s->p0, m->params, pb, cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaMemcpy(s->v0, m->momentum, pb, cudaMemcpyDeviceToDevice));
    if (sb) CHECK_CUDA(cudaMemcpy(s->s0, m->state, sb, cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());
}

static void start_free(start_t *s) {
    CHECK_CUDA(cudaFree(s->p0));
    CHECK_CUDA(cudaFree(s->v0));
    if (s->s0) CHECK_CUDA(cudaFree(s->s0));
}

static void *setup(const idx_dataset_t *data, const char *model, math_t math, int gns_every) {
    const strategy_t *st = strategy_find("single");
    static int dev = 0;
    run_cfg_t cfg = {.model = model, .n_gpus = 1, .devices = &dev, .global_batch = 64, .lr = 0.1, .momentum = 0.9,
                     .weight_decay = 5e-4, .math = math, .init = INIT_XAVIER, .seed = 11, .data = data,
                     .cuda_graph = 1, .steps_cap = STEPS,
                     .optim = {.gns_every = gns_every,
                               .sched = {.kind = LR_COSINE, .warmup_epochs = 0.4, .epochs = EPOCHS}}};
    void *state;
    char err[256];
    if (st->setup(&state, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "setup: %s\n", err);
        exit(1);
    }
    return state;
}

/* One case: single set up with the test's schedule (setup's), its starting point saved. */
typedef struct {
    const strategy_t *st;
    void *state;
    replica_t *r;
    lr_schedule_t sched;
    start_t s0;
    size_t n;
} case_t;

static void case_begin(case_t *c, const idx_dataset_t *data, const char *model, math_t math, int gns_every) {
    c->st = strategy_find("single");
    c->state = setup(data, model, math, gns_every);
    c->r = c->state;
    c->sched = (lr_schedule_t){.kind = LR_COSINE, .peak = 0.1, .warmup_epochs = 0.4, .epochs = EPOCHS};
    start_save(c->r, &c->s0);
    c->n = c->r->model.n_params;
}

static void case_end(case_t *c) {
    start_free(&c->s0);
    c->st->teardown(c->state);
}

static float *case_train(case_t *c, how_t how, double *lr_end) {
    return train(c->st, c->state, &c->sched, how, lr_end);
}
static void case_restart(case_t *c) { restart(c->r, c->s0.p0, c->s0.v0, c->s0.s0); }

static void schedule_in_graph(const idx_dataset_t *data, const char *model, math_t math) {
    case_t c;
    case_begin(&c, data, model, math, 0);
    double lr_graph, lr_host, lr_const;
    c.r->use_graphs = 1;
    float *graph = case_train(&c, DEVICE_TABLE, &lr_graph);
    case_restart(&c);
    c.r->use_graphs = 0;
    float *host = case_train(&c, HOST_STEPPED, &lr_host);
    case_restart(&c);
    float *flat = case_train(&c, HOST_CONSTANT, &lr_const);
    size_t first = 0, n = c.n;
    while (first < n && memcmp(graph + first, host + first, sizeof(float)) == 0) first++;
    EXPECT(first == n, "%s (%s): graphed steps with the device's schedule differ from host-stepped rates, first at "
           "parameter %zu of %zu", model, gpu_math_name(math), first, n);
    EXPECT(memcmp(graph, flat, n * sizeof(float)) != 0, "%s (%s): a constant rate gave the same parameters as the "
           "schedule (the schedule did nothing)", model, gpu_math_name(math));
    float want = (float)lr_schedule_at(&c.sched, EPOCHS * STEPS - 1, STEPS);
    EXPECT(lr_graph == want && lr_host == want, "%s: the last step's rate %.9g (graph), %.9g (host), want %.9g", model,
           lr_graph, lr_host, want);
    EXPECT(lr_graph < 0.01 * c.sched.peak, "%s: the cosine ends near 0: %g", model, lr_graph);
    printf("%s (%s): 50 steps, graph = host-stepped: %s; last rate %.6g\n", model, gpu_math_name(math),
           first == n ? "yes" : "no", lr_graph);
    free(graph), free(host), free(flat);
    case_end(&c);
}

/* The noise scale's step (two backwards, the first of half the batch) against plain steps, graphed; under fp16 with
 * its loss scale too. */
static void gns_step_is_a_step(const idx_dataset_t *data, const char *model, math_t math) {
    case_t c;
    case_begin(&c, data, model, math, 1);
    double lr, small, big;
    int bs, bb;
    c.r->use_graphs = 1;
    float *with = case_train(&c, DEVICE_TABLE, &lr);
    replica_epoch_gns_halves(c.r, &small, &big, &bs, &bb);
    case_restart(&c);
    c.r->gns_every = 0;
    float *without = case_train(&c, DEVICE_TABLE, &lr);
    EXPECT(memcmp(with, without, c.n * sizeof(float)) == 0, "%s (%s): steps that measure the noise scale update "
           "differently from plain steps", model, gpu_math_name(math));
    EXPECT(bs == 32 && bb == 64, "%s: batches %d and %d", model, bs, bb);
    /* Half the batch has twice the variance: its squared norm is the larger, on average over the epoch's steps. An
     * fp16 step that overflowed (its loss scale backing off, the step skipped) leaves the sums infinite, and the
     * report leaves such an epoch out (study_noise_scale); the update is checked above either way. */
    if (math == MATH_FP16 && !(isfinite(small) && isfinite(big)))
        printf("%s (fp16): a measured step overflowed; its epoch's sums are not finite\n", model);
    else
        EXPECT(small > big && big > 0 && isfinite(small), "%s (%s): |G_32|^2 %g, |G_64|^2 %g", model,
               gpu_math_name(math), small, big);
    printf("%s (%s): noise scale's step = plain step; epoch means |G_32|^2 %.6g, |G_64|^2 %.6g\n", model,
           gpu_math_name(math), small, big);
    free(with), free(without);
    case_end(&c);
}

int main(void) {
    gpu_test_require(1);
    idx_dataset_t data;
    char err[512];
    if (idx_load_dataset(DATA_ROOT "/fashion-mnist", &data, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: data: %s (run scripts/setup.sh)\n", err);
        return 1;
    }
    const math_t maths[2] = {MATH_FP32, MATH_BF16};
    for (int i = 0; i < 2; i++) {
        schedule_in_graph(&data, "lenet", maths[i]);
        schedule_in_graph(&data, "resnet18", maths[i]);
        gns_step_is_a_step(&data, "resnet18", maths[i]);
    }
    gns_step_is_a_step(&data, "resnet18", MATH_FP16);   /* the loss scale's check and skip, measured steps too */
    idx_free(&data);
    return test_summary();
}
