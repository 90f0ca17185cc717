/* test_dp_replicas.c — replicas stay bit-identical under naive and nccl (LeNet, and ResNet-18 whose BatchNorm
 * statistics legitimately differ per replica while its parameters must not), on 2 and min(4, present) GPUs, with
 * fp32 and with bf16 gradients on the wire; and the check can fail: a replica nudged by +1 or by one flipped bit is
 * reported as differing, directly and in the row. */
#include "dp_common.h"

static void set_param(replica_t *r, size_t k, float v) {
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(r->model.params + k, &v, sizeof v, cudaMemcpyHostToDevice));
    /* A pageable upload may return before it lands, and the checksum runs on a non-blocking stream. */
    CHECK_CUDA(cudaDeviceSynchronize());
}

static float get_param(replica_t *r, size_t k) {
    float v;
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(&v, r->model.params + k, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}

static void check(const char *strategy, const char *model, int n, dtype_t grad, const idx_dataset_t *data,
                  int corrupt) {
    int devices[4] = {0, 1, 2, 3};
    run_cfg_t cfg = {.model = model, .n_gpus = n, .devices = devices, .global_batch = 32 * n, .lr = 0.05,
                     .momentum = 0.9, .weight_decay = 5e-4, .math = MATH_TF32,
                     .init = strcmp(model, "lenet") == 0 ? INIT_XAVIER : INIT_NORMAL, .seed = 3, .data = data,
                     .bucket_bytes = (size_t)4 << 20, .overlap = 1, .grad_dtype = grad};
    const strategy_t *st = strategy_find(strategy);
    epoch_stats_t s = {0};
    void *state = dp_test_train(st, &cfg, 8, &s);
    dp_t *dp = state;
    printf("%s %s on %d GPUs, %s gradients: 8 steps, loss %.4f, replicas %s\n", strategy, model, n, dtype_name(grad),
           s.train_loss, s.replicas_identical == 1 ? "identical" : "DIFFER");
    EXPECT(s.replicas_identical == 1, "%s %s on %d GPUs, %s gradients: replicas differ after 8 steps", strategy,
           model, n, dtype_name(grad));
    EXPECT(dp_replicas_identical(dp) == 1, "%s %s on %d GPUs: direct check differs", strategy, model, n);
    if (corrupt) {
        /* A replica that missed an update: +1 on one weight of the last replica. */
        replica_t *last = &dp->reps[n - 1];
        size_t k = last->model.n_params / 3;
        float v = get_param(last, k);
        set_param(last, k, v + 1.0f);
        EXPECT(dp_replicas_identical(dp) == 0, "%s on %d GPUs: a replica off by 1.0 is not detected", strategy, n);
        /* ...and the row of the next epoch says so: the difference survives identical updates. */
        st->epoch_begin(state, 2);
        for (int i = 0; i < 2; i++) st->train_step(state, i);
        st->epoch_end(state, 2, &s);
        EXPECT(s.replicas_identical == 0, "%s on %d GPUs: the epoch row does not report the corrupted replica",
               strategy, n);
        /* Repaired from replica 0, the check passes again; then one flipped low mantissa bit is caught. */
        replica_t *r0 = &dp->reps[0];
        CHECK_CUDA(cudaMemcpyPeer(last->model.params, last->gpu.device, r0->model.params, r0->gpu.device,
                                  r0->model.n_params * sizeof(float)));
        for (int i = 0; i < n; i++) {   /* the copy is on the legacy stream, the checksum on non-blocking ones */
            CHECK_CUDA(cudaSetDevice(dp->reps[i].gpu.device));
            CHECK_CUDA(cudaDeviceSynchronize());
        }
        EXPECT(dp_replicas_identical(dp) == 1, "%s on %d GPUs: repaired replica still reported", strategy, n);
        float w = get_param(last, 1);
        unsigned bits;
        memcpy(&bits, &w, sizeof bits);
        bits ^= 1u;
        memcpy(&w, &bits, sizeof w);
        set_param(last, 1, w);
        EXPECT(dp_replicas_identical(dp) == 0, "%s on %d GPUs: one flipped bit is not detected", strategy, n);
    }
    st->teardown(state);
}

int main(void) {
    gpu_test_require(2);
    idx_dataset_t data;
    dp_test_load(&data, "mnist");
    int counts[2], n_counts = dp_test_counts(counts);
    static const char *const strategies[] = {"naive", "nccl"};
    for (int c = 0; c < n_counts; c++)
        for (int k = 0; k < 2; k++)
            for (int t = 0; t < 2; t++) {
                dtype_t grad = t ? DTYPE_BF16 : DTYPE_FP32;
                check(strategies[k], "lenet", counts[c], grad, &data, 1);
                check(strategies[k], "resnet18", counts[c], grad, &data, 0);
            }
    idx_free(&data);
    return test_summary();
}
