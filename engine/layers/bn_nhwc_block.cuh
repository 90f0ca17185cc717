/* bn_nhwc_block.cuh — what bn_nhwc.cu's and bn_nhwc_persist.cu's kernels share: launch constants, the per-channel
 * coefficients, the two ways a thread streams its rows (registers, or a per-thread ring of cp.async copies in shared
 * memory), the block-level reductions (row-lane tree sums, Welford merges, the last-arriving block's finish), the
 * coefficient formulas and the grid-wide barrier of the persistent kernels. */
#pragma once
#include <cuda_bf16.h>
#include "elem.cuh"

#define BN_THREADS 256
/* Channels one block covers with 16-byte accesses: 128 (2-byte types) or 256 (fp32) contiguous bytes of every row,
 * whole cache lines, and few enough that the finishing block sums a channel's partials with several threads. */
#define BN_TILE_CHANNELS 64
#define BN_MIN_ROWS 2           /* rows per thread at least: small activations still fill one wave */
#define BN_MAX_ROW_BLOCKS 512   /* partial sums kept per channel, the bound of the scratch */
/* Register streaming (BN_NHWC_REG): rows loaded before any is used, as many as fit in 128 registers without spilling:
 * U per kernel, from these. */
#define BN_UNROLL_WIDE 8        /* one tensor read per row (statistics) */
#define BN_UNROLL_MID 4         /* two (apply with the add; backward reduction without y, mask bits or none) */
#define BN_UNROLL_NARROW 2      /* three (backward reduction with y), and the backward's element-wise pass */
/* Ring streaming (BN_NHWC_RING): each thread keeps RING_STAGES batches of RING_ROWS rows of its own in flight as
 * cp.async copies into shared memory, so the bytes in flight (about 200 per thread, 100-150 KB per SM) no longer
 * cost registers, and the next batches load while this one is summed. A thread reads back only what it copied:
 * cp.async.wait_group orders it, no barrier. */
#define BN_RING_STAGES 4
#define BN_RING_ROWS 2

/* Per-channel coefficients in the scratch, in units of C floats. x - mean is computed as x - mean_f, one rounding
 * relative to the difference itself, with mean_f = fp32(mean); the rest, mlo = mean - mean_f, is folded into the
 * shift and k0 (and into the backward's sum of dpre (x - mean)), so that an offset far larger than the spread costs
 * no precision. */
enum {
    CO_MEAN = 0, CO_INVSTD,     /* what the forward saves (bn_nhwc_saved): mean_f, 1/sqrt(var + eps) */
    CO_MLO,                     /* mean - mean_f */
    CO_SCALE, CO_SHIFT,         /* y = scale (x - mean_f) + shift: gamma invstd, beta [+ beta_add] - scale mlo */
    CO_K1, CO_KX, CO_K0,        /* dx = k1 dpre + kx (x - mean_f) + k0 */
    CO_COUNT
};

/* How the kernels stream rows. */
enum { LOAD_REG = 0, LOAD_RING = 1 };

// --- streaming a thread's rows: rows first, first + lanes, ... (n of them), tensors src[0..NT) at channels c0..c0+V

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async4(void *smem, const void *gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem) : "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait();
/* cp.async.wait_group with n from a loop unrolled at compile time (n < 4). */
__device__ __forceinline__ void cp_async_wait_upto(int n) {
    if (n >= 3) cp_async_wait<3>();
    else if (n == 2) cp_async_wait<2>();
    else if (n == 1) cp_async_wait<1>();
    else cp_async_wait<0>();
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

/* The ReLU mask bits' byte of row rr for channels c0..c0+7 (bn_nhwc_t.bits: row-major, c/8 bytes a row). */
__device__ __forceinline__ long long bits_at(long long rr, int c, int c0) { return rr * (c / 8) + c0 / 8; }

/* A thread's rows in its block's chunk [r0, r1): first = r0 + threadIdx.y, every lanes-th, n of them. */
struct rows_t {
    long long first, n;
    int lanes;
    __device__ __forceinline__ long long row(long long i) const { return first + (long long)lanes * i; }
};
__device__ __forceinline__ rows_t thread_rows(long long r0, long long r1) {
    rows_t t;
    t.lanes = blockDim.y;
    t.first = r0 + threadIdx.y;
    t.n = t.first < r1 ? (r1 - t.first + t.lanes - 1) / t.lanes : 0;
    return t;
}

/* Calls body(rr, p, mb) for each of the thread's rows rr, p[k] the V elements of src[k] there, mb the row's mask byte
 * (BITS) — in batches of U rows loaded into registers before any is used; REV: last batch first. */
template <typename T, int V, int NT, bool BITS, int U, bool REV, typename F>
__device__ __forceinline__ void rows_reg(const T *const (&src)[NT], const unsigned char *bits, const rows_t &t, int c,
                                         int c0, F &&body) {
    static_assert(!BITS || U <= 4, "U rows' mask bytes fit one unsigned");
    const long long nb = (t.n + U - 1) / U;
    for (long long k = 0; k < nb; k++) {
        const long long b = REV ? nb - 1 - k : k;
        pack_t<T, V> p[U][NT];
        unsigned mb = 0;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long i = b * U + u;
            if (i < t.n) {
                const long long rr = t.row(i);
#pragma unroll
                for (int q = 0; q < NT; q++) p[u][q] = load_p<T, V>(src[q] + rr * c + c0);
                if (BITS) mb |= (unsigned)bits[bits_at(rr, c, c0)] << 8 * u;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long i = b * U + u;
            if (i < t.n) body(t.row(i), p[u], (mb >> 8 * u) & 0xffu);
        }
    }
}

/* Bytes of the ring a block of nthreads needs: per thread S stages of U rows of NT 16-byte packs (and 4 bytes of
 * mask bits a row). */
template <int NT, bool BITS>
__host__ __device__ constexpr size_t ring_bytes(int nthreads) {
    return (size_t)BN_RING_STAGES * BN_RING_ROWS * (16 * NT + (BITS ? 4 : 0)) * (size_t)nthreads;
}

/* As rows_reg, through the thread's ring in shared memory (ring_bytes): batch b + S - 1 is copied while batch b is
 * used. Every copy has landed when it returns (the ring may be reused). V elements of T are 16 bytes. */
template <typename T, int V, int NT, bool BITS, bool REV, typename F>
__device__ __forceinline__ void rows_ring(const T *const (&src)[NT], const unsigned char *bits, const rows_t &t, int c,
                                          int c0, unsigned char *ring, F &&body) {
    constexpr int S = BN_RING_STAGES, U = BN_RING_ROWS;
    static_assert(sizeof(pack_t<T, V>) == 16, "ring slots are 16 bytes");
    const int nth = blockDim.x * blockDim.y, tid = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned char *const mine = ring + (size_t)tid * 16, *const mbits = ring + (size_t)S * U * NT * 16 * nth + tid * 4;
    const long long nb = (t.n + U - 1) / U;
    auto slot = [&](long long b, int u, int q) { return mine + ((size_t)(((int)(b % S) * U + u) * NT + q) * nth) * 16; };
    auto bslot = [&](long long b, int u) { return mbits + (size_t)(((int)(b % S) * U + u) * nth) * 4; };
    auto issue = [&](long long k) {   /* the k-th batch in walking order; past the end an empty group */
        if (k < nb) {
            const long long b = REV ? nb - 1 - k : k;
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long long i = b * U + u;
                if (i < t.n) {
                    const long long rr = t.row(i);
#pragma unroll
                    for (int q = 0; q < NT; q++) cp_async16(slot(k, u, q), src[q] + rr * c + c0);
                    if (BITS) cp_async4(bslot(k, u), bits + (bits_at(rr, c, c0) & ~3LL));
                }
            }
        }
        cp_async_commit();
    };
#pragma unroll
    for (int k = 0; k < S - 1; k++) issue(k);
    for (long long k = 0; k < nb; k++) {
        issue(k + S - 1);   /* into the stage batch k - 1 used, read back in the previous iteration */
        cp_async_wait<S - 1>();
        const long long b = REV ? nb - 1 - k : k;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long i = b * U + u;
            if (i < t.n) {
                const long long rr = t.row(i);
                pack_t<T, V> p[NT];
#pragma unroll
                for (int q = 0; q < NT; q++) p[q] = *reinterpret_cast<const pack_t<T, V> *>(slot(k, u, q));
                unsigned mb = 0;
                if (BITS) mb = (*reinterpret_cast<const unsigned *>(bslot(k, u)) >> 8 * (int)(bits_at(rr, c, c0) & 3)) & 0xffu;
                body(rr, p, mb);
            }
        }
    }
    cp_async_wait<0>();
}

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


// --- the backward's ReLU mask and dx, shared by the two-pass and the persistent kernels

/* Where the ReLU mask of the backward comes from: none (BN_FUSE_NONE); y > 0 (BN_FUSE_ADD_RELU: the pre-activation
 * would need x1, as many bytes as y); the forward's bits of y > 0 (BN_FUSE_ADD_RELU in a 2-byte type on the vector
 * grid: 1 bit per element read instead of 16, the same mask); or the pre-activation recomputed from x, which the
 * backward reads anyway, with the forward's own arithmetic (BN_FUSE_RELU: y is never read, two passes over a tensor
 * saved; compared with relu_floor<T>, it is y > 0 exactly). */
enum { MASK_NONE = 0, MASK_Y = 1, MASK_PRE = 2, MASK_BITS = 3 };

/* A thread's channels' mean_f (and, for MASK_PRE, the forward's scale and shift), and dpre from dy. */
template <typename T, int V, int MASK>
struct bn_mask_t {
    float mf[V], sc[V], sf[V];
    __device__ __forceinline__ bn_mask_t(const float *coef, int c, int c0) {
#pragma unroll
        for (int j = 0; j < V; j++) {
            mf[j] = coef[CO_MEAN * c + c0 + j];
            sc[j] = MASK == MASK_PRE ? coef[CO_SCALE * c + c0 + j] : 0.0f;
            sf[j] = MASK == MASK_PRE ? coef[CO_SHIFT * c + c0 + j] : 0.0f;
        }
    }
    /* dy of channel j masked: xc = x - mean_f, yv = y (MASK_Y), mb = the row's mask byte (MASK_BITS). */
    __device__ __forceinline__ float apply(int j, float xc, float d, T yv, unsigned mb) const {
        if (MASK == MASK_Y && !(to_f(yv) > 0.0f)) return 0.0f;
        if (MASK == MASK_BITS && !((mb >> j) & 1u)) return 0.0f;
        if (MASK == MASK_PRE && !(fmaf(sc[j], xc, sf[j]) > relu_floor<T>())) return 0.0f;
        return d;
    }
};

/* dx's coefficients of a thread's channels. */
template <int V>
struct bn_dx_t {
    float k1[V], kx[V], k0[V];
    __device__ __forceinline__ bn_dx_t() {}
    __device__ __forceinline__ bn_dx_t(const float *coef, int c, int c0) {
#pragma unroll
        for (int j = 0; j < V; j++) {
            k1[j] = coef[CO_K1 * c + c0 + j];
            kx[j] = coef[CO_KX * c + c0 + j];
            k0[j] = coef[CO_K0 * c + c0 + j];
        }
    }
};

/* dx = dx_beta dx + k1 dpre + kx xc + k0 (dx != NULL), dx1 = dx1_beta dx1 + dpre (dx1 != NULL) at element offset off. A
 * beta of 0 never reads the old value (it may hold NaN). */
template <typename T, int V>
__device__ __forceinline__ void bn_store_dx(const bn_dx_t<V> &k, const float (&d)[V], const float (&xc)[V], T *dx,
                                            float dx_beta, T *dx1, float dx1_beta, long long off) {
    if (dx) {
        pack_t<T, V> o;
        if (dx_beta != 0.0f) o = load_p<T, V>(dx + off);
#pragma unroll
        for (int j = 0; j < V; j++) {
            const float v = fmaf(k.k1[j], d[j], fmaf(k.kx[j], xc[j], k.k0[j]));
            o.v[j] = from_f<T>(dx_beta != 0.0f ? fmaf(dx_beta, to_f(o.v[j]), v) : v);
        }
        store_p<T, V>(dx + off, o);
    }
    if (dx1) {
        pack_t<T, V> o;
        if (dx1_beta != 0.0f) o = load_p<T, V>(dx1 + off);
#pragma unroll
        for (int j = 0; j < V; j++) o.v[j] = from_f<T>(dx1_beta != 0.0f ? fmaf(dx1_beta, to_f(o.v[j]), d[j]) : d[j]);
        store_p<T, V>(dx1 + off, o);
    }
}

// --- one row of a thread's channels, as every kernel that sums or writes it does

/* The statistics pass: shifted sums of x - k and (x - k)^2. */
template <typename T, int V>
__device__ __forceinline__ void stats_row(const pack_t<T, V> &x, const float (&k)[V], float (&s1)[V], float (&s2)[V]) {
#pragma unroll
    for (int j = 0; j < V; j++) {
        const float v = to_f(x.v[j]) - k[j];
        s1[j] += v;
        s2[j] = fmaf(v, v, s2[j]);
    }
}

/* The backward's reduction: s1 += dpre, s2 += dpre (x - mean_f), from the row's packs p (x, dy[, y]) and mask byte;
 * dpre into *o (exact: dy or 0). */
template <typename T, int V, int MASK, int NT>
__device__ __forceinline__ void bwd_sums_row(const bn_mask_t<T, V, MASK> &mk, const pack_t<T, V> *p, unsigned mb,
                                             float (&s1)[V], float (&s2)[V], pack_t<T, V> *o) {
#pragma unroll
    for (int j = 0; j < V; j++) {
        const float xc = to_f(p[0].v[j]) - mk.mf[j];
        const float d = mk.apply(j, xc, to_f(p[1].v[j]), p[NT - 1].v[j], mb);
        s1[j] += d;
        s2[j] = fmaf(d, xc, s2[j]);
        o->v[j] = from_f<T>(d);
    }
}

/* The backward's element-wise pass over one row at element offset off: dx and dx1 (bn_store_dx). */
template <typename T, int V, int MASK, int NT>
__device__ __forceinline__ void bwd_dx_row(const bn_mask_t<T, V, MASK> &mk, const bn_dx_t<V> &kd,
                                           const pack_t<T, V> *p, unsigned mb, T *dx, float dx_beta, T *dx1,
                                           float dx1_beta, long long off) {
    float d[V], xc[V];
#pragma unroll
    for (int j = 0; j < V; j++) {
        xc[j] = to_f(p[0].v[j]) - mk.mf[j];
        d[j] = mk.apply(j, xc[j], to_f(p[1].v[j]), p[NT - 1].v[j], mb);
    }
    bn_store_dx<T, V>(kd, d, xc, dx, dx_beta, dx1, dx1_beta, off);
}

/* Row block blockIdx.y's partial sums a, b of the thread's channels c0.. into part (2 c floats a row block). */
template <int V>
__device__ __forceinline__ void store_partials(float *part, int c, int c0, const float (&a)[V], const float (&b)[V]) {
#pragma unroll
    for (int j = 0; j < V; j++) {
        part[(size_t)2 * blockIdx.y * c + c0 + j] = a[j];
        part[((size_t)2 * blockIdx.y + 1) * c + c0 + j] = b[j];
    }
}

// --- the statistics and coefficients of one channel, from finish_sums' totals (in the finishing block)

/* Forward: mean = pivot + t1 / m (t1, t2 as finish_sums gives them), the biased variance for normalising, the
 * unbiased one for the running variance. Writes the coefficients into coef and (upd) the running statistics; returns
 * the element-wise pass's mean_f, scale and shift in *mf, *sc, *sf. */
__device__ __forceinline__ void finish_forward(int ch, int c, long long m, double t1, double t2, double pivot,
                                               const float *gamma, const float *beta, const float *beta_add,
                                               float *run_mean, float *run_var, float *coef, double eps,
                                               double momentum, bool upd, float *mf, float *sc, float *sf) {
    double d = t1 / (double)m, var = t2 / (double)m - d * d;
    if (var < 0.0) var = 0.0;
    const double mean = pivot + d, inv = 1.0 / sqrt(var + eps);
    *mf = (float)mean;
    const double mlo = mean - (double)*mf;
    *sc = (float)((double)gamma[ch] * inv);
    *sf = (float)((double)beta[ch] + (beta_add ? (double)beta_add[ch] : 0.0) - (double)*sc * mlo);
    if (!upd) return;
    coef[CO_MEAN * c + ch] = *mf;
    coef[CO_INVSTD * c + ch] = (float)inv;
    coef[CO_MLO * c + ch] = (float)mlo;
    coef[CO_SCALE * c + ch] = *sc;
    coef[CO_SHIFT * c + ch] = *sf;
    run_mean[ch] = (float)((1.0 - momentum) * run_mean[ch] + momentum * mean);
    run_var[ch] = (float)((1.0 - momentum) * run_var[ch] + momentum * var * ((double)m / (double)(m - 1)));
}

/* Backward: t1 = sum dpre, t2 = sum dpre (x - mean_f). dbeta = t1, dgamma = invstd sum dpre (x - mean), accumulated
 * with dw_beta (and dbeta into dbeta_copy) where upd; returns dx's k1, kx, k0 in k[0..3) (also into coef where upd). */
__device__ __forceinline__ void finish_backward(int ch, int c, long long m, double t1, double t2, const float *gamma,
                                                float *dgamma, float *dbeta, float *dbeta_copy, float dw_beta,
                                                float *coef, bool upd, float *k) {
    const double inv = coef[CO_INVSTD * c + ch], mlo = coef[CO_MLO * c + ch];
    const double dg = (t2 - mlo * t1) * inv, db = t1, k1 = (double)gamma[ch] * inv;
    const double kx = -k1 * inv * dg / (double)m, k0 = -k1 * db / (double)m - kx * mlo;
    k[0] = (float)k1;
    k[1] = (float)kx;
    k[2] = (float)k0;
    if (!upd) return;
    dgamma[ch] = dw_beta == 0.0f ? (float)dg : (float)((double)dw_beta * dgamma[ch] + dg);
    dbeta[ch] = dw_beta == 0.0f ? (float)db : (float)((double)dw_beta * dbeta[ch] + db);
    if (dbeta_copy) dbeta_copy[ch] = dbeta[ch];
    coef[CO_K1 * c + ch] = k[0];
    coef[CO_KX * c + ch] = k[1];
    coef[CO_K0 * c + ch] = k[2];
}

/* A thread's statistics from shifted sums around its own first value k (s1 = sum (x - k), s2 = sum (x - k)^2 over its
 * n rows): mean and m2 for block_welford. The cancellation in s2 - s1^2 / n costs about n (k - mean_t)^2 ulps of
 * fp32, and k is one of the summed values, so it is bounded by the deviation k itself adds to the total m2: a
 * relative error of a few n ulps however far the data lie from 0 (the finish merges in double). */
template <int V>
__device__ __forceinline__ void shifted_to_welford(float n, const float (&k)[V], const float (&s1)[V],
                                                   float (&mean)[V], float (&m2)[V]) {
#pragma unroll
    for (int j = 0; j < V; j++) {
        const float a = n > 0.0f ? s1[j] / n : 0.0f;
        mean[j] = n > 0.0f ? k[j] + a : 0.0f;
        m2[j] = n > 0.0f ? fmaxf(m2[j] - s1[j] * a, 0.0f) : 0.0f;   /* m2 holds s2 on entry */
    }
}

// --- the persistent kernels' grid-wide barrier

/* Every block of the grid waits here until all have arrived (they are co-resident: a cooperative launch). count and
 * gen are device words, zeroed once: the last arrival re-arms count and advances gen, which the others wait on. */
__device__ __forceinline__ void grid_sync(unsigned *count, unsigned *gen) {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        const unsigned g = *(volatile unsigned *)gen;   /* before arriving: it cannot move until this block has */
        __threadfence();
        if (atomicAdd(count, 1u) == gridDim.x * gridDim.y - 1) {
            *(volatile unsigned *)count = 0u;
            __threadfence();
            atomicAdd(gen, 1u);
        } else {
            while (*(volatile unsigned *)gen == g) __nanosleep(40);
        }
        __threadfence();
    }
    __syncthreads();
}
