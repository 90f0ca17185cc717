/* test_pipeline_backward_split.c — the zero-bubble pipeline's backward in two parts (layer.h backward_data and
 * backward_weight, model_backward_data_range then model_backward_weight_range) computes what the whole backward
 * computes: every parameter gradient and the input gradient of each model's second half, for LeNet, the d2l
 * ResNet-18 and a narrow ResNet-50 (convolutions, dense, batch norm, pooling, residual adds), in fp32, bf16 and
 * fp16, with the gradients overwritten (dw_beta 0) and accumulated (1). Gradients start as random noise each time, so a part
 * that is skipped or runs twice shows. Negative control: the data part alone leaves the weight gradients wrong. */
#include "dp_common.h"
#include "../../engine/model.h"
#include "fp16_ref.h"
#include <string.h>

#define N 8

typedef struct {
    model_t *m;
    gpu_t g;
    size_t n_params;
    int cut;            /* a tensor whose gradient the data part must produce: the input of the second half */
} net_t;

/* Runs forward, loss and the backward (whole, or in two parts with or without the weight part) from the same
 * inputs and starting gradients; returns the parameter gradients then the gradient of tensor `cut` (host, malloc'd). */
static float *grads_after(net_t *n, int mode, float dw_beta, size_t *len) {
    model_t *m = n->m;
    gpu_t *g = &n->g;
    size_t cut_n = shape_numel(m->tensors[n->cut].shape);
    gpu_fill_uniform(g, m->tensors[m->input].val, m->act_dtype, shape_numel(m->tensors[m->input].shape), 11u, -1, 1);
    gpu_fill_uniform(g, m->grads, DTYPE_FP32, n->n_params, 12u, -0.5f, 0.5f);
    int *labels = malloc(N * sizeof *labels);
    for (int i = 0; i < N; i++) labels[i] = (i * 7) % m->classes;
    CHECK_CUDA(cudaMemcpy(m->labels, labels, N * sizeof *labels, cudaMemcpyHostToDevice));
    free(labels);
    model_forward(m, g, 1);
    model_loss(m, g, N, 1.0f / N, 1);
    if (mode == 0) model_backward_range(m, g, 0, m->n_layers, dw_beta);
    else model_backward_data_range(m, g, 0, m->n_layers, dw_beta);
    if (mode == 1) model_backward_weight_range(m, g, 0, m->n_layers, dw_beta);
    *len = n->n_params + cut_n;
    float *h = malloc(*len * sizeof *h);
    void *cut = malloc(cut_n * dtype_size(m->act_dtype));
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    CHECK_CUDA(cudaMemcpy(h, m->grads, n->n_params * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(cut, m->tensors[n->cut].grad, cut_n * dtype_size(m->act_dtype), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < cut_n; i++) {
        if (m->act_dtype == DTYPE_FP32) { h[n->n_params + i] = ((float *)cut)[i]; continue; }
        const unsigned short v = ((unsigned short *)cut)[i];
        if (m->act_dtype == DTYPE_FP16) { h[n->n_params + i] = fp16_ref_widen(v); continue; }
        unsigned u = (unsigned)v << 16;   /* bf16: fp32's upper half */
        memcpy(&h[n->n_params + i], &u, sizeof u);
    }
    free(cut);
    return h;
}

static void check_model(const char *name, math_t math) {
    net_t n = {0};
    n.m = calloc(1, sizeof *n.m);
    gpu_init(&n.g, 0, math);
    if (strcmp(name, "resnet50-narrow") == 0) {
        static const int blocks[4] = {1, 1, 1, 1};
        model_build_bottleneck(n.m, "resnet50", N, (model_input_t){32, 3, 10}, blocks, 8);
    } else {
        model_build(n.m, name, N);
    }
    if (model_alloc(n.m, &n.g) != 0) { EXPECT(0, "%s: out of memory", name); return; }
    model_init_params(n.m, INIT_XAVIER, 7);
    n.n_params = n.m->n_params;
    n.cut = n.m->layers[n.m->n_layers / 2].in[0];
    for (int beta = 0; beta <= 1; beta++) {
        size_t len;
        float *whole = grads_after(&n, 0, (float)beta, &len);
        float *again = grads_after(&n, 0, (float)beta, &len);
        float *split = grads_after(&n, 1, (float)beta, &len);
        float *data_only = grads_after(&n, 2, (float)beta, &len);
        double noise = dp_test_rel(again, whole, len), e = dp_test_rel(split, whole, len);
        double e_params = dp_test_rel(split, whole, n.n_params);
        double e_cut = dp_test_rel(split + n.n_params, whole + n.n_params, len - n.n_params);
        double control = dp_test_rel(data_only, whole, n.n_params);
        printf("%-16s %s dw_beta %d: split vs whole %.3g (parameters %.3g, input gradient of layer %d %.3g), whole "
               "twice %.3g, data part alone %.3g\n", name, gpu_math_name(math), beta, e, e_params, n.m->n_layers / 2,
               e_cut, noise, control);
        /* The same kernels on the same data in another order: as exact as the whole backward run twice. */
        EXPECT(e <= noise + 1e-7, "%s %s dw_beta %d: split differs from whole by %.3g (run twice: %.3g)", name,
               gpu_math_name(math), beta, e, noise);
        EXPECT(control > 1e-2, "%s %s dw_beta %d: without the weight part the gradients still match (%.3g)", name,
               gpu_math_name(math), beta, control);
        free(whole); free(again); free(split); free(data_only);
    }
    model_free(n.m);
    gpu_free(&n.g);
    free(n.m);
}

int main(void) {
    gpu_test_require(1);
    static const char *const models[] = {"lenet", "resnet18", "resnet50-narrow"};
    static const math_t maths[] = {MATH_FP32, MATH_BF16, MATH_FP16};
    for (size_t k = 0; k < sizeof maths / sizeof maths[0]; k++)
        for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
            check_model(models[i], maths[k]);
    return test_summary();
}
