/* pool.cu — pooling on NHWC tensors: max pooling (square window, stride, padding never winning) through two kernels
 * of its own, average pooling (padding counted as zeros) through cuDNN, global average pooling through two more. */
#include <stdio.h>
#include <stdlib.h>
#include "cudnn_util.h"
#include "../launch.h"
#include "elem.cuh"

/* The winner's place in its window is r * k + s (padding counted in r and s): one byte holds it up to k = 16. */
#define MAXPOOL_K_MAX 16

typedef struct {
    cudnnTensorDescriptor_t x_desc;     // (N, H, W, C)
    cudnnTensorDescriptor_t y_desc;     // (N, OH, OW, C)
    cudnnPoolingDescriptor_t pool;
    unsigned char *arg;                 // maxpool: (N, OH, OW, C), each window's winner, from forward to backward
} pool_priv_t;

static int pool_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    const layer_cfg_t *c = &l->cfg;
    shape_t in = l->in_shape[0];
    const char *name = l->ops->name;
    if (l->n_in != 1) { snprintf(err, errlen, "%s takes 1 input, got %d", name, l->n_in); return -1; }
    if (c->k < 1 || c->stride < 1 || c->pad < 0 || c->pad >= c->k) {
        snprintf(err, errlen, "%s needs k >= 1, stride >= 1, 0 <= pad < k (got k=%d stride=%d pad=%d)", name, c->k,
                 c->stride, c->pad);
        return -1;
    }
    if (l->ops == &layer_maxpool_ops && c->k > MAXPOOL_K_MAX) {
        snprintf(err, errlen, "maxpool k=%d: windows up to %d x %d (the winner's place is kept in one byte)", c->k,
                 MAXPOOL_K_MAX, MAXPOOL_K_MAX);
        return -1;
    }
    if (in.h + 2 * c->pad < c->k || in.w + 2 * c->pad < c->k) {
        snprintf(err, errlen, "%s k=%d pad=%d does not fit input %dx%d", name, c->k, c->pad, in.h, in.w);
        return -1;
    }
    out->n = in.n;
    out->h = (in.h + 2 * c->pad - c->k) / c->stride + 1;
    out->w = (in.w + 2 * c->pad - c->k) / c->stride + 1;
    out->c = in.c;
    return 0;
}

/* gap: (N, H, W, C) -> (N, 1, 1, C), the mean over each channel's plane. */
static int gap_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    shape_t in = l->in_shape[0];
    if (l->n_in != 1) { snprintf(err, errlen, "gap takes 1 input, got %d", l->n_in); return -1; }
    if (in.h < 1 || in.w < 1 || in.c < 1) {
        snprintf(err, errlen, "gap needs a non-empty input (got (%d, %d, %d, %d))", in.n, in.h, in.w, in.c);
        return -1;
    }
    out->n = in.n;
    out->h = 1;
    out->w = 1;
    out->c = in.c;
    return 0;
}

static size_t pool_count(const layer_t *l) { (void)l; return 0; }

// --- the gradient store shared by the pooling kernels

/* V lanes of dx = beta dx + acc, one rounding; a beta of 0 never reads dx (it may hold NaN). */
template <typename T, int V>
__device__ static inline void pool_put_grad(T *dx, float *acc, float beta) {
    if (beta != 0.0f) {
        pack_t<T, V> old = load_p<T, V>(dx);
        for (int j = 0; j < V; j++) acc[j] = fmaf(beta, to_f(old.v[j]), acc[j]);
    }
    pack_t<T, V> out;
    for (int j = 0; j < V; j++) out.v[j] = from_f<T>(acc[j]);
    store_p<T, V>(dx, out);
}

// --- global average pooling kernels: cuDNN's generic pooling backward took 18 us of a 2.9 ms ResNet-18 bf16 step on
// an H200 for a (256, 4, 4, 512) gradient that is one broadcast; these read and write each element once.

/* y (N, C) = mean over the plane of x (N, HW, C): one thread per (n, c), reads coalesced over c, summed in order. */
template <typename T>
__global__ static void gap_fwd_kernel(const T *__restrict__ x, T *__restrict__ y, int n, int hw, int c) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)n * c) return;
    size_t b = i / c, ch = i % c;
    float s = 0.0f;
    for (int p = 0; p < hw; p++) s += to_f(x[(b * hw + p) * c + ch]);
    y[i] = from_f<T>(s / (float)hw);
}

/* dx (N, HW, C) = beta dx + dy (N, C) / HW broadcast over the plane, V channels a thread: blockIdx.y walks the
 * images, so a thread finds its channels with one 32-bit remainder (one thread per element with 64-bit divisions
 * took 80 us for ResNet-50's (256, 7, 7, 2048) bf16 gradient on an H200, where moving its 51 MB takes ~12). */
template <typename T, int V>
__global__ static void gap_bwd_kernel(const T *__restrict__ dy, T *__restrict__ dx, int n, int hw, int c, float beta) {
    const int groups = c / V, per_image = hw * groups;
    for (int b = blockIdx.y; b < n; b += gridDim.y)
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < per_image; i += gridDim.x * blockDim.x) {
            const int g = i % groups;
            pack_t<T, V> v = load_p<T, V>(dy + (size_t)b * c + (size_t)g * V);
            float acc[V];
            for (int j = 0; j < V; j++) acc[j] = to_f(v.v[j]) / (float)hw;
            pool_put_grad<T, V>(dx + (size_t)b * hw * c + (size_t)i * V, acc, beta);
        }
}

// --- max pooling kernels: cuDNN's pooling_bw_max_nhwc_kernel took 1.712 ms per step on an H200 for the ResNet-50
// stem pool's backward (bf16, batch 256, a 411 MB input gradient) and its forward 0.329 ms, where moving the bytes
// once takes about 0.2 ms each. Forward keeps each window's winner (one byte per output) so that backward is a
// gather: every input cell is written by one thread adding its windows in a fixed order, without atomics, so
// replicas stay bit-identical, as cuDNN's CUDNN_POOLING_MAX_DETERMINISTIC did.

typedef struct { int n, h, w, c, oh, ow, k, stride, pad; } maxpool_dims_t;

/* The first window (along one side) that covers a cell: lo = cell + pad - k + 1 over the stride, rounded up. */
__device__ static inline int maxpool_first_window(int lo, int stride) {
    return lo <= 0 ? 0 : (lo + stride - 1) / stride;
}

/* y (N, OH, OW, C) = the max over each k x k window of x (N, H, W, C), padded cells never taking part; one thread
 * per (n, oh, ow, V channels). arg (N, OH, OW, C), unless NULL (evaluation: no backward follows), receives the
 * winner's place. The first maximum in row-major window order wins ties, as in the CPU reference
 * (tests/gpu/layer_ref.h: strict > from the first cell) and PyTorch's CUDA max-pool: with ReLU inputs whole windows
 * are zero, and which cell gets the gradient must not depend on the implementation. A NaN beats any number and the
 * first NaN the later ones, so y is NaN as with cuDNN's CUDNN_PROPAGATE_NAN and its gradient goes to that NaN. The
 * kernel is instruction-bound: 32 registers (a few bytes spilled) give full occupancy, 206 -> 189 us in bf16 and
 * 330 -> 293 in fp32 at the ResNet-50 stem's shape on an H200 (36 registers had left 75 %). */
/* Full occupancy is 8 blocks of 256 where an SM holds 2048 threads (sm_80, sm_90, sm_100); sm_86, sm_89 and sm_120
 * hold 1536, 6 blocks, and ptxas ignores (with a warning) a bound they cannot meet. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890 || \
                               __CUDA_ARCH__ >= 1200)
#define MAXPOOL_FWD_BLOCKS 6
#else
#define MAXPOOL_FWD_BLOCKS 8
#endif
template <typename T, int V, int K, int S>
__global__ static void __launch_bounds__(256, MAXPOOL_FWD_BLOCKS)
    maxpool_fwd_kernel(const T *__restrict__ x, T *__restrict__ y, unsigned char *__restrict__ arg, maxpool_dims_t d) {
    const int k = K ? K : d.k, stride = S ? S : d.stride, groups = d.c / V;
    const int i = blockIdx.x * blockDim.x + threadIdx.x, ow = i / groups, g = i - ow * groups;
    if (ow >= d.ow) return;
    for (int row = blockIdx.y; row < d.n * d.oh; row += gridDim.y) {
        const int n = row / d.oh, oh = row - n * d.oh;
        const size_t pix = (size_t)row * d.ow + ow;            // (n, oh, ow)
        int h0 = oh * stride - d.pad, w0 = ow * stride - d.pad;
        int r0 = max(0, -h0), r1 = min(k, d.h - h0), s0 = max(0, -w0), s1 = min(k, d.w - w0);
        float best[V];
        pack_t<unsigned char, V> at;
        for (int j = 0; j < V; j++) {   // a window holding only -inf keeps its first cell
            best[j] = -INFINITY;
            at.v[j] = (unsigned char)(r0 * k + s0);
        }
        const int rlo = K ? 0 : r0, rhi = K ? K : r1, slo = K ? 0 : s0, shi = K ? K : s1;   // constants when K is
#pragma unroll
        for (int r = rlo; r < rhi; r++) {
            if (r < r0 || r >= r1) continue;
#pragma unroll
            for (int s = slo; s < shi; s++) {
                if (s < s0 || s >= s1) continue;
                size_t off = (((size_t)n * d.h + h0 + r) * d.w + w0 + s) * d.c + (size_t)g * V;
                pack_t<T, V> v = load_p<T, V>(x + off);
                for (int j = 0; j < V; j++) {
                    float f = to_f(v.v[j]);
                    if (!(f <= best[j]) && !isnan(best[j])) {   // f > best, or f the first NaN
                        best[j] = f;
                        at.v[j] = (unsigned char)(r * k + s);
                    }
                }
            }
        }
        pack_t<T, V> out;
        for (int j = 0; j < V; j++) out.v[j] = from_f<T>(best[j]);   // exact: best is one of x's values
        store_p<T, V>(y + pix * d.c + (size_t)g * V, out);
        if (arg) store_p<unsigned char, V>(arg + pix * d.c + (size_t)g * V, at);
    }
}

/* acc += the lanes of gy whose window's winner is the cell at place `here` of that window. */
template <typename T, int V>
__device__ static inline void pool_add_won(float *acc, const pack_t<unsigned char, V> &at,
                                           const pack_t<T, V> &gy, unsigned char here) {
    for (int j = 0; j < V; j++)
        if (at.v[j] == here) acc[j] += to_f(gy.v[j]);
}

/* dx (N, H, W, C) = beta dx + the sum of dy over the windows that cell won; one thread per (n, h, w, V channels) of
 * the input, gathering from the at most ceil(k / stride)^2 windows that cover it (fp32 sum, oh then ow). A window
 * no lane won is skipped without reading its dy. */
template <typename T, int V>
__global__ static void maxpool_bwd_kernel(const T *__restrict__ dy, const unsigned char *__restrict__ arg,
                                          T *__restrict__ dx, maxpool_dims_t d, float beta) {
    const int k = d.k, stride = d.stride, groups = d.c / V;
    const int i = blockIdx.x * blockDim.x + threadIdx.x, w = i / groups, g = i - w * groups;
    if (w >= d.w) return;
    for (int row = blockIdx.y; row < d.n * d.h; row += gridDim.y) {
        const int n = row / d.h, h = row - n * d.h;
        int oh0 = maxpool_first_window(h + d.pad - k + 1, stride), oh1 = min(d.oh - 1, (h + d.pad) / stride);
        int ow0 = maxpool_first_window(w + d.pad - k + 1, stride), ow1 = min(d.ow - 1, (w + d.pad) / stride);
        float acc[V];
        for (int j = 0; j < V; j++) acc[j] = 0.0f;
        const size_t off0 = (((size_t)n * d.oh + oh0) * d.ow + ow0) * d.c + (size_t)g * V, orow = (size_t)d.ow * d.c;
        for (int a = 0; a <= oh1 - oh0; a++)
            for (int b = 0; b <= ow1 - ow0; b++) {
                const int oh = oh0 + a, ow = ow0 + b;
                unsigned char here = (unsigned char)((h + d.pad - oh * stride) * k + (w + d.pad - ow * stride));
                size_t off = off0 + a * orow + (size_t)b * d.c;
                pack_t<unsigned char, V> at = load_p<unsigned char, V>(arg + off);
                bool won = false;
                for (int j = 0; j < V; j++) won |= at.v[j] == here;
                if (!won) continue;
                pool_add_won<T, V>(acc, at, load_p<T, V>(dy + off), here);
            }
        pool_put_grad<T, V>(dx + ((size_t)row * d.w + w) * d.c + (size_t)g * V, acc, beta);
    }
}

/* ResNet's 3x3 stride-2 pool with padding 1: window (oh, ow) covers inputs 2 oh - 1 .. 2 oh + 1, so inputs 2a and
 * 2a + 1 take their gradient from windows a and a + 1 only (cell 2a + 1 sits at place 2 of window a, 0 of a + 1;
 * cell 2a at place 1 of a). One thread per 2 x 2 input cells (V channels) reads those at most 4 windows once, where
 * the kernel above reads up to 9 for the same cells; each cell sums in that kernel's order (oh, then ow), so both
 * give the same bits. Window row a finishes input row 2a and starts 2a + 1's sums before row a + 1 is read, and the
 * launch bound caps registers at 64 (holding all four windows' lanes took 105: 25 % occupancy, 0.30 ms for
 * ResNet-50's stem pool on an H200). Window (a, b) always exists: OH = ceil(H / 2) and OW = ceil(W / 2) here. */
template <typename T, int V>
__global__ static void __launch_bounds__(256, 4) maxpool_bwd_3s2p1_kernel(const T *__restrict__ dy,
                                                                         const unsigned char *__restrict__ arg,
                                                                         T *__restrict__ dx, maxpool_dims_t d,
                                                                         float beta) {
    const int groups = d.c / V, hb = (d.h + 1) / 2, wb = (d.w + 1) / 2;
    const int i = blockIdx.x * blockDim.x + threadIdx.x, b = i / groups, g = i - b * groups;
    if (b >= wb) return;
    const bool right = 2 * b + 1 < d.w, next_w = b + 1 < d.ow;
    for (int row = blockIdx.y; row < d.n * hb; row += gridDim.y) {
        const int n = row / hb, a = row - n * hb;
        const bool down = 2 * a + 1 < d.h;
        const size_t cv = (size_t)g * V, wrow = (size_t)d.ow * d.c, xrow = (size_t)d.w * d.c;
        const size_t w0 = (((size_t)n * d.oh + a) * d.ow + b) * d.c + cv;            // window (a, b)
        T *x0 = dx + (((size_t)n * d.h + 2 * a) * d.w + 2 * b) * d.c + cv;          // cell (2a, 2b)
        pack_t<unsigned char, V> at0 = load_p<unsigned char, V>(arg + w0), at1;
        pack_t<T, V> gy0 = load_p<T, V>(dy + w0), gy1;
        if (next_w) {
            at1 = load_p<unsigned char, V>(arg + w0 + d.c);
            gy1 = load_p<T, V>(dy + w0 + d.c);
        }
        float acc[V], lo[2][V];
        for (int j = 0; j < V; j++) acc[j] = 0.0f;
        pool_add_won<T, V>(acc, at0, gy0, 4);                                     // (2a, 2b): (1, 1) of (a, b)
        pool_put_grad<T, V>(x0, acc, beta);
        if (right) {                                                               // (2a, 2b + 1)
            for (int j = 0; j < V; j++) acc[j] = 0.0f;
            pool_add_won<T, V>(acc, at0, gy0, 5);
            if (next_w) pool_add_won<T, V>(acc, at1, gy1, 3);
            pool_put_grad<T, V>(x0 + d.c, acc, beta);
        }
        if (!down) continue;
        for (int j = 0; j < V; j++) lo[0][j] = lo[1][j] = 0.0f;                  // row 2a + 1 from window row a
        pool_add_won<T, V>(lo[0], at0, gy0, 7);
        pool_add_won<T, V>(lo[1], at0, gy0, 8);
        if (next_w) pool_add_won<T, V>(lo[1], at1, gy1, 6);
        if (a + 1 < d.oh) {                                                        // then from window row a + 1
            at0 = load_p<unsigned char, V>(arg + w0 + wrow);
            gy0 = load_p<T, V>(dy + w0 + wrow);
            pool_add_won<T, V>(lo[0], at0, gy0, 1);
            pool_add_won<T, V>(lo[1], at0, gy0, 2);
            if (next_w) {
                at1 = load_p<unsigned char, V>(arg + w0 + wrow + d.c);
                gy1 = load_p<T, V>(dy + w0 + wrow + d.c);
                pool_add_won<T, V>(lo[1], at1, gy1, 0);
            }
        }
        pool_put_grad<T, V>(x0 + xrow, lo[0], beta);
        if (right) pool_put_grad<T, V>(x0 + xrow + d.c, lo[1], beta);
    }
}

static void pool_destroy(layer_t *l) {
    pool_priv_t *p = (pool_priv_t *)l->priv;
    if (!p) return;
    cudnn_tensor_desc_free(&p->x_desc);
    cudnn_tensor_desc_free(&p->y_desc);
    if (p->pool) CHECK_CUDNN(cudnnDestroyPoolingDescriptor(p->pool));
    if (p->arg) CHECK_CUDA(cudaFree(p->arg));
    free(p);
    l->priv = NULL;
}

/* Max pooling's winners, one byte per output, kept from forward to backward. */
static size_t maxpool_own_bytes(const layer_t *l, const gpu_t *g, int needs_dx, dtype_t t) {
    (void)g; (void)needs_dx; (void)t;
    return shape_numel(l->out_shape);
}

static size_t pool_setup(layer_t *l, gpu_t *g) {
    pool_destroy(l);
    pool_priv_t *p = (pool_priv_t *)calloc(1, sizeof *p);
    if (!p) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    l->priv = p;
    if (l->ops == &layer_maxpool_ops) {
        CHECK_ALLOC(cudaMalloc((void **)&p->arg, maxpool_own_bytes(l, g, 0, l->dtype)));
        return 0;
    }
    const layer_cfg_t *c = &l->cfg;
    shape_t in = l->in_shape[0];
    p->x_desc = cudnn_nhwc_desc(in, l->dtype);
    p->y_desc = cudnn_nhwc_desc(l->out_shape, l->dtype);
    /* Average divides by k*k everywhere, as PyTorch's count_include_pad=True; gap has no padding, so that is the
     * mean over H*W (its descriptor only checks the shape: its kernels are ours). */
    cudnnPoolingMode_t mode = CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    int gap = l->ops == &layer_gap_ops;
    CHECK_CUDNN(cudnnCreatePoolingDescriptor(&p->pool));
    CHECK_CUDNN(cudnnSetPooling2dDescriptor(p->pool, mode, CUDNN_PROPAGATE_NAN, gap ? in.h : c->k, gap ? in.w : c->k,
                                            gap ? 0 : c->pad, gap ? 0 : c->pad, gap ? in.h : c->stride,
                                            gap ? in.w : c->stride));
    int n = 0, ch = 0, h = 0, w = 0;
    CHECK_CUDNN(cudnnGetPooling2dForwardOutputDim(p->pool, p->x_desc, &n, &ch, &h, &w));
    if (n != l->out_shape.n || ch != l->out_shape.c || h != l->out_shape.h || w != l->out_shape.w) {
        fprintf(stderr, "%s %s: cuDNN output (%d, %d, %d, %d) != layer output (%d, %d, %d, %d)\n", l->ops->name,
                cu_label(l), n, h, w, ch, l->out_shape.n, l->out_shape.h, l->out_shape.w, l->out_shape.c);
        check_fail(__FILE__, __LINE__, "cudnnGetPooling2dForwardOutputDim", "shape mismatch");
    }
    return 0;
}

/* 16-byte accesses need C a multiple of the lanes and 16-byte aligned tensors (the model's are: model.c starts every
 * tensor on a multiple of 64 elements); anything else takes the one-channel kernels. */
static int pool_vector_ok(int c, int lanes, const void *a, const void *b) {
    return c % lanes == 0 && ((size_t)a | (size_t)b) % 16 == 0;
}

template <typename T> struct gap_forward_as {
    static void run(const layer_t *l, gpu_t *g) {
        shape_t in = l->in_shape[0];
        unsigned blocks = launch_blocks((size_t)in.n * in.c, 256, 1u << 20);
        gap_fwd_kernel<<<blocks, 256, 0, g->stream>>>((const T *)l->x[0], (T *)l->y, in.n, in.h * in.w, in.c);
        CHECK_LAUNCH();
    }
};

/* The grid of the row-walking kernels (256 threads a block): x covers all of one row's threads (the max-pool kernels
 * do not loop over x), y walks the rows (up to 65,535 blocks, the kernels loop over the rest); neither 0. */
static dim3 pool_grid(int rows, int per_row) {
    return dim3(launch_blocks((size_t)per_row, 256, 0x7fffffff), launch_blocks((size_t)rows, 1, 65535));
}

template <typename T, int V>
static void gap_backward_v(const T *dy, T *dx, shape_t in, float beta, cudaStream_t s) {
    gap_bwd_kernel<T, V><<<pool_grid(in.n, in.h * in.w * (in.c / V)), 256, 0, s>>>(dy, dx, in.n, in.h * in.w, in.c,
                                                                                   beta);
    CHECK_LAUNCH();
}

template <typename T> struct gap_backward_as {
    static void run(const layer_t *l, gpu_t *g) {
        constexpr int V = 16 / (int)sizeof(T);
        const T *dy = (const T *)l->dy;
        T *dx = (T *)l->dx[0];
        shape_t in = l->in_shape[0];
        if (pool_vector_ok(in.c, V, dy, dx)) gap_backward_v<T, V>(dy, dx, in, l->dx_beta[0], g->stream);
        else gap_backward_v<T, 1>(dy, dx, in, l->dx_beta[0], g->stream);
    }
};

static maxpool_dims_t maxpool_dims(const layer_t *l) {
    shape_t in = l->in_shape[0], out = l->out_shape;
    maxpool_dims_t d = {in.n, in.h, in.w, in.c, out.h, out.w, l->cfg.k, l->cfg.stride, l->cfg.pad};
    return d;
}

/* A thread per (row, column, 16 bytes of channels): blockIdx.y walks the image rows (n, h), x the columns' channel
 * groups, so a thread divides once to find its place (64-bit divisions by runtime sizes took half the backward's
 * time at ResNet-50's stem). ResNet's 3x3 stride-2 window: the forward compiled with the sizes known, its loops
 * unrolled; the backward its own kernel with padding 1 (maxpool_bwd_3s2p1_kernel). */

template <typename T, int V>
static void maxpool_forward_v(const maxpool_dims_t &d, const T *x, T *y, unsigned char *arg, cudaStream_t s) {
    dim3 grid = pool_grid(d.n * d.oh, d.ow * (d.c / V));
    if (d.k == 3 && d.stride == 2) maxpool_fwd_kernel<T, V, 3, 2><<<grid, 256, 0, s>>>(x, y, arg, d);
    else maxpool_fwd_kernel<T, V, 0, 0><<<grid, 256, 0, s>>>(x, y, arg, d);
    CHECK_LAUNCH();
}

template <typename T> struct maxpool_forward_as {
    static void run(const layer_t *l, gpu_t *g, unsigned char *arg) {
        constexpr int V = 16 / (int)sizeof(T);
        maxpool_dims_t d = maxpool_dims(l);
        const T *x = (const T *)l->x[0];
        T *y = (T *)l->y;
        if (pool_vector_ok(d.c, V, x, y)) maxpool_forward_v<T, V>(d, x, y, arg, g->stream);
        else maxpool_forward_v<T, 1>(d, x, y, arg, g->stream);
    }
};

template <typename T, int V>
static void maxpool_backward_v(const maxpool_dims_t &d, const T *dy, const unsigned char *arg, T *dx, float beta,
                               cudaStream_t s) {
    if (d.k == 3 && d.stride == 2 && d.pad == 1) {
        dim3 grid = pool_grid(d.n * ((d.h + 1) / 2), (d.w + 1) / 2 * (d.c / V));
        maxpool_bwd_3s2p1_kernel<T, V><<<grid, 256, 0, s>>>(dy, arg, dx, d, beta);
    } else {
        maxpool_bwd_kernel<T, V><<<pool_grid(d.n * d.h, d.w * (d.c / V)), 256, 0, s>>>(dy, arg, dx, d, beta);
    }
    CHECK_LAUNCH();
}

template <typename T> struct maxpool_backward_as {
    static void run(const layer_t *l, gpu_t *g, const unsigned char *arg) {
        constexpr int V = 16 / (int)sizeof(T);
        maxpool_dims_t d = maxpool_dims(l);
        const T *dy = (const T *)l->dy;
        T *dx = (T *)l->dx[0];
        if (pool_vector_ok(d.c, V, dy, dx)) maxpool_backward_v<T, V>(d, dy, arg, dx, l->dx_beta[0], g->stream);
        else maxpool_backward_v<T, 1>(d, dy, arg, dx, l->dx_beta[0], g->stream);
    }
};

/* Evaluation keeps no winners: no backward reads them before the next training forward writes them all. */
static void maxpool_forward(const layer_t *l, gpu_t *g, int training) {
    unsigned char *arg = training ? ((const pool_priv_t *)l->priv)->arg : NULL;
    dtype_dispatch<maxpool_forward_as>(l->dtype, l, g, arg);
}

static void maxpool_backward(const layer_t *l, gpu_t *g) {
    const unsigned char *arg = ((const pool_priv_t *)l->priv)->arg;
    dtype_dispatch<maxpool_backward_as>(l->dtype, l, g, arg);
}

static void pool_forward(layer_t *l, gpu_t *g, int training) {
    if (l->ops == &layer_maxpool_ops) { maxpool_forward(l, g, training); return; }
    if (l->ops == &layer_gap_ops) { dtype_dispatch<gap_forward_as>(l->dtype, l, g); return; }
    const pool_priv_t *p = (const pool_priv_t *)l->priv;
    // (N, H, W, C) -> (N, OH, OW, C)
    CHECK_CUDNN(cudnnPoolingForward(g->cudnn, p->pool, &CU_ONE, p->x_desc, l->x[0], &CU_ZERO, p->y_desc, l->y));
}

static void pool_backward(layer_t *l, gpu_t *g, float dw_beta) {
    (void)dw_beta;
    const pool_priv_t *p = (const pool_priv_t *)l->priv;
    if (!l->dx[0]) return;
    if (l->ops == &layer_maxpool_ops) { maxpool_backward(l, g); return; }
    if (l->ops == &layer_gap_ops) { dtype_dispatch<gap_backward_as>(l->dtype, l, g); return; }
    CHECK_CUDNN(cudnnPoolingBackward(g->cudnn, p->pool, &CU_ONE, p->y_desc, l->y, p->y_desc, l->dy, p->x_desc,
                                     l->x[0], &l->dx_beta[0], p->x_desc, l->dx[0]));
}

const layer_ops_t layer_maxpool_ops = {
    "maxpool", pool_out_shape, pool_count, pool_count, NULL,
    pool_setup, pool_forward, pool_backward, pool_destroy, maxpool_own_bytes, NULL, NULL,
};

const layer_ops_t layer_avgpool_ops = {
    "avgpool", pool_out_shape, pool_count, pool_count, NULL,
    pool_setup, pool_forward, pool_backward, pool_destroy, NULL, NULL, NULL,
};

const layer_ops_t layer_gap_ops = {
    "gap", gap_out_shape, pool_count, pool_count, NULL,
    pool_setup, pool_forward, pool_backward, pool_destroy, NULL, NULL, NULL,
};
