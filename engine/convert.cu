/* convert.cu — fp32 <-> bf16 conversions of flat buffers. Memory-bound grid-stride loops; the widening is exact,
 * the narrowing rounds to nearest even as PyTorch's .to(torch.bfloat16) does. */
#include "convert.h"
#include "check.h"
#include "launch.h"
#include "reduce.h"
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
/* The gradients' wire cast (engine/reduce.cu, vectorised and tested bit for bit against round to nearest even). */
void convert_f32_to_bf16(void *dst, const float *src, size_t n, cudaStream_t stream) {
    reduce_cast_bf16(dst, src, n, stream);
}

void convert_bf16_acc_f32(float *dst, const void *src, size_t n, float beta, cudaStream_t stream) {
    if (!n) return;
    const __nv_bfloat16 *s = (const __nv_bfloat16 *)src;
    if (beta != 0.0f) bf16_acc_f32_kernel<true><<<launch_blocks(n, 256, 4096), 256, 0, stream>>>(dst, s, n, beta);
    else bf16_acc_f32_kernel<false><<<launch_blocks(n, 256, 4096), 256, 0, stream>>>(dst, s, n, beta);
    CHECK_LAUNCH();
}
