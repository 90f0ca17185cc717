/* tensor.h — activation shapes. Every activation is NHWC: cuDNN's tensor-core kernels are NHWC-native,
 * so keeping NHWC end to end avoids the NCHW<->NHWC transposes that cost PyTorch ~1.8 ms per ResNet step. */
#pragma once
#include <stddef.h>

typedef struct { int n, h, w, c; } shape_t;   /* (N, H, W, C), C fastest */

static inline size_t shape_numel(shape_t s) { return (size_t)s.n * s.h * s.w * s.c; }
static inline size_t shape_per_sample(shape_t s) { return (size_t)s.h * s.w * s.c; }
