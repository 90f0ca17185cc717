/* gpt2_kernels.h — GPT-2's own kernels over (rows, C) activations of fp32 or bf16 with fp32 arithmetic: the token
 * and position embedding, LayerNorm, GELU (tanh) and the fused softmax cross-entropy over the vocabulary. */
#pragma once
#include <stddef.h>
#include <cuda_runtime.h>
#include "../dtype.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Activations of type t are fp32 or bf16 (fp16 stops the process: it would need a loss scale). Parameters are read
 * in fp32 unless said otherwise; parameter gradients are fp32 and follow layer.h's rule: dw = dw_beta * dw + new. */

/* out[r, c] = wte[tok[r], c] + wpe[r % seq, c] for r < rows (rows = batch * seq), wte (vocab, C) and wpe (seq.., C)
 * of type t (the bf16 copy of the parameters under bf16). A token outside [0, vocab) gives a row of NaN. */
void gpt2_embed_forward(const int *tok, const void *wte, const void *wpe, void *out, dtype_t t, int rows, int seq,
                        int C, int vocab, cudaStream_t stream);
/* Scratch bytes gpt2_embed_backward needs for `rows` tokens of a vocabulary of `vocab` (cub's radix sort). */
size_t gpt2_embed_scratch_bytes(int rows, int vocab);
/* dwte[v] += sum of dout[r] over the rows r whose token is v; dwpe[p] += sum of dout[r] over rows at position p:
 * always added (the token embedding is also the head, whose gradient the head's GEMM wrote first). Deterministic:
 * the rows are sorted by token (a stable radix sort on the device) and each token's row is summed by one block in
 * row order, without atomics. Tokens outside [0, vocab) add nothing. */
void gpt2_embed_backward(const int *tok, const void *dout, float *dwte, float *dwpe, dtype_t t, int rows, int seq,
                         int C, int vocab, void *scratch, size_t scratch_bytes, cudaStream_t stream);

/* y = (x - mean) * rstd * w + b per row of C (eps 1e-5, the biased variance, as nn.LayerNorm); mean and rstd (fp32,
 * rows each, either NULL) are kept for backward. */
void gpt2_layernorm_forward(const void *x, const float *w, const float *b, void *y, float *mean, float *rstd,
                            dtype_t t, int rows, int C, cudaStream_t stream);
size_t gpt2_layernorm_scratch_bytes(int rows, int C);
/* dx = dx_beta * dx + LayerNorm's input gradient (dx_beta 1: the residual stream's gradient is added to);
 * dw = dw_beta * dw + sum over rows of dy * xhat, db = dw_beta * db + sum of dy: deterministic (per-block partial
 * sums in scratch, then summed in block order). dx and scratch: always. */
void gpt2_layernorm_backward(const void *x, const float *w, const float *mean, const float *rstd, const void *dy,
                             void *dx, float dx_beta, float *dw, float *db, float dw_beta, dtype_t t, int rows, int C,
                             void *scratch, size_t scratch_bytes, cudaStream_t stream);

/* y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GPT-2's GELU, over n elements (y may be x). */
void gpt2_gelu_forward(const void *x, void *y, dtype_t t, size_t n, cudaStream_t stream);
/* dx = dy * GELU'(x) (dx may be dy). */
void gpt2_gelu_backward(const void *x, const void *dy, void *dx, dtype_t t, size_t n, cudaStream_t stream);

/* Softmax cross-entropy over `vocab` logits per row, logits (rows, ld) of type t, ld >= vocab (the columns past vocab
 * are the padding of the head and take no part). Per row r with target[r] in [0, vocab):
 * loss = logsumexp(z) - z[target]; target -1: ignored (loss 0, no gradient); any other value: loss NaN.
 * losses (fp32, rows; NULL: not written); acc (NULL, or device doubles): acc[0] += sum of losses, acc[1] += targets
 * counted. With grad, the logits are overwritten in place with dloss/dz * scale (softmax - onehot; 0 for an ignored
 * row and the padding columns), rounded once to t: the logits are read twice and never copied to fp32. */
void gpt2_xent(void *logits, const int *target, float *losses, double *acc, dtype_t t, int rows, int vocab, int ld,
               float scale, int grad, cudaStream_t stream);
#ifdef __cplusplus
}
#endif
