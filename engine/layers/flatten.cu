/* flatten.cu — (N, H, W, C) -> (N, 1, 1, H*W*C): NHWC rows are already contiguous per sample, so this is a copy
 * (kept as a layer so the graph and the gradients stay explicit). */
#include <stdio.h>
#include <stdlib.h>
#include "cudnn_util.h"

typedef struct {
    cudnnTensorDescriptor_t desc;       // (N, 1, 1, H*W*C): input and output memory alike
} flatten_priv_t;

static int flatten_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    shape_t in = l->in_shape[0];
    if (l->n_in != 1) { snprintf(err, errlen, "flatten takes 1 input, got %d", l->n_in); return -1; }
    if (shape_per_sample(in) > 0x7fffffff) { snprintf(err, errlen, "flatten: %zu features per sample", shape_per_sample(in)); return -1; }
    out->n = in.n;
    out->h = 1;
    out->w = 1;
    out->c = (int)shape_per_sample(in);
    return 0;
}

static size_t flatten_count(const layer_t *l) { (void)l; return 0; }

static void flatten_destroy(layer_t *l) {
    flatten_priv_t *p = (flatten_priv_t *)l->priv;
    if (!p) return;
    cudnn_tensor_desc_free(&p->desc);
    free(p);
    l->priv = NULL;
}

static size_t flatten_setup(layer_t *l, gpu_t *g) {
    (void)g;
    flatten_destroy(l);
    flatten_priv_t *p = (flatten_priv_t *)calloc(1, sizeof *p);
    if (!p) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    l->priv = p;
    p->desc = cudnn_nhwc_desc(l->out_shape, l->dtype);
    return 0;
}

static void flatten_forward(layer_t *l, gpu_t *g, int training) {
    (void)training;
    CHECK_CUDA(cudaMemcpyAsync(l->y, l->x[0], layer_bytes(l, l->out_shape), cudaMemcpyDeviceToDevice, g->stream));
}

static void flatten_backward(layer_t *l, gpu_t *g, float dw_beta) {
    (void)dw_beta;
    const flatten_priv_t *p = (const flatten_priv_t *)l->priv;
    if (!l->dx[0]) return;
    if (l->dx_beta[0] == 0.0f)
        CHECK_CUDA(cudaMemcpyAsync(l->dx[0], l->dy, layer_bytes(l, l->out_shape), cudaMemcpyDeviceToDevice,
                                   g->stream));
    else   // dx = 1 * dy + dx_beta * dx
        CHECK_CUDNN(cudnnAddTensor(g->cudnn, &CU_ONE, p->desc, l->dy, &l->dx_beta[0], p->desc, l->dx[0]));
}

const layer_ops_t layer_flatten_ops = {
    "flatten", flatten_out_shape, flatten_count, flatten_count, NULL,
    flatten_setup, flatten_forward, flatten_backward, flatten_destroy, NULL, NULL, NULL,
};
