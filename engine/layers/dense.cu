/* dense.cu — fully connected layer y = x W^T + b through cuBLAS, W (out, in) row-major, in = H*W*C of the input.
 * Any (N, H, W, C) input is read as (N, in) rows in NHWC order; the output is (N, 1, 1, out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "cudnn_util.h"

/* cuBLAS is column-major: a row-major (rows, cols) matrix is its column-major (cols, rows) transpose, so
 * x (N, in) is X^T with ld = in, W (out, in) is W^T with ld = in, y (N, out) is Y^T with ld = out. */

static int dense_in(const layer_t *l) { return (int)shape_per_sample(l->in_shape[0]); }

static int dense_out_shape(const layer_t *l, shape_t *out, char *err, size_t errlen) {
    shape_t in = l->in_shape[0];
    if (l->n_in != 1) { snprintf(err, errlen, "dense takes 1 input, got %d", l->n_in); return -1; }
    if (l->cfg.cout < 1 || in.n < 1 || shape_per_sample(in) < 1) {
        snprintf(err, errlen, "dense needs cout >= 1 and a non-empty input (got cout=%d, input (%d, %d, %d, %d))",
                 l->cfg.cout, in.n, in.h, in.w, in.c);
        return -1;
    }
    out->n = in.n;
    out->h = 1;
    out->w = 1;
    out->c = l->cfg.cout;
    return 0;
}

static size_t dense_param_count(const layer_t *l) { return ((size_t)dense_in(l) + 1) * (size_t)l->cfg.cout; }
static size_t dense_state_count(const layer_t *l) { (void)l; return 0; }

static void dense_init(const layer_t *l, float *params, float *state, init_t init, rng_t *rng) {
    (void)state;
    int in = dense_in(l), out = l->cfg.cout;
    size_t nw = (size_t)in * out;
    double a = sqrt(6.0 / ((double)in + out));   // Glorot: fan_in = in, fan_out = out
    double u = 1.0 / sqrt((double)in);   // nn.Linear's default: kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(in), ..)
    for (size_t i = 0; i < nw; i++)
        params[i] = init == INIT_XAVIER ? (float)((2.0 * rng_uniform(rng) - 1.0) * a)
                  : init == INIT_KAIMING ? (float)((2.0 * rng_uniform(rng) - 1.0) * u) : (float)(0.01 * rng_normal(rng));
    for (int i = 0; i < out; i++) params[nw + i] = init == INIT_KAIMING ? (float)((2.0 * rng_uniform(rng) - 1.0) * u) : 0.0f;
}

static size_t dense_setup(layer_t *l, gpu_t *g) {
    layer_check_lp(l, "dense_setup");
    gpu_ones_reserve(g, l->in_shape[0].n);   // bias broadcast and reduction run through GEMM/GEMV with ones(N)
    return 0;
}

/* Operands in the layer's type (2-byte layers read the weights' 2-byte copy); parameter gradients always in fp32. */
static void dense_forward(layer_t *l, gpu_t *g, int training) {
    (void)training;
    int n = l->in_shape[0].n, in = dense_in(l), out = l->cfg.cout;
    dtype_t t = l->dtype;
    // Y^T (out, N) = b (out, 1) . ones (1, N), then += W (out, in) . X^T (in, N): the sum is rounded once into Y
    blas_gemm(g, CUBLAS_OP_N, CUBLAS_OP_N, out, n, 1, t, param_at(l, (size_t)in * out), out, blas_ones(g, t), 1, 0.0f,
              t, l->y, out);
    blas_gemm(g, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, t, param_at(l, 0), in, l->x[0], in, 1.0f, t, l->y, out);
}

/* The two GEMMs of the parameter gradients: they read x and dy only (a zero-bubble pipeline defers them). */
static void dense_backward_weight(layer_t *l, gpu_t *g, float dw_beta) {
    int n = l->in_shape[0].n, in = dense_in(l), out = l->cfg.cout;
    dtype_t t = l->dtype;
    // dW^T (in, out) = X^T (in, N) . dY (N, out)
    blas_gemm(g, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, t, l->x[0], in, l->dy, out, dw_beta, DTYPE_FP32, l->dw, in);
    // db (out) = dY^T (out, N) . ones (N)
    blas_bias_grad(g, t, l->dy, out, n, dw_beta, l->dw + (size_t)in * out);
}

static void dense_backward_data(layer_t *l, gpu_t *g, float dw_beta) {
    (void)dw_beta;
    if (!l->dx[0]) return;
    int n = l->in_shape[0].n, in = dense_in(l), out = l->cfg.cout;
    // dX^T (in, N) = W^T (in, out) . dY^T (out, N)
    blas_gemm(g, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, l->dtype, param_at(l, 0), in, l->dy, out, l->dx_beta[0],
              l->dtype, l->dx[0], in);
}

static void dense_backward(layer_t *l, gpu_t *g, float dw_beta) {
    dense_backward_weight(l, g, dw_beta);
    dense_backward_data(l, g, dw_beta);
}

static void dense_destroy(layer_t *l) { (void)l; }   // nothing private: cuBLAS needs no descriptors

const layer_ops_t layer_dense_ops = {
    "dense", dense_out_shape, dense_param_count, dense_state_count, dense_init,
    dense_setup, dense_forward, dense_backward, dense_destroy, NULL, dense_backward_data, dense_backward_weight,
};
