/* convert.h — the fp32 accumulation of a buffer on a stream: gradients that a library call produced in the layer's
 * 2-byte type (cuDNN writes a 2-byte filter gradient), or another GPU's fp32 part of a gradient. The other way, fp32 to a 2-byte type, is
 * reduce_cast (engine/reduce.h). */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif
/* dst[i] = beta * dst[i] + float(src[i]) for n src of type t (fp32, or a 2-byte type widened exactly); beta 0
 * overwrites (dst is not read). */
void convert_acc_f32(float *dst, const void *src, dtype_t t, size_t n, float beta, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
