/* train_common.h — trains a model through the real `single` strategy on a real data set and returns the test
 * accuracy after the last epoch: the end-to-end accuracy tests share this. */
#pragma once
#include "gpu_test.h"
#include "../../engine/idx.h"
#include "../../strategies/strategy.h"

/* image > 0: batches resized to image x image on the GPU (--image-size); 0: as stored. */
static double train_accuracy_at(const char *model, const char *dataset, int image, int batch, double lr, init_t init,
                                int epochs, math_t math) {
    idx_dataset_t data;
    char err[512], dir[512];
    snprintf(dir, sizeof dir, "%s/%s", DATA_ROOT, dataset);
    if (idx_load_dataset(dir, &data, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: data: %s (run scripts/setup.sh)\n", err);
        exit(1);
    }
    data.image = image;
    const strategy_t *st = strategy_find("single");
    int dev = 0;
    run_cfg_t cfg = {.model = model, .n_gpus = 1, .devices = &dev, .global_batch = batch, .lr = lr,
                     .momentum = 0, .weight_decay = 0, .math = math, .init = init, .seed = 1, .data = &data,
                     .cuda_graph = 1};
    void *state;
    if (st->setup(&state, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "FAIL: setup: %s\n", err);
        exit(1);
    }
    double acc = 0;
    for (int e = 1; e <= epochs; e++) {
        epoch_stats_t s;
        epoch_stats_init(&s);
        st->epoch_begin(state, e);
        int steps = st->steps_per_epoch(state);
        for (int i = 0; i < steps; i++) st->train_step(state, i);
        st->epoch_end(state, steps, &s);
        acc = st->evaluate(state);
        printf("%s/%s (%s) epoch %d: %d steps, %.3f s, train loss %.4f, train acc %.4f, test acc %.4f", model,
               dataset, gpu_math_name(math), e, s.steps, s.epoch_s, s.train_loss, s.train_acc, acc);
        if (s.loss_scale > 0) printf(", loss scale %g, %d steps skipped", s.loss_scale, s.skipped_steps);
        printf("\n");
    }
    st->teardown(state);
    idx_free(&data);
    return acc;
}

static double train_accuracy(const char *model, const char *dataset, int batch, double lr, init_t init,
                             int epochs, math_t math) {
    return train_accuracy_at(model, dataset, 0, batch, lr, init, epochs, math);
}
