/* conv_gemm.h — convolution as one GEMM over an im2col copy of the input, for an input of a few channels that
 * needs no gradient (the 7x7 stride-2 stem of the ImageNet models): forward and filter gradient. Used by conv.cu. */
#pragma once
#include <stddef.h>
#include "../gpu.h"
#include "../tensor.h"
#include "../dtype.h"

#ifdef __cplusplus
extern "C" {
#endif
/* One layer's path: its shapes and device buffers (allocated once, at setup, so a step allocates nothing). */
typedef struct {
    shape_t in, out;
    int k, stride, pad;
    int cols;                   /* columns of the im2col copy: k*k*C rounded up to 8, the padding columns zero */
    dtype_t t;                  /* x, y, dy, col, wpad */
    void *col;                  /* (N*OH*OW, cols): written by the forward, read by the filter gradient */
    void *wpad;                 /* (K, cols): the weights with padded rows, the padding zeroed once */
    float *dwpad;               /* (K, cols): the filter gradient's GEMM output */
} conv_gemm_t;

/* 1 where this path takes the convolution: at most 4 input channels, no input gradient, a window of 2 to 11 cells
 * and a stride up to 4 (one block's input rows in shared memory), an input and an im2col copy under 2^31
 * elements (32-bit indices). */
int conv_gemm_applies(shape_t in, shape_t out, int k, int stride, int needs_dx);
/* Device bytes conv_gemm_init allocates: known before setup, for the memory plan. */
size_t conv_gemm_bytes(shape_t in, shape_t out, int k, dtype_t t);
/* Allocates the buffers, zeroing wpad on `stream`. */
void conv_gemm_init(conv_gemm_t *c, shape_t in, shape_t out, int k, int stride, int pad, dtype_t t,
                    cudaStream_t stream);
void conv_gemm_free(conv_gemm_t *c);
/* y (N, OH, OW, K) = x * w (K, R, R, C, of type t) on g's stream: the im2col copy, then one GEMM (fp32
 * accumulation; TF32 under --math tf32, as cuDNN's convolutions). */
void conv_gemm_forward(const conv_gemm_t *c, gpu_t *g, const void *x, const void *w, void *y);
/* dw (fp32, K x R*R*C) = beta dw + dy^T col, from the last forward's im2col copy. */
void conv_gemm_wgrad(const conv_gemm_t *c, gpu_t *g, const void *dy, float *dw, float beta);
#ifdef __cplusplus
}
#endif
