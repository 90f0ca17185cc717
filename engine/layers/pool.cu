/* pool.cu — max and average pooling (square window, stride, zero padding) on NHWC tensors through cuDNN, and
 * global average pooling, which is average pooling with one window over the whole H x W plane: three kinds, one
 * implementation, differing only in the cuDNN mode and where the window comes from. */
#include <stdio.h>
#include <stdlib.h>
#include "cudnn_util.h"

typedef struct {
    cudnnTensorDescriptor_t x_desc;     // (N, H, W, C)
    cudnnTensorDescriptor_t y_desc;     // (N, OH, OW, C)
    cudnnPoolingDescriptor_t pool;
} pool_priv_t;

static int pool_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    const layer_cfg_t *c = &l->cfg;
    shape_t in = l->in_shape[0];
    const char *name = l->ops->name;
    if (l->n_in != 1) { snprintf(err, errlen, "%s takes 1 input, got %d", name, l->n_in); return -1; }
    if (c->k < 1 || c->stride < 1 || c->pad < 0 || c->pad >= c->k) {
        snprintf(err, errlen, "%s needs k >= 1, stride >= 1, 0 <= pad < k (got k=%d stride=%d pad=%d)", name, c->k,
                 c->stride, c->pad);
        return -1;
    }
    if (in.h + 2 * c->pad < c->k || in.w + 2 * c->pad < c->k) {
        snprintf(err, errlen, "%s k=%d pad=%d does not fit input %dx%d", name, c->k, c->pad, in.h, in.w);
        return -1;
    }
    out->n = in.n;
    out->h = (in.h + 2 * c->pad - c->k) / c->stride + 1;
    out->w = (in.w + 2 * c->pad - c->k) / c->stride + 1;
    out->c = in.c;
    return 0;
}

/* gap: (N, H, W, C) -> (N, 1, 1, C), the mean over each channel's plane. */
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

static size_t pool_count(const layer_t *l) { (void)l; return 0; }

static void pool_destroy(layer_t *l) {
    pool_priv_t *p = (pool_priv_t *)l->priv;
    if (!p) return;
    cudnn_tensor_desc_free(&p->x_desc);
    cudnn_tensor_desc_free(&p->y_desc);
    if (p->pool) CHECK_CUDNN(cudnnDestroyPoolingDescriptor(p->pool));
    free(p);
    l->priv = NULL;
}

static size_t pool_setup(layer_t *l, gpu_t *g) {
    (void)g;
    pool_destroy(l);
    pool_priv_t *p = (pool_priv_t *)calloc(1, sizeof *p);
    if (!p) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    l->priv = p;
    const layer_cfg_t *c = &l->cfg;
    shape_t in = l->in_shape[0];
    p->x_desc = cudnn_nhwc_desc(in, l->dtype);
    p->y_desc = cudnn_nhwc_desc(l->out_shape, l->dtype);
    /* MAX_DETERMINISTIC: overlapping windows (k > stride) must not make replicas' gradients differ.
     * Average divides by k*k everywhere, as PyTorch's count_include_pad=True; gap has no padding, so that is
     * the mean over H*W. */
    cudnnPoolingMode_t mode = l->ops == &layer_maxpool_ops ? CUDNN_POOLING_MAX_DETERMINISTIC
                                                           : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    int gap = l->ops == &layer_gap_ops;
    CHECK_CUDNN(cudnnCreatePoolingDescriptor(&p->pool));
    CHECK_CUDNN(cudnnSetPooling2dDescriptor(p->pool, mode, CUDNN_PROPAGATE_NAN, gap ? in.h : c->k, gap ? in.w : c->k,
                                            gap ? 0 : c->pad, gap ? 0 : c->pad, gap ? in.h : c->stride,
                                            gap ? in.w : c->stride));
    int n = 0, ch = 0, h = 0, w = 0;
    CHECK_CUDNN(cudnnGetPooling2dForwardOutputDim(p->pool, p->x_desc, &n, &ch, &h, &w));
    if (n != l->out_shape.n || ch != l->out_shape.c || h != l->out_shape.h || w != l->out_shape.w) {
        fprintf(stderr, "%s %s: cuDNN output (%d, %d, %d, %d) != layer output (%d, %d, %d, %d)\n", l->ops->name,
                cu_label(l), n, h, w, ch, l->out_shape.n, l->out_shape.h, l->out_shape.w, l->out_shape.c);
        check_fail(__FILE__, __LINE__, "cudnnGetPooling2dForwardOutputDim", "shape mismatch");
    }
    return 0;
}

static void pool_forward(layer_t *l, gpu_t *g, int training) {
    (void)training;
    const pool_priv_t *p = (const pool_priv_t *)l->priv;
    // (N, H, W, C) -> (N, OH, OW, C)
    CHECK_CUDNN(cudnnPoolingForward(g->cudnn, p->pool, &CU_ONE, p->x_desc, l->x[0], &CU_ZERO, p->y_desc, l->y));
}

static void pool_backward(layer_t *l, gpu_t *g, float dw_beta) {
    (void)dw_beta;
    const pool_priv_t *p = (const pool_priv_t *)l->priv;
    if (!l->dx[0]) return;
    CHECK_CUDNN(cudnnPoolingBackward(g->cudnn, p->pool, &CU_ONE, p->y_desc, l->y, p->y_desc, l->dy, p->x_desc,
                                     l->x[0], &l->dx_beta[0], p->x_desc, l->dx[0]));
}

const layer_ops_t layer_maxpool_ops = {
    "maxpool", pool_out_shape, pool_count, pool_count, NULL,
    pool_setup, pool_forward, pool_backward, pool_destroy,
};

const layer_ops_t layer_avgpool_ops = {
    "avgpool", pool_out_shape, pool_count, pool_count, NULL,
    pool_setup, pool_forward, pool_backward, pool_destroy,
};

const layer_ops_t layer_gap_ops = {
    "gap", gap_out_shape, pool_count, pool_count, NULL,
    pool_setup, pool_forward, pool_backward, pool_destroy,
};
