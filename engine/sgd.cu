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
template <typename G, typename L, bool MOMENTUM, bool SCALED>
__global__ static void sgd_kernel(float *__restrict__ p, L *__restrict__ lp, const G *__restrict__ g,
                                  float *__restrict__ v, size_t n, float lr, float mu, float wd,
                                  const loss_scale_t *__restrict__ ls) {
    float inv = 1.0f;
    if (SCALED) {
        if (ls->found_inf) return;
        inv = 1.0f / ls->scale;
    }
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float w = p[i];
        /* Unscaled, the expression is the one the update always had (the same rounding, bit for bit). */
        float d = SCALED ? (float)g[i] * inv + wd * w : (float)g[i] + wd * w;
        if (MOMENTUM) { d = mu * v[i] + d; v[i] = d; }
        w -= lr * d;
        p[i] = w;
        if constexpr (!std::is_void<L>::value) lp[i] = (L)w;
    }
}

// --- launchers
template <typename G, typename L, bool MOMENTUM>
static void sgd_launch_m(float *p, L *lp, const G *g, float *v, size_t n, float lr, float mu, float wd,
                         const loss_scale_t *ls, cudaStream_t stream) {
    const int threads = 256;
    const unsigned b = launch_blocks(n, threads, 4096);
    if (ls) sgd_kernel<G, L, MOMENTUM, true><<<b, threads, 0, stream>>>(p, lp, g, v, n, lr, mu, wd, ls);
    else sgd_kernel<G, L, MOMENTUM, false><<<b, threads, 0, stream>>>(p, lp, g, v, n, lr, mu, wd, ls);
}

template <typename G, typename L>
static void sgd_launch(float *p, L *lp, const G *g, float *v, size_t n, float lr, float mu, float wd,
                       const loss_scale_t *ls, cudaStream_t stream) {
    if (n == 0) return;
    if (mu > 0.0f) sgd_launch_m<G, L, true>(p, lp, g, v, n, lr, mu, wd, ls, stream);
    else sgd_launch_m<G, L, false>(p, lp, g, v, n, lr, mu, wd, ls, stream);
    CHECK_LAUNCH();
}

template <typename G>
static void sgd_by_copy(float *p, void *lp, dtype_t lp_dtype, const G *g, float *v, size_t n, float lr, float mu,
                        float wd, const loss_scale_t *ls, cudaStream_t stream) {
    if (!lp) sgd_launch(p, (void *)NULL, g, v, n, lr, mu, wd, ls, stream);
    else if (lp_dtype == DTYPE_FP16) sgd_launch(p, (__half *)lp, g, v, n, lr, mu, wd, ls, stream);
    else sgd_launch(p, (__nv_bfloat16 *)lp, g, v, n, lr, mu, wd, ls, stream);
}

void sgd_step(float *params, void *params_lp, dtype_t lp_dtype, const void *grads, dtype_t grad_dtype, float *momentum,
              size_t n, float lr, float mu, float wd, const loss_scale_t *ls, cudaStream_t stream) {
    if (grad_dtype == DTYPE_BF16)
        sgd_by_copy(params, params_lp, lp_dtype, (const __nv_bfloat16 *)grads, momentum, n, lr, mu, wd, ls, stream);
    else if (grad_dtype == DTYPE_FP16)
        sgd_by_copy(params, params_lp, lp_dtype, (const __half *)grads, momentum, n, lr, mu, wd, ls, stream);
    else
        sgd_by_copy(params, params_lp, lp_dtype, (const float *)grads, momentum, n, lr, mu, wd, ls, stream);
}
