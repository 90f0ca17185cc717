/* loss_scale_gpu.h — fp16's loss scale on the device (loss_scale.h's state and schedule): allocated once, then per
 * step a check of the gradients for an inf or a NaN and the schedule's update, both queued on a stream, so a step
 * synchronises nothing and can be captured in a CUDA graph. A step's order: the loss's gradient scaled by s->scale
 * (read on the device), backward, the reduction of the gradients (data parallel), loss_scale_check, the update that
 * reads the state (sgd_step), then loss_scale_advance. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "dtype.h"
#include "loss_scale.h"

#ifdef __cplusplus
extern "C" {
#endif
/* A device loss_scale_t at the schedule's start, written on stream (before any step is queued on it). */
loss_scale_t *loss_scale_alloc(loss_scale_cfg_t c, cudaStream_t stream);
void loss_scale_free(loss_scale_t *dev);
/* Sets dev->found_inf where any of the n gradients (of type t) is an inf or a NaN; leaves it as it was otherwise (so
 * several buffers, or pipeline stages' flags, combine by checking each). */
void loss_scale_check(loss_scale_t *dev, const void *grads, dtype_t t, size_t n, cudaStream_t stream);
/* Sets dev->found_inf where any of flags[0..n) (device memory on dev's GPU) is set: other GPUs' found_inf, copied
 * here, where each checked a part of one step's gradients (the pipeline's stages). */
void loss_scale_combine(loss_scale_t *dev, const int *flags, int n, cudaStream_t stream);
/* The schedule's step (loss_scale_update) on the device: halve and count a skip, or grow after c.interval clean
 * steps; clears found_inf. */
void loss_scale_advance(loss_scale_t *dev, loss_scale_cfg_t c, cudaStream_t stream);
/* The state as of the work queued so far on stream (synchronises it): for the CSV's columns at an epoch's end. */
loss_scale_t loss_scale_read(const loss_scale_t *dev, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
