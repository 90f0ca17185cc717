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
/* g' = grad / scale + wd * p;  v = mu * v + g' (v starts at 0);  p -= lr * (mu > 0 ? v : g').  momentum may be NULL
 * when mu == 0. grads hold n elements of grad_dtype: fp32 normally, bf16 or fp16 where a 2-byte all-reduce left the
 * summed gradient (--grad-dtype), which the update then reads directly instead of a cast back to fp32 first.
 * params_lp, when not NULL, receives the rounding to lp_dtype (bf16 or fp16) of every updated parameter (the copy
 * --math bf16 | fp16 convolutions and dense layers read): written by this kernel, so the copy costs no pass of its
 * own. ls (device memory) is fp16's loss scale, or NULL for none (scale 1): the gradients are divided by ls->scale,
 * and where ls->found_inf the step writes nothing (parameters, momentum and copy stay as they were).
 * grads_lp, when not NULL (fp32 grads and a params_lp copy only): n more gradients of lp_dtype, added to grads' as
 * they are read, where cuDNN wrote the convolutions' filter gradients in their 2-byte type (model_bind_grads_lp)
 * instead of backward widening each into grads; every parameter's gradient is in one of the two, zero in the other.
 * lr (device memory) is the step's rate, read by the kernel: a captured step follows the schedule (engine/optim.h). */
void sgd_step(float *params, void *params_lp, dtype_t lp_dtype, const void *grads, dtype_t grad_dtype,
              const void *grads_lp, float *momentum, size_t n, const float *lr, float mu, float wd,
              const loss_scale_t *ls, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
