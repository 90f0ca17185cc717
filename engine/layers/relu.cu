/* relu.cu — y = max(x, 0) over any NHWC tensor through cuDNN's activation routines.
 * Backward masks dy where x <= 0; dx can accumulate (dx_beta) for tensors read by several layers. */
#include <stdio.h>
#include <stdlib.h>
#include "cudnn_util.h"

typedef struct {
    cudnnTensorDescriptor_t desc;       // (N, H, W, C): x, y, dx, dy alike
    cudnnActivationDescriptor_t act;
} relu_priv_t;

static int relu_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    if (l->n_in != 1) { snprintf(err, errlen, "relu takes 1 input, got %d", l->n_in); return -1; }
    *out = l->in_shape[0];
    return 0;
}

static size_t relu_count(const layer_t *l) { (void)l; return 0; }

static void relu_destroy(layer_t *l) {
    relu_priv_t *p = (relu_priv_t *)l->priv;
    if (!p) return;
    cudnn_tensor_desc_free(&p->desc);
    if (p->act) CHECK_CUDNN(cudnnDestroyActivationDescriptor(p->act));
    free(p);
    l->priv = NULL;
}

static size_t relu_setup(layer_t *l, gpu_t *g) {
    (void)g;
    relu_destroy(l);
    relu_priv_t *p = (relu_priv_t *)calloc(1, sizeof *p);
    if (!p) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    l->priv = p;
    p->desc = cudnn_nhwc_desc(l->in_shape[0], l->dtype);
    CHECK_CUDNN(cudnnCreateActivationDescriptor(&p->act));
    /* NaN propagates so a diverging run shows up in the loss instead of being clipped to 0. */
    CHECK_CUDNN(cudnnSetActivationDescriptor(p->act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
    return 0;
}

static void relu_forward(layer_t *l, gpu_t *g, int training) {
    (void)training;
    const relu_priv_t *p = (const relu_priv_t *)l->priv;
    CHECK_CUDNN(cudnnActivationForward(g->cudnn, p->act, &CU_ONE, p->desc, l->x[0], &CU_ZERO, p->desc, l->y));
}

static void relu_backward(layer_t *l, gpu_t *g, float dw_beta) {
    (void)dw_beta;
    const relu_priv_t *p = (const relu_priv_t *)l->priv;
    if (!l->dx[0]) return;
    CHECK_CUDNN(cudnnActivationBackward(g->cudnn, p->act, &CU_ONE, p->desc, l->y, p->desc, l->dy, p->desc, l->x[0],
                                        &l->dx_beta[0], p->desc, l->dx[0]));
}

const layer_ops_t layer_relu_ops = {
    "relu", relu_out_shape, relu_count, relu_count, NULL,
    relu_setup, relu_forward, relu_backward, relu_destroy, NULL, NULL, NULL,
};
