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
/* 1 where this path takes the convolution: at most 4 input channels, no input gradient, a window of more than one
 * cell, and an im2col copy whose rows and 8-column groups number under 2^31 (32-bit indices, cuBLAS's int n). */
int conv_gemm_applies(shape_t in, shape_t out, int k, int needs_dx);
/* Columns of the im2col copy: k*k*C rounded up to 8 (16-byte rows in bf16), the padding columns zero. */
int conv_gemm_cols(shape_t in, int k);
/* Device bytes the path allocates for a layer: the im2col copy (N*OH*OW rows, type t), kept from the forward for the
 * filter gradient, and the weights with padded rows. Known before setup, for the memory plan. */
size_t conv_gemm_bytes(shape_t in, shape_t out, int k, dtype_t t);
/* y (N, OH, OW, K) = x * w: col = im2col(x), wpad = w (K, R, R, C) with rows padded to conv_gemm_cols (its padding
 * columns zeroed once by the caller), then one GEMM on g's stream (fp32 accumulation; TF32 under --math tf32, as
 * cuDNN's convolutions). */
void conv_gemm_forward(gpu_t *g, const void *x, const void *w, void *wpad, void *col, void *y, dtype_t t, shape_t in,
                       shape_t out, int k, int stride, int pad);
/* dw (fp32, K x R*R*C) = beta dw + dy^T col: the filter gradient from the forward's im2col copy, one GEMM. */
void conv_gemm_wgrad(gpu_t *g, const void *col, const void *dy, float *dw, float beta, dtype_t t, shape_t in,
                     shape_t out, int k);
#ifdef __cplusplus
}
#endif
