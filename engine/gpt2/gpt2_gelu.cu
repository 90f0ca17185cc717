/* gpt2_gelu.cu — GPT-2's GELU, the tanh approximation, forward and backward, elementwise. The linear layers fuse it
 * into cuBLASLt's epilogue (gpt2_linear.cu) where cuBLASLt has one; this is the path where it has not. */
#include "gpt2_kernels.h"
#include "gpt2_util.cuh"
#include "../launch.h"

#define GELU_THREADS 256
#define GELU_K 0.7978845608028654f   /* sqrt(2 / pi) */
#define GELU_A 0.044715f

// --- kernels

template <typename T>
__global__ static void gelu_forward_kernel(const T *x, T *y, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = to_f(x[i]);
        y[i] = from_f<T>(0.5f * v * (1.0f + tanhf(GELU_K * (v + GELU_A * v * v * v))));
    }
}

/* d/dx of 0.5 x (1 + tanh(u)), u = k (x + a x^3): 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) k (1 + 3 a x^2). */
template <typename T>
__global__ static void gelu_backward_kernel(const T *x, const T *dy, T *dx, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = to_f(x[i]), th = tanhf(GELU_K * (v + GELU_A * v * v * v));
        float d = 0.5f * (1.0f + th) + 0.5f * v * (1.0f - th * th) * GELU_K * (1.0f + 3.0f * GELU_A * v * v);
        dx[i] = from_f<T>(to_f(dy[i]) * d);
    }
}

// --- launchers

template <typename T> struct gelu_fwd {
    static void run(const void *x, void *y, size_t n, cudaStream_t s) {
        gelu_forward_kernel<T><<<launch_blocks(n, GELU_THREADS, 8192), GELU_THREADS, 0, s>>>((const T *)x, (T *)y, n);
        CHECK_LAUNCH();
    }
};
template <typename T> struct gelu_bwd {
    static void run(const void *x, const void *dy, void *dx, size_t n, cudaStream_t s) {
        gelu_backward_kernel<T><<<launch_blocks(n, GELU_THREADS, 8192), GELU_THREADS, 0, s>>>(
            (const T *)x, (const T *)dy, (T *)dx, n);
        CHECK_LAUNCH();
    }
};

extern "C" void gpt2_gelu_forward(const void *x, void *y, dtype_t t, size_t n, cudaStream_t stream) {
    if (n) gpt2_dispatch<gelu_fwd>("gpt2_gelu_forward", t, x, y, n, stream);
}
extern "C" void gpt2_gelu_backward(const void *x, const void *dy, void *dx, dtype_t t, size_t n,
                                   cudaStream_t stream) {
    if (n) gpt2_dispatch<gelu_bwd>("gpt2_gelu_backward", t, x, dy, dx, n, stream);
}
