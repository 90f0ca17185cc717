/* softmax_xent.cu — fused, numerically stable softmax + cross-entropy over (N, classes) logits with its gradient.
 * cuDNN has no fused loss-with-gradient, so this is the one hand-written kernel among the layers. */
#include <math.h>
#include <limits.h>
#include "softmax_xent.h"
#include "../check.h"
#include "elem.cuh"

#define XENT_WARPS 8   /* rows per block: one warp per row */

// --- kernels

/* One warp per row (classes is small: 10 here), lanes striding over the classes. Loss and correct counts are
 * reduced in the block and added to acc once per block, not once per row. */
template <typename T>
__global__ static void softmax_xent_kernel(const T *logits, const int *labels, T *dlogits, int n, int n_valid,
                                           int classes, float scale, const float *loss_scale, double *acc) {
    __shared__ double s_loss[XENT_WARPS];
    __shared__ double s_correct[XENT_WARPS];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row = blockIdx.x * XENT_WARPS + warp;
    double loss = 0.0, correct = 0.0;
    if (row < n) {
        const T *z = logits + (size_t)row * classes;          // (classes), widened to fp32 as read
        T *dz = dlogits ? dlogits + (size_t)row * classes : NULL;
        if (row >= n_valid) {
            if (dz) for (int j = lane; j < classes; j += 32) dz[j] = (T)0.0f;   // padding rows contribute nothing
        } else {
            /* max and first argmax: each lane sees increasing j, so it keeps its first maximum; across lanes ties go
             * to the smaller index. An empty lane carries (-inf, INT_MAX) and never wins. */
            float m = -INFINITY;
            int am = INT_MAX;
            for (int j = lane; j < classes; j += 32)
                if (am == INT_MAX || (float)z[j] > m) { m = (float)z[j]; am = j; }
            for (int off = 16; off > 0; off >>= 1) {
                float om = __shfl_xor_sync(0xffffffffu, m, off);
                int oa = __shfl_xor_sync(0xffffffffu, am, off);
                if (om > m || (om == m && oa < am)) { m = om; am = oa; }
            }
            float s = 0.0f;
            for (int j = lane; j < classes; j += 32) s += expf((float)z[j] - m);
            for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
            int label = labels[row];
            bool ok = label >= 0 && label < classes;
            /* log-sum-exp - z[label], with the max subtracted inside both terms so neither overflows. */
            loss = ok ? (double)(logf(s) - ((float)z[label] - m)) : (double)NAN;   // a bad label: a NaN loss
            correct = (ok && am == label) ? 1.0 : 0.0;
            if (dz) {
                if (loss_scale) scale *= *loss_scale;   /* powers of two: exact */
                float inv = 1.0f / s;
                for (int j = lane; j < classes; j += 32)
                    dz[j] = (T)(scale * (expf((float)z[j] - m) * inv - (j == label ? 1.0f : 0.0f)));
            }
        }
    }
    if (lane == 0) { s_loss[warp] = loss; s_correct[warp] = correct; }
    __syncthreads();
    if (threadIdx.x == 0) {
        double L = 0.0, C = 0.0;
        for (int i = 0; i < XENT_WARPS; i++) { L += s_loss[i]; C += s_correct[i]; }
        atomicAdd(&acc[0], L);
        atomicAdd(&acc[1], C);
    }
}

// --- launchers

template <typename T> struct xent {
    static void run(const void *logits, const int *labels, void *dlogits, int n, int n_valid, int classes, float scale,
                    const float *loss_scale, double *acc, cudaStream_t stream) {
        const int blocks = (n + XENT_WARPS - 1) / XENT_WARPS;
        softmax_xent_kernel<<<blocks, XENT_WARPS * 32, 0, stream>>>((const T *)logits, labels, (T *)dlogits, n, n_valid,
                                                                    classes, scale, loss_scale, acc);
        CHECK_LAUNCH();
    }
};

extern "C" void softmax_xent(const void *logits, const int *labels, void *dlogits, dtype_t t, int n, int n_valid,
                             int classes, float scale, const float *loss_scale, double *acc, cudaStream_t stream) {
    if (n <= 0) return;
    if (n_valid > n) n_valid = n;
    dtype_dispatch<xent>(t, logits, labels, dlogits, n, n_valid, classes, scale, loss_scale, acc, stream);
}
