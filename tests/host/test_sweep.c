/* test_sweep.c — sweep expansion: the gpus x batch x lr x seed x math x grad dtype x micro-batches order and counts,
 * the weak and strong scaling arithmetic, and the rejection of a batch that does not split evenly (over GPUs or
 * micro-batches). */
#include "bench/sweep.h"
#include "test.h"

#include <string.h>

static int parse(options_t *o, const char *const *args) {
    char *argv[32] = {"scaling"};
    int argc = 1;
    for (; args[argc - 1]; argc++) argv[argc] = (char *)args[argc - 1];
    char err[256];
    int rc = options_parse(o, argc, argv, err, sizeof err);
    if (rc) fprintf(stderr, "parse: %s\n", err);
    return rc;
}

static void test_default_point(void) {
    options_t o;
    sweep_point_t *p;
    char err[256];
    EXPECT(parse(&o, (const char *const[]){NULL}) == 0, "defaults");
    int n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == 1, "default sweep has one run: %d (%s)", n, err);
    if (n == 1) {
        EXPECT(p[0].index == 0 && p[0].gpus == 1 && p[0].global_batch == 256 && p[0].per_gpu_batch == 256,
               "default point");
        EXPECT(p[0].lr == 0.1 && p[0].seed == 1, "default lr/seed");
    }
    free(p);
}

static void test_weak(void) {
    options_t o;
    sweep_point_t *p;
    char err[256];
    EXPECT(parse(&o, (const char *const[]){"--gpus", "1,2", NULL}) == 0, "parse");
    int n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == 2, "n %d", n);
    if (n == 2) {
        /* The brief's example: 1 GPU / 256 / 0.1 becomes 2 GPUs / 512 / 0.2. */
        EXPECT(p[0].gpus == 1 && p[0].global_batch == 256 && p[0].per_gpu_batch == 256 && p[0].lr == 0.1,
               "1 GPU: %d %d %g", p[0].global_batch, p[0].per_gpu_batch, p[0].lr);
        EXPECT(p[1].gpus == 2 && p[1].global_batch == 512 && p[1].per_gpu_batch == 256 && fabs(p[1].lr - 0.2) < 1e-15,
               "2 GPUs: %d %d %g", p[1].global_batch, p[1].per_gpu_batch, p[1].lr);
    }
    free(p);

    EXPECT(parse(&o, (const char *const[]){"--gpus", "1,2,4,8", "--batch", "32,64,128", "--lr", "0.01,0.1",
                                           "--seed", "1,2,3", NULL}) == 0, "parse");
    n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == 4 * 3 * 2 * 3, "count %d", n);
    /* Order: gpus outermost, then batch, lr, seed innermost. */
    int k = 0, order_ok = 1, math_ok = 1;
    for (int g = 0; g < 4; g++)
        for (int b = 0; b < 3; b++)
            for (int l = 0; l < 2; l++)
                for (int s = 0; s < 3; s++, k++) {
                    if (k >= n) { order_ok = 0; continue; }
                    const sweep_point_t *q = &p[k];
                    if (q->index != k || q->gpus != o.gpus[g] || q->seed != o.seeds[s]) order_ok = 0;
                    if (q->global_batch != o.batch[b] * o.gpus[g] || q->per_gpu_batch != o.batch[b] ||
                        fabs(q->lr - o.lr[l] * o.gpus[g]) > 1e-12) math_ok = 0;
                }
    EXPECT(order_ok, "gpus x batch x lr x seed order");
    EXPECT(math_ok, "weak: global = batch * gpus, lr * gpus, per-GPU batch fixed");
    free(p);
}

static void test_strong(void) {
    options_t o;
    sweep_point_t *p;
    char err[256];
    EXPECT(parse(&o, (const char *const[]){"--scale", "strong", "--gpus", "1,2,4", "--batch", "256",
                                           "--lr", "0.1", NULL}) == 0, "parse");
    int n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == 3, "n %d (%s)", n, err);
    for (int i = 0; i < n && i < 3; i++) {
        EXPECT(p[i].global_batch == 256, "strong keeps the global batch: %d", p[i].global_batch);
        EXPECT(p[i].per_gpu_batch == 256 / p[i].gpus, "per-GPU batch %d", p[i].per_gpu_batch);
        EXPECT(p[i].lr == 0.1, "strong keeps lr: %g", p[i].lr);
    }
    free(p);

    EXPECT(parse(&o, (const char *const[]){"--scale", "strong", "--gpus", "1,2,3", "--batch", "96,100",
                                           NULL}) == 0, "parse");
    n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == -1 && p == NULL, "indivisible strong batch rejected: %d", n);
    EXPECT(strstr(err, "--batch 100 is not divisible by 3 GPUs (strong scaling)") != NULL, "got '%s'", err);
    free(p);

    /* The same batch list is fine under weak scaling. */
    EXPECT(parse(&o, (const char *const[]){"--gpus", "1,2,3", "--batch", "96,100", NULL}) == 0, "parse");
    n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == 6 && p[5].global_batch == 300 && p[5].per_gpu_batch == 100, "weak 3 x 100: n %d", n);
    free(p);
}

static void test_bad_input(void) {
    options_t o;
    sweep_point_t *p;
    char err[256];
    EXPECT(parse(&o, (const char *const[]){NULL}) == 0, "parse");
    o.n_seeds = 0;
    EXPECT(sweep_expand(&o, &p, err, sizeof err) == -1 && strstr(err, "empty sweep"), "empty list: '%s'", err);
    EXPECT(parse(&o, (const char *const[]){"--gpus", "4", "--batch", "1000000000", NULL}) == 0, "parse");
    EXPECT(sweep_expand(&o, &p, err, sizeof err) == -1 && strstr(err, "overflows"), "overflow: '%s'", err);
}

/* Micro-batch counts are the innermost dimension, and each must divide every global batch of the sweep. */
static void test_micro_batches(void) {
    options_t o;
    sweep_point_t *p;
    char err[256];
    EXPECT(parse(&o, (const char *const[]){"--strategy", "pipeline", "--gpus", "2,4", "--batch", "1024", "--scale",
                                           "strong", "--micro-batches", "1,2,4,8,16", "--seed", "1,2", NULL}) == 0,
           "parse");
    int n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == 2 * 2 * 5, "count %d (%s)", n, err);
    int k = 0, ok = 1;
    for (int g = 0; g < 2; g++)
        for (int s = 0; s < 2; s++)
            for (int m = 0; m < 5; m++, k++)
                if (k >= n || p[k].index != k || p[k].gpus != o.gpus[g] || p[k].seed != o.seeds[s] ||
                    p[k].micro_batches != o.micro[m] || p[k].global_batch != 1024)
                    ok = 0;
    EXPECT(ok, "gpus x batch x lr x seed x micro-batches order");
    free(p);

    EXPECT(parse(&o, (const char *const[]){NULL}) == 0, "parse");
    n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == 1 && p[0].micro_batches == OPT_MICRO_AUTO, "default: micro-batches auto (other strategies ignore it)");
    free(p);

    /* Weak scaling: 100 x 3 GPUs = 300 is not divisible by 8. */
    EXPECT(parse(&o, (const char *const[]){"--strategy", "pipeline", "--gpus", "2,3", "--batch", "100",
                                           "--micro-batches", "4,8", NULL}) == 0, "parse");
    n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == -1 && p == NULL, "indivisible micro-batch count rejected: %d", n);
    EXPECT(strstr(err, "--micro-batches 8 does not divide the global batch 300 (3 GPUs, weak scaling)") != NULL,
           "got '%s'", err);
    free(p);
}

/* Math and grad dtype sit inside the seed and outside the micro-batches: one configuration's precisions run back to
 * back, each with every micro-batch count. */
static void test_precision_axes(void) {
    options_t o;
    sweep_point_t *p;
    char err[256];
    EXPECT(parse(&o, (const char *const[]){"--strategy", "nccl", "--gpus", "1,2", "--batch", "64,128", "--seed", "1,2",
                                           "--math", "tf32,bf16", "--grad-dtype", "fp32,bf16", NULL}) == 0, "parse");
    int n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == 2 * 2 * 2 * 2 * 2, "count %d (%s)", n, err);
    int k = 0, ok = 1;
    for (int g = 0; g < 2; g++)
        for (int b = 0; b < 2; b++)
            for (int s = 0; s < 2; s++)
                for (int m = 0; m < 2; m++)
                    for (int d = 0; d < 2; d++, k++)
                        if (k >= n || p[k].index != k || p[k].gpus != o.gpus[g] || p[k].per_gpu_batch != o.batch[b] ||
                            p[k].seed != o.seeds[s] || p[k].math != o.math[m] ||
                            p[k].grad_dtype != o.grad_dtype[d] || p[k].micro_batches != OPT_MICRO_AUTO)
                            ok = 0;
    EXPECT(ok, "gpus x batch x lr x seed x math x grad dtype order");
    /* The first four points: one configuration in every precision, tf32 before bf16 as listed. */
    EXPECT(n >= 4 && p[0].math == MATH_TF32 && p[0].grad_dtype == DTYPE_FP32 && p[1].math == MATH_TF32
           && p[1].grad_dtype == DTYPE_BF16 && p[2].math == MATH_BF16 && p[3].grad_dtype == DTYPE_BF16 &&
           p[3].seed == 1 && p[3].gpus == 1 && p[3].global_batch == 64, "first configuration's four precisions");
    free(p);

    EXPECT(parse(&o, (const char *const[]){"--strategy", "pipeline", "--gpus", "2", "--math", "bf16,fp32",
                                           "--micro-batches", "1,4", NULL}) == 0, "parse");
    n = sweep_expand(&o, &p, err, sizeof err);
    EXPECT(n == 4 && p[0].math == MATH_BF16 && p[0].micro_batches == 1 && p[1].micro_batches == 4 &&
           p[1].math == MATH_BF16 && p[2].math == MATH_FP32 && p[3].micro_batches == 4,
           "micro-batches innermost, inside the math: n %d", n);
    free(p);

    /* Seven full lists multiply past INT_MAX: refused, not wrapped around. */
    EXPECT(parse(&o, (const char *const[]){NULL}) == 0, "parse");
    o.n_gpus = o.n_batch = o.n_lr = o.n_seeds = o.n_math = o.n_grad_dtype = o.n_micro = OPT_LIST_MAX;
    for (int i = 0; i < OPT_LIST_MAX; i++) {
        o.gpus[i] = o.batch[i] = o.micro[i] = 1;
        o.lr[i] = 0.1;
        o.seeds[i] = 1;
        o.math[i] = MATH_TF32;
        o.grad_dtype[i] = DTYPE_FP32;
    }
    EXPECT(sweep_expand(&o, &p, err, sizeof err) == -1 && p == NULL &&
           strstr(err, "a sweep of 34359738368 runs is too many") != NULL, "got '%s'", err);
    o.n_math = 0;
    EXPECT(sweep_expand(&o, &p, err, sizeof err) == -1 && strstr(err, "empty sweep"), "no math: '%s'", err);
}

int main(void) {
    test_default_point();
    test_precision_axes();
    test_micro_batches();
    test_weak();
    test_strong();
    test_bad_input();
    return test_summary();
}
