/* sgd.h — SGD with momentum and weight decay over a flat parameter buffer, in one kernel launch.
 * Same update as torch.optim.SGD (dampening 0, no Nesterov), so runs compare step for step. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "dtype.h"
#include "loss_scale.h"

#ifdef __cplusplus
extern "C" {
#endif
/* g' = grad + wd * p;  v = mu * v + g' (v starts at 0);  p -= lr * (mu > 0 ? v : g').  momentum may be NULL when
 * mu == 0. grads hold n elements of grad_dtype: fp32 normally, bf16 where a bf16 all-reduce left the summed
 * gradient (--grad-dtype bf16), which the update then reads directly instead of a cast back to fp32 first.
 * params_bf16, when not NULL, receives the bf16 rounding of every updated parameter (the copy --math bf16
 * convolutions and dense layers read): written by this kernel, so the copy costs no pass of its own. */
void sgd_step(float *params, void *params_bf16, const void *grads, dtype_t grad_dtype, float *momentum, size_t n,
              float lr, float mu, float wd, cudaStream_t stream);
/* sgd_step with the low-precision copy's type named (lp_dtype: bf16 or fp16; params_lp NULL for none), grads of
 * grad_dtype (fp32, bf16 or fp16), and fp16's loss scale ls (device memory; NULL: none): the gradients are divided
 * by ls->scale, and where ls->found_inf the step writes nothing (parameters, momentum and copy stay as they were). */
void sgd_step_scaled(float *params, void *params_lp, dtype_t lp_dtype, const void *grads, dtype_t grad_dtype,
                     float *momentum, size_t n, float lr, float mu, float wd, const loss_scale_t *ls,
                     cudaStream_t stream);
#ifdef __cplusplus
}
#endif
