/* convert.cu — bf16 -> fp32 widening (exact) of flat buffers, accumulating or not: a memory-bound grid-stride loop.
 * The narrowing is reduce_cast_bf16 (engine/reduce.cu). */
#include "convert.h"
#include "check.h"
#include "launch.h"
#include <cuda_bf16.h>

// --- kernels
template <bool ACC>
__global__ static void bf16_acc_f32_kernel(float *__restrict__ dst, const __nv_bfloat16 *__restrict__ src, size_t n,
                                           float beta) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = __bfloat162float(src[i]);
        dst[i] = ACC ? beta * dst[i] + v : v;
    }
}

// --- launchers
void convert_bf16_acc_f32(float *dst, const void *src, size_t n, float beta, cudaStream_t stream) {
    if (!n) return;
    const __nv_bfloat16 *s = (const __nv_bfloat16 *)src;
    if (beta != 0.0f) bf16_acc_f32_kernel<true><<<launch_blocks(n, 256, 4096), 256, 0, stream>>>(dst, s, n, beta);
    else bf16_acc_f32_kernel<false><<<launch_blocks(n, 256, 4096), 256, 0, stream>>>(dst, s, n, beta);
    CHECK_LAUNCH();
}
