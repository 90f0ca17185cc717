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
 * the low-precision copy of the parameters also written (bf16 or fp16), void for none. SPLIT: a second gradient
 * buffer g2 of type L, where cuDNN wrote the convolutions' filter gradients; each parameter's gradient is in one of
 * g and g2, the other holding zero, so their sum is it exactly. Gradients are widened to fp32 before any arithmetic:
 * the master update stays fp32. ls (fp16's loss scale, on the device) or NULL: the gradients
 * are divided by its scale, and where its check found an inf or a NaN nothing is written at all (the step skipped,
 * as GradScaler.step skips optimizer.step). */
template <typename G, typename L, bool MOMENTUM, bool SCALED, bool SPLIT>
__global__ static void sgd_kernel(float *__restrict__ p, L *__restrict__ lp, const G *__restrict__ g,
                                  const L *__restrict__ g2, float *__restrict__ v, size_t n,
                                  const float *__restrict__ lr_p, float mu, float wd,
                                  const loss_scale_t *__restrict__ ls) {
    const float lr = *lr_p;   /* the schedule's rate of this step, written on the device (engine/optim.h) */
    float inv = 1.0f;
    if (SCALED) {
        if (ls->found_inf) return;
        inv = 1.0f / ls->scale;
    }
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float w = p[i];
        float gi = (float)g[i];
        if constexpr (SPLIT) gi += (float)g2[i];
        /* Unscaled, the expression is the one the update always had (the same rounding, bit for bit). */
        float d = SCALED ? gi * inv + wd * w : gi + wd * w;
        if (MOMENTUM) { d = mu * v[i] + d; v[i] = d; }
        w -= lr * d;
        p[i] = w;
        if constexpr (!std::is_void<L>::value) lp[i] = (L)w;
    }
}

// --- launchers
template <typename G, typename L, bool MOMENTUM, bool SPLIT>
static void sgd_launch_m(float *p, L *lp, const G *g, const L *g2, float *v, size_t n, const float *lr, float mu,
                         float wd, const loss_scale_t *ls, cudaStream_t stream) {
    const int threads = 256;
    const unsigned b = launch_blocks(n, threads, 4096);
    if (ls) sgd_kernel<G, L, MOMENTUM, true, SPLIT><<<b, threads, 0, stream>>>(p, lp, g, g2, v, n, lr, mu, wd, ls);
    else sgd_kernel<G, L, MOMENTUM, false, SPLIT><<<b, threads, 0, stream>>>(p, lp, g, g2, v, n, lr, mu, wd, ls);
}

template <typename G, typename L, bool SPLIT>
static void sgd_launch(float *p, L *lp, const G *g, const L *g2, float *v, size_t n, const float *lr, float mu,
                       float wd, const loss_scale_t *ls, cudaStream_t stream) {
    if (n == 0) return;
    if (mu > 0.0f) sgd_launch_m<G, L, true, SPLIT>(p, lp, g, g2, v, n, lr, mu, wd, ls, stream);
    else sgd_launch_m<G, L, false, SPLIT>(p, lp, g, g2, v, n, lr, mu, wd, ls, stream);
    CHECK_LAUNCH();
}

/* The split form only with fp32 gradients beside a 2-byte copy: the one case it has (sgd.h). */
template <typename G, typename L>
static void sgd_by_split(float *p, L *lp, const G *g, const void *g2, float *v, size_t n, const float *lr,
                         float mu, float wd, const loss_scale_t *ls, cudaStream_t stream) {
    if constexpr (std::is_same<G, float>::value)
        if (g2) return sgd_launch<G, L, true>(p, lp, g, (const L *)g2, v, n, lr, mu, wd, ls, stream);
    if (g2) check_fail(__FILE__, __LINE__, "sgd_step", "split gradients beside 2-byte ones");
    sgd_launch<G, L, false>(p, lp, g, (const L *)NULL, v, n, lr, mu, wd, ls, stream);
}

template <typename G>
static void sgd_by_copy(float *p, void *lp, dtype_t lp_dtype, const G *g, const void *g2, float *v, size_t n,
                        const float *lr, float mu, float wd, const loss_scale_t *ls, cudaStream_t stream) {
    if (!lp) {
        if (g2) check_fail(__FILE__, __LINE__, "sgd_step", "split gradients without a 2-byte copy");
        sgd_launch<G, void, false>(p, (void *)NULL, g, (const void *)NULL, v, n, lr, mu, wd, ls, stream);
    } else if (lp_dtype == DTYPE_FP16) {
        sgd_by_split(p, (__half *)lp, g, g2, v, n, lr, mu, wd, ls, stream);
    } else {
        sgd_by_split(p, (__nv_bfloat16 *)lp, g, g2, v, n, lr, mu, wd, ls, stream);
    }
}

void sgd_step(float *params, void *params_lp, dtype_t lp_dtype, const void *grads, dtype_t grad_dtype,
              const void *grads_lp, float *momentum, size_t n, const float *lr, float mu, float wd,
              const loss_scale_t *ls, cudaStream_t stream) {
    if (grad_dtype == DTYPE_BF16)
        sgd_by_copy(params, params_lp, lp_dtype, (const __nv_bfloat16 *)grads, grads_lp, momentum, n, lr, mu, wd, ls,
                    stream);
    else if (grad_dtype == DTYPE_FP16)
        sgd_by_copy(params, params_lp, lp_dtype, (const __half *)grads, grads_lp, momentum, n, lr, mu, wd, ls, stream);
    else
        sgd_by_copy(params, params_lp, lp_dtype, (const float *)grads, grads_lp, momentum, n, lr, mu, wd, ls, stream);
}
