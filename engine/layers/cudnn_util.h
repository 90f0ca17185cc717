/* cudnn_util.h — small helpers shared by the cuDNN/cuBLAS-backed layers: NHWC descriptors, blend constants,
 * and read-only reports of what a layer chose at setup (algorithms, BN path) for tests and logs. */
#pragma once
#include <stddef.h>
#include <cudnn.h>
#include <cublas_v2.h>
#include "../tensor.h"
#include "../check.h"
#include "../layer.h"

/* cuDNN and cuBLAS read alpha/beta through host pointers (the default pointer mode). */
static const float CU_ONE = 1.0f;
static const float CU_ZERO = 0.0f;

static inline cudnnDataType_t cudnn_dtype(dtype_t t) {
    static const cudnnDataType_t of[DTYPE_COUNT] = {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, CUDNN_DATA_HALF};
    return of[t];
}

/* (N, H, W, C) activation of type t, C fastest. */
static inline cudnnTensorDescriptor_t cudnn_nhwc_desc(shape_t s, dtype_t t) {
    cudnnTensorDescriptor_t d;
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&d));
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, cudnn_dtype(t), s.n, s.c, s.h, s.w));
    return d;
}

/* (1, 1, 1, C): a per-channel vector (bias) that broadcasts over N, H, W; cuDNN wants it in the data's type. */
static inline cudnnTensorDescriptor_t cudnn_channel_desc(int c, dtype_t t) {
    shape_t s = {1, 1, 1, c};
    return cudnn_nhwc_desc(s, t);
}

/* Parameter i as the layer computes with it: in the 2-byte copy for bf16 and fp16 layers, else in the fp32
 * parameters. */
static inline const void *param_at(const layer_t *l, size_t i) {
    return dtype_is_low(l->dtype) ? (const void *)((const char *)l->w_lp + i * dtype_size(l->dtype))
                                  : (const void *)(l->w + i);
}

/* A 2-byte layer reads its weights from the copy: one must be bound before setup. */
static inline void layer_check_lp(const layer_t *l, const char *where) {
    if (dtype_is_low(l->dtype) && !l->w_lp)
        check_fail(__FILE__, __LINE__, where, "a 2-byte layer without a 2-byte weight copy bound");
}

/* Bytes of a layer's tensor of shape s (its dtype). */
static inline size_t layer_bytes(const layer_t *l, shape_t s) { return shape_numel(s) * dtype_size(l->dtype); }

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
/* bn.cu: which batch-norm training path setup settled on ("own NHWC (...)", "Ex SPATIAL_PERSISTENT ..." or
 * "SPATIAL ..."). */
const char *layer_bn_path(const layer_t *l);
/* bn.cu: device pointer to the batch mean (C floats) then 1/sqrt(var + eps) (C floats) the last training forward
 * saved, whichever path runs; NULL before setup. */
const float *layer_bn_saved(const layer_t *l);
/* Tests: makes a batch norm that trains on our kernels run its forward and backward the ways fwd and bwd
 * (bn_nhwc_impl_t); 0, or -1 where it trains on cuDNN's or cannot run one of them. */
int layer_bn_force(layer_t *l, int fwd, int bwd);
/* blas.cu: column-major C (m, n) = A' (m, k) . B' (k, n) + beta C, A and B of type ab (fp32: cublasSgemm, under
 * the handle's math mode; bf16 or fp16: cublasGemmEx with fp32 accumulation), C of type c (2-byte layers: outputs
 * in their type, fp32 parameter gradients). */
void blas_gemm(gpu_t *g, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, dtype_t ab, const void *A,
               int lda, const void *B, int ldb, float beta, dtype_t c, void *C, int ldc);
/* blas_gemm for a convolution's GEMM: fp32 operands under --math tf32 take TF32 tensor cores, as cuDNN's
 * convolutions do (the handle keeps fp32 GEMMs strict for the dense layers, as PyTorch's defaults). */
void blas_gemm_conv(gpu_t *g, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, dtype_t ab,
                    const void *A, int lda, const void *B, int ldb, float beta, dtype_t c, void *C, int ldc);
/* db (k, fp32) = beta db + dy (k x m, column-major, of type t) . ones (m): a bias gradient. cuDNN's NHWC
 * BackwardBias took ~310 us for a (256, 28, 28, 64) gradient on an H100 where this GEMV takes ~20 us. */
void blas_bias_grad(gpu_t *g, dtype_t t, const void *dy, int k, int m, float beta, float *db);
/* The g->ones vector of type t (gpu_ones_reserve sizes it). */
const void *blas_ones(const gpu_t *g, dtype_t t);
#ifdef __cplusplus
}
#endif
