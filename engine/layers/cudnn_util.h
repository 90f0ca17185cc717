/* cudnn_util.h — small helpers shared by the cuDNN/cuBLAS-backed layers: NHWC descriptors, blend constants,
 * and read-only reports of what a layer chose at setup (algorithms, BN path) for tests and logs. */
#pragma once
#include <stddef.h>
#include <cudnn.h>
#include "../tensor.h"
#include "../check.h"
#include "../layer.h"

/* cuDNN and cuBLAS read alpha/beta through host pointers (the default pointer mode). */
static const float CU_ONE = 1.0f;
static const float CU_ZERO = 0.0f;

/* (N, H, W, C) activation, C fastest. */
static inline cudnnTensorDescriptor_t cudnn_nhwc_desc(shape_t s) {
    cudnnTensorDescriptor_t d;
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&d));
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w));
    return d;
}

/* (1, 1, 1, C): a per-channel vector (bias) that broadcasts over N, H, W. */
static inline cudnnTensorDescriptor_t cudnn_channel_desc(int c) {
    shape_t s = {1, 1, 1, c};
    return cudnn_nhwc_desc(s);
}

static inline void cudnn_tensor_desc_free(cudnnTensorDescriptor_t *d) {
    if (*d) CHECK_CUDNN(cudnnDestroyTensorDescriptor(*d));
    *d = NULL;
}

/* The label for messages, or the kind's name when the layer has none. */
static inline const char *cu_label(const layer_t *l) { return l->label[0] ? l->label : l->ops->name; }

#ifdef __cplusplus
extern "C" {
#endif
/* conv.cu: "fwd <algo>/<math> ws <bytes>, bwd_data ..., bwd_filter ..." for the algorithms setup chose;
 * "not set up" before setup. */
void layer_conv_describe(const layer_t *l, char *buf, size_t len);
/* bn.cu: which cuDNN batch-norm path setup settled on ("Ex SPATIAL_PERSISTENT" or "SPATIAL"). */
const char *layer_bn_path(const layer_t *l);
#ifdef __cplusplus
}
#endif
