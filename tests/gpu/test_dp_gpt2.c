/* test_dp_gpt2.c — naive and nccl train GPT-2 as single does: after K steps of the tiny GPT-2 on random tokens, the
 * parameters of data-parallel training at global batch B equal single's at B (fp32: relative 1e-5, the update 1e-3;
 * bf16 within dp_common.h's bf16 bounds), on one GPU (one replica; nccl also in one-unit buckets, so backward runs in
 * pieces), with two replicas sharing GPU 0 (naive: its reduction really sums), and on 2 GPUs where present. A
 * negative control: single at half the batch is rejected by the same bounds. */
#include "dp_common.h"
#include "../../engine/tokens.h"

#define B 8
#define K 5
#define T 64

typedef struct {
    const char *strategy, *label;
    int n, same_gpu;            /* replicas; same_gpu: all on GPU 0 */
    size_t bucket_bytes;
    dtype_t wire;
} variant_t;

/* Trains st under cfg for K steps; its parameters (malloc'd) and the epoch's stats and held-out loss. */
static float *train(const strategy_t *st, const run_cfg_t *cfg, epoch_stats_t *s, double *held, size_t *n) {
    epoch_stats_init(s);
    void *state = dp_test_train(st, cfg, K, s);
    *n = st->params(state, NULL, 0);
    float *p = malloc(*n * sizeof(float));
    if (!p) { fprintf(stderr, "out of host memory\n"); exit(1); }
    st->params(state, p, *n);
    *held = st->evaluate(state);
    double again = st->evaluate(state);   /* the same parameters, the same windows: the same bits */
    EXPECT(again == *held, "%s: the held-out loss %.9g, then %.9g", st->info->name, *held, again);
    st->teardown(state);
    return p;
}

/* The update's and the parameters' distance from the reference's, checked against tol; 1 if within. */
static int check(const char *label, const float *p, const float *ref, const float *p0, size_t n, const dp_tol_t *tol,
                 double loss, double ref_loss) {
    float *d = malloc(n * sizeof(float)), *dref = malloc(n * sizeof(float));
    if (!d || !dref) { fprintf(stderr, "out of host memory\n"); exit(1); }
    for (size_t k = 0; k < n; k++) {
        d[k] = p[k] - p0[k];
        dref[k] = ref[k] - p0[k];
    }
    double ep = dp_test_rel(p, ref, n), eu = dp_test_rel(d, dref, n), el = fabs(loss - ref_loss) / fabs(ref_loss);
    int bitwise = memcmp(p, ref, n * sizeof(float)) == 0;
    printf("%-40s params %.3g, update %.3g, loss %.3g (bounds %.3g, %.3g, %.3g)%s\n", label, ep, eu, el, tol->params,
           tol->update, tol->loss, bitwise ? ", bit-identical" : "");
    free(d);
    free(dref);
    return ep <= tol->params && eu <= tol->update && el <= tol->loss;
}

int main(void) {
    gpu_test_require(1);
    int n_dev = 0;
    CHECK_CUDA(cudaGetDeviceCount(&n_dev));
    tokens_corpus_t corpus;
    tokens_corpus_synthetic(&corpus, T, 512, 7);
    idx_dataset_t data = {.corpus = &corpus};
    static const int same[2] = {0, 0}, two[2] = {0, 1};
    static const variant_t variants[] = {
        {"naive", "naive, 1 GPU", 1, 0, 0, DTYPE_FP32},
        {"nccl", "nccl, 1 GPU, one bucket", 1, 0, (size_t)25 << 20, DTYPE_FP32},
        {"nccl", "nccl, 1 GPU, a bucket per unit", 1, 0, 1, DTYPE_FP32},
        {"naive", "naive, 2 replicas on GPU 0", 2, 1, 0, DTYPE_FP32},
        {"naive", "naive, 2 GPUs", 2, 0, 0, DTYPE_FP32},
        {"nccl", "nccl, 2 GPUs, a bucket per unit", 2, 0, 1, DTYPE_FP32},
        {"naive", "naive, 1 GPU, bf16 wire", 1, 0, 0, DTYPE_BF16},
        {"nccl", "nccl, 1 GPU, bf16 wire", 1, 0, 1, DTYPE_BF16},
        {"naive", "naive, 2 replicas on GPU 0, bf16 wire", 2, 1, 0, DTYPE_BF16},
        {"nccl", "nccl, 2 GPUs, bf16 wire", 2, 0, 1, DTYPE_BF16},
    };
    const math_t maths[2] = {MATH_FP32, MATH_BF16};
    for (int mi = 0; mi < 2; mi++) {
        math_t math = maths[mi];
        const dp_tol_t *tol = math == MATH_FP32 ? &dp_tol_fp32 : &dp_tol_bf16;
        run_cfg_t cfg = {.model = "gpt2", .model_size = "tiny", .n_gpus = 1, .devices = two, .global_batch = B,
                         .lr = 1e-3, .weight_decay = 0.1, .optim = {.kind = OPTIM_ADAMW}, .math = math, .seed = 3,
                         .data = &data, .cuda_graph = 1};
        epoch_stats_t s;
        double ref_held, held;
        size_t n, n0;
        const strategy_t *single = strategy_find("single");
        void *st0 = dp_test_train(single, &cfg, 0, &s);
        n0 = single->params(st0, NULL, 0);
        float *p0 = malloc(n0 * sizeof(float));
        if (!p0) { fprintf(stderr, "out of host memory\n"); exit(1); }
        single->params(st0, p0, n0);
        single->teardown(st0);
        float *ref = train(single, &cfg, &s, &ref_held, &n);
        double ref_loss = s.train_loss;
        printf("%s: single at batch %d, %d steps: loss %.5f, held-out %.5f\n", math_name(math), B, K, ref_loss,
               ref_held);
        EXPECT(n == n0, "parameter counts %zu and %zu", n, n0);
        /* The control: training at half the batch (at step 0 the first shard's gradient alone) must fall outside
         * the bounds. */
        run_cfg_t half = cfg;
        half.global_batch = B / 2;
        float *ph = train(single, &half, &s, &held, &n);
        EXPECT(!check("control: single at half the batch", ph, ref, p0, n, tol, s.train_loss, ref_loss),
               "%s: the bounds accept one shard's gradient for the batch's", math_name(math));
        free(ph);
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            const variant_t *x = &variants[v];
            if ((x->wire == DTYPE_BF16) != (math == MATH_BF16)) continue;   /* bf16 wire under bf16 math */
            if (!x->same_gpu && x->n > n_dev) {
                printf("%-40s skipped: %d GPU(s) present\n", x->label, n_dev);
                continue;
            }
            run_cfg_t c = cfg;
            c.n_gpus = x->n;
            c.devices = x->same_gpu ? same : two;
            c.bucket_bytes = x->bucket_bytes;
            c.overlap = 1;
            c.grad_dtype = x->wire;
            float *p = train(strategy_find(x->strategy), &c, &s, &held, &n);
            char label[96];
            snprintf(label, sizeof label, "%s: %s", math_name(math), x->label);
            EXPECT(check(label, p, ref, p0, n, tol, s.train_loss, ref_loss), "%s: not single's training", label);
            EXPECT(fabs(held - ref_held) <= tol->loss * fabs(ref_held), "%s: held-out loss %.6f, single's %.6f",
                   label, held, ref_held);
            EXPECT(x->n == 1 || s.replicas_identical == 1, "%s: replicas differ (%d)", label, s.replicas_identical);
            EXPECT(s.train_acc < 0 && s.loss_scale < 0 && s.skipped_steps < 0 && s.steps == K,
                   "%s: accuracy %g, loss scale %g (%d skipped), steps %d in a language model's row", label,
                   s.train_acc, s.loss_scale, s.skipped_steps, s.steps);
            free(p);
        }
        free(ref);
        free(p0);
    }
    tokens_corpus_free(&corpus);
    return test_summary();
}
