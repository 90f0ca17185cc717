/* convert.cu — bf16 or fp16 -> fp32 widening (exact) of flat buffers, or fp32 added as is, accumulating or not: a
 * memory-bound grid-stride loop. The narrowing is reduce_cast (engine/reduce.cu). */
#include "convert.h"
#include "check.h"
#include "launch.h"
#include "layers/elem.cuh"

// --- kernels
template <typename T, bool ACC>
__global__ static void acc_f32_kernel(float *__restrict__ dst, const T *__restrict__ src, size_t n, float beta) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = to_f(src[i]);
        dst[i] = ACC ? beta * dst[i] + v : v;
    }
}

// --- launchers
template <typename T> struct acc_f32 {
    static void run(float *dst, const void *src, size_t n, float beta, cudaStream_t stream) {
        const unsigned b = launch_blocks(n, 256, 4096);
        if (beta != 0.0f) acc_f32_kernel<T, true><<<b, 256, 0, stream>>>(dst, (const T *)src, n, beta);
        else acc_f32_kernel<T, false><<<b, 256, 0, stream>>>(dst, (const T *)src, n, beta);
        CHECK_LAUNCH();
    }
};

void convert_acc_f32(float *dst, const void *src, dtype_t t, size_t n, float beta, cudaStream_t stream) {
    if (!n) return;
    dtype_dispatch<acc_f32>(t, dst, src, n, beta, stream);   /* fp32, bf16 or fp16: every dtype_t */
}
