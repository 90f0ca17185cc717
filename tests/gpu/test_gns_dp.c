/* test_gns_dp.c — the gradient noise scale between data-parallel replicas: a step that measures it gives each
 * replica's |g_i|^2 (of the mean over its shard) and |G|^2 of the all-reduced mean, as computed here in double from
 * the replicas' own gradients of the same step; measuring changes no parameter.
 * - naive on 2 replicas: on GPUs 0 and 1, or both on GPU 0 where only one is present (GPU 0's sum kernel then reads
 *   the second replica's buffer in its own memory: the same sums);
 * - nccl on 2 and min(4, present) GPUs (NCCL refuses two ranks on one GPU, so it needs 2 GPUs), fp32 wire; with a bf16
 *   wire under --math bf16, against its own fp32-wire figure (the local norms are taken as the wire carries them).
 * Negative controls: the expected small-batch norm without the world^2 of the mean over a shard, and the large-batch
 * norm of a single replica's gradient, are each far outside the tolerance. */
#include "dp_common.h"

#define STEPS 4

typedef struct {
    double small, big;              /* world^2 * mean_i |g_i|^2 and |sum_i g_i|^2, from the replicas' gradients */
    double one;                     /* |g_0|^2: the reduced norm's negative control */
} expect_t;

static run_cfg_t config(const char *model, math_t math, dtype_t wire, int n, const int *devices,
                        const idx_dataset_t *data, int gns_every) {
    return (run_cfg_t){.model = model, .n_gpus = n, .devices = devices, .global_batch = 32 * n, .lr = 0.05,
                       .momentum = 0.9, .weight_decay = 5e-4, .math = math, .init = INIT_XAVIER, .seed = 11,
                       .data = data, .bucket_bytes = (size_t)1 << 16, .overlap = 1, .grad_dtype = wire,
                       .optim = {.gns_every = gns_every}};
}

/* Step 0's gradients, each replica's backward run here (nothing reduced), summed in double. */
static expect_t expected(const strategy_t *st, const run_cfg_t *cfg) {
    void *state = dp_test_train(st, cfg, 0, NULL);
    dp_t *dp = state;
    st->epoch_begin(state, 1);
    size_t P = dp->reps[0].model.n_params;
    double *sum = calloc(P, sizeof *sum), local = 0, one = 0;
    float *g = malloc(P * sizeof *g);
    if (!sum || !g) { fprintf(stderr, "out of host memory\n"); exit(1); }
    for (int i = 0; i < dp->n; i++) {
        replica_t *r = &dp->reps[i];
        dp_forward(dp, i);
        dp_backward(dp, i, 0, 0, r->model.n_layers);
        CHECK_CUDA(cudaSetDevice(r->gpu.device));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(g, r->model.grads, P * sizeof *g, cudaMemcpyDeviceToHost));
        double sq = 0;
        for (size_t k = 0; k < P; k++) {
            sq += (double)g[k] * g[k];
            sum[k] += g[k];
        }
        local += sq;
        if (i == 0) one = sq;
    }
    double w = dp->world, big = 0;
    for (size_t k = 0; k < P; k++) big += sum[k] * sum[k];
    st->teardown(state);
    free(sum), free(g);
    /* Each replica's gradient is its shard's sum over the global batch: the mean over its shard is w times it. */
    return (expect_t){.small = w * w * local / w, .big = big, .one = one * w * w};
}

static double rel(double a, double b) { return fabs(a - b) / fabs(b); }

/* One measured step against expected(); then STEPS steps measuring every other step against STEPS plain ones. */
static void check(const char *strategy, int n, const int *devices, const idx_dataset_t *data) {
    const strategy_t *st = strategy_find(strategy);
    run_cfg_t cfg = config("lenet", MATH_FP32, DTYPE_FP32, n, devices, data, 0);
    expect_t e = expected(st, &cfg);
    cfg.optim.gns_every = 1;
    epoch_stats_t s;
    void *state = dp_test_train(st, &cfg, 1, &s);
    st->teardown(state);
    /* Sums of squares of ~6e4 fp32 gradients, in double on both sides: what differs is the order of the reduction's
     * fp32 adds (naive: GPU 0's kernel; nccl: the ring) and of the device's sums, ~1e-7 relative. */
    const double tol = 1e-5;
    EXPECT(s.gns_b_small == 32 && s.gns_b_big == 32 * n, "%s on %d: batches %d and %d", strategy, n, s.gns_b_small,
           s.gns_b_big);
    EXPECT(rel(s.gns_small_sq, e.small) < tol, "%s on %d GPUs: |G_small|^2 %.9g, expected %.9g (rel %.2e)", strategy, n,
           s.gns_small_sq, e.small, rel(s.gns_small_sq, e.small));
    EXPECT(rel(s.gns_big_sq, e.big) < tol, "%s on %d GPUs: |G_big|^2 %.9g, expected %.9g (rel %.2e)", strategy, n,
           s.gns_big_sq, e.big, rel(s.gns_big_sq, e.big));
    /* Controls: a missing world^2 / world factor, and one replica's gradient in place of the reduced one. */
    EXPECT(rel(s.gns_small_sq, e.small / n) > 100 * tol, "control: the unscaled local norm passes");
    EXPECT(rel(s.gns_big_sq, e.one) > 100 * tol, "control: one replica's norm passes for the reduced one");
    printf("%s on %d GPU%s (devices %d,%d..): |G_%d|^2 %.6g (expected %.6g, rel %.1e), |G_%d|^2 %.6g (expected "
           "%.6g, rel %.1e)\n", strategy, n, n == 1 ? "" : "s", devices[0], devices[1], s.gns_b_small, s.gns_small_sq,
           e.small, rel(s.gns_small_sq, e.small), s.gns_b_big, s.gns_big_sq, e.big, rel(s.gns_big_sq, e.big));

    /* Measuring changes nothing the step trains. */
    cfg.optim.gns_every = 2;
    state = dp_test_train(st, &cfg, STEPS, &s);
    float *with = dp_test_params(&((dp_t *)state)->reps[0]);
    int measured = ((dp_t *)state)->reps[0].gns_n;
    st->teardown(state);
    cfg.optim.gns_every = 0;
    epoch_stats_t plain;
    state = dp_test_train(st, &cfg, STEPS, &plain);
    float *without = dp_test_params(&((dp_t *)state)->reps[0]);
    size_t P = ((dp_t *)state)->reps[0].model.n_params;
    st->teardown(state);
    EXPECT(measured == STEPS / 2, "%s: %d measured steps of %d at every 2nd", strategy, measured, STEPS);
    EXPECT(dp_test_rel(with, without, P) <= dp_tol_fp32.params, "%s: measuring changed the parameters (rel %.2e)",
           strategy, dp_test_rel(with, without, P));
    EXPECT(plain.gns_small_sq < 0 && plain.gns_b_big < 0, "%s: a run that measures nothing reports a noise scale",
           strategy);
    free(with), free(without);
}

/* nccl with a bf16 wire under --math bf16 (the conv filters' gradients written straight into the wire) against the
 * same step with an fp32 wire: the local norms are of the bf16-rounded gradients, within bf16's rounding. */
static void check_wire(int n, const int *devices, const idx_dataset_t *data) {
    const strategy_t *st = strategy_find("nccl");
    epoch_stats_t a, b;
    run_cfg_t cfg = config("lenet", MATH_BF16, DTYPE_FP32, n, devices, data, 1);
    void *state = dp_test_train(st, &cfg, 1, &a);
    st->teardown(state);
    cfg.grad_dtype = DTYPE_BF16;
    state = dp_test_train(st, &cfg, 1, &b);
    st->teardown(state);
    /* Each element rounded to bf16 (relative 2^-9 at most, zero mean): a sum of squares moves by far less than 2^-7. */
    const double tol = 0.0078125;
    EXPECT(rel(b.gns_small_sq, a.gns_small_sq) < tol && rel(b.gns_big_sq, a.gns_big_sq) < tol,
           "nccl on %d, bf16 wire: |G_small|^2 %.6g against %.6g, |G_big|^2 %.6g against %.6g", n, b.gns_small_sq,
           a.gns_small_sq, b.gns_big_sq, a.gns_big_sq);
    printf("nccl on %d GPUs, --math bf16: bf16 wire |G|^2 %.6g / %.6g, fp32 wire %.6g / %.6g\n", n, b.gns_small_sq,
           b.gns_big_sq, a.gns_small_sq, a.gns_big_sq);
}

int main(void) {
    gpu_test_require(1);
    idx_dataset_t data;
    dp_test_load(&data, "mnist");
    int n_dev = 0;
    CHECK_CUDA(cudaGetDeviceCount(&n_dev));
    int two[2] = {0, n_dev > 1 ? 1 : 0};
    check("naive", 2, two, &data);
    if (n_dev < 2) {
        printf("nccl: skipped (NCCL needs a GPU per rank; %d present)\n", n_dev);
    } else {
        int counts[2], devices[4] = {0, 1, 2, 3};
        for (int c = 0, k = dp_test_counts(counts); c < k; c++) {
            check("nccl", counts[c], devices, &data);
            check_wire(counts[c], devices, &data);
        }
    }
    idx_free(&data);
    return test_summary();
}
