/* conv.cu — 2-D convolution (cross-correlation, square kernel, optional bias) on NHWC activations and
 * KRSC filters through cuDNN. Algorithms are timed once per shape (cudnnFind*Ex, then the backend API's engine configs,
 * conv_be.c), deterministic only, cached in gpu_t. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <stdint.h>
#include "cudnn_util.h"
#include "../convert.h"
#include "../launch.h"
#include "../timing.h"
#include "conv_direct.h"
#include "conv_gemm.h"
#include "conv_be.h"
#include "elem.cuh"

#define PERF_MAX 16   /* more than any cuDNN 9 algorithm count (fwd 8, bwd data 6, bwd filter 7) */

typedef struct {
    cudnnTensorDescriptor_t x_desc;     // (N, H, W, C)
    cudnnTensorDescriptor_t y_desc;     // (N, OH, OW, K)
    cudnnTensorDescriptor_t b_desc;     // (1, 1, 1, K), only with a bias
    cudnnFilterDescriptor_t w_desc;     // (K, R, S, C)
    /* One descriptor per direction: each direction's algorithm was timed with its own math type. */
    cudnnConvolutionDescriptor_t fwd_desc, bwd_data_desc, bwd_filter_desc;
    conv_algo_t algo;                   // this layer's copy of the cache entry
    int has_bwd_data;                   // 0 when dx[0] == NULL: nothing searched, nothing launched
    int strict;                         // fp32: every direction runs under FMA whatever the search reported
    void *dw_scratch;                   // 2-byte layers: cuDNN's filter gradient in their type, then added to dw
    int path;                           // CONV_CUDNN, CONV_DIRECT or CONV_GEMM (conv_path)
    float *direct_scratch;              // conv_direct.cu's filter-gradient partial sums
    conv_gemm_t gemm;                   // conv_gemm.cu's buffers
    /* Directions that run a backend engine config (algo.be[d].engine >= 0 and its plans built): the plan per
     * direction for an output blend of 0, and of 1 for the gradients that may accumulate (the data gradient of a
     * tensor read twice; fp32 filter gradients across micro-batches). */
    conv_be_plan_t be[3], be_acc[3];
} conv_priv_t;

/* One cudnn*AlgoPerf_t, whichever direction it came from. */
typedef struct {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
} perf_t;

#define PERF_COPY(dst, src, n) do { for (int i_ = 0; i_ < (n); i_++) { \
    (dst)[i_].algo = (int)(src)[i_].algo; (dst)[i_].status = (src)[i_].status; (dst)[i_].time = (src)[i_].time; \
    (dst)[i_].memory = (src)[i_].memory; (dst)[i_].determinism = (src)[i_].determinism; \
    (dst)[i_].math = (src)[i_].mathType; } } while (0)

static const char *math_name(int m) {
    switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_CONV";
    case CUDNN_FMA_MATH: return "FMA";
    default: return "?";
    }
}

static size_t conv_weight_count(const layer_t *l) {
    return (size_t)l->cfg.cout * l->cfg.k * l->cfg.k * l->in_shape[0].c;
}

/* cuDNN's 2-byte filter gradient, widened into dw after each backward (2-byte layers on cuDNN's path only). */
static size_t conv_dw_scratch_bytes(const layer_t *l, dtype_t t) { return conv_weight_count(l) * dtype_size(t); }

/* Who runs a convolution: cuDNN, or, for an input of few channels that needs no gradient, conv_direct.cu's kernels
 * (one channel, 3x3 or 5x5: the 28x28 models' stems) or conv_gemm.cu's im2col + cuBLAS (the 7x7 ImageNet stem). */
enum { CONV_CUDNN = 0, CONV_DIRECT = 1, CONV_GEMM = 2 };

static int conv_path(shape_t in, shape_t out, int k, int stride, int needs_dx) {
    if (conv_direct_applies(in, out, k, needs_dx)) return CONV_DIRECT;
    if (conv_gemm_applies(in, out, k, stride, needs_dx)) return CONV_GEMM;
    return CONV_CUDNN;
}

static size_t direct_scratch_bytes(shape_t in, shape_t out, int k) {
    return conv_direct_scratch_floats(in, out, k) * sizeof(float);
}

static size_t conv_own_bytes(const layer_t *l, const gpu_t *g, int needs_dx, dtype_t t) {
    (void)g;
    shape_t in = l->in_shape[0], out = l->out_shape;
    int k = l->cfg.k;
    switch (conv_path(in, out, k, l->cfg.stride, needs_dx)) {
    case CONV_DIRECT: return direct_scratch_bytes(in, out, k);
    case CONV_GEMM: return conv_gemm_bytes(in, out, k, t);
    default: return dtype_is_low(t) ? conv_dw_scratch_bytes(l, t) : 0;
    }
}

static int conv_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    const layer_cfg_t *c = &l->cfg;
    shape_t in = l->in_shape[0];
    if (l->n_in != 1) { snprintf(err, errlen, "conv takes 1 input, got %d", l->n_in); return -1; }
    if (c->k < 1 || c->stride < 1 || c->pad < 0 || c->cout < 1) {
        snprintf(err, errlen, "conv needs k >= 1, stride >= 1, pad >= 0, cout >= 1 (got k=%d stride=%d pad=%d cout=%d)",
                 c->k, c->stride, c->pad, c->cout);
        return -1;
    }
    if (in.n < 1 || in.c < 1 || in.h + 2 * c->pad < c->k || in.w + 2 * c->pad < c->k) {
        snprintf(err, errlen, "conv k=%d pad=%d does not fit input (%d, %d, %d, %d)", c->k, c->pad, in.n, in.h, in.w, in.c);
        return -1;
    }
    out->n = in.n;
    out->h = (in.h + 2 * c->pad - c->k) / c->stride + 1;
    out->w = (in.w + 2 * c->pad - c->k) / c->stride + 1;
    out->c = c->cout;
    return 0;
}

static size_t conv_param_count(const layer_t *l) { return conv_weight_count(l) + (l->cfg.bias ? (size_t)l->cfg.cout : 0); }
static size_t conv_state_count(const layer_t *l) { (void)l; return 0; }

static void conv_init(const layer_t *l, float *params, float *state, init_t init, rng_t *rng) {
    (void)state;
    size_t nw = conv_weight_count(l);
    double kk = (double)l->cfg.k * l->cfg.k;
    double a = sqrt(6.0 / (l->in_shape[0].c * kk + l->cfg.cout * kk));   // Glorot: fan_in = C*k*k, fan_out = K*k*k
    double he = sqrt(2.0 / (l->cfg.cout * kk));   // kaiming_normal_(mode="fan_out", nonlinearity="relu")
    for (size_t i = 0; i < nw; i++)
        params[i] = init == INIT_XAVIER ? (float)((2.0 * rng_uniform(rng) - 1.0) * a)
                  : init == INIT_KAIMING ? (float)(he * rng_normal(rng)) : (float)(0.01 * rng_normal(rng));
    if (l->cfg.bias) memset(params + nw, 0, (size_t)l->cfg.cout * sizeof(float));
}

// --- kernels

/* y[r, c] += b[c] over (rows, C) of a 2-byte type, summed in fp32 and rounded once, 8 channels (16 bytes) per
 * thread: C % 8 == 0 and 16-byte aligned rows. cudnnAddTensor's bf16 kernel took 43 us for a (256, 28, 28, 64)
 * tensor on an H100 (0.43 ms of a 3.9 ms ResNet-18 step over its 20 biased convolutions) where moving the 51 MB
 * takes ~17 us. */
template <typename T>
__global__ static void bias_add_x8_kernel(T *__restrict__ y, const T *__restrict__ b, size_t n8, int c8) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n8; i += (size_t)gridDim.x * blockDim.x) {
        pack_t<T, 8> v = load_p<T, 8>(y + 8 * i);
        const pack_t<T, 8> w = load_p<T, 8>(b + 8 * (i % c8));
        for (int k = 0; k < 8; k++) v.v[k] = from_f<T>(to_f(v.v[k]) + to_f(w.v[k]));
        store_p<T, 8>(y + 8 * i, v);
    }
}

/* dtype_dispatch's functor of bias_add_x8_kernel (2-byte types only). */
template <typename T> struct bias_add_x8 {
    static void run(void *y, const void *b, size_t n8, int c8, cudaStream_t s) {
        if constexpr (sizeof(T) == 2) {
            bias_add_x8_kernel<T><<<launch_blocks(n8, 256, 4096), 256, 0, s>>>((T *)y, (const T *)b, n8, c8);
            CHECK_LAUNCH();
        } else {
            check_fail(__FILE__, __LINE__, "bias_add_x8", "a 4-byte type");
        }
    }
};

// --- algorithm search

/* Fastest successful, deterministic result that fits the arena. Strict fp32 wants FMA kernels; cuDNN may tag a
 * result DEFAULT even when the descriptor said FMA, so DEFAULT results are the fallback (run under FMA anyway). */
/* A deterministic result of a math type this math may run (strict fp32: FMA on pass 0, DEFAULT on pass 1). */
static int perf_usable(const perf_t *p, math_t math, int pass) {
    if (p->determinism != CUDNN_DETERMINISTIC) return 0;
    return !MATH_INFO[math].strict || p->math == (pass == 0 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH);
}

static int perf_pick(const perf_t *p, int n, math_t math, size_t ws_limit) {
    int best = -1;
    for (int pass = 0; pass < (MATH_INFO[math].strict ? 2 : 1) && best < 0; pass++)
        for (int i = 0; i < n; i++) {
            if (p[i].status != CUDNN_STATUS_SUCCESS || p[i].memory > ws_limit || !perf_usable(&p[i], math, pass))
                continue;
            if (best < 0 || p[i].time < p[best].time) best = i;
        }
    return best;
}

static int perf_pick_or_die(const layer_t *l, const gpu_t *g, const char *dir, const perf_t *p, int n) {
    int i = perf_pick(p, n, g->math, g->workspace_bytes);
    if (i >= 0) return i;
    fprintf(stderr, "conv %s: no usable %s algorithm (arena %zu bytes, math %s); cuDNN reported:\n",
            cu_label(l), dir, g->workspace_bytes, gpu_math_name(g->math));
    for (int j = 0; j < n; j++)
        fprintf(stderr, "  algo %d status %s time %.3f ms memory %zu deterministic %d math %s\n", p[j].algo,
                cudnnGetErrorString(p[j].status), p[j].time, p[j].memory, (int)p[j].determinism, math_name(p[j].math));
    check_fail(__FILE__, __LINE__, "conv algorithm search", "no deterministic algorithm fits");
    return -1;
}

/* The weights and filter gradient cuDNN sees: the 2-byte copy and 2-byte scratch (or the bound 2-byte gradient,
 * dw_lp) for bf16 and fp16 layers (cuDNN's legacy API wants one data type for x, w and y), the fp32 parameters
 * otherwise. */
static void *conv_dw(const layer_t *l, const conv_priv_t *p) {
    return !dtype_is_low(l->dtype) ? (void *)l->dw : l->dw_lp ? l->dw_lp : p->dw_scratch;
}

enum { DIR_FWD = CONV_BE_FWD, DIR_BWD_DATA = CONV_BE_DGRAD, DIR_BWD_FILTER = CONV_BE_WGRAD };
static const char *const dir_names[] = {"forward", "backward-data", "backward-filter"};

/* One direction into the layer's bound tensors: by a backend plan (its beta built in) or by a's legacy algorithm
 * with the output blended by *beta. The forward, the backward and the search's timing all run through here. */
static void dir_run(const layer_t *l, gpu_t *g, const conv_priv_t *p, const conv_algo_t *a, conv_be_plan_t *plan, int dir,
                    const float *beta) {
    const void *w = param_at(l, 0);
    if (dir == DIR_FWD) {
        if (plan) conv_be_run(g->cudnn, plan, l->x[0], w, l->y, g->workspace);
        else CHECK_CUDNN(cudnnConvolutionForward(g->cudnn, &CU_ONE, p->x_desc, l->x[0], p->w_desc, w, p->fwd_desc,
                                                 (cudnnConvolutionFwdAlgo_t)a->fwd, g->workspace, a->ws_fwd, beta,
                                                 p->y_desc, l->y));
    } else if (dir == DIR_BWD_DATA) {
        if (plan) conv_be_run(g->cudnn, plan, l->dx[0], w, l->dy, g->workspace);
        else CHECK_CUDNN(cudnnConvolutionBackwardData(g->cudnn, &CU_ONE, p->w_desc, w, p->y_desc, l->dy,
                                                      p->bwd_data_desc, (cudnnConvolutionBwdDataAlgo_t)a->bwd_data,
                                                      g->workspace, a->ws_bwd_data, beta, p->x_desc, l->dx[0]));
    } else {
        if (plan) conv_be_run(g->cudnn, plan, l->x[0], conv_dw(l, p), l->dy, g->workspace);
        else CHECK_CUDNN(cudnnConvolutionBackwardFilter(g->cudnn, &CU_ONE, p->x_desc, l->x[0], p->y_desc, l->dy,
                                                        p->bwd_filter_desc,
                                                        (cudnnConvolutionBwdFilterAlgo_t)a->bwd_filter, g->workspace,
                                                        a->ws_bwd_filter, beta, p->w_desc, conv_dw(l, p)));
    }
}

typedef struct {
    const layer_t *l;
    gpu_t *g;
    const conv_priv_t *p;
    const conv_algo_t *a;
    conv_be_plan_t *plan;
    int dir;
} time_ctx_t;

static void time_call(void *ctx) {
    const time_ctx_t *t = (const time_ctx_t *)ctx;
    dir_run(t->l, t->g, t->p, t->a, t->plan, t->dir, &CU_ZERO);
}

/* Median GPU time (ms) of one direction's call, after a warm-up, writing the bound outputs as cudnnFind does. */
static float time_dir(const layer_t *l, gpu_t *g, const conv_priv_t *p, const conv_algo_t *a, conv_be_plan_t *plan,
                      int dir) {
    time_ctx_t t = {l, g, p, a, plan, dir};
    return timing_call_ms(g->stream, 5, time_call, &t);
}

/* cudnnFind*Ex for one direction, results into q; returns their count. Find*Ex runs the real kernels on the bound
 * buffers: it writes y, dx and dw (never w), all of which forward/backward overwrite before anyone reads them. */
static int find_run(const layer_t *l, const gpu_t *g, const conv_priv_t *p, int dir, perf_t *q) {
    int max = 0, n = 0;
    if (dir == DIR_FWD) {
        cudnnConvolutionFwdAlgoPerf_t r[PERF_MAX];
        CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(g->cudnn, &max));
        CHECK_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(g->cudnn, p->x_desc, l->x[0], p->w_desc, param_at(l, 0),
                                                           p->fwd_desc, p->y_desc, l->y, max < PERF_MAX ? max : PERF_MAX,
                                                           &n, r, g->workspace, g->workspace_bytes));
        PERF_COPY(q, r, n);
    } else if (dir == DIR_BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t r[PERF_MAX];
        CHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(g->cudnn, &max));
        CHECK_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(g->cudnn, p->w_desc, param_at(l, 0), p->y_desc, l->dy,
                                                                p->bwd_data_desc, p->x_desc, l->dx[0],
                                                                max < PERF_MAX ? max : PERF_MAX, &n, r,
                                                                g->workspace, g->workspace_bytes));
        PERF_COPY(q, r, n);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t r[PERF_MAX];
        CHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(g->cudnn, &max));
        CHECK_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(g->cudnn, p->x_desc, l->x[0], p->y_desc, l->dy,
                                                                  p->bwd_filter_desc, p->w_desc, conv_dw(l, p),
                                                                  max < PERF_MAX ? max : PERF_MAX, &n, r,
                                                                  g->workspace, g->workspace_bytes));
        PERF_COPY(q, r, n);
    }
    return n;
}

/* Searches one direction and stores its choice (algorithm, math type, workspace) in the cache entry. cudnnFind
 * times each candidate once; a single slow run (a module loading lazily, clocks still ramping up) once made it
 * pick kernels ten times slower than the best for bf16 (a ResNet-18 epoch 1.29 s instead of 0.92 s on an H100),
 * so the search runs twice and each candidate counts with its faster time. */
/* The smallest arena larger than today's that a usable candidate of q asked for, or 0. */
static size_t larger_arena(const perf_t *q, int n, math_t math, size_t have) {
    size_t want = 0;
    for (int pass = 0; pass < (MATH_INFO[math].strict ? 2 : 1); pass++)
        for (int i = 0; i < n; i++)
            if (perf_usable(&q[i], math, pass) && q[i].status != CUDNN_STATUS_NOT_SUPPORTED && q[i].memory > have &&
                (!want || q[i].memory < want))
                want = q[i].memory;
    return want;
}

static void find_algo(const layer_t *l, gpu_t *g, const conv_priv_t *p, int dir, conv_algo_t *e) {
    perf_t q[PERF_MAX], r[PERF_MAX];
    int n = find_run(l, g, p, dir, q);
    /* No deterministic algorithm fits the search arena (ResNet-50's 7x7 stem filter gradient in tf32 asked 1.0 GB of a
     * 512 MB arena): grow the arena to what the smallest such candidate asks while half the free memory covers it. */
    while (perf_pick(q, n, g->math, g->workspace_bytes) < 0) {
        size_t want = larger_arena(q, n, g->math, g->workspace_bytes), free_b = 0, total_b = 0;
        CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
        if (!want || want > free_b / 2) break;
        gpu_workspace_reserve(g, want);
        n = find_run(l, g, p, dir, q);
    }
    int m = find_run(l, g, p, dir, r);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            if (r[j].algo == q[i].algo && r[j].math == q[i].math && r[j].status == CUDNN_STATUS_SUCCESS &&
                (q[i].status != CUDNN_STATUS_SUCCESS || r[j].time < q[i].time)) {
                q[i] = r[j];
                break;
            }
    const perf_t *b = &q[perf_pick_or_die(l, g, dir_names[dir], q, n)];
    if (dir == DIR_FWD) { e->fwd = b->algo; e->fwd_math = b->math; e->ws_fwd = b->memory; }
    else if (dir == DIR_BWD_DATA) { e->bwd_data = b->algo; e->bwd_data_math = b->math; e->ws_bwd_data = b->memory; }
    else { e->bwd_filter = b->algo; e->bwd_filter_math = b->math; e->ws_bwd_filter = b->memory; }
}

/* What cudnnFind may try. 2-byte types need TENSOR_OP explicitly: under DEFAULT, cuDNN 9 offered bf16 only
 * non-tensor-core kernels and conversions to fp32 NCHW (measured on an H100: a ResNet-18 step took 407 ms, 369 of them
 * in dgrad2d_grouped_direct_kernel). tf32: DEFAULT permits TF32 on Ampere and later, as PyTorch's default. */
static cudnnMathType_t search_math(math_t m) {
    return MATH_INFO[m].strict ? CUDNN_FMA_MATH : dtype_is_low(math_act_dtype(m)) ? CUDNN_TENSOR_OP_MATH
                                                                                   : CUDNN_DEFAULT_MATH;
}

/* Strict fp32 runs under FMA whatever the search reported; the other maths under the math type that was timed. */
static cudnnMathType_t run_math(const gpu_t *g, int chosen) {
    return MATH_INFO[g->math].strict ? CUDNN_FMA_MATH : (cudnnMathType_t)chosen;
}

/* The backend API's view of this layer: its shape and data type. */
static conv_be_shape_t be_shape(const layer_t *l) {
    shape_t in = l->in_shape[0], out = l->out_shape;
    conv_be_shape_t s = {in.n, in.h, in.w, in.c, l->cfg.cout, l->cfg.k, l->cfg.k, l->cfg.stride, l->cfg.pad,
                         out.h, out.w, cudnn_dtype(l->dtype)};
    return s;
}

static int aligned16(const void *v) { return ((uintptr_t)v & 15) == 0; }

/* Whether the backend may run this layer: the search rule and the math allow it (gpu.h), and every bound tensor is
 * on the 16-byte alignment the plans declare. */
static int be_eligible(const layer_t *l, const gpu_t *g, const conv_priv_t *p) {
    return g->conv != GPU_CONV_LEGACY && gpu_conv_backend_math(g->math) && aligned16(l->x[0]) &&
           aligned16(l->y) && aligned16(l->dy) && aligned16(param_at(l, 0)) && aligned16(conv_dw(l, p)) &&
           aligned16(g->workspace) && (!l->dx[0] || aligned16(l->dx[0]));
}

/* Configs taken from each heuristics mode: probe_conv over ResNet-50's shapes (first 16 of A and B) found the
 * winners past the 8th saving under 10 us each. */
#define BE_HEUR_MAX 8
#define BE_MARGIN 0.97f       /* a backend config must beat cudnnFind's choice by 3 %: a tie keeps the legacy one */

/* Times the backend candidates of one direction against cudnnFind's choice (already in e) and keeps the fastest in
 * e->be[dir] (engine -1: the legacy algorithm stays). Timed as the legacy one is, on the bound buffers, beta 0. */
static void be_search(const layer_t *l, gpu_t *g, conv_priv_t *p, int dir, conv_algo_t *e) {
    conv_be_cfg_t c[2 * BE_HEUR_MAX];
    conv_be_shape_t s = be_shape(l);
    e->be[dir].engine = -1;
    if (!be_eligible(l, g, p)) return;
    int n = conv_be_candidates(g->cudnn, &s, dir, BE_HEUR_MAX, c, 2 * BE_HEUR_MAX);
    if (n == 0) return;
    cudnnConvolutionDescriptor_t desc[3] = {p->fwd_desc, p->bwd_data_desc, p->bwd_filter_desc};
    int math[3] = {e->fwd_math, e->bwd_data_math, e->bwd_filter_math};
    CHECK_CUDNN(cudnnSetConvolutionMathType(desc[dir], run_math(g, math[dir])));
    /* Forced (tests): the heuristics' first config that plans and fits, untimed, so that a test under
     * compute-sanitizer does not time every candidate. */
    int forced = g->conv == GPU_CONV_BACKEND;
    float best = forced ? INFINITY : time_dir(l, g, p, e, NULL, dir) * BE_MARGIN;
    for (int i = 0; i < n && !(forced && e->be[dir].engine >= 0); i++) {
        conv_be_plan_t plan;
        if (conv_be_plan(g->cudnn, &s, dir, 0.0f, &c[i], &plan) != 0) continue;
        if (plan.ws <= g->workspace_bytes) {
            float t = forced ? 0.0f : time_dir(l, g, p, e, &plan, dir);
            if (t < best) { best = t; e->be[dir] = c[i]; }
        }
        conv_be_plan_free(&plan);
    }
}

/* The cache entry for this shape, inserted empty (algorithms -1) when new. Valid until the next insertion. */
static conv_algo_t *cache_entry(gpu_t *g, const int key[12]) {
    conv_algo_t *e = conv_algo_add(&g->conv_algos, &g->n_conv_algos, &g->cap_conv_algos, key);
    if (!e) check_fail(__FILE__, __LINE__, "conv algorithm cache", "out of host memory");
    return e;
}

// --- layer

static void conv_destroy(layer_t *l) {
    conv_priv_t *p = (conv_priv_t *)l->priv;
    if (!p) return;
    cudnn_tensor_desc_free(&p->x_desc);
    cudnn_tensor_desc_free(&p->y_desc);
    cudnn_tensor_desc_free(&p->b_desc);
    if (p->w_desc) CHECK_CUDNN(cudnnDestroyFilterDescriptor(p->w_desc));
    if (p->dw_scratch) CHECK_CUDA(cudaFree(p->dw_scratch));
    if (p->direct_scratch) CHECK_CUDA(cudaFree(p->direct_scratch));
    conv_gemm_free(&p->gemm);
    for (int d = 0; d < 3; d++) {
        conv_be_plan_free(&p->be[d]);
        conv_be_plan_free(&p->be_acc[d]);
    }
    if (p->fwd_desc) CHECK_CUDNN(cudnnDestroyConvolutionDescriptor(p->fwd_desc));
    if (p->bwd_data_desc) CHECK_CUDNN(cudnnDestroyConvolutionDescriptor(p->bwd_data_desc));
    if (p->bwd_filter_desc) CHECK_CUDNN(cudnnDestroyConvolutionDescriptor(p->bwd_filter_desc));
    free(p);
    l->priv = NULL;
}

/* The plans of the directions whose entry names a backend config: blend 0, and 1 where a gradient may accumulate
 * (the data gradient; the filter gradient of fp32 parameters, 2-byte ones go through scratch). A plan cuDNN refuses
 * (or a misaligned tensor) leaves the legacy algorithm, which the entry always has. */
static void be_plans(const layer_t *l, gpu_t *g, conv_priv_t *p) {
    conv_be_shape_t s = be_shape(l);
    int eligible = be_eligible(l, g, p);
    for (int d = 0; d < 3; d++) {
        conv_be_cfg_t *c = &p->algo.be[d], acc = *c;
        if (c->engine < 0) continue;
        int ok = eligible && (d != DIR_BWD_DATA || p->has_bwd_data) &&
                 conv_be_plan(g->cudnn, &s, d, 0.0f, c, &p->be[d]) == 0;
        if (ok && (d == DIR_BWD_DATA || (d == DIR_BWD_FILTER && !dtype_is_low(l->dtype))))
            ok = conv_be_plan(g->cudnn, &s, d, 1.0f, &acc, &p->be_acc[d]) == 0;
        if (!ok) {
            conv_be_plan_free(&p->be[d]);
            conv_be_plan_free(&p->be_acc[d]);
            c->engine = -1;
        }
    }
}

/* The plan a direction runs with for output blend beta, or NULL for the legacy algorithm. */
static conv_be_plan_t *be_plan_for(conv_priv_t *p, int dir, float beta) {
    if (p->algo.be[dir].engine < 0) return NULL;
    if (beta == 0.0f) return &p->be[dir];
    if (beta != 1.0f || !p->be_acc[dir].plan)
        check_fail(__FILE__, __LINE__, "conv", "a blend without a backend plan built for it");
    return &p->be_acc[dir];
}

/* The workspace a direction runs with: its backend plans' or its legacy algorithm's. */
static size_t dir_ws(const conv_priv_t *p, int dir) {
    const size_t legacy[3] = {p->algo.ws_fwd, p->algo.ws_bwd_data, p->algo.ws_bwd_filter};
    if (p->algo.be[dir].engine < 0) return legacy[dir];
    return p->be_acc[dir].ws > p->be[dir].ws ? p->be_acc[dir].ws : p->be[dir].ws;
}

static size_t conv_setup(layer_t *l, gpu_t *g) {
    conv_destroy(l);
    conv_priv_t *p = (conv_priv_t *)calloc(1, sizeof *p);
    if (!p) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    l->priv = p;
    const layer_cfg_t *c = &l->cfg;
    shape_t in = l->in_shape[0], out = l->out_shape;

    p->x_desc = cudnn_nhwc_desc(in, l->dtype);
    p->y_desc = cudnn_nhwc_desc(out, l->dtype);
    p->path = conv_path(in, out, c->k, c->stride, l->dx[0] != NULL);
    if (p->path == CONV_DIRECT)
        CHECK_ALLOC(cudaMalloc((void **)&p->direct_scratch, direct_scratch_bytes(in, out, c->k)));
    if (p->path == CONV_GEMM) conv_gemm_init(&p->gemm, in, out, c->k, c->stride, c->pad, l->dtype, g->stream);
    layer_check_lp(l, "conv_setup");   /* every path reads the 2-byte copy */
    if (dtype_is_low(l->dtype) && p->path == CONV_CUDNN)
        CHECK_ALLOC(cudaMalloc(&p->dw_scratch, conv_dw_scratch_bytes(l, l->dtype)));
    if (c->bias && l->bias_use == BIAS_DEAD)   /* its gradient is exactly 0 and nothing ever writes it */
        CHECK_CUDA(cudaMemsetAsync(l->dw + conv_weight_count(l), 0, (size_t)c->cout * sizeof(float), g->stream));
    if (c->bias && l->bias_use == BIAS_ADD) {
        p->b_desc = cudnn_channel_desc(c->cout, l->dtype);
        /* The bias gradient is a GEMV against ones(N*OH*OW): cuDNN's NHWC BackwardBias kernel took ~310 us per
         * call for a (256, 28, 28, 64) gradient on an H100 (6 ms of a 14 ms ResNet-18 step), GEMV ~20 us. */
        gpu_ones_reserve(g, l->out_shape.n * l->out_shape.h * l->out_shape.w);
    }
    CHECK_CUDNN(cudnnCreateFilterDescriptor(&p->w_desc));
    CHECK_CUDNN(cudnnSetFilter4dDescriptor(p->w_desc, cudnn_dtype(l->dtype), CUDNN_TENSOR_NHWC, c->cout, in.c, c->k,
                                           c->k));
    cudnnConvolutionDescriptor_t *descs[3] = {&p->fwd_desc, &p->bwd_data_desc, &p->bwd_filter_desc};
    for (int i = 0; i < 3; i++) {
        CHECK_CUDNN(cudnnCreateConvolutionDescriptor(descs[i]));
        /* The compute type is fp32 for every data type: 2-byte products accumulate in fp32 (PSEUDO_BFLOAT16,
         * PSEUDO_HALF). */
        CHECK_CUDNN(cudnnSetConvolution2dDescriptor(*descs[i], c->pad, c->pad, c->stride, c->stride, 1, 1,
                                                    CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        CHECK_CUDNN(cudnnSetConvolutionMathType(*descs[i], search_math(g->math)));
    }
    int dn = 0, dc = 0, dh = 0, dw = 0;
    CHECK_CUDNN(cudnnGetConvolution2dForwardOutputDim(p->fwd_desc, p->x_desc, p->w_desc, &dn, &dc, &dh, &dw));
    if (dn != out.n || dc != out.c || dh != out.h || dw != out.w) {
        fprintf(stderr, "conv %s: cuDNN output (%d, %d, %d, %d) != layer output (%d, %d, %d, %d)\n", cu_label(l),
                dn, dh, dw, dc, out.n, out.h, out.w, out.c);
        check_fail(__FILE__, __LINE__, "cudnnGetConvolution2dForwardOutputDim", "shape mismatch");
    }

    if (p->path != CONV_CUDNN) return 0;   /* nothing to search, no workspace */
    int key[12] = {in.n, in.h, in.w, in.c, c->cout, c->k, c->k, c->stride, c->pad, out.h, out.w, (int)g->math};
    conv_algo_t *e = cache_entry(g, key);
    p->has_bwd_data = l->dx[0] != NULL;
    p->strict = MATH_INFO[g->math].strict;
    int want[3] = {e->fwd < 0, e->bwd_filter < 0, p->has_bwd_data && e->bwd_data < 0};
    static const int dirs[3] = {DIR_FWD, DIR_BWD_FILTER, DIR_BWD_DATA};
    for (int d = 0; d < 3; d++)
        if (want[d]) {
            find_algo(l, g, p, dirs[d], e);
            be_search(l, g, p, dirs[d], e);
            g->conv_searches++;   /* --conv-cache says when a run searched (engine/gpu.h) */
        }
    p->algo = *e;
    be_plans(l, g, p);

    CHECK_CUDNN(cudnnSetConvolutionMathType(p->fwd_desc, run_math(g, p->algo.fwd_math)));
    CHECK_CUDNN(cudnnSetConvolutionMathType(p->bwd_filter_desc, run_math(g, p->algo.bwd_filter_math)));
    size_t ws = dir_ws(p, DIR_FWD) > dir_ws(p, DIR_BWD_FILTER) ? dir_ws(p, DIR_FWD) : dir_ws(p, DIR_BWD_FILTER);
    if (p->has_bwd_data) {
        CHECK_CUDNN(cudnnSetConvolutionMathType(p->bwd_data_desc, run_math(g, p->algo.bwd_data_math)));
        if (dir_ws(p, DIR_BWD_DATA) > ws) ws = dir_ws(p, DIR_BWD_DATA);
    }
    return ws;
}

static void conv_forward(layer_t *l, gpu_t *g, int training) {
    (void)training;
    conv_priv_t *p = (conv_priv_t *)l->priv;   /* its plans cache their variant packs */
    // (N, H, W, C) * (K, R, S, C) -> (N, OH, OW, K)
    if (p->path == CONV_DIRECT)
        conv_direct_forward(l->x[0], param_at(l, 0), l->y, l->dtype, l->in_shape[0], l->out_shape, l->cfg.k,
                            l->cfg.stride, l->cfg.pad, g->stream);
    else if (p->path == CONV_GEMM)
        conv_gemm_forward(&p->gemm, g, l->x[0], param_at(l, 0), l->y);
    else
        dir_run(l, g, p, &p->algo, be_plan_for(p, DIR_FWD, 0.0f), DIR_FWD, &CU_ZERO);
    if (!l->cfg.bias || l->bias_use != BIAS_ADD) return;   /* DEAD: batch norm removes it; FOLDED: it adds it */
    const void *b = param_at(l, conv_weight_count(l));
    size_t n = shape_numel(l->out_shape);
    int c = l->out_shape.c;
    if (dtype_is_low(l->dtype) && c % 8 == 0 && (uintptr_t)l->y % 16 == 0 && (uintptr_t)b % 16 == 0) {
        dtype_dispatch<bias_add_x8>(l->dtype, l->y, b, n / 8, c / 8, g->stream);
    } else {
        CHECK_CUDNN(cudnnAddTensor(g->cudnn, &CU_ONE, p->b_desc, b, &CU_ONE, p->y_desc, l->y));
    }
}

/* The filter gradient (and an added bias's): reads x and dy only, so a zero-bubble pipeline may run it after other
 * micro-batches' data gradients. */
static void conv_backward_weight(layer_t *l, gpu_t *g, float dw_beta) {
    conv_priv_t *p = (conv_priv_t *)l->priv;
    size_t nw = conv_weight_count(l);
    if (l->cfg.bias && l->bias_use == BIAS_ADD)   // db (K) = dy^T (K, N*OH*OW) . ones: dy is row-major (N*OH*OW, K), i.e. column-major (K, M)
        blas_bias_grad(g, l->dtype, l->dy, l->out_shape.c, l->out_shape.n * l->out_shape.h * l->out_shape.w, dw_beta,
                       l->dw + nw);
    if (p->path == CONV_DIRECT) {   /* fp32 filter gradient straight from the kernel; the input needs no gradient */
        conv_direct_wgrad(l->x[0], l->dy, l->dw, dw_beta, p->direct_scratch, l->dtype, l->in_shape[0], l->out_shape,
                          l->cfg.k, l->cfg.stride, l->cfg.pad, g->stream);
        return;
    }
    if (p->path == CONV_GEMM) {   /* the same, from the forward's im2col copy */
        conv_gemm_wgrad(&p->gemm, g, l->dy, l->dw, dw_beta);
        return;
    }
    /* bf16, fp16: cuDNN writes the filter gradient in the layer's type (fp32 accumulation inside), widened and added
     * here in fp32, as autocast's cast-back into the fp32 parameter's .grad does. */
    int lp = dtype_is_low(l->dtype);
    if (l->dw_lp && dw_beta != 0.0f)
        check_fail(__FILE__, __LINE__, "conv_backward", "a 2-byte weight gradient bound in place cannot accumulate");
    float beta = lp ? 0.0f : dw_beta;
    dir_run(l, g, p, &p->algo, be_plan_for(p, DIR_BWD_FILTER, beta), DIR_BWD_FILTER, &beta);
    if (lp && !l->dw_lp) convert_acc_f32(l->dw, p->dw_scratch, l->dtype, nw, dw_beta, g->stream);
}

static void conv_backward_data(layer_t *l, gpu_t *g, float dw_beta) {
    (void)dw_beta;
    conv_priv_t *p = (conv_priv_t *)l->priv;
    if (p->path != CONV_CUDNN || !l->dx[0]) return;   // the data: no gradient wanted
    if (!p->has_bwd_data)
        check_fail(__FILE__, __LINE__, "conv_backward", "dx bound after setup: no backward-data algorithm was chosen");
    dir_run(l, g, p, &p->algo, be_plan_for(p, DIR_BWD_DATA, l->dx_beta[0]), DIR_BWD_DATA, &l->dx_beta[0]);
}

static void conv_backward(layer_t *l, gpu_t *g, float dw_beta) {
    conv_backward_weight(l, g, dw_beta);
    conv_backward_data(l, g, dw_beta);
}

/* The bias's gradient, where there is one, stays fp32. */
extern "C" size_t layer_conv_lp_grads(const layer_t *l) {
    const conv_priv_t *p = (const conv_priv_t *)l->priv;
    return p && dtype_is_low(l->dtype) && p->path == CONV_CUDNN ? conv_weight_count(l) : 0;
}

extern "C" void layer_conv_describe(const layer_t *l, char *buf, size_t len) {
    const conv_priv_t *p = (const conv_priv_t *)l->priv;
    if (!p) { snprintf(buf, len, "not set up"); return; }
    if (p->path == CONV_DIRECT) {
        snprintf(buf, len, "direct kernels (conv_direct.cu): forward and filter gradient");
        return;
    }
    if (p->path == CONV_GEMM) {
        snprintf(buf, len, "im2col + cuBLAS GEMM (conv_gemm.cu): forward and filter gradient");
        return;
    }
    const conv_algo_t *a = &p->algo;
    char bd[64] = "skipped (no dx)";
    if (p->has_bwd_data) snprintf(bd, sizeof bd, "%d/%s ws %zu", a->bwd_data, math_name(a->bwd_data_math), a->ws_bwd_data);
    int k = snprintf(buf, len, "algo/math as found: fwd %d/%s ws %zu, bwd_data %s, bwd_filter %d/%s ws %zu%s",
                     a->fwd, math_name(a->fwd_math), a->ws_fwd, bd, a->bwd_filter, math_name(a->bwd_filter_math),
                     a->ws_bwd_filter, p->strict ? " (all run as FMA)" : "");
    for (int d = 0; d < 3 && k > 0 && (size_t)k < len; d++)
        if (a->be[d].engine >= 0) {
            char cfg[160];
            conv_be_describe(&a->be[d], cfg, sizeof cfg);
            k += snprintf(buf + k, len - (size_t)k, "; %s runs backend %s ws %zu", dir_names[d], cfg, dir_ws(p, d));
        }
}

const layer_ops_t layer_conv_ops = {
    "conv", conv_out_shape, conv_param_count, conv_state_count, conv_init,
    conv_setup, conv_forward, conv_backward, conv_destroy, conv_own_bytes, conv_backward_data, conv_backward_weight,
};
