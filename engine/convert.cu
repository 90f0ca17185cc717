/* convert.cu — fp32 <-> bf16 conversions of flat buffers. Memory-bound grid-stride loops; the widening is exact,
 * the narrowing rounds to nearest even as PyTorch's .to(torch.bfloat16) does. */
#include "convert.h"
#include "check.h"
#include <cuda_bf16.h>

static unsigned grid_for(size_t n) {
    size_t b = (n + 255) / 256;
    return (unsigned)(b > 4096 ? 4096 : b ? b : 1);
}

// --- kernels
__global__ static void f32_to_bf16_kernel(__nv_bfloat16 *__restrict__ dst, const float *__restrict__ src, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2bfloat16_rn(src[i]);
}

template <bool ACC>
__global__ static void bf16_acc_f32_kernel(float *__restrict__ dst, const __nv_bfloat16 *__restrict__ src, size_t n,
                                           float beta) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = __bfloat162float(src[i]);
        dst[i] = ACC ? beta * dst[i] + v : v;
    }
}

// --- launchers
void convert_f32_to_bf16(void *dst, const float *src, size_t n, cudaStream_t stream) {
    if (!n) return;
    f32_to_bf16_kernel<<<grid_for(n), 256, 0, stream>>>((__nv_bfloat16 *)dst, src, n);
    CHECK_LAUNCH();
}

void convert_bf16_acc_f32(float *dst, const void *src, size_t n, float beta, cudaStream_t stream) {
    if (!n) return;
    const __nv_bfloat16 *s = (const __nv_bfloat16 *)src;
    if (beta != 0.0f) bf16_acc_f32_kernel<true><<<grid_for(n), 256, 0, stream>>>(dst, s, n, beta);
    else bf16_acc_f32_kernel<false><<<grid_for(n), 256, 0, stream>>>(dst, s, n, beta);
    CHECK_LAUNCH();
}
