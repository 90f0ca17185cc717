/* sgd.cu — the optimizer step over the whole flat buffer: one launch per step whatever the model.
 * A grid-stride loop over the flat buffer: the update is purely memory-bound (5 floats moved per parameter). */
#include "sgd.h"
#include "check.h"
#include "launch.h"
#include <cuda_bf16.h>

// --- kernels
/* G: the gradient element type (float, or __nv_bfloat16 straight from a bf16 all-reduce); LP: also write the bf16
 * copy of the parameters. Gradients are widened to fp32 before any arithmetic: the master update stays fp32. */
template <typename G, bool MOMENTUM, bool LP>
__global__ static void sgd_kernel(float *__restrict__ p, __nv_bfloat16 *__restrict__ p16, const G *__restrict__ g,
                                  float *__restrict__ v, size_t n, float lr, float mu, float wd) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float w = p[i];
        float d = (float)g[i] + wd * w;
        if (MOMENTUM) { d = mu * v[i] + d; v[i] = d; }
        w -= lr * d;
        p[i] = w;
        if (LP) p16[i] = __float2bfloat16_rn(w);
    }
}

// --- launchers
template <typename G>
static void sgd_launch(float *p, __nv_bfloat16 *p16, const G *g, float *v, size_t n, float lr, float mu, float wd,
                       cudaStream_t stream) {
    if (n == 0) return;
    int threads = 256;
    unsigned b = launch_blocks(n, threads, 4096);
    if (mu > 0.0f && p16) sgd_kernel<G, true, true><<<b, threads, 0, stream>>>(p, p16, g, v, n, lr, mu, wd);
    else if (mu > 0.0f) sgd_kernel<G, true, false><<<b, threads, 0, stream>>>(p, p16, g, v, n, lr, mu, wd);
    else if (p16) sgd_kernel<G, false, true><<<b, threads, 0, stream>>>(p, p16, g, v, n, lr, mu, wd);
    else sgd_kernel<G, false, false><<<b, threads, 0, stream>>>(p, p16, g, v, n, lr, mu, wd);
    CHECK_LAUNCH();
}

void sgd_step(float *params, void *params_bf16, const void *grads, dtype_t grad_dtype, float *momentum, size_t n,
              float lr, float mu, float wd, cudaStream_t stream) {
    __nv_bfloat16 *p16 = (__nv_bfloat16 *)params_bf16;
    if (grad_dtype == DTYPE_BF16)
        sgd_launch(params, p16, (const __nv_bfloat16 *)grads, momentum, n, lr, mu, wd, stream);
    else
        sgd_launch(params, p16, (const float *)grads, momentum, n, lr, mu, wd, stream);
}
