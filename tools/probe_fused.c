/* probe_fused.c — do cuDNN's fused convolution + batch-norm engines run ResNet-50's forward convolutions faster than
 * the separate passes the engine runs? The fused pattern (cuDNN's ConvBNfprop): the previous batch norm's scale, bias
 * and ReLU in the convolution's prologue, the next batch norm's statistics (per-channel sum and sum of squares) in its
 * epilogue, fp16 (its type on Hopper), against: our batch-norm apply pass over x, the convolution alone (the best
 * backend config, engine/layers/conv_be.c) and our statistics pass over y (engine/layers/bn_nhwc.h). Batch 256.
 *
 *   build/probe_fused [--iters N] [--max-cfgs N]
 *
 * Per shape: each declared variant of the fused graph (the types of its virtual intermediates) says whether cuDNN
 * builds it, how many engine configs heuristics A, B and fallback offer, how many plans finalize, and the fastest's
 * time (engines that compile at run time are left out: seconds a plan); then the separate passes' times and their
 * sum. A table comes last. Measurement only: what wins is wired into
 * the engine afterwards. Exit 2 on bad arguments, 77 without a GPU. */
#include <cudnn.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/check.h"
#include "engine/gpu.h"
#include "engine/layer.h"
#include "engine/layers/bn_nhwc.h"
#include "engine/layers/conv_be.h"

#define OK(call) ((call) == CUDNN_STATUS_SUCCESS)
#define MAX_PARTS 64
#define MAX_CFGS 32

// ------------------------------------------------------------------------------------------------------------------
// descriptors kept together and destroyed in reverse

typedef struct { cudnnBackendDescriptor_t d[MAX_PARTS]; int n; } parts_t;

static cudnnBackendDescriptor_t part(parts_t *p, cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = NULL;
    if (p->n == MAX_PARTS || !OK(cudnnBackendCreateDescriptor(type, &d))) return NULL;
    p->d[p->n++] = d;
    return d;
}
static void parts_free(parts_t *p) {
    for (int i = p->n - 1; i >= 0; i--) cudnnBackendDestroyDescriptor(p->d[i]);
    p->n = 0;
}

/* An NHWC tensor (n, c, h, w) of type dt; virt: an intermediate no pointer backs. */
static cudnnBackendDescriptor_t tensor(parts_t *p, int64_t uid, cudnnDataType_t dt, int64_t n, int64_t c, int64_t h,
                                       int64_t w, int virt) {
    int64_t dims[4] = {n, c, h, w}, strides[4] = {h * w * c, 1, w * c, c}, align = 16;
    bool v = virt != 0;
    cudnnBackendDescriptor_t t = part(p, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int ok = t && OK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt))
        && OK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims))
        && OK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides))
        && OK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid))
        && OK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align))
        && OK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v))
        && OK(cudnnBackendFinalize(t));
    return ok ? t : NULL;
}

/* A pointwise operation y = mode(x[, b]) in fp32 math. */
static cudnnBackendDescriptor_t pointwise(parts_t *p, cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x,
                                          cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y) {
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t pw = part(p, CUDNN_BACKEND_POINTWISE_DESCRIPTOR), op;
    int ok = pw && x && y && OK(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode))
        && OK(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec))
        && OK(cudnnBackendFinalize(pw))
        && (op = part(p, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw))
        && OK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x))
        && (!b || OK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b)))
        && OK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y))
        && OK(cudnnBackendFinalize(op));
    return ok ? op : NULL;
}

// ------------------------------------------------------------------------------------------------------------------
// the fused graph: y = conv(relu(x * scale + bias), w); sum, sqsum = per-channel statistics of y

enum { UID_X = 1, UID_SCALE, UID_BIAS, UID_W, UID_Y, UID_SUM, UID_SQSUM, UID_T1, UID_T2, UID_T3, N_REAL = 7 };

typedef struct { int n, h, w, c, k, r, stride, pad, oh, ow; } shape_t_;

/* mid: the type of the virtual tensors after the scale and the bias; act: after the ReLU (the convolution's input). */
static cudnnBackendDescriptor_t fused_graph(cudnnHandle_t h, const shape_t_ *s, cudnnDataType_t mid,
                                            cudnnDataType_t act, parts_t *p) {
    const cudnnDataType_t half = CUDNN_DATA_HALF, f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t x = tensor(p, UID_X, half, s->n, s->c, s->h, s->w, 0),
                             sc = tensor(p, UID_SCALE, half, 1, s->c, 1, 1, 0),
                             bi = tensor(p, UID_BIAS, half, 1, s->c, 1, 1, 0),
                             t1 = tensor(p, UID_T1, mid, s->n, s->c, s->h, s->w, 1),
                             t2 = tensor(p, UID_T2, mid, s->n, s->c, s->h, s->w, 1),
                             t3 = tensor(p, UID_T3, act, s->n, s->c, s->h, s->w, 1),
                             w = tensor(p, UID_W, half, s->k, s->c, s->r, s->r, 0),
                             y = tensor(p, UID_Y, half, s->n, s->k, s->oh, s->ow, 0),
                             sum = tensor(p, UID_SUM, f32, 1, s->k, 1, 1, 0),
                             sq = tensor(p, UID_SQSUM, f32, 1, s->k, 1, 1, 0);
    cudnnBackendDescriptor_t ops[5] = {pointwise(p, CUDNN_POINTWISE_MUL, x, sc, t1),
                                       pointwise(p, CUDNN_POINTWISE_ADD, t1, bi, t2),
                                       pointwise(p, CUDNN_POINTWISE_RELU_FWD, t2, NULL, t3), NULL, NULL};
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnGenStatsMode_t gm = CUDNN_GENSTATS_SUM_SQSUM;
    int64_t dims = 2, pad[2] = {s->pad, s->pad}, stride[2] = {s->stride, s->stride}, dil[2] = {1, 1};
    float alpha = 1.0f, beta = 0.0f;
    cudnnBackendDescriptor_t conv = part(p, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR), graph = NULL;
    int ok = x && sc && bi && t1 && t2 && t3 && w && y && sum && sq && ops[0] && ops[1] && ops[2] && conv
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride))
        && OK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil))
        && OK(cudnnBackendFinalize(conv))
        && (ops[3] = part(p, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(ops[3], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t3))
        && OK(cudnnBackendSetAttribute(ops[3], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w))
        && OK(cudnnBackendSetAttribute(ops[3], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y))
        && OK(cudnnBackendSetAttribute(ops[3], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv))
        && OK(cudnnBackendSetAttribute(ops[3], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha))
        && OK(cudnnBackendSetAttribute(ops[3], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta))
        && OK(cudnnBackendFinalize(ops[3]))
        && (ops[4] = part(p, CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(ops[4], CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, 1, &gm))
        && OK(cudnnBackendSetAttribute(ops[4], CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f32))
        && OK(cudnnBackendSetAttribute(ops[4], CUDNN_ATTR_OPERATION_GENSTATS_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y))
        && OK(cudnnBackendSetAttribute(ops[4], CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &sum))
        && OK(cudnnBackendSetAttribute(ops[4], CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &sq))
        && OK(cudnnBackendFinalize(ops[4]))
        && (graph = part(p, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)) != NULL
        && OK(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h))
        && OK(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 5, ops))
        && OK(cudnnBackendFinalize(graph));
    return ok ? graph : NULL;
}

// ------------------------------------------------------------------------------------------------------------------
// timing

typedef struct { cudnnHandle_t h; cudnnBackendDescriptor_t plan, pack; } fused_call_t;

/* Median microseconds of iters calls of fn(ctx), queued behind a held stream (GPU time, not enqueue time). */
static double time_us(cudaStream_t s, int iters, void (*fn)(void *), void *ctx) {
    cudaEvent_t ev[65];
    float ms[64];
    if (iters > 64) iters = 64;
    for (int i = 0; i <= iters; i++) CHECK_CUDA(cudaEventCreate(&ev[i]));
    for (int i = 0; i < 3; i++) fn(ctx);
    gpu_hold_stream(s, 2000000LL);
    for (int i = 0; i < iters; i++) {
        CHECK_CUDA(cudaEventRecord(ev[i], s));
        fn(ctx);
    }
    CHECK_CUDA(cudaEventRecord(ev[iters], s));
    CHECK_CUDA(cudaEventSynchronize(ev[iters]));
    for (int i = 0; i < iters; i++) CHECK_CUDA(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
    for (int i = 0; i <= iters; i++) CHECK_CUDA(cudaEventDestroy(ev[i]));
    for (int i = 1; i < iters; i++)
        for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) { float t = ms[j]; ms[j] = ms[j - 1]; ms[j - 1] = t; }
    return 1e3 * ms[iters / 2];
}

/* 1 where config c's engine compiles at run time (seconds a plan: left out, and counted). */
static int runtime_compiled(cudnnBackendDescriptor_t c) {
    cudnnBackendDescriptor_t eng = NULL;
    cudnnBackendBehaviorNote_t bn[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    int64_t got = 0, n = 0;
    int rtc = 0;
    if (!OK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng))) return 0;
    if (OK(cudnnBackendGetAttribute(c, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &eng)) &&
        OK(cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                    CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n, bn)))
        for (int64_t i = 0; i < n; i++) rtc |= bn[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    cudnnBackendDestroyDescriptor(eng);
    return rtc;
}

static void fused_run(void *ctx) {
    fused_call_t *f = (fused_call_t *)ctx;
    CHECK_CUDNN(cudnnBackendExecute(f->h, f->plan, f->pack));
}

/* The fused graph's engine configs from heuristics A, B and fallback: each that finalizes into a plan within the
 * workspace is run and timed; returns the fastest (us, INFINITY if none), counts into *cfgs and *plans. */
static double fused_best(cudnnHandle_t h, cudaStream_t st, cudnnBackendDescriptor_t graph, void *const *ptrs, void *ws,
                         size_t ws_cap, int max, int iters, int *cfgs, int *plans, int *rtc, long long *engine) {
    static const cudnnBackendHeurMode_t MODES[3] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_B, CUDNN_HEUR_MODE_FALLBACK};
    double best = INFINITY;
    *cfgs = *plans = *rtc = 0;
    for (int m = 0; m < 3; m++) {
        parts_t p = {0};
        cudnnBackendDescriptor_t heur = part(&p, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR), c[MAX_CFGS];
        int64_t count = 0;
        int made = 0;
        int ok = heur && OK(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph))
            && OK(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &MODES[m]))
            && OK(cudnnBackendFinalize(heur));
        for (; ok && made < max && made < MAX_CFGS; made++)
            ok = (c[made] = part(&p, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)) != NULL;
        if (made && OK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                                made, &count, c)))
            for (int64_t i = 0; i < count && i < made; i++) {
                parts_t q = {0};
                cudnnBackendDescriptor_t plan = part(&q, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR), pack = NULL;
                int64_t wsz = -1, uids[N_REAL] = {UID_X, UID_SCALE, UID_BIAS, UID_W, UID_Y, UID_SUM, UID_SQSUM};
                (*cfgs)++;
                if (runtime_compiled(c[i])) {
                    (*rtc)++;
                    parts_free(&q);
                    continue;
                }
                int good = plan && OK(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h))
                    && OK(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c[i]))
                    && OK(cudnnBackendFinalize(plan))
                    && OK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                                   NULL, &wsz)) && wsz >= 0 && (size_t)wsz <= ws_cap
                    && (pack = part(&q, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)) != NULL
                    && OK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, N_REAL, uids))
                    && OK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                                                   N_REAL, (void *)ptrs))
                    && OK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws))
                    && OK(cudnnBackendFinalize(pack))
                    && OK(cudnnBackendExecute(h, plan, pack)) && cudaStreamSynchronize(st) == cudaSuccess;
                if (good) {
                    (*plans)++;
                    fused_call_t f = {h, plan, pack};
                    double t = time_us(st, iters, fused_run, &f);
                    if (t < best) {
                        best = t;
                        cudnnBackendDescriptor_t eng = NULL;
                        int64_t got = 0, idx = -1;
                        if (OK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng))) {
                            if (OK(cudnnBackendGetAttribute(c[i], CUDNN_ATTR_ENGINECFG_ENGINE,
                                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &eng)))
                                cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                                         &got, &idx);
                            cudnnBackendDestroyDescriptor(eng);
                        }
                        *engine = (long long)idx;
                    }
                }
                (void)cudaGetLastError();
                parts_free(&q);
            }
        parts_free(&p);
    }
    return best;
}

// ------------------------------------------------------------------------------------------------------------------
// the separate passes: the convolution alone (its best backend config), our batch norm's apply and statistics

typedef struct { cudnnHandle_t h; conv_be_plan_t *plan; const void *x, *w, *y; void *ws; } conv_call_t;
static void conv_run(void *ctx) {
    conv_call_t *c = (conv_call_t *)ctx;
    conv_be_run(c->h, c->plan, c->x, c->w, c->y, c->ws);
}

typedef struct { bn_nhwc_t *b; const void *x; void *y; float *w; int stats_only; cudaStream_t s; } bn_call_t;
static void bn_run(void *ctx) {
    bn_call_t *c = (bn_call_t *)ctx;
    const int ch = c->b->c;
    if (c->stats_only)
        bn_nhwc_forward_stats(c->b, c->x, c->w, c->w + ch, NULL, c->w + 2 * ch, c->w + 3 * ch, 1e-5, 0.1, c->s);
    else
        bn_nhwc_forward(c->b, c->x, NULL, c->y, c->w, c->w + ch, NULL, c->w + 2 * ch, c->w + 3 * ch, 1e-5, 0.1, c->s);
}

static double conv_best(gpu_t *g, const shape_t_ *s, const void *x, const void *w, const void *y, int max, int iters) {
    conv_be_shape_t cs = {s->n, s->h, s->w, s->c, s->k, s->r, s->r, s->stride, s->pad, s->oh, s->ow, CUDNN_DATA_HALF};
    conv_be_cfg_t cfg[16];
    int n = conv_be_candidates(g->cudnn, &cs, CONV_BE_FWD, max < 8 ? max : 8, cfg, 16);
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        conv_be_plan_t plan;
        if (conv_be_plan(g->cudnn, &cs, CONV_BE_FWD, 0.0f, &cfg[i], &plan) != 0) continue;
        if (plan.ws <= g->workspace_bytes) {
            conv_call_t c = {g->cudnn, &plan, x, w, y, g->workspace};
            double t = time_us(g->stream, iters, conv_run, &c);
            if (t < best) best = t;
        }
        conv_be_plan_free(&plan);
    }
    return best;
}

// ------------------------------------------------------------------------------------------------------------------

/* ResNet-50 v1.5's forward convolutions whose input is relu(bn(.)) and whose output feeds a batch norm: each stage's
 * 3x3 (conv2) and its last 1x1 (conv3), at batch 256. */
static const shape_t_ SHAPES[] = {
    {256, 56, 56, 64, 64, 3, 1, 1, 56, 56},    {256, 56, 56, 64, 256, 1, 1, 0, 56, 56},
    {256, 28, 28, 128, 128, 3, 1, 1, 28, 28},  {256, 28, 28, 128, 512, 1, 1, 0, 28, 28},
    {256, 14, 14, 256, 256, 3, 1, 1, 14, 14},  {256, 14, 14, 256, 1024, 1, 1, 0, 14, 14},
    {256, 7, 7, 512, 512, 3, 1, 1, 7, 7},      {256, 7, 7, 512, 2048, 1, 1, 0, 7, 7},
};
#define N_SHAPES ((int)(sizeof SHAPES / sizeof SHAPES[0]))

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int iters = 20, max = 16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-cfgs") && i + 1 < argc) max = atoi(argv[++i]);
        else { fprintf(stderr, "usage: probe_fused [--iters N] [--max-cfgs N]\n"); return 2; }
    }
    if (iters < 3 || iters > 64 || max < 1 || max > MAX_CFGS) {
        fprintf(stderr, "probe_fused: --iters 3..64, --max-cfgs 1..%d\n", MAX_CFGS);
        return 2;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) { printf("probe_fused: no CUDA device\n"); return 77; }
    gpu_t g;
    gpu_init(&g, 0, MATH_BF16);
    gpu_workspace_reserve(&g, (size_t)256 << 20);
    struct cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("# probe_fused on %s, cuDNN %zu: fp16, median of %d calls; fused = relu(x*scale+bias) -> conv -> sum, sqsum\n",
           prop.name, cudnnGetVersion(), iters);
    static const struct { cudnnDataType_t mid, act; const char *name; } VARIANTS[] = {
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, "mid fp32, act fp16"},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, "mid fp32, act fp32"},
        {CUDNN_DATA_HALF, CUDNN_DATA_HALF, "mid fp16, act fp16"},
    };
    double fused[N_SHAPES], sep[N_SHAPES][3];
    for (int si = 0; si < N_SHAPES; si++) {
        const shape_t_ *s = &SHAPES[si];
        const size_t nx = (size_t)s->n * s->h * s->w * s->c, ny = (size_t)s->n * s->oh * s->ow * s->k,
                     nw = (size_t)s->k * s->r * s->r * s->c;
        void *x, *y, *w, *sc, *bi;
        float *st, *pw;
        CHECK_CUDA(cudaMalloc(&x, nx * 2));
        CHECK_CUDA(cudaMalloc(&y, ny * 2));
        CHECK_CUDA(cudaMalloc(&w, nw * 2));
        CHECK_CUDA(cudaMalloc(&sc, (size_t)s->c * 2));
        CHECK_CUDA(cudaMalloc(&bi, (size_t)s->c * 2));
        CHECK_CUDA(cudaMalloc((void **)&st, 2 * (size_t)s->k * sizeof(float)));
        CHECK_CUDA(cudaMalloc((void **)&pw, 4 * (size_t)(s->c > s->k ? s->c : s->k) * sizeof(float)));
        gpu_fill_uniform(&g, x, DTYPE_FP16, nx, 1u, -1.0f, 1.0f);
        gpu_fill_uniform(&g, w, DTYPE_FP16, nw, 2u, -0.05f, 0.05f);
        gpu_fill_uniform(&g, sc, DTYPE_FP16, s->c, 3u, 0.5f, 1.5f);
        gpu_fill_uniform(&g, bi, DTYPE_FP16, s->c, 4u, -0.5f, 0.5f);
        gpu_fill_uniform(&g, pw, DTYPE_FP32, 4 * (size_t)(s->c > s->k ? s->c : s->k), 5u, 0.5f, 1.5f);
        printf("\n## %d x %dx%d x %d -> %d, %dx%d stride %d\n", s->n, s->h, s->w, s->c, s->k, s->r, s->r, s->stride);
        void *const ptrs[N_REAL] = {x, sc, bi, w, y, st, st + s->k};
        fused[si] = INFINITY;
        for (size_t v = 0; v < sizeof VARIANTS / sizeof VARIANTS[0]; v++) {
            parts_t p = {0};
            cudnnBackendDescriptor_t graph = fused_graph(g.cudnn, s, VARIANTS[v].mid, VARIANTS[v].act, &p);
            int cfgs = 0, plans = 0, rtc = 0;
            long long eng = -1;
            double t = graph ? fused_best(g.cudnn, g.stream, graph, ptrs, g.workspace, g.workspace_bytes, max, iters,
                                          &cfgs, &plans, &rtc, &eng)
                             : INFINITY;
            printf("  fused (%s): %s, %d configs (%d compiled at run time, left out), %d plans ran, best %.1f us "
                   "(engine %lld)\n", VARIANTS[v].name, graph ? "graph built" : "graph refused", cfgs, rtc, plans, t,
                   eng);
            if (t < fused[si]) fused[si] = t;
            parts_free(&p);
        }
        bn_nhwc_t bx, by;
        bn_nhwc_init(&bx, (long long)s->n * s->h * s->w, s->c, DTYPE_FP16, BN_FUSE_RELU, 0, g.stream);
        bn_nhwc_init(&by, (long long)s->n * s->oh * s->ow, s->k, DTYPE_FP16, BN_FUSE_NONE, 0, g.stream);
        bn_call_t fx = {&bx, x, x, pw, 0, g.stream}, sx = {&bx, x, NULL, pw, 1, g.stream}, sy = {&by, y, NULL, pw, 1, g.stream};
        /* the apply pass alone: a forward over x (in place is fine for timing) less its statistics pass */
        const double fwd_x = time_us(g.stream, iters, bn_run, &fx), stats_x = time_us(g.stream, iters, bn_run, &sx);
        sep[si][0] = fwd_x - stats_x;
        sep[si][1] = conv_best(&g, s, x, w, y, max, iters);
        sep[si][2] = time_us(g.stream, iters, bn_run, &sy);
        printf("  separate: apply %.1f us (forward %.1f less statistics %.1f), convolution %.1f us, statistics of y "
               "%.1f us: %.1f us\n", sep[si][0], fwd_x, stats_x, sep[si][1], sep[si][2],
               sep[si][0] + sep[si][1] + sep[si][2]);
        bn_nhwc_free(&bx);
        bn_nhwc_free(&by);
        void *bufs[7] = {x, y, w, sc, bi, st, pw};
        for (int i = 0; i < 7; i++) CHECK_CUDA(cudaFree(bufs[i]));
    }
    printf("\n# summary: us a call, fp16, batch 256 (fused/separate < 1: the fused engine wins)\n");
    printf("%-26s %10s %10s %10s %10s %10s %8s\n", "shape", "fused", "apply", "conv", "stats", "separate", "ratio");
    for (int si = 0; si < N_SHAPES; si++) {
        const shape_t_ *s = &SHAPES[si];
        char name[40];
        snprintf(name, sizeof name, "%dx%dx%d->%d %dx%d", s->h, s->w, s->c, s->k, s->r, s->r);
        const double total = sep[si][0] + sep[si][1] + sep[si][2];
        printf("%-26s %10.1f %10.1f %10.1f %10.1f %10.1f %8.2f\n", name, fused[si], sep[si][0], sep[si][1], sep[si][2],
               total, fused[si] / total);
    }
    gpu_free(&g);
    return 0;
}
