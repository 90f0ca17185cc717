/* bn_nhwc.cu — batch-norm training kernels for NHWC activations, near memory bandwidth: each direction is one
 * reduction over rows (partial sums per block, the tile's last block finishes the channel) and one element-wise
 * pass. */
#include "bn_nhwc.h"
#include "../check.h"
#include "../launch.h"
#include "../layer.h"
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "bn_nhwc_block.cuh"

// --- forward

/* Welford per thread on x - pivot (a reciprocal per row, shared by its V channels), Chan's merge across the block's
 * row lanes, one (mean, m2) per row block and channel; the tile's last block adds the row blocks around row block
 * 0's mean (finish_sums) and finishes the statistics. The pivot, the channel's value in row 0, keeps the means
 * Welford updates in fp32 of the size of the deviation rather than of the offset (an fp32 mean of 1000 has steps
 * of 6e-5: Welford alone then loses a deviation of 3e-4), and Welford keeps a pivot far from the mean harmless
 * (shifted sums alone would cancel as (mean - pivot)^2 / var). */
template <typename T, int V>
__global__ void __launch_bounds__(BN_THREADS, 2)
fwd_stats_kernel(const T *__restrict__ x, long long m, int c, float *part, unsigned *arrivals,
                 const float *__restrict__ gamma, const float *__restrict__ beta, const float *__restrict__ beta_add,
                 float *run_mean, float *run_var, float *coef, double eps, double momentum) {
    __shared__ float sh[2 * V * BN_THREADS], shn[BN_THREADS];
    constexpr int U = BN_UNROLL_WIDE;
    const int ty = threadIdx.y, lanes = blockDim.y;
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    float n = 0.0f, mu[V], m2[V];   // rows seen (exact: < 2^24), mean of x - k, sum of squared deviations
#pragma unroll
    for (int j = 0; j < V; j++) mu[j] = m2[j] = 0.0f;
    long long r0, r1;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    float k[V];
#pragma unroll
    for (int j = 0; j < V; j++) k[j] = 0.0f;
    if (c0 < c) {
        pack_t<T, V> k0 = load_p<T, V>(x + c0);
#pragma unroll
        for (int j = 0; j < V; j++) k[j] = to_f(k0.v[j]);
        for (long long r = r0 + ty; r < r1; r += (long long)U * lanes) {
            pack_t<T, V> v[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (r + (long long)u * lanes < r1) v[u] = load_p<T, V>(x + (r + (long long)u * lanes) * c + c0);
#pragma unroll
            for (int u = 0; u < U; u++)
                if (r + (long long)u * lanes < r1) {
                    n += 1.0f;
                    const float inv = __frcp_rn(n);
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        float xv = to_f(v[u].v[j]) - k[j], d = xv - mu[j];
                        mu[j] = fmaf(d, inv, mu[j]);
                        m2[j] = fmaf(d, xv - mu[j], m2[j]);
                    }
                }
        }
    }
    block_welford<V>(n, mu, m2, sh, shn);
    if (ty == 0 && c0 < c) {
#pragma unroll
        for (int j = 0; j < V; j++) {
            part[(size_t)2 * blockIdx.y * c + c0 + j] = mu[j];
            part[((size_t)2 * blockIdx.y + 1) * c + c0 + j] = m2[j];
        }
    }
    if (!last_arrival(arrivals)) return;
    double t1, t2, p;
    if (!finish_sums<V, true>(part, m, c, &t1, &t2, &p)) return;
    const int ch = blockIdx.x * blockDim.x * V + threadIdx.y * blockDim.x + threadIdx.x;
    double d = t1 / (double)m, var = t2 / (double)m - d * d;
    if (var < 0.0) var = 0.0;
    double pivot = to_f(x[ch]), mean = pivot + (p + d), inv = 1.0 / sqrt(var + eps);
    coef[CO_MEAN * c + ch] = (float)mean;
    coef[CO_INVSTD * c + ch] = (float)inv;
    coef[CO_PIVOT * c + ch] = (float)pivot;
    coef[CO_CENTRE * c + ch] = (float)(p + d);
    coef[CO_SCALE * c + ch] = (float)((double)gamma[ch] * inv);
    coef[CO_SHIFT * c + ch] = beta_add ? beta[ch] + beta_add[ch] : beta[ch];
    run_mean[ch] = (float)((1.0 - momentum) * run_mean[ch] + momentum * mean);
    run_var[ch] = (float)((1.0 - momentum) * run_var[ch] + momentum * var * ((double)m / (double)(m - 1)));
}

/* y = relu(scale (x - mean) + beta [+ x1]), x - mean as (x - pivot) - centre (both exact where it matters). Each
 * block takes the rows its twin in the statistics pass read (same grid), last group first: the rows read last are
 * the likeliest still in L2 (x is read twice, from DRAM once at best). With the add in bf16 (V = 8: a thread's
 * channels are one whole byte of the row, no other thread writes it) and bits not NULL, also the mask y > 0 as
 * bits (bn_nhwc_t.bits), tested on y as stored so that it is the mask the backward would read from y. */
template <typename T, int V, int FUSE>
__global__ void __launch_bounds__(BN_THREADS, 2)
fwd_apply_kernel(const T *__restrict__ x, const T *__restrict__ x1, T *__restrict__ y, long long m, int c,
                 const float *__restrict__ coef, unsigned char *__restrict__ bits) {
    constexpr int U = FUSE == BN_FUSE_ADD_RELU ? BN_UNROLL_MID : BN_UNROLL_WIDE;
    constexpr bool BITS = FUSE == BN_FUSE_ADD_RELU && V == 8;
    const int ty = threadIdx.y, lanes = blockDim.y;
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c0 >= c) return;
    float kp[V], mc[V], sc[V], sf[V];
#pragma unroll
    for (int j = 0; j < V; j++) {
        kp[j] = coef[CO_PIVOT * c + c0 + j];
        mc[j] = coef[CO_CENTRE * c + c0 + j];
        sc[j] = coef[CO_SCALE * c + c0 + j];
        sf[j] = coef[CO_SHIFT * c + c0 + j];
    }
    long long r0, r1, step = (long long)U * lanes;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    for (long long g0 = r0 + (r1 - r0 - 1) / step * step; r1 > r0 && g0 >= r0; g0 -= step) {
        long long r = g0 + ty;
        pack_t<T, V> v[U], w[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            long long rr = r + (long long)u * lanes;
            if (rr < r1) {
                v[u] = load_p<T, V>(x + rr * c + c0);
                if (FUSE == BN_FUSE_ADD_RELU) w[u] = load_p<T, V>(x1 + rr * c + c0);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            long long rr = r + (long long)u * lanes;
            if (rr >= r1) continue;
            pack_t<T, V> o;
            unsigned mb = 0;
#pragma unroll
            for (int j = 0; j < V; j++) {
                float a = fmaf(sc[j], (to_f(v[u].v[j]) - kp[j]) - mc[j], sf[j]);
                if (FUSE == BN_FUSE_ADD_RELU) a += to_f(w[u].v[j]);
                if (FUSE != BN_FUSE_NONE) a = fmaxf(a, 0.0f);
                o.v[j] = from_f<T>(a);
                if (BITS) mb |= (unsigned)(to_f(o.v[j]) > 0.0f) << j;
            }
            store_p<T, V>(y + rr * c + c0, o);
            if (BITS && bits) bits[rr * (c / 8) + c0 / 8] = (unsigned char)mb;
        }
    }
}

/* The mask bits from y where the forward took the scalar grid (a pointer not 16-byte aligned): every forward
 * leaves valid bits, so whether a backward may read them depends on its own pointers alone. Byte i holds elements
 * 8 i .. 8 i + 7 (c is a multiple of 8). */
template <typename T>
__global__ void bits_from_y_kernel(const T *__restrict__ y, long long bytes, unsigned char *__restrict__ bits) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < bytes;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned mb = 0;
#pragma unroll
        for (int j = 0; j < 8; j++) mb |= (unsigned)(to_f(y[i * 8 + j]) > 0.0f) << j;
        bits[i] = (unsigned char)mb;
    }
}

// --- backward

/* Where the ReLU mask of the backward comes from: none (BN_FUSE_NONE); y > 0 (BN_FUSE_ADD_RELU: the pre-activation
 * would need x1, as many bytes as y); the forward's bits of y > 0 (BN_FUSE_ADD_RELU in bf16 on the vector grid: 1
 * bit per element read instead of 16, the same mask); or the pre-activation recomputed from x, which the backward
 * reads anyway, with the forward's own arithmetic (BN_FUSE_RELU: y is never read, two passes over a tensor saved;
 * y > 0 exactly where the recomputed value is > 0, but for a positive value under 2^-133 that y rounded to 0). */
enum { MASK_NONE = 0, MASK_Y = 1, MASK_PRE = 2, MASK_BITS = 3 };

/* s1 = sum dpre, s2 = sum dpre (x - mean) with dpre = dy masked as MASK says, dpre also stored where out is not
 * NULL; the tile's last block writes dbeta, dgamma (accumulated with dw_beta) and the coefficients of
 * dx = k1 dpre + kx (x - mean) + k0. */
template <typename T, int V, int MASK>
__global__ void __launch_bounds__(BN_THREADS, 2)
bwd_reduce_kernel(const T *__restrict__ x, const T *__restrict__ y, const unsigned char *__restrict__ bits,
                  const T *__restrict__ dy, T *__restrict__ out, long long m, int c, float *part, unsigned *arrivals,
                  const float *__restrict__ gamma, float *dgamma, float *dbeta, float *dbeta_copy, float dw_beta,
                  float *coef) {
    static_assert(MASK != MASK_BITS || V == 8, "a thread's channels are one byte of bits");
    __shared__ float sh[2 * V * BN_THREADS];
    constexpr int U = MASK == MASK_Y ? BN_UNROLL_NARROW : BN_UNROLL_MID;
    static_assert(U <= 4, "U rows' mask bytes fit one unsigned");
    constexpr bool OUT = MASK == MASK_Y || MASK == MASK_BITS;   // the only masks the launcher gives an out
    const int ty = threadIdx.y, lanes = blockDim.y;
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    float kp[V], mc[V], sc[V], sf[V], s1[V], s2[V];
#pragma unroll
    for (int j = 0; j < V; j++) kp[j] = mc[j] = sc[j] = sf[j] = s1[j] = s2[j] = 0.0f;
    long long r0, r1;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    if (c0 < c) {
#pragma unroll
        for (int j = 0; j < V; j++) {
            kp[j] = coef[CO_PIVOT * c + c0 + j];
            mc[j] = coef[CO_CENTRE * c + c0 + j];
            if (MASK == MASK_PRE) {
                sc[j] = coef[CO_SCALE * c + c0 + j];
                sf[j] = coef[CO_SHIFT * c + c0 + j];
            }
        }
        for (long long r = r0 + ty; r < r1; r += (long long)U * lanes) {
            pack_t<T, V> xv[U], gv[U], yv[U];
            unsigned mb = 0;   // row u's mask byte in bits 8 u to 8 u + 7: one register, not U (no spills)
#pragma unroll
            for (int u = 0; u < U; u++) {
                long long rr = r + (long long)u * lanes;
                if (rr < r1) {
                    xv[u] = load_p<T, V>(x + rr * c + c0);
                    gv[u] = load_p<T, V>(dy + rr * c + c0);
                    if (MASK == MASK_Y) yv[u] = load_p<T, V>(y + rr * c + c0);
                    if (MASK == MASK_BITS) mb |= (unsigned)bits[rr * (c / 8) + c0 / 8] << 8 * u;
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (r + (long long)u * lanes < r1) {
                    pack_t<T, V> o;
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        float xc = (to_f(xv[u].v[j]) - kp[j]) - mc[j], d = to_f(gv[u].v[j]);
                        if (MASK == MASK_Y && !(to_f(yv[u].v[j]) > 0.0f)) d = 0.0f;
                        if (MASK == MASK_BITS && !((mb >> (8 * u + j)) & 1u)) d = 0.0f;
                        if (MASK == MASK_PRE && !(fmaf(sc[j], xc, sf[j]) > 0.0f)) d = 0.0f;
                        s1[j] += d;
                        s2[j] = fmaf(d, xc, s2[j]);
                        if (OUT) o.v[j] = from_f<T>(d);   // exact: d is dy or 0
                    }
                    if (OUT && out) store_p<T, V>(out + (r + (long long)u * lanes) * c + c0, o);
                }
        }
    }
    block_sum2<V>(s1, s2, sh);
    if (ty == 0 && c0 < c) {
#pragma unroll
        for (int j = 0; j < V; j++) {
            part[(size_t)2 * blockIdx.y * c + c0 + j] = s1[j];
            part[((size_t)2 * blockIdx.y + 1) * c + c0 + j] = s2[j];
        }
    }
    if (!last_arrival(arrivals)) return;
    double t1, t2, p;
    if (!finish_sums<V, false>(part, m, c, &t1, &t2, &p)) return;
    const int ch = blockIdx.x * blockDim.x * V + threadIdx.y * blockDim.x + threadIdx.x;
    double inv = coef[CO_INVSTD * c + ch], dg = t2 * inv, db = t1, k1 = (double)gamma[ch] * inv;
    dgamma[ch] = dw_beta == 0.0f ? (float)dg : (float)((double)dw_beta * dgamma[ch] + dg);
    dbeta[ch] = dw_beta == 0.0f ? (float)db : (float)((double)dw_beta * dbeta[ch] + db);
    if (dbeta_copy) dbeta_copy[ch] = dbeta[ch];
    coef[CO_K1 * c + ch] = (float)k1;
    coef[CO_KX * c + ch] = (float)(-k1 * inv * dg / (double)m);
    coef[CO_K0 * c + ch] = (float)(-k1 * db / (double)m);
}

/* dx = dx_beta dx + k1 dpre + kx (x - mean) + k0 (dx != NULL); dx1 = dx1_beta dx1 + dpre (dx1 != NULL). Rows in the
 * reduction's blocks, last group first, as the forward's apply pass. */
template <typename T, int V, int MASK>
__global__ void __launch_bounds__(BN_THREADS, 2)
bwd_apply_kernel(const T *__restrict__ x, const T *__restrict__ y, const unsigned char *__restrict__ bits,
                 const T *__restrict__ dy, T *dx, float dx_beta, T *dx1, float dx1_beta, long long m, int c,
                 const float *__restrict__ coef) {
    static_assert(MASK != MASK_BITS || V == 8, "a thread's channels are one byte of bits");
    constexpr int U = BN_UNROLL_NARROW;   // more spills in bf16: seven coefficient vectors take 56 registers
    static_assert(U <= 4, "U rows' mask bytes fit one unsigned");
    const int ty = threadIdx.y, lanes = blockDim.y;
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c0 >= c) return;
    float kp[V], mc[V], k1[V], kx[V], k0[V], sc[V], sf[V];
#pragma unroll
    for (int j = 0; j < V; j++) {
        kp[j] = coef[CO_PIVOT * c + c0 + j];
        mc[j] = coef[CO_CENTRE * c + c0 + j];
        sc[j] = MASK == MASK_PRE ? coef[CO_SCALE * c + c0 + j] : 0.0f;
        sf[j] = MASK == MASK_PRE ? coef[CO_SHIFT * c + c0 + j] : 0.0f;
        k1[j] = coef[CO_K1 * c + c0 + j];
        kx[j] = coef[CO_KX * c + c0 + j];
        k0[j] = coef[CO_K0 * c + c0 + j];
    }
    long long r0, r1, step = (long long)U * lanes;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    for (long long g0 = r0 + (r1 - r0 - 1) / step * step; r1 > r0 && g0 >= r0; g0 -= step) {
        long long r = g0 + ty;
        pack_t<T, V> xv[U], gv[U], yv[U];
        unsigned mb = 0;
#pragma unroll
        for (int u = 0; u < U; u++) {
            long long rr = r + (long long)u * lanes;
            if (rr < r1) {
                gv[u] = load_p<T, V>(dy + rr * c + c0);
                if (MASK == MASK_Y) yv[u] = load_p<T, V>(y + rr * c + c0);
                if (MASK == MASK_BITS) mb |= (unsigned)bits[rr * (c / 8) + c0 / 8] << 8 * u;
                if (dx || MASK == MASK_PRE) xv[u] = load_p<T, V>(x + rr * c + c0);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            long long rr = r + (long long)u * lanes;
            if (rr >= r1) continue;
            float d[V], xc[V];
#pragma unroll
            for (int j = 0; j < V; j++) {
                xc[j] = dx || MASK == MASK_PRE ? (to_f(xv[u].v[j]) - kp[j]) - mc[j] : 0.0f;
                d[j] = to_f(gv[u].v[j]);
                if (MASK == MASK_Y && !(to_f(yv[u].v[j]) > 0.0f)) d[j] = 0.0f;
                if (MASK == MASK_BITS && !((mb >> (8 * u + j)) & 1u)) d[j] = 0.0f;
                if (MASK == MASK_PRE && !(fmaf(sc[j], xc[j], sf[j]) > 0.0f)) d[j] = 0.0f;
            }
            if (dx) {
                pack_t<T, V> o;
                if (dx_beta != 0.0f) o = load_p<T, V>(dx + rr * c + c0);
#pragma unroll
                for (int j = 0; j < V; j++) {
                    float v = fmaf(k1[j], d[j], fmaf(kx[j], xc[j], k0[j]));
                    o.v[j] = from_f<T>(dx_beta != 0.0f ? fmaf(dx_beta, to_f(o.v[j]), v) : v);
                }
                store_p<T, V>(dx + rr * c + c0, o);
            }
            if (dx1) {
                pack_t<T, V> o;
                if (dx1_beta != 0.0f) o = load_p<T, V>(dx1 + rr * c + c0);
#pragma unroll
                for (int j = 0; j < V; j++)
                    o.v[j] = from_f<T>(dx1_beta != 0.0f ? fmaf(dx1_beta, to_f(o.v[j]), d[j]) : d[j]);
                store_p<T, V>(dx1 + rr * c + c0, o);
            }
        }
    }
}

// --- host side

/* Measured, not derived (tests/gpu/test_bn_nhwc --bench resnet18|resnet50, one H200, bf16, batch 256; the tables
 * in results/imagenet-h200-2026-11-24/bn-auto): at 256 channels and more over 2^22 elements and more ours took
 * 0.70-0.97 of cuDNN's time forward + backward (ResNet-50's 256-channel-and-wider layers), 1.01-1.02 at
 * 56x56x256 (about 0.05 ms of a step, left to the rule); below that cuDNN's semi-persistent kernels, which keep
 * part of the tensor on chip between their two passes, were faster by up to 1.43x (all of ResNet-18's, ResNet-50's
 * 64- and 128-channel ones, 0.98-1.15). fp32 keeps cuDNN's: ours were 3 % faster over ResNet-50's 53
 * (bn_bench_resnet50_fp32.txt there) with the shapes mixed, and no tf32 model run has tried a rule. */
int bn_nhwc_preferred(long long m, int c, dtype_t t) {
    return t == DTYPE_BF16 && c >= 256 && m * (long long)c >= (1LL << 22);
}

static int vec_of(dtype_t t) { return 16 / (int)dtype_size(t); }

static bn_nhwc_grid_t grid_plan(long long m, int c, int vec, long long resident) {
    bn_nhwc_grid_t g;
    int cv = c / vec, want = vec > 1 ? BN_TILE_CHANNELS / vec : 32;
    g.vec = vec;
    g.tw = cv < want ? cv : want;
    g.lanes = BN_THREADS / g.tw;
    g.tiles = (cv + g.tw - 1) / g.tw;
    long long rows = (long long)g.lanes * BN_MIN_ROWS, rb = (m + rows - 1) / rows;
    if (rb > BN_MAX_ROW_BLOCKS) rb = BN_MAX_ROW_BLOCKS;
    /* One wave: every block of a reduction resident at once, so no block waits for another to finish. */
    if (resident > 0 && rb > resident / g.tiles) rb = resident / g.tiles;
    g.rb = rb < 1 ? 1 : (int)rb;
    return g;
}

/* The floats before the arrival counts: coefficients, then partial sums for the larger of the two grids. */
static size_t scratch_floats(long long m, int c, dtype_t t, int *tiles) {
    int vec = c % vec_of(t) == 0 ? vec_of(t) : 1;
    bn_nhwc_grid_t v = grid_plan(m, c, vec, 0), s = grid_plan(m, c, 1, 0);
    int rb = v.rb > s.rb ? v.rb : s.rb;
    *tiles = v.tiles > s.tiles ? v.tiles : s.tiles;
    size_t n = (size_t)CO_COUNT * c + (size_t)2 * rb * c;
    return (n + 3) & ~(size_t)3;   // the counts start 16-byte aligned
}

int bn_nhwc_has_bits(int c, dtype_t t, int fuse) {
    return t == DTYPE_BF16 && c % 8 == 0 && fuse == BN_FUSE_ADD_RELU;
}

/* The ReLU mask's bits, after the arrival counts. */
static size_t bits_bytes(long long m, int c, dtype_t t, int fuse) {
    return bn_nhwc_has_bits(c, t, fuse) ? (size_t)m * (size_t)(c / 8) : 0;
}

size_t bn_nhwc_scratch_bytes(long long m, int c, dtype_t t, int fuse) {
    int tiles = 0;
    size_t n = scratch_floats(m, c, t, &tiles);
    return n * sizeof(float) + (size_t)tiles * sizeof(unsigned) + bits_bytes(m, c, t, fuse);
}

template <typename T, int V>
static long long resident_blocks(int sms) {
    int a = 0, b = 0, c = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&a, fwd_stats_kernel<T, V>, BN_THREADS, 0));
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, bwd_reduce_kernel<T, V, MASK_Y>, BN_THREADS, 0));
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c, bwd_reduce_kernel<T, V, MASK_PRE>, BN_THREADS, 0));
    int n = a < b ? a : b;
    n = n < c ? n : c;
    if constexpr (V == 8) {
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c, bwd_reduce_kernel<T, V, MASK_BITS>, BN_THREADS,
                                                                 0));
        n = n < c ? n : c;
    }
    return (long long)(n > 0 ? n : 1) * sms;
}

void bn_nhwc_init(bn_nhwc_t *b, long long m, int c, dtype_t t, int fuse, int device, cudaStream_t stream) {
    memset(b, 0, sizeof *b);
    b->m = m;
    b->c = c;
    b->dtype = t;
    b->fuse = fuse;
    int sms = 0, vec = c % vec_of(t) == 0 ? vec_of(t) : 1;
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    long long res_v, res_s;
    if (t == DTYPE_BF16) {
        res_v = resident_blocks<__nv_bfloat16, 8>(sms);
        res_s = resident_blocks<__nv_bfloat16, 1>(sms);
    } else {
        res_v = resident_blocks<float, 4>(sms);
        res_s = resident_blocks<float, 1>(sms);
    }
    b->vector = grid_plan(m, c, vec, vec > 1 ? res_v : res_s);
    b->scalar = grid_plan(m, c, 1, res_s);
    int tiles = 0;
    size_t nf = scratch_floats(m, c, t, &tiles);
    CHECK_ALLOC(cudaMalloc((void **)&b->scratch, bn_nhwc_scratch_bytes(m, c, t, fuse)));
    b->arrivals = (unsigned *)(b->scratch + nf);
    CHECK_CUDA(cudaMemsetAsync(b->arrivals, 0, (size_t)tiles * sizeof(unsigned), stream));
    if (bits_bytes(m, c, t, fuse)) {   // zeroed as the statistics below: a backward without a forward masks all
        b->bits = (unsigned char *)(b->arrivals + tiles);
        CHECK_CUDA(cudaMemsetAsync(b->bits, 0, bits_bytes(m, c, t, fuse), stream));
    }
    /* Saved statistics defined before any forward: a backward without one reads zeros, not garbage. */
    CHECK_CUDA(cudaMemsetAsync(b->scratch, 0, (size_t)CO_COUNT * c * sizeof(float), stream));
}

void bn_nhwc_free(bn_nhwc_t *b) {
    if (b->scratch) CHECK_CUDA(cudaFree(b->scratch));   // arrivals and bits with it
    memset(b, 0, sizeof *b);
}

const float *bn_nhwc_saved(const bn_nhwc_t *b) { return b->scratch + (size_t)CO_MEAN * b->c; }

static int aligned16(const void *p) { return p == NULL || ((uintptr_t)p & 15u) == 0; }

/* The vector grid when every pointer allows 16-byte accesses, else the scalar one. */
static const bn_nhwc_grid_t *grid_for(const bn_nhwc_t *b, const void *p0, const void *p1, const void *p2,
                                      const void *p3, const void *p4) {
    int ok = b->vector.vec > 1 && aligned16(p0) && aligned16(p1) && aligned16(p2) && aligned16(p3) && aligned16(p4);
    return ok ? &b->vector : &b->scalar;
}

void bn_nhwc_describe(const bn_nhwc_t *b, char *buf, size_t len) {
    snprintf(buf, len, "vec %d, %d x %d blocks of %d x %d, scratch %zu bytes%s", b->vector.vec, b->vector.tiles,
             b->vector.rb, b->vector.tw, b->vector.lanes, bn_nhwc_scratch_bytes(b->m, b->c, b->dtype, b->fuse),
             b->bits ? ", ReLU mask in bits" : "");
}

/* The arguments of one call, type-erased; the launchers below cast them to the layer's element type T. */
typedef struct {
    const void *x, *x1;
    void *y;
    const float *gamma, *beta, *beta_add;
    float *rm, *rv;
    double eps, mom;
} fwd_args_t;

typedef struct {
    const void *x, *y, *dy;
    void *dx, *dx1;
    float dx_beta, dx1_beta, dw_beta;
    const float *gamma;
    float *dgamma, *dbeta, *dbeta_copy;
} bwd_args_t;

/* Runs L<T, V>::run for the layer's element type T and the grid's vector width V. */
template <template <typename, int> class L, typename A>
static void dispatch(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const A &a, cudaStream_t s) {
    if (b->dtype == DTYPE_BF16) {
        if (g->vec > 1) L<__nv_bfloat16, 8>::run(b, g, a, s);
        else L<__nv_bfloat16, 1>::run(b, g, a, s);
    } else {
        if (g->vec > 1) L<float, 4>::run(b, g, a, s);
        else L<float, 1>::run(b, g, a, s);
    }
}

template <typename T, int V>
struct fwd_launch {
    template <int FUSE>
    static void apply(const bn_nhwc_t *b, dim3 grid, dim3 block, const fwd_args_t &a, cudaStream_t s) {
        fwd_apply_kernel<T, V, FUSE><<<grid, block, 0, s>>>((const T *)a.x, (const T *)a.x1, (T *)a.y, b->m, b->c,
                                                            b->scratch, b->bits);
        CHECK_LAUNCH();
    }
    static void run(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const fwd_args_t &a, cudaStream_t s) {
        dim3 grid(g->tiles, g->rb), block(g->tw, g->lanes);
        fwd_stats_kernel<T, V><<<grid, block, 0, s>>>((const T *)a.x, b->m, b->c, b->scratch + (size_t)CO_COUNT * b->c,
                                                      b->arrivals, a.gamma, a.beta, a.beta_add, a.rm, a.rv,
                                                      b->scratch, a.eps, a.mom);
        CHECK_LAUNCH();
        if (b->fuse == BN_FUSE_ADD_RELU) apply<BN_FUSE_ADD_RELU>(b, grid, block, a, s);
        else if (b->fuse == BN_FUSE_RELU) apply<BN_FUSE_RELU>(b, grid, block, a, s);
        else apply<BN_FUSE_NONE>(b, grid, block, a, s);
    }
};

void bn_nhwc_forward(const bn_nhwc_t *b, const void *x, const void *x1, void *y, const float *gamma,
                     const float *beta, const float *beta_add, float *running_mean, float *running_var, double eps,
                     double momentum, cudaStream_t stream) {
    fwd_args_t a = {x, b->fuse == BN_FUSE_ADD_RELU ? x1 : NULL, y, gamma, beta, beta_add, running_mean,
                    running_var, eps, momentum};
    const bn_nhwc_grid_t *g = grid_for(b, a.x, a.x1, a.y, NULL, NULL);
    dispatch<fwd_launch>(b, g, a, stream);
    if (b->bits && g->vec == 1) {   // the vector grid's apply pass wrote them; bits implies bf16
        long long bytes = b->m * (b->c / 8);
        bits_from_y_kernel<__nv_bfloat16><<<launch_blocks((size_t)bytes, BN_THREADS, 65536), BN_THREADS, 0, stream>>>(
            (const __nv_bfloat16 *)y, bytes, b->bits);
        CHECK_LAUNCH();
    }
}

template <typename T, int V>
struct bwd_launch {
    template <int MASK>
    static void go(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const bwd_args_t &a, cudaStream_t s) {
        dim3 grid(g->tiles, g->rb), block(g->tw, g->lanes);
        const T *x = (const T *)a.x, *y = (const T *)a.y, *dy = (const T *)a.dy;
        /* An overwritten dx1 is dpre itself: the reduction writes it, and the element-wise pass reads it back as an
         * unmasked gradient instead of reading dy and the mask again (7 passes over the tensor instead of 8 with
         * y; with the bits 6 either way, the bits read once instead of twice). */
        const int early = (MASK == MASK_Y || MASK == MASK_BITS) && a.dx1 && a.dx1_beta == 0.0f && a.dx;
        bwd_reduce_kernel<T, V, MASK><<<grid, block, 0, s>>>(x, y, b->bits, dy, early ? (T *)a.dx1 : NULL, b->m,
                                                             b->c, b->scratch + (size_t)CO_COUNT * b->c,
                                                             b->arrivals, a.gamma, a.dgamma, a.dbeta, a.dbeta_copy,
                                                             a.dw_beta, b->scratch);
        CHECK_LAUNCH();
        if (early)
            bwd_apply_kernel<T, V, MASK_NONE><<<grid, block, 0, s>>>(x, NULL, NULL, (const T *)a.dx1, (T *)a.dx,
                                                                     a.dx_beta, NULL, 0.0f, b->m, b->c, b->scratch);
        else if (a.dx || a.dx1)
            bwd_apply_kernel<T, V, MASK><<<grid, block, 0, s>>>(x, y, b->bits, dy, (T *)a.dx, a.dx_beta, (T *)a.dx1,
                                                                a.dx1_beta, b->m, b->c, b->scratch);
        else
            return;
        CHECK_LAUNCH();
    }
    static void run(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const bwd_args_t &a, cudaStream_t s) {
        /* Bits exist only where the vector grid has V = 8, and every forward leaves them valid (bits_from_y_kernel
         * after a scalar one): this call's own grid decides. */
        if constexpr (V == 8)
            if (b->fuse == BN_FUSE_ADD_RELU && b->bits) return go<MASK_BITS>(b, g, a, s);
        if (b->fuse == BN_FUSE_ADD_RELU) go<MASK_Y>(b, g, a, s);
        else if (b->fuse == BN_FUSE_RELU) go<MASK_PRE>(b, g, a, s);
        else go<MASK_NONE>(b, g, a, s);
    }
};

void bn_nhwc_backward(const bn_nhwc_t *b, const void *x, const void *y, const void *dy, void *dx, float dx_beta,
                      void *dx1, float dx1_beta, const float *gamma, float *dgamma, float *dbeta, float *dbeta_copy,
                      float dw_beta, cudaStream_t stream) {
    int add = b->fuse == BN_FUSE_ADD_RELU;   // the only mode that reads y (MASK_Y) or bits and writes dx1
    bwd_args_t a = {x, add ? y : NULL, dy, dx, add ? dx1 : NULL, dx_beta, dx1_beta, dw_beta, gamma, dgamma, dbeta,
                    dbeta_copy};
    dispatch<bwd_launch>(b, grid_for(b, a.x, a.y, a.dy, a.dx, a.dx1), a, stream);
}
