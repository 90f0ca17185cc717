/* gpt2_layernorm.cu — LayerNorm over the last dimension of (rows, C) activations: forward keeping each row's mean and
 * reciprocal standard deviation, backward with the parameters' gradients summed deterministically (no atomics): per
 * block in shared memory, then the blocks' partial sums in block order. */
#include <stdint.h>
#include "gpt2_kernels.h"
#include "gpt2_util.cuh"

#define LN_WARPS 8          /* rows per block: one warp per row */
#define LN_EPS 1e-5f        /* nn.LayerNorm's default, GPT-2's */
#define LN_BWD_BLOCKS 512   /* backward: at most this many blocks, each writing its partial sums of the parameters;
                             * 512 of 8 warps and 48 KB are one wave of 4 a multiprocessor on an H100 or H200 */

// --- kernels

/* Two passes over the row (the second from L1/L2): the variance of the centred values, not E[x^2] - E[x]^2, which
 * cancels catastrophically for rows far from zero mean. One element a lane at a time: 16-byte accesses measured
 * slower here (0.94 against 0.65 ms a step of GPT-2 small's 25 on an H200). */
template <typename T>
__global__ static void ln_forward_kernel(const T *x, const float *w, const float *b, T *y, float *mean, float *rstd,
                                         int rows, int C) {
    int row = blockIdx.x * LN_WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows) return;
    const T *xr = x + (size_t)row * C;
    float s = 0.0f;
    for (int c = lane; c < C; c += 32) s += to_f(xr[c]);
    float m = gpt2_warp_sum(s) / C;
    float v = 0.0f;
    for (int c = lane; c < C; c += 32) {
        float d = to_f(xr[c]) - m;
        v += d * d;
    }
    float r = rsqrtf(gpt2_warp_sum(v) / C + LN_EPS);
    T *yr = y + (size_t)row * C;
    for (int c = lane; c < C; c += 32) yr[c] = from_f<T>((to_f(xr[c]) - m) * r * w[c] + b[c]);
    if (lane == 0) {
        if (mean) mean[row] = m;
        if (rstd) rstd[row] = r;
    }
}

/* Shared-memory slots of a warp's sums (ln_backward_kernel): lane l's column c = (32 k + l) V + v sits at slot
 * (k V + v) 32 + l, so a warp's 32 lanes touch 32 adjacent floats (no bank conflicts). ln_slots: slots for C
 * columns. */
__host__ __device__ static inline int ln_slots(int C, int V) { return (C + 32 * V - 1) / (32 * V) * 32 * V; }
__device__ static inline int ln_slot(int c, int V) { return (c / (32 * V) * V + c % V) * 32 + c / V % 32; }

/* dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w, one warp per row, V columns a lane moves at once;
 * and the parameters' sums over the block's rows: lane l of every warp owns the same columns, so each warp sums its
 * rows into its own shared slots without atomics, and the warps' sums are added in warp order into part[block] =
 * (dw sums (C), db sums (C)): one pass over x and dy for both. */
template <typename T, int V>
__global__ static void ln_backward_kernel(const T *x, const float *w, const float *mean, const float *rstd,
                                          const T *dy, T *dx, float beta, float *part, int rows, int C) {
    extern __shared__ float ln_acc[];   /* [warps][2][ln_slots] */
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32, S = ln_slots(C, V);
    float *aw = ln_acc + (size_t)warp * 2 * S + lane, *ab = aw + S;   /* this lane's slot 0 */
    for (int i = 0; i < S; i += 32) aw[i] = ab[i] = 0.0f;
    for (int row = blockIdx.x * warps + warp; row < rows; row += gridDim.x * warps) {
        const T *xr = x + (size_t)row * C, *dyr = dy + (size_t)row * C;
        float m = mean[row], r = rstd[row], sg = 0.0f, sgx = 0.0f;
#pragma unroll 4
        for (int c = lane * V, k = 0; c < C; c += 32 * V, k++) {
            pack_t<T, V> px = load_p<T, V>(xr + c), pd = load_p<T, V>(dyr + c);
            for (int v = 0; v < V; v++) {
                float d = to_f(pd.v[v]), xh = (to_f(px.v[v]) - m) * r, g = d * w[c + v];
                sg += g;
                sgx += g * xh;
                aw[(k * V + v) * 32] += d * xh;
                ab[(k * V + v) * 32] += d;
            }
        }
        float mg = gpt2_warp_sum(sg) / C, mgx = gpt2_warp_sum(sgx) / C;
        T *dxr = dx + (size_t)row * C;
#pragma unroll 4
        for (int c = lane * V; c < C; c += 32 * V) {
            pack_t<T, V> px = load_p<T, V>(xr + c), pd = load_p<T, V>(dyr + c), po;
            if (beta != 0.0f) po = load_p<T, V>(dxr + c);
            for (int v = 0; v < V; v++) {
                float d = r * (to_f(pd.v[v]) * w[c + v] - mg - (to_f(px.v[v]) - m) * r * mgx);
                if (beta != 0.0f) d += beta * to_f(po.v[v]);
                po.v[v] = from_f<T>(d);
            }
            store_p<T, V>(dxr + c, po);
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 2 * C; i += blockDim.x) {
        int c = i < C ? i : i - C, at = (i < C ? 0 : S) + ln_slot(c, V);
        float a = 0.0f;
        for (int k = 0; k < warps; k++) a += ln_acc[(size_t)k * 2 * S + at];
        part[(size_t)blockIdx.x * 2 * C + i] = a;
    }
}

/* Column i of the 2C (dw sums, then db sums) over the blocks' parts: 8 lanes a column take every 8th part, then their
 * sums are added in lane order: a fixed order, with 8 times the threads of one a column. */
__global__ static void ln_param_sum_kernel(const float *part, float *dw, float *db, float beta, int C, int parts) {
    __shared__ float sum[8][33];
    int i = blockIdx.x * 32 + threadIdx.x;
    float a = 0.0f;
    if (i < 2 * C)
        for (int k = threadIdx.y; k < parts; k += 8) a += part[(size_t)k * 2 * C + i];
    sum[threadIdx.y][threadIdx.x] = a;
    __syncthreads();
    if (threadIdx.y != 0 || i >= 2 * C) return;
    for (int k = 1; k < 8; k++) a += sum[k][threadIdx.x];
    float *d = i < C ? dw : db;
    int c = i < C ? i : i - C;
    if (d) d[c] = beta * (beta != 0.0f ? d[c] : 0.0f) + a;
}

// --- launchers

/* Backward's warps a block: as many as 8 whose 2 ln_slots(C, 8) floats each fit in 48 KB (the default limit), at
 * least 1 (C up to about 6000); 8 is the widest V, whose slots are the most. */
static int bwd_warps(int C) {
    int w = (int)(48 * 1024 / (2 * (size_t)ln_slots(C, 8) * sizeof(float)));
    return w < 1 ? 1 : w > LN_WARPS ? LN_WARPS : w;
}
/* Backward's blocks: one per `warps` rows up to LN_BWD_BLOCKS, a number that does not depend on the GPU, so neither
 * does the order in which the parameters' sums are added. */
static int bwd_blocks(int rows, int C) {
    int w = bwd_warps(C), b = (rows + w - 1) / w;
    return b < LN_BWD_BLOCKS ? b : LN_BWD_BLOCKS;
}

extern "C" size_t gpt2_layernorm_scratch_bytes(int rows, int C) {
    return (size_t)bwd_blocks(rows, C) * 2 * (size_t)C * sizeof(float);
}

template <typename T> struct ln_fwd {
    static void run(const void *x, const float *w, const float *b, void *y, float *mean, float *rstd, int rows, int C,
                    cudaStream_t s) {
        ln_forward_kernel<T><<<(rows + LN_WARPS - 1) / LN_WARPS, 32 * LN_WARPS, 0, s>>>(
            (const T *)x, w, b, (T *)y, mean, rstd, rows, C);
        CHECK_LAUNCH();
    }
};

extern "C" void gpt2_layernorm_forward(const void *x, const float *w, const float *b, void *y, float *mean,
                                       float *rstd, dtype_t t, int rows, int C, cudaStream_t stream) {
    if (rows <= 0 || C <= 0) return;
    gpt2_dispatch<ln_fwd>("gpt2_layernorm_forward", t, x, w, b, y, mean, rstd, rows, C, stream);
}

template <typename T> struct ln_bwd {
    template <int V>
    static void launch(int blocks, int warps, const void *x, const float *w, const float *mean, const float *rstd,
                       const void *dy, void *dx, float beta, void *part, int rows, int C, cudaStream_t s) {
        size_t smem = (size_t)warps * 2 * ln_slots(C, V) * sizeof(float);
        ln_backward_kernel<T, V><<<blocks, 32 * warps, smem, s>>>((const T *)x, w, mean, rstd, (const T *)dy, (T *)dx,
                                                                  beta, (float *)part, rows, C);
    }
    static void run(const void *x, const float *w, const float *mean, const float *rstd, const void *dy, void *dx,
                    float dx_beta, float *dw, float *db, float dw_beta, int rows, int C, void *scratch, size_t bytes,
                    cudaStream_t s) {
        if (!scratch || bytes < gpt2_layernorm_scratch_bytes(rows, C))
            check_fail(__FILE__, __LINE__, "gpt2_layernorm_backward", "scratch smaller than its _scratch_bytes");
        const int V = 16 / sizeof(T);   /* 16-byte accesses where every row and w are aligned for them */
        int warps = bwd_warps(C), blocks = bwd_blocks(rows, C);
        uintptr_t a = (uintptr_t)x | (uintptr_t)dy | (uintptr_t)dx | (uintptr_t)w;
        if (C % V == 0 && a % 16 == 0)
            launch<V>(blocks, warps, x, w, mean, rstd, dy, dx, dx_beta, scratch, rows, C, s);
        else
            launch<1>(blocks, warps, x, w, mean, rstd, dy, dx, dx_beta, scratch, rows, C, s);
        CHECK_LAUNCH();
        if (!dw && !db) return;
        ln_param_sum_kernel<<<(2 * C + 31) / 32, dim3(32, 8), 0, s>>>((const float *)scratch, dw, db, dw_beta, C,
                                                                      blocks);
        CHECK_LAUNCH();
    }
};

extern "C" void gpt2_layernorm_backward(const void *x, const float *w, const float *mean, const float *rstd,
                                        const void *dy, void *dx, float dx_beta, float *dw, float *db, float dw_beta,
                                        dtype_t t, int rows, int C, void *scratch, size_t scratch_bytes,
                                        cudaStream_t stream) {
    if (rows <= 0 || C <= 0) return;
    gpt2_dispatch<ln_bwd>("gpt2_layernorm_backward", t, x, w, mean, rstd, dy, dx, dx_beta, dw, db, dw_beta, rows, C,
                          scratch, scratch_bytes, stream);
}
