/* test_bottleneck.cu — one ResNet v1.5 bottleneck block with its projection (engine/models/resnet_bottleneck.c),
 * behind a 3x3 convolution so the block's input has a gradient, run through the model against a CPU double-precision
 * chain of the layer references (layer_ref.h) in fp32, tf32 (cudnnFind's choices, then backend engine configs
 * forced), bf16 and fp16: the block's output, the gradient of its input and every parameter gradient. Negative control:
 * the same output against the ResNet v1 block (stride on the first 1x1 instead of the 3x3) must fail the tolerance.
 * Run: ./test_bottleneck [seed] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "gpu_test.h"
#include "bf16_ref.h"
#include "fp16_ref.h"
#include "layer_ref.h"
#include "engine/model.h"
#include "engine/gpu.h"
#include "engine/check.h"
#include "engine/reduce.h"
#include "dev_io.h"

/* fp32: every layer alone meets 1e-4 with errors near 1e-7 (test_layers); a chain of nine stays far below.
 * tf32: 10-bit products in five convolutions along the longest path, each within test_layers' 5e-3 alone. The
 *   reference cannot round as TF32 products do, so a pre-activation near 0 may take the other side of a ReLU: in
 *   two seeds of six one element did (H200, backend configs), and its O(1) gradient, spread by batch norm's
 *   backward over its channel, put every gradient 5-7 % off while the output stayed within 6e-4. So in tf32 the
 *   gradients are checked against the chain fed, layer by layer, the GPU's own stored activations and incoming
 *   gradients: each layer's error alone, the block's wiring (which tensor each layer reads, gradients summed over
 *   readers) still checked. cudnnFind alone took FMA kernels at these shapes (errors near 3e-7): the forced pass
 *   makes sure TF32 ones run.
 * bf16: each stored activation and gradient is rounded to 8 bits (2^-8 relative at most); the longest path stores
 * eight of them, so 8 x 2^-8 bounds the error of the output and of the gradients (test_layers' TOL_BF16 per
 * rounding stage). The v1 control differs by O(1).
 * fp16: the same eight stored roundings at 11 bits (2^-11 relative for normal values; the values here are O(1) and
 *   their gradients far above fp16's normal range's 2^-14, no loss scale is needed), so 8 x 2^-11. */
#define TOL_FP32 1e-4
#define TOL_TF32 1e-2
#define TOL_BF16 (8 * BF16_U + 1e-4)
#define TOL_FP16 (8 * FP16_U + 1e-4)

enum { N = 4, H = 10, CIN = 8, C0 = 16, WIDTH = 8 };


static void fill(rng_t *r, float *h, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; i++) h[i] = (float)(lo + (hi - lo) * rng_uniform(r));
}

/* The network under test: x -> pre (3x3 conv) -> bottleneck(stride 2, projection). v1 builds the ResNet v1 block
 * (the stride on conv1) for the control; its parameters have the same layout. */
static void build(model_t *m, int v1) {
    model_begin(m, v1 ? "block-v1" : "block", N, (shape_t){N, H, H, CIN}, 10);
    int t = model_add(m, &layer_conv_ops, "pre", m->input, -1, (layer_cfg_t){.k = 3, .stride = 1, .pad = 1, .cout = C0});
    if (!v1) {
        t = model_add_bottleneck(m, t, "b", WIDTH, 2, 1);
    } else {
        int x = t;
        int y = model_add(m, &layer_conv_ops, "b.conv1", x, -1, (layer_cfg_t){.k = 1, .stride = 2, .cout = WIDTH});
        y = model_add(m, &layer_bn_ops, "b.bn1", y, -1, (layer_cfg_t){.fuse = BN_FUSE_RELU});
        y = model_add(m, &layer_conv_ops, "b.conv2", y, -1, (layer_cfg_t){.k = 3, .stride = 1, .pad = 1, .cout = WIDTH});
        y = model_add(m, &layer_bn_ops, "b.bn2", y, -1, (layer_cfg_t){.fuse = BN_FUSE_RELU});
        y = model_add(m, &layer_conv_ops, "b.conv3", y, -1, (layer_cfg_t){.k = 1, .stride = 1, .cout = 4 * WIDTH});
        int sc = model_add(m, &layer_conv_ops, "b.proj", x, -1, (layer_cfg_t){.k = 1, .stride = 2, .cout = 4 * WIDTH});
        sc = model_add(m, &layer_bn_ops, "b.proj.bn", sc, -1, (layer_cfg_t){0});
        t = model_add(m, &layer_bn_ops, "b.bn3", y, sc, (layer_cfg_t){.fuse = BN_FUSE_ADD_RELU});
    }
    model_end(m, t);
}

static ref_fn ref_of(const layer_t *l) {
    if (l->ops == &layer_conv_ops) return ref_conv;
    if (l->ops == &layer_bn_ops) return l->cfg.fuse == BN_FUSE_NONE ? ref_bn : ref_bn_fused;
    if (l->ops == &layer_maxpool_ops) return ref_maxpool;
    if (l->ops == &layer_gap_ops) return ref_gap;
    if (l->ops == &layer_dense_ops) return ref_dense;
    fprintf(stderr, "no reference for layer %s (%s)\n", l->label, l->ops->name);
    exit(1);
}

/* The CPU chain in double over m's layers (training mode), activations and gradients stored in t as the GPU stores
 * them. x: the input; params: flat, at the layers' offsets; dy: the gradient of the last tensor. Fills val (double,
 * per tensor), dx of every tensor but the input, and dw (flat). fed (NULL: none): the GPU's activations and
 * gradients per tensor (float), which each layer then reads in place of the chain's own. */
typedef struct { double **val, **grad, *dw; } chain_t;
typedef struct { float **val, **grad; } fed_t;

static chain_t ref_chain(const model_t *m, const float *x, const float *params, const float *dy, dtype_t t,
                         const fed_t *fed) {
    chain_t c;
    c.val = (double **)calloc(m->n_tensors, sizeof(double *));
    c.grad = (double **)calloc(m->n_tensors, sizeof(double *));
    float **vf = (float **)calloc(m->n_tensors, sizeof(float *));
    c.dw = dalloc(m->n_params_all);
    float *state = falloc(1024);   /* running statistics: training normalises with the batch's, never these */
    for (int i = 0; i < m->n_tensors; i++) {
        size_t n = shape_numel(m->tensors[i].shape);
        c.val[i] = dalloc(n);
        c.grad[i] = dalloc(n);
        vf[i] = falloc(n);
    }
    memcpy(vf[m->input], x, shape_numel(m->tensors[m->input].shape) * sizeof(float));
    size_t big = 0;
    for (int i = 0; i < m->n_tensors; i++)
        if (shape_numel(m->tensors[i].shape) > big) big = shape_numel(m->tensors[i].shape);
    float *zero = falloc(big), *dyf = falloc(big);
    double *junk = dalloc(big), *sjunk = dalloc(1024), *sjunk2 = dalloc(1024), *wjunk = dalloc(m->n_params_all);
    for (int i = 0; i < m->n_layers; i++) {   /* forward: y of each layer, stored as the GPU stores it */
        const layer_t *l = &m->layers[i];
        ref_t r;
        memset(&r, 0, sizeof r);
        for (int k = 0; k < l->n_in; k++) r.x[k] = fed ? fed->val[l->in[k]] : vf[l->in[k]];
        r.w = params + l->param_offset;
        r.state = state;
        r.dy = zero;
        r.y = c.val[l->out];
        r.dw = wjunk;
        r.state_out = sjunk;
        r.state_alt = sjunk2;
        ref_of(l)(l, 1, &r);
        for (size_t j = 0; j < shape_numel(l->out_shape); j++) vf[l->out][j] = round_as((float)c.val[l->out][j], t);
    }
    int last = m->layers[m->n_layers - 1].out;
    for (size_t j = 0; j < shape_numel(m->tensors[last].shape); j++) c.grad[last][j] = dy[j];
    for (int i = m->n_layers - 1; i >= 0; i--) {   /* backward: every reader's gradient summed in double */
        const layer_t *l = &m->layers[i];
        for (size_t j = 0; j < shape_numel(l->out_shape); j++)
            dyf[j] = fed ? fed->grad[l->out][j] : round_as((float)c.grad[l->out][j], t);
        ref_t r;
        memset(&r, 0, sizeof r);
        for (int k = 0; k < l->n_in; k++) {
            r.x[k] = fed ? fed->val[l->in[k]] : vf[l->in[k]];
            r.dx[k] = l->in[k] == m->input ? NULL : c.grad[l->in[k]];
        }
        r.w = params + l->param_offset;
        r.state = state;
        r.dy = dyf;
        r.y = junk;
        r.dw = c.dw + l->param_offset;
        r.state_out = sjunk;
        r.state_alt = sjunk2;
        ref_of(l)(l, 1, &r);
    }
    for (int i = 0; i < m->n_tensors; i++) free(vf[i]);
    free(vf); free(state); free(zero); free(dyf); free(junk); free(sjunk); free(sjunk2); free(wjunk);
    return c;
}

static void chain_free(const model_t *m, chain_t *c) {
    for (int i = 0; i < m->n_tensors; i++) { free(c->val[i]); free(c->grad[i]); }
    free(c->val); free(c->grad); free(c->dw);
}

static double report(const char *math, const char *what, const float *got, const double *want, size_t n, double tol,
                     int expect_fail) {
    double e = rel_err_f(got, want, n);
    int ok = expect_fail ? !(e <= tol) : e <= tol;
    printf("%-4s [%s] %-26s rel_err %.3e  tol %.1e%s (n=%zu)\n", ok ? "ok" : "FAIL", math, what, e, tol,
           expect_fail ? " (must exceed)" : "", n);
    EXPECT(ok, "[%s] %s: rel_err %.3e vs tol %.1e%s", math, what, e, tol, expect_fail ? " (control)" : "");
    return e;
}

/* Downloads every tensor's activation and gradient (NULL where it has none) as float. */
static fed_t fed_download(const model_t *m, dtype_t t) {
    fed_t f = {(float **)calloc(m->n_tensors, sizeof(float *)), (float **)calloc(m->n_tensors, sizeof(float *))};
    for (int i = 0; i < m->n_tensors; i++) {
        size_t n = shape_numel(m->tensors[i].shape);
        f.val[i] = falloc(n);
        download(f.val[i], m->tensors[i].val, n, t);
        if (m->tensors[i].grad) {
            f.grad[i] = falloc(n);
            download(f.grad[i], m->tensors[i].grad, n, t);
        }
    }
    return f;
}

static void fed_free(const model_t *m, fed_t *f) {
    for (int i = 0; i < m->n_tensors; i++) { free(f->val[i]); free(f->grad[i]); }
    free(f->val); free(f->grad);
}

/* force_backend: convolutions on backend engine configs wherever one runs (SCALING_CONV=backend); else the run's. */
static void run(math_t math, int force_backend, rng_t *rng) {
    char mname[32];
    snprintf(mname, sizeof mname, "%s%s", gpu_math_name(math), force_backend ? " backend" : "");
    double tol = math == MATH_FP32 ? TOL_FP32 : math == MATH_TF32 ? TOL_TF32 : math == MATH_BF16 ? TOL_BF16 : TOL_FP16;
    gpu_t g;
    gpu_init(&g, 0, math);
    if (force_backend) g.conv = GPU_CONV_BACKEND;
    model_t *m = (model_t *)calloc(1, sizeof *m), *v1 = (model_t *)calloc(1, sizeof *v1);
    build(m, 0);
    build(v1, 1);
    EXPECT(m->n_params_all == v1->n_params_all, "v1 control: parameter layout differs");
    EXPECT(model_alloc(m, &g) == 0, "model_alloc");
    dtype_t t = m->act_dtype;

    /* Parameters: convolution weights U(-1, 1)/sqrt(fan-in) (exact in the 2-byte type: the GPU reads the copy),
     * BN gamma U(0.5, 1.5), beta U(-0.5, 0.5); the alignment gaps stay 0. */
    float *hp = falloc(m->n_params_all);
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        float *p = hp + l->param_offset;
        if (l->ops == &layer_conv_ops) {
            double a = 1.0 / sqrt((double)l->cfg.k * l->cfg.k * l->in_shape[0].c);
            fill(rng, p, l->n_params, -a, a);
            for (size_t j = 0; j < l->n_params; j++) p[j] = round_as(p[j], t);
        } else if (l->ops == &layer_bn_ops) {
            int C = l->in_shape[0].c;
            fill(rng, p, C, 0.5, 1.5);
            fill(rng, p + C, C, -0.5, 0.5);
        }
    }
    CHECK_CUDA(cudaMemcpy(m->params, hp, m->n_params * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(m->state, 0, m->n_state * sizeof(float)));
    CHECK_CUDA(cudaDeviceSynchronize());   // the legacy stream's copies before the non-blocking stream's cast reads them
    if (m->params_lp) reduce_cast(m->params_lp, t, m->params, m->n_params, g.stream);
    size_t nx = shape_numel(m->tensors[m->input].shape);
    int out = m->layers[m->n_layers - 1].out, pre = m->layers[0].out;
    size_t ny = shape_numel(m->tensors[out].shape), npre = shape_numel(m->tensors[pre].shape);
    float *hx = falloc(nx), *hdy = falloc(ny), *got = falloc(npre > ny ? npre : ny), *gw = falloc(m->n_params_all);
    fill(rng, hx, nx, -1, 1);
    fill(rng, hdy, ny, -1, 1);
    for (size_t j = 0; j < nx; j++) hx[j] = round_as(hx[j], t);
    for (size_t j = 0; j < ny; j++) hdy[j] = round_as(hdy[j], t);
    upload(m->tensors[m->input].val, hx, nx, t);
    upload(m->tensors[out].grad, hdy, ny, t);

    model_forward(m, &g, 1);
    model_backward(m, &g, 0.0f);
    CHECK_CUDA(cudaStreamSynchronize(g.stream));
    CHECK_CUDA(cudaGetLastError());

    chain_t want = ref_chain(m, hx, hp, hdy, t, NULL);
    download(got, m->tensors[out].val, ny, t);
    report(mname, "block y", got, want.val[out], ny, tol, 0);
    chain_t ctrl = ref_chain(v1, hx, hp, hdy, t, NULL);
    report(mname, "block y vs v1 block", got, ctrl.val[out], ny, tol, 1);
    if (math == MATH_TF32) {   /* gradients against the fed chain (see TOL_TF32) */
        fed_t fed = fed_download(m, t);
        chain_free(m, &want);
        want = ref_chain(m, hx, hp, hdy, t, &fed);
        fed_free(m, &fed);
    }
    download(got, m->tensors[pre].grad, npre, t);
    report(mname, "block dx (input gradient)", got, want.grad[pre], npre, tol, 0);
    CHECK_CUDA(cudaMemcpy(gw, m->grads, m->n_params * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        char what[48];
        snprintf(what, sizeof what, "dw %s", l->label);
        report(mname, what, gw + l->param_offset, want.dw + l->param_offset, l->n_params, tol, 0);
    }
    if (force_backend) {   /* else these checks could pass on cudnnFind's choices alone */
        int on_be = 0;
        for (int i = 0; i < g.n_conv_algos; i++)
            for (int d = 0; d < 3; d++) on_be += g.conv_algos[i].be[d].engine >= 0;
        printf("# %s: %d convolution directions on backend engine configs\n", mname, on_be);
        EXPECT(on_be > 0, "[%s] no convolution ran on a backend engine config", mname);
    }
    chain_free(m, &want);
    chain_free(v1, &ctrl);
    model_free(m);
    free(m); free(v1); free(hp); free(hx); free(hdy); free(got); free(gw);
    gpu_free(&g);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    gpu_test_require(1);
    unsigned long long seed = gpu_test_seed(argc, argv, "test_bottleneck");
    rng_t rng;
    rng_seed(&rng, seed);
    run(MATH_FP32, 0, &rng);
    run(MATH_TF32, 0, &rng);
    run(MATH_TF32, 1, &rng);
    run(MATH_BF16, 0, &rng);
    run(MATH_FP16, 0, &rng);
    printf("# seed %llu\n", seed);
    return test_summary();
}
