/* sgd.cu — the optimizer step over the whole flat buffer: one launch per step whatever the model.
 * A grid-stride loop over the flat buffer: the update is purely memory-bound (5 floats moved per parameter). */
#include "sgd.h"
#include "check.h"
#include "launch.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <type_traits>

// --- kernels
/* G: the gradient element type (float, or a 2-byte type straight from a low-precision all-reduce); L: the type of
 * the low-precision copy of the parameters also written (bf16 or fp16), void for none. Gradients are widened to fp32
 * before any arithmetic: the master update stays fp32. ls (fp16's loss scale, on the device) or NULL: the gradients
 * are divided by its scale, and where its check found an inf or a NaN nothing is written at all (the step skipped,
 * as GradScaler.step skips optimizer.step). */
template <typename G, typename L, bool MOMENTUM>
__global__ static void sgd_kernel(float *__restrict__ p, L *__restrict__ lp, const G *__restrict__ g,
                                  float *__restrict__ v, size_t n, float lr, float mu, float wd,
                                  const loss_scale_t *__restrict__ ls) {
    float inv = 1.0f;
    if (ls) {
        if (ls->found_inf) return;
        inv = 1.0f / ls->scale;
    }
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float w = p[i];
        float d = (float)g[i] * inv + wd * w;
        if (MOMENTUM) { d = mu * v[i] + d; v[i] = d; }
        w -= lr * d;
        p[i] = w;
        if constexpr (!std::is_void<L>::value) lp[i] = (L)w;
    }
}

// --- launchers
template <typename G, typename L>
static void sgd_launch(float *p, L *lp, const G *g, float *v, size_t n, float lr, float mu, float wd,
                       const loss_scale_t *ls, cudaStream_t stream) {
    if (n == 0) return;
    int threads = 256;
    unsigned b = launch_blocks(n, threads, 4096);
    if (mu > 0.0f) sgd_kernel<G, L, true><<<b, threads, 0, stream>>>(p, lp, g, v, n, lr, mu, wd, ls);
    else sgd_kernel<G, L, false><<<b, threads, 0, stream>>>(p, lp, g, v, n, lr, mu, wd, ls);
    CHECK_LAUNCH();
}

template <typename G>
static void sgd_by_copy(float *p, void *lp, dtype_t lp_dtype, const G *g, float *v, size_t n, float lr, float mu,
                        float wd, const loss_scale_t *ls, cudaStream_t stream) {
    if (!lp) sgd_launch(p, (void *)NULL, g, v, n, lr, mu, wd, ls, stream);
    else if (lp_dtype == DTYPE_FP16) sgd_launch(p, (__half *)lp, g, v, n, lr, mu, wd, ls, stream);
    else sgd_launch(p, (__nv_bfloat16 *)lp, g, v, n, lr, mu, wd, ls, stream);
}

void sgd_step_scaled(float *params, void *params_lp, dtype_t lp_dtype, const void *grads, dtype_t grad_dtype,
                     float *momentum, size_t n, float lr, float mu, float wd, const loss_scale_t *ls,
                     cudaStream_t stream) {
    if (grad_dtype == DTYPE_BF16)
        sgd_by_copy(params, params_lp, lp_dtype, (const __nv_bfloat16 *)grads, momentum, n, lr, mu, wd, ls, stream);
    else if (grad_dtype == DTYPE_FP16)
        sgd_by_copy(params, params_lp, lp_dtype, (const __half *)grads, momentum, n, lr, mu, wd, ls, stream);
    else
        sgd_by_copy(params, params_lp, lp_dtype, (const float *)grads, momentum, n, lr, mu, wd, ls, stream);
}

void sgd_step(float *params, void *params_bf16, const void *grads, dtype_t grad_dtype, float *momentum, size_t n,
              float lr, float mu, float wd, cudaStream_t stream) {
    sgd_step_scaled(params, params_bf16, DTYPE_BF16, grads, grad_dtype, momentum, n, lr, mu, wd, NULL, stream);
}
