/* bn.cu — spatial batch normalisation over C for NHWC activations through cuDNN (eps 1e-5, momentum 0.1 as in
 * PyTorch). Training normalises with batch statistics and updates the running ones; inference uses the running ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cudnn_util.h"

/* SPATIAL_PERSISTENT has fast NHWC kernels but is documented as possibly overflowing for some inputs;
 * 0 forces the classic SPATIAL path everywhere. */
#define BN_TRY_PERSISTENT 1
#define BN_EPS 1e-5
/* cuDNN's exponentialAverageFactor: running = 0.9 running + 0.1 batch, the batch variance entering unbiased
 * (x M/(M-1)) as in PyTorch; tests/gpu/test_layers checks both conventions apart. */
#define BN_MOMENTUM 0.1

typedef struct {
    cudnnTensorDescriptor_t x_desc;     // (N, H, W, C): x, y, dx, dy
    cudnnTensorDescriptor_t p_desc;     // (1, C, 1, 1): gamma, beta, means, variances
    cudnnBatchNormMode_t mode;
    int ex;                             // 1: Ex API with SPATIAL_PERSISTENT, 0: classic API with SPATIAL
    float *scratch;                     // (4, C): saved mean, saved 1/sqrt(var+eps), probe running mean, var
    void *reserve;                      // Ex only: what forward leaves for backward
    size_t reserve_bytes;
    size_t ws_fwd, ws_bwd;              // Ex only: bytes of g->workspace
    float *dx_sink;                     // cuDNN always writes dx: a target when the input needs no gradient
    char path[192];                     // what setup chose and why, for tests and logs
} bn_priv_t;

static int bn_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    shape_t in = l->in_shape[0];
    if (l->n_in != 1) { snprintf(err, errlen, "bn takes 1 input, got %d", l->n_in); return -1; }
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

static cudnnStatus_t bn_forward_ex(const layer_t *l, gpu_t *g, const bn_priv_t *p, float *run_mean, float *run_var) {
    int c = l->in_shape[0].c;
    return cudnnBatchNormalizationForwardTrainingEx(
        g->cudnn, p->mode, CUDNN_BATCHNORM_OPS_BN, &CU_ONE, &CU_ZERO, p->x_desc, l->x[0], NULL, NULL, p->x_desc, l->y,
        p->p_desc, l->w, l->w + c, BN_MOMENTUM, run_mean, run_var, BN_EPS, p->scratch, p->scratch + c, NULL,
        g->workspace, p->ws_fwd, p->reserve, p->reserve_bytes);
}

static cudnnStatus_t bn_backward_ex(const layer_t *l, gpu_t *g, const bn_priv_t *p, float *dx, float dx_beta,
                                    float dw_beta) {
    int c = l->in_shape[0].c;
    return cudnnBatchNormalizationBackwardEx(
        g->cudnn, p->mode, CUDNN_BATCHNORM_OPS_BN, &CU_ONE, &dx_beta, &CU_ONE, &dw_beta, p->x_desc, l->x[0],
        p->x_desc, l->y, p->x_desc, l->dy, NULL, NULL, p->x_desc, dx, p->p_desc, l->w, l->w + c, l->dw, l->dw + c,
        BN_EPS, p->scratch, p->scratch + c, NULL, g->workspace, p->ws_bwd, p->reserve, p->reserve_bytes);
}

/* A real forward + backward (overwriting and accumulating) on the bound buffers, so an unsupported shape shows up
 * here rather than mid-training. Running statistics go to scratch: the model's state is not touched. */
static cudnnStatus_t bn_probe_ex(const layer_t *l, gpu_t *g, bn_priv_t *p) {
    int c = l->in_shape[0].c;
    cudnnStatus_t s;
    s = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(g->cudnn, p->mode, CUDNN_BATCHNORM_OPS_BN, p->x_desc,
                                                                 NULL, p->x_desc, p->p_desc, NULL, &p->ws_fwd);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    s = cudnnGetBatchNormalizationBackwardExWorkspaceSize(g->cudnn, p->mode, CUDNN_BATCHNORM_OPS_BN, p->x_desc,
                                                          p->x_desc, p->x_desc, NULL, p->x_desc, p->p_desc, NULL,
                                                          &p->ws_bwd);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    s = cudnnGetBatchNormalizationTrainingExReserveSpaceSize(g->cudnn, p->mode, CUDNN_BATCHNORM_OPS_BN, NULL,
                                                             p->x_desc, &p->reserve_bytes);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    if (p->ws_fwd > g->workspace_bytes || p->ws_bwd > g->workspace_bytes) return CUDNN_STATUS_ALLOC_FAILED;
    if (p->reserve_bytes) CHECK_CUDA(cudaMalloc(&p->reserve, p->reserve_bytes));
    float *dx = l->dx[0] ? l->dx[0] : p->dx_sink;
    if ((s = bn_forward_ex(l, g, p, p->scratch + 2 * c, p->scratch + 3 * c)) != CUDNN_STATUS_SUCCESS) return s;
    if ((s = bn_backward_ex(l, g, p, dx, 0.0f, 0.0f)) != CUDNN_STATUS_SUCCESS) return s;
    if ((s = bn_backward_ex(l, g, p, dx, 1.0f, 1.0f)) != CUDNN_STATUS_SUCCESS) return s;
    CHECK_CUDA(cudaStreamSynchronize(g->stream));   // a failing kernel of the probe surfaces here, named
    return CUDNN_STATUS_SUCCESS;
}

// --- layer

static void bn_destroy(layer_t *l) {
    bn_priv_t *p = (bn_priv_t *)l->priv;
    if (!p) return;
    cudnn_tensor_desc_free(&p->x_desc);
    cudnn_tensor_desc_free(&p->p_desc);
    if (p->scratch) CHECK_CUDA(cudaFree(p->scratch));
    if (p->reserve) CHECK_CUDA(cudaFree(p->reserve));
    if (p->dx_sink) CHECK_CUDA(cudaFree(p->dx_sink));
    free(p);
    l->priv = NULL;
}

static void bn_use_classic(bn_priv_t *p) {
    p->ex = 0;
    p->mode = CUDNN_BATCHNORM_SPATIAL;
    p->ws_fwd = p->ws_bwd = 0;
    if (p->reserve) CHECK_CUDA(cudaFree(p->reserve));
    p->reserve = NULL;
    p->reserve_bytes = 0;
}

static size_t bn_setup(layer_t *l, gpu_t *g) {
    bn_destroy(l);
    bn_priv_t *p = (bn_priv_t *)calloc(1, sizeof *p);
    if (!p) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    l->priv = p;
    shape_t in = l->in_shape[0];
    p->x_desc = cudnn_nhwc_desc(in);
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&p->p_desc));
    CHECK_CUDNN(cudnnDeriveBNTensorDescriptor(p->p_desc, p->x_desc, CUDNN_BATCHNORM_SPATIAL));
    CHECK_CUDA(cudaMalloc((void **)&p->scratch, 4 * (size_t)in.c * sizeof(float)));
    if (!l->dx[0]) CHECK_CUDA(cudaMalloc((void **)&p->dx_sink, shape_numel(in) * sizeof(float)));

    bn_use_classic(p);
    snprintf(p->path, sizeof p->path, "SPATIAL (BN_TRY_PERSISTENT 0)");
    if (BN_TRY_PERSISTENT) {
        p->ex = 1;
        p->mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
        cudnnStatus_t s = bn_probe_ex(l, g, p);
        if (s == CUDNN_STATUS_SUCCESS) {
            snprintf(p->path, sizeof p->path, "Ex SPATIAL_PERSISTENT (ws fwd %zu bwd %zu, reserve %zu)", p->ws_fwd,
                     p->ws_bwd, p->reserve_bytes);
        } else {
            char why[128] = "";
            cudnnGetLastErrorString(why, sizeof why);
            snprintf(p->path, sizeof p->path, "SPATIAL (Ex SPATIAL_PERSISTENT: %s%s%s)", cudnnGetErrorString(s),
                     why[0] ? ": " : "", why);
            /* NOT_SUPPORTED is an expected answer for some shapes; anything else deserves a line. */
            if (CUDNN_STATUS_CATEGORY(s) != CUDNN_STATUS_NOT_SUPPORTED)
                fprintf(stderr, "bn %s: falling back to %s\n", cu_label(l), p->path);
            bn_use_classic(p);
        }
    }
    return p->ws_fwd > p->ws_bwd ? p->ws_fwd : p->ws_bwd;
}

static void bn_forward(layer_t *l, gpu_t *g, int training) {
    const bn_priv_t *p = (const bn_priv_t *)l->priv;
    int c = l->in_shape[0].c;
    float *run_mean = l->state, *run_var = l->state + c;
    // (N, H, W, C) -> (N, H, W, C), statistics per C
    if (!training) {
        CHECK_CUDNN(cudnnBatchNormalizationForwardInference(g->cudnn, CUDNN_BATCHNORM_SPATIAL, &CU_ONE, &CU_ZERO,
                                                            p->x_desc, l->x[0], p->x_desc, l->y, p->p_desc, l->w,
                                                            l->w + c, run_mean, run_var, BN_EPS));
    } else if (p->ex) {
        CHECK_CUDNN(bn_forward_ex(l, g, p, run_mean, run_var));
    } else {
        CHECK_CUDNN(cudnnBatchNormalizationForwardTraining(g->cudnn, p->mode, &CU_ONE, &CU_ZERO, p->x_desc, l->x[0],
                                                           p->x_desc, l->y, p->p_desc, l->w, l->w + c, BN_MOMENTUM,
                                                           run_mean, run_var, BN_EPS, p->scratch, p->scratch + c));
    }
}

/* Uses the batch statistics saved by the last training forward. */
static void bn_backward(layer_t *l, gpu_t *g, float dw_beta) {
    const bn_priv_t *p = (const bn_priv_t *)l->priv;
    int c = l->in_shape[0].c;
    float *dx = l->dx[0] ? l->dx[0] : p->dx_sink;
    float dx_beta = l->dx[0] ? l->dx_beta[0] : 0.0f;
    if (p->ex) {
        CHECK_CUDNN(bn_backward_ex(l, g, p, dx, dx_beta, dw_beta));
    } else {
        CHECK_CUDNN(cudnnBatchNormalizationBackward(g->cudnn, p->mode, &CU_ONE, &dx_beta, &CU_ONE, &dw_beta, p->x_desc,
                                                    l->x[0], p->x_desc, l->dy, p->x_desc, dx, p->p_desc, l->w, l->dw,
                                                    l->dw + c, BN_EPS, p->scratch, p->scratch + c));
    }
}

extern "C" const char *layer_bn_path(const layer_t *l) {
    const bn_priv_t *p = (const bn_priv_t *)l->priv;
    return p ? p->path : "not set up";
}

const layer_ops_t layer_bn_ops = {
    "bn", bn_out_shape, bn_param_count, bn_state_count, bn_init,
    bn_setup, bn_forward, bn_backward, bn_destroy,
};
