/* gpt2_attn.h — causal multi-head self-attention, the plain path: cuBLAS strided-batched GEMMs for the scores and the
 * weighted values and a causal softmax kernel, forward and backward, with the (T, T) attention of every head kept.
 * Small shapes and the tests use it; cuDNN's fused attention is to be the fast path. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "../dtype.h"

#ifdef __cplusplus
extern "C" {
#endif
/* qkv (B, T, 3C): per row q, k, v, each C = NH heads of C / NH channels; out (B, T, C) with the heads side by side;
 * att (B, NH, T, T): P = softmax over j <= i of q_i . k_j / sqrt(C / NH), 0 above the diagonal, kept for backward.
 * All of type t (fp32 or bf16; fp32 accumulation). tf32: fp32 products on TF32 tensor cores, else strict fp32 (as
 * the handle's math mode allows). The cuBLAS handle h is bound to `stream`. */
void gpt2_attn_forward(cublasHandle_t h, dtype_t t, int tf32, const void *qkv, void *att, void *out, int B, int T,
                       int C, int NH, cudaStream_t stream);
/* From dout (B, T, C): dqkv (B, T, 3C) overwritten. datt: scratch of B * NH * T * T elements of type t. */
void gpt2_attn_backward(cublasHandle_t h, dtype_t t, int tf32, const void *qkv, const void *att, const void *dout,
                        void *datt, void *dqkv, int B, int T, int C, int NH, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
