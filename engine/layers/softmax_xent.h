/* softmax_xent.h — fused, numerically stable softmax + cross-entropy over (n, classes) logits, with its gradient.
 * Loss and correct-prediction counts accumulate on the GPU so a step needs no host synchronisation. */
#pragma once
#include <cuda_runtime.h>
#include "../dtype.h"

#ifdef __cplusplus
extern "C" {
#endif
/* For rows i < n_valid: acc[0] += -log softmax(logits_i)[label_i], acc[1] += (argmax logits_i == label_i).
 * If dlogits != NULL, for rows i < n: dlogits_i = scale * (softmax(logits_i) - onehot(label_i)) for i < n_valid,
 * and 0 for padding rows. scale is 1/global_batch, so replicas' shard gradients sum to the batch gradient, times
 * *loss_scale (device memory: fp16's dynamic loss scale, read at every launch so a captured graph follows it) where
 * loss_scale is not NULL. logits and dlogits are of type t; the loss is computed in fp32 whatever t (as autocast
 * computes cross-entropy in fp32), and dlogits rounded to t once. */
void softmax_xent(const void *logits, const int *labels, void *dlogits, dtype_t t, int n, int n_valid, int classes,
                  float scale, const float *loss_scale, double *acc, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
