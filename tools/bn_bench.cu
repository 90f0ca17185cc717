/* bn_bench.cu — batch norm's training kernels at a network's shapes, in the way of llm.c's dev/cuda: for each shape
 * first the two numbers that bound it (the bytes a pass must move, and the bandwidth a read-only pass and a copy of
 * that size reach here), then each version (cuDNN's, and ours: two passes through registers, two through a cp.async
 * ring, one persistent launch) checked against a CPU double reference and timed with CUDA events (warm-up, then
 * single calls each on the next of several buffer sets, so that L2 does not flatter; and "hot", the same set again,
 * as a training step finds a small activation the convolution before it just wrote). A summary table comes last.
 *
 * Build: cmake --build build --target bn_bench.
 * Run:   build/bn_bench [resnet50|resnet18] [bf16|fp32|fp16] [--reps N] [--no-check]
 * GB/s are the bytes each version moves (the header says which) over its median time; "floor" is the bytes any
 * implementation must move over the measured copy bandwidth. Not a test: tests/gpu/test_bn_nhwc checks correctness. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "engine/check.h"
#include "engine/gpu.h"
#include "engine/layer.h"
#include "engine/layers/bn_nhwc.h"
#include "engine/layers/cudnn_util.h"
#include "engine/layers/elem.cuh"

#define ROTATE_BYTES ((size_t)240 << 20)   /* the buffer sets one version cycles through: 4x an H200's L2 */
#define WARM 3
#define MAX_REPS 64
#define SAMPLES 4096                        /* elements of y and dx checked against the reference */

// ------------------------------------------------------------------------------------------------------------------
// the shapes

/* A network's batch norms at batch 256 by shape: how many use each fuse mode (none: the projection shortcuts'). */
typedef struct { int h, c, none, relu, add; } shape_t_;
static const shape_t_ RESNET18[] = {{28, 64, 0, 3, 2}, {14, 128, 0, 2, 2}, {7, 256, 0, 2, 2}, {4, 512, 0, 2, 2}, {0, 0, 0, 0, 0}};
static const shape_t_ RESNET50[] = {   /* at 224x224: the stem's, then each stage's (v1.5 strides) */
    {112, 64, 0, 1, 0}, {56, 64, 0, 6, 0},  {56, 256, 1, 0, 3}, {56, 128, 0, 1, 0}, {28, 128, 0, 7, 0},
    {28, 512, 1, 0, 4}, {28, 256, 0, 1, 0}, {14, 256, 0, 11, 0}, {14, 1024, 1, 0, 6}, {14, 512, 0, 1, 0},
    {7, 512, 0, 5, 0},  {7, 2048, 1, 0, 3}, {0, 0, 0, 0, 0}};

// ------------------------------------------------------------------------------------------------------------------
// the ceilings: a read-only pass and a copy, 16 bytes a thread

__global__ static void read_kernel(const uint4 *__restrict__ x, size_t n, unsigned *sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcs(x + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;   /* never in practice; keeps the loads */
}
__global__ static void copy_kernel(const uint4 *__restrict__ x, uint4 *__restrict__ y, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        __stcs(y + i, __ldcs(x + i));
}

/* Widens n elements of type T to fp32 (the reference reads them). */
template <typename T>
__global__ static void widen_kernel(const T *x, float *y, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = to_f(x[i]);
}
template <typename T> struct widen_t {
    static void run(const void *x, float *y, size_t n, cudaStream_t s) {
        widen_kernel<T><<<1024, 256, 0, s>>>((const T *)x, y, n);
        CHECK_LAUNCH();
    }
};

// ------------------------------------------------------------------------------------------------------------------
// one shape: buffer sets, the versions' calls

enum { X = 0, X1, Y, DY, DX, DX1, NBUF };
enum { V_CUDNN = 0, V_REG, V_RING, V_PERSIST, N_VERSIONS };   /* ours: V_REG + bn_nhwc_impl_t */
enum { P_STATS = 0, P_FWD, P_BWD, N_PASSES };
static const char *const VERSION_NAMES[N_VERSIONS] = {"cudnn", "reg", "ring", "persist"};
static const char *const PASS_NAMES[N_PASSES] = {"stats", "fwd", "bwd"};

typedef struct {
    gpu_t *g;
    dtype_t t;
    long long m;
    int c, fuse, sets;
    size_t n, bytes;           /* elements and bytes of one activation */
    void *buf[NBUF];           /* sets * bytes each: set k's tensor at + k * bytes */
    float *w, *dw, *state;     /* gamma|beta, their gradients, running mean|var (shared by the sets) */
    bn_nhwc_t k;               /* ours */
    layer_t *layers;           /* cuDNN's: one bn layer per set */
} rig_t;

static void *at(const rig_t *r, int b, int set) { return (char *)r->buf[b] + (size_t)set * r->bytes; }

static void rig_init(rig_t *r, gpu_t *g, dtype_t t, int h, int c, int fuse) {
    memset(r, 0, sizeof *r);
    r->g = g;
    r->t = t;
    r->m = 256LL * h * h;
    r->c = c;
    r->fuse = fuse;
    r->n = (size_t)r->m * c;
    r->bytes = r->n * dtype_size(t);
    size_t per_set = (fuse == BN_FUSE_ADD_RELU ? 6 : 4) * r->bytes;
    r->sets = (int)((ROTATE_BYTES + per_set - 1) / per_set);
    if (r->sets < 2) r->sets = 2;
    for (int b = 0; b < NBUF; b++) {
        CHECK_ALLOC(cudaMalloc(&r->buf[b], (size_t)r->sets * r->bytes));
        /* x off centre (mean ~1), so that the statistics' shift matters */
        gpu_fill_uniform(g, r->buf[b], t, (size_t)r->sets * r->n, 100u + (unsigned)b, -1.0f, b == X ? 3.0f : 1.0f);
    }
    CHECK_ALLOC(cudaMalloc((void **)&r->w, 6 * (size_t)c * sizeof(float)));
    r->dw = r->w + 2 * c;
    r->state = r->w + 4 * c;
    gpu_fill_uniform(g, r->w, DTYPE_FP32, c, 7u, 0.5f, 1.5f);
    gpu_fill_uniform(g, r->w + c, DTYPE_FP32, c, 8u, -0.5f, 0.5f);
    gpu_fill_uniform(g, r->state, DTYPE_FP32, 2 * (size_t)c, 9u, 0.5f, 1.5f);
    bn_nhwc_init(&r->k, r->m, c, t, fuse, g->device, g->stream);
    r->layers = (layer_t *)calloc((size_t)r->sets, sizeof(layer_t));
    if (!r->layers) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    g->bn = GPU_BN_CUDNN;
    for (int s = 0; s < r->sets; s++) {
        layer_t *l = &r->layers[s];
        l->ops = &layer_bn_ops;
        l->cfg.fuse = fuse;
        snprintf(l->label, sizeof l->label, "bench");
        l->n_in = fuse == BN_FUSE_ADD_RELU ? 2 : 1;
        shape_t in = {256, h, h, c};
        l->in_shape[0] = l->in_shape[1] = l->out_shape = in;
        l->dtype = t;
        l->x[0] = at(r, X, s);
        l->x[1] = l->n_in == 2 ? at(r, X1, s) : NULL;
        l->y = at(r, Y, s);
        l->dy = at(r, DY, s);
        l->dx[0] = at(r, DX, s);
        l->dx[1] = l->n_in == 2 ? at(r, DX1, s) : NULL;
        l->w = r->w;
        l->dw = r->dw;
        l->state = r->state;
        l->n_params = l->n_state = 2 * (size_t)c;
        l->ops->setup(l, g);
    }
}

static void rig_free(rig_t *r) {
    for (int s = 0; s < r->sets; s++) r->layers[s].ops->destroy(&r->layers[s]);
    free(r->layers);
    bn_nhwc_free(&r->k);
    for (int b = 0; b < NBUF; b++) CHECK_CUDA(cudaFree(r->buf[b]));
    CHECK_CUDA(cudaFree(r->w));
}

/* One call of version v's pass p on buffer set s. */
static void call(rig_t *r, int v, int p, int s) {
    const int c = r->c, add = r->fuse == BN_FUSE_ADD_RELU;
    if (v == V_CUDNN) {
        layer_t *l = &r->layers[s];
        if (p == P_BWD) l->ops->backward(l, r->g, 0.0f);
        else l->ops->forward(l, r->g, 1);
        return;
    }
    bn_nhwc_set_impl(&r->k, 0, v - V_REG);
    bn_nhwc_set_impl(&r->k, 1, v - V_REG);
    if (p == P_STATS)
        bn_nhwc_forward_stats(&r->k, at(r, X, s), r->w, r->w + c, NULL, r->state, r->state + c, 1e-5, 0.1,
                              r->g->stream);
    else if (p == P_FWD)
        bn_nhwc_forward(&r->k, at(r, X, s), add ? at(r, X1, s) : NULL, at(r, Y, s), r->w, r->w + c, NULL, r->state,
                        r->state + c, 1e-5, 0.1, r->g->stream);
    else
        bn_nhwc_backward(&r->k, at(r, X, s), at(r, Y, s), at(r, DY, s), at(r, DX, s), 0.0f,
                         add ? at(r, DX1, s) : NULL, 0.0f, r->w, r->dw, r->dw + c, NULL, 0.0f, r->g->stream);
}

/* Bytes version v's pass p moves (what the header prints), and the least any implementation must. */
static double bytes_moved(const rig_t *r, int v, int p) {
    const double a = (double)r->bytes, add = r->fuse == BN_FUSE_ADD_RELU;
    const double bits = r->k.bits ? (double)r->n / 8.0 : 0.0, mask = add ? (bits ? bits : a) : 0.0;
    if (p == P_STATS) return a;
    const int two = v == V_REG || v == V_RING;
    if (p == P_FWD) return (two ? 2 : 1) * a + add * a + a + bits;
    if (!two) return 2 * a + mask + a + add * a;
    /* with the add (dx1 overwritten): dx1 written in the reduction, read back by the element-wise pass */
    return add ? 2 * a + mask + a + 3 * a : 5 * a;
}
static double bytes_must(const rig_t *r, int p) {
    const double a = (double)r->bytes, add = r->fuse == BN_FUSE_ADD_RELU;
    if (p == P_STATS) return a;
    if (p == P_FWD) return 2 * a + add * a;
    return 3 * a + add * (a + (double)r->n / 8.0);   /* the add: dx1 out, and a 1-bit mask in */
}

typedef struct { float med, lo, hi; } timing_t;

static int cmpf(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Single calls of fn(r, v, p, set), each on the next set (hot: always set 0), queued behind a held stream and timed
 * between events: median, min and max microseconds of reps. */
static timing_t time_calls(rig_t *r, int v, int p, int reps, int hot) {
    cudaEvent_t ev[2 * MAX_REPS];
    float us[MAX_REPS];
    for (int i = 0; i < 2 * reps; i++) CHECK_CUDA(cudaEventCreate(&ev[i]));
    for (int i = 0; i < WARM; i++) call(r, v, p, hot ? 0 : i % r->sets);
    if (p == P_BWD) call(r, v, P_FWD, 0);   /* the statistics and the mask a backward reads */
    gpu_hold_stream(r->g->stream, 2000000LL);
    for (int i = 0; i < reps; i++) {
        CHECK_CUDA(cudaEventRecord(ev[2 * i], r->g->stream));
        call(r, v, p, hot ? 0 : (i + 1) % r->sets);
        CHECK_CUDA(cudaEventRecord(ev[2 * i + 1], r->g->stream));
    }
    CHECK_CUDA(cudaStreamSynchronize(r->g->stream));
    for (int i = 0; i < reps; i++) {
        CHECK_CUDA(cudaEventElapsedTime(&us[i], ev[2 * i], ev[2 * i + 1]));
        us[i] *= 1e3f;
    }
    for (int i = 0; i < 2 * reps; i++) CHECK_CUDA(cudaEventDestroy(ev[i]));
    qsort(us, (size_t)reps, sizeof(float), cmpf);
    timing_t t = {us[reps / 2], us[0], us[reps - 1]};
    return t;
}

/* GB/s of a read-only pass (copy 0) or a copy (1) of one activation, rotating over the sets. */
static double ceiling(rig_t *r, int copy, int reps) {
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    size_t nv = r->bytes / 16;
    float best = INFINITY;
    for (int i = 0; i < WARM + reps; i++) {
        const int s = i % r->sets;
        CHECK_CUDA(cudaEventRecord(e0, r->g->stream));
        if (copy) copy_kernel<<<132 * 8, 256, 0, r->g->stream>>>((const uint4 *)at(r, X, s), (uint4 *)at(r, Y, s), nv);
        else read_kernel<<<132 * 8, 256, 0, r->g->stream>>>((const uint4 *)at(r, X, s), nv, (unsigned *)r->dw);
        CHECK_LAUNCH();
        CHECK_CUDA(cudaEventRecord(e1, r->g->stream));
        CHECK_CUDA(cudaEventSynchronize(e1));
        float ms;
        CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= WARM && ms < best) best = ms;
    }
    CHECK_CUDA(cudaEventDestroy(e0));
    CHECK_CUDA(cudaEventDestroy(e1));
    return (copy ? 2.0 : 1.0) * (double)r->bytes / (best * 1e-3) / 1e9;
}

// ------------------------------------------------------------------------------------------------------------------
// the CPU double reference: per-channel statistics and gradients, and y, dx at sampled elements

typedef struct {
    double *mean, *invstd, *dgamma, *dbeta;   /* c each */
    size_t idx[SAMPLES];
    double y[SAMPLES], dx[SAMPLES], dx1[SAMPLES];
    int kink[SAMPLES];                        /* pre-activation within rounding of 0: not compared */
} ref_t;

static float *host_of(rig_t *r, int b, float *scratch_dev) {
    float *h = (float *)malloc(r->n * sizeof(float));
    if (!h) check_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    dtype_dispatch<widen_t>(r->t, (const void *)at(r, b, 0), scratch_dev, r->n, r->g->stream);
    CHECK_CUDA(cudaMemcpyAsync(h, scratch_dev, r->n * sizeof(float), cudaMemcpyDeviceToHost, r->g->stream));
    CHECK_CUDA(cudaStreamSynchronize(r->g->stream));
    return h;
}

static void reference(rig_t *r, ref_t *f) {
    const size_t c = (size_t)r->c, m = (size_t)r->m;
    float *dev, gb[2 * 4096];
    CHECK_ALLOC(cudaMalloc((void **)&dev, r->n * sizeof(float)));
    float *x = host_of(r, X, dev), *dy = host_of(r, DY, dev);
    float *x1 = r->fuse == BN_FUSE_ADD_RELU ? host_of(r, X1, dev) : NULL;
    CHECK_CUDA(cudaFree(dev));
    CHECK_CUDA(cudaMemcpy(gb, r->w, 2 * c * sizeof(float), cudaMemcpyDeviceToHost));
    double *s = (double *)calloc(6 * c, sizeof(double));
    f->mean = s; f->invstd = s + c; f->dgamma = s + 2 * c; f->dbeta = s + 3 * c;
    double *sd = s + 4 * c, *sdx = s + 5 * c;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < c; j++) f->mean[j] += x[i * c + j];
    for (size_t j = 0; j < c; j++) f->mean[j] /= (double)m;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < c; j++) {
            double d = x[i * c + j] - f->mean[j];
            f->invstd[j] += d * d;
        }
    for (size_t j = 0; j < c; j++) f->invstd[j] = 1.0 / sqrt(f->invstd[j] / (double)m + 1e-5);
    for (size_t i = 0; i < m; i++)   /* dpre = dy masked by the pre-activation; dbeta = sum dpre, dgamma = sum dpre xhat */
        for (size_t j = 0; j < c; j++) {
            size_t e = i * c + j;
            double xh = (x[e] - f->mean[j]) * f->invstd[j], pre = gb[j] * xh + gb[c + j] + (x1 ? x1[e] : 0.0);
            double d = r->fuse != BN_FUSE_NONE && pre <= 0.0 ? 0.0 : dy[e];
            sd[j] += d;
            sdx[j] += d * xh;
        }
    for (size_t j = 0; j < c; j++) { f->dbeta[j] = sd[j]; f->dgamma[j] = sdx[j]; }
    unsigned long long h = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < SAMPLES; k++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        size_t e = (size_t)(h >> 11) % r->n, j = e % c;
        double xh = (x[e] - f->mean[j]) * f->invstd[j], pre = gb[j] * xh + gb[c + j] + (x1 ? x1[e] : 0.0);
        double on = r->fuse == BN_FUSE_NONE || pre > 0.0;
        f->idx[k] = e;
        f->kink[k] = r->fuse != BN_FUSE_NONE && fabs(pre) < 1e-2;
        f->y[k] = r->fuse == BN_FUSE_NONE ? pre : on ? pre : 0.0;
        double d = on ? dy[e] : 0.0;
        f->dx[k] = gb[j] * f->invstd[j] * (d - f->dbeta[j] / m - xh * f->dgamma[j] / m);
        f->dx1[k] = d;
    }
    free(x); free(dy); free(x1);
}

/* Relative L2 error of got against ref (n doubles), skipping where skip[i]. */
static double rel_l2(const float *got, const double *ref, size_t n, const int *skip) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (skip && skip[i]) continue;
        num += (got[i] - ref[i]) * (got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* One forward and backward of version v on set 0 against the reference: the worst relative L2 error of the saved
 * statistics, dgamma, dbeta, y and dx (and dx1) samples. */
static double check_version(rig_t *r, const ref_t *f, int v) {
    const size_t c = (size_t)r->c;
    call(r, v, P_FWD, 0);
    call(r, v, P_BWD, 0);
    CHECK_CUDA(cudaStreamSynchronize(r->g->stream));
    float *h = (float *)malloc((4 * c + 3 * SAMPLES) * sizeof(float)), *dev;
    const float *saved = v == V_CUDNN ? layer_bn_saved(&r->layers[0]) : bn_nhwc_saved(&r->k);
    CHECK_CUDA(cudaMemcpy(h, saved, 2 * c * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(h + 2 * c, r->dw, 2 * c * sizeof(float), cudaMemcpyDeviceToHost));
    float *ys = h + 4 * c, *dxs = ys + SAMPLES, *dx1s = dxs + SAMPLES;
    CHECK_ALLOC(cudaMalloc((void **)&dev, r->n * sizeof(float)));
    const int bufs[3] = {Y, DX, DX1};
    float *outs[3] = {ys, dxs, dx1s};
    for (int b = 0; b < (r->fuse == BN_FUSE_ADD_RELU ? 3 : 2); b++) {
        float *all = host_of(r, bufs[b], dev);
        for (int k = 0; k < SAMPLES; k++) outs[b][k] = all[f->idx[k]];
        free(all);
    }
    CHECK_CUDA(cudaFree(dev));
    double e[7] = {rel_l2(h, f->mean, c, NULL), rel_l2(h + c, f->invstd, c, NULL),
                   rel_l2(h + 2 * c, f->dgamma, c, NULL), rel_l2(h + 3 * c, f->dbeta, c, NULL),
                   rel_l2(ys, f->y, SAMPLES, f->kink), rel_l2(dxs, f->dx, SAMPLES, f->kink),
                   r->fuse == BN_FUSE_ADD_RELU ? rel_l2(dx1s, f->dx1, SAMPLES, f->kink) : 0.0};
    double worst = 0.0;
    for (int i = 0; i < 7; i++) worst = e[i] > worst || e[i] != e[i] ? e[i] : worst;
    free(h);
    return worst;
}

// ------------------------------------------------------------------------------------------------------------------
// main: per shape the bound, then every version; the summary last

typedef struct {
    char shape[24], fuse[9];
    int count;
    double floor_us[N_PASSES], t[N_VERSIONS][N_PASSES][2], gbs_stats, gbs_bwd;   /* the last two: the ring's, cold */
} row_t;

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *net = "resnet50", *type = "bf16";
    int reps = 20, check = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-check")) check = 0;
        else if (!strcmp(argv[i], "resnet50") || !strcmp(argv[i], "resnet18")) net = argv[i];
        else if (!strcmp(argv[i], "bf16") || !strcmp(argv[i], "fp32") || !strcmp(argv[i], "fp16")) type = argv[i];
        else { fprintf(stderr, "usage: bn_bench [resnet50|resnet18] [bf16|fp32|fp16] [--reps N] [--no-check]\n"); return 2; }
    }
    if (reps < 3 || reps > MAX_REPS) { fprintf(stderr, "bn_bench: --reps between 3 and %d\n", MAX_REPS); return 2; }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) { printf("bn_bench: no CUDA device\n"); return 77; }
    const dtype_t t = !strcmp(type, "fp32") ? DTYPE_FP32 : !strcmp(type, "fp16") ? DTYPE_FP16 : DTYPE_BF16;
    const shape_t_ *shapes = !strcmp(net, "resnet18") ? RESNET18 : RESNET50;
    gpu_t g;
    gpu_init(&g, 0, t == DTYPE_FP32 ? MATH_TF32 : MATH_BF16);
    gpu_workspace_reserve(&g, (size_t)256 << 20);   /* before setup: cuDNN's probe sizes its paths against it */
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("# bn_bench %s %s on %s (%d SMs, L2 %d MB), cuDNN %zu, batch 256; median [min, max] of %d single calls "
           "after %d, cold: each on the next of >= %zu MB of buffer sets, hot: the same set\n",
           net, type, prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, cudnnGetVersion(), reps, WARM,
           ROTATE_BYTES >> 20);
    printf("# bytes: stats reads x; two-pass fwd reads x twice (+ x1) and writes y (+ mask bits); persistent fwd\n"
           "# reads x once; two-pass bwd reads x and dy twice (+ mask) and writes dx (with the add: dx1 written by\n"
           "# the reduction and read back); persistent bwd reads x, dy (+ mask) once. must: the least any version\n"
           "# moves; floor: must / the copy's GB/s. GB/s of a version: its own bytes / its median time.\n");
    row_t rows[64];
    int nrows = 0, bad = 0;
    for (int si = 0; shapes[si].h; si++)
        for (int fuse = BN_FUSE_NONE; fuse <= BN_FUSE_ADD_RELU; fuse++) {
            const shape_t_ *sh = &shapes[si];
            const int count = fuse == BN_FUSE_NONE ? sh->none : fuse == BN_FUSE_RELU ? sh->relu : sh->add;
            if (!count) continue;
            rig_t r;
            rig_init(&r, &g, t, sh->h, sh->c, fuse);
            row_t *w = &rows[nrows++];
            memset(w, 0, sizeof *w);
            snprintf(w->shape, sizeof w->shape, "256x%dx%dx%d", sh->h, sh->h, sh->c);
            snprintf(w->fuse, sizeof w->fuse, "%s", fuse == BN_FUSE_NONE ? "none" : fuse == BN_FUSE_RELU ? "relu" : "add+relu");
            w->count = count;
            const double rd = ceiling(&r, 0, reps), cp = ceiling(&r, 1, reps);
            printf("\n## %s %s (x%d): %.1f MB an activation, %d buffer sets; read %.0f GB/s, copy %.0f GB/s; persistent "
                   "stash %d/%d rows a thread%s\n", w->shape, w->fuse, count, r.bytes / 1e6, r.sets, rd, cp,
                   r.k.stash[0], r.k.stash[1], bn_nhwc_impl_ok(&r.k, BN_NHWC_PERSIST) ? "" : " (not eligible)");
            for (int p = 0; p < N_PASSES; p++) {
                w->floor_us[p] = bytes_must(&r, p) / ((p == P_STATS ? rd : cp) * 1e3);
                printf("#   %-5s must move %8.1f MB: floor %7.1f us\n", PASS_NAMES[p], bytes_must(&r, p) / 1e6,
                       w->floor_us[p]);
            }
            ref_t f;
            if (check) reference(&r, &f);
            printf("%-8s %-5s %10s %21s %8s %10s %8s %7s %9s\n", "version", "pass", "cold_us", "[min, max]", "GB/s",
                   "hot_us", "hot_GB/s", "floor", "check");
            for (int v = 0; v < N_VERSIONS; v++) {
                if (v == V_PERSIST && !bn_nhwc_impl_ok(&r.k, BN_NHWC_PERSIST)) continue;
                double err = check ? check_version(&r, &f, v) : 0.0;
                const double tol = t == DTYPE_FP32 ? 1e-3 : t == DTYPE_FP16 ? 4e-3 : 2e-2;
                bad += check && !(err <= tol);
                for (int p = 0; p < N_PASSES; p++) {
                    if (p == P_STATS && (v == V_CUDNN || v == V_PERSIST)) continue;   /* no separate pass */
                    timing_t c = time_calls(&r, v, p, reps, 0), h = time_calls(&r, v, p, reps, 1);
                    const double b = bytes_moved(&r, v, p);
                    w->t[v][p][0] = c.med;
                    w->t[v][p][1] = h.med;
                    if (v == V_RING && p == P_STATS) w->gbs_stats = b / c.med / 1e3;
                    if (v == V_RING && p == P_BWD) w->gbs_bwd = b / c.med / 1e3;
                    char err_s[24] = "-";
                    if (check && p == P_BWD) snprintf(err_s, sizeof err_s, "%.1e%s", err, err <= tol ? "" : " FAIL");
                    printf("%-8s %-5s %10.1f [%8.1f, %8.1f] %8.0f %10.1f %8.0f %6.2fx %9s\n", VERSION_NAMES[v],
                           PASS_NAMES[p], c.med, c.lo, c.hi, v == V_CUDNN ? bytes_must(&r, p) / c.med / 1e3 : b / c.med / 1e3,
                           h.med, v == V_CUDNN ? bytes_must(&r, p) / h.med / 1e3 : b / h.med / 1e3,
                           c.med / w->floor_us[p], err_s);
                }
            }
            if (check) free(f.mean);
            rig_free(&r);
        }
    /* The summary: per shape the cold microseconds of every version's forward + backward, the best, and the floor. */
    printf("\n# summary (%s %s, cold us, forward + backward; stats and bwd GB/s of ring; x count in the net)\n", net, type);
    printf("%-16s %-9s %3s %9s %9s %9s %9s %9s %9s %9s %9s\n", "shape", "fuse", "n", "cudnn", "reg", "ring", "persist",
           "floor", "ring/flr", "stats_GBs", "bwd_GBs");
    double tot[N_VERSIONS + 2] = {0};
    for (int i = 0; i < nrows; i++) {
        const row_t *w = &rows[i];
        double fb[N_VERSIONS], best = INFINITY;
        for (int v = 0; v < N_VERSIONS; v++) {
            fb[v] = w->t[v][P_FWD][0] > 0 ? w->t[v][P_FWD][0] + w->t[v][P_BWD][0] : NAN;
            if (fb[v] < best) best = fb[v];
            tot[v] += fb[v] == fb[v] ? w->count * fb[v] : 0.0;
        }
        const double flr = w->floor_us[P_FWD] + w->floor_us[P_BWD];
        tot[N_VERSIONS] += w->count * best;
        tot[N_VERSIONS + 1] += w->count * flr;
        printf("%-16s %-9s %3d %9.1f %9.1f %9.1f %9.1f %9.1f %8.2fx %9.0f %9.0f\n", w->shape, w->fuse, w->count, fb[0], fb[1],
               fb[2], fb[3], flr, fb[2] / flr, w->gbs_stats, w->gbs_bwd);
    }
    printf("# %s's batch norms, forward + backward, ms a step: cudnn %.2f, reg %.2f, ring %.2f, persist (where "
           "eligible) %.2f, best of all %.2f, floor %.2f\n", net, tot[0] / 1e3, tot[1] / 1e3, tot[2] / 1e3, tot[3] / 1e3,
           tot[N_VERSIONS] / 1e3, tot[N_VERSIONS + 1] / 1e3);
    printf("# %s\n", bad ? "FAILED: a version's results differ from the reference" : "all versions match the reference");
    gpu_free(&g);
    return bad ? 1 : 0;
}
