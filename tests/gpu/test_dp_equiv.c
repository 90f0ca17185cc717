/* test_dp_equiv.c — data parallelism changes where the arithmetic runs, not what it computes: after k = 5 steps,
 * LeNet trained by naive and nccl on N GPUs with global batch B has the parameters of 1-GPU `single` training with
 * batch B (relative error <= 1e-5, strict fp32), on 1, 2 and min(4, present) GPUs, with every reduction variant
 * (with one GPU present: 1 replica, and naive's 2 replicas sharing it).
 * The rows' measurements are checked for sanity on the way. Then bf16 and fp16 mixed precision: naive and nccl on
 * 2 GPUs against single in the same math, with fp32 and with 2-byte gradients on the wire, within dp_common.h's
 * tolerances of that type, replicas bit-identical, and in fp16 the loss scale single's; then one fp16 step with a
 * NaN in one replica's shard only: every replica skips it (parameters unchanged, each scale halved, equal). */
#include "dp_common.h"
#include "../../engine/loss_scale_gpu.h"

#define B 96            /* divisible by 1, 2, 3 and 4 */
#define K 5

typedef struct {
    const char *strategy, *label;
    int naive_path;
    size_t bucket_bytes;
    int overlap;
} variant_t;

static const variant_t variants[] = {
    {"naive", "naive auto", NAIVE_PATH_AUTO, 0, 1},
    {"naive", "naive host", NAIVE_PATH_HOST, 0, 1},
    {"nccl", "nccl 25 MiB overlap", 0, (size_t)25 << 20, 1},
    {"nccl", "nccl 64 KiB overlap", 0, (size_t)64 << 10, 1},       /* LeNet in 4 buckets */
    {"nccl", "nccl 64 KiB no overlap", 0, (size_t)64 << 10, 0},
};

/* One more step of a trained fp16 replica set, with replica 1's training images all NaN: its gradients are NaN,
 * the reduced ones too, so every replica must skip the step, halve its scale and stay bit-identical. On a 2-byte
 * wire replica 0's fp32 buffer still holds its own shard's gradients afterwards: all finite, so replica 0 skipped
 * for the reduced gradients' sake, not its own (on an fp32 wire that buffer is the reduced one). */
static void test_skip_together(const strategy_t *st, void *state, const char *label) {
    dp_t *dp = state;
    epoch_stats_t s;
    double scale0;
    int skipped0;
    replica_loss_scale_read(&dp->reps[0], &scale0, &skipped0);
    float *before = dp_test_params(&dp->reps[0]);
    replica_t *r1 = &dp->reps[1];
    CHECK_CUDA(cudaSetDevice(r1->gpu.device));
    CHECK_CUDA(cudaMemset(r1->data.train_x, 0xff, (size_t)r1->data.n_train * r1->data.pixels * sizeof(float)));
    CHECK_CUDA(cudaDeviceSynchronize());
    epoch_stats_init(&s);
    st->epoch_begin(state, 2);
    st->train_step(state, 0);
    st->epoch_end(state, 1, &s);
    int same = 1;
    loss_scale_t ls[DP_MAX_GPUS] = {{0}};
    for (int i = 0; i < dp->n; i++) {
        float *p = dp_test_params(&dp->reps[i]);
        same &= memcmp(p, before, dp->reps[0].model.n_params * sizeof(float)) == 0;
        free(p);
        ls[i] = loss_scale_read(dp->reps[i].ls, dp->reps[i].gpu.stream);
    }
    printf("%-36s NaN in GPU 1's shard: parameters %s, scale %g -> %g (GPU 1: %g), skipped %d, replicas %s\n", label,
           same ? "unchanged" : "CHANGED", scale0, ls[0].scale, ls[1].scale, s.skipped_steps,
           s.replicas_identical == 1 ? "identical" : "DIFFER");
    EXPECT(same && s.replicas_identical == 1, "%s: a step with a NaN in one shard changed parameters (replicas %d)",
           label, s.replicas_identical);
    EXPECT(s.skipped_steps == 1 && s.loss_scale == scale0 / 2, "%s: skipped %d, scale %g after %g", label,
           s.skipped_steps, s.loss_scale, scale0);
    for (int i = 1; i < dp->n; i++)
        EXPECT(memcmp(&ls[i], &ls[0], sizeof ls[0]) == 0, "%s: GPU %d's loss scale %g (%d skipped) is not GPU 0's %g "
               "(%d)", label, i, ls[i].scale, ls[i].skipped, ls[0].scale, ls[0].skipped);
    if (dtype_is_low(dp->wire)) {
        const replica_t *r0 = &dp->reps[0];
        size_t n = r0->model.n_params, bad = 0;
        float *g = malloc(n * sizeof(float));
        CHECK_CUDA(cudaSetDevice(r0->gpu.device));
        CHECK_CUDA(cudaMemcpy(g, r0->model.grads, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t k = 0; k < n; k++) bad += !isfinite(g[k]);
        EXPECT(bad == 0, "%s: control: GPU 0's own gradients hold %zu non-finite values", label, bad);
        free(g);
    }
    free(before);
}

/* --math bf16 | fp16 on 2 GPUs against single in that math at the same global batch: each shard's 2-byte weight
 * gradients are rounded before they are summed (and once more on a 2-byte wire), where single rounds the whole
 * batch's once. Wires: fp32, and the math's own type. */
static void test_low(run_cfg_t *cfg, math_t math) {
    const dtype_t lt = math_act_dtype(math);
    cfg->math = math;
    cfg->n_gpus = 1;
    cfg->grad_dtype = DTYPE_FP32;
    epoch_stats_t s;
    float *p0, *ref;
    double single_acc;
    size_t n = dp_test_single(cfg, K, &p0, &ref, &s, &single_acc);
    double single_loss = s.train_loss, single_scale = s.loss_scale;
    int single_skipped = s.skipped_steps;
    printf("[%s] single: loss %.4f, loss scale %g, %d skipped\n", gpu_math_name(math), single_loss, single_scale,
           single_skipped);
    EXPECT(math_loss_scaled(math) ? single_scale > 0 && single_skipped >= 0 : single_scale < 0 && single_skipped < 0,
           "[%s] single: loss scale %g, skipped %d", gpu_math_name(math), single_scale, single_skipped);
    float *dref = malloc(n * sizeof(float)), *d = malloc(n * sizeof(float));
    for (size_t k = 0; k < n; k++) dref[k] = ref[k] - p0[k];
    const dp_tol_t *tol = lt == DTYPE_FP16 ? &dp_tol_fp16 : &dp_tol_bf16;
    static const char *const strategies[2] = {"naive", "nccl"};
    const dtype_t wires[2] = {DTYPE_FP32, lt};
    for (int v = 0; v < 2; v++)
        for (int w = 0; w < 2; w++) {
            const strategy_t *st = strategy_find(strategies[v]);
            cfg->n_gpus = 2;
            cfg->naive_path = NAIVE_PATH_AUTO;
            cfg->bucket_bytes = (size_t)25 << 20;
            cfg->overlap = 1;
            cfg->grad_dtype = wires[w];
            memset(&s, 0, sizeof s);
            void *state = dp_test_train(st, cfg, K, &s);
            double acc = st->evaluate(state);
            float *p = dp_test_params(&((dp_t *)state)->reps[0]);
            double rel = dp_test_rel(p, ref, n);
            for (size_t k = 0; k < n; k++) d[k] = p[k] - p0[k];
            double rel_update = dp_test_rel(d, dref, n);
            char label[64];
            snprintf(label, sizeof label, "[%s] %s, %s gradients, 2 GPUs", gpu_math_name(math), strategies[v],
                     dtype_name(wires[w]));
            printf("%-36s params rel err %.3g, update rel err %.3g, loss %.4f (single %.4f), acc %.4f (single %.4f), "
                   "loss scale %g (single %g), %d skipped (single %d)\n", label, rel, rel_update, s.train_loss,
                   single_loss, acc, single_acc, s.loss_scale, single_scale, s.skipped_steps, single_skipped);
            EXPECT(rel <= tol->params, "%s: parameters differ from single: rel err %.3g", label, rel);
            EXPECT(rel_update <= tol->update, "%s: update differs from single: rel err %.3g", label, rel_update);
            EXPECT(fabs(s.train_loss - single_loss) <= tol->loss * single_loss, "%s: loss %.7f, single %.7f", label,
                   s.train_loss, single_loss);
            EXPECT(fabs(acc - single_acc) <= tol->acc, "%s: test accuracy %.4f, single %.4f", label, acc, single_acc);
            EXPECT(s.steps == K && s.replicas_identical == 1, "%s: steps %d, replicas_identical %d", label, s.steps,
                   s.replicas_identical);
            EXPECT(s.bytes_per_step == (double)n * dtype_size(wires[w]), "%s: bytes %.0f, want %zu per gradient",
                   label, s.bytes_per_step, dtype_size(wires[w]));
            EXPECT(s.loss_scale == single_scale && s.skipped_steps == single_skipped, "%s: loss scale %g (%d skipped), "
                   "single %g (%d)", label, s.loss_scale, s.skipped_steps, single_scale, single_skipped);
            if (math_loss_scaled(math)) test_skip_together(st, state, label);
            free(p);
            st->teardown(state);
        }
    free(p0);
    free(ref);
    free(dref);
    free(d);
}

int main(void) {
    gpu_test_require(1);
    int n_dev = 0;
    CHECK_CUDA(cudaGetDeviceCount(&n_dev));
    idx_dataset_t data;
    dp_test_load(&data, "mnist");
    int devices[4] = {0, 1, 2, 3};
    run_cfg_t cfg = {.model = "lenet", .n_gpus = 1, .devices = devices, .global_batch = B, .lr = 0.1,
                     .momentum = 0.9, .weight_decay = 5e-4, .math = MATH_FP32, .init = INIT_XAVIER, .seed = 1,
                     .data = &data};

    /* The reference: one GPU, batch B. */
    epoch_stats_t s;
    float *p0, *ref;
    double single_acc;
    size_t n_params = dp_test_single(&cfg, K, &p0, &ref, &s, &single_acc);
    float *dref = malloc(n_params * sizeof(float)), *d = malloc(n_params * sizeof(float));
    for (size_t k = 0; k < n_params; k++) dref[k] = ref[k] - p0[k];
    double single_loss = s.train_loss;
    printf("single: %d steps, loss %.4f, update norm ratio %.3g\n", K, s.train_loss, dp_test_rel(dref, ref, n_params));

    /* One GPU: 1 replica, and naive's 2 replicas sharing GPU 0 (its sum is real there; NCCL takes one rank a GPU). */
    int counts[3] = {1}, n_counts = 1 + dp_test_counts(counts + 1);
    static const int shared[2] = {0, 0};
    const char *user_algo = getenv("NCCL_ALGO");
    for (int c = 0; c < n_counts; c++)
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            const variant_t *var = &variants[v];
            int n = counts[c], share = n > n_dev;
            if (share && (n > 2 || strcmp(var->strategy, "naive") != 0)) continue;
            cfg.n_gpus = n;
            cfg.devices = share ? shared : devices;
            cfg.naive_path = var->naive_path;
            cfg.bucket_bytes = var->bucket_bytes;
            cfg.overlap = var->overlap;
            const strategy_t *st = strategy_find(var->strategy);
            memset(&s, 0, sizeof s);
            void *state = dp_test_train(st, &cfg, K, &s);
            dp_t *dp = state;
            double acc = st->evaluate(state);
            for (int i = 0; i < n; i++) {
                float *p = dp_test_params(&dp->reps[i]);
                double rel = dp_test_rel(p, ref, n_params);
                for (size_t k = 0; k < n_params; k++) d[k] = p[k] - p0[k];
                double rel_update = dp_test_rel(d, dref, n_params);
                if (i == 0)
                    printf("%-24s %d %s: params rel err %.3g, update rel err %.3g, loss %.4f (single %.4f), "
                           "compute %.3f ms, comm %.3f ms, exposed %.3f ms, busbw %.2f GB/s, algo \"%s\"\n",
                           var->label, n, share ? "on GPU 0" : n == 1 ? "GPU " : "GPUs", rel, rel_update,
                           s.train_loss, single_loss, s.compute_ms, s.comm_ms, s.exposed_comm_ms, s.busbw_gbs,
                           s.nccl_algo);
                EXPECT(rel <= 1e-5, "%s on %d GPUs: replica %d parameters differ from single: rel err %.3g", var->label,
                       n, i, rel);
                /* The update itself (not drowned by the initial weights) must match too, looser: the shards'
                 * gradients are summed in another order than one batch's. */
                EXPECT(rel_update <= 1e-3, "%s on %d GPUs: replica %d update differs from single: rel err %.3g",
                       var->label, n, i, rel_update);
                free(p);
            }
            EXPECT(s.steps == K && s.replicas_identical == 1, "%s on %d GPUs: steps %d, replicas_identical %d",
                   var->label, n, s.steps, s.replicas_identical);
            EXPECT(fabs(s.train_loss - single_loss) <= 1e-5 * single_loss, "%s on %d GPUs: loss %.7f, single %.7f",
                   var->label, n, s.train_loss, single_loss);
            /* Replica 0 evaluates with the same parameters (LeNet has no BatchNorm): only near-ties may flip. */
            EXPECT(fabs(acc - single_acc) <= 2e-3, "%s on %d GPUs: test accuracy %.4f, single %.4f", var->label, n,
                   acc, single_acc);
            EXPECT(s.compute_ms > 0 && s.exposed_comm_ms >= 0 && s.epoch_s > 0 && s.step_ms > 0,
                   "%s on %d GPUs: compute %.3f exposed %.3f epoch %.3f step %.3f", var->label, n, s.compute_ms,
                   s.exposed_comm_ms, s.epoch_s, s.step_ms);
            if (n > 1) {
                EXPECT(s.comm_ms > 0 && s.bytes_per_step == (double)n_params * sizeof(float) && s.algbw_gbs > 0 &&
                           fabs(s.busbw_gbs - s.algbw_gbs * 2.0 * (n - 1) / n) < 1e-9 * s.busbw_gbs + 1e-12,
                       "%s on %d GPUs: comm %.3f ms, bytes %.0f, algbw %.3f, busbw %.3f", var->label, n, s.comm_ms,
                       s.bytes_per_step, s.algbw_gbs, s.busbw_gbs);
                if (strcmp(var->strategy, "nccl") == 0)
                    EXPECT(strcmp(s.nccl_algo, user_algo ? user_algo : "Ring") == 0, "nccl_algo \"%s\"", s.nccl_algo);
            } else {
                EXPECT(s.comm_ms == 0 && s.bytes_per_step == 0, "%s on 1 GPU: comm %.3f bytes %.0f", var->label,
                       s.comm_ms, s.bytes_per_step);
            }
            st->teardown(state);
        }
    free(p0);
    free(ref);
    free(dref);
    free(d);
    cfg.devices = devices;
    if (n_dev < 2) {
        printf("bf16 and fp16 on 2 GPUs: skipped, %d GPU present\n", n_dev);
        idx_free(&data);
        return test_summary();
    }
    test_low(&cfg, MATH_BF16);
    test_low(&cfg, MATH_FP16);
    idx_free(&data);
    return test_summary();
}
