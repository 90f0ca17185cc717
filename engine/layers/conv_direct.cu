/* conv_direct.cu — direct forward and filter-gradient kernels for a convolution over one input channel whose
 * input needs no gradient (the 1-channel stem of the 28x28 models): cuDNN runs such shapes on CUDA-core kernels
 * and layout transforms (~0.2 ms of a 2.9 ms ResNet-18 bf16 step on an H200) for 0.1 GFLOP of arithmetic. */
#include "conv_direct.h"
#include "../check.h"
#include "../launch.h"
#include "elem.cuh"

#define KG 8                /* output channels per thread in the forward kernel */
#define WGRAD_THREADS 256

typedef struct {
    int n, h, w, c;         /* input (N, H, W, C) */
    int oh, ow, k;          /* output (N, OH, OW, K) */
    int r, stride, pad;     /* square window */
} geom_t;

// --- kernels (32-bit indices: conv_direct_applies bounds the tensors)

/* y (N, OH, OW, K) = x (N, H, W, C) * w (K, R, R, C), fp32 accumulation, one rounding. One thread: KG channels of
 * one output position. The filter sits in shared memory as (R, R, C, K) so a thread's channels are contiguous. */
template <typename T, int R, int C>
__global__ static void direct_fwd_kernel(const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y,
                                         geom_t g) {
    extern __shared__ float wsh[];
    const int rrc = R * R * C;
    for (int i = threadIdx.x; i < g.k * rrc; i += blockDim.x) wsh[(i % rrc) * g.k + i / rrc] = ld(w, i);
    __syncthreads();
    unsigned groups = (g.k + KG - 1) / KG, total = (unsigned)g.n * g.oh * g.ow * groups;
    for (unsigned idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += gridDim.x * blockDim.x) {
        int k0 = (int)(idx % groups) * KG;
        unsigned pix = idx / groups;
        int ow = (int)(pix % g.ow), t = (int)(pix / g.ow), oh = t % g.oh, n = t / g.oh;
        float acc[KG];
#pragma unroll
        for (int j = 0; j < KG; j++) acc[j] = 0.0f;
#pragma unroll
        for (int r = 0; r < R; r++) {
            int ih = oh * g.stride - g.pad + r;
            if (ih < 0 || ih >= g.h) continue;
#pragma unroll
            for (int s = 0; s < R; s++) {
                int iw = ow * g.stride - g.pad + s;
                if (iw < 0 || iw >= g.w) continue;
#pragma unroll
                for (int c = 0; c < C; c++) {
                    float v = ld(x, ((unsigned)(n * g.h + ih) * g.w + iw) * C + c);
                    const float *wr = wsh + ((r * R + s) * C + c) * g.k + k0;
                    if (g.k % KG == 0) {   /* two 16-byte shared loads instead of eight 4-byte ones */
                        float4 a = ((const float4 *)wr)[0], b = ((const float4 *)wr)[1];
                        float wv[KG] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
                        for (int j = 0; j < KG; j++) acc[j] = fmaf(v, wv[j], acc[j]);
                    } else {
#pragma unroll
                        for (int j = 0; j < KG; j++)
                            if (k0 + j < g.k) acc[j] = fmaf(v, wr[j], acc[j]);
                    }
                }
            }
        }
        if (g.k % KG == 0) {
            store8(y, pix * g.k + k0, acc);
        } else {
#pragma unroll
            for (int j = 0; j < KG; j++)
                if (k0 + j < g.k) store1(y, pix * g.k + k0 + j, acc[j]);
        }
    }
}

/* partial[b][k][q] = sum over block b's output positions of dy[pos][k] * x[window(pos)][q], q = (r, s, c): the
 * filter gradient in KRSC order. Thread (lane, k) holds its channel's R*R*C sums in registers and walks every
 * lanes-th position of the block's range; the lanes are then added in order through shared memory: deterministic. */
template <typename T, int R, int C>
__global__ static void direct_wgrad_kernel(const T *__restrict__ x, const T *__restrict__ dy,
                                           float *__restrict__ partial, geom_t g, unsigned chunk) {
    extern __shared__ float red[];   /* (lanes, K, R*R*C) */
    const int rrc = R * R * C;
    int lanes = WGRAD_THREADS / g.k;
    int k = threadIdx.x % g.k, lane = threadIdx.x / g.k;
    unsigned m_total = (unsigned)g.n * g.oh * g.ow, m0 = blockIdx.x * chunk;
    unsigned m1 = m0 + chunk < m_total ? m0 + chunk : m_total;
    float acc[rrc];
#pragma unroll
    for (int q = 0; q < rrc; q++) acc[q] = 0.0f;
    if (lane < lanes) {
#pragma unroll 4
        for (unsigned m = m0 + lane; m < m1; m += lanes) {   /* unrolled: independent loads in flight */
            float d = ld(dy, m * g.k + k);
            int ow = (int)(m % g.ow), t = (int)(m / g.ow), oh = t % g.oh, n = t / g.oh;
#pragma unroll
            for (int r = 0; r < R; r++) {
                int ih = oh * g.stride - g.pad + r;
#pragma unroll
                for (int s = 0; s < R; s++) {
                    int iw = ow * g.stride - g.pad + s;
                    if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
#pragma unroll
                    for (int c = 0; c < C; c++)
                        acc[(r * R + s) * C + c] =
                            fmaf(d, ld(x, ((unsigned)(n * g.h + ih) * g.w + iw) * C + c), acc[(r * R + s) * C + c]);
                }
            }
        }
#pragma unroll
        for (int q = 0; q < rrc; q++) red[(lane * g.k + k) * rrc + q] = acc[q];
    }
    __syncthreads();
    for (int p = threadIdx.x; p < g.k * rrc; p += blockDim.x) {
        float s = 0.0f;
        for (int l = 0; l < lanes; l++) s += red[l * g.k * rrc + p];
        partial[(size_t)blockIdx.x * g.k * rrc + p] = s;
    }
}

/* dw[p] = beta * dw[p] + the sum over blocks of partial[b][p]: one block per p, each thread a strided slice of the
 * blocks, then a fixed tree (a thread per p summing 1056 partials in turn took 21 us: latency-bound). Deterministic. */
#define SUM_THREADS 128
__global__ static void direct_wgrad_sum_kernel(const float *__restrict__ partial, float *__restrict__ dw, int p_count,
                                               int blocks, float beta) {
    __shared__ float part[SUM_THREADS];
    int p = blockIdx.x;
    float s = 0.0f;
    for (int b = threadIdx.x; b < blocks; b += SUM_THREADS) s += partial[(size_t)b * p_count + p];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = SUM_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) dw[p] = beta != 0.0f ? fmaf(beta, dw[p], part[0]) : part[0];
}

// --- launchers

static geom_t geom_of(shape_t in, shape_t out, int r, int stride, int pad) {
    geom_t g = {in.n, in.h, in.w, in.c, out.h, out.w, out.c, r, stride, pad};
    return g;
}

/* Blocks of the filter-gradient kernel: about eight per SM of an H100/H200 (two left its loads' latency exposed:
 * 113 us for the ResNet-18 stem at batch 256), fewer for small inputs. */
static int wgrad_blocks(shape_t out) {
    size_t m = (size_t)out.n * out.h * out.w, b = (m + 63) / 64;
    return (int)(b < 1056 ? b : 1056);
}

extern "C" int conv_direct_applies(shape_t in, shape_t out, int r, int needs_dx) {
    /* The windows instantiated below (the 28x28 models' stems: ResNet-18's 3x3 and LeNet's 5x5 on one channel). */
    int window = in.c == 1 && (r == 3 || r == 5);
    return !needs_dx && window && out.c <= WGRAD_THREADS && out.c * r * r * in.c <= CONV_DIRECT_MAX_P &&
           shape_numel(in) < (1u << 31) && shape_numel(out) < (1u << 31);
}

extern "C" size_t conv_direct_scratch_floats(shape_t in, shape_t out, int r) {
    return (size_t)wgrad_blocks(out) * out.c * r * r * in.c;
}

/* The kernels for element type T and window r (3 or 5: conv_direct_applies), through dtype_dispatch. */
template <typename T> struct direct_fwd {
    static void run(const void *x, const void *w, void *y, geom_t g, int r, unsigned blocks, size_t shmem,
                    cudaStream_t s) {
        if (r == 3) direct_fwd_kernel<T, 3, 1><<<blocks, 256, shmem, s>>>((const T *)x, (const T *)w, (T *)y, g);
        else direct_fwd_kernel<T, 5, 1><<<blocks, 256, shmem, s>>>((const T *)x, (const T *)w, (T *)y, g);
        CHECK_LAUNCH();
    }
};
template <typename T> struct direct_wgrad {
    static void run(const void *x, const void *dy, float *scratch, geom_t g, int r, unsigned blocks, size_t shmem,
                    unsigned chunk, cudaStream_t s) {
        if (r == 3)
            direct_wgrad_kernel<T, 3, 1><<<blocks, WGRAD_THREADS, shmem, s>>>((const T *)x, (const T *)dy, scratch,
                                                                              g, chunk);
        else
            direct_wgrad_kernel<T, 5, 1><<<blocks, WGRAD_THREADS, shmem, s>>>((const T *)x, (const T *)dy, scratch,
                                                                              g, chunk);
        CHECK_LAUNCH();
    }
};

extern "C" void conv_direct_forward(const void *x, const void *w, void *y, dtype_t t, shape_t in, shape_t out, int r,
                                    int stride, int pad, cudaStream_t stream) {
    geom_t g = geom_of(in, out, r, stride, pad);
    size_t total = (size_t)out.n * out.h * out.w * ((out.c + KG - 1) / KG);
    unsigned blocks = launch_blocks(total, 256, 4096);
    size_t shmem = (size_t)out.c * r * r * in.c * sizeof(float);
    dtype_dispatch<direct_fwd>(t, x, w, y, g, r, blocks, shmem, stream);
}

extern "C" void conv_direct_wgrad(const void *x, const void *dy, float *dw, float beta, float *scratch, dtype_t t,
                                  shape_t in, shape_t out, int r, int stride, int pad, cudaStream_t stream) {
    geom_t g = geom_of(in, out, r, stride, pad);
    int blocks = wgrad_blocks(out), p_count = out.c * r * r * in.c;
    size_t m = (size_t)out.n * out.h * out.w;
    unsigned chunk = (unsigned)((m + blocks - 1) / blocks);
    size_t shmem = (size_t)(WGRAD_THREADS / out.c) * p_count * sizeof(float);
    dtype_dispatch<direct_wgrad>(t, x, dy, scratch, g, r, (unsigned)blocks, shmem, chunk, stream);
    direct_wgrad_sum_kernel<<<p_count, SUM_THREADS, 0, stream>>>(scratch, dw, p_count, blocks, beta);
    CHECK_LAUNCH();
}
