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

int main(void) {
    gpu_test_require(1);
    int n_dev;
    tokens_corpus_t corpus;
    idx_dataset_t data = dp_test_lm_data(&corpus, T, &n_dev);
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
        dp_lm_ref_t r = dp_test_lm_reference(math, &data, two, B, K);
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            const variant_t *x = &variants[v];
            if ((x->wire == DTYPE_BF16) != (math == MATH_BF16)) continue;   /* bf16 wire under bf16 math */
            if (!x->same_gpu && x->n > n_dev) {
                printf("%-40s skipped: %d GPU(s) present\n", x->label, n_dev);
                continue;
            }
            run_cfg_t c = r.cfg;
            c.n_gpus = x->n;
            c.devices = x->same_gpu ? same : two;
            c.bucket_bytes = x->bucket_bytes;
            c.overlap = 1;
            c.grad_dtype = x->wire;
            epoch_stats_t s;
            double held;
            size_t n;
            float *p = dp_test_lm(strategy_find(x->strategy), &c, K, &s, &held, &n);
            char label[96];
            snprintf(label, sizeof label, "%s: %s", math_name(math), x->label);
            EXPECT(dp_test_lm_near(&r, label, p, n, s.train_loss, held), "%s: not single's training", label);
            EXPECT(x->n == 1 || s.replicas_identical == 1, "%s: replicas differ (%d)", label, s.replicas_identical);
            EXPECT(s.train_acc < 0 && s.loss_scale < 0 && s.skipped_steps < 0 && s.steps == K,
                   "%s: accuracy %g, loss scale %g (%d skipped), steps %d in a language model's row", label,
                   s.train_acc, s.loss_scale, s.skipped_steps, s.steps);
            free(p);
        }
        dp_test_lm_reference_free(&r);
    }
    tokens_corpus_free(&corpus);
    return test_summary();
}
