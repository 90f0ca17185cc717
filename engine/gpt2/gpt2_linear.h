/* gpt2_linear.h — GPT-2's linear layers through cuBLASLt: y = x W^T + b with the bias and GELU fused into the GEMM's
 * epilogue, and backward's three products (dx, with GELU's derivative fused where the input came from a GELU; dW;
 * db through a GEMM with a vector of ones). W is (out, in) row-major, as nn.Linear's; x (rows, in), y (rows, out). */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include <cublasLt.h>
#include "../dtype.h"
#include "../gpu.h"

#ifdef __cplusplus
extern "C" {
#endif
/* A cuBLASLt handle, and the GPU whose cuBLAS workspace (used one call at a time on its stream, as cuBLAS's own
 * calls are) and vectors of ones (for the bias gradients' GEMMs: fp32, and bf16 under a bf16 math) it borrows. */
typedef struct {
    cublasLtHandle_t lt;
    const gpu_t *g;
    int max_rows;           /* the ones reserved on g for up to this many rows */
} gpt2_lt_t;

/* Creates the handle on g's device and reserves g's ones for up to max_rows rows (gpu_ones_reserve), before any
 * product is captured into a graph (the ones' address must not move after). Synchronises the device. */
void gpt2_lt_init(gpt2_lt_t *c, gpu_t *g, int max_rows);
void gpt2_lt_free(gpt2_lt_t *c);

/* y (rows, out) = x (rows, in) W^T + b, of type t (fp32 or bf16; W and b of type t too: the bf16 copy of the
 * parameters under bf16); b NULL: no bias. pre NULL: y is the product; else y = GELU(x W^T + b) and pre receives
 * x W^T + b (backward's GELU input). tf32: fp32 operands through TF32 tensor cores. Returns 1 where the bias and
 * GELU ran in cuBLASLt's epilogue, 0 where cuBLASLt had no algorithm for it (then the GELU runs as its own kernel). */
int gpt2_linear_forward(gpt2_lt_t *c, dtype_t t, int tf32, const void *x, const void *w, const void *b, void *y,
                        void *pre, int rows, int in, int out, cudaStream_t stream);
/* y (rows, out) = res + x W^T + b: the residual add in the GEMM's epilogue (its C operand at beta 1), the sum rounded
 * to t once; res may be y. Backward has nothing of its own: the residual's gradient is y's, and the product's is
 * gpt2_linear_backward's. */
void gpt2_linear_forward_residual(gpt2_lt_t *c, dtype_t t, int tf32, const void *x, const void *w, const void *b,
                                  const void *res, void *y, int rows, int in, int out, cudaStream_t stream);
/* Backward of y = x W^T + b given dy (rows, out):
 *   dx (rows, in) = dx_beta dx + dy W, times GELU'(x_pre) elementwise where x_pre is not NULL (x = GELU(x_pre): the
 *   previous layer's `pre`; then dx_beta must be 0); dx NULL: not computed;
 *   dw (out, in) = dw_beta dw + dy^T x and db (out) = dw_beta db + sum of dy's rows, in fp32 (db NULL: no bias).
 * Returns 1 where GELU's derivative ran in the epilogue (or none was asked for), 0 where it ran as its own kernel. */
int gpt2_linear_backward(gpt2_lt_t *c, dtype_t t, int tf32, const void *x, const void *w, const void *dy, void *dx,
                         float dx_beta, const void *x_pre, float *dw, float *db, float dw_beta, int rows, int in,
                         int out, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
