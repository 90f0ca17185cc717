/* conv_direct.h — direct convolution kernels for a one-channel input that needs no gradient (the stem of the
 * 28x28 models): forward and filter gradient only, fp32 accumulation, deterministic. Used by conv.cu. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "../tensor.h"
#include "../dtype.h"

/* Filter elements (K*R*R*C) the filter-gradient kernel holds per block. */
#define CONV_DIRECT_MAX_P 2048

#ifdef __cplusplus
extern "C" {
#endif
/* 1 where the direct kernels take this convolution: one input channel, a 3x3 or 5x5 window, K <= 256 and no input
 * gradient. */
int conv_direct_applies(shape_t in, shape_t out, int r, int needs_dx);
/* Floats of device scratch conv_direct_wgrad needs (per-block partial sums). */
size_t conv_direct_scratch_floats(shape_t in, shape_t out, int r);
/* y = x * w (w in KRSC, of type t like x and y), on stream. */
void conv_direct_forward(const void *x, const void *w, void *y, dtype_t t, shape_t in, shape_t out, int r, int stride,
                         int pad, cudaStream_t stream);
/* dw (fp32, KRSC) = beta * dw + d loss / d w from x and dy (type t); scratch of conv_direct_scratch_floats. */
void conv_direct_wgrad(const void *x, const void *dy, float *dw, float beta, float *scratch, dtype_t t, shape_t in,
                       shape_t out, int r, int stride, int pad, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
