/* add.cu — the residual join: y = x0 + x1 for two NHWC tensors of the same shape, through cuDNN.
 * Backward hands dy to both inputs, overwriting or accumulating per input (dx_beta). */
#include <stdio.h>
#include <stdlib.h>
#include "cudnn_util.h"

typedef struct {
    cudnnTensorDescriptor_t desc;       // (N, H, W, C): x0, x1, y and every gradient
    cudnnOpTensorDescriptor_t op;
} add_priv_t;

static int add_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    if (l->n_in != 2) { snprintf(err, errlen, "add takes 2 inputs, got %d", l->n_in); return -1; }
    shape_t a = l->in_shape[0], b = l->in_shape[1];
    if (a.n != b.n || a.h != b.h || a.w != b.w || a.c != b.c) {
        snprintf(err, errlen, "add inputs differ: (%d, %d, %d, %d) vs (%d, %d, %d, %d)", a.n, a.h, a.w, a.c, b.n, b.h,
                 b.w, b.c);
        return -1;
    }
    *out = a;
    return 0;
}

static size_t add_count(const layer_t *l) { (void)l; return 0; }

static void add_destroy(layer_t *l) {
    add_priv_t *p = (add_priv_t *)l->priv;
    if (!p) return;
    cudnn_tensor_desc_free(&p->desc);
    if (p->op) CHECK_CUDNN(cudnnDestroyOpTensorDescriptor(p->op));
    free(p);
    l->priv = NULL;
}

static size_t add_setup(layer_t *l, gpu_t *g) {
    (void)g;
    add_destroy(l);
    add_priv_t *p = (add_priv_t *)calloc(1, sizeof *p);
    if (!p) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    l->priv = p;
    p->desc = cudnn_nhwc_desc(l->in_shape[0], l->dtype);
    CHECK_CUDNN(cudnnCreateOpTensorDescriptor(&p->op));
    /* The sum is formed in fp32 for every data type (bf16 inputs are widened, the result rounded once). */
    CHECK_CUDNN(cudnnSetOpTensorDescriptor(p->op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN));
    return 0;
}

static void add_forward(layer_t *l, gpu_t *g, int training) {
    (void)training;
    const add_priv_t *p = (const add_priv_t *)l->priv;
    /* One pass (read x0, x1, write y) instead of a copy plus an in-place add. */
    CHECK_CUDNN(cudnnOpTensor(g->cudnn, p->op, &CU_ONE, p->desc, l->x[0], &CU_ONE, p->desc, l->x[1], &CU_ZERO,
                              p->desc, l->y));
}

static void add_backward(layer_t *l, gpu_t *g, float dw_beta) {
    (void)dw_beta;
    const add_priv_t *p = (const add_priv_t *)l->priv;
    for (int i = 0; i < 2; i++) {
        if (!l->dx[i]) continue;
        if (l->dx_beta[i] == 0.0f)
            CHECK_CUDA(cudaMemcpyAsync(l->dx[i], l->dy, layer_bytes(l, l->out_shape), cudaMemcpyDeviceToDevice,
                                       g->stream));
        else   // dx = 1 * dy + dx_beta * dx
            CHECK_CUDNN(cudnnAddTensor(g->cudnn, &CU_ONE, p->desc, l->dy, &l->dx_beta[i], p->desc, l->dx[i]));
    }
}

const layer_ops_t layer_add_ops = {
    "add", add_out_shape, add_count, add_count, NULL,
    add_setup, add_forward, add_backward, add_destroy, NULL, NULL, NULL,
};
