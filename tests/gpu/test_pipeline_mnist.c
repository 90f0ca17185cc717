/* test_pipeline_mnist.c — the classic two-part model split: LeNet's convolutions on GPU 0, its dense layers on
 * GPU 1 (--split 7), MNIST, batch 64, lr 0.1, Xavier, one micro-batch, one epoch: test accuracy >= 0.975, as on
 * one GPU (test_train_lenet). */
#include "dp_common.h"

int main(void) {
    gpu_test_require(2);
    idx_dataset_t data;
    dp_test_load(&data, "mnist");
    int devices[2] = {0, 1}, split[1] = {7};
    run_cfg_t cfg = {.model = "lenet", .n_gpus = 2, .devices = devices, .global_batch = 64, .lr = 0.1,
                     .math = MATH_TF32, .init = INIT_XAVIER, .seed = 1, .data = &data, .micro_batches = 1,
                     .split = split, .n_split = 1};
    const strategy_t *st = strategy_find("pipeline");
    epoch_stats_t s;
    void *state = dp_test_train(st, &cfg, 0, &s);
    st->epoch_begin(state, 1);
    int steps = st->steps_per_epoch(state);
    for (int i = 0; i < steps; i++) st->train_step(state, i);
    st->epoch_end(state, steps, &s);
    double acc = st->evaluate(state);
    printf("lenet/mnist pipeline (split %s): %d steps, %.3f s, train loss %.4f, train acc %.4f, test acc %.4f, "
           "busy %s ms, bubble %.3f\n", s.split, s.steps, s.epoch_s, s.train_loss, s.train_acc, acc, s.stage_busy_ms,
           s.bubble);
    EXPECT(strcmp(s.split, "0,7") == 0, "split %s", s.split);
    EXPECT(acc >= 0.975, "LeNet/MNIST through 2 stages: test accuracy %.4f < 0.975 after 1 epoch", acc);
    st->teardown(state);
    idx_free(&data);
    return test_summary();
}
