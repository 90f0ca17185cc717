/* sgd.cu — the optimizer step over the whole flat buffer: one launch per step whatever the model.
 * A grid-stride loop over the flat buffer: the update is purely memory-bound (5 floats moved per parameter). */
#include "sgd.h"
#include "check.h"

// --- kernels
template <bool MOMENTUM>
__global__ static void sgd_kernel(float *__restrict__ p, const float *__restrict__ g, float *__restrict__ v,
                                  size_t n, float lr, float mu, float wd) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float d = g[i] + wd * p[i];
        if (MOMENTUM) { d = mu * v[i] + d; v[i] = d; }
        p[i] -= lr * d;
    }
}

// --- launchers
void sgd_step(float *params, const float *grads, float *momentum, size_t n, float lr, float mu, float wd,
              cudaStream_t stream) {
    int threads = 256;
    size_t blocks = (n + threads - 1) / threads;
    if (blocks > 4096) blocks = 4096;   /* grid-stride: enough blocks to fill an H100/H200 several times */
    if (mu > 0.0f) sgd_kernel<true><<<(unsigned)blocks, threads, 0, stream>>>(params, grads, momentum, n, lr, mu, wd);
    else sgd_kernel<false><<<(unsigned)blocks, threads, 0, stream>>>(params, grads, momentum, n, lr, mu, wd);
    CHECK_LAUNCH();
}
