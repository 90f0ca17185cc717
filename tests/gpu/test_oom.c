/* test_oom.c — a configuration whose activations do not fit is a setup error naming out-of-memory, refused from its
 * memory need before allocating (the sweep records it as an `oom` row and goes on), and the GPU stays usable for
 * the next configuration; so is a failed allocation of single's 2-byte filter-gradient buffer (fault injection). */
#include "gpu_test.h"
#include "../../engine/idx.h"
#include "../../engine/process.h"
#include "../../engine/replica.h"
#include "../../strategies/strategy.h"
#include <stdlib.h>
#include <string.h>

static int setup_single(const idx_dataset_t *data, int batch, math_t math, char *err, size_t errlen, void **state) {
    int dev = 0;
    run_cfg_t cfg = {.model = "resnet18", .n_gpus = 1, .devices = &dev, .global_batch = batch, .lr = 0.1,
                     .math = math, .init = INIT_NORMAL, .seed = 1, .data = data, .cuda_graph = 1};
    return strategy_find("single")->setup(state, &cfg, err, errlen);
}

/* Three steps of a set-up single and its teardown: the loss they end at. */
static float train_briefly(void *state) {
    const strategy_t *st = strategy_find("single");
    epoch_stats_t s;
    st->epoch_begin(state, 1);
    for (int i = 0; i < 3; i++) st->train_step(state, i);
    st->epoch_end(state, 3, &s);
    st->teardown(state);
    return s.train_loss;
}

#ifndef SCALING_NO_FAULT_INJECTION
/* The 2-byte filter-gradient buffer single binds under bf16 (SCALING_WGRAD=direct) failing to allocate (the next
 * allocation made to fail, right before the bind): a setup error naming out of memory and the way without the
 * buffer, nothing bound; the same bind then succeeds, and a bf16 single sets up and trains. */
static void lp_grads_fail(const idx_dataset_t *data) {
    char err[512] = "";
    replica_t *r = calloc(1, sizeof *r);
    const optim_cfg_t oc = {.sched = {.peak = 0.1}};
    int rc = replica_init(r, 0, "resnet18", 64, 64, MATH_BF16, (gpu_setup_t){0}, INIT_NORMAL, 1, &oc, 0.9f, 0,
                          data, err, sizeof err);
    EXPECT(rc == 0, "bf16 replica: %s", err);
    if (rc != 0) { replica_free(r); free(r); return; }
    setenv("SCALING_FAULT", "alloc:1", 1);
    EXPECT(fault_begin_run(0, 1, err, sizeof err) == 0 && process_state.faults.armed, "armed: %s", err);
    rc = replica_bind_lp_grads(r, err, sizeof err);
    unsetenv("SCALING_FAULT");
    char off[256] = "";
    EXPECT(fault_begin_run(0, 1, off, sizeof off) == 0 && !process_state.faults.armed, "disarmed: %s", off);
    printf("the bind's allocation failed: rc %d: %s\n", rc, err);
    EXPECT(rc == -1 && strstr(err, "out of memory: the 2-byte filter gradients of resnet18") == err &&
           strstr(err, "SCALING_WGRAD=widen") && r->grads_lp == NULL, "a setup error naming out of memory: \"%s\"", err);
    rc = replica_bind_lp_grads(r, err, sizeof err);
    EXPECT(rc == 0 && r->grads_lp != NULL, "the same bind after it: %s", err);
    replica_free(r);
    free(r);
    void *state = NULL;
    rc = setup_single(data, 64, MATH_BF16, err, sizeof err, &state);
    EXPECT(rc == 0, "a bf16 single after it: %s", err);
    if (rc == 0) {
        float loss = train_briefly(state);
        EXPECT(loss > 0 && loss < 10, "bf16 training after the failed allocation: loss %f", loss);
    }
}
#endif

int main(void) {
    gpu_test_require(1);
    idx_dataset_t data;
    idx_synthetic(&data, 5);
    char err[512] = "";
    void *state = NULL;
    /* 50000 28x28 images through ResNet-18 need ~470 GB of activations: more than any GPU holds. */
    int rc = setup_single(&data, 50000, MATH_TF32, err, sizeof err, &state);
    printf("batch 50000: rc %d: %s\n", rc, err);
    EXPECT(rc != 0 && strstr(err, "out of memory") != NULL, "huge batch: rc %d, message \"%s\"", rc, err);
    /* Refused from the memory need computed before allocating, not by a failed allocation. */
    EXPECT(strstr(err, "needs at least") != NULL && strstr(err, "MiB free") != NULL,
           "the need and the free memory are named: \"%s\"", err);
    rc = setup_single(&data, 64, MATH_TF32, err, sizeof err, &state);
    EXPECT(rc == 0, "batch 64 after an out-of-memory setup: %s", err);
    if (rc == 0) {
        float loss = train_briefly(state);
        EXPECT(loss > 0 && loss < 10, "training after the oom: loss %f", loss);
    }
#ifndef SCALING_NO_FAULT_INJECTION
    lp_grads_fail(&data);
#endif
    idx_free(&data);
    return test_summary();
}
