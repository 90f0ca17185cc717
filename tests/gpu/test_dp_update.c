/* test_dp_update.c — where nccl's update runs and how bf16 gradients reach the wire change no bit of what it trains,
 * on 2 and min(4, present) GPUs. Against today's path (SCALING_DP_UPDATE=step: one SGD over the whole buffer after
 * every all-reduce; SCALING_WGRAD=widen: bf16 weight gradients widened into fp32 by backward, cast back by the
 * reduction), after K steps:
 * - SGD per bucket, each slice on the comm stream right after its all-reduce (the default): parameters and momentum
 *   bit-identical on every replica (LeNet in fp32 and in bf16 with a bf16 wire, ResNet-18 in bf16 with many
 *   buckets, so that a batch norm and the convolution whose bias it folds fall in different buckets);
 * - with a bf16 wire under --math bf16 (an fp16 wire under fp16), cuDNN's 2-byte weight gradients written straight
 *   into the wire (the default): bit-identical too (a 2-byte value widened to fp32 rounds back to itself; fp16's
 *   loss scale and skip decisions alike, SGD then always after the last bucket), and the path is the one that ran: the
 *   fp32 gradients of the bound weights, set to a NaN pattern before the first step, are never written (so the
 *   cast never read them: a NaN would have reached every parameter), where the widening path overwrites them.
 * - single on one GPU under --math bf16 and fp16, the convolutions' 2-byte filter gradients read by the update beside
 *   the fp32 ones (SCALING_WGRAD=direct, the default) against widened into them (widen): bit-identical (fp16's loss
 *   scale checks both buffers), and the path is the one that ran: the fp32 gradients of the bound weights stay the
 *   zero the binding set (the update adds the two buffers, so anything else there would reach the parameters), where
 *   the widening path writes them; ResNet-18 also through CUDA graphs (the update segment captured and replayed).
 * Negative control: every layer's parameters moved in the last step (compared with the step before), so a bucket
 * whose update were skipped, or ran before its all-reduce, would differ. Algorithms come from one --conv-cache file
 * and batch norm runs our deterministic kernels, so the runs differ only in what is under test. */
#include "dp_common.h"
#include <stdint.h>

#define K 4

typedef struct {
    const char *model;
    math_t math;
    dtype_t wire;
    size_t bucket_bytes;
    int graph;                      /* 1: the steps through CUDA graphs (--cuda-graph on), captured and replayed */
} case_t;

typedef struct {
    int n;
    size_t P;
    float *params[DP_MAX_GPUS], *momentum[DP_MAX_GPUS];
    float *before_last;             /* replica 0's parameters before the last step */
    int bound_layers;               /* layers whose weight gradients backward wrote into the wire */
    int sentinel_kept, sentinel_total;   /* bound (or, widening, boundable) layers whose fp32 gradients kept the NaN */
    int zero_kept;                  /* single: boundable layers whose fp32 gradients are all zero bits */
} result_t;

static float *download(const replica_t *r, const float *dev, size_t n) {
    float *h = malloc((n ? n : 1) * sizeof(float));
    if (!h) { fprintf(stderr, "out of host memory\n"); exit(1); }
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(h, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
}

/* The fp32 gradients of every weight cuDNN computes in a 2-byte type (layer_conv_lp_grads), all bits set (a NaN). */
static void fill_sentinel(replica_t *r) {
    model_t *m = &r->model;
    CHECK_CUDA(cudaSetDevice(r->gpu.device));
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        size_t lp = l->ops == &layer_conv_ops ? layer_conv_lp_grads(l) : 0;
        if (lp) CHECK_CUDA(cudaMemset(m->grads + l->param_offset, 0xff, lp * sizeof(float)));
    }
    CHECK_CUDA(cudaDeviceSynchronize());
}

static void count_sentinel(const replica_t *r, result_t *res) {
    const model_t *m = &r->model;
    float *g = download(r, m->grads, m->n_params);
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        size_t lp = l->ops == &layer_conv_ops ? layer_conv_lp_grads(l) : 0;
        if (!lp) continue;
        const uint32_t *b = (const uint32_t *)(g + l->param_offset);
        size_t kept = 0, zero = 0;
        for (size_t k = 0; k < lp; k++) {
            kept += b[k] == 0xffffffffu;
            zero += b[k] == 0;
        }
        res->sentinel_total++;
        res->sentinel_kept += kept == lp;
        res->zero_kept += zero == lp;
        res->bound_layers += l->dw_lp != NULL;
    }
    free(g);
}

/* K steps of nccl on n GPUs, or of single (n = 1: its replica is its state, and no sentinel: see the header). */
static result_t run(const case_t *c, int n, const char *update, const char *wgrad, const char *cache,
                    const idx_dataset_t *data) {
    setenv("SCALING_DP_UPDATE", update, 1);
    setenv("SCALING_WGRAD", wgrad, 1);
    int devices[4] = {0, 1, 2, 3};
    run_cfg_t cfg = {.model = c->model, .n_gpus = n, .devices = devices, .global_batch = 32 * n, .lr = 0.05,
                     .momentum = 0.9, .weight_decay = 5e-4, .math = c->math,
                     .init = strcmp(c->model, "lenet") == 0 ? INIT_XAVIER : INIT_NORMAL, .seed = 5, .data = data,
                     .conv_cache = cache, .bucket_bytes = c->bucket_bytes, .overlap = 1, .grad_dtype = c->wire,
                     .cuda_graph = c->graph};
    const strategy_t *st = strategy_find(n == 1 ? "single" : "nccl");
    void *state = dp_test_train(st, &cfg, 0, NULL);
    replica_t *reps = n == 1 ? (replica_t *)state : ((dp_t *)state)->reps;
    result_t res = {.n = n, .P = reps[0].model.n_params};
    for (int i = 0; i < n && n > 1; i++) fill_sentinel(&reps[i]);
    epoch_stats_t s = {0};
    st->epoch_begin(state, 1);
    for (int t = 0; t < K; t++) {
        if (t == K - 1) res.before_last = download(&reps[0], reps[0].model.params, res.P);
        st->train_step(state, t);
    }
    st->epoch_end(state, K, &s);
    EXPECT((n == 1 || s.replicas_identical == 1) && isfinite(s.train_loss), "%s, %s %s: replicas %d, loss %g",
           c->model, update, wgrad, s.replicas_identical, s.train_loss);
    for (int i = 0; i < n; i++) {
        res.params[i] = download(&reps[i], reps[i].model.params, res.P);
        res.momentum[i] = download(&reps[i], reps[i].model.momentum, res.P);
    }
    count_sentinel(&reps[0], &res);
    st->teardown(state);
    return res;
}

static void result_free(result_t *r) {
    for (int i = 0; i < r->n; i++) {
        free(r->params[i]);
        free(r->momentum[i]);
    }
    free(r->before_last);
}

/* Elements of a that differ bitwise from b; the first one in *first. */
static size_t bit_diff(const float *a, const float *b, size_t n, size_t *first) {
    size_t d = 0;
    *first = n;
    for (size_t k = 0; k < n; k++)
        if (memcmp(&a[k], &b[k], sizeof(float)) != 0) {
            if (!d) *first = k;
            d++;
        }
    return d;
}

/* Returns the replicas that differ. */
static int expect_same(const char *what, const result_t *ref, const result_t *got) {
    int bad = 0;
    for (int i = 0; i < ref->n; i++) {
        size_t first, dp_ = bit_diff(got->params[i], ref->params[i], ref->P, &first);
        size_t fm, dm = bit_diff(got->momentum[i], ref->momentum[i], ref->P, &fm);
        EXPECT(dp_ == 0 && dm == 0, "%s, replica %d: %zu parameters (first %zu: %.9g vs %.9g) and %zu momenta differ "
               "from today's path", what, i, dp_, first, first < ref->P ? got->params[i][first] : 0.0,
               first < ref->P ? ref->params[i][first] : 0.0, dm);
        bad += dp_ != 0 || dm != 0;
    }
    return bad;
}

/* The negative control: each layer's parameters moved in the last step (a skipped slice would not have). */
static void expect_all_moved(const char *what, const result_t *r, const model_t *shape) {
    int still = 0;
    for (int i = 0; i < shape->n_layers; i++) {
        const layer_t *l = &shape->layers[i];
        if (!l->n_params) continue;
        size_t first;
        if (bit_diff(r->params[0] + l->param_offset, r->before_last + l->param_offset, l->n_params, &first) == 0) {
            printf("  %s: layer %s did not move in the last step\n", what, l->label);
            still++;
        }
    }
    EXPECT(still == 0, "%s: %d layers' parameters did not change in the last step: the comparison could not see a "
           "skipped update", what, still);
}

static void check(const case_t *c, int n, const char *cache, const idx_dataset_t *data) {
    char what[128];
    snprintf(what, sizeof what, "%s %s, %s wire, %d GPUs", c->model, gpu_math_name(c->math), dtype_name(c->wire), n);
    model_t *shape = malloc(sizeof *shape);
    if (!shape || model_build_input(shape, c->model, 32, model_input_of(data)) != 0) {
        fprintf(stderr, "FAIL: cannot build %s\n", c->model);
        exit(1);
    }
    result_t ref = run(c, n, "step", "widen", cache, data);
    result_t per = run(c, n, "bucket", "widen", cache, data);
    expect_all_moved(what, &ref, shape);
    int bad = expect_same(what, &ref, &per);
    printf("%-36s SGD per bucket: %s\n", what, bad ? "DIFFERS" : "bit-identical");
    int lp = dtype_is_low(c->wire) && c->wire == math_act_dtype(c->math);
    if (lp) {
        result_t direct = run(c, n, "bucket", "direct", cache, data);
        char w2[192];
        snprintf(w2, sizeof w2, "%s, weight gradients straight into the wire", what);
        bad = expect_same(w2, &ref, &direct);
        printf("%-36s 2-byte weight gradients into the wire: %s; %d layers bound, %d of %d kept the NaN (widening: "
               "%d)\n", what, bad ? "DIFFERS" : "bit-identical", direct.bound_layers, direct.sentinel_kept,
               direct.sentinel_total, ref.sentinel_kept);
        EXPECT(direct.bound_layers > 0 && direct.bound_layers == direct.sentinel_total,
               "%s: %d of %d 2-byte convolutions bound to the wire", w2, direct.bound_layers, direct.sentinel_total);
        EXPECT(direct.sentinel_kept == direct.sentinel_total, "%s: %d of %d bound layers' fp32 gradients were written",
               w2, direct.sentinel_total - direct.sentinel_kept, direct.sentinel_total);
        /* The control of that check: the widening path writes them. */
        EXPECT(ref.sentinel_total > 0 && ref.sentinel_kept == 0 && ref.bound_layers == 0,
               "%s: widening left %d of %d layers' fp32 gradients unwritten (%d bound)", what, ref.sentinel_kept,
               ref.sentinel_total, ref.bound_layers);
        result_free(&direct);
    }
    result_free(&ref);
    result_free(&per);
    free(shape);
}

/* single: the update reading the 2-byte filter gradients beside the fp32 ones against their widening. */
static void check_single(const case_t *c, const char *cache, const idx_dataset_t *data) {
    char what[128];
    snprintf(what, sizeof what, "%s %s, single%s", c->model, gpu_math_name(c->math), c->graph ? ", graphs" : "");
    model_t *shape = malloc(sizeof *shape);
    if (!shape || model_build_input(shape, c->model, 32, model_input_of(data)) != 0) {
        fprintf(stderr, "FAIL: cannot build %s\n", c->model);
        exit(1);
    }
    result_t ref = run(c, 1, "step", "widen", cache, data), direct = run(c, 1, "step", "direct", cache, data);
    expect_all_moved(what, &ref, shape);
    int bad = expect_same(what, &ref, &direct);
    printf("%-36s 2-byte filter gradients read beside the fp32 ones: %s; %d of %d layers bound, fp32 gradients "
           "untouched in %d (widening: %d)\n", what, bad ? "DIFFERS" : "bit-identical", direct.bound_layers,
           direct.sentinel_total, direct.zero_kept, ref.zero_kept);
    EXPECT(direct.sentinel_total > 0 && direct.bound_layers == direct.sentinel_total &&
           direct.zero_kept == direct.sentinel_total, "%s: %d of %d 2-byte convolutions bound, %d with fp32 gradients "
           "untouched", what, direct.bound_layers, direct.sentinel_total, direct.zero_kept);
    EXPECT(ref.bound_layers == 0 && ref.zero_kept == 0, "%s: widening bound %d layers and left %d layers' fp32 "
           "gradients zero", what, ref.bound_layers, ref.zero_kept);
    result_free(&ref);
    result_free(&direct);
    free(shape);
}

int main(void) {
    gpu_test_require(1);
    idx_dataset_t data;
    dp_test_load(&data, "mnist");
    setenv("SCALING_BN", "own", 1);   /* deterministic batch-norm kernels: runs differ only in what is tested */
    char dir[] = "/tmp/test_dp_update_XXXXXX", cache[64];
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    snprintf(cache, sizeof cache, "%s/conv.tsv", dir);
    static const case_t cases[] = {
        {"lenet", MATH_FP32, DTYPE_FP32, (size_t)64 << 10, 0},     /* LeNet in 4 buckets */
        {"lenet", MATH_BF16, DTYPE_BF16, (size_t)64 << 10, 0},
        {"resnet18", MATH_BF16, DTYPE_BF16, (size_t)1 << 20, 0},   /* dozens of buckets */
        {"lenet", MATH_FP16, DTYPE_FP16, (size_t)64 << 10, 0},     /* loss-scaled: SGD after the last bucket */
    };
    static const case_t singles[] = {{"lenet", MATH_BF16, DTYPE_FP32, 0, 0}, {"resnet18", MATH_BF16, DTYPE_FP32, 0, 0},
                                     {"lenet", MATH_FP16, DTYPE_FP32, 0, 0}, {"resnet18", MATH_BF16, DTYPE_FP32, 0, 1}};
    for (size_t c = 0; c < sizeof singles / sizeof singles[0]; c++) check_single(&singles[c], cache, &data);
    int n_dev = 0, counts[2], n_counts = 0;
    CHECK_CUDA(cudaGetDeviceCount(&n_dev));
    if (n_dev >= 2) n_counts = dp_test_counts(counts);
    else printf("note: 1 GPU: nccl's cases need 2\n");
    for (int k = 0; k < n_counts; k++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) check(&cases[c], counts[k], cache, &data);
    unlink(cache);
    rmdir(dir);
    idx_free(&data);
    return test_summary();
}
