/* gpt2_layernorm.cu — LayerNorm over the last dimension of (rows, C) activations: forward keeping each row's mean and
 * reciprocal standard deviation, backward with the parameters' gradients summed deterministically (no atomics). */
#include "gpt2_kernels.h"
#include "gpt2_util.cuh"

#define LN_WARPS 8          /* rows per block: one warp per row */
#define LN_EPS 1e-5f        /* nn.LayerNorm's default, GPT-2's */
#define LN_SLAB_ROWS 64     /* backward: rows per slab of the parameters' partial sums (at most LN_SLABS slabs) */
#define LN_SLABS 128

// --- kernels

/* Two passes over the row (the second from L1/L2): the variance of the centred values, not E[x^2] - E[x]^2, which
 * cancels catastrophically for rows far from zero mean. */
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

/* dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w: one warp per row. */
template <typename T>
__global__ static void ln_dx_kernel(const T *x, const float *w, const float *mean, const float *rstd, const T *dy,
                                    T *dx, float beta, int rows, int C) {
    int row = blockIdx.x * LN_WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows) return;
    const T *xr = x + (size_t)row * C, *dyr = dy + (size_t)row * C;
    T *dxr = dx + (size_t)row * C;
    float m = mean[row], r = rstd[row], sg = 0.0f, sgx = 0.0f;
    for (int c = lane; c < C; c += 32) {
        float g = to_f(dyr[c]) * w[c];
        sg += g;
        sgx += g * (to_f(xr[c]) - m) * r;
    }
    float mg = gpt2_warp_sum(sg) / C, mgx = gpt2_warp_sum(sgx) / C;
    for (int c = lane; c < C; c += 32) {
        float d = r * (to_f(dyr[c]) * w[c] - mg - (to_f(xr[c]) - m) * r * mgx);
        if (beta != 0.0f) d += beta * to_f(dxr[c]);
        dxr[c] = from_f<T>(d);
    }
}

/* Block (32 columns, 8 row lanes) of slab blockIdx.y: its columns' sums of dy * xhat and dy over the slab's rows,
 * combined across the row lanes in a fixed order, into part[slab] = (dw sums (C), db sums (C)). */
template <typename T>
__global__ static void ln_param_part_kernel(const T *x, const float *mean, const float *rstd, const T *dy,
                                            float *part, int rows, int C, int slab_rows) {
    __shared__ float sw[8][33], sb[8][33];
    int c = blockIdx.x * 32 + threadIdx.x, r0 = blockIdx.y * slab_rows;
    int r1 = r0 + slab_rows < rows ? r0 + slab_rows : rows;
    float aw = 0.0f, ab = 0.0f;
    if (c < C)
        for (int r = r0 + threadIdx.y; r < r1; r += 8) {
            float g = to_f(dy[(size_t)r * C + c]);
            aw += g * (to_f(x[(size_t)r * C + c]) - mean[r]) * rstd[r];
            ab += g;
        }
    sw[threadIdx.y][threadIdx.x] = aw;
    sb[threadIdx.y][threadIdx.x] = ab;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        for (int k = 1; k < 8; k++) {
            aw += sw[k][threadIdx.x];
            ab += sb[k][threadIdx.x];
        }
        part[(size_t)blockIdx.y * 2 * C + c] = aw;
        part[(size_t)blockIdx.y * 2 * C + C + c] = ab;
    }
}

__global__ static void ln_param_sum_kernel(const float *part, float *dw, float *db, float beta, int C, int slabs) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float aw = 0.0f, ab = 0.0f;
    for (int k = 0; k < slabs; k++) {
        aw += part[(size_t)k * 2 * C + c];
        ab += part[(size_t)k * 2 * C + C + c];
    }
    if (dw) dw[c] = beta * (beta != 0.0f ? dw[c] : 0.0f) + aw;
    if (db) db[c] = beta * (beta != 0.0f ? db[c] : 0.0f) + ab;
}

// --- launchers

/* Rows per slab: at least LN_SLAB_ROWS, more where that would make over LN_SLABS slabs. */
static int slab_rows(int rows) {
    int per = (rows + LN_SLABS - 1) / LN_SLABS;
    return per > LN_SLAB_ROWS ? per : LN_SLAB_ROWS;
}
static int slabs(int rows) { return (rows + slab_rows(rows) - 1) / slab_rows(rows); }

extern "C" size_t gpt2_layernorm_scratch_bytes(int rows, int C) {
    return (size_t)slabs(rows) * 2 * (size_t)C * sizeof(float);
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
    static void run(const void *x, const float *w, const float *mean, const float *rstd, const void *dy, void *dx,
                    float dx_beta, float *dw, float *db, float dw_beta, int rows, int C, void *scratch, size_t bytes,
                    cudaStream_t s) {
        if (dx) {
            ln_dx_kernel<T><<<(rows + LN_WARPS - 1) / LN_WARPS, 32 * LN_WARPS, 0, s>>>(
                (const T *)x, w, mean, rstd, (const T *)dy, (T *)dx, dx_beta, rows, C);
            CHECK_LAUNCH();
        }
        if (!dw && !db) return;
        if (!scratch || bytes < gpt2_layernorm_scratch_bytes(rows, C))
            check_fail(__FILE__, __LINE__, "gpt2_layernorm_backward", "scratch smaller than its _scratch_bytes");
        dim3 grid((unsigned)((C + 31) / 32), (unsigned)slabs(rows)), block(32, 8);
        ln_param_part_kernel<T><<<grid, block, 0, s>>>((const T *)x, mean, rstd, (const T *)dy, (float *)scratch,
                                                       rows, C, slab_rows(rows));
        CHECK_LAUNCH();
        ln_param_sum_kernel<<<(C + 255) / 256, 256, 0, s>>>((const float *)scratch, dw, db, dw_beta, C, slabs(rows));
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
