/* gpt2_adamw.cu — AdamW for GPT-2's flat buffers (gpt2_adamw.h): one block per chunk of a slice, so the weight
 * decay flag, the clipping factor and the bias corrections are per block, computed once, not per element. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_bf16.h>
#include "gpt2_adamw.h"
#include "../check.h"
#include "../gpu.h"

#define ADAMW_CHUNK 8192
#define ADAMW_THREADS 256

// --- kernels

__global__ static void adamw_kernel(float *p, __nv_bfloat16 *lp, const float *g, float *m, float *v,
                                    const size_t *chunk_at, const int *chunk_len, const int *chunk_decay,
                                    float beta1, float beta2, float eps, float wd, float max_norm,
                                    const float *lr_p, const long long *step, const double *sumsq) {
    __shared__ float sh[4];   /* clip factor, 1 / (1 - beta1^t), 1 / sqrt(1 - beta2^t), lr */
    if (threadIdx.x == 0) {
        double t = (double)*step, clip = 1.0;
        if (max_norm > 0.0f) {
            clip = (double)max_norm / (sqrt(*sumsq) + 1e-6);
            if (clip > 1.0) clip = 1.0;
        }
        sh[0] = (float)clip;
        sh[1] = (float)(1.0 / (1.0 - pow((double)beta1, t)));
        sh[2] = (float)(1.0 / sqrt(1.0 - pow((double)beta2, t)));
        sh[3] = *lr_p;
    }
    __syncthreads();
    float clip = sh[0], bc1 = sh[1], bc2 = sh[2], lr = sh[3];
    float decay = chunk_decay[blockIdx.x] ? wd : 0.0f;
    size_t at = chunk_at[blockIdx.x];
    for (int k = threadIdx.x; k < chunk_len[blockIdx.x]; k += blockDim.x) {
        size_t i = at + k;
        float gi = g[i] * clip, w = p[i];
        float mi = beta1 * m[i] + (1.0f - beta1) * gi;
        float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        /* sqrt(v / (1 - beta2^t)) = sqrt(v) * bc2 */
        w -= lr * (mi * bc1 / (sqrtf(vi) * bc2 + eps) + decay * w);
        p[i] = w;
        if (lp) lp[i] = __float2bfloat16_rn(w);
    }
}

// --- host

int gpt2_adamw_init(gpt2_adamw_t *a, const gpt2_slice_t *slice, int n, float beta1, float beta2, float eps,
                    float weight_decay, float max_norm, char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    a->beta1 = beta1;
    a->beta2 = beta2;
    a->eps = eps;
    a->weight_decay = weight_decay;
    a->max_norm = max_norm;
    int chunks = 0;
    for (int i = 0; i < n; i++) chunks += (int)((slice[i].len + ADAMW_CHUNK - 1) / ADAMW_CHUNK);
    size_t *at = (size_t *)calloc((size_t)chunks + 1, sizeof *at);
    int *len = (int *)calloc((size_t)chunks + 1, sizeof *len), *dec = (int *)calloc((size_t)chunks + 1, sizeof *dec);
    int rc = -1;
    if (!at || !len || !dec) {
        snprintf(err, errlen, "out of host memory");
        goto out;
    }
    for (int i = 0, c = 0; i < n; i++)
        for (size_t k = 0; k < slice[i].len; k += ADAMW_CHUNK, c++) {
            at[c] = slice[i].at + k;
            len[c] = (int)(slice[i].len - k < ADAMW_CHUNK ? slice[i].len - k : ADAMW_CHUNK);
            dec[c] = slice[i].decay;
        }
    if (gpu_try_malloc((void **)&a->chunk_at, sizeof *at * ((size_t)chunks + 1)) ||
        gpu_try_malloc((void **)&a->chunk_len, sizeof *len * ((size_t)chunks + 1)) ||
        gpu_try_malloc((void **)&a->chunk_decay, sizeof *dec * ((size_t)chunks + 1))) {
        snprintf(err, errlen, "out of memory: AdamW's chunk tables");
        gpt2_adamw_free(a);
        goto out;
    }
    CHECK_CUDA(cudaMemcpy(a->chunk_at, at, sizeof *at * (size_t)chunks, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(a->chunk_len, len, sizeof *len * (size_t)chunks, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(a->chunk_decay, dec, sizeof *dec * (size_t)chunks, cudaMemcpyHostToDevice));
    a->n_chunks = chunks;
    rc = 0;
out:
    free(at), free(len), free(dec);
    return rc;
}

void gpt2_adamw_free(gpt2_adamw_t *a) {
    void *bufs[] = {a->chunk_at, a->chunk_len, a->chunk_decay};
    for (int i = 0; i < 3; i++)
        if (bufs[i]) CHECK_CUDA(cudaFree(bufs[i]));
    a->chunk_at = NULL;
    a->chunk_len = NULL;
    a->chunk_decay = NULL;
    a->n_chunks = 0;
}

void gpt2_adamw_step(const gpt2_adamw_t *a, float *params, void *params_lp, const float *grads, float *m, float *v,
                     const float *lr, const long long *step, const double *sumsq, cudaStream_t stream) {
    if (!a->n_chunks) return;
    if (a->max_norm > 0.0f && !sumsq)
        check_fail(__FILE__, __LINE__, "gpt2_adamw_step", "clipping without the squared gradient norm");
    adamw_kernel<<<a->n_chunks, ADAMW_THREADS, 0, stream>>>(
        params, (__nv_bfloat16 *)params_lp, grads, m, v, a->chunk_at, a->chunk_len, a->chunk_decay, a->beta1,
        a->beta2, a->eps, a->weight_decay, a->max_norm, lr, step, sumsq);
    CHECK_LAUNCH();
}
