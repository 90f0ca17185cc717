/* bn_nhwc_block.cuh — what bn_nhwc.cu's kernels share: launch constants, packed 16-byte element access and the
 * block-level reductions (row-lane tree sums, Welford merges, the last-arriving block's finish). */
#pragma once
#include <cuda_bf16.h>
#include "elem.cuh"

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
#define BN_UNROLL_MID 4         /* two (apply with the add; backward reduction without y, mask bits or none) */
#define BN_UNROLL_NARROW 2      /* three (backward reduction with y), and the backward's element-wise pass */

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

