/* test_oom.c — a configuration whose activations do not fit is a setup error naming out-of-memory, refused from its
 * memory need before allocating (the sweep records it as an `oom` row and goes on), and the GPU stays usable for
 * the next configuration. */
#include "gpu_test.h"
#include "../../engine/idx.h"
#include "../../strategies/strategy.h"
#include <string.h>

static int setup_single(const idx_dataset_t *data, int batch, char *err, size_t errlen, void **state) {
    int dev = 0;
    run_cfg_t cfg = {.model = "resnet18", .n_gpus = 1, .devices = &dev, .global_batch = batch, .lr = 0.1,
                     .math = MATH_TF32, .init = INIT_NORMAL, .seed = 1, .data = data, .cuda_graph = 1};
    return strategy_find("single")->setup(state, &cfg, err, errlen);
}

int main(void) {
    gpu_test_require(1);
    idx_dataset_t data;
    idx_synthetic(&data, 5);
    char err[512] = "";
    void *state = NULL;
    /* 50000 28x28 images through ResNet-18 need ~470 GB of activations: more than any GPU holds. */
    int rc = setup_single(&data, 50000, err, sizeof err, &state);
    printf("batch 50000: rc %d: %s\n", rc, err);
    EXPECT(rc != 0 && strstr(err, "out of memory") != NULL, "huge batch: rc %d, message \"%s\"", rc, err);
    /* Refused from the memory need computed before allocating, not by a failed allocation. */
    EXPECT(strstr(err, "needs at least") != NULL && strstr(err, "MiB free") != NULL,
           "the need and the free memory are named: \"%s\"", err);
    rc = setup_single(&data, 64, err, sizeof err, &state);
    EXPECT(rc == 0, "batch 64 after an out-of-memory setup: %s", err);
    if (rc == 0) {
        const strategy_t *st = strategy_find("single");
        epoch_stats_t s;
        st->epoch_begin(state, 1);
        for (int i = 0; i < 3; i++) st->train_step(state, i);
        st->epoch_end(state, 3, &s);
        EXPECT(s.train_loss > 0 && s.train_loss < 10, "training after the oom: loss %f", s.train_loss);
        st->teardown(state);
    }
    idx_free(&data);
    return test_summary();
}
