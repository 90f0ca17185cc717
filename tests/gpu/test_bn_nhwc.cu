/* test_bn_nhwc.cu — our batch-norm training kernels (engine/layers/bn_nhwc.cu, bn_nhwc_persist.cu) through the bn
 * layer, every fuse mode, fp32, bf16 and fp16, each way (two passes through registers or a cp.async ring, one
 * persistent launch, and mixed pairs), against layer_ref.h's CPU double reference: y, running and saved statistics,
 * dx / dx1 / dgamma / dbeta overwritten and accumulated; wrong variants that must fail; bit-identical reruns and
 * CUDA-graph replays; the ReLU mask's bits (2-byte add + ReLU) against y, and which mask the backward read, on either
 * grid. Timing: tools/bn_bench.
 * Run: ./test_bn_nhwc [seed]. Exits 77 without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "gpu_test.h"
#include "bf16_ref.h"
#include "layer_ref.h"
#include "engine/layer.h"
#include "engine/gpu.h"
#include "engine/check.h"
#include "engine/layers/cudnn_util.h"
#include "engine/layers/bn_nhwc.h"
#include "dev_io.h"
#include "ref_check.h"

#define TOL 1e-4                    /* relative L2 error of fp32 results (statistics, dgamma, dbeta; all of fp32) */
#define TOL_BF16 (BF16_U + TOL)     /* y, dx, dx1 in bf16: each rounded once on its way out (test_layers.cu) */
#define TOL_FP16 (FP16_U + TOL)     /* the same in fp16 */

/* The ways tested (forward, backward: bn_nhwc_impl_t): each alone, and pairs that hand the saved statistics and the
 * mask bits from one way to another. */
static const int WAYS[][2] = {{BN_NHWC_REG, BN_NHWC_REG}, {BN_NHWC_RING, BN_NHWC_RING},
                              {BN_NHWC_PERSIST, BN_NHWC_PERSIST}, {BN_NHWC_RING, BN_NHWC_PERSIST},
                              {BN_NHWC_PERSIST, BN_NHWC_REG}};
#define N_WAYS ((int)(sizeof WAYS / sizeof WAYS[0]))

static void fill(rng_t *r, float *h, size_t n, double lo, double hi, dtype_t t) {
    for (size_t i = 0; i < n; i++) {
        h[i] = round_as((float)(lo + (hi - lo) * rng_uniform(r)), t);
    }
}

// --- a bn layer bound to device buffers

typedef struct {
    const char *name;
    shape_t in;
    int fuse;
    int need_dx;        // 0: dx[0] = NULL (an input needing no gradient)
    int misalign;       // 1: every activation pointer one element off 16 bytes: the scalar kernels
    int offset;         // 1: x0 around 3000 with row 0 at 4000, a far outlier (the statistics' pivot)
    int fold;           // 1: a convolution's bias folded into the shift (layer.h: fold_b, fold_db)
} bn_case_t;

typedef struct {
    layer_t l;
    dtype_t t;
    size_t n, c;
    void *base[6];      // x0, x1, y, dy, dx0, dx1 allocations (the layer's pointers may sit one element in)
    float *fold[2];     // the folded bias and its gradient, or NULL
} rig_t;

/* What one forward + backward leaves, on the host: y, dx0, dx1, dgamma|dbeta, running mean|var, saved mean|invstd. */
typedef struct { float *y, *dx0, *dx1, *dw, *state, *saved; } outs_t;

static void outs_alloc(outs_t *o, size_t n, size_t c) {
    o->y = falloc(n); o->dx0 = falloc(n); o->dx1 = falloc(n);
    o->dw = falloc(2 * c); o->state = falloc(2 * c); o->saved = falloc(2 * c);
}
static void outs_free(outs_t *o) {
    free(o->y); free(o->dx0); free(o->dx1); free(o->dw); free(o->state); free(o->saved);
}
static int outs_same(const outs_t *a, const outs_t *b, size_t n, size_t c) {
    return !memcmp(a->y, b->y, n * 4) && !memcmp(a->dx0, b->dx0, n * 4) && !memcmp(a->dx1, b->dx1, n * 4) &&
           !memcmp(a->dw, b->dw, 2 * c * 4) && !memcmp(a->state, b->state, 2 * c * 4) &&
           !memcmp(a->saved, b->saved, 2 * c * 4);
}

static void rig_make(rig_t *r, gpu_t *g, const bn_case_t *c, dtype_t t) {
    memset(r, 0, sizeof *r);
    layer_t *l = &r->l;
    l->ops = &layer_bn_ops;
    l->cfg.fuse = c->fuse;
    snprintf(l->label, sizeof l->label, "%s", c->name);
    l->n_in = c->fuse == BN_FUSE_ADD_RELU ? 2 : 1;
    l->in_shape[0] = l->in_shape[1] = c->in;
    char err[256] = "";
    if (l->ops->out_shape(l, &l->out_shape, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", c->name, err);
        exit(1);
    }
    l->dtype = r->t = t;
    r->n = shape_numel(c->in);
    r->c = (size_t)c->in.c;
    size_t es = dtype_size(t), off = c->misalign ? es : 0;
    void *p[6];
    for (int i = 0; i < 6; i++) {
        CHECK_CUDA(cudaMalloc(&r->base[i], r->n * es + 16));
        p[i] = (char *)r->base[i] + off;
    }
    l->x[0] = p[0];
    l->x[1] = l->n_in == 2 ? p[1] : NULL;
    l->y = p[2];
    l->dy = p[3];
    l->dx[0] = c->need_dx ? p[4] : NULL;
    l->dx[1] = l->n_in == 2 ? p[5] : NULL;
    l->n_params = l->n_state = 2 * r->c;
    CHECK_CUDA(cudaMalloc((void **)&l->w, 2 * r->c * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&l->dw, 2 * r->c * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&l->state, 2 * r->c * sizeof(float)));
    for (int i = 0; c->fold && i < 2; i++) CHECK_CUDA(cudaMalloc((void **)&r->fold[i], r->c * sizeof(float)));
    l->fold_b = r->fold[0];
    l->fold_db = r->fold[1];
    l->ops->setup(l, g);
}

static void rig_free(rig_t *r) {
    r->l.ops->destroy(&r->l);
    for (int i = 0; i < 6; i++) CHECK_CUDA(cudaFree(r->base[i]));
    CHECK_CUDA(cudaFree(r->l.w));
    CHECK_CUDA(cudaFree(r->l.dw));
    CHECK_CUDA(cudaFree(r->l.state));
    for (int i = 0; i < 2; i++) if (r->fold[i]) CHECK_CUDA(cudaFree(r->fold[i]));
}

/* Before a pass: betas (pass 0: dx0 and dw overwrite, dx1 accumulates; pass 1 the other way round), the priors
 * or poison, and the running statistics as they were. */
typedef struct { const float *x0, *x1, *dy, *w, *state, *dx0, *dx1, *dw, *fold_b; } inputs_t;

static void rig_prepare(rig_t *r, const inputs_t *in, int pass) {
    layer_t *l = &r->l;
    float b = (float)pass;
    l->dx_beta[0] = b;
    l->dx_beta[1] = 1.0f - b;
    upload((void *)l->x[0], in->x0, r->n, r->t);
    if (l->x[1]) upload((void *)l->x[1], in->x1, r->n, r->t);
    upload((void *)l->dy, in->dy, r->n, r->t);
    poison(l->y, r->n, r->t);
    for (int i = 0; i < 2; i++) {
        if (!l->dx[i]) continue;
        if (l->dx_beta[i] != 0.0f) upload(l->dx[i], i ? in->dx1 : in->dx0, r->n, r->t);
        else poison(l->dx[i], r->n, r->t);
    }
    upload(l->w, in->w, 2 * r->c, DTYPE_FP32);
    if (b != 0.0f) upload(l->dw, in->dw, 2 * r->c, DTYPE_FP32); else poison(l->dw, 2 * r->c, DTYPE_FP32);
    upload(l->state, in->state, 2 * r->c, DTYPE_FP32);
    if (r->fold[0]) {
        upload(r->fold[0], in->fold_b, r->c, DTYPE_FP32);
        poison(r->fold[1], r->c, DTYPE_FP32);
    }
}

static void rig_step(rig_t *r, gpu_t *g, int pass) {
    r->l.ops->forward(&r->l, g, 1);
    r->l.ops->backward(&r->l, g, (float)pass);
}

static void rig_read(rig_t *r, outs_t *o) {
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaGetLastError());
    layer_t *l = &r->l;
    download(o->y, l->y, r->n, r->t);
    if (l->dx[0]) download(o->dx0, l->dx[0], r->n, r->t);
    if (l->dx[1]) download(o->dx1, l->dx[1], r->n, r->t);
    download(o->dw, l->dw, 2 * r->c, DTYPE_FP32);
    download(o->state, l->state, 2 * r->c, DTYPE_FP32);
    download(o->saved, layer_bn_saved(l), 2 * r->c, DTYPE_FP32);
}

// --- one case

static void run_case(gpu_t *g, const bn_case_t *c, rng_t *rng, dtype_t t) {
    double tol_act = t == DTYPE_BF16 ? TOL_BF16 : t == DTYPE_FP16 ? TOL_FP16 : TOL;
    char name[120];
    snprintf(name, sizeof name, "[%s] %s", dtype_name(t), c->name);
    rig_t r;
    rig_make(&r, g, c, t);
    layer_t *l = &r.l;
    size_t n = r.n, C = r.c, M = n / C;
    printf("---- %s: (%d, %d, %d, %d) fuse %d%s; %s\n", name, c->in.n, c->in.h, c->in.w, c->in.c, c->fuse,
           c->need_dx ? "" : ", no dx", layer_bn_path(l));
    EXPECT(strncmp(layer_bn_path(l), "own", 3) == 0, "%s: setup did not choose our kernels: %s", name,
           layer_bn_path(l));
    /* The ReLU mask kept as bits (then read by the aligned cases' backward instead of y) exactly where V = 8. */
    const int bits = t != DTYPE_FP32 && c->fuse == BN_FUSE_ADD_RELU && c->in.c % 8 == 0;
    EXPECT(!strstr(layer_bn_path(l), "bits") == !bits, "%s: mask bits %s: %s", name, bits ? "missing" : "unexpected",
           layer_bn_path(l));

    float *hx0 = falloc(n), *hx1 = falloc(n), *hdy = falloc(n), *hdx0 = falloc(n), *hdx1 = falloc(n);
    float *hw = falloc(2 * C), *hs = falloc(2 * C), *hdw = falloc(2 * C);
    fill(rng, hx0, n, -3, 5, t);   // mean ~1: the shift of the statistics matters, and biased != unbiased
    /* Offset: variance from sums of squares about 0 or about row 0 would cancel (1000/2.3)^2 ~ 2e5 times. */
    for (size_t i = 0; c->offset && i < n; i++) {
        hx0[i] = round_as(i < C ? 4000.0f : 3000.0f + hx0[i], t);
    }
    fill(rng, hx1, n, -3, 5, t);
    fill(rng, hdy, n, -1, 1, t);
    fill(rng, hdx0, n, -1, 1, t);
    fill(rng, hdx1, n, -1, 1, t);
    fill(rng, hw, C, 0.5, 1.5, DTYPE_FP32);
    fill(rng, hw + C, C, -0.5, 0.5, DTYPE_FP32);
    fill(rng, hs, C, -0.5, 0.5, DTYPE_FP32);
    fill(rng, hs + C, C, 0.5, 1.5, DTYPE_FP32);
    fill(rng, hdw, 2 * C, -1, 1, DTYPE_FP32);
    float *hb = falloc(C), *hw_ref = falloc(2 * C);   // the folded bias; gamma and beta (+ the bias) as applied
    fill(rng, hb, C, -0.5, 0.5, DTYPE_FP32);
    for (size_t j = 0; j < 2 * C; j++) hw_ref[j] = hw[j] + (c->fold && j >= C ? hb[j - C] : 0.0f);
    inputs_t in = {hx0, hx1, hdy, hw, hs, hdx0, hdx1, hdw, hb};

    // the reference: gradients accumulate into zeroed arrays
    ref_t ref;
    memset(&ref, 0, sizeof ref);
    ref.x[0] = hx0; ref.x[1] = hx1; ref.w = hw_ref; ref.state = hs; ref.dy = hdy;
    ref.y = dalloc(n); ref.dx[0] = dalloc(n); ref.dx[1] = l->x[1] ? dalloc(n) : NULL;
    ref.dw = dalloc(2 * C); ref.state_out = dalloc(2 * C); ref.state_alt = dalloc(2 * C);
    if (c->fuse == BN_FUSE_NONE) ref_bn(l, 1, &ref); else ref_bn_fused(l, 1, &ref);
    double *saved = dalloc(2 * C), *wrong = dalloc(n), *want = dalloc(n), *terms = dalloc(n), *dx_terms = dalloc(n);
    for (size_t ch = 0; ch < C; ch++) {
        double m = 0.0, v = 0.0;
        for (size_t i = 0; i < M; i++) m += hx0[i * C + ch];
        m /= M;
        for (size_t i = 0; i < M; i++) v += (hx0[i * C + ch] - m) * (hx0[i * C + ch] - m);
        saved[ch] = m;
        saved[C + ch] = 1.0 / sqrt(v / M + 1e-5);
    }
    /* dx = gamma invstd (dy - mean(dy) - xhat mean(dy xhat)) cancels to ~0 at two samples a channel (xhat = +-1),
     * so its rounding is of the size of the terms: dx is judged against |gamma invstd| (|dy| + |mean dy| + |xhat|
     * |mean dy xhat|), the fused cases' dy taken unmasked (a bound), plus the accumulated |beta dx_prev|. */
    for (size_t ch = 0; ch < C; ch++) {
        double mdy = 0.0, mdyx = 0.0;
        for (size_t i = 0; i < M; i++) {
            mdy += hdy[i * C + ch];
            mdyx += hdy[i * C + ch] * (hx0[i * C + ch] - saved[ch]) * saved[C + ch];
        }
        mdy /= M;
        mdyx /= M;
        for (size_t i = 0; i < M; i++) {
            size_t j = i * C + ch;
            double xhat = (hx0[j] - saved[ch]) * saved[C + ch];
            terms[j] = fabs(hw[ch] * saved[C + ch]) * (fabs(hdy[j]) + fabs(mdy) + fabs(xhat) * fabs(mdyx));
        }
    }

    outs_t o, o2;
    outs_alloc(&o, n, C);
    outs_alloc(&o2, n, C);
    int ref_moved = 0;   /* the reference took a way's mask (kink flips): recomputed before the next way */
    for (int w = 0; w < N_WAYS; w++) {
        if (layer_bn_force(l, WAYS[w][0], WAYS[w][1]) != 0) continue;   /* persistent: not on every device */
        char wname[160];
        snprintf(wname, sizeof wname, "%s %s/%s", name, bn_nhwc_impl_name(WAYS[w][0]), bn_nhwc_impl_name(WAYS[w][1]));
        if (ref_moved) {
            memset(ref.dx[0], 0, n * sizeof(double));
            if (ref.dx[1]) memset(ref.dx[1], 0, n * sizeof(double));
            memset(ref.dw, 0, 2 * C * sizeof(double));
            ref.relu_y = NULL;
            if (c->fuse == BN_FUSE_NONE) ref_bn(l, 1, &ref); else ref_bn_fused(l, 1, &ref);
            ref_moved = 0;
        }
        for (int pass = 0; pass < 2; pass++) {
            rig_prepare(&r, &in, pass);
            rig_step(&r, g, pass);
            rig_read(&r, &o);
            if (pass == 0 && c->fuse != BN_FUSE_NONE) {
                /* An element whose y lies within rounding of the ReLU's kink may fall either side (the offset case
                 * puts a few there in some draws): the backward reference then takes the GPU's side. */
                size_t flips = 0;
                for (size_t j = 0; j < n; j++) flips += (o.y[j] > 0) != (ref.y[j] > 0);
                if (flips) {
                    printf("     %zu element(s) on the ReLU's kink within rounding: the reference takes the GPU's mask\n",
                           flips);
                    memset(ref.dx[0], 0, n * sizeof(double));
                    if (ref.dx[1]) memset(ref.dx[1], 0, n * sizeof(double));
                    memset(ref.dw, 0, 2 * C * sizeof(double));
                    ref.relu_y = o.y;
                    ref_moved = 1;
                    ref_bn_fused(l, 1, &ref);
                    /* A flip needs |y| within the statistics' rounding error of 0 (saved mean and invstd agree with
                     * the reference to ~1e-7 relative, y to ~1e-4 absolute in the offset case), and y spreads over
                     * about +-3: far under one element in a thousand. More is an error, not rounding. */
                    EXPECT(flips < n / 1000 + 2, "%s: %zu elements on the kink is more than rounding explains", wname,
                           flips);
                }
            }
            char tn[40];
            double *dw_want = dalloc(2 * C);
            for (size_t j = 0; j < 2 * C; j++) dw_want[j] = ref.dw[j] + pass * hdw[j];
            check(wname, "y", o.y, ref.y, n, tol_act);
            if (pass == 0) {
                check(wname, "running mean", o.state, ref.state_out, C, TOL);
                check(wname, "running var", o.state + C, ref.state_out + C, C, TOL);
                control(wname, "biased running var", o.state + C, ref.state_out + C, ref.state_alt + C, C, TOL);
                check(wname, "saved mean", o.saved, saved, C, TOL);
                check(wname, "saved invstd", o.saved + C, saved + C, C, TOL);
            }
            if (l->dx[0]) {
                for (size_t j = 0; j < n; j++) want[j] = ref.dx[0][j] + l->dx_beta[0] * hdx0[j];
                snprintf(tn, sizeof tn, "dx%s(beta=%g)", l->dx[1] ? "0" : "", l->dx_beta[0]);
                for (size_t j = 0; j < n; j++) dx_terms[j] = terms[j] + fabs(l->dx_beta[0] * hdx0[j]);
                check_scaled(wname, tn, o.dx0, want, dx_terms, n, tol_act);
                if (pass == 0) {
                    /* fused: the ReLU mask left out; plain: the mean-gradient terms left out (dx = gamma invstd dy) */
                    if (c->fuse != BN_FUSE_NONE) {
                        ref_t w = ref;
                        w.y = dalloc(n); w.dx[0] = wrong; w.dx[1] = NULL; w.dw = dalloc(2 * C);
                        w.state_out = dalloc(2 * C); w.state_alt = dalloc(2 * C);
                        memset(wrong, 0, n * sizeof *wrong);
                        ref_bn(l, 1, &w);
                        free(w.y); free(w.dw); free(w.state_out); free(w.state_alt);
                    } else {
                        for (size_t j = 0; j < n; j++) wrong[j] = hw[j % C] * saved[C + j % C] * hdy[j];
                    }
                    control_scaled(wname,
                                   c->fuse != BN_FUSE_NONE ? "dx without the ReLU mask" : "dx without mean terms",
                                   o.dx0, want, wrong, dx_terms, n, tol_act);
                }
            }
            if (l->dx[1]) {
                for (size_t j = 0; j < n; j++) want[j] = ref.dx[1][j] + l->dx_beta[1] * hdx1[j];
                snprintf(tn, sizeof tn, "dx1(beta=%g)", l->dx_beta[1]);
                check(wname, tn, o.dx1, want, n, tol_act);
                for (size_t j = 0; j < n; j++) wrong[j] = hdy[j] + l->dx_beta[1] * hdx1[j];
                if (pass == 0) control(wname, "dx1 without the ReLU mask", o.dx1, want, wrong, n, tol_act);
            }
            snprintf(tn, sizeof tn, "dgamma(beta=%d)", pass);
            check(wname, tn, o.dw, dw_want, C, TOL);
            snprintf(tn, sizeof tn, "dbeta(beta=%d)", pass);
            check(wname, tn, o.dw + C, dw_want + C, C, TOL);
            free(dw_want);
            if (r.fold[1]) {   // the folded bias's gradient is the shift's: dbeta as written, bit for bit
                float *fdb = falloc(C);
                download(fdb, r.fold[1], C, DTYPE_FP32);
                int same = memcmp(fdb, o.dw + C, C * sizeof(float)) == 0;
                printf("%-4s %-40s %-16s bitwise (= dbeta)\n", same ? "ok" : "FAIL", wname, "folded bias grad");
                EXPECT(same, "%s: the folded bias's gradient differs from dbeta (pass %d)", wname, pass);
                free(fdb);
            }

            /* The same inputs again, eagerly and as a CUDA graph: bit for bit the same outputs. */
            rig_prepare(&r, &in, pass);
            rig_step(&r, g, pass);
            rig_read(&r, &o2);
            int same = outs_same(&o, &o2, n, C);
            printf("%-4s %-40s %-16s bitwise (pass %d)\n", same ? "ok" : "FAIL", wname, "rerun", pass);
            EXPECT(same, "%s: a second run with the same inputs differs (pass %d)", wname, pass);
            rig_prepare(&r, &in, pass);
            cudaGraph_t graph;
            cudaGraphExec_t exec;
            CHECK_CUDA(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal));
            rig_step(&r, g, pass);
            CHECK_CUDA(cudaStreamEndCapture(g->stream, &graph));
            CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
            CHECK_CUDA(cudaGraphLaunch(exec, g->stream));
            rig_read(&r, &o2);
            same = outs_same(&o, &o2, n, C);
            printf("%-4s %-40s %-16s bitwise (pass %d)\n", same ? "ok" : "FAIL", wname, "graph = eager", pass);
            EXPECT(same, "%s: the CUDA graph's outputs differ from eager ones (pass %d)", wname, pass);
            CHECK_CUDA(cudaGraphExecDestroy(exec));
            CHECK_CUDA(cudaGraphDestroy(graph));
        }
    }
    float *got = falloc(n);
    download(got, l->x[0], n, t);
    int intact = memcmp(got, hx0, n * sizeof(float)) == 0;
    if (l->x[1]) {
        download(got, l->x[1], n, t);
        intact &= memcmp(got, hx1, n * sizeof(float)) == 0;
    }
    printf("%-4s %-40s %-16s bitwise\n", intact ? "ok" : "FAIL", name, "x intact");
    EXPECT(intact, "%s: forward or backward wrote an input", name);

    rig_free(&r);
    outs_free(&o); outs_free(&o2);
    free(hb); free(hw_ref);
    free(got); free(hx0); free(hx1); free(hdy); free(hdx0); free(hdx1); free(hw); free(hs); free(hdw);
    free(ref.y); free(ref.dx[0]); free(ref.dx[1]); free(ref.dw); free(ref.state_out); free(ref.state_alt);
    free(saved); free(wrong); free(want); free(terms); free(dx_terms);
}

// --- the ReLU mask's bits (bf16, add + ReLU): every forward writes them, a backward on the vector grid reads them

/* Through bn_nhwc's own API, with x1 one element off 16 bytes in the forward (scalar grid: bits_from_y_kernel), or
 * dx1 in the backward (scalar grid: y read), or neither: after the forward the bits are y > 0 exactly, whichever
 * grid it took, and dx1 = dy masked (exact: dy or 0), with dx1 overwritten and dx (the reduction writes dx1) or
 * without dx (the element-wise pass does). Then the bits zeroed and the backward again: dx1 all 0 shows that the
 * aligned backward read the bits, dx1 unchanged that the misaligned one read y. */
static void check_bits(gpu_t *g, dtype_t t, int way) {
    const long long M = 300;
    const int C = 64;
    const size_t n = (size_t)M * C, es = dtype_size(t);
    bn_nhwc_t b;
    bn_nhwc_init(&b, M, C, t, BN_FUSE_ADD_RELU, g->device, g->stream);
    if (!bn_nhwc_impl_ok(&b, way)) { bn_nhwc_free(&b); return; }
    bn_nhwc_set_impl(&b, 0, way);
    bn_nhwc_set_impl(&b, 1, way);
    EXPECT(b.bits != NULL, "mask bits: none for %s add + ReLU at C = %d", dtype_name(t), C);
    if (!b.bits) { bn_nhwc_free(&b); return; }
    void *base[6];   // x, x1, y, dy, dx, dx1
    float *w;        // gamma, beta, running mean, running var, dgamma, dbeta
    for (int i = 0; i < 6; i++) {
        CHECK_CUDA(cudaMalloc(&base[i], n * es + 16));
        gpu_fill_uniform(g, base[i], t, n + 16 / es, 300u + (unsigned)i, -1.0f, 1.0f);
    }
    CHECK_CUDA(cudaMalloc((void **)&w, 6 * C * sizeof(float)));
    gpu_fill_uniform(g, w, DTYPE_FP32, 4 * C, 310u, 0.5f, 1.5f);
    gpu_fill_uniform(g, w + C, DTYPE_FP32, C, 311u, -0.5f, 0.5f);
    float *hy = falloc(n), *hdy = falloc(n), *hdx1 = falloc(n), *hdx1b = falloc(n);
    unsigned char *hb = (unsigned char *)malloc(n / 8);
    if (!hb) { fprintf(stderr, "out of host memory\n"); exit(1); }
    static const char *what[3] = {"aligned", "fwd x1 off (scalar)", "bwd dx1 off (scalar)"};
    for (int sc = 0; sc < 3; sc++)
        for (int early = 1; early >= 0; early--) {
            char name[80];
            snprintf(name, sizeof name, "[%s] mask bits %s, %s%s", dtype_name(t), bn_nhwc_impl_name(way), what[sc],
                     early ? "" : ", no dx");
            void *x1 = (char *)base[1] + (sc == 1 ? es : 0), *dx1 = (char *)base[5] + (sc == 2 ? es : 0);
            void *dx = early ? base[4] : NULL;
            CHECK_CUDA(cudaMemsetAsync(b.bits, 0x5A, n / 8, g->stream));   // stale bits: the forward must write
            bn_nhwc_forward(&b, base[0], x1, base[2], w, w + C, NULL, w + 2 * C, w + 3 * C, 1e-5, 0.1, g->stream);
            bn_nhwc_backward(&b, base[0], base[2], base[3], dx, 0.0f, dx1, 0.0f, w, w + 4 * C, w + 5 * C, NULL, 0.0f,
                             g->stream);
            CHECK_CUDA(cudaStreamSynchronize(g->stream));
            download(hy, base[2], n, t);
            download(hdy, base[3], n, t);
            download(hdx1, dx1, n, t);
            CHECK_CUDA(cudaMemcpy(hb, b.bits, n / 8, cudaMemcpyDeviceToHost));
            size_t bad_bits = 0, bad_dx1 = 0, live = 0;
            for (size_t i = 0; i < n; i++) {
                bad_bits += ((hb[i / 8] >> (i % 8)) & 1) != (hy[i] > 0.0f);
                bad_dx1 += hdx1[i] != (hy[i] > 0.0f ? hdy[i] : 0.0f);
                live += hy[i] > 0.0f && hdy[i] != 0.0f;
            }
            CHECK_CUDA(cudaMemsetAsync(b.bits, 0, n / 8, g->stream));
            bn_nhwc_backward(&b, base[0], base[2], base[3], dx, 0.0f, dx1, 0.0f, w, w + 4 * C, w + 5 * C, NULL, 0.0f,
                             g->stream);
            CHECK_CUDA(cudaStreamSynchronize(g->stream));
            download(hdx1b, dx1, n, t);
            size_t nonzero = 0, changed = 0;
            for (size_t i = 0; i < n; i++) {
                nonzero += hdx1b[i] != 0.0f;
                changed += hdx1b[i] != hdx1[i];
            }
            const int read_bits = sc != 2;
            int ok = !bad_bits && !bad_dx1 && live > n / 8 && (read_bits ? !nonzero : !changed);
            printf("%-4s %-40s %-16s %zu bad bits, %zu bad dx1, bits zeroed: %zu of dx1 nonzero (%s)\n",
                   ok ? "ok" : "FAIL", name, "y > 0 as bits", bad_bits, bad_dx1, nonzero,
                   read_bits ? "bits read" : "y read");
            EXPECT(ok, "%s: %zu bits differ from y > 0, %zu dx1 from dy masked (%zu live), after zeroing the bits %zu "
                   "dx1 nonzero, %zu changed", name, bad_bits, bad_dx1, live, nonzero, changed);
        }
    free(hy); free(hdy); free(hdx1); free(hdx1b); free(hb);
    for (int i = 0; i < 6; i++) CHECK_CUDA(cudaFree(base[i]));
    CHECK_CUDA(cudaFree(w));
    bn_nhwc_free(&b);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    gpu_test_require(1);
    unsigned long long seed = gpu_test_seed(argc, argv, "test_bn_nhwc");
    rng_t rng;
    rng_seed(&rng, seed);
    static const bn_case_t shapes[] = {
        {"28x28x64", {4, 28, 28, 64}, 0, 1, 0, 0, 0},
        {"14x14x128", {4, 14, 14, 128}, 0, 1, 0, 0, 0},
        {"7x7x256", {8, 7, 7, 256}, 0, 1, 0, 0, 0},
        {"4x4x512", {8, 4, 4, 512}, 0, 1, 0, 0, 0},
        {"many row blocks 28x28x64 n64", {64, 28, 28, 64}, 0, 1, 0, 0, 0},
        {"odd C=3, M=245", {5, 7, 7, 3}, 0, 1, 0, 0, 0},
        {"C=24, odd M=75", {3, 5, 5, 24}, 0, 1, 0, 0, 0},
        {"C=12 (fp32 vector, bf16 scalar)", {2, 3, 3, 12}, 0, 1, 0, 0, 0},
        {"M=2, C=520 (a partial tile)", {2, 1, 1, 520}, 0, 1, 0, 0, 0},
        {"misaligned 7x7x256 (scalar)", {4, 7, 7, 256}, 0, 1, 1, 0, 0},
        {"no dx 14x14x128", {2, 14, 14, 128}, 0, 0, 0, 0, 0},
        {"offset 3000, row 0 at 4000", {16, 14, 14, 64}, 0, 1, 0, 1, 0},
        {"folded bias 14x14x128", {4, 14, 14, 128}, 0, 1, 0, 0, 1},
        {"C=40 (5 vectors a row), odd M=147", {3, 7, 7, 40}, 0, 1, 0, 0, 0},
        /* ResNet-18's 28x28x64 at batch 256: the persistent backward's stash holds part of each thread's rows */
        {"stash overflow 256x28x28x64", {256, 28, 28, 64}, 0, 1, 0, 0, 0},
    };
    for (int ti = 0; ti < DTYPE_COUNT; ti++) {
        const dtype_t t = (dtype_t)ti;
        gpu_t g;
        gpu_init(&g, 0, t == DTYPE_FP32 ? MATH_FP32 : MATH_BF16);   /* the layer's dtype is the rig's, not the math's */
        g.bn = GPU_BN_OWN;
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (int fuse = BN_FUSE_NONE; fuse <= BN_FUSE_ADD_RELU; fuse++) {
                bn_case_t c = shapes[i];
                c.fuse = fuse;
                run_case(&g, &c, &rng, t);
            }
        for (int w = 0; t != DTYPE_FP32 && w < BN_NHWC_IMPLS; w++) check_bits(&g, t, w);
        gpu_free(&g);
    }
    printf("# seed %llu\n", seed);
    return test_summary();
}
