/* conv_gemm.cu — the stem's convolution as an explicit GEMM: cuDNN's best engines ran 3 input channels at 39 and 68
 * TFLOP/s (1.54 ms forward, 0.89 ms filter gradient for ResNet-50's stem at batch 256 on an H200); an im2col copy
 * makes it a GEMM of inner size 152 on tensor cores, the copy (1 GB there) written once and read twice. */
#include "conv_gemm.h"
#include "cudnn_util.h"
#include "../check.h"
#include "../launch.h"
#include "elem.cuh"
#include <stdint.h>
#include <string.h>

#define COL_GROUP 8   /* columns rounded up to: 16-byte rows, which cuBLAS's aligned kernels need in bf16 */

static int conv_gemm_cols(shape_t in, int k) { return (k * k * in.c + COL_GROUP - 1) / COL_GROUP * COL_GROUP; }

int conv_gemm_applies(shape_t in, shape_t out, int k, int stride, int needs_dx) {
    long long rows = (long long)out.n * out.h * out.w;
    return !needs_dx && in.c <= 4 && k > 1 && k <= 11 && stride <= 4 && rows * conv_gemm_cols(in, k) < (1LL << 31) &&
           (long long)in.n * in.h * in.w * in.c < (1LL << 31);
}

/* The three buffers' bytes, for conv_gemm_init and the memory plan alike: the im2col copy (a row per output
 * position), the padded weights (a row per output channel, type t) and the filter gradient's (fp32). */
static size_t col_bytes(shape_t in, shape_t out, int k, dtype_t t) {
    return (size_t)out.n * out.h * out.w * conv_gemm_cols(in, k) * dtype_size(t);
}
static size_t wpad_bytes(shape_t in, shape_t out, int k, dtype_t t) {
    return (size_t)out.c * conv_gemm_cols(in, k) * dtype_size(t);
}
static size_t dwpad_bytes(shape_t in, shape_t out, int k) { return wpad_bytes(in, out, k, DTYPE_FP32); }

size_t conv_gemm_bytes(shape_t in, shape_t out, int k, dtype_t t) {
    return col_bytes(in, out, k, t) + wpad_bytes(in, out, k, t) + dwpad_bytes(in, out, k);
}

void conv_gemm_init(conv_gemm_t *c, shape_t in, shape_t out, int k, int stride, int pad, dtype_t t,
                    cudaStream_t stream) {
    memset(c, 0, sizeof *c);
    c->in = in;
    c->out = out;
    c->k = k;
    c->stride = stride;
    c->pad = pad;
    c->t = t;
    c->cols = conv_gemm_cols(in, k);
    CHECK_ALLOC(cudaMalloc(&c->col, col_bytes(in, out, k, t)));
    CHECK_ALLOC(cudaMalloc(&c->wpad, wpad_bytes(in, out, k, t)));
    CHECK_ALLOC(cudaMalloc((void **)&c->dwpad, dwpad_bytes(in, out, k)));
    CHECK_CUDA(cudaMemsetAsync(c->wpad, 0, wpad_bytes(in, out, k, t), stream));   /* its padding stays 0 */
}

void conv_gemm_free(conv_gemm_t *c) {
    if (c->col) CHECK_CUDA(cudaFree(c->col));
    if (c->wpad) CHECK_CUDA(cudaFree(c->wpad));
    if (c->dwpad) CHECK_CUDA(cudaFree(c->dwpad));
    memset(c, 0, sizeof *c);
}

#define TILE_OW 56      /* output positions of one image row per block: 112's half, 56 */
#define IM2COL_LANES 32   /* column pairs in flight per window: consecutive addresses */
#define IM2COL_ROWS 4     /* windows in flight */

typedef struct {
    int h, w, c, oh, ow, k, stride, pad, cols, kkc, tiles;
} im2col_dims_t;

/* Shared floats of one block: the k input rows its TILE_OW windows span (every channel), then a column's offset in
 * them for each of the cols columns. */
static int im2col_smem_floats(int k, int stride, int c, int cols) {
    return k * ((TILE_OW - 1) * stride + k) * c + cols;
}

/* col (N*OH*OW, cols) row (n, oh, ow), column (r, s, c) as the KRSC filter: the input cell the window puts there, 0
 * outside the image and in the padding columns. A block takes TILE_OW consecutive windows of one output row: it
 * stages their k input rows in shared memory (coalesced reads), then writes the rows two columns a lane,
 * consecutive lanes at consecutive addresses. A window's k*C consecutive columns of one r are k*C consecutive
 * staged values, so the reads are conflict-free too; off[] maps a column to its place once per block. */
template <typename T>
__global__ static void im2col_kernel(const T *__restrict__ x, T *__restrict__ col, im2col_dims_t d) {
    extern __shared__ float smem[];
    const int tile = blockIdx.x % d.tiles, q = blockIdx.x / d.tiles, oh = q % d.oh, n = q / d.oh;
    const int ow0 = tile * TILE_OW, nw = min(TILE_OW, d.ow - ow0), kc = d.k * d.c, wc = d.w * d.c;
    const int h0 = oh * d.stride - d.pad, rf = ((TILE_OW - 1) * d.stride + d.k) * d.c;
    const int e0 = (ow0 * d.stride - d.pad) * d.c;   // the patch's first element within an input row (may be < 0)
    const int tid = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
    float *patch = smem;
    int *off = (int *)(smem + d.k * rf);
    /* 32-bit indices throughout (conv_gemm_applies bounds the input and the copy); an input row's (w, c) cells are
     * contiguous, so a patch element is inside the image where e0 + e is within the row. */
    for (int r = 0; r < d.k; r++) {
        const int ih = h0 + r;
        const unsigned row = ((unsigned)n * d.h + ih) * (unsigned)wc;
        for (int e = tid; e < rf; e += threads)
            patch[r * rf + e] = ih >= 0 && ih < d.h && e0 + e >= 0 && e0 + e < wc ? ld(x, row + e0 + e) : 0.0f;
    }
    for (int j = tid; j < d.cols; j += threads) off[j] = j < d.kkc ? j / kc * rf + j % kc : -1;
    __syncthreads();
    /* A lane keeps its column pair's two places in registers and walks the windows: no division per element. */
    const unsigned row0 = ((unsigned)n * d.oh + oh) * d.ow + ow0, step = blockDim.y * (unsigned)d.cols;
    const int wstep = blockDim.y * d.stride * d.c;
    for (int j = threadIdx.x * 2; j < d.cols; j += blockDim.x * 2) {
        const int o0 = off[j], o1 = off[j + 1];
        unsigned at = (row0 + threadIdx.y) * d.cols + j;
        for (int t = threadIdx.y, base = t * d.stride * d.c; t < nw; t += blockDim.y, base += wstep, at += step)
            store2(col, at, o0 >= 0 ? patch[o0 + base] : 0.0f,
                   o1 >= 0 ? patch[o1 + base] : 0.0f);   // exact: each value is one of x's or 0
    }
}

template <typename T> struct im2col {
    static void run(const void *x, void *col, im2col_dims_t d, unsigned blocks, dim3 block, size_t smem,
                    cudaStream_t s) {
        im2col_kernel<T><<<blocks, block, smem, s>>>((const T *)x, (T *)col, d);
        CHECK_LAUNCH();
    }
};

void conv_gemm_forward(const conv_gemm_t *c, gpu_t *g, const void *x, const void *w, void *y) {
    const shape_t in = c->in, out = c->out;
    const int cols = c->cols, kkc = c->k * c->k * in.c, rows = out.n * out.h * out.w;
    const int tiles = (out.w + TILE_OW - 1) / TILE_OW;
    im2col_dims_t d = {in.h, in.w, in.c, out.h, out.w, c->k, c->stride, c->pad, cols, kkc, tiles};
    const unsigned blocks = (unsigned)out.n * out.h * tiles;
    const size_t smem = (size_t)im2col_smem_floats(c->k, c->stride, in.c, cols) * sizeof(float);
    const dtype_t t = c->t;
    const dim3 block(IM2COL_LANES, IM2COL_ROWS);
    dtype_dispatch<im2col>(t, x, c->col, d, blocks, block, smem, g->stream);
    size_t es = dtype_size(t);
    CHECK_CUDA(cudaMemcpy2DAsync(c->wpad, (size_t)cols * es, w, (size_t)kkc * es, (size_t)kkc * es, (size_t)out.c,
                                 cudaMemcpyDeviceToDevice, g->stream));
    /* Column-major: y (K, rows) = wpad' (K, cols) . col (cols, rows). */
    blas_gemm_conv(g, CUBLAS_OP_T, CUBLAS_OP_N, out.c, rows, cols, t, c->wpad, cols, c->col, cols, 0.0f, t, y, out.c);
}

/* The GEMM writes whole padded rows (a row of 147 floats made cuBLAS take an unaligned CUDA-core kernel, 1.2 ms for
 * ResNet-50's stem at batch 256 on an H200); their first k*k*C columns then go to dw, scaled in. */
void conv_gemm_wgrad(const conv_gemm_t *c, gpu_t *g, const void *dy, float *dw, float beta) {
    const shape_t out = c->out;
    const int cols = c->cols, kkc = c->k * c->k * c->in.c, rows = out.n * out.h * out.w;
    /* Column-major: dwpad (cols, K) = col (cols, rows) . dy' (rows, K). */
    blas_gemm_conv(g, CUBLAS_OP_N, CUBLAS_OP_T, cols, out.c, rows, c->t, c->col, cols, dy, out.c, 0.0f, DTYPE_FP32,
                   c->dwpad, cols);
    if (beta == 0.0f)   /* dw's old value is never read (it may hold NaN) */
        CHECK_CUDA(cudaMemcpy2DAsync(dw, (size_t)kkc * sizeof(float), c->dwpad, (size_t)cols * sizeof(float),
                                     (size_t)kkc * sizeof(float), (size_t)out.c, cudaMemcpyDeviceToDevice, g->stream));
    else
        CHECK_CUBLAS(cublasSgeam(g->cublas, CUBLAS_OP_N, CUBLAS_OP_N, kkc, out.c, &CU_ONE, c->dwpad, cols, &beta, dw,
                                 kkc, dw, kkc));
}
