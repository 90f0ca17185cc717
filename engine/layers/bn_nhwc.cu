/* bn_nhwc.cu — batch-norm training kernels for NHWC activations, near memory bandwidth: each direction is one
 * reduction over rows (partial sums per block, the tile's last block finishes the channel) and one element-wise
 * pass, rows streamed through registers or a cp.async ring; the persistent single-launch way is bn_nhwc_persist.cu. */
#include "bn_nhwc.h"
#include "../check.h"
#include "../launch.h"
#include "../layer.h"
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "bn_nhwc_block.cuh"
#include "bn_nhwc_launch.cuh"

// --- forward

/* Shifted sums per thread around its first value (shifted_to_welford), Chan's merge across the block's row lanes,
 * one (mean, m2) per row block and channel; the tile's last block adds the row blocks around row block 0's mean
 * (finish_sums) and finishes the statistics. Four instructions an element (no division per row, as Welford's update
 * takes), so the pass is bound by memory, not by issue. */
template <typename T, int V, int LOAD>
__global__ void __launch_bounds__(BN_THREADS, LOAD == LOAD_RING ? 3 : 2)
fwd_stats_kernel(const T *__restrict__ x, long long m, int c, float *part, unsigned *arrivals,
                 const float *__restrict__ gamma, const float *__restrict__ beta, const float *__restrict__ beta_add,
                 float *run_mean, float *run_var, float *coef, double eps, double momentum) {
    extern __shared__ __align__(16) unsigned char dyn[];   /* the ring, then the block reduction's scratch */
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    long long r0, r1;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    const rows_t t = thread_rows(r0, r1);
    float k[V], s1[V], s2[V];
#pragma unroll
    for (int j = 0; j < V; j++) k[j] = s1[j] = s2[j] = 0.0f;
    if (c0 < c && t.n > 0) {
        const pack_t<T, V> k0 = load_p<T, V>(x + t.first * c + c0);
#pragma unroll
        for (int j = 0; j < V; j++) k[j] = to_f(k0.v[j]);
        const T *const src[1] = {x};
        auto body = [&](long long, const pack_t<T, V> *p, unsigned) { stats_row<T, V>(p[0], k, s1, s2); };
        if constexpr (LOAD == LOAD_RING) rows_ring<T, V, 1, false, false>(src, nullptr, t, c, c0, dyn, body);
        else rows_reg<T, V, 1, false, BN_UNROLL_WIDE, false>(src, nullptr, t, c, c0, body);
    }
    float n = c0 < c ? (float)t.n : 0.0f, mu[V];
    shifted_to_welford<V>(n, k, s1, mu, s2);
    __syncthreads();   /* every thread's ring drained before it is the reduction's scratch */
    block_welford<V>(n, mu, s2, (float *)dyn, (float *)dyn + 2 * V * BN_THREADS);
    if (threadIdx.y == 0 && c0 < c) store_partials<V>(part, c, c0, mu, s2);
    if (!last_arrival(arrivals)) return;
    double t1, t2, p;
    if (!finish_sums<V, true>(part, m, c, &t1, &t2, &p)) return;
    const int ch = blockIdx.x * blockDim.x * V + threadIdx.y * blockDim.x + threadIdx.x;
    float mf, sc, sf;
    finish_forward(ch, c, m, t1, t2, p, gamma, beta, beta_add, run_mean, run_var, coef, eps, momentum, true, &mf, &sc,
                   &sf);
}

/* y = relu(scale (x - mean_f) + shift [+ x1]). Each block takes the rows its twin in the statistics pass read (same
 * grid), last group first: the rows read last are the likeliest still in L2 (x is read twice, from DRAM once at
 * best). With the add in a 2-byte type (V = 8: a thread's channels are one whole byte of the row, no other thread
 * writes it) and bits not NULL, also the mask y > 0 as bits (bn_nhwc_t.bits), tested on y as stored so that it is
 * the mask the backward would read from y. */
template <typename T, int V, int FUSE, int LOAD>
__global__ void __launch_bounds__(BN_THREADS, LOAD == LOAD_RING ? 3 : 2)
fwd_apply_kernel(const T *__restrict__ x, const T *__restrict__ x1, T *__restrict__ y, long long m, int c,
                 const float *__restrict__ coef, unsigned char *__restrict__ bits) {
    extern __shared__ __align__(16) unsigned char dyn[];
    constexpr int NT = FUSE == BN_FUSE_ADD_RELU ? 2 : 1;
    constexpr bool BITS = FUSE == BN_FUSE_ADD_RELU && V == 8;
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c0 >= c) return;
    float mf[V], sc[V], sf[V];
#pragma unroll
    for (int j = 0; j < V; j++) {
        mf[j] = coef[CO_MEAN * c + c0 + j];
        sc[j] = coef[CO_SCALE * c + c0 + j];
        sf[j] = coef[CO_SHIFT * c + c0 + j];
    }
    long long r0, r1;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    const rows_t t = thread_rows(r0, r1);
    const T *const all[2] = {x, x1};
    const auto &src = *reinterpret_cast<const T *const(*)[NT]>(&all);   /* the first NT */
    auto body = [&](long long rr, const pack_t<T, V> *p, unsigned) {
        pack_t<T, V> o;
        unsigned mb = 0;
#pragma unroll
        for (int j = 0; j < V; j++) {
            float a = fmaf(sc[j], to_f(p[0].v[j]) - mf[j], sf[j]);
            if (FUSE == BN_FUSE_ADD_RELU) a += to_f(p[NT - 1].v[j]);
            if (FUSE != BN_FUSE_NONE) a = fmaxf(a, 0.0f);
            o.v[j] = from_f<T>(a);
            if (BITS) mb |= (unsigned)(to_f(o.v[j]) > 0.0f) << j;
        }
        store_p<T, V>(y + rr * c + c0, o);
        if (BITS && bits) bits[bits_at(rr, c, c0)] = (unsigned char)mb;
    };
    if constexpr (LOAD == LOAD_RING) rows_ring<T, V, NT, false, true>(src, nullptr, t, c, c0, dyn, body);
    else rows_reg<T, V, NT, false, NT == 2 ? BN_UNROLL_MID : BN_UNROLL_WIDE, true>(src, nullptr, t, c, c0, body);
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

/* s1 = sum dpre, s2 = sum dpre (x - mean_f) with dpre = dy masked as MASK says (bn_mask), dpre also stored where out
 * is not NULL; the tile's last block writes dbeta, dgamma (accumulated with dw_beta) and the coefficients of
 * dx = k1 dpre + kx (x - mean_f) + k0. */
template <typename T, int V, int MASK, int LOAD>
__global__ void __launch_bounds__(BN_THREADS, LOAD == LOAD_RING ? 3 : 2)
bwd_reduce_kernel(const T *__restrict__ x, const T *__restrict__ y, const unsigned char *__restrict__ bits,
                  const T *__restrict__ dy, T *__restrict__ out, long long m, int c, float *part, unsigned *arrivals,
                  const float *__restrict__ gamma, float *dgamma, float *dbeta, float *dbeta_copy, float dw_beta,
                  float *coef) {
    static_assert(MASK != MASK_BITS || V == 8, "a thread's channels are one byte of bits");
    extern __shared__ __align__(16) unsigned char dyn[];
    constexpr int NT = MASK == MASK_Y ? 3 : 2;
    constexpr bool OUT = MASK == MASK_Y || MASK == MASK_BITS;   // the only masks the launcher gives an out
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    float s1[V], s2[V];
#pragma unroll
    for (int j = 0; j < V; j++) s1[j] = s2[j] = 0.0f;
    long long r0, r1;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    if (c0 < c) {
        const rows_t t = thread_rows(r0, r1);
        const bn_mask_t<T, V, MASK> mk(coef, c, c0);
        const T *const all[3] = {x, dy, y};
    const auto &src = *reinterpret_cast<const T *const(*)[NT]>(&all);   /* the first NT */
        auto body = [&](long long rr, const pack_t<T, V> *p, unsigned mb) {
            pack_t<T, V> o;
            bwd_sums_row<T, V, MASK, NT>(mk, p, mb, s1, s2, &o);
            if (OUT && out) store_p<T, V>(out + rr * c + c0, o);
        };
        if constexpr (LOAD == LOAD_RING)
            rows_ring<T, V, NT, MASK == MASK_BITS, false>(src, bits, t, c, c0, dyn, body);
        else
            rows_reg<T, V, NT, MASK == MASK_BITS, MASK == MASK_Y ? BN_UNROLL_NARROW : BN_UNROLL_MID, false>(
                src, bits, t, c, c0, body);
    }
    __syncthreads();   /* every thread's ring drained before it is the reduction's scratch */
    block_sum2<V>(s1, s2, (float *)dyn);
    if (threadIdx.y == 0 && c0 < c) store_partials<V>(part, c, c0, s1, s2);
    if (!last_arrival(arrivals)) return;
    double t1, t2, p;
    if (!finish_sums<V, false>(part, m, c, &t1, &t2, &p)) return;
    const int ch = blockIdx.x * blockDim.x * V + threadIdx.y * blockDim.x + threadIdx.x;
    float k[3];
    finish_backward(ch, c, m, t1, t2, gamma, dgamma, dbeta, dbeta_copy, dw_beta, coef, true, k);
}

/* dx = dx_beta dx + k1 dpre + kx (x - mean_f) + k0 (dx != NULL); dx1 = dx1_beta dx1 + dpre (dx1 != NULL). Rows in the
 * reduction's blocks, last group first, as the forward's apply pass. */
/* Blocks an SM the element-wise pass is compiled for: the ring's three, two where the forward's scale and shift take
 * 16 registers more (MASK_PRE with 8 channels a thread spilled at three). */
template <int V, int MASK, int LOAD>
constexpr int bapply_min_blocks() { return LOAD == LOAD_RING && !(MASK == MASK_PRE && V == 8) ? 3 : 2; }

template <typename T, int V, int MASK, int LOAD>
__global__ void __launch_bounds__(BN_THREADS, bapply_min_blocks<V, MASK, LOAD>())
bwd_apply_kernel(const T *__restrict__ x, const T *__restrict__ y, const unsigned char *__restrict__ bits,
                 const T *__restrict__ dy, T *dx, float dx_beta, T *dx1, float dx1_beta, long long m, int c,
                 const float *__restrict__ coef) {
    static_assert(MASK != MASK_BITS || V == 8, "a thread's channels are one byte of bits");
    extern __shared__ __align__(16) unsigned char dyn[];
    constexpr int NT = MASK == MASK_Y ? 3 : 2;
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c0 >= c) return;
    const bn_mask_t<T, V, MASK> mk(coef, c, c0);
    const bn_dx_t<V> kd(coef, c, c0);
    long long r0, r1;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    const rows_t t = thread_rows(r0, r1);
    const T *const all[3] = {x, dy, y};
    const auto &src = *reinterpret_cast<const T *const(*)[NT]>(&all);   /* the first NT */
    auto body = [&](long long rr, const pack_t<T, V> *p, unsigned mb) {
        bwd_dx_row<T, V, MASK, NT>(mk, kd, p, mb, dx, dx_beta, dx1, dx1_beta, rr * c + c0);
    };
    if constexpr (LOAD == LOAD_RING) rows_ring<T, V, NT, MASK == MASK_BITS, true>(src, bits, t, c, c0, dyn, body);
    else rows_reg<T, V, NT, MASK == MASK_BITS, BN_UNROLL_NARROW, true>(src, bits, t, c, c0, body);
}

// --- host side

/* The dynamic shared memory of a block reduction's scratch: block_welford's 2 V + 1 floats a thread. */
static size_t red_bytes(int v) { return (size_t)(2 * v + 1) * BN_THREADS * sizeof(float); }
static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

/* One way (LOAD) of the two-pass kernels for element type T and vector width V: its dynamic shared memory per
 * kernel, its one-wave residency, its launches. */
template <typename T, int V, int LOAD>
struct two_pass {
    static constexpr bool RING = LOAD == LOAD_RING;
    static size_t stats_smem() { return RING ? max_sz(ring_bytes<1, false>(BN_THREADS), red_bytes(V)) : red_bytes(V); }
    template <int FUSE>
    static size_t fapply_smem() { return RING ? ring_bytes<FUSE == BN_FUSE_ADD_RELU ? 2 : 1, false>(BN_THREADS) : 0; }
    template <int MASK>
    static size_t reduce_smem() {
        return RING ? max_sz(ring_bytes<MASK == MASK_Y ? 3 : 2, MASK == MASK_BITS>(BN_THREADS), red_bytes(V))
                    : red_bytes(V);
    }
    template <int MASK>
    static size_t bapply_smem() { return RING ? ring_bytes<MASK == MASK_Y ? 3 : 2, MASK == MASK_BITS>(BN_THREADS) : 0; }

    /* Blocks of the reductions resident per SM at once (the fewer of the two), after allowing each kernel its
     * shared memory. */
    template <int FUSE, int MASK>
    static int resident_fm() {
        bn_allow_smem(fwd_stats_kernel<T, V, LOAD>, stats_smem());
        bn_allow_smem(fwd_apply_kernel<T, V, FUSE, LOAD>, fapply_smem<FUSE>());
        bn_allow_smem(bwd_reduce_kernel<T, V, MASK, LOAD>, reduce_smem<MASK>());
        bn_allow_smem(bwd_apply_kernel<T, V, MASK, LOAD>, bapply_smem<MASK>());
        bn_allow_smem(bwd_apply_kernel<T, V, MASK_NONE, LOAD>, bapply_smem<MASK_NONE>());
        int a = 0, r = 0;
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&a, fwd_stats_kernel<T, V, LOAD>, BN_THREADS,
                                                                 stats_smem()));
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, bwd_reduce_kernel<T, V, MASK, LOAD>, BN_THREADS,
                                                                 reduce_smem<MASK>()));
        return a < r ? a : r;
    }
    static int resident(const bn_nhwc_t *b) {
        const int mask = V == 1 && b->fuse == BN_FUSE_ADD_RELU ? MASK_Y : bn_mask_of(b);
        if (b->fuse == BN_FUSE_NONE) return resident_fm<BN_FUSE_NONE, MASK_NONE>();
        if (b->fuse == BN_FUSE_RELU) return resident_fm<BN_FUSE_RELU, MASK_PRE>();
        if constexpr (V == 8)
            if (mask == MASK_BITS) return resident_fm<BN_FUSE_ADD_RELU, MASK_BITS>();
        return resident_fm<BN_FUSE_ADD_RELU, MASK_Y>();
    }

    static void stats(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const fwd_args_t &a, cudaStream_t s) {
        dim3 grid(g->tiles, g->rb), block(g->tw, g->lanes);
        fwd_stats_kernel<T, V, LOAD><<<grid, block, stats_smem(), s>>>(
            (const T *)a.x, b->m, b->c, bn_part(b), b->arrivals, a.gamma, a.beta, a.beta_add, a.rm, a.rv, b->scratch,
            a.eps, a.mom);
        CHECK_LAUNCH();
    }
    template <int FUSE>
    static void apply(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const fwd_args_t &a, cudaStream_t s) {
        dim3 grid(g->tiles, g->rb), block(g->tw, g->lanes);
        fwd_apply_kernel<T, V, FUSE, LOAD><<<grid, block, fapply_smem<FUSE>(), s>>>(
            (const T *)a.x, (const T *)a.x1, (T *)a.y, b->m, b->c, b->scratch, b->bits);
        CHECK_LAUNCH();
    }
    static void fwd(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const fwd_args_t &a, cudaStream_t s) {
        stats(b, g, a, s);
        if (b->fuse == BN_FUSE_ADD_RELU) apply<BN_FUSE_ADD_RELU>(b, g, a, s);
        else if (b->fuse == BN_FUSE_RELU) apply<BN_FUSE_RELU>(b, g, a, s);
        else apply<BN_FUSE_NONE>(b, g, a, s);
    }

    template <int MASK>
    static void bwd_mask(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const bwd_args_t &a, cudaStream_t s) {
        dim3 grid(g->tiles, g->rb), block(g->tw, g->lanes);
        const T *x = (const T *)a.x, *y = (const T *)a.y, *dy = (const T *)a.dy;
        /* An overwritten dx1 is dpre itself: the reduction writes it, and the element-wise pass reads it back as an
         * unmasked gradient instead of reading dy and the mask again (7 passes over the tensor instead of 8 with
         * y; with the bits 6 either way, the bits read once instead of twice). */
        const int early = (MASK == MASK_Y || MASK == MASK_BITS) && a.dx1 && a.dx1_beta == 0.0f && a.dx;
        bwd_reduce_kernel<T, V, MASK, LOAD><<<grid, block, reduce_smem<MASK>(), s>>>(
            x, y, b->bits, dy, early ? (T *)a.dx1 : NULL, b->m, b->c, bn_part(b), b->arrivals, a.gamma, a.dgamma,
            a.dbeta, a.dbeta_copy, a.dw_beta, b->scratch);
        CHECK_LAUNCH();
        if (early)
            bwd_apply_kernel<T, V, MASK_NONE, LOAD><<<grid, block, bapply_smem<MASK_NONE>(), s>>>(
                x, NULL, NULL, (const T *)a.dx1, (T *)a.dx, a.dx_beta, NULL, 0.0f, b->m, b->c, b->scratch);
        else if (a.dx || a.dx1)
            bwd_apply_kernel<T, V, MASK, LOAD><<<grid, block, bapply_smem<MASK>(), s>>>(
                x, y, b->bits, dy, (T *)a.dx, a.dx_beta, (T *)a.dx1, a.dx1_beta, b->m, b->c, b->scratch);
        else
            return;
        CHECK_LAUNCH();
    }
    static void bwd(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, const bwd_args_t &a, cudaStream_t s) {
        /* Bits exist only where the vector grid has V = 8, and every forward leaves them valid (bits_from_y_kernel
         * after a scalar one): this call's own grid decides. */
        if constexpr (V == 8)
            if (b->fuse == BN_FUSE_ADD_RELU && b->bits) return bwd_mask<MASK_BITS>(b, g, a, s);
        if (b->fuse == BN_FUSE_ADD_RELU) bwd_mask<MASK_Y>(b, g, a, s);
        else if (b->fuse == BN_FUSE_RELU) bwd_mask<MASK_PRE>(b, g, a, s);
        else bwd_mask<MASK_NONE>(b, g, a, s);
    }
};

static int vec_of(dtype_t t) { return 16 / (int)dtype_size(t); }

/* For element type T: the vector grid's V (16 bytes) and the scalar grid's, and which way runs. */
template <typename T>
struct by_type {
    static constexpr int VV = 16 / (int)sizeof(T);
    /* what: 0 forward, 1 backward, 2 the forward's statistics alone; impl REG or RING, the grid g's. */
    static void run(const bn_nhwc_t *b, const bn_nhwc_grid_t *g, int impl, int what, const void *args,
                    cudaStream_t s) {
        const fwd_args_t &f = *(const fwd_args_t *)args;
        const bwd_args_t &w = *(const bwd_args_t *)args;
        if (g->vec == 1) {
            if (what == 0) two_pass<T, 1, LOAD_REG>::fwd(b, g, f, s);
            else if (what == 1) two_pass<T, 1, LOAD_REG>::bwd(b, g, w, s);
            else two_pass<T, 1, LOAD_REG>::stats(b, g, f, s);
        } else if (impl == BN_NHWC_RING) {
            if (what == 0) two_pass<T, VV, LOAD_RING>::fwd(b, g, f, s);
            else if (what == 1) two_pass<T, VV, LOAD_RING>::bwd(b, g, w, s);
            else two_pass<T, VV, LOAD_RING>::stats(b, g, f, s);
        } else {
            if (what == 0) two_pass<T, VV, LOAD_REG>::fwd(b, g, f, s);
            else if (what == 1) two_pass<T, VV, LOAD_REG>::bwd(b, g, w, s);
            else two_pass<T, VV, LOAD_REG>::stats(b, g, f, s);
        }
    }
    /* Blocks resident per SM for the scalar grid [0] and the vector grid's REG [1] and RING [2] ways. */
    static void resident(const bn_nhwc_t *b, int *out) {
        out[0] = two_pass<T, 1, LOAD_REG>::resident(b);
        out[1] = two_pass<T, VV, LOAD_REG>::resident(b);
        out[2] = two_pass<T, VV, LOAD_RING>::resident(b);
    }
    static void bits_from_y(const void *y, long long bytes, unsigned char *bits, cudaStream_t s) {
        bits_from_y_kernel<T><<<launch_blocks((size_t)bytes, BN_THREADS, 65536), BN_THREADS, 0, s>>>((const T *)y,
                                                                                                    bytes, bits);
        CHECK_LAUNCH();
    }
};
template <typename T> struct run_t { template <typename... A> static void run(A... a) { by_type<T>::run(a...); } };
template <typename T> struct resident_t { static void run(const bn_nhwc_t *b, int *out) { by_type<T>::resident(b, out); } };
template <typename T> struct bits_t {
    static void run(const void *y, long long n, unsigned char *bits, cudaStream_t s) { by_type<T>::bits_from_y(y, n, bits, s); }
};

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
    return dtype_size(t) == 2 && c % 8 == 0 && fuse == BN_FUSE_ADD_RELU;
}

/* The ReLU mask's bits, after the arrival counts and the barrier; 4 bytes more, so that the ring's 4-byte copy of
 * the word holding the last byte stays inside the allocation. */
static size_t bits_bytes(long long m, int c, dtype_t t, int fuse) {
    return bn_nhwc_has_bits(c, t, fuse) ? (size_t)m * (size_t)(c / 8) + 4 : 0;
}

size_t bn_nhwc_scratch_bytes(long long m, int c, dtype_t t, int fuse) {
    int tiles = 0;
    size_t n = scratch_floats(m, c, t, &tiles);
    return n * sizeof(float) + ((size_t)tiles + 2) * sizeof(unsigned) + bits_bytes(m, c, t, fuse);
}

void bn_nhwc_init(bn_nhwc_t *b, long long m, int c, dtype_t t, int fuse, int device, cudaStream_t stream) {
    memset(b, 0, sizeof *b);
    b->m = m;
    b->c = c;
    b->dtype = t;
    b->fuse = fuse;
    int sms = 0, vec = c % vec_of(t) == 0 ? vec_of(t) : 1;
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    int tiles = 0;
    size_t nf = scratch_floats(m, c, t, &tiles);
    CHECK_ALLOC(cudaMalloc((void **)&b->scratch, bn_nhwc_scratch_bytes(m, c, t, fuse)));
    b->arrivals = (unsigned *)(b->scratch + nf);
    b->barrier = b->arrivals + tiles;
    CHECK_CUDA(cudaMemsetAsync(b->arrivals, 0, ((size_t)tiles + 2) * sizeof(unsigned), stream));
    if (bits_bytes(m, c, t, fuse)) {   // zeroed as the statistics below: a backward without a forward masks all
        b->bits = (unsigned char *)(b->arrivals + tiles + 2);
        CHECK_CUDA(cudaMemsetAsync(b->bits, 0, bits_bytes(m, c, t, fuse), stream));
    }
    int res[3];   /* bn_mask_of reads b->bits: planned after them */
    dtype_dispatch<resident_t>(t, (const bn_nhwc_t *)b, res);
    b->scalar = grid_plan(m, c, 1, (long long)res[0] * sms);
    for (int i = 0; i < BN_NHWC_IMPLS; i++) b->grid[i] = grid_plan(m, c, vec, (long long)res[vec > 1 ? 1 : 0] * sms);
    if (vec > 1) b->grid[BN_NHWC_RING] = grid_plan(m, c, vec, (long long)res[2] * sms);
    b->grid[BN_NHWC_PERSIST].rb = 0;
    if (vec > 1) bn_persist_plan(b, device);
    b->impl[0] = b->impl[1] = vec > 1 ? BN_NHWC_RING : BN_NHWC_REG;
    /* Saved statistics defined before any forward: a backward without one reads zeros, not garbage. */
    CHECK_CUDA(cudaMemsetAsync(b->scratch, 0, (size_t)CO_COUNT * c * sizeof(float), stream));
}

void bn_nhwc_free(bn_nhwc_t *b) {
    if (b->scratch) CHECK_CUDA(cudaFree(b->scratch));   // arrivals and bits with it
    memset(b, 0, sizeof *b);
}

int bn_nhwc_impl_ok(const bn_nhwc_t *b, int impl) {
    if (impl < 0 || impl >= BN_NHWC_IMPLS || b->grid[0].vec == 1) return impl == BN_NHWC_REG;
    return impl != BN_NHWC_PERSIST || b->grid[BN_NHWC_PERSIST].rb > 0;
}

void bn_nhwc_set_impl(bn_nhwc_t *b, int dir, int impl) {
    if (!bn_nhwc_impl_ok(b, impl) || dir < 0 || dir > 1)
        check_fail(__FILE__, __LINE__, "bn_nhwc_set_impl", "a way this layer's kernels cannot run");
    b->impl[dir] = impl;
}

const char *bn_nhwc_impl_name(int impl) {
    static const char *const names[BN_NHWC_IMPLS] = {"reg", "ring", "persist"};
    return impl >= 0 && impl < BN_NHWC_IMPLS ? names[impl] : "?";
}

const float *bn_nhwc_saved(const bn_nhwc_t *b) { return b->scratch + (size_t)CO_MEAN * b->c; }

static int aligned16(const void *p) { return p == NULL || ((uintptr_t)p & 15u) == 0; }

/* The vector grid when every pointer allows 16-byte accesses, else the scalar one. */
static int vector_ok(const bn_nhwc_t *b, const void *p0, const void *p1, const void *p2, const void *p3,
                     const void *p4) {
    return b->grid[0].vec > 1 && aligned16(p0) && aligned16(p1) && aligned16(p2) && aligned16(p3) && aligned16(p4);
}

void bn_nhwc_describe(const bn_nhwc_t *b, char *buf, size_t len) {
    const bn_nhwc_grid_t *g = &b->grid[b->impl[0]];
    snprintf(buf, len, "vec %d, %s/%s, %d x %d blocks of %d x %d, scratch %zu bytes%s", g->vec,
             bn_nhwc_impl_name(b->impl[0]), bn_nhwc_impl_name(b->impl[1]), g->tiles, g->rb, g->tw, g->lanes,
             bn_nhwc_scratch_bytes(b->m, b->c, b->dtype, b->fuse), b->bits ? ", ReLU mask in bits" : "");
}

void bn_nhwc_forward(const bn_nhwc_t *b, const void *x, const void *x1, void *y, const float *gamma,
                     const float *beta, const float *beta_add, float *running_mean, float *running_var, double eps,
                     double momentum, cudaStream_t stream) {
    fwd_args_t a = {x, b->fuse == BN_FUSE_ADD_RELU ? x1 : NULL, y, gamma, beta, beta_add, running_mean,
                    running_var, eps, momentum};
    const int vec = vector_ok(b, a.x, a.x1, a.y, NULL, NULL), impl = vec ? b->impl[0] : BN_NHWC_REG;
    if (impl == BN_NHWC_PERSIST) bn_persist_forward(b, a, stream);
    else dtype_dispatch<run_t>(b->dtype, b, vec ? &b->grid[impl] : &b->scalar, impl, 0, (const void *)&a, stream);
    if (b->bits && !vec)   // the vector grid's apply pass wrote them
        dtype_dispatch<bits_t>(b->dtype, y, b->m * (b->c / 8), b->bits, stream);
}

void bn_nhwc_forward_stats(const bn_nhwc_t *b, const void *x, const float *gamma, const float *beta,
                           const float *beta_add, float *running_mean, float *running_var, double eps, double momentum,
                           cudaStream_t stream) {
    fwd_args_t a = {x, NULL, NULL, gamma, beta, beta_add, running_mean, running_var, eps, momentum};
    if (!vector_ok(b, x, NULL, NULL, NULL, NULL))
        check_fail(__FILE__, __LINE__, "bn_nhwc_forward_stats", "needs the vector grid");
    const int impl = b->impl[0] == BN_NHWC_PERSIST ? BN_NHWC_RING : b->impl[0];
    dtype_dispatch<run_t>(b->dtype, b, &b->grid[impl], impl, 2, (const void *)&a, stream);
}

void bn_nhwc_backward(const bn_nhwc_t *b, const void *x, const void *y, const void *dy, void *dx, float dx_beta,
                      void *dx1, float dx1_beta, const float *gamma, float *dgamma, float *dbeta, float *dbeta_copy,
                      float dw_beta, cudaStream_t stream) {
    int add = b->fuse == BN_FUSE_ADD_RELU;   // the only mode that reads y (MASK_Y) or bits and writes dx1
    bwd_args_t a = {x, add ? y : NULL, dy, dx, add ? dx1 : NULL, dx_beta, dx1_beta, dw_beta, gamma, dgamma, dbeta,
                    dbeta_copy};
    const int vec = vector_ok(b, a.x, a.y, a.dy, a.dx, a.dx1), impl = vec ? b->impl[1] : BN_NHWC_REG;
    if (impl == BN_NHWC_PERSIST) bn_persist_backward(b, a, stream);
    else dtype_dispatch<run_t>(b->dtype, b, vec ? &b->grid[impl] : &b->scalar, impl, 1, (const void *)&a, stream);
}
