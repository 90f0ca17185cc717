/* bn_nhwc_launch.cuh — host side shared by bn_nhwc.cu (two passes each way) and bn_nhwc_persist.cu (one persistent
 * launch each way): a call's arguments, the scratch's layout, which mask a layer's backward reads. */
#pragma once
#include <cuda_runtime.h>
#include "bn_nhwc.h"
#include "../layer.h"
#include "../check.h"
#include "bn_nhwc_block.cuh"

/* The arguments of one call, type-erased; the launchers cast them to the layer's element type T. */
typedef struct {
    const void *x, *x1;
    void *y;
    const float *gamma, *beta, *beta_add;
    float *rm, *rv;
    double eps, mom;
} fwd_args_t;

typedef struct {
    const void *x, *y, *dy;
    void *dx, *dx1;
    float dx_beta, dx1_beta, dw_beta;
    const float *gamma;
    float *dgamma, *dbeta, *dbeta_copy;
} bwd_args_t;

/* The scratch: CO_COUNT c coefficients, then 2 c floats of partial sums per row block. */
static inline float *bn_part(const bn_nhwc_t *b) { return b->scratch + (size_t)CO_COUNT * b->c; }

/* The mask a backward on the vector grid reads (bn_nhwc_block.cuh's MASK_*): by fuse mode, bits where there are. */
static inline int bn_mask_of(const bn_nhwc_t *b) {
    return b->fuse == BN_FUSE_NONE ? 0 : b->fuse == BN_FUSE_RELU ? 2 : b->bits ? 3 : 1;
}

/* bn_nhwc_persist.cu: plans the persistent grid and its stash into b->grid[BN_NHWC_PERSIST] and b->stash (rb 0 where
 * no grid of one block per tile fits); runs a forward / a backward in one cooperative launch. */
void bn_persist_plan(bn_nhwc_t *b, int device);
void bn_persist_forward(const bn_nhwc_t *b, const fwd_args_t &a, cudaStream_t s);
void bn_persist_backward(const bn_nhwc_t *b, const bwd_args_t &a, cudaStream_t s);

/* Raises a kernel's dynamic shared memory limit to bytes where it is over the default 48 KB. */
template <typename K>
static inline void bn_allow_smem(K *kernel, size_t bytes) {
    if (bytes > (48u << 10))
        CHECK_CUDA(cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
}
