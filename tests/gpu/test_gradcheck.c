/* test_gradcheck.c — finite-difference check of a whole small LeNet's gradients: the analytic gradient of the
 * mean cross-entropy from model_backward against central differences of the loss, in strict fp32 math. */
#include "gpu_test.h"
#include "../../engine/model.h"
#include "../../engine/check.h"
#include <string.h>
#include <time.h>

/* Mean loss over the batch for the current parameters (acc[0] is a double sum on the GPU). */
static double batch_loss(model_t *m, gpu_t *g) {
    CHECK_CUDA(cudaMemsetAsync(m->acc, 0, 2 * sizeof(double), g->stream));
    model_forward(m, g, 1);
    model_loss(m, g, m->batch, 1.0f / m->batch, 0);
    double h[2];
    CHECK_CUDA(cudaMemcpyAsync(h, m->acc, sizeof h, cudaMemcpyDeviceToHost, g->stream));
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    return h[0] / m->batch;
}

int main(void) {
    gpu_test_require(1);
    gpu_t g;
    gpu_init(&g, 0, MATH_FP32);
    model_t m;
    const int batch = 8;
    model_build_lenet(&m, batch);
    model_alloc(&m, &g);
    unsigned seed = (unsigned)time(NULL);
    printf("seed %u\n", seed);
    model_init_params(&m, INIT_XAVIER, seed);

    /* Fresh random images and labels. */
    size_t px = shape_numel(m.tensors[m.input].shape);
    gpu_fill_uniform(&g, m.tensors[m.input].val, px, seed, 0.0f, 1.0f);
    int labels[8];
    srand(seed);
    for (int i = 0; i < batch; i++) labels[i] = rand() % 10;
    CHECK_CUDA(cudaMemcpy(m.labels, labels, sizeof labels, cudaMemcpyHostToDevice));

    /* Analytic gradient. */
    CHECK_CUDA(cudaMemsetAsync(m.acc, 0, 2 * sizeof(double), g.stream));
    model_forward(&m, &g, 1);
    model_loss(&m, &g, batch, 1.0f / batch, 1);
    model_backward(&m, &g, 0.0f);
    float *grad = malloc(m.n_params * sizeof(float)), *p = malloc(m.n_params * sizeof(float));
    CHECK_CUDA(cudaStreamSynchronize(g.stream));
    CHECK_CUDA(cudaMemcpy(grad, m.grads, m.n_params * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(p, m.params, m.n_params * sizeof(float), cudaMemcpyDeviceToHost));

    /* Central differences on a sample of each layer's weights and biases. fp32 forward noise is ~1e-7 of the
     * loss, so h = 3e-3 keeps rounding noise near 1e-3 of the difference while ReLU/max-pool kinks crossed stay rare. */
    const float h = 3e-3f;
    for (int li = 0; li < m.n_layers; li++) {
        layer_t *l = &m.layers[li];
        if (!l->n_params) continue;
        double num = 0, den = 0;
        int samples = 24;
        for (int s = 0; s < samples; s++) {
            size_t k = l->param_offset + (s == 0 ? l->n_params - 1 : (size_t)rand() % l->n_params);
            float orig = p[k], v;
            v = orig + h; CHECK_CUDA(cudaMemcpy(m.params + k, &v, sizeof v, cudaMemcpyHostToDevice));
            double lp = batch_loss(&m, &g);
            v = orig - h; CHECK_CUDA(cudaMemcpy(m.params + k, &v, sizeof v, cudaMemcpyHostToDevice));
            double lm = batch_loss(&m, &g);
            CHECK_CUDA(cudaMemcpy(m.params + k, &orig, sizeof orig, cudaMemcpyHostToDevice));
            double fd = (lp - lm) / (2.0 * h);
            num += (fd - grad[k]) * (fd - grad[k]);
            den += fd * fd;
        }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        printf("%-8s %7zu params: relative error of sampled gradient %.2e\n", l->label, l->n_params, rel);
        EXPECT(rel < 2e-2, "layer %s gradient differs from finite differences: %.3e", l->label, rel);
        EXPECT(den > 0, "layer %s: finite differences all zero (a dead layer?)", l->label);
    }
    free(grad);
    free(p);
    model_free(&m);
    gpu_free(&g);
    return test_summary();
}
