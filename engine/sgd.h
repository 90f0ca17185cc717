/* sgd.h — SGD with momentum and weight decay over a flat parameter buffer, in one kernel launch.
 * Same update as torch.optim.SGD (dampening 0, no Nesterov), so runs compare step for step. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif
/* g' = grad + wd * p;  v = mu * v + g' (v starts at 0);  p -= lr * (mu > 0 ? v : g').  momentum may be NULL when mu == 0. */
void sgd_step(float *params, const float *grads, float *momentum, size_t n, float lr, float mu, float wd,
              cudaStream_t stream);
#ifdef __cplusplus
}
#endif
