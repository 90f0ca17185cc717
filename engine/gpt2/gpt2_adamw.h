/* gpt2_adamw.h — AdamW over a flat buffer cut into tensors (gpt2_shape.h's slices), with decoupled weight decay on
 * the tensors flagged for it, fp32 master weights and moments, an optional bf16 copy written in the same pass, the
 * rate and the step count read on the device (optim.h), and clipping by the global gradient norm without a host sync.
 */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "gpt2_shape.h"

#ifdef __cplusplus
extern "C" {
#endif
typedef struct {
    float beta1, beta2, eps, weight_decay;
    float max_norm;         /* clip the gradient to this global L2 norm; <= 0: no clipping */
    int n_chunks;           /* the flat buffer's slices cut into chunks of one slice each, one block per chunk */
    size_t *chunk_at;       /* device, n_chunks each */
    int *chunk_len;
    int *chunk_decay;
} gpt2_adamw_t;

/* Sets up a on the current device for the n slices (weight decay where slice.decay), PyTorch's defaults being
 * beta1 0.9, beta2 0.999, eps 1e-8 (GPT-2 recipes use 0.9, 0.95, 1e-8, weight decay 0.1, max_norm 1). 0, or -1 with
 * the reason in err (out of memory). */
int gpt2_adamw_init(gpt2_adamw_t *a, const gpt2_slice_t *slice, int n, float beta1, float beta2, float eps,
                    float weight_decay, float max_norm, char *err, size_t errlen);
void gpt2_adamw_free(gpt2_adamw_t *a);
/* One AdamW step of the slices' elements, as torch.optim.AdamW (decoupled decay) after
 * torch.nn.utils.clip_grad_norm_: with c = min(1, max_norm / (sqrt(*sumsq) + 1e-6)) where clipping is on,
 *   g = c * grad;  m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;
 *   p -= lr * (m / (1 - beta1^t) / (sqrt(v / (1 - beta2^t)) + eps) + wd * p)    (wd: 0 on undecayed slices)
 * lr = *lr and t = *step (device memory: optim_t's lr and step after optim_begin_step, t counting from 1), so a
 * captured step follows the schedule. sumsq (device, a double: the squared global norm, which optim_sumsq adds to a
 * zeroed accumulator over every gradient, after any all-reduce) is read only where clipping is on. params_lp: NULL,
 * or the bf16 copy of the parameters, rewritten from each updated value. Elements between slices are not touched. */
void gpt2_adamw_step(const gpt2_adamw_t *a, float *params, void *params_lp, const float *grads, float *m, float *v,
                     const float *lr, const long long *step, const double *sumsq, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
