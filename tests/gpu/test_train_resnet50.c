/* test_train_resnet50.c — ResNet-50 and ResNet-101 on the GPU: torchvision's parameter counts, a (2, 1000) output
 * that is finite, the stem initialised as torchvision's (Kaiming normal, fan-out); then ResNet-50 trained on
 * Fashion-MNIST resized to 96x96 (d2l's choice for its ResNet chapter), 2 epochs, batch 256, lr 0.1, in bf16 and
 * tf32: test accuracy must reach ACC_MIN. */
#include "train_common.h"
#include "../../engine/model.h"
#include "../../engine/check.h"
#include <string.h>

/* Measured on one H200 (results/imagenet-h200-2026-11-24): ours 0.867 (bf16) and 0.878 (tf32) after 2 epochs;
 * PyTorch on the same data, size, batch, lr, initialisation and epochs (tools/torch_fmnist_resnet.py, bf16 autocast)
 * 0.8465. One seed each: a from-scratch ResNet-50 after 2 epochs moves by a few points between seeds, so the bar
 * sits 2.65 points under PyTorch's value; a broken gradient stays near 0.1. */
#define ACC_MIN 0.82

static void check_model(const char *name, size_t want_params) {
    gpu_t g;
    gpu_init(&g, 0, MATH_BF16);
    model_t *m = calloc(1, sizeof *m);
    EXPECT(model_build(m, name, 2) == 0, "build %s", name);
    EXPECT(model_param_count(m) == want_params, "%s: %zu parameters, torchvision has %zu", name, model_param_count(m),
           want_params);
    EXPECT(model_alloc(m, &g) == 0, "%s: allocation at batch 2", name);
    model_init_params(m, INIT_KAIMING, 5);
    gpu_fill_uniform(&g, m->tensors[m->input].val, m->act_dtype, shape_numel(m->tensors[m->input].shape), 9, 0, 1);
    model_forward(m, &g, 0);
    shape_t s = m->tensors[m->logits].shape;
    size_t n = shape_numel(s);
    float *y = malloc(n * sizeof(float));
    unsigned short *y16 = malloc(n * sizeof *y16);
    CHECK_CUDA(cudaStreamSynchronize(g.stream));
    CHECK_CUDA(cudaMemcpy(y16, m->tensors[m->logits].val, n * sizeof *y16, cudaMemcpyDeviceToHost));
    int finite = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned u = (unsigned)y16[i] << 16;
        memcpy(&y[i], &u, sizeof u);
        finite &= isfinite(y[i]);
    }
    EXPECT(s.n == 2 && s.h == 1 && s.w == 1 && s.c == 1000 && finite, "%s: output (%d, %d, %d, %d), finite %d", name,
           s.n, s.h, s.w, s.c, finite);
    /* The stem's 64 x 7 x 7 x 3 weights: std sqrt(2 / (64 x 49)) = 0.0253 (fan-out). */
    const layer_t *stem = &m->layers[0];
    size_t nw = stem->n_params;
    float *w = malloc(nw * sizeof(float));
    CHECK_CUDA(cudaMemcpy(w, m->params + stem->param_offset, nw * sizeof(float), cudaMemcpyDeviceToHost));
    double sd = 0;
    for (size_t i = 0; i < nw; i++) sd += (double)w[i] * w[i];
    sd = sqrt(sd / nw);
    double want_sd = sqrt(2.0 / (64 * 49));
    printf("%s: %zu parameters, output (%d, %d), stem weight std %.5f (want %.5f)\n", name, model_param_count(m), s.n,
           s.c, sd, want_sd);
    EXPECT(fabs(sd / want_sd - 1) < 0.05, "%s: stem weight std %.5f, want %.5f", name, sd, want_sd);
    free(w);
    free(y);
    free(y16);
    model_free(m);
    free(m);
    gpu_free(&g);
}

int main(void) {
    gpu_test_require(1);
    check_model("resnet50", 25557032);
    check_model("resnet101", 44549160);
    const math_t maths[2] = {MATH_BF16, MATH_TF32};
    for (int i = 0; i < 2; i++) {
        double acc = train_accuracy_at("resnet50", "fashion-mnist", 96, 256, 0.1, INIT_KAIMING, 2, maths[i]);
        EXPECT(acc >= ACC_MIN, "ResNet-50/Fashion-MNIST at 96x96 (%s) test accuracy %.4f < %.2f after 2 epochs",
               gpu_math_name(maths[i]), acc, ACC_MIN);
    }
    return test_summary();
}
