/* convert.h — the fp32 accumulation of a 2-byte (bf16 or fp16) buffer on a stream: gradients that a library call
 * produced in the layer's type (cuDNN writes a 2-byte filter gradient). The other way, fp32 to a 2-byte type, is
 * reduce_cast (engine/reduce.h). */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif
/* dst[i] = beta * dst[i] + float(src[i]) for n src of type t (exact widening); beta 0 overwrites (dst is not read). */
void convert_acc_f32(float *dst, const void *src, dtype_t t, size_t n, float beta, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
