/* gpt2_xent.cu — softmax cross-entropy over the vocabulary, fused with its gradient: one block per row reads the
 * logits once for the online max and sum, once more to write the gradient over them in place. */
#include <math.h>
#include <stdint.h>
#include "gpt2_kernels.h"
#include "gpt2_util.cuh"

#define XENT_THREADS 512
/* exp(x) as exp2(x log2 e): the hardware's base-2 exponential, a few ulp in fp32, far below bf16's rounding */
#define XENT_LOG2E 1.4426950408889634f

// --- kernels

/* (m, s): a running max and the sum of exp(z - m) so far; merging two rescales the smaller max's sum. An empty
 * part is (-inf, 0), which the guard keeps from exp(-inf - -inf) = NaN. */
__device__ __forceinline__ void lse_merge(float &m, float &s, float om, float os) {
    if (om == -INFINITY) return;
    if (m == -INFINITY) { m = om; s = os; return; }
    if (om > m) { s = s * expf(m - om) + os; m = om; }
    else s += os * expf(om - m);
}

/* One block per row; each thread takes V adjacent logits at once (16-byte accesses where the row allows), so the
 * online max and sum cost one rescale per V logits, not one per logit. */
template <typename T, int V>
__global__ static void xent_kernel(T *logits, const int *target, float *losses, double *acc, int vocab, int ld,
                                   float scale, int grad) {
    __shared__ float sm[XENT_THREADS / 32], ss[XENT_THREADS / 32];
    __shared__ float row_m, row_s;
    T *z = logits + (size_t)blockIdx.x * ld;
    int tgt = target[blockIdx.x];
    bool valid = tgt >= 0 && tgt < vocab;
    /* Every thread reads the target's logit before the reductions' barriers: the gradient pass overwrites it. */
    float zt = valid ? to_f(z[tgt]) : 0.0f;
    float m = -INFINITY, s = 0.0f;
    for (int j = threadIdx.x * V; j < vocab; j += blockDim.x * V) {
        pack_t<T, V> p = load_p<T, V>(z + j);
        float cm = -INFINITY, cs = 0.0f;
        for (int v = 0; v < V; v++)
            if (j + v < vocab) cm = fmaxf(cm, to_f(p.v[v]));
        for (int v = 0; v < V; v++)
            if (j + v < vocab) cs += exp2f((to_f(p.v[v]) - cm) * XENT_LOG2E);
        lse_merge(m, s, cm, cs);
    }
    for (int o = 16; o > 0; o >>= 1) {
        float om = __shfl_xor_sync(0xffffffffu, m, o), os = __shfl_xor_sync(0xffffffffu, s, o);
        lse_merge(m, s, om, os);
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { sm[warp] = m; ss[warp] = s; }
    __syncthreads();
    if (threadIdx.x == 0) {
        float M = sm[0], S = ss[0];
        for (int k = 1; k < (int)blockDim.x / 32; k++) lse_merge(M, S, sm[k], ss[k]);
        row_m = M;
        row_s = S;
        float loss = valid ? logf(S) + M - zt : tgt == -1 ? 0.0f : NAN;
        if (losses) losses[blockIdx.x] = loss;
        if (acc && tgt != -1) {
            atomicAdd(&acc[0], (double)loss);
            atomicAdd(&acc[1], 1.0);
        }
    }
    __syncthreads();
    if (!grad) return;
    float M = row_m, inv = 1.0f / row_s;
    for (int j = threadIdx.x * V; j < ld; j += blockDim.x * V) {
        pack_t<T, V> p = load_p<T, V>(z + j);
        for (int v = 0; v < V; v++) {
            float d = 0.0f;
            if (valid && j + v < vocab)
                d = scale * (exp2f((to_f(p.v[v]) - M) * XENT_LOG2E) * inv - (j + v == tgt ? 1.0f : 0.0f));
            p.v[v] = from_f<T>(d);
        }
        store_p<T, V>(z + j, p);
    }
}

// --- launchers

template <typename T> struct xent {
    static void run(void *logits, const int *target, float *losses, double *acc, int rows, int vocab, int ld,
                    float scale, int grad, cudaStream_t s) {
        const int V = 16 / sizeof(T);   /* 16-byte accesses where every row starts aligned for them */
        if (ld % V == 0 && (uintptr_t)logits % 16 == 0)
            xent_kernel<T, V><<<rows, XENT_THREADS, 0, s>>>((T *)logits, target, losses, acc, vocab, ld, scale, grad);
        else
            xent_kernel<T, 1><<<rows, XENT_THREADS, 0, s>>>((T *)logits, target, losses, acc, vocab, ld, scale, grad);
        CHECK_LAUNCH();
    }
};

extern "C" void gpt2_xent(void *logits, const int *target, float *losses, double *acc, dtype_t t, int rows, int vocab,
                          int ld, float scale, int grad, cudaStream_t stream) {
    if (rows <= 0) return;
    if (vocab < 1 || ld < vocab) check_fail(__FILE__, __LINE__, "gpt2_xent", "a row stride below the vocabulary");
    gpt2_dispatch<xent>("gpt2_xent", t, logits, target, losses, acc, rows, vocab, ld, scale, grad, stream);
}
