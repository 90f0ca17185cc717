/* gpt2_sdpa.h — GPT-2's causal attention through cuDNN's fused flash attention (backend operation graphs, bf16): the
 * forward keeps the softmax's log-sum-exp per row (B x NH x T floats) instead of the (T, T) probabilities. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#ifdef __cplusplus
extern "C" {
#endif
#define GPT2_SDPA_PARTS 256   /* descriptors of both graphs, their plans and heuristics' configs */

/* Both plans for one shape, built once (gpt2_sdpa_init) and run any number of times on any stream. */
typedef struct {
    cudnnHandle_t h;           /* borrowed (the GPU's): its stream is set per call */
    int B, T, C, NH;
    int deterministic;         /* backward writes dQ without atomics: the same bits every run */
    cudnnBackendDescriptor_t fwd, bwd;   /* the execution plans */
    int64_t fwd_engine, bwd_engine;      /* cuDNN's global engine index of each (for the record) */
    size_t fwd_ws, bwd_ws;     /* cuDNN's own workspace of each plan */
    size_t ws_bytes;           /* the workspace a caller passes: the larger plan's, plus backward's row sums */
    float scale, neg_inf, one; /* by-value scalars the variant packs point at */
    cudnnBackendDescriptor_t parts[GPT2_SDPA_PARTS];
    int n_parts;
} gpt2_sdpa_t;

/* Builds both plans for qkv (B, T, 3C) with NH heads in bf16 on the current device with the cuDNN handle h (which
 * must outlive a): 0, or -1 with the failed call (file:line, cuDNN's status and last error) in err and nothing left
 * allocated. A caller falls back to the plain path (gpt2_attn.h) on -1: an older GPU or cuDNN, or a shape the fused
 * engines refuse. */
int gpt2_sdpa_init(gpt2_sdpa_t *a, cudnnHandle_t h, int B, int T, int C, int NH, char *err, size_t errlen);
void gpt2_sdpa_free(gpt2_sdpa_t *a);

/* qkv (B, T, 3C) bf16 as gpt2_attn.h has it: out (B, T, C) bf16, heads side by side; stats (B, NH, T) fp32: each
 * row's max + log(sum exp) of the scaled causal scores, what backward rebuilds P from. ws: a.ws_bytes of device
 * memory, 256-byte aligned, not used by anything else during the call. */
void gpt2_sdpa_forward(gpt2_sdpa_t *a, const void *qkv, void *out, float *stats, void *ws, cudaStream_t stream);
/* From dout (B, T, C): dqkv (B, T, 3C) overwritten with dq, dk, dv in qkv's layout. out and stats: the forward's. */
void gpt2_sdpa_backward(gpt2_sdpa_t *a, const void *qkv, const void *out, const float *stats, const void *dout,
                        void *dqkv, void *ws, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
