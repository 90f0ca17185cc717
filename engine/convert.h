/* convert.h — the fp32 accumulation of a bf16 buffer on a stream: gradients that a bf16 library call produced
 * (cuDNN writes a bf16 filter gradient). The other way, fp32 to bf16, is reduce_cast_bf16 (engine/reduce.h). */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif
/* dst[i] = beta * dst[i] + float(src[i]) for n bf16 src; beta 0 overwrites (dst is not read). */
void convert_bf16_acc_f32(float *dst, const void *src, size_t n, float beta, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
