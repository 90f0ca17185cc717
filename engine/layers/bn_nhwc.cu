/* bn_nhwc.cu — batch-norm training kernels for NHWC activations, near memory bandwidth: each direction is one
 * reduction over rows (partial sums per block, the tile's last block finishes the channel) and one element-wise
 * pass. */
#include "bn_nhwc.h"
#include "../check.h"
#include "../layer.h"
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BN_THREADS 256
/* Channels one block covers with 16-byte accesses: 128 (bf16) or 256 (fp32) contiguous bytes of every row, whole
 * cache lines, and few enough that the finishing block sums a channel's partials with several threads. */
#define BN_TILE_CHANNELS 64
#define BN_MIN_ROWS 2           /* rows per thread at least: small activations still fill one wave */
#define BN_MAX_ROW_BLOCKS 512   /* partial sums kept per channel, the bound of the scratch */
/* Rows loaded before any is used (memory-level parallelism: with two blocks of 256 threads per SM, an SM needs about
 * 100 bytes in flight per thread to keep up with HBM3e), as many as fit in 128 registers without spilling: U per
 * kernel, from these. */
#define BN_UNROLL_WIDE 8        /* one tensor read per row (statistics) */
#define BN_UNROLL_MID 4         /* two (apply with the add; backward reduction without it) */
#define BN_UNROLL_NARROW 2      /* three (backward reduction with the add), and the backward's element-wise pass */

/* Per-channel coefficients in the scratch, in units of C floats. */
enum {
    CO_MEAN = 0, CO_INVSTD,     /* what the forward saves (bn_nhwc_saved) */
    CO_PIVOT, CO_CENTRE,        /* x - mean as (x - pivot) - centre: pivot = x in row 0, centre = mean - pivot */
    CO_SCALE, CO_SHIFT,         /* gamma invstd, beta */
    CO_K1, CO_KX, CO_K0,        /* dx = k1 dpre + kx (x - mean) + k0 */
    CO_COUNT
};

// --- element access: V adjacent channels, one 16-byte access when V > 1, kept packed until used (half the
// registers of floats for bf16, so more rows can be in flight)

template <typename T, int V>
struct alignas(sizeof(T) * V) pack_t { T v[V]; };

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <typename T, int V>
__device__ __forceinline__ pack_t<T, V> load_p(const T *p) { return *reinterpret_cast<const pack_t<T, V> *>(p); }
template <typename T, int V>
__device__ __forceinline__ void store_p(T *p, const pack_t<T, V> &q) { *reinterpret_cast<pack_t<T, V> *>(p) = q; }

// --- block-level pieces shared by the kernels

/* Rows [r0, r1) of row block b of nb: contiguous chunks, so a pass walks memory in order. */
__device__ __forceinline__ void rows_of(long long m, int nb, int b, long long *r0, long long *r1) {
    long long per = (m + nb - 1) / nb;
    *r0 = (long long)b * per;
    *r1 = *r0 + per < m ? *r0 + per : m;
    if (*r0 > m) *r0 = m;
}

/* Sums every row lane's a[] and b[] into row lane 0's registers, in a fixed tree (bit-identical run to run).
 * sh: 2 V blockDim.x blockDim.y floats. Every thread of the block calls it. */
template <int V>
__device__ __forceinline__ void block_sum2(float (&a)[V], float (&b)[V], float *sh) {
    const int tx = threadIdx.x, ty = threadIdx.y, tw = blockDim.x, lanes = blockDim.y, nt = tw * lanes;
    int p2 = 1;
    while (p2 < lanes) p2 <<= 1;
    for (int s = p2 / 2; s >= 1; s >>= 1) {
        if (ty >= s && ty < 2 * s) {   // ty < lanes always: these publish, row lanes [0, s) add them
#pragma unroll
            for (int j = 0; j < V; j++) {
                sh[j * nt + ty * tw + tx] = a[j];
                sh[(V + j) * nt + ty * tw + tx] = b[j];
            }
        }
        __syncthreads();
        if (ty < s && ty + s < lanes) {
#pragma unroll
            for (int j = 0; j < V; j++) {
                a[j] += sh[j * nt + (ty + s) * tw + tx];
                b[j] += sh[(V + j) * nt + (ty + s) * tw + tx];
            }
        }
        __syncthreads();
    }
}

/* Merges every row lane's Welford state (count n, means, sums of squared deviations m2) into row lane 0's, with
 * Chan's formula, in a fixed tree. sh: 2 V blockDim.x blockDim.y floats, shn: blockDim.x blockDim.y floats. */
template <int V>
__device__ __forceinline__ void block_welford(float &n, float (&mean)[V], float (&m2)[V], float *sh, float *shn) {
    const int tx = threadIdx.x, ty = threadIdx.y, tw = blockDim.x, lanes = blockDim.y, nt = tw * lanes;
    int p2 = 1;
    while (p2 < lanes) p2 <<= 1;
    for (int s = p2 / 2; s >= 1; s >>= 1) {
        if (ty >= s && ty < 2 * s) {
            shn[ty * tw + tx] = n;
#pragma unroll
            for (int j = 0; j < V; j++) {
                sh[j * nt + ty * tw + tx] = mean[j];
                sh[(V + j) * nt + ty * tw + tx] = m2[j];
            }
        }
        __syncthreads();
        if (ty < s && ty + s < lanes) {
            const int o = (ty + s) * tw + tx;
            float nb = shn[o];
            if (nb > 0.0f) {   // n = 0 takes the other side whole: f = 1, g = 0
                float nn = n + nb, f = nb / nn, g = n * f;
#pragma unroll
                for (int j = 0; j < V; j++) {
                    float d = sh[j * nt + o] - mean[j];
                    mean[j] = fmaf(d, f, mean[j]);
                    m2[j] += sh[(V + j) * nt + o] + d * d * g;
                }
                n = nn;
            }
        }
        __syncthreads();
    }
}

/* After the block's partial sums are stored: 1 in the block that arrives last among its tile's row blocks (it then
 * sees every partial), which also re-arms the count for the next launch. */
__device__ __forceinline__ int last_arrival(unsigned *arrivals) {
    __shared__ int last;
    __threadfence();   // this thread's partial sums are visible device-wide before the block is counted
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        unsigned done = atomicAdd(arrivals + blockIdx.x, 1u);
        last = done == gridDim.y - 1;
        if (last) arrivals[blockIdx.x] = 0;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

/* In the last block: the tile's channel ch (thread t < tile width in channels) gets the sums over all row blocks
 * of part[2 b + k][ch] for k = 0, 1, in double, in a fixed order: threads split the row blocks into groups, then
 * group 0 adds the groups in order. Returns 1 for the threads that hold a channel's totals. WELFORD: the partials
 * are row block b's mean and m2 over its n_b rows, and the totals are sum n_b (mean_b - p) and
 * sum m2_b + n_b (mean_b - p)^2 (*t1, *t2) around the pivot p = row block 0's mean (*pivot): sums of x - p and of
 * (x - p)^2 over all rows, which give the variance with no more cancellation than p lies from the mean. */
template <int V, bool WELFORD>
__device__ __forceinline__ int finish_sums(const float *part, long long m, int c, double *t1, double *t2,
                                           double *pivot) {
    __shared__ double shd[2][BN_THREADS];
    const int nt = blockDim.x * blockDim.y, t = threadIdx.y * blockDim.x + threadIdx.x;
    const int ct = blockDim.x * V, groups = nt / ct;   // ct <= nt: V <= lanes for every grid the host plans
    const int j = t % ct, grp = t / ct, ch = blockIdx.x * ct + j;
    double s1 = 0.0, s2 = 0.0, p = 0.0;
    if (grp < groups && ch < c) {
        const long long per = (m + gridDim.y - 1) / gridDim.y;
        if (WELFORD) p = __ldcg(part + ch);
#pragma unroll 16
        for (int b = grp; b < (int)gridDim.y; b += groups) {
            double a = __ldcg(part + (size_t)2 * b * c + ch), q = __ldcg(part + ((size_t)2 * b + 1) * c + ch);
            if (WELFORD) {
                long long r0 = (long long)b * per, r1 = r0 + per < m ? r0 + per : m;
                double nb = r1 > r0 ? (double)(r1 - r0) : 0.0, d = a - p;
                s1 += nb * d;
                s2 += q + nb * d * d;
            } else {
                s1 += a;
                s2 += q;
            }
        }
    }
    if (grp < groups) {
        shd[0][t] = s1;
        shd[1][t] = s2;
    }
    __syncthreads();
    if (grp != 0 || ch >= c) return 0;
    for (int g = 1; g < groups; g++) {
        s1 += shd[0][g * ct + j];
        s2 += shd[1][g * ct + j];
    }
    *t1 = s1;
    *t2 = s2;
    *pivot = p;
    return 1;
}

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
 * the likeliest still in L2 (x is read twice, from DRAM once at best). */
template <typename T, int V, int FUSE>
__global__ void __launch_bounds__(BN_THREADS, 2)
fwd_apply_kernel(const T *__restrict__ x, const T *__restrict__ x1, T *__restrict__ y, long long m, int c,
                 const float *__restrict__ coef) {
    constexpr int U = FUSE == BN_FUSE_ADD_RELU ? BN_UNROLL_MID : BN_UNROLL_WIDE;
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
#pragma unroll
            for (int j = 0; j < V; j++) {
                float a = fmaf(sc[j], (to_f(v[u].v[j]) - kp[j]) - mc[j], sf[j]);
                if (FUSE == BN_FUSE_ADD_RELU) a += to_f(w[u].v[j]);
                if (FUSE != BN_FUSE_NONE) a = fmaxf(a, 0.0f);
                o.v[j] = from_f<T>(a);
            }
            store_p<T, V>(y + rr * c + c0, o);
        }
    }
}

// --- backward

/* Where the ReLU mask of the backward comes from: none (BN_FUSE_NONE); y > 0 (BN_FUSE_ADD_RELU: the pre-activation
 * would need x1, as many bytes as y); or the pre-activation recomputed from x, which the backward reads anyway, with
 * the forward's own arithmetic (BN_FUSE_RELU: y is never read, two passes over a tensor saved; y > 0 exactly where
 * the recomputed value is > 0, but for a positive value under 2^-133 that y rounded to 0). */
enum { MASK_NONE = 0, MASK_Y = 1, MASK_PRE = 2 };

/* s1 = sum dpre, s2 = sum dpre (x - mean) with dpre = dy masked as MASK says; the tile's last block writes
 * dbeta, dgamma (accumulated with dw_beta) and the coefficients of dx = k1 dpre + kx (x - mean) + k0. */
template <typename T, int V, int MASK>
__global__ void __launch_bounds__(BN_THREADS, 2)
bwd_reduce_kernel(const T *__restrict__ x, const T *__restrict__ y, const T *__restrict__ dy, long long m, int c,
                  float *part, unsigned *arrivals, const float *__restrict__ gamma, float *dgamma, float *dbeta,
                  float *dbeta_copy, float dw_beta, float *coef) {
    __shared__ float sh[2 * V * BN_THREADS];
    constexpr int U = MASK == MASK_Y ? BN_UNROLL_NARROW : BN_UNROLL_MID;
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
#pragma unroll
            for (int u = 0; u < U; u++) {
                long long rr = r + (long long)u * lanes;
                if (rr < r1) {
                    xv[u] = load_p<T, V>(x + rr * c + c0);
                    gv[u] = load_p<T, V>(dy + rr * c + c0);
                    if (MASK == MASK_Y) yv[u] = load_p<T, V>(y + rr * c + c0);
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (r + (long long)u * lanes < r1) {
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        float xc = (to_f(xv[u].v[j]) - kp[j]) - mc[j], d = to_f(gv[u].v[j]);
                        if (MASK == MASK_Y && !(to_f(yv[u].v[j]) > 0.0f)) d = 0.0f;
                        if (MASK == MASK_PRE && !(fmaf(sc[j], xc, sf[j]) > 0.0f)) d = 0.0f;
                        s1[j] += d;
                        s2[j] = fmaf(d, xc, s2[j]);
                    }
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
bwd_apply_kernel(const T *__restrict__ x, const T *__restrict__ y, const T *__restrict__ dy, T *dx, float dx_beta,
                 T *dx1, float dx1_beta, long long m, int c, const float *__restrict__ coef) {
    constexpr int U = BN_UNROLL_NARROW;   // more spills in bf16: seven coefficient vectors take 56 registers
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
#pragma unroll
        for (int u = 0; u < U; u++) {
            long long rr = r + (long long)u * lanes;
            if (rr < r1) {
                gv[u] = load_p<T, V>(dy + rr * c + c0);
                if (MASK == MASK_Y) yv[u] = load_p<T, V>(y + rr * c + c0);
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

size_t bn_nhwc_scratch_bytes(long long m, int c, dtype_t t) {
    int tiles = 0;
    size_t n = scratch_floats(m, c, t, &tiles);
    return n * sizeof(float) + (size_t)tiles * sizeof(unsigned);
}

template <typename T, int V>
static long long resident_blocks(int sms) {
    int a = 0, b = 0, c = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&a, fwd_stats_kernel<T, V>, BN_THREADS, 0));
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, bwd_reduce_kernel<T, V, MASK_Y>, BN_THREADS, 0));
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c, bwd_reduce_kernel<T, V, MASK_PRE>, BN_THREADS, 0));
    int n = a < b ? a : b;
    n = n < c ? n : c;
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
    CHECK_ALLOC(cudaMalloc((void **)&b->scratch, bn_nhwc_scratch_bytes(m, c, t)));
    b->arrivals = (unsigned *)(b->scratch + nf);
    CHECK_CUDA(cudaMemsetAsync(b->arrivals, 0, (size_t)tiles * sizeof(unsigned), stream));
    /* Saved statistics defined before any forward: a backward without one reads zeros, not garbage. */
    CHECK_CUDA(cudaMemsetAsync(b->scratch, 0, (size_t)CO_COUNT * c * sizeof(float), stream));
}

void bn_nhwc_free(bn_nhwc_t *b) {
    if (b->scratch) CHECK_CUDA(cudaFree(b->scratch));
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
    snprintf(buf, len, "vec %d, %d x %d blocks of %d x %d, scratch %zu bytes", b->vector.vec, b->vector.tiles,
             b->vector.rb, b->vector.tw, b->vector.lanes, bn_nhwc_scratch_bytes(b->m, b->c, b->dtype));
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
                                                            b->scratch);
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
    dispatch<fwd_launch>(b, grid_for(b, a.x, a.x1, a.y, NULL, NULL), a, stream);
}

template <typename T, int V>
struct bwd_launch {
    template <int MASK>
    static void go(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const bwd_args_t &a, cudaStream_t s) {
        dim3 grid(g->tiles, g->rb), block(g->tw, g->lanes);
        const T *x = (const T *)a.x, *y = (const T *)a.y, *dy = (const T *)a.dy;
        bwd_reduce_kernel<T, V, MASK><<<grid, block, 0, s>>>(x, y, dy, b->m, b->c,
                                                             b->scratch + (size_t)CO_COUNT * b->c, b->arrivals,
                                                             a.gamma, a.dgamma, a.dbeta, a.dbeta_copy, a.dw_beta,
                                                             b->scratch);
        CHECK_LAUNCH();
        if (!a.dx && !a.dx1) return;
        bwd_apply_kernel<T, V, MASK><<<grid, block, 0, s>>>(x, y, dy, (T *)a.dx, a.dx_beta, (T *)a.dx1, a.dx1_beta,
                                                            b->m, b->c, b->scratch);
        CHECK_LAUNCH();
    }
    static void run(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const bwd_args_t &a, cudaStream_t s) {
        if (b->fuse == BN_FUSE_ADD_RELU) go<MASK_Y>(b, g, a, s);
        else if (b->fuse == BN_FUSE_RELU) go<MASK_PRE>(b, g, a, s);
        else go<MASK_NONE>(b, g, a, s);
    }
};

void bn_nhwc_backward(const bn_nhwc_t *b, const void *x, const void *y, const void *dy, void *dx, float dx_beta,
                      void *dx1, float dx1_beta, const float *gamma, float *dgamma, float *dbeta, float *dbeta_copy,
                      float dw_beta, cudaStream_t stream) {
    int add = b->fuse == BN_FUSE_ADD_RELU;   // the only mode that reads y (MASK_Y) and writes dx1
    bwd_args_t a = {x, add ? y : NULL, dy, dx, add ? dx1 : NULL, dx_beta, dx1_beta, dw_beta, gamma, dgamma, dbeta,
                    dbeta_copy};
    dispatch<bwd_launch>(b, grid_for(b, a.x, a.y, a.dy, a.dx, a.dx1), a, stream);
}
