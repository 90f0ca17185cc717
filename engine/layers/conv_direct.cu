/* conv_direct.cu — direct forward and filter-gradient kernels for a convolution over very few input channels whose
 * input needs no gradient (the 1-channel stem of the 28x28 models): cuDNN runs such shapes on CUDA-core kernels
 * and layout transforms (~0.2 ms of a 2.9 ms ResNet-18 bf16 step on an H200) for 0.1 GFLOP of arithmetic. */
#include "conv_direct.h"
#include "../check.h"
#include "../launch.h"
#include <cuda_bf16.h>

#define KG 8        /* output channels per thread in the forward kernel */
#define TILE 32     /* output positions staged in shared memory per step of the filter-gradient kernel */
#define WGRAD_THREADS 128
#define PER_THREAD (CONV_DIRECT_MAX_P / WGRAD_THREADS)   /* filter elements per thread */

__device__ static inline float ld(const float *p, size_t i) { return p[i]; }
__device__ static inline float ld(const __nv_bfloat16 *p, size_t i) { return __bfloat162float(p[i]); }
__device__ static inline void st(float *p, size_t i, float v) { p[i] = v; }
__device__ static inline void st(__nv_bfloat16 *p, size_t i, float v) { p[i] = __float2bfloat16_rn(v); }

typedef struct {
    int n, h, w, c;         /* input (N, H, W, C) */
    int oh, ow, k;          /* output (N, OH, OW, K) */
    int r, stride, pad;     /* square window */
} geom_t;

// --- kernels

/* y (N, OH, OW, K) = x (N, H, W, C) * w (K, R, R, C), fp32 accumulation, one rounding. One thread: KG channels of
 * one output position. The filter sits in shared memory as (R, R, C, K) so a thread's channels are contiguous. */
template <typename T>
__global__ static void direct_fwd_kernel(const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y,
                                         geom_t g) {
    extern __shared__ float wsh[];
    int rrc = g.r * g.r * g.c;
    for (int i = threadIdx.x; i < g.k * rrc; i += blockDim.x) wsh[(i % rrc) * g.k + i / rrc] = ld(w, i);
    __syncthreads();
    int groups = (g.k + KG - 1) / KG;
    size_t total = (size_t)g.n * g.oh * g.ow * groups;
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (size_t)gridDim.x * blockDim.x) {
        int k0 = (int)(idx % groups) * KG;
        size_t pix = idx / groups;
        int ow = (int)(pix % g.ow), oh = (int)(pix / g.ow % g.oh), n = (int)(pix / ((size_t)g.ow * g.oh));
        float acc[KG];
        for (int j = 0; j < KG; j++) acc[j] = 0.0f;
        for (int r = 0; r < g.r; r++) {
            int ih = oh * g.stride - g.pad + r;
            if (ih < 0 || ih >= g.h) continue;
            for (int s = 0; s < g.r; s++) {
                int iw = ow * g.stride - g.pad + s;
                if (iw < 0 || iw >= g.w) continue;
                for (int c = 0; c < g.c; c++) {
                    float v = ld(x, (((size_t)n * g.h + ih) * g.w + iw) * g.c + c);
                    const float *wr = wsh + ((r * g.r + s) * g.c + c) * g.k + k0;
                    for (int j = 0; j < KG; j++)
                        if (k0 + j < g.k) acc[j] = fmaf(v, wr[j], acc[j]);
                }
            }
        }
        for (int j = 0; j < KG; j++)
            if (k0 + j < g.k) st(y, pix * g.k + k0 + j, acc[j]);
    }
}

/* partial[b][p] = sum over block b's output positions of dy[pos][k] * x[window(pos)][r, s, c], p = (k, r, s, c) in
 * KRSC order. Each step stages TILE positions' dy rows and input windows in shared memory (coalesced loads), then
 * every thread adds its filter elements' products in a fixed order: deterministic. */
template <typename T>
__global__ static void direct_wgrad_kernel(const T *__restrict__ x, const T *__restrict__ dy,
                                           float *__restrict__ partial, geom_t g, size_t chunk) {
    extern __shared__ float sh[];
    int rrc = g.r * g.r * g.c, p_count = g.k * rrc;
    float *dys = sh, *xs = sh + TILE * g.k;   /* (TILE, K) and (TILE, R*R*C) */
    size_t m_total = (size_t)g.n * g.oh * g.ow;
    size_t m0 = blockIdx.x * chunk, m1 = m0 + chunk < m_total ? m0 + chunk : m_total;
    float acc[PER_THREAD];   /* indices known at compile time (unrolled loops): registers, not local memory */
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) acc[i] = 0.0f;
    for (size_t t0 = m0; t0 < m1; t0 += TILE) {
        int nt = (int)(m1 - t0 < TILE ? m1 - t0 : TILE);
        __syncthreads();
        for (int i = threadIdx.x; i < nt * g.k; i += blockDim.x) dys[i] = ld(dy, t0 * g.k + i);
        for (int i = threadIdx.x; i < nt * rrc; i += blockDim.x) {
            size_t pos = t0 + i / rrc;
            int q = i % rrc, c = q % g.c, s = q / g.c % g.r, r = q / g.c / g.r;
            int ow = (int)(pos % g.ow), oh = (int)(pos / g.ow % g.oh), n = (int)(pos / ((size_t)g.ow * g.oh));
            int ih = oh * g.stride - g.pad + r, iw = ow * g.stride - g.pad + s;
            xs[i] = ih >= 0 && ih < g.h && iw >= 0 && iw < g.w ? ld(x, (((size_t)n * g.h + ih) * g.w + iw) * g.c + c)
                                                               : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < PER_THREAD; i++) {
            int p = threadIdx.x + i * WGRAD_THREADS;
            if (p >= p_count) break;
            int k = p / rrc, q = p % rrc;
            float a = acc[i];
            for (int t = 0; t < nt; t++) a = fmaf(dys[t * g.k + k], xs[t * rrc + q], a);
            acc[i] = a;
        }
    }
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        int p = threadIdx.x + i * WGRAD_THREADS;
        if (p < p_count) partial[(size_t)blockIdx.x * p_count + p] = acc[i];
    }
}

/* dw[p] = beta * dw[p] + sum over blocks of partial[b][p], blocks in order. */
__global__ static void direct_wgrad_sum_kernel(const float *__restrict__ partial, float *__restrict__ dw, int p_count,
                                               int blocks, float beta) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= p_count) return;
    float s = 0.0f;
    for (int b = 0; b < blocks; b++) s += partial[(size_t)b * p_count + p];
    dw[p] = beta != 0.0f ? fmaf(beta, dw[p], s) : s;
}

// --- launchers

static geom_t geom_of(shape_t in, shape_t out, int r, int stride, int pad) {
    geom_t g = {in.n, in.h, in.w, in.c, out.h, out.w, out.c, r, stride, pad};
    return g;
}

/* Blocks of the filter-gradient kernel: about two per SM of an H100/H200, fewer for small inputs. */
static int wgrad_blocks(shape_t out) {
    size_t m = (size_t)out.n * out.h * out.w, b = (m + TILE - 1) / TILE;
    return (int)(b < 264 ? b : 264);
}

extern "C" int conv_direct_applies(shape_t in, shape_t out, int r, int needs_dx) {
    return !needs_dx && in.c <= 4 && r * r * in.c <= 32 && out.c <= 256 && out.c * r * r * in.c <= CONV_DIRECT_MAX_P;
}

extern "C" size_t conv_direct_scratch_floats(shape_t in, shape_t out, int r) {
    return (size_t)wgrad_blocks(out) * out.c * r * r * in.c;
}

extern "C" void conv_direct_forward(const void *x, const void *w, void *y, dtype_t t, shape_t in, shape_t out, int r,
                                    int stride, int pad, cudaStream_t stream) {
    geom_t g = geom_of(in, out, r, stride, pad);
    size_t total = (size_t)out.n * out.h * out.w * ((out.c + KG - 1) / KG);
    unsigned blocks = launch_blocks(total, 256, 2048);
    size_t shmem = (size_t)out.c * r * r * in.c * sizeof(float);
    if (t == DTYPE_BF16)
        direct_fwd_kernel<<<blocks, 256, shmem, stream>>>((const __nv_bfloat16 *)x, (const __nv_bfloat16 *)w,
                                                          (__nv_bfloat16 *)y, g);
    else
        direct_fwd_kernel<<<blocks, 256, shmem, stream>>>((const float *)x, (const float *)w, (float *)y, g);
    CHECK_LAUNCH();
}

extern "C" void conv_direct_wgrad(const void *x, const void *dy, float *dw, float beta, float *scratch, dtype_t t,
                                  shape_t in, shape_t out, int r, int stride, int pad, cudaStream_t stream) {
    geom_t g = geom_of(in, out, r, stride, pad);
    int blocks = wgrad_blocks(out), p_count = out.c * r * r * in.c;
    size_t m = (size_t)out.n * out.h * out.w, chunk = (m + blocks - 1) / blocks;
    size_t shmem = (size_t)TILE * (out.c + r * r * in.c) * sizeof(float);
    if (t == DTYPE_BF16)
        direct_wgrad_kernel<<<blocks, WGRAD_THREADS, shmem, stream>>>((const __nv_bfloat16 *)x, (const __nv_bfloat16 *)dy,
                                                            scratch, g, chunk);
    else
        direct_wgrad_kernel<<<blocks, WGRAD_THREADS, shmem, stream>>>((const float *)x, (const float *)dy, scratch, g, chunk);
    CHECK_LAUNCH();
    direct_wgrad_sum_kernel<<<(p_count + 127) / 128, 128, 0, stream>>>(scratch, dw, p_count, blocks, beta);
    CHECK_LAUNCH();
}
