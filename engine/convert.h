/* convert.h — fp32 <-> bf16 conversions of flat buffers on a stream: the bf16 parameter copy at initialisation,
 * and the fp32 accumulation of gradients that a bf16 library call produced (cuDNN writes a bf16 filter gradient). */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif
/* dst[i] = bf16(src[i]), round to nearest even (__float2bfloat16_rn). dst holds n bf16. */
void convert_f32_to_bf16(void *dst, const float *src, size_t n, cudaStream_t stream);
/* dst[i] = beta * dst[i] + float(src[i]) for n bf16 src; beta 0 overwrites (dst is not read). */
void convert_bf16_acc_f32(float *dst, const void *src, size_t n, float beta, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
