/* test_bias_fold.c — skipping the biases that batch norm makes redundant changes nothing: ResNet-18 with its
 * convolution biases DEAD / FOLDED (model_end) against the same model adding every bias, in strict fp32.
 * Training-mode forward and backward on random non-zero biases; a model that drops the folded bias is the control. */
#include "gpu_test.h"
#include "../../engine/model.h"
#include "../../engine/check.h"
#include <string.h>
#include <time.h>

enum { BATCH = 8, VARIANTS = 3 };
enum { FOLDED_AS_BUILT, ALL_ADDED, FOLD_DROPPED };

typedef struct {
    float *logits, *grads;
} result_t;

/* One training forward + backward of variant v on the given parameters, images and labels. */
static result_t run_variant(gpu_t *g, int v, const float *params, const float *images, const int *labels) {
    model_t *m = calloc(1, sizeof *m);
    if (!m) { fprintf(stderr, "out of host memory\n"); exit(1); }
    model_build(m, "resnet18", BATCH);
    for (int i = 0; i < m->n_layers; i++) {
        layer_t *l = &m->layers[i];
        if (v == ALL_ADDED) { l->bias_use = BIAS_ADD; l->fold_from = 0; }
        if (v == FOLD_DROPPED) l->fold_from = 0;   /* the conv still skips its bias: it is lost */
    }
    model_alloc(m, g);
    model_init_params(m, INIT_NORMAL, 1);
    CHECK_CUDA(cudaMemcpy(m->params, params, m->n_params * sizeof(float), cudaMemcpyHostToDevice));
    size_t px = shape_numel(m->tensors[m->input].shape);
    CHECK_CUDA(cudaMemcpy(m->tensors[m->input].val, images, px * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(m->labels, labels, BATCH * sizeof(int), cudaMemcpyHostToDevice));
    model_forward(m, g, 1);
    model_loss(m, g, BATCH, 1.0f / BATCH, 1);
    model_backward(m, g, 0.0f);
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    result_t r = {malloc(BATCH * 10 * sizeof(float)), malloc(m->n_params * sizeof(float))};
    CHECK_CUDA(cudaMemcpy(r.logits, m->tensors[m->logits].val, BATCH * 10 * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(r.grads, m->grads, m->n_params * sizeof(float), cudaMemcpyDeviceToHost));
    model_free(m);
    free(m);
    return r;
}

static double rel(const float *a, const float *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The three variants under g's batch-norm implementation, compared (bn: its name, for the lines printed). */
static void compare(gpu_t *g, const model_t *m, const float *params, const float *images, const int *labels,
                    const char *bn) {
    printf("# batch norm: %s\n", bn);
    result_t r[VARIANTS];
    for (int v = 0; v < VARIANTS; v++) r[v] = run_variant(g, v, params, images, labels);

    /* Logits, and every gradient except the dead biases' (0 here, rounding noise where added). */
    double e_logits = rel(r[FOLDED_AS_BUILT].logits, r[ALL_ADDED].logits, BATCH * 10);
    double e_ctrl = rel(r[FOLD_DROPPED].logits, r[ALL_ADDED].logits, BATCH * 10);
    /* Gradients: every layer's, the dead biases' apart (exactly 0 here, rounding noise where added), the folded
     * biases' on their own (they are the shift's gradient here, their own where added). */
    double worst = 0, worst_fold = 0, dead_ratio = 0, num = 0, den = 0;
    const char *worst_at = "";
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        if (!l->n_params) continue;
        size_t nb = l->ops == &layer_conv_ops && l->cfg.bias ? (size_t)l->cfg.cout : 0;
        size_t nw = l->n_params - nb;
        const float *a = r[FOLDED_AS_BUILT].grads + l->param_offset, *b = r[ALL_ADDED].grads + l->param_offset;
        double e = rel(a, b, nw);
        if (e > worst) { worst = e; worst_at = l->label; }
        for (size_t k = 0; k < nw; k++) { num += ((double)a[k] - b[k]) * ((double)a[k] - b[k]); den += (double)b[k] * b[k]; }
        if (l->bias_use == BIAS_FOLDED && rel(a + nw, b + nw, nb) > worst_fold) worst_fold = rel(a + nw, b + nw, nb);
        if (l->bias_use == BIAS_DEAD) {
            int zero = 1;
            for (size_t k = nw; k < l->n_params; k++) zero &= a[k] == 0.0f;
            EXPECT(zero, "%s: a dead bias has a non-zero gradient", l->label);
            double gw = 0, gb = 0;
            for (size_t k = 0; k < nw; k++) gw += (double)b[k] * b[k];
            for (size_t k = nw; k < l->n_params; k++) gb += (double)b[k] * b[k];
            if (gw > 0 && sqrt(gb / gw) > dead_ratio) dead_ratio = sqrt(gb / gw);
        }
    }
    double whole = den > 0 ? sqrt(num / den) : sqrt(num);
    /* The control for gradients: the model that drops the fold leaves its folded biases' gradients as they were set
     * up (0); compared with the reference they must be far off. */
    double fold_ctrl = 0;
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        if (l->bias_use != BIAS_FOLDED) continue;
        size_t b0 = l->param_offset + l->n_params - (size_t)l->cfg.cout;
        double e = rel(r[FOLD_DROPPED].grads + b0, r[ALL_ADDED].grads + b0, (size_t)l->cfg.cout);
        if (e > fold_ctrl) fold_ctrl = e;
    }
    printf("logits: relative difference %.2e (control without the folded bias %.2e)\n", e_logits, e_ctrl);
    printf("gradients: all weights %.2e, worst layer %.2e (%s), folded biases %.2e (control %.2e); |db|/|dw| of the "
           "added dead biases %.2e\n", whole, worst, worst_at, worst_fold, fold_ctrl, dead_ratio);
    /* fp32 through 20 convolutions and 17 batch norms: the logits agree to rounding (measured 2e-6 on an H200). A
     * gradient also crosses ReLU kinks, and a pre-activation within rounding of 0 takes the other side in one of the
     * two models: at batch 8 such flips moved the whole gradient by up to 1.4e-2 (one layer 1.7e-2) between seeds
     * while the logits agreed to 2e-6. So gradients are held to 5e-2; a missing fold or a wrong shift moves the
     * logits by 0.2 and the folded biases' gradients by 1 (the controls). */
    EXPECT(e_logits < 1e-4, "logits differ: %.3e", e_logits);
    EXPECT(whole < 5e-2, "gradients differ: %.3e over all weights", whole);
    EXPECT(worst < 5e-2, "gradients differ: worst layer %s %.3e", worst_at, worst);
    EXPECT(worst_fold < 5e-2, "folded bias gradients differ: %.3e", worst_fold);
    EXPECT(dead_ratio < 1e-3, "a dead bias's gradient is not negligible where added: %.3e", dead_ratio);
    EXPECT(e_ctrl > 1e-2, "control: dropping the folded biases changed the logits by only %.3e", e_ctrl);
    EXPECT(fold_ctrl > 5e-1, "control: zero folded-bias gradients within the tolerance (%.3e)", fold_ctrl);
    for (int v = 0; v < VARIANTS; v++) { free(r[v].logits); free(r[v].grads); }
}

int main(void) {
    gpu_test_require(1);
    gpu_t g;
    gpu_init(&g, 0, MATH_FP32);
    unsigned seed = (unsigned)time(NULL);
    printf("seed %u\n", seed);
    srand(seed);

    /* Parameters as initialised, then every convolution bias drawn non-zero (they start at 0, which would make the
     * comparison vacuous). */
    model_t *m = calloc(1, sizeof *m);
    model_build(m, "resnet18", BATCH);
    model_alloc(m, &g);
    model_init_params(m, INIT_NORMAL, seed);
    float *params = malloc(m->n_params * sizeof(float));
    CHECK_CUDA(cudaMemcpy(params, m->params, m->n_params * sizeof(float), cudaMemcpyDeviceToHost));
    int dead = 0, folded = 0;
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        if (l->ops != &layer_conv_ops || !l->cfg.bias) continue;
        dead += l->bias_use == BIAS_DEAD;
        folded += l->bias_use == BIAS_FOLDED;
        /* A dead bias where it is added shifts the values batch norm then centres: an offset much larger than the
         * convolution's output (~0.02 at the stem under Normal(0.01) weights) costs the reference fp32 digits in
         * its variance, so the dead biases stay at that scale; the folded ones never enter a variance. */
        float scale = l->bias_use == BIAS_DEAD ? 0.02f : 1.0f;
        size_t b = l->param_offset + l->n_params - (size_t)l->cfg.cout;
        for (int k = 0; k < l->cfg.cout; k++) params[b + k] = scale * ((float)rand() / RAND_MAX - 0.5f);
    }
    /* d2l's ResNet-18: the stem and 16 block convolutions feed batch norm; the 3 projections feed the residual add. */
    EXPECT(dead == 17 && folded == 3, "bias roles: %d dead, %d folded (want 17 and 3)", dead, folded);
    size_t px = shape_numel(m->tensors[m->input].shape);
    float *images = malloc(px * sizeof(float));
    for (size_t i = 0; i < px; i++) images[i] = (float)rand() / RAND_MAX;
    int labels[BATCH];
    for (int i = 0; i < BATCH; i++) labels[i] = rand() % 10;

    /* Both batch-norm implementations: cuDNN's (SCALING_BN=cudnn; auto's choice at these sizes) and ours
     * (SCALING_BN=own), which folds the bias in its own kernels. */
    g.bn = GPU_BN_CUDNN;
    compare(&g, m, params, images, labels, "cudnn");
    g.bn = GPU_BN_OWN;
    compare(&g, m, params, images, labels, "own");
    free(params);
    free(images);
    model_free(m);
    free(m);
    gpu_free(&g);
    return test_summary();
}
