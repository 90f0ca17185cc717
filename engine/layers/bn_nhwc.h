/* bn_nhwc.h — batch-norm training kernels of our own for NHWC activations (fp32, bf16 or fp16, statistics in fp32):
 * forward (statistics, running statistics, normalise, + residual, ReLU) and backward, each in two launches or one
 * persistent one. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "../dtype.h"

/* How the kernels cover an (M, C) activation, M = N*H*W rows of C channels: blocks of tw x lanes threads, each
 * thread `vec` adjacent channels (one 16-byte access) of every lanes-th row; tiles blocks across C, row blocks
 * along M, as many as are resident at once (one wave). */
typedef struct {
    int vec;                    /* channels per access: 16 bytes' worth, or 1 (C not a multiple, or misaligned) */
    int tw, lanes;              /* blockDim.x (vectors across C), blockDim.y (rows in flight) */
    int tiles;                  /* gridDim.x */
    int rb;                     /* gridDim.y: row blocks, each a contiguous chunk of rows; a reduction keeps one
                                 * partial sum per row block and channel, its element-wise pass takes the same
                                 * chunks */
} bn_nhwc_grid_t;

/* The ways the vector grid's kernels can run (the scalar grid always takes the first):
 * - REG: two passes each way (a reduction, then an element-wise pass), rows streamed through registers;
 * - RING: the same passes, rows streamed through a per-thread ring of cp.async copies in shared memory (more bytes in
 *   flight at no cost in registers);
 * - PERSIST: one cooperative launch each way: statistics, a grid-wide barrier, then the element-wise pass from the
 *   copy of the rows each block kept in shared memory (the rest re-read, from L2 where the tensor fits there). */
typedef enum { BN_NHWC_REG = 0, BN_NHWC_RING = 1, BN_NHWC_PERSIST = 2, BN_NHWC_IMPLS = 3 } bn_nhwc_impl_t;

/* One batch-norm layer's kernels: its shape, its grids and its device scratch (allocated once, at init, so a
 * forward and a backward allocate nothing, synchronise nothing and can be captured in a CUDA graph). */
typedef struct {
    long long m;                /* rows: N*H*W */
    int c;                      /* channels */
    dtype_t dtype;              /* x, x1, y, dy, dx, dx1; gamma, beta, statistics and their gradients are fp32 */
    int fuse;                   /* BN_FUSE_NONE, BN_FUSE_RELU, BN_FUSE_ADD_RELU (layer.h) */
    bn_nhwc_grid_t grid[BN_NHWC_IMPLS];   /* used when C is a multiple of vec and every pointer 16-byte aligned;
                                           * grid[BN_NHWC_PERSIST].rb = 0 where that way cannot run */
    bn_nhwc_grid_t scalar;      /* otherwise (with BN_NHWC_REG's kernels) */
    int impl[2];                /* the way the vector grid's forward [0] and backward [1] run (init: RING) */
    int stash[2];               /* PERSIST: rows per thread kept in shared memory, forward and backward */
    float *scratch;             /* device: per-channel coefficients, then partial sums (bn_nhwc_scratch_bytes) */
    unsigned *arrivals;         /* device: blocks done per tile (each reduction's last block resets it to 0) */
    unsigned *barrier;          /* device, after them: the persistent kernels' barrier (a count, a generation) */
    unsigned char *bits;        /* device, in the scratch after the counts: the ReLU mask y > 0, 1 bit per element
                                 * (bit j of byte row * c/8 + ch/8 for channel ch = 8 (ch/8) + j), which every
                                 * forward writes and a backward on the vector grid reads instead of y; only with
                                 * BN_FUSE_ADD_RELU in a 2-byte type with c a multiple of 8, else NULL */
} bn_nhwc_t;

#ifdef __cplusplus
extern "C" {
#endif
/* 1 where these kernels keep the ReLU mask as bits (bn_nhwc_t.bits): BN_FUSE_ADD_RELU in a 2-byte type with c a
 * multiple of 8, where the vector grid's threads hold whole bytes of it. Host only. */
int bn_nhwc_has_bits(int c, dtype_t t, int fuse);
/* Device bytes bn_nhwc_init allocates for an (m, c) activation of type t and fuse mode `fuse` (the ReLU mask's bits,
 * m c / 8 bytes, where bn_nhwc_has_bits): known before any allocation, for the model's memory plan. Host only. */
size_t bn_nhwc_scratch_bytes(long long m, int c, dtype_t t, int fuse);
/* Plans the grids for `device` and allocates the scratch, zeroing it on `stream` (the stream the kernels will run
 * on, so they find it zeroed): call at setup. m >= 2, c >= 1. */
void bn_nhwc_init(bn_nhwc_t *b, long long m, int c, dtype_t t, int fuse, int device, cudaStream_t stream);
void bn_nhwc_free(bn_nhwc_t *b);
/* 1 where the vector grid's kernels can run impl for this layer (PERSIST: a cooperative grid of at least one block
 * per tile fits the device), else 0. */
int bn_nhwc_impl_ok(const bn_nhwc_t *b, int impl);
/* Makes the forward (dir 0) or the backward (dir 1) run impl on the vector grid: any pairing is valid (they share
 * the saved statistics and the mask bits). impl must be bn_nhwc_impl_ok. */
void bn_nhwc_set_impl(bn_nhwc_t *b, int dir, int impl);
/* "reg", "ring", "persist". */
const char *bn_nhwc_impl_name(int impl);

/* Training forward: batch mean and biased variance per channel over the m rows, saved mean and
 * 1/sqrt(var + eps) (bn_nhwc_saved), running_mean/var = (1 - momentum) running + momentum batch with the unbiased
 * variance (x m/(m-1)), then y = relu(gamma (x - mean) / sqrt(var + eps) + beta [+ beta_add] [+ x1]) (ReLU unless
 * fuse is BN_FUSE_NONE, x1 only for BN_FUSE_ADD_RELU; beta_add, a bias folded into the shift, may be NULL), and
 * the mask y > 0 into b->bits where there are bits (whichever grid the pointers allow: they stay valid for the
 * backward). Deterministic: fixed reduction order, no floating-point atomics. */
void bn_nhwc_forward(const bn_nhwc_t *b, const void *x, const void *x1, void *y, const float *gamma,
                     const float *beta, const float *beta_add, float *running_mean, float *running_var, double eps,
                     double momentum, cudaStream_t stream);
/* Training backward from the statistics (and mask bits) the last forward saved, with that forward's x and y: dpre =
 * dy masked where the pre-activation is not > 0 (fused ReLU: with the residual add, the forward's bits of y > 0
 * where there are bits and every pointer is 16-byte aligned, else read as y > 0, the same mask; without the add
 * recomputed from x, so y is not read and may be NULL), dbeta = sum dpre, dgamma = sum dpre xhat, accumulated as
 * d = dw_beta d + (each) into dgamma / dbeta, the new dbeta also written to dbeta_copy where not NULL (the folded
 * bias's gradient); dx = dx_beta dx + gamma invstd (dpre - dbeta/m - xhat dgamma/m)
 * where dx != NULL; dx1 = dx1_beta dx1 + dpre where dx1 != NULL (BN_FUSE_ADD_RELU). A beta of 0 never reads the
 * old value (it may hold NaN). */
void bn_nhwc_backward(const bn_nhwc_t *b, const void *x, const void *y, const void *dy, void *dx, float dx_beta,
                      void *dx1, float dx1_beta, const float *gamma, float *dgamma, float *dbeta, float *dbeta_copy,
                      float dw_beta, cudaStream_t stream);
/* Device pointer to the saved batch mean (c floats) followed by the saved 1/sqrt(var + eps) (c floats). */
const float *bn_nhwc_saved(const bn_nhwc_t *b);
/* The forward's statistics pass alone (the first of its two launches), for benchmarks: the saved and running
 * statistics and the coefficients as bn_nhwc_forward leaves them. Needs the vector grid (aligned x). */
void bn_nhwc_forward_stats(const bn_nhwc_t *b, const void *x, const float *gamma, const float *beta,
                           const float *beta_add, float *running_mean, float *running_var, double eps, double momentum,
                           cudaStream_t stream);
/* "vec 8, 1 x 512 blocks" for logs and tests. */
void bn_nhwc_describe(const bn_nhwc_t *b, char *buf, size_t len);
#ifdef __cplusplus
}
#endif
