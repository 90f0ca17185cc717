/* gap.cu — global average pooling: (N, H, W, C) -> (N, 1, 1, C), the mean over each channel's H x W plane.
 * It is cuDNN average pooling with one window covering the whole plane. */
#include <stdio.h>
#include <stdlib.h>
#include "cudnn_util.h"

typedef struct {
    cudnnTensorDescriptor_t x_desc;     // (N, H, W, C)
    cudnnTensorDescriptor_t y_desc;     // (N, 1, 1, C)
    cudnnPoolingDescriptor_t pool;
} gap_priv_t;

static int gap_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    shape_t in = l->in_shape[0];
    if (l->n_in != 1) { snprintf(err, errlen, "gap takes 1 input, got %d", l->n_in); return -1; }
    if (in.h < 1 || in.w < 1 || in.c < 1) {
        snprintf(err, errlen, "gap needs a non-empty input (got (%d, %d, %d, %d))", in.n, in.h, in.w, in.c);
        return -1;
    }
    out->n = in.n;
    out->h = 1;
    out->w = 1;
    out->c = in.c;
    return 0;
}

static size_t gap_count(const layer_t *l) { (void)l; return 0; }

static void gap_destroy(layer_t *l) {
    gap_priv_t *p = (gap_priv_t *)l->priv;
    if (!p) return;
    cudnn_tensor_desc_free(&p->x_desc);
    cudnn_tensor_desc_free(&p->y_desc);
    if (p->pool) CHECK_CUDNN(cudnnDestroyPoolingDescriptor(p->pool));
    free(p);
    l->priv = NULL;
}

static size_t gap_setup(layer_t *l, gpu_t *g) {
    (void)g;
    gap_destroy(l);
    gap_priv_t *p = (gap_priv_t *)calloc(1, sizeof *p);
    if (!p) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    l->priv = p;
    shape_t in = l->in_shape[0];
    p->x_desc = cudnn_nhwc_desc(in);
    p->y_desc = cudnn_nhwc_desc(l->out_shape);
    CHECK_CUDNN(cudnnCreatePoolingDescriptor(&p->pool));
    /* No padding, so "include padding" is simply the mean over H*W. */
    CHECK_CUDNN(cudnnSetPooling2dDescriptor(p->pool, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_PROPAGATE_NAN,
                                            in.h, in.w, 0, 0, in.h, in.w));
    return 0;
}

static void gap_forward(layer_t *l, gpu_t *g, int training) {
    (void)training;
    const gap_priv_t *p = (const gap_priv_t *)l->priv;
    CHECK_CUDNN(cudnnPoolingForward(g->cudnn, p->pool, &CU_ONE, p->x_desc, l->x[0], &CU_ZERO, p->y_desc, l->y));
}

static void gap_backward(layer_t *l, gpu_t *g, float dw_beta) {
    (void)dw_beta;
    const gap_priv_t *p = (const gap_priv_t *)l->priv;
    if (!l->dx[0]) return;
    // dx = dy / (H*W) broadcast over the plane
    CHECK_CUDNN(cudnnPoolingBackward(g->cudnn, p->pool, &CU_ONE, p->y_desc, l->y, p->y_desc, l->dy, p->x_desc,
                                     l->x[0], &l->dx_beta[0], p->x_desc, l->dx[0]));
}

const layer_ops_t layer_gap_ops = {
    "gap", gap_out_shape, gap_count, gap_count, NULL,
    gap_setup, gap_forward, gap_backward, gap_destroy,
};
