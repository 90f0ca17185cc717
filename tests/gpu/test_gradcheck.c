/* test_gradcheck.c — finite-difference check of whole small networks' gradients (LeNet, and a narrow bottleneck
 * network of ResNet-50's builder): the analytic gradient of the mean cross-entropy from model_backward against
 * central differences of the loss, in strict fp32 math. */
#include "gpu_test.h"
#include "../../engine/model.h"
#include "../../engine/check.h"
#include <string.h>
#include <time.h>

enum { TOP = 16, RND = 8, N_PICK = TOP + RND, KEEP = N_PICK - N_PICK / 4 };

/* sqrt(sum err / sum g2) over the KEEP coordinates with the smallest err: a ReLU or max-pool kink crossed within
 * +-h spoils single coordinates, a wrong gradient spoils them all. (Single wrong elements are test_layers' job:
 * it compares every element of every layer with a CPU double-precision reference.) */
static double trimmed_rel(const double *err, const double *g2) {
    int used[N_PICK] = {0};
    double num = 0, den = 0;
    for (int k = 0; k < KEEP; k++) {
        int best = -1;
        for (int t = 0; t < N_PICK; t++)
            if (!used[t] && (best < 0 || err[t] < err[best])) best = t;
        used[best] = 1;
        num += err[best];
        den += g2[best];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* One parameter's value, in place before the next forward on the model's stream: a pageable copy may return before
 * it lands, and the non-blocking stream does not wait for the legacy one. */
static void set_param(model_t *m, size_t k, float v) {
    CHECK_CUDA(cudaMemcpy(m->params + k, &v, sizeof v, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());
}

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

enum { DRAWS = 5 };   /* independent draws of parameters, images and labels per network */

/* One draw: every parameterised layer of m (allocated) against central differences at parameters, images and
 * labels drawn from seed; layer li's relative error and its control's land in rel[li], ctrl[li]. */
/* A batch norm's scale and shift move a whole channel at once, so a step crosses many ReLU and max-pool kinks
 * together: its finite differences are noisier (measured on one H200, 2026-11-24, the median of 5 draws reached
 * 5.6e-2 for the narrow network's first batch norms, 3e-2 elsewhere; before set_param's synchronisation, which may
 * have added noise). It is judged at twice the tolerance with a control 25 % off (10 % elsewhere), so the check
 * rejects a batch-norm gradient 25 % wrong but may pass one 10-20 % wrong: the per-element check of batch norm is
 * test_layers' and test_bn_nhwc's, against the CPU double reference. */
static double gradcheck_tol(const layer_t *l) { return l->ops == &layer_bn_ops ? 1e-1 : 5e-2; }
static double gradcheck_control(const layer_t *l) { return l->ops == &layer_bn_ops ? 1.25 : 1.1; }

static void gradcheck_draw(model_t *m, gpu_t *g, init_t init, unsigned seed, double *rel, double *ctrl_rel) {
    const int batch = m->batch;
    model_init_params(m, init, seed);

    /* Fresh random images and labels. */
    size_t px = shape_numel(m->tensors[m->input].shape);
    gpu_fill_uniform(g, m->tensors[m->input].val, m->act_dtype, px, seed, 0.0f, 1.0f);
    int *labels = malloc((size_t)batch * sizeof(int));
    srand(seed);
    for (int i = 0; i < batch; i++) labels[i] = rand() % m->classes;
    CHECK_CUDA(cudaMemcpy(m->labels, labels, (size_t)batch * sizeof(int), cudaMemcpyHostToDevice));
    free(labels);
    /* model_init_params' memsets and the pageable copy above run on the legacy stream, which the model's
     * non-blocking stream does not wait for. */
    CHECK_CUDA(cudaDeviceSynchronize());

    /* Analytic gradient. */
    CHECK_CUDA(cudaMemsetAsync(m->acc, 0, 2 * sizeof(double), g->stream));
    model_forward(m, g, 1);
    model_loss(m, g, batch, 1.0f / batch, 1);
    model_backward(m, g, 0.0f);
    float *grad = malloc(m->n_params * sizeof(float)), *p = malloc(m->n_params * sizeof(float));
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    CHECK_CUDA(cudaMemcpy(grad, m->grads, m->n_params * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(p, m->params, m->n_params * sizeof(float), cudaMemcpyDeviceToHost));

    /* Central differences on each layer's 16 largest-gradient elements (where the difference of two fp32 losses
     * carries the most signal) plus 8 random ones. A finite difference has two error sources that move in
     * opposite directions with h: fp32 rounding of the loss (~1e-7 relative, amplified by 1/h) and ReLU/max-pool
     * kinks crossed within +-h (growing with h). So each layer is checked at three steps and judged at the best,
     * on the best three quarters of its coordinates (trimmed_rel); a wrong gradient is wrong at every h. */
    static const float hs[3] = {1e-2f, 3e-3f, 1e-3f};
    for (int li = 0; li < m->n_layers; li++) {
        layer_t *l = &m->layers[li];
        if (!l->n_params) continue;
        size_t pick[N_PICK];
        for (int t = 0; t < TOP; t++) {          /* top-|g| by repeated selection: n_params is small */
            size_t best = l->param_offset;
            float bv = -1.0f;
            for (size_t k = l->param_offset; k < l->param_offset + l->n_params; k++) {
                int taken = 0;
                for (int u = 0; u < t; u++) taken |= pick[u] == k;
                if (!taken && fabsf(grad[k]) > bv) { bv = fabsf(grad[k]); best = k; }
            }
            pick[t] = best;
        }
        for (int t = TOP; t < N_PICK; t++) pick[t] = l->param_offset + (size_t)rand() % l->n_params;
        double best_rel = INFINITY, best_ctrl = 0, cf = gradcheck_control(l);
        for (int hi = 0; hi < 3; hi++) {
            double err[N_PICK], ctrl[N_PICK], g2[N_PICK], den = 0;
            for (int t = 0; t < N_PICK; t++) {
                size_t k = pick[t];
                float orig = p[k];
                set_param(m, k, orig + hs[hi]);
                double lp = batch_loss(m, g);
                set_param(m, k, orig - hs[hi]);
                double lm = batch_loss(m, g);
                set_param(m, k, orig);
                double fd = (lp - lm) / (2.0 * hs[hi]);
                err[t] = (fd - grad[k]) * (fd - grad[k]);
                ctrl[t] = (fd - cf * grad[k]) * (fd - cf * grad[k]);   /* a gradient off by cf */
                g2[t] = (double)grad[k] * grad[k];
                den += g2[t];
            }
            double rel = trimmed_rel(err, g2);
            printf("%-8s %7zu params  h %.0e: relative error %.2e (control %.2e)\n", l->label, l->n_params, hs[hi],
                   rel, trimmed_rel(ctrl, g2));
            if (rel < best_rel) { best_rel = rel; best_ctrl = trimmed_rel(ctrl, g2); }
            EXPECT(den > 0, "layer %s: gradient all zero on the largest elements (a dead layer?)", l->label);
        }
        rel[li] = best_rel;
        ctrl_rel[li] = best_ctrl;
    }
    free(grad);
    free(p);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Checks every parameterised layer of m (built, not yet allocated) on g over DRAWS independent draws, each layer
 * judged on its median draw: a kink lands in some draws (measured on one H200, 2026-11-24, one draw per run: the
 * narrow network's first batch norms reached 0.06 to 0.19 in 9 of 16 runs), a wrong gradient in every one. */
static void gradcheck(model_t *m, gpu_t *g, init_t init, unsigned seed) {
    model_alloc(m, g);
    printf("# %s: %d layers, %zu parameters, %d draws\n", m->name, m->n_layers, model_param_count(m), DRAWS);
    double *rel = malloc((size_t)m->n_layers * DRAWS * sizeof(double)), *ctrl = malloc((size_t)m->n_layers * DRAWS *
                                                                                         sizeof(double));
    double r1[MODEL_MAX_LAYERS] = {0}, c1[MODEL_MAX_LAYERS] = {0};   /* layers without parameters stay 0 */
    for (int d = 0; d < DRAWS; d++) {
        printf("# draw %d (seed %u)\n", d, seed + 7919u * d);
        gradcheck_draw(m, g, init, seed + 7919u * d, r1, c1);
        for (int li = 0; li < m->n_layers; li++) {
            rel[li * DRAWS + d] = r1[li];
            ctrl[li * DRAWS + d] = c1[li];
        }
    }
    for (int li = 0; li < m->n_layers; li++) {
        const layer_t *l = &m->layers[li];
        if (!l->n_params) continue;
        qsort(rel + li * DRAWS, DRAWS, sizeof(double), cmp_double);
        qsort(ctrl + li * DRAWS, DRAWS, sizeof(double), cmp_double);
        double mr = rel[li * DRAWS + DRAWS / 2], mc = ctrl[li * DRAWS + DRAWS / 2];
        printf("%-14s median over draws: relative error %.2e (control %.2e), worst draw %.2e\n", l->label, mr, mc,
               rel[li * DRAWS + DRAWS - 1]);
        /* 5e-2 (gradcheck_tol): measured fp32 LeNet errors were 2-3e-2 at the best h over all coordinates, and once
         * 6.9e-2 (fc1, 2 x H200, 2026-11-22), which the trimming and the median are for. The control shows the same
         * comparison rejects a gradient 10% off (25% for batch norm), so the tolerance still discriminates. */
        double tol = gradcheck_tol(l);
        EXPECT(mr < tol, "layer %s gradient differs from finite differences: median %.3e", l->label, mr);
        EXPECT(mc > tol, "layer %s: control (gradient x %.2f) not rejected: median %.3e", l->label,
               gradcheck_control(l), mc);
    }
    free(rel);
    free(ctrl);
    model_free(m);
}

int main(int argc, char **argv) {
    gpu_test_require(1);
    gpu_t g;
    gpu_init(&g, 0, MATH_FP32);
    unsigned seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : (unsigned)time(NULL);
    printf("seed %u (rerun: test_gradcheck %u)\n", seed, seed);
    model_t *m = calloc(1, sizeof *m);   /* ~100 KB: not on the stack */
    model_build_lenet(m, 8, (model_input_t){28, 1, 10});
    gradcheck(m, &g, INIT_XAVIER, seed);
    /* A narrow bottleneck network: ResNet-50's builder with one block per stage, 4 bottleneck channels, on 3x32x32
     * inputs (the last stage on 1x1 maps, its batch norm over the batch of 8): stem, max-pool, all four kinds of
     * block (projection with and without stride), gap and fc, each parameter block checked. */
    static const int blocks[4] = {1, 1, 1, 1};
    model_build_bottleneck(m, "narrow-resnet", 8, (model_input_t){32, 3, 10}, blocks, 4);
    gradcheck(m, &g, INIT_KAIMING, seed + 1);
    free(m);
    gpu_free(&g);
    return test_summary();
}
