/* bn_nhwc_persist.cu — batch norm in one launch each way, for activations that fit on chip: every block keeps the
 * rows it sums in shared memory, all blocks meet at a grid-wide barrier (a cooperative launch), and each finishes the
 * statistics of its tile itself and writes its rows from that copy, re-reading from L2 only what did not fit. */
#include "bn_nhwc.h"
#include "../check.h"
#include "../layer.h"
#include <stdio.h>
#include <string.h>
#include "bn_nhwc_block.cuh"
#include "bn_nhwc_launch.cuh"

#define PERSIST_BLOCKS_PER_SM 2
#define PERSIST_GROUPS 4        /* the stash lands in this many cp.async groups, each summed as it arrives */
#define PERSIST_U 4             /* rows a batch of the global-memory loads around the stash (forward) */
#define PERSIST_U_BWD 2         /* (backward: two or three tensors a row, within 128 registers) */

// --- kernels

/* Loads rows [0, ns) of the thread (t) of tensors src[0..NT) (and the bits' word of each, BITS) into its stash of
 * cap rows a thread: slot (i, q) at stash + ((i NT + q) nth + tid) 16 bytes, row i's bits word after the cap rows'
 * packs. PERSIST_GROUPS commit groups, the g-th holding rows [g ns / G, (g + 1) ns / G). */
template <typename T, int V, int NT, bool BITS>
__device__ __forceinline__ void stash_issue(const T *const (&src)[NT], const unsigned char *bits, const rows_t &t,
                                            long long ns, long long cap, int c, int c0, unsigned char *stash) {
    const int nth = blockDim.x * blockDim.y, tid = threadIdx.y * blockDim.x + threadIdx.x;
#pragma unroll
    for (int g = 0; g < PERSIST_GROUPS; g++) {
        for (long long i = g * ns / PERSIST_GROUPS; i < (g + 1) * ns / PERSIST_GROUPS; i++) {
            const long long rr = t.row(i);
#pragma unroll
            for (int q = 0; q < NT; q++)
                cp_async16(stash + ((size_t)(i * NT + q) * nth + tid) * 16, src[q] + rr * c + c0);
            if (BITS)
                cp_async4(stash + (size_t)cap * NT * nth * 16 + ((size_t)i * nth + tid) * 4,
                          bits + (bits_at(rr, c, c0) & ~3LL));
        }
        cp_async_commit();
    }
}

/* Row i (< ns) of the stash: its packs and its mask byte. */
template <typename T, int V, int NT, bool BITS>
__device__ __forceinline__ unsigned stash_row(const unsigned char *stash, long long cap, long long i, long long rr,
                                              int c, int c0, pack_t<T, V> (&p)[NT]) {
    const int nth = blockDim.x * blockDim.y, tid = threadIdx.y * blockDim.x + threadIdx.x;
#pragma unroll
    for (int q = 0; q < NT; q++)
        p[q] = *reinterpret_cast<const pack_t<T, V> *>(stash + ((size_t)(i * NT + q) * nth + tid) * 16);
    if (!BITS) return 0;
    const unsigned w = *reinterpret_cast<const unsigned *>(stash + (size_t)cap * NT * nth * 16 + ((size_t)i * nth + tid) * 4);
    return (w >> 8 * (int)(bits_at(rr, c, c0) & 3)) & 0xffu;
}

/* Calls body(rr, p, mb) over the thread's rows: those past the stash first, from global memory, then the stash's,
 * group by group as each lands (WAIT) or all at once. */
template <typename T, int V, int NT, bool BITS, bool WAIT, int U, typename F>
__device__ __forceinline__ void persist_walk(const T *const (&src)[NT], const unsigned char *bits, const rows_t &t,
                                             long long ns, long long cap, int c, int c0, const unsigned char *stash,
                                             F &&body) {
    rows_t rest = t;
    rest.first = t.row(ns);
    rest.n = t.n - ns;
    rows_reg<T, V, NT, BITS, U, false>(src, bits, rest, c, c0, body);
#pragma unroll
    for (int g = 0; g < PERSIST_GROUPS; g++) {
        if (WAIT) cp_async_wait_upto(PERSIST_GROUPS - 1 - g);
        for (long long i = g * ns / PERSIST_GROUPS; i < (g + 1) * ns / PERSIST_GROUPS; i++) {
            const long long rr = t.row(i);
            pack_t<T, V> p[NT];
            const unsigned mb = stash_row<T, V, NT, BITS>(stash, cap, i, rr, c, c0, p);
            body(rr, p, mb);
        }
    }
}

/* The forward in one launch: shifted sums as fwd_stats_kernel's, over the stash as it lands; the barrier; every block
 * finishes its tile's statistics (the same sums in the same order: the same values in every block; row block 0
 * writes the saved and running statistics); y = relu(scale (x - mean_f) + shift [+ x1]) from the stash, x1 read. */
template <typename T, int V, int FUSE>
__global__ void __launch_bounds__(BN_THREADS, PERSIST_BLOCKS_PER_SM)
persist_fwd_kernel(const T *__restrict__ x, const T *__restrict__ x1, T *__restrict__ y, long long m, int c,
                   float *part, unsigned *barrier, const float *__restrict__ gamma, const float *__restrict__ beta,
                   const float *__restrict__ beta_add, float *run_mean, float *run_var, float *coef,
                   unsigned char *__restrict__ bits, double eps, double momentum, int stash_rows) {
    extern __shared__ __align__(16) unsigned char stash[];
    __shared__ float red[(2 * V + 1) * BN_THREADS], cf[3][BN_TILE_CHANNELS];
    constexpr bool BITS = FUSE == BN_FUSE_ADD_RELU && V == 8;
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    long long r0, r1;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    const rows_t t = thread_rows(r0, r1);
    const long long ns = t.n < stash_rows ? t.n : stash_rows;
    const T *const src[1] = {x};
    float k[V], s1[V], s2[V];
#pragma unroll
    for (int j = 0; j < V; j++) k[j] = s1[j] = s2[j] = 0.0f;
    if (c0 < c && t.n > 0) {
        stash_issue<T, V, 1, false>(src, nullptr, t, ns, stash_rows, c, c0, stash);
        const pack_t<T, V> k0 = load_p<T, V>(x + t.first * c + c0);
#pragma unroll
        for (int j = 0; j < V; j++) k[j] = to_f(k0.v[j]);
        persist_walk<T, V, 1, false, true, PERSIST_U>(
            src, nullptr, t, ns, stash_rows, c, c0, stash,
            [&](long long, const pack_t<T, V> *p, unsigned) { stats_row<T, V>(p[0], k, s1, s2); });
    }
    float n = c0 < c ? (float)t.n : 0.0f, mu[V];
    shifted_to_welford<V>(n, k, s1, mu, s2);
    block_welford<V>(n, mu, s2, red, red + 2 * V * BN_THREADS);
    if (threadIdx.y == 0 && c0 < c) store_partials<V>(part, c, c0, mu, s2);
    grid_sync(barrier, barrier + 1);
    double t1, t2, p;
    if (finish_sums<V, true>(part, m, c, &t1, &t2, &p)) {
        const int j = threadIdx.y * blockDim.x + threadIdx.x;
        finish_forward(blockIdx.x * blockDim.x * V + j, c, m, t1, t2, p, gamma, beta, beta_add, run_mean, run_var,
                       coef, eps, momentum, blockIdx.y == 0, &cf[0][j], &cf[1][j], &cf[2][j]);
    }
    __syncthreads();
    if (c0 >= c) return;
    float mf[V], sc[V], sf[V];
#pragma unroll
    for (int j = 0; j < V; j++) {
        mf[j] = cf[0][threadIdx.x * V + j];
        sc[j] = cf[1][threadIdx.x * V + j];
        sf[j] = cf[2][threadIdx.x * V + j];
    }
    for (long long i0 = 0; i0 < t.n; i0 += PERSIST_U) {
        pack_t<T, V> v[PERSIST_U], w[PERSIST_U];
#pragma unroll
        for (int u = 0; u < PERSIST_U; u++) {
            const long long i = i0 + u, rr = t.row(i);
            if (i >= t.n) continue;
            if (i < ns) stash_row<T, V, 1, false>(stash, stash_rows, i, rr, c, c0, *reinterpret_cast<pack_t<T, V>(*)[1]>(&v[u]));
            else v[u] = load_p<T, V>(x + rr * c + c0);
            if (FUSE == BN_FUSE_ADD_RELU) w[u] = load_p<T, V>(x1 + rr * c + c0);
        }
#pragma unroll
        for (int u = 0; u < PERSIST_U; u++) {
            const long long i = i0 + u, rr = t.row(i);
            if (i >= t.n) continue;
            pack_t<T, V> o;
            unsigned mb = 0;
#pragma unroll
            for (int j = 0; j < V; j++) {
                float a = fmaf(sc[j], to_f(v[u].v[j]) - mf[j], sf[j]);
                if (FUSE == BN_FUSE_ADD_RELU) a += to_f(w[u].v[j]);
                if (FUSE != BN_FUSE_NONE) a = fmaxf(a, 0.0f);
                o.v[j] = from_f<T>(a);
                if (BITS) mb |= (unsigned)(to_f(o.v[j]) > 0.0f) << j;
            }
            store_p<T, V>(y + rr * c + c0, o);
            if (BITS && bits) bits[bits_at(rr, c, c0)] = (unsigned char)mb;
        }
    }
}

/* The backward in one launch: bwd_reduce_kernel's sums over the stash (x, dy and the mask) as it lands; the barrier;
 * every block finishes its tile's dgamma, dbeta and dx coefficients (row block 0 writes the gradients); dx and dx1
 * from the stash as bwd_apply_kernel writes them. */
template <typename T, int V, int MASK>
__global__ void __launch_bounds__(BN_THREADS, PERSIST_BLOCKS_PER_SM)
persist_bwd_kernel(const T *__restrict__ x, const T *__restrict__ y, const unsigned char *__restrict__ bits,
                   const T *__restrict__ dy, T *dx, float dx_beta, T *dx1, float dx1_beta, long long m, int c,
                   float *part, unsigned *barrier, const float *__restrict__ gamma, float *dgamma, float *dbeta,
                   float *dbeta_copy, float dw_beta, float *coef, int stash_rows) {
    extern __shared__ __align__(16) unsigned char stash[];
    __shared__ float red[2 * V * BN_THREADS], cf[3][BN_TILE_CHANNELS];
    constexpr int NT = MASK == MASK_Y ? 3 : 2;
    constexpr bool BITS = MASK == MASK_BITS;
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    long long r0, r1;
    rows_of(m, gridDim.y, blockIdx.y, &r0, &r1);
    const rows_t t = thread_rows(r0, r1);
    const long long ns = t.n < stash_rows ? t.n : stash_rows;
    const T *const all[3] = {x, dy, y};
    const auto &src = *reinterpret_cast<const T *const(*)[NT]>(&all);   /* the first NT */
    float s1[V], s2[V];
#pragma unroll
    for (int j = 0; j < V; j++) s1[j] = s2[j] = 0.0f;
    const bn_mask_t<T, V, MASK> mk(coef, c, c0 < c ? c0 : 0);
    if (c0 < c) {
        stash_issue<T, V, NT, BITS>(src, bits, t, ns, stash_rows, c, c0, stash);
        persist_walk<T, V, NT, BITS, true, PERSIST_U_BWD>(
            src, bits, t, ns, stash_rows, c, c0, stash, [&](long long, const pack_t<T, V> *p, unsigned mb) {
                pack_t<T, V> o;   /* dpre: not kept (the element-wise pass recomputes it from the stash) */
                bwd_sums_row<T, V, MASK, NT>(mk, p, mb, s1, s2, &o);
            });
    }
    block_sum2<V>(s1, s2, red);
    if (threadIdx.y == 0 && c0 < c) store_partials<V>(part, c, c0, s1, s2);
    grid_sync(barrier, barrier + 1);
    double t1, t2, p;
    if (finish_sums<V, false>(part, m, c, &t1, &t2, &p)) {
        const int j = threadIdx.y * blockDim.x + threadIdx.x;
        float k[3];
        finish_backward(blockIdx.x * blockDim.x * V + j, c, m, t1, t2, gamma, dgamma, dbeta, dbeta_copy, dw_beta,
                        coef, blockIdx.y == 0, k);
        cf[0][j] = k[0];
        cf[1][j] = k[1];
        cf[2][j] = k[2];
    }
    __syncthreads();
    if (c0 >= c) return;
    bn_dx_t<V> kd;
#pragma unroll
    for (int j = 0; j < V; j++) {
        kd.k1[j] = cf[0][threadIdx.x * V + j];
        kd.kx[j] = cf[1][threadIdx.x * V + j];
        kd.k0[j] = cf[2][threadIdx.x * V + j];
    }
    persist_walk<T, V, NT, BITS, false, PERSIST_U_BWD>(
        src, bits, t, ns, stash_rows, c, c0, stash, [&](long long rr, const pack_t<T, V> *p, unsigned mb) {
            bwd_dx_row<T, V, MASK, NT>(mk, kd, p, mb, dx, dx_beta, dx1, dx1_beta, rr * c + c0);
        });
}

// --- host side

/* A cooperative launch of kernel on grid g with dyn bytes of stash. */
template <typename K, typename... A>
static void launch_coop(K *kernel, const bn_nhwc_grid_t *g, size_t dyn, cudaStream_t s, A... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(g->tiles, g->rb);
    cfg.blockDim = dim3(g->tw, g->lanes);
    cfg.dynamicSmemBytes = dyn;
    cfg.stream = s;
    cudaLaunchAttribute at[1] = {};   /* the value union's padding zeroed */
    at[0].id = cudaLaunchAttributeCooperative;
    at[0].val.cooperative = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    CHECK_CUDA(cudaLaunchKernelEx(&cfg, kernel, args...));
}

__global__ static void coop_probe_kernel() {}

/* 1 where this device runs cooperative launches and a stream capture takes one into a graph that instantiates (the
 * training step replays CUDA graphs): else the persistent way is left out rather than failing a capture later. */
static int coop_capturable(int device) {
    int coop = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
    if (!coop) return 0;
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    int ok = 0;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(1);
        cfg.blockDim = dim3(32);
        cfg.stream = s;
        cudaLaunchAttribute at[1] = {};
        at[0].id = cudaLaunchAttributeCooperative;
        at[0].val.cooperative = 1;
        cfg.attrs = at;
        cfg.numAttrs = 1;
        const cudaError_t launched = cudaLaunchKernelEx(&cfg, coop_probe_kernel);
        const cudaError_t ended = cudaStreamEndCapture(s, &graph);
        ok = launched == cudaSuccess && ended == cudaSuccess && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    }
    (void)cudaGetLastError();   /* a refused capture leaves its error here: the answer, not a failure */
    if (exec) CHECK_CUDA(cudaGraphExecDestroy(exec));
    if (graph) CHECK_CUDA(cudaGraphDestroy(graph));
    CHECK_CUDA(cudaStreamDestroy(s));
    return ok;
}

/* Stash bytes a row of one thread takes: NT 16-byte packs (and a bits word). */
static size_t row_bytes(int nt, int bits) { return (size_t)nt * 16 + (bits ? 4 : 0); }

template <typename T>
struct persist_t {
    static constexpr int V = 16 / (int)sizeof(T);
    template <int FUSE>
    static auto fwd_kernel() { return persist_fwd_kernel<T, V, FUSE>; }
    template <int MASK>
    static auto bwd_kernel() { return persist_bwd_kernel<T, V, MASK>; }

    /* The stash rows a block can keep per thread next to kernel's static shared memory, at PERSIST_BLOCKS_PER_SM blocks
     * an SM; then allows the kernel that much and checks the residency. 0 where it does not fit. */
    template <typename K>
    static int fit(K *kernel, int device, size_t per_row, long long want_rows, size_t *dyn) {
        int per_sm = 0, optin = 0, reserved = 0, occ = 0;
        CHECK_CUDA(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
        CHECK_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        CHECK_CUDA(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
        cudaFuncAttributes fa;
        CHECK_CUDA(cudaFuncGetAttributes(&fa, (const void *)kernel));
        long long budget = per_sm / PERSIST_BLOCKS_PER_SM - reserved - (long long)fa.sharedSizeBytes;
        if (budget > optin - (long long)fa.sharedSizeBytes) budget = optin - (long long)fa.sharedSizeBytes;
        long long rows = budget > 0 ? budget / (long long)(per_row * BN_THREADS) : 0;
        if (rows > want_rows) rows = want_rows;
        *dyn = (size_t)rows * per_row * BN_THREADS;
        bn_allow_smem(kernel, *dyn);
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kernel, BN_THREADS, *dyn));
        return occ;
    }
    static void plan(bn_nhwc_t *b, int device) {
        int sms = 0, l2 = 0;
        CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        bn_nhwc_grid_t g = b->grid[BN_NHWC_REG];
        const long long blocks = (long long)PERSIST_BLOCKS_PER_SM * sms;
        /* One wave, and no more row blocks than the two-pass grid plans (the scratch holds that many partials). */
        long long rb = blocks / g.tiles, cap = (b->m + (long long)g.lanes * BN_MIN_ROWS - 1) / ((long long)g.lanes * BN_MIN_ROWS);
        if (rb > cap) rb = cap;
        g.rb = (int)(rb < BN_MAX_ROW_BLOCKS ? rb : BN_MAX_ROW_BLOCKS);
        b->grid[BN_NHWC_PERSIST] = g;
        b->grid[BN_NHWC_PERSIST].rb = 0;
        if (g.rb < 1 || !coop_capturable(device)) return;
        const long long per_thread = ((b->m + g.rb - 1) / g.rb + g.lanes - 1) / g.lanes;
        const int mask = bn_mask_of(b), nt = mask == MASK_Y ? 3 : 2;
        size_t dyn[2];
        int occ[2];
        if (b->fuse == BN_FUSE_NONE) occ[0] = fit(fwd_kernel<BN_FUSE_NONE>(), device, row_bytes(1, 0), per_thread, &dyn[0]);
        else if (b->fuse == BN_FUSE_RELU) occ[0] = fit(fwd_kernel<BN_FUSE_RELU>(), device, row_bytes(1, 0), per_thread, &dyn[0]);
        else occ[0] = fit(fwd_kernel<BN_FUSE_ADD_RELU>(), device, row_bytes(1, 0), per_thread, &dyn[0]);
        if (mask == MASK_NONE) occ[1] = fit(bwd_kernel<MASK_NONE>(), device, row_bytes(nt, 0), per_thread, &dyn[1]);
        else if (mask == MASK_PRE) occ[1] = fit(bwd_kernel<MASK_PRE>(), device, row_bytes(nt, 0), per_thread, &dyn[1]);
        else if (mask == MASK_Y) occ[1] = fit(bwd_kernel<MASK_Y>(), device, row_bytes(nt, 0), per_thread, &dyn[1]);
        else occ[1] = fit(bwd_kernel<MASK_BITS>(), device, row_bytes(nt, 1), per_thread, &dyn[1]);
        b->stash[0] = (int)(dyn[0] / (row_bytes(1, 0) * BN_THREADS));
        b->stash[1] = (int)(dyn[1] / (row_bytes(nt, mask == MASK_BITS) * BN_THREADS));
        /* Co-resident (a cooperative launch needs it), and on chip: what the stash cannot hold, re-read from L2, must
         * fit there with room to spare; larger activations gain nothing over the two passes. */
        const double tensor = (double)b->m * b->c * dtype_size(b->dtype);
        const double reread = (double)(per_thread - b->stash[1] > 0 ? per_thread - b->stash[1] : 0) / per_thread *
                              tensor * (nt - (mask == MASK_BITS ? 1 : 0));
        if (occ[0] * (long long)sms < (long long)g.tiles * g.rb || occ[1] * (long long)sms < (long long)g.tiles * g.rb ||
            reread > 0.75 * l2)
            return;
        b->grid[BN_NHWC_PERSIST].rb = g.rb;
    }
    static void forward(const bn_nhwc_t *b, const fwd_args_t &a, cudaStream_t s) {
        const bn_nhwc_grid_t *g = &b->grid[BN_NHWC_PERSIST];
        const size_t dyn = (size_t)b->stash[0] * row_bytes(1, 0) * BN_THREADS;
        const T *x = (const T *)a.x, *x1 = (const T *)a.x1;
        T *y = (T *)a.y;
        float *part = bn_part(b), *coef = b->scratch;
        unsigned *bar = b->barrier;
        if (b->fuse == BN_FUSE_NONE)
            launch_coop(fwd_kernel<BN_FUSE_NONE>(), g, dyn, s, x, x1, y, b->m, b->c, part, bar, a.gamma, a.beta,
                        a.beta_add, a.rm, a.rv, coef, b->bits, a.eps, a.mom, b->stash[0]);
        else if (b->fuse == BN_FUSE_RELU)
            launch_coop(fwd_kernel<BN_FUSE_RELU>(), g, dyn, s, x, x1, y, b->m, b->c, part, bar, a.gamma, a.beta,
                        a.beta_add, a.rm, a.rv, coef, b->bits, a.eps, a.mom, b->stash[0]);
        else
            launch_coop(fwd_kernel<BN_FUSE_ADD_RELU>(), g, dyn, s, x, x1, y, b->m, b->c, part, bar, a.gamma, a.beta,
                        a.beta_add, a.rm, a.rv, coef, b->bits, a.eps, a.mom, b->stash[0]);
    }
    template <int MASK>
    static void bwd_mask(const bn_nhwc_t *b, const bwd_args_t &a, cudaStream_t s) {
        const bn_nhwc_grid_t *g = &b->grid[BN_NHWC_PERSIST];
        const size_t dyn = (size_t)b->stash[1] * row_bytes(MASK == MASK_Y ? 3 : 2, MASK == MASK_BITS) * BN_THREADS;
        launch_coop(bwd_kernel<MASK>(), g, dyn, s, (const T *)a.x, (const T *)a.y, (const unsigned char *)b->bits,
                    (const T *)a.dy, (T *)a.dx, a.dx_beta, (T *)a.dx1, a.dx1_beta, b->m, b->c, bn_part(b),
                    b->barrier, a.gamma, a.dgamma, a.dbeta, a.dbeta_copy, a.dw_beta, b->scratch, b->stash[1]);
    }
    static void backward(const bn_nhwc_t *b, const bwd_args_t &a, cudaStream_t s) {
        const int mask = bn_mask_of(b);
        if (mask == MASK_NONE) bwd_mask<MASK_NONE>(b, a, s);
        else if (mask == MASK_PRE) bwd_mask<MASK_PRE>(b, a, s);
        else if (mask == MASK_Y) bwd_mask<MASK_Y>(b, a, s);
        else if constexpr (V == 8) bwd_mask<MASK_BITS>(b, a, s);
    }
};

template <typename T> struct plan_t { static void run(bn_nhwc_t *b, int device) { persist_t<T>::plan(b, device); } };
template <typename T> struct pfwd_t {
    static void run(const bn_nhwc_t *b, const fwd_args_t &a, cudaStream_t s) { persist_t<T>::forward(b, a, s); }
};
template <typename T> struct pbwd_t {
    static void run(const bn_nhwc_t *b, const bwd_args_t &a, cudaStream_t s) { persist_t<T>::backward(b, a, s); }
};

void bn_persist_plan(bn_nhwc_t *b, int device) { dtype_dispatch<plan_t>(b->dtype, b, device); }
void bn_persist_forward(const bn_nhwc_t *b, const fwd_args_t &a, cudaStream_t s) { dtype_dispatch<pfwd_t>(b->dtype, b, a, s); }
void bn_persist_backward(const bn_nhwc_t *b, const bwd_args_t &a, cudaStream_t s) { dtype_dispatch<pbwd_t>(b->dtype, b, a, s); }
