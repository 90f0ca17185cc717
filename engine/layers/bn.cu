/* bn.cu — spatial batch normalisation over C for NHWC activations (eps 1e-5, momentum 0.1 as in PyTorch),
 * optionally fused with ReLU or with a residual add + ReLU (cfg.fuse): y = relu(bn(x0) [+ x1]). Training normalises
 * with batch statistics and updates the running ones, through our kernels (bn_nhwc.cu) or cuDNN's (g->bn, chosen at
 * setup); inference uses the running ones, through cuDNN. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cudnn_util.h"
#include "bn_nhwc.h"
#include "../timing.h"
#include <math.h>

/* SPATIAL_PERSISTENT has fast NHWC kernels but is documented as possibly overflowing for some inputs;
 * 0 forces the classic SPATIAL path everywhere. */
#define BN_TRY_PERSISTENT 1
#define BN_EPS 1e-5
/* cuDNN's exponentialAverageFactor: running = 0.9 running + 0.1 batch, the batch variance entering unbiased
 * (x M/(M-1)) as in PyTorch; tests/gpu/test_layers checks both conventions apart. */
#define BN_MOMENTUM 0.1
/* The ways a layer's training runs, as its algorithm-cache entry records them (conv_algo.h, CONV_KEY_BN): cuDNN's,
 * or ours with bn_nhwc_impl_t i as BN_WAY_OWN + i. */
enum { BN_WAY_CUDNN = 0, BN_WAY_OWN = 1 };

typedef struct {
    cudnnTensorDescriptor_t x_desc;     // (N, H, W, C): x, y, dx, dy, and the residual x1 / dx1
    cudnnTensorDescriptor_t p_desc;     // (1, C, 1, 1): gamma, beta, means, variances
    cudnnActivationDescriptor_t act;    // ReLU, for fused layers
    cudnnBatchNormMode_t mode;
    int ex;                             // 1: Ex API with SPATIAL_PERSISTENT, 0: classic API with SPATIAL
    cudnnBatchNormOps_t ops;            // what cuDNN fuses: BN alone, or BN + activation (+ add)
    void *dpre;                         // fused by hand or dx1 accumulated: d(pre-activation), (N, H, W, C)
    float *scratch;                     // (4, C): saved mean, saved 1/sqrt(var+eps), probe running mean, var
    void *reserve;                      // Ex only: what forward leaves for backward
    size_t reserve_bytes;
    size_t ws_fwd, ws_bwd;              // Ex only: bytes of g->workspace
    void *dx_sink;                      // cuDNN always writes dx: a target when the input needs no gradient
    int own;                            // 1: training runs bn_nhwc's kernels (then nothing above but the
    bn_nhwc_t k;                        // descriptors and act, for inference, is set up)
    char path[192];                     // what setup chose and why, for tests and logs
    float *shift;                       // (C) beta + the folded conv bias (l->fold_b), or NULL without one
} bn_priv_t;

// --- kernels

/* shift = beta + b: a shortcut convolution's bias folded into this layer's shift (layer.h, BIAS_FOLDED). */
__global__ static void shift_fold_kernel(float *__restrict__ shift, const float *__restrict__ beta,
                                         const float *__restrict__ b, int c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < c) shift[i] = beta[i] + b[i];
}

/* The shift batch norm applies: beta, or beta plus the folded bias (computed by bn_shift_update). */
static const float *bn_shift(const layer_t *l, const bn_priv_t *p) {
    return p->shift ? p->shift : l->w + l->in_shape[0].c;
}

static void bn_shift_update(const layer_t *l, gpu_t *g, const bn_priv_t *p) {
    if (!p->shift) return;
    int c = l->in_shape[0].c;
    shift_fold_kernel<<<(c + 255) / 256, 256, 0, g->stream>>>(p->shift, l->w + c, l->fold_b, c);
    CHECK_LAUNCH();
}

static int bn_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    shape_t in = l->in_shape[0];
    int want = l->cfg.fuse == BN_FUSE_ADD_RELU ? 2 : 1;
    if (l->cfg.fuse < BN_FUSE_NONE || l->cfg.fuse > BN_FUSE_ADD_RELU) {
        snprintf(err, errlen, "bn: unknown fuse mode %d", l->cfg.fuse);
        return -1;
    }
    if (l->n_in != want) { snprintf(err, errlen, "bn (fuse %d) takes %d input(s), got %d", l->cfg.fuse, want, l->n_in); return -1; }
    if (want == 2 && memcmp(&l->in_shape[0], &l->in_shape[1], sizeof(shape_t)) != 0) {
        snprintf(err, errlen, "bn add: residual (%d, %d, %d, %d) differs from input (%d, %d, %d, %d)", l->in_shape[1].n,
                 l->in_shape[1].h, l->in_shape[1].w, l->in_shape[1].c, in.n, in.h, in.w, in.c);
        return -1;
    }
    if (in.c < 1 || (long long)in.n * in.h * in.w < 2) {
        snprintf(err, errlen, "bn needs C >= 1 and at least 2 values per channel (got (%d, %d, %d, %d))",
                 in.n, in.h, in.w, in.c);
        return -1;
    }
    *out = in;
    return 0;
}

static size_t bn_param_count(const layer_t *l) { return 2 * (size_t)l->in_shape[0].c; }   // gamma, beta
static size_t bn_state_count(const layer_t *l) { return 2 * (size_t)l->in_shape[0].c; }   // running mean, var

static void bn_init(const layer_t *l, float *params, float *state, init_t init, rng_t *rng) {
    (void)init; (void)rng;
    int c = l->in_shape[0].c;
    for (int i = 0; i < c; i++) {
        params[i] = 1.0f;       // gamma
        params[c + i] = 0.0f;   // beta
        state[i] = 0.0f;        // running mean
        state[c + i] = 1.0f;    // running var
    }
}

// --- launchers

static int bn_has_add(const layer_t *l) { return l->cfg.fuse == BN_FUSE_ADD_RELU; }
static int bn_cudnn_add(const bn_priv_t *p) { return p->ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION; }
static int bn_cudnn_act(const bn_priv_t *p) { return p->ops != CUDNN_BATCHNORM_OPS_BN; }

static cudnnStatus_t bn_forward_ex(const layer_t *l, gpu_t *g, const bn_priv_t *p, float *run_mean, float *run_var) {
    int c = l->in_shape[0].c;
    return cudnnBatchNormalizationForwardTrainingEx(
        g->cudnn, p->mode, p->ops, &CU_ONE, &CU_ZERO, p->x_desc, l->x[0], bn_cudnn_add(p) ? p->x_desc : NULL,
        bn_cudnn_add(p) ? l->x[1] : NULL, p->x_desc, l->y, p->p_desc, l->w, bn_shift(l, p), BN_MOMENTUM, run_mean, run_var,
        BN_EPS, p->scratch, p->scratch + c, bn_cudnn_act(p) ? p->act : NULL, g->workspace, p->ws_fwd, p->reserve,
        p->reserve_bytes);
}

/* dy is the gradient of the BN output (before any activation cuDNN does not fuse); dz receives the residual's
 * gradient when cuDNN fuses the add. */
static cudnnStatus_t bn_backward_ex(const layer_t *l, gpu_t *g, const bn_priv_t *p, const void *dy, void *dx,
                                    void *dz, float dx_beta, float dw_beta) {
    int c = l->in_shape[0].c;
    return cudnnBatchNormalizationBackwardEx(
        g->cudnn, p->mode, p->ops, &CU_ONE, &dx_beta, &CU_ONE, &dw_beta, p->x_desc, l->x[0],
        p->x_desc, l->y, p->x_desc, dy, bn_cudnn_add(p) ? p->x_desc : NULL, dz, p->x_desc, dx, p->p_desc, l->w,
        bn_shift(l, p), l->dw, l->dw + c, BN_EPS, p->scratch, p->scratch + c, bn_cudnn_act(p) ? p->act : NULL,
        g->workspace, p->ws_bwd, p->reserve, p->reserve_bytes);
}

/* A real forward + backward (overwriting and accumulating) on the bound buffers, so an unsupported shape shows up
 * here rather than mid-training. Running statistics go to scratch: the model's state is not touched. */
static cudnnStatus_t bn_probe_ex(const layer_t *l, gpu_t *g, bn_priv_t *p) {
    if (p->reserve) CHECK_CUDA(cudaFree(p->reserve));
    p->reserve = NULL;
    p->reserve_bytes = 0;
    int c = l->in_shape[0].c;
    cudnnStatus_t s;
    cudnnTensorDescriptor_t z = bn_cudnn_add(p) ? p->x_desc : NULL;
    cudnnActivationDescriptor_t a = bn_cudnn_act(p) ? p->act : NULL;
    s = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(g->cudnn, p->mode, p->ops, p->x_desc, z, p->x_desc,
                                                                 p->p_desc, a, &p->ws_fwd);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    s = cudnnGetBatchNormalizationBackwardExWorkspaceSize(g->cudnn, p->mode, p->ops, p->x_desc, p->x_desc, p->x_desc,
                                                          z, p->x_desc, p->p_desc, a, &p->ws_bwd);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    s = cudnnGetBatchNormalizationTrainingExReserveSpaceSize(g->cudnn, p->mode, p->ops, a, p->x_desc,
                                                             &p->reserve_bytes);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    if (p->ws_fwd > g->workspace_bytes || p->ws_bwd > g->workspace_bytes) return CUDNN_STATUS_ALLOC_FAILED;
    if (p->reserve_bytes) CHECK_ALLOC(cudaMalloc(&p->reserve, p->reserve_bytes));
    void *dx = l->dx[0] ? l->dx[0] : p->dx_sink;
    void *dz = bn_cudnn_add(p) ? p->dpre : NULL;
    if ((s = bn_forward_ex(l, g, p, p->scratch + 2 * c, p->scratch + 3 * c)) != CUDNN_STATUS_SUCCESS) return s;
    if ((s = bn_backward_ex(l, g, p, l->dy, dx, dz, 0.0f, 0.0f)) != CUDNN_STATUS_SUCCESS) return s;
    if ((s = bn_backward_ex(l, g, p, l->dy, dx, dz, 1.0f, 1.0f)) != CUDNN_STATUS_SUCCESS) return s;
    CHECK_CUDA(cudaStreamSynchronize(g->stream));   // a failing kernel of the probe surfaces here, named
    return CUDNN_STATUS_SUCCESS;
}

// --- layer

/* cuDNN's path's saved statistics: mean, inverse deviation and two more per channel, fp32. */
static size_t bn_stats_bytes(int c) { return 4 * (size_t)c * sizeof(float); }

static void bn_destroy(layer_t *l) {
    bn_priv_t *p = (bn_priv_t *)l->priv;
    if (!p) return;
    cudnn_tensor_desc_free(&p->x_desc);
    cudnn_tensor_desc_free(&p->p_desc);
    if (p->act) CHECK_CUDNN(cudnnDestroyActivationDescriptor(p->act));
    if (p->dpre) CHECK_CUDA(cudaFree(p->dpre));
    if (p->scratch) CHECK_CUDA(cudaFree(p->scratch));
    if (p->reserve) CHECK_CUDA(cudaFree(p->reserve));
    if (p->dx_sink) CHECK_CUDA(cudaFree(p->dx_sink));
    if (p->shift) CHECK_CUDA(cudaFree(p->shift));
    if (p->own) bn_nhwc_free(&p->k);
    free(p);
    l->priv = NULL;
}

static void bn_use_classic(bn_priv_t *p) {
    p->ex = 0;
    p->ops = CUDNN_BATCHNORM_OPS_BN;
    p->mode = CUDNN_BATCHNORM_SPATIAL;
    p->ws_fwd = p->ws_bwd = 0;
    if (p->reserve) CHECK_CUDA(cudaFree(p->reserve));
    p->reserve = NULL;
    p->reserve_bytes = 0;
}

/* cuDNN's path: its statistics, a sink for dx where the input has no gradient, the pre-activation's gradient where
 * a ReLU is fused, and the most fused of its kernels that runs here (probed). Returns the workspace it needs. */
static size_t bn_cudnn_setup(layer_t *l, gpu_t *g, bn_priv_t *p) {
    shape_t in = l->in_shape[0];
    CHECK_ALLOC(cudaMalloc((void **)&p->scratch, bn_stats_bytes(in.c)));
    if (!l->dx[0]) CHECK_ALLOC(cudaMalloc(&p->dx_sink, layer_bytes(l, in)));
    if (l->cfg.fuse != BN_FUSE_NONE) CHECK_ALLOC(cudaMalloc(&p->dpre, layer_bytes(l, in)));
    bn_use_classic(p);
    snprintf(p->path, sizeof p->path, "SPATIAL (BN_TRY_PERSISTENT 0)");
    /* Most fused first: cuDNN's fused kernels where it has them, then BN alone with the rest done here. */
    cudnnBatchNormOps_t tries[2] = {CUDNN_BATCHNORM_OPS_BN, CUDNN_BATCHNORM_OPS_BN};
    if (l->cfg.fuse == BN_FUSE_RELU) tries[0] = CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    if (l->cfg.fuse == BN_FUSE_ADD_RELU) tries[0] = CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    char why[160] = "";
    for (int t = 0; BN_TRY_PERSISTENT && t < 2 && !p->ex; t++) {
        if (t == 1 && tries[1] == tries[0]) break;
        p->ex = 1;
        p->mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
        p->ops = tries[t];
        cudnnStatus_t s = bn_probe_ex(l, g, p);
        if (s == CUDNN_STATUS_SUCCESS) {
            snprintf(p->path, sizeof p->path, "Ex SPATIAL_PERSISTENT %s (ws fwd %zu bwd %zu, reserve %zu)%s%s",
                     p->ops == CUDNN_BATCHNORM_OPS_BN ? "BN" : p->ops == CUDNN_BATCHNORM_OPS_BN_ACTIVATION
                     ? "BN+ReLU" : "BN+add+ReLU", p->ws_fwd, p->ws_bwd, p->reserve_bytes, why[0] ? "; " : "", why);
            break;
        }
        char last[128] = "";
        cudnnGetLastErrorString(last, sizeof last);
        snprintf(why, sizeof why, "fused ops %d: %s%s%.80s", (int)p->ops, cudnnGetErrorString(s), last[0] ? ": " : "",
                 last);
        /* NOT_SUPPORTED is an expected answer for some shapes; anything else deserves a line. */
        if (CUDNN_STATUS_CATEGORY(s) != CUDNN_STATUS_NOT_SUPPORTED)
            fprintf(stderr, "bn %s: %s; trying the next path\n", cu_label(l), why);
        bn_use_classic(p);
    }
    if (!p->ex && BN_TRY_PERSISTENT) snprintf(p->path, sizeof p->path, "SPATIAL (%s)", why);
    return p->ws_fwd > p->ws_bwd ? p->ws_fwd : p->ws_bwd;
}

/* Frees what bn_cudnn_setup allocated; the descriptors stay (inference runs on cuDNN whichever way trains). */
static void bn_cudnn_release(bn_priv_t *p) {
    void *bufs[4] = {p->dpre, p->scratch, p->reserve, p->dx_sink};
    for (int i = 0; i < 4; i++)
        if (bufs[i]) CHECK_CUDA(cudaFree(bufs[i]));
    p->dpre = p->reserve = p->dx_sink = NULL;
    p->scratch = NULL;
    p->reserve_bytes = 0;
}

static void bn_forward(layer_t *l, gpu_t *g, int training);
static void bn_backward(layer_t *l, gpu_t *g, float dw_beta);

typedef struct { layer_t *l; gpu_t *g; int dir; } bn_timed_t;

static void bn_timed_call(void *ctx) {
    const bn_timed_t *t = (const bn_timed_t *)ctx;
    if (t->dir) bn_backward(t->l, t->g, 0.0f);
    else bn_forward(t->l, t->g, 1);
}

/* Median milliseconds of the layer's training forward (dir 0) or backward (1) as set up now, on its own buffers
 * (whose contents nothing reads before the first step writes them); the running statistics go to stats (2 c
 * floats) and the input gradients are overwritten, so the model's state and blends are left as they were. */
static float bn_time(layer_t *l, gpu_t *g, int dir, float *stats) {
    float *state = l->state, b0 = l->dx_beta[0], b1 = l->dx_beta[1];
    l->state = stats;
    l->dx_beta[0] = l->dx_beta[1] = 0.0f;
    if (dir) bn_forward(l, g, 1);   /* the statistics and the mask the backward reads */
    bn_timed_t t = {l, g, dir};
    float ms = timing_call_ms(g->stream, 5, bn_timed_call, &t);
    l->state = state;
    l->dx_beta[0] = b0;
    l->dx_beta[1] = b1;
    return ms;
}

/* Whether training may run impl: every way the kernels can run but the persistent one. On an H200 a ResNet-18 run
 * whose setup had measured the persistent way was refused its cooperative launch in the first epoch ("too many blocks
 * in cooperative launch"), and so was a pipeline stage; until that is understood on a GPU, the persistent way is
 * tested and measured (tests/gpu/test_bn_nhwc.cu, tools/bn_bench.cu) but never chosen, also from a cache line. */
static int bn_trains(const bn_nhwc_t *k, int impl) { return impl != BN_NHWC_PERSIST && bn_nhwc_impl_ok(k, impl); }

/* The fastest of our kernels' ways for each direction (BN_WAY_OWN + impl into way[]), measured; returns the sum. */
static float bn_own_pick(layer_t *l, gpu_t *g, bn_priv_t *p, float *stats, int way[2]) {
    float best[2] = {INFINITY, INFINITY};
    for (int i = 0; i < BN_NHWC_IMPLS; i++) {
        if (!bn_trains(&p->k, i)) continue;
        bn_nhwc_set_impl(&p->k, 0, i);
        bn_nhwc_set_impl(&p->k, 1, i);
        for (int d = 0; d < 2; d++) {
            float t = bn_time(l, g, d, stats);
            if (t < best[d]) {
                best[d] = t;
                way[d] = BN_WAY_OWN + i;
            }
        }
    }
    return best[0] + best[1];
}

/* The ways this layer trains: from the algorithm cache where SCALING_BN=auto has measured its shape before (in this
 * process or a --conv-cache file), else measured now (auto: ours against cuDNN's; own: our ways only) and recorded. */
static void bn_choose(layer_t *l, gpu_t *g, bn_priv_t *p, int way[2], size_t *ws) {
    shape_t in = l->in_shape[0];
    int key[12] = {in.n, in.h, in.w, in.c, CONV_KEY_BN, l->cfg.fuse, l->dx[0] != NULL, l->fold_b != NULL,
                   0, 0, 0, (int)g->math};
    conv_algo_t *e = NULL;
    if (g->bn == GPU_BN_AUTO) {
        e = conv_algo_add(&g->conv_algos, &g->n_conv_algos, &g->cap_conv_algos, key);
        if (!e) check_fail(__FILE__, __LINE__, "algorithm cache", "out of host memory");
        if (e->fwd >= 0 && e->bwd_data >= 0) {
            way[0] = e->fwd;
            way[1] = e->bwd_data;
            return;
        }
    }
    float *stats;
    CHECK_ALLOC(cudaMalloc((void **)&stats, 2 * (size_t)in.c * sizeof(float)));
    float own = bn_own_pick(l, g, p, stats, way);
    if (g->bn == GPU_BN_AUTO) {
        p->own = 0;
        *ws = bn_cudnn_setup(l, g, p);
        if (bn_time(l, g, 0, stats) + bn_time(l, g, 1, stats) < own) way[0] = way[1] = BN_WAY_CUDNN;
        p->own = 1;
        e->fwd = way[0];
        e->bwd_data = way[1];
        g->bn_searches++;   /* --conv-cache says when a run measured (engine/gpu.h) */
    }
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    CHECK_CUDA(cudaFree(stats));
}

static size_t bn_setup(layer_t *l, gpu_t *g) {
    bn_destroy(l);
    bn_priv_t *p = (bn_priv_t *)calloc(1, sizeof *p);
    if (!p) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    l->priv = p;
    shape_t in = l->in_shape[0];
    /* 2-byte layers: x, y and their gradients in bf16 or fp16; scale, bias, statistics and their gradients in fp32
     * (the descriptor cuDNN derives is fp32 for such data), as autocast keeps batch norm. */
    p->x_desc = cudnn_nhwc_desc(in, l->dtype);
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&p->p_desc));
    CHECK_CUDNN(cudnnDeriveBNTensorDescriptor(p->p_desc, p->x_desc, CUDNN_BATCHNORM_SPATIAL));
    if (l->fold_b) {   // our training kernels add the folded bias themselves; inference and cuDNN read this
        CHECK_ALLOC(cudaMalloc((void **)&p->shift, (size_t)in.c * sizeof(float)));
        bn_shift_update(l, g, p);   /* the probe below runs forward and backward with it */
    }
    if (l->cfg.fuse != BN_FUSE_NONE) {
        CHECK_CUDNN(cudnnCreateActivationDescriptor(&p->act));
        CHECK_CUDNN(cudnnSetActivationDescriptor(p->act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    if (g->bn == GPU_BN_CUDNN) return bn_cudnn_setup(l, g, p);
    /* Ours, every shape, type and fuse mode (no dpre, reserve or sink needed), measured against cuDNN's under auto */
    p->own = 1;
    bn_nhwc_init(&p->k, (long long)in.n * in.h * in.w, in.c, l->dtype, l->cfg.fuse, g->device, g->stream);
    int way[2] = {BN_WAY_OWN + p->k.impl[0], BN_WAY_OWN + p->k.impl[1]};
    size_t ws = 0;
    bn_choose(l, g, p, way, &ws);
    if (way[0] == BN_WAY_CUDNN) {
        bn_nhwc_free(&p->k);
        p->own = 0;
        return p->scratch ? ws : bn_cudnn_setup(l, g, p);
    }
    bn_cudnn_release(p);
    for (int d = 0; d < 2; d++)   /* a recorded way this device cannot run (another's cache line): the ring's */
        bn_nhwc_set_impl(&p->k, d, bn_trains(&p->k, way[d] - BN_WAY_OWN) ? way[d] - BN_WAY_OWN : p->k.impl[d]);
    char d[160];
    bn_nhwc_describe(&p->k, d, sizeof d);
    snprintf(p->path, sizeof p->path, "own NHWC (%s)", d);
    return 0;
}

/* The parts of y = relu(bn + x1) that cuDNN did not fuse, in place on y. */
static void bn_finish_forward(const layer_t *l, gpu_t *g, const bn_priv_t *p, int cudnn_fused) {
    if (l->cfg.fuse == BN_FUSE_NONE || cudnn_fused) return;
    if (bn_has_add(l)) CHECK_CUDNN(cudnnAddTensor(g->cudnn, &CU_ONE, p->x_desc, l->x[1], &CU_ONE, p->x_desc, l->y));
    CHECK_CUDNN(cudnnActivationForward(g->cudnn, p->act, &CU_ONE, p->x_desc, l->y, &CU_ZERO, p->x_desc, l->y));
}

static void bn_forward(layer_t *l, gpu_t *g, int training) {
    const bn_priv_t *p = (const bn_priv_t *)l->priv;
    int c = l->in_shape[0].c;
    float *run_mean = l->state, *run_var = l->state + c;
    // (N, H, W, C) -> (N, H, W, C), statistics per C
    if (!training || !p->own) bn_shift_update(l, g, p);
    if (!training) {
        CHECK_CUDNN(cudnnBatchNormalizationForwardInference(g->cudnn, CUDNN_BATCHNORM_SPATIAL, &CU_ONE, &CU_ZERO,
                                                            p->x_desc, l->x[0], p->x_desc, l->y, p->p_desc, l->w,
                                                            bn_shift(l, p), run_mean, run_var, BN_EPS));
        bn_finish_forward(l, g, p, 0);
    } else if (p->own) {
        bn_nhwc_forward(&p->k, l->x[0], bn_has_add(l) ? l->x[1] : NULL, l->y, l->w, l->w + c, l->fold_b, run_mean,
                        run_var, BN_EPS, BN_MOMENTUM, g->stream);
    } else if (p->ex) {
        CHECK_CUDNN(bn_forward_ex(l, g, p, run_mean, run_var));
        bn_finish_forward(l, g, p, bn_cudnn_act(p));
    } else {
        CHECK_CUDNN(cudnnBatchNormalizationForwardTraining(g->cudnn, p->mode, &CU_ONE, &CU_ZERO, p->x_desc, l->x[0],
                                                           p->x_desc, l->y, p->p_desc, l->w, bn_shift(l, p), BN_MOMENTUM,
                                                           run_mean, run_var, BN_EPS, p->scratch, p->scratch + c));
        bn_finish_forward(l, g, p, 0);
    }
}

/* Uses the batch statistics saved by the last training forward. */
static void bn_backward(layer_t *l, gpu_t *g, float dw_beta) {
    const bn_priv_t *p = (const bn_priv_t *)l->priv;
    int c = l->in_shape[0].c;
    if (p->own) {
        int add = bn_has_add(l);
        bn_nhwc_backward(&p->k, l->x[0], l->y, l->dy, l->dx[0], l->dx[0] ? l->dx_beta[0] : 0.0f,
                         add ? l->dx[1] : NULL, add ? l->dx_beta[1] : 0.0f, l->w, l->dw, l->dw + c,
                         p->shift ? l->fold_db : NULL, dw_beta, g->stream);
        return;
    }
    void *dx = l->dx[0] ? l->dx[0] : p->dx_sink;
    float dx_beta = l->dx[0] ? l->dx_beta[0] : 0.0f;
    const void *dy = l->dy;
    int fused = p->ex && bn_cudnn_act(p);
    if (l->cfg.fuse != BN_FUSE_NONE && !fused) {
        /* ReLU backward by hand: y = relu(pre) > 0 exactly where pre > 0, so y serves as the activation input. */
        CHECK_CUDNN(cudnnActivationBackward(g->cudnn, p->act, &CU_ONE, p->x_desc, l->y, p->x_desc, l->dy, p->x_desc,
                                            l->y, &CU_ZERO, p->x_desc, p->dpre));
        dy = p->dpre;
    }
    /* With cuDNN's fused add, dz goes to dx1 directly when nothing else has written dx1 yet, else via dpre. */
    void *dz = NULL;
    if (fused && bn_cudnn_add(p)) dz = l->dx_beta[1] == 0.0f ? l->dx[1] : p->dpre;
    if (p->ex) {
        CHECK_CUDNN(bn_backward_ex(l, g, p, dy, dx, dz, dx_beta, dw_beta));
    } else {
        CHECK_CUDNN(cudnnBatchNormalizationBackward(g->cudnn, p->mode, &CU_ONE, &dx_beta, &CU_ONE, &dw_beta, p->x_desc,
                                                    l->x[0], p->x_desc, dy, p->x_desc, dx, p->p_desc, l->w, l->dw,
                                                    l->dw + c, BN_EPS, p->scratch, p->scratch + c));
    }
    if (bn_has_add(l) && dz != l->dx[1]) {   // d x1 = d pre-activation, overwriting or accumulating
        const void *src = fused ? dz : p->dpre;
        if (l->dx_beta[1] == 0.0f)
            CHECK_CUDA(cudaMemcpyAsync(l->dx[1], src, layer_bytes(l, l->in_shape[1]), cudaMemcpyDeviceToDevice,
                                       g->stream));
        else
            CHECK_CUDNN(cudnnAddTensor(g->cudnn, &CU_ONE, p->x_desc, src, &l->dx_beta[1], p->x_desc, l->dx[1]));
    }
    /* The folded bias shifts the output as beta does: its gradient is beta's, accumulated alike (dw_beta). */
    if (p->shift)
        CHECK_CUDA(cudaMemcpyAsync(l->fold_db, l->dw + c, (size_t)c * sizeof(float), cudaMemcpyDeviceToDevice,
                                   g->stream));
}

/* What bn_setup allocates: our kernels' scratch (bn_nhwc_scratch_bytes), or cuDNN's path's statistics, the input
 * gradient's sink where the input has none and the pre-activation gradient where a ReLU is fused (the folded bias's
 * shift and cuDNN's reserve, sized by cuDNN at setup, are left out: a lower bound); under auto, measured at setup,
 * the larger. */
static size_t bn_own_bytes(const layer_t *l, const gpu_t *g, int needs_dx, dtype_t t) {
    shape_t in = l->in_shape[0];
    size_t own = bn_nhwc_scratch_bytes((long long)in.n * in.h * in.w, in.c, t, l->cfg.fuse);
    size_t act = shape_numel(in) * dtype_size(t);
    size_t cudnn = bn_stats_bytes(in.c) + (needs_dx ? 0 : act) + (l->cfg.fuse != BN_FUSE_NONE ? act : 0);
    return g->bn == GPU_BN_OWN ? own : g->bn == GPU_BN_CUDNN ? cudnn : own > cudnn ? own : cudnn;
}

extern "C" const char *layer_bn_path(const layer_t *l) {
    const bn_priv_t *p = (const bn_priv_t *)l->priv;
    return p ? p->path : "not set up";
}

extern "C" const float *layer_bn_saved(const layer_t *l) {
    const bn_priv_t *p = (const bn_priv_t *)l->priv;
    if (!p) return NULL;
    return p->own ? bn_nhwc_saved(&p->k) : p->scratch;
}

extern "C" int layer_bn_force(layer_t *l, int fwd, int bwd) {
    bn_priv_t *p = (bn_priv_t *)l->priv;
    if (!p || !p->own || !bn_nhwc_impl_ok(&p->k, fwd) || !bn_nhwc_impl_ok(&p->k, bwd)) return -1;
    bn_nhwc_set_impl(&p->k, 0, fwd);
    bn_nhwc_set_impl(&p->k, 1, bwd);
    char d[160];
    bn_nhwc_describe(&p->k, d, sizeof d);
    snprintf(p->path, sizeof p->path, "own NHWC (%s)", d);
    return 0;
}

const layer_ops_t layer_bn_ops = {
    "bn", bn_out_shape, bn_param_count, bn_state_count, bn_init,
    bn_setup, bn_forward, bn_backward, bn_destroy, bn_own_bytes, NULL, NULL,
};
