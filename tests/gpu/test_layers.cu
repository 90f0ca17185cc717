/* test_layers.cu — every layer kind, stand-alone, against CPU double-precision references in strict fp32, in bf16
 * and in fp16: y, dx (overwrite and accumulate), dw/db (overwrite and accumulate), BN running statistics, the fused
 * loss (in fp16 also with a loss scale read on the device).
 * Run: ./test_layers [seed]   (fresh random inputs each run, seed printed; exits 77 without a CUDA device) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "gpu_test.h"
#include "bf16_ref.h"
#include "fp16_ref.h"
#include "layer_ref.h"
#include "engine/layer.h"
#include "engine/gpu.h"
#include "engine/check.h"
#include "engine/layers/softmax_xent.h"
#include "engine/layers/cudnn_util.h"
#include "dev_io.h"

#define TOL 1e-4           /* relative L2 error, strict fp32 */
#define TOL_TF32 5e-3      /* 10-bit mantissa products */
/* bf16 layers. The host rounds every bf16 input (x, dy, dx priors, the weights' bf16 copy) before computing the
 * reference, so the reference sees exactly what the GPU sees, and the only errors left are (1) each rounding of a
 * result to bf16: 8 significant bits, round to nearest, relative error <= 2^-8 per element, hence <= 2^-8 in the
 * relative L2 norm; a value may be rounded more than once on its way out (conv's bias added to the rounded
 * convolution, batch norm's ReLU applied to a rounded output), counted as `stages`; and (2) fp32 accumulation over
 * the reduction length, which the strict-fp32 cases above bound by TOL at these same reduction lengths (the
 * largest: 9 x 32 = 288 products for y and dx, 8*8*8 = 512 for dw). A layer that accumulated in bf16 instead
 * would err by about sqrt(K) * 2^-9, which the negative control checks the tolerance rejects.
 * fp16 layers: the same derivation at 11 significant bits (2^-11 per rounding stage, for normal results; the inputs
 * here are O(1), far above fp16's least normal 2^-14, and the few tiny results that fall below it, rounded to
 * absolute steps of 2^-24, weigh nothing in the L2 norm). Its negative control: fp16 accumulation, sqrt(K) * 2^-12. */
#define TOL_BF16(stages) ((stages) * BF16_U + TOL)
#define TOL_FP16(stages) ((stages) * FP16_U + TOL)
/* The tolerance of a case of `stages` rounding stages in the 2-byte type t. */
static double tol_low(dtype_t t, int stages) { return t == DTYPE_FP16 ? TOL_FP16(stages) : TOL_BF16(stages); }

static shape_t shp(int n, int h, int w, int c) { shape_t s = {n, h, w, c}; return s; }
static layer_cfg_t cfg(int k, int stride, int pad, int cout, int bias) {
    layer_cfg_t c = {k, stride, pad, cout, bias, BN_FUSE_NONE};
    return c;
}


/* Device buffers of n elements of type t; the host side is always float (bf16 values widened exactly). */
static void *dev_alloc(size_t n, dtype_t t) {
    void *p = NULL;
    if (n) CHECK_CUDA(cudaMalloc(&p, n * dtype_size(t)));
    return p;
}
static void fill(rng_t *r, float *h, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; i++) h[i] = (float)(lo + (hi - lo) * rng_uniform(r));
}

/* Relative L2 error of got against ref (absolute when ref is all zero), one line, and on failure where it starts.
 * shape decodes flat indices as [a, b, c, d] (NHWC or KRSC); NULL prints flat indices. */
static double check(const char *what, const char *tensor, const float *got, const double *ref, size_t n,
                    const shape_t *shape, double tol) {
    double num = 0.0, den = 0.0, refmax = 0.0, worst = -1.0;
    size_t nonfinite = 0, worst_i = 0, first_bad = (size_t)-1;
    for (size_t i = 0; i < n; i++) refmax = fmax(refmax, fabs(ref[i]));
    for (size_t i = 0; i < n; i++) {
        double d = (double)got[i] - ref[i];
        if (!isfinite(got[i])) nonfinite++;
        num += d * d;
        den += ref[i] * ref[i];
        double ad = isfinite(d) ? fabs(d) : INFINITY;
        if (ad > worst) { worst = ad; worst_i = i; }
        if (first_bad == (size_t)-1 && !(fabs(d) <= tol * (refmax > 0 ? refmax : 1.0))) first_bad = i;
    }
    double err = den > 0 ? sqrt(num / den) : sqrt(num);
    int ok = err <= tol;   // false for NaN
    printf("%-4s %-30s %-14s rel_err %.3e  (n=%zu)\n", ok ? "ok" : "FAIL", what, tensor, err, n);
    if (!ok) {
        size_t idx[2] = {first_bad, worst_i};
        const char *lab[2] = {"first mismatch", "worst"};
        for (int k = 0; k < 2; k++) {
            size_t i = idx[k];
            if (i == (size_t)-1) continue;
            char where[96];
            if (shape) {
                shape_t s = *shape;
                snprintf(where, sizeof where, "[%zu,%zu,%zu,%zu]", i / ((size_t)s.h * s.w * s.c),
                         i / ((size_t)s.w * s.c) % s.h, i / s.c % s.w, i % s.c);
            } else {
                snprintf(where, sizeof where, "[%zu]", i);
            }
            printf("       %s at %zu %s: got %.9g ref %.9g\n", lab[k], i, where, got[i], ref[i]);
        }
        printf("       %zu non-finite of %zu; |ref|max %.3e\n", nonfinite, n, refmax);
    }
    EXPECT(ok, "%s %s: rel_err %.3e > %.0e", what, tensor, err, tol);
    return err;
}

// --- the runner

typedef struct {
    const char *name;
    const layer_ops_t *ops;
    layer_cfg_t cfg;
    int n_in;
    shape_t in;                 // both inputs of add share it
    int need_dx;                // 0: dx[0] = NULL, as for the layer reading the data
    int training;               // 0: forward only (BN inference)
    double x_lo, x_hi;
    ref_fn ref;
    int lp_stages;              // roundings to the 2-byte type on a result's way out under --math bf16 | fp16 (tol_low)
} case_t;

/* Floats of the first parameter block (weights, gamma) and the names of both blocks. */
static size_t param_split(const layer_t *l, const char **a, const char **b) {
    shape_t in = l->in_shape[0];
    if (l->ops == &layer_bn_ops) { *a = "dgamma"; *b = "dbeta"; return (size_t)in.c; }
    *a = "dw"; *b = "db";
    if (l->ops == &layer_conv_ops) return (size_t)l->cfg.cout * l->cfg.k * l->cfg.k * in.c;
    if (l->ops == &layer_dense_ops) return (size_t)l->cfg.cout * shape_per_sample(in);
    return l->n_params;
}

/* Runs case c on g's math within tol; the math names the case where it is not strict fp32. */
static void run_case(gpu_t *g, const case_t *c, rng_t *rng, double tol) {
    char name[64];
    snprintf(name, sizeof name, "%s%s%s%s", g->math == MATH_FP32 ? "" : "[", g->math == MATH_FP32 ? "" :
             gpu_math_name(g->math), g->math == MATH_FP32 ? "" : "] ", c->name);
    layer_t l;
    memset(&l, 0, sizeof l);
    l.ops = c->ops;
    l.cfg = c->cfg;
    snprintf(l.label, sizeof l.label, "%s", c->name);
    l.n_in = c->n_in;
    for (int i = 0; i < c->n_in; i++) l.in_shape[i] = c->in;
    char err[256] = "";
    int rc = l.ops->out_shape(&l, &l.out_shape, err, sizeof err);
    EXPECT(rc == 0, "%s: out_shape: %s", name, err);
    if (rc != 0) return;
    /* The layer's precision follows the GPU context's math, as model_alloc sets it. */
    dtype_t t = math_act_dtype(g->math);
    int lp_w = dtype_is_low(t) && (l.ops == &layer_conv_ops || l.ops == &layer_dense_ops);   // reads a 2-byte copy
    l.dtype = t;
    size_t nin = shape_numel(c->in), nout = shape_numel(l.out_shape);
    size_t np = l.ops->param_count(&l), ns = l.ops->state_count(&l);
    l.n_params = np;
    l.n_state = ns;

    float *hx[2] = {NULL, NULL}, *hdx0[2] = {NULL, NULL}, *hw = falloc(np), *hdw0 = falloc(np), *hs = falloc(ns);
    size_t big = nin > nout ? nin : nout;
    if (np > big) big = np;
    if (ns > big) big = ns;
    float *hdy = falloc(nout), *got = falloc(big);
    for (int i = 0; i < c->n_in; i++) {
        hx[i] = falloc(nin);
        hdx0[i] = falloc(nin);
        fill(rng, hx[i], nin, c->x_lo, c->x_hi);
        fill(rng, hdx0[i], nin, -1, 1);
    }
    fill(rng, hw, np, -0.5, 0.5);
    fill(rng, hdw0, np, -1, 1);
    fill(rng, hdy, nout, -1, 1);
    if (l.ops == &layer_bn_ops) {   // gamma, beta, running mean, running var (> 0)
        int C = c->in.c;
        fill(rng, hw, C, 0.5, 1.5);
        fill(rng, hs, C, -0.5, 0.5);
        fill(rng, hs + C, C, 0.5, 1.5);
    }
    /* bf16, fp16: activations and gradients are stored in the 2-byte type; convolution and dense weights are read
     * from the 2-byte copy (batch norm reads its fp32 scale and bias); parameter gradients stay fp32. */
    round_to(hdy, nout, t);
    for (int i = 0; i < c->n_in; i++) {
        round_to(hx[i], nin, t);
        round_to(hdx0[i], nin, t);
    }
    if (lp_w) round_to(hw, np, t);

    void *dx_dev[2] = {NULL, NULL}, *y = dev_alloc(nout, t), *dy = dev_alloc(nout, t), *w_lp = NULL;
    for (int i = 0; i < c->n_in; i++) {
        void *x = dev_alloc(nin, t);
        upload(x, hx[i], nin, t);
        l.x[i] = x;
        if (c->need_dx) l.dx[i] = dx_dev[i] = dev_alloc(nin, t);
    }
    l.y = y;
    l.dy = dy;
    l.w = (float *)dev_alloc(np, DTYPE_FP32);
    l.dw = (float *)dev_alloc(np, DTYPE_FP32);
    l.state = (float *)dev_alloc(ns, DTYPE_FP32);
    upload(dy, hdy, nout, t);
    upload(l.w, hw, np, DTYPE_FP32);
    upload(l.state, hs, ns, DTYPE_FP32);
    if (lp_w) {
        w_lp = dev_alloc(np, t);
        upload(w_lp, hw, np, t);
        l.w_lp = w_lp;
    }

    size_t ws = l.ops->setup ? l.ops->setup(&l, g) : 0;
    char info[256] = "";
    if (l.ops == &layer_conv_ops) layer_conv_describe(&l, info, sizeof info);
    if (l.ops == &layer_bn_ops) snprintf(info, sizeof info, "%s", layer_bn_path(&l));
    printf("---- %s: in (%d, %d, %d, %d) -> out (%d, %d, %d, %d), params %zu, workspace %zu%s%s\n", name, c->in.n,
           c->in.h, c->in.w, c->in.c, l.out_shape.n, l.out_shape.h, l.out_shape.w, l.out_shape.c, np, ws,
           info[0] ? "; " : "", info);
    EXPECT(ws <= g->workspace_bytes, "%s: setup wants %zu workspace bytes > arena %zu", name, ws, g->workspace_bytes);

    ref_t r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < c->n_in; i++) r.x[i] = hx[i];
    r.w = hw;
    r.state = hs;
    r.dy = hdy;
    r.y = dalloc(nout);
    for (int i = 0; i < c->n_in; i++) if (c->need_dx && c->training) r.dx[i] = dalloc(nin);
    r.dw = dalloc(np);
    r.state_out = dalloc(ns);
    r.state_alt = dalloc(ns);
    c->ref(&l, c->training, &r);
    double *want = dalloc(big);

    const char *pa = NULL, *pb = NULL;
    size_t split = np ? param_split(&l, &pa, &pb) : 0;
    shape_t wshape = {l.cfg.cout, l.cfg.k, l.cfg.k, c->in.c};   // KRSC, for conv weight indices
    for (int pass = 0; pass < (c->training ? 2 : 1); pass++) {
        /* Pass 0 overwrites (beta 0) into NaN, pass 1 accumulates (beta 1) onto random priors; add mixes both. */
        float beta = (float)pass;
        for (int i = 0; i < c->n_in; i++) l.dx_beta[i] = (i == 1) ? 1.0f - beta : beta;
        poison(y, nout, t);
        for (int i = 0; i < c->n_in; i++)
            if (dx_dev[i]) {
                if (l.dx_beta[i] != 0.0f) upload(dx_dev[i], hdx0[i], nin, t);
                else poison(dx_dev[i], nin, t);
            }
        if (beta != 0.0f) upload(l.dw, hdw0, np, DTYPE_FP32); else poison(l.dw, np, DTYPE_FP32);
        upload(l.state, hs, ns, DTYPE_FP32);

        l.ops->forward(&l, g, c->training);
        if (c->training) l.ops->backward(&l, g, beta);
        CHECK_CUDA(cudaStreamSynchronize(g->stream));
        CHECK_CUDA(cudaGetLastError());

        char tn[32];
        if (pass == 0) {
            download(got, y, nout, t);
            check(name, "y", got, r.y, nout, &l.out_shape, tol);
        }
        for (int i = 0; c->training && i < c->n_in; i++) {
            if (!dx_dev[i]) continue;
            download(got, dx_dev[i], nin, t);
            for (size_t j = 0; j < nin; j++) want[j] = r.dx[i][j] + l.dx_beta[i] * hdx0[i][j];
            snprintf(tn, sizeof tn, "dx%s(beta=%g)", c->n_in > 1 ? (i ? "1" : "0") : "", l.dx_beta[i]);
            check(name, tn, got, want, nin, &c->in, tol);
        }
        if (c->training && np) {
            download(got, l.dw, np, DTYPE_FP32);
            for (size_t j = 0; j < np; j++) want[j] = r.dw[j] + beta * hdw0[j];
            snprintf(tn, sizeof tn, "%s(beta=%g)", pa, beta);
            check(name, tn, got, want, split, l.ops == &layer_conv_ops ? &wshape : NULL, tol);
            if (np > split) {
                snprintf(tn, sizeof tn, "%s(beta=%g)", pb, beta);
                check(name, tn, got + split, want + split, np - split, NULL, tol);
            }
        }
        if (pass == 0 && ns) {   // BN: running mean (C) then running var (C)
            size_t h = ns / 2;
            download(got, l.state, ns, DTYPE_FP32);
            check(name, c->training ? "running mean" : "run. mean kept", got, r.state_out, h, NULL, tol);
            double e = check(name, c->training ? "running var" : "run. var kept", got + h, r.state_out + h,
                             ns - h, NULL, tol);
            if (!(e <= tol) && r.state_alt_name) {
                double num = 0.0, den = 0.0;
                for (size_t j = h; j < ns; j++) {
                    num += (got[j] - r.state_alt[j]) * (got[j] - r.state_alt[j]);
                    den += r.state_alt[j] * r.state_alt[j];
                }
                printf("       vs %s: rel_err %.3e\n", r.state_alt_name, sqrt(num / den));
            }
        }
    }
    /* Setup's algorithm search and the passes must never write the inputs or the weights. */
    int intact = 1;
    for (int i = 0; i < c->n_in; i++) {
        download(got, l.x[i], nin, t);
        intact &= memcmp(got, hx[i], nin * sizeof(float)) == 0;
    }
    if (np) {
        download(got, l.w, np, DTYPE_FP32);
        intact &= memcmp(got, hw, np * sizeof(float)) == 0;
    }
    if (w_lp) {
        download(got, w_lp, np, t);
        intact &= memcmp(got, hw, np * sizeof(float)) == 0;
    }
    printf("%-4s %-30s %-14s bitwise\n", intact ? "ok" : "FAIL", name, "x, w intact");
    EXPECT(intact, "%s: setup, forward or backward wrote an input or the weights", name);

    if (l.ops->destroy) l.ops->destroy(&l);
    EXPECT(l.priv == NULL, "%s: destroy left priv set", name);
    for (int i = 0; i < c->n_in; i++) {
        CHECK_CUDA(cudaFree((void *)l.x[i]));
        if (dx_dev[i]) CHECK_CUDA(cudaFree(dx_dev[i]));
        free(hx[i]);
        free(hdx0[i]);
        free(r.dx[i]);
    }
    CHECK_CUDA(cudaFree(y));
    CHECK_CUDA(cudaFree(dy));
    if (l.w) CHECK_CUDA(cudaFree(l.w));
    if (l.dw) CHECK_CUDA(cudaFree(l.dw));
    if (l.state) CHECK_CUDA(cudaFree(l.state));
    if (w_lp) CHECK_CUDA(cudaFree(w_lp));
    free(hw); free(hdw0); free(hs); free(hdy); free(got); free(want);
    free(r.y); free(r.dw); free(r.state_out); free(r.state_alt);
}

// --- softmax + cross-entropy

/* bf16, fp16: logits and their gradient in the 2-byte type, the loss in fp32 from the (exact) 2-byte logits: one
 * rounding of dlogits. ls > 0: the gradient multiplied by a loss scale the kernel reads on the device (fp16's), and
 * a control that the unscaled reference then fails. */
static void test_softmax_xent(gpu_t *g, rng_t *rng, int n, int n_valid, int classes, float ls) {
    dtype_t t = math_act_dtype(g->math);
    double tol = dtype_is_low(t) ? tol_low(t, 1) : TOL;
    char name[80], scaled[24] = "";
    if (ls > 0) snprintf(scaled, sizeof scaled, " scale %g", ls);
    snprintf(name, sizeof name, "%s%s%ssoftmax_xent n=%d valid=%d cls=%d%s", dtype_is_low(t) ? "[" : "",
             dtype_is_low(t) ? dtype_name(t) : "", dtype_is_low(t) ? "] " : "", n, n_valid, classes, scaled);
    size_t nz = (size_t)n * classes;
    float *hz = falloc(nz), *got = falloc(nz);
    int *hl = (int *)calloc((size_t)n, sizeof(int));
    double *want = dalloc(nz);
    fill(rng, hz, nz, -4, 4);
    for (int i = 0; i < n; i++) hl[i] = i < n_valid ? (int)rng_below(rng, (uint32_t)classes) : 12345;   // padding: never read
    /* Ties for the maximum: the first index wins, so row 0 (label = second) is wrong, row 1 (label = first) right. */
    if (n_valid >= 2 && classes >= 8) {
        hz[2] = hz[5] = 10.0f; hl[0] = 5;
        hz[classes + 3] = hz[classes + 7] = 10.0f; hl[1] = 3;
    }
    round_to(hz, nz, t);
    float scale = 1.0f / (float)n;
    double loss = 0.0, correct = 0.0;
    for (int i = 0; i < n; i++) {
        const float *z = hz + (size_t)i * classes;
        if (i >= n_valid) { for (int j = 0; j < classes; j++) want[(size_t)i * classes + j] = 0.0; continue; }
        double m = -INFINITY, s = 0.0;
        int am = 0;
        for (int j = 0; j < classes; j++) if (z[j] > m) { m = z[j]; am = j; }
        for (int j = 0; j < classes; j++) s += exp(z[j] - m);
        loss += log(s) + m - z[hl[i]];
        correct += am == hl[i];
        for (int j = 0; j < classes; j++)
            want[(size_t)i * classes + j] = (ls > 0 ? ls : 1.0) * scale * (exp(z[j] - m) / s - (j == hl[i]));
    }

    void *dz = dev_alloc(nz, t), *ddz = dev_alloc(nz, t);
    int *dl;
    float *dls = NULL;
    double *dacc, prior[2] = {0.25, 3.0}, acc[2];
    if (ls > 0) {
        CHECK_CUDA(cudaMalloc((void **)&dls, sizeof(float)));
        CHECK_CUDA(cudaMemcpy(dls, &ls, sizeof ls, cudaMemcpyHostToDevice));
    }
    CHECK_CUDA(cudaMalloc((void **)&dl, (size_t)n * sizeof(int)));
    CHECK_CUDA(cudaMalloc((void **)&dacc, 2 * sizeof(double)));
    upload(dz, hz, nz, t);
    poison(ddz, nz, t);
    CHECK_CUDA(cudaMemcpy(dl, hl, (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dacc, prior, sizeof prior, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());   // as in run_case: the uploads before the non-blocking stream reads them
    softmax_xent(dz, dl, ddz, t, n, n_valid, classes, scale, dls, dacc, g->stream);
    softmax_xent(dz, dl, NULL, t, n, n_valid, classes, scale, dls, dacc, g->stream);   // loss only: accumulates again
    CHECK_CUDA(cudaStreamSynchronize(g->stream));
    CHECK_CUDA(cudaMemcpy(acc, dacc, sizeof acc, cudaMemcpyDeviceToHost));
    download(got, ddz, nz, t);

    shape_t zs = {n, 1, 1, classes};
    check(name, "dlogits", got, want, nz, &zs, tol);
    if (ls > 0 && n_valid > 0) {   /* control: the scale must have been applied (the loss below must not see it) */
        double num = 0.0, den = 0.0;
        for (size_t j = 0; j < nz; j++) {
            double u = want[j] / ls;
            num += (got[j] - u) * (got[j] - u);
            den += u * u;
        }
        double e = den > 0 ? sqrt(num / den) : 0.0;
        printf("%-4s %-30s %-14s rel_err %.3e against the unscaled gradient (must exceed %.1e)\n",
               e > tol ? "ok" : "FAIL", name, "[control]", e, tol);
        EXPECT(e > tol, "%s: dlogits match the unscaled gradient (rel_err %.3e)", name, e);
    }
    int pad_zero = 1;
    for (size_t j = (size_t)n_valid * classes; j < nz; j++) pad_zero &= got[j] == 0.0f;
    EXPECT(pad_zero, "%s: padding rows of dlogits are not exactly 0", name);
    double lsum = acc[0] - prior[0], want_l = 2.0 * loss;
    float lf = (float)lsum;
    check(name, "loss sum (x2)", &lf, &want_l, 1, NULL, TOL);
    printf("%-4s %-30s %-14s got %.0f want %.0f\n", acc[1] - prior[1] == 2.0 * correct ? "ok" : "FAIL", name,
           "correct (x2)", acc[1] - prior[1], 2.0 * correct);
    EXPECT(acc[1] - prior[1] == 2.0 * correct, "%s: correct %.0f != %.0f", name, acc[1] - prior[1], 2.0 * correct);

    CHECK_CUDA(cudaFree(dz)); CHECK_CUDA(cudaFree(ddz)); CHECK_CUDA(cudaFree(dl)); CHECK_CUDA(cudaFree(dacc));
    if (dls) CHECK_CUDA(cudaFree(dls));
    free(hz); free(got); free(hl); free(want);
}

// --- the 2-byte tolerances' negative control

/* The failure the bf16 and fp16 tolerances exist to catch: products summed in the 2-byte type t (the running sum
 * rounded after every add) instead of fp32. Dot products of the conv c32 case's length (3*3*32) on t-exact random
 * inputs: their error against the exact sums must exceed the loosest t tolerance used for a layer, or that
 * tolerance could not tell such a layer from a correct one. Host only. */
static void test_low_tolerance_rejects_low_accumulation(rng_t *rng, dtype_t t) {
    enum { K = 288, OUTS = 2048 };
    double num = 0.0, den = 0.0;
    for (int o = 0; o < OUTS; o++) {
        double exact = 0.0;
        float acc16 = 0.0f;
        for (int k = 0; k < K; k++) {
            float a = round_as((float)(2.0 * rng_uniform(rng) - 1.0), t), b = round_as((float)(rng_uniform(rng) - 0.5), t);
            exact += (double)a * b;
            acc16 = round_as(acc16 + a * b, t);   /* a*b is exact in fp32: at most 11 x 11 significant bits */
        }
        num += (acc16 - exact) * (acc16 - exact);
        den += exact * exact;
    }
    double err = sqrt(num / den), tol = tol_low(t, 2);
    char what[48];
    snprintf(what, sizeof what, "[control] %s accumulation", dtype_name(t));
    printf("%-4s %-30s %-14s rel_err %.3e vs tolerance %.3e (must exceed it)\n", err > tol ? "ok" : "FAIL", what, "y",
           err, tol);
    EXPECT(err > tol, "%s tolerance %.3e would accept a layer accumulating in %s (rel_err %.3e)", dtype_name(t), tol,
           dtype_name(t), err);
}

// --- host-only: shapes, counts, initialisation

static void test_host_side(void) {
    layer_t l;
    char err[256];
    shape_t s;
    memset(&l, 0, sizeof l);
    l.n_in = 1;
    l.ops = &layer_conv_ops;
    l.in_shape[0] = shp(2, 16, 16, 64);
    l.cfg = cfg(3, 1, 1, 64, 1);
    EXPECT(l.ops->out_shape(&l, &s, err, sizeof err) == 0 && s.h == 16 && s.c == 64, "conv out_shape: %s", err);
    l.out_shape = s;
    size_t nw = 64 * 3 * 3 * 64;
    EXPECT(l.ops->param_count(&l) == nw + 64, "conv param_count %zu", l.ops->param_count(&l));
    float *p = falloc(nw + 64);
    rng_t rng;
    rng_seed(&rng, 1);
    for (int mode = 0; mode < 3; mode++) {
        for (size_t i = 0; i < nw + 64; i++) p[i] = 7.0f;
        l.ops->init(&l, p, NULL, (init_t)mode, &rng);
        double a = sqrt(6.0 / (64 * 9 + 64 * 9)), sd = 0.0, mx = 0.0;
        for (size_t i = 0; i < nw; i++) { sd += (double)p[i] * p[i]; mx = fmax(mx, fabs(p[i])); }
        sd = sqrt(sd / nw);
        int bias0 = 1;
        for (int i = 0; i < 64; i++) bias0 &= p[nw + i] == 0.0f;
        /* kaiming: torchvision's kaiming_normal_(mode="fan_out", nonlinearity="relu"): std sqrt(2 / (K k k)). */
        double want_sd = mode == INIT_XAVIER ? a / sqrt(3.0) : mode == INIT_KAIMING ? sqrt(2.0 / (64 * 9)) : 0.01;
        printf("%-4s init conv %-8s std %.5f (want %.5f), max %.5f, biases zero %d\n",
               fabs(sd / want_sd - 1) < 0.03 && bias0 ? "ok" : "FAIL",
               mode == INIT_XAVIER ? "xavier" : mode == INIT_KAIMING ? "kaiming" : "normal", sd, want_sd, mx, bias0);
        EXPECT(fabs(sd / want_sd - 1) < 0.03, "conv init %d: std %.5f want %.5f", mode, sd, want_sd);
        EXPECT(bias0, "conv init %d: biases not zero", mode);
        if (mode == INIT_XAVIER) EXPECT(mx <= a, "xavier max %.5f > bound %.5f", mx, a);
    }
    free(p);

    l.ops = &layer_dense_ops;
    l.in_shape[0] = shp(2, 3, 3, 4);
    l.cfg = cfg(0, 0, 0, 10, 0);
    EXPECT(l.ops->out_shape(&l, &s, err, sizeof err) == 0 && s.h == 1 && s.w == 1 && s.c == 10, "dense out_shape");
    EXPECT(l.ops->param_count(&l) == 36 * 10 + 10, "dense param_count %zu", l.ops->param_count(&l));
    {   /* kaiming: nn.Linear's default, weights and bias U(-1/sqrt(in), 1/sqrt(in)): std 1/sqrt(3 in) */
        float dp[370];
        double sd = 0.0, mx = 0.0, bmx = 0.0, u = 1.0 / 6.0;
        l.ops->init(&l, dp, NULL, INIT_KAIMING, &rng);
        for (int i = 0; i < 360; i++) { sd += (double)dp[i] * dp[i]; mx = fmax(mx, fabs(dp[i])); }
        for (int i = 360; i < 370; i++) bmx = fmax(bmx, fabs(dp[i]));
        sd = sqrt(sd / 360);
        int ok = fabs(sd * sqrt(3.0 * 36) - 1) < 0.1 && mx <= u && bmx <= u && bmx > 0;
        printf("%-4s init dense kaiming std %.5f (want %.5f), max %.5f, bias max %.5f (bound %.5f)\n", ok ? "ok" : "FAIL",
               sd, 1 / sqrt(3.0 * 36), mx, bmx, u);
        EXPECT(ok, "dense kaiming init: std %.5f max %.5f bias max %.5f", sd, mx, bmx);
    }

    l.ops = &layer_bn_ops;
    l.in_shape[0] = shp(2, 3, 3, 5);
    float bp[10], bs[10];
    l.ops->init(&l, bp, bs, INIT_XAVIER, &rng);
    int bn_ok = l.ops->param_count(&l) == 10 && l.ops->state_count(&l) == 10;
    for (int i = 0; i < 5; i++) bn_ok &= bp[i] == 1.0f && bp[5 + i] == 0.0f && bs[i] == 0.0f && bs[5 + i] == 1.0f;
    EXPECT(bn_ok, "bn counts or init (gamma 1, beta 0, mean 0, var 1)");

    /* Bad configurations are refused with a message, not crashed on. */
    l.ops = &layer_maxpool_ops;
    l.cfg = cfg(2, 2, 2, 0, 0);
    err[0] = 0;
    EXPECT(l.ops->out_shape(&l, &s, err, sizeof err) == -1 && err[0], "maxpool pad >= k accepted");
    l.ops = &layer_add_ops;
    l.n_in = 2;
    l.in_shape[1] = shp(2, 3, 3, 6);
    err[0] = 0;
    EXPECT(l.ops->out_shape(&l, &s, err, sizeof err) == -1 && err[0], "add of different shapes accepted");
    printf("     host-side: out_shape/param_count/init checks done (bad-config message: \"%s\")\n", err);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);   // keep check lines in order with FAIL lines on stderr, even when piped
    gpu_test_require(1);
    unsigned long long seed = gpu_test_seed(argc, argv, "test_layers");
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    int cublas_ver = 0;
    printf("# device %s (sm_%d%d), cuDNN %zu\n", prop.name, prop.major, prop.minor, cudnnGetVersion());
    rng_t rng;
    rng_seed(&rng, seed);

    test_host_side();

    gpu_t g;
    gpu_init(&g, 0, MATH_FP32);
    gpu_workspace_reserve(&g, (size_t)256 << 20);
    CHECK_CUBLAS(cublasGetVersion(g.cublas, &cublas_ver));
    printf("# cuBLAS %d, math fp32 (strict)\n", cublas_ver);

    /* Every case runs in strict fp32 (TOL), in bf16 and in fp16 (tol_low of its stages: the derivation is at
     * TOL_BF16's definition); some of them in TF32. */
    static const case_t cases[] = {
        {"conv k3 s1 p1 bias", &layer_conv_ops, {3, 1, 1, 8, 1, 0}, 1, {4, 9, 9, 5}, 1, 1, -1, 1, ref_conv, 2},
        {"conv k3 s1 p1 nobias", &layer_conv_ops, {3, 1, 1, 8, 0, 0}, 1, {4, 9, 9, 5}, 1, 1, -1, 1, ref_conv, 1},
        {"conv k3 s1 p1 c32", &layer_conv_ops, {3, 1, 1, 32, 1, 0}, 1, {8, 8, 8, 32}, 1, 1, -1, 1, ref_conv, 2},
        {"conv k3 s2 p1 bias", &layer_conv_ops, {3, 2, 1, 12, 1, 0}, 1, {5, 10, 10, 6}, 1, 1, -1, 1, ref_conv, 2},
        {"conv k1 s2 p0 bias", &layer_conv_ops, {1, 2, 0, 16, 1, 0}, 1, {4, 8, 8, 8}, 1, 1, -1, 1, ref_conv, 2},
        {"conv k5 s1 p0 c1 (first, no dx)", &layer_conv_ops, {5, 1, 0, 6, 1, 0}, 1, {6, 12, 12, 1}, 0, 1, 0, 1, ref_conv, 2},
        /* The d2l ResNet-18 stem (direct kernels, conv_direct.cu), and a strided, padded 5x5 window through them. */
        {"conv k3 s1 p1 c1 k64 (stem, no dx)", &layer_conv_ops, {3, 1, 1, 64, 1, 0}, 1, {8, 14, 14, 1}, 0, 1, 0, 1,
         ref_conv, 2},
        {"conv k5 s2 p2 c1 k20 (no dx)", &layer_conv_ops, {5, 2, 2, 20, 0, 0}, 1, {3, 11, 11, 1}, 0, 1, 0, 1, ref_conv,
         1},
        {"conv k3 s1 p1 c1", &layer_conv_ops, {3, 1, 1, 16, 1, 0}, 1, {6, 12, 12, 1}, 1, 1, 0, 1, ref_conv, 2},
        {"conv k5 s1 p0 c1", &layer_conv_ops, {5, 1, 0, 6, 1, 0}, 1, {6, 12, 12, 1}, 1, 1, 0, 1, ref_conv, 2},
        /* ResNet-50/101's configurations: the 7x7 stride-2 stem on 3-channel data (first layer: no dx; and with
         * dx), the 1x1 stride-2 projection and the 1x1 bottleneck convolutions, all without bias. */
        {"conv k7 s2 p3 c3 nobias (stem, no dx)", &layer_conv_ops, {7, 2, 3, 16, 0, 0}, 1, {3, 17, 17, 3}, 0, 1, 0, 1,
         ref_conv, 1},
        {"conv k7 s2 p3 c3 nobias (stem, no dx, 65 wide: two im2col tiles)", &layer_conv_ops, {7, 2, 3, 8, 0, 0}, 1,
         {1, 9, 130, 3}, 0, 1, 0, 1, ref_conv, 1},
        {"conv k7 s2 p3 c3 nobias", &layer_conv_ops, {7, 2, 3, 8, 0, 0}, 1, {2, 16, 16, 3}, 1, 1, -1, 1, ref_conv, 1},
        {"conv k1 s2 p0 nobias (proj)", &layer_conv_ops, {1, 2, 0, 32, 0, 0}, 1, {4, 9, 9, 16}, 1, 1, -1, 1, ref_conv, 1},
        {"conv k1 s1 p0 nobias", &layer_conv_ops, {1, 1, 0, 16, 0, 0}, 1, {4, 7, 7, 32}, 1, 1, -1, 1, ref_conv, 1},
        {"bn train c16", &layer_bn_ops, {0, 0, 0, 0, 0, 0}, 1, {6, 8, 8, 16}, 1, 1, -3, 5, ref_bn, 1},
        {"bn train c3", &layer_bn_ops, {0, 0, 0, 0, 0, 0}, 1, {4, 7, 7, 3}, 1, 1, -3, 5, ref_bn, 1},
        {"bn inference c16", &layer_bn_ops, {0, 0, 0, 0, 0, 0}, 1, {6, 8, 8, 16}, 1, 0, -3, 5, ref_bn, 1},
        {"bn+relu train c16", &layer_bn_ops, {0, 0, 0, 0, 0, BN_FUSE_RELU}, 1, {6, 8, 8, 16}, 1, 1, -3, 5, ref_bn_fused, 1},
        {"bn+add+relu train c16", &layer_bn_ops, {0, 0, 0, 0, 0, BN_FUSE_ADD_RELU}, 2, {6, 8, 8, 16}, 1, 1, -3, 5,
         ref_bn_fused, 2},
        {"bn+add+relu infer c8", &layer_bn_ops, {0, 0, 0, 0, 0, BN_FUSE_ADD_RELU}, 2, {4, 6, 6, 8}, 1, 0, -3, 5,
         ref_bn_fused, 2},
        {"relu", &layer_relu_ops, {0, 0, 0, 0, 0, 0}, 1, {4, 9, 9, 7}, 1, 1, -1, 1, ref_relu, 1},
        {"maxpool k2 s2", &layer_maxpool_ops, {2, 2, 0, 0, 0, 0}, 1, {4, 8, 8, 6}, 1, 1, -1, 1, ref_maxpool, 1},
        {"maxpool k3 s2 p1", &layer_maxpool_ops, {3, 2, 1, 0, 0, 0}, 1, {4, 9, 9, 6}, 1, 1, -1, 1, ref_maxpool, 1},
        /* The stem's pool reads ReLU output: non-negative, and an even side (112 at 224) leaves a padded edge. */
        {"maxpool k3 s2 p1 relu-in even", &layer_maxpool_ops, {3, 2, 1, 0, 0, 0}, 1, {4, 10, 10, 8}, 1, 1, 0.001, 1,
         ref_maxpool, 1},
        /* Our kernels (pool.cu): one channel a thread (C = 3), 16-byte accesses (C = 16) on the stem's odd side. */
        {"maxpool k3 s2 p1 c3", &layer_maxpool_ops, {3, 2, 1, 0, 0, 0}, 1, {3, 11, 11, 3}, 1, 1, -1, 1, ref_maxpool, 1},
        {"maxpool k3 s2 p1 c16", &layer_maxpool_ops, {3, 2, 1, 0, 0, 0}, 1, {2, 15, 15, 16}, 1, 1, -1, 1, ref_maxpool,
         1},
        {"avgpool k2 s2", &layer_avgpool_ops, {2, 2, 0, 0, 0, 0}, 1, {4, 8, 8, 6}, 1, 1, -1, 1, ref_avgpool, 1},
        {"gap 7x7", &layer_gap_ops, {0, 0, 0, 0, 0, 0}, 1, {4, 7, 7, 16}, 1, 1, -1, 1, ref_gap, 1},
        {"gap 5x5 c3 (one channel a thread)", &layer_gap_ops, {0, 0, 0, 0, 0, 0}, 1, {3, 5, 5, 3}, 1, 1, -1, 1, ref_gap,
         1},
        {"dense 4-D in", &layer_dense_ops, {0, 0, 0, 10, 0, 0}, 1, {5, 3, 3, 4}, 1, 1, -1, 1, ref_dense, 1},
        {"dense flat (first, no dx)", &layer_dense_ops, {0, 0, 0, 12, 0, 0}, 1, {8, 1, 1, 50}, 0, 1, -1, 1, ref_dense, 1},
        {"add", &layer_add_ops, {0, 0, 0, 0, 0, 0}, 2, {4, 7, 7, 8}, 1, 1, -1, 1, ref_add, 1},
        {"flatten", &layer_flatten_ops, {0, 0, 0, 0, 0, 0}, 1, {4, 5, 5, 3}, 1, 1, -1, 1, ref_flatten, 1},
    };
    const size_t n_cases = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n_cases; i++) run_case(&g, &cases[i], &rng, TOL);
    /* Batch norm under its other training implementation (gpu.h: SCALING_BN picks one for the run). */
    g.bn = g.bn == GPU_BN_OWN ? GPU_BN_CUDNN : GPU_BN_OWN;
    for (size_t i = 0; i < n_cases; i++) if (cases[i].ops == &layer_bn_ops) run_case(&g, &cases[i], &rng, TOL);

    test_softmax_xent(&g, &rng, 37, 33, 10, 0);
    test_softmax_xent(&g, &rng, 16, 16, 100, 0);
    test_softmax_xent(&g, &rng, 5, 0, 10, 0);
    gpu_free(&g);

    /* TF32: only that the tensor-core path is chosen, runs and stays close; strict checks are the fp32 ones. */
    gpu_t t;
    gpu_init(&t, 0, MATH_TF32);
    gpu_workspace_reserve(&t, (size_t)256 << 20);
    for (size_t i = 0; i < n_cases; i++)
        if (strcmp(cases[i].name, "conv k3 s1 p1 c32") == 0 || strcmp(cases[i].name, "dense 4-D in") == 0 ||
            strncmp(cases[i].name, "conv k7", 7) == 0 || strncmp(cases[i].name, "conv k1", 7) == 0 ||
            strncmp(cases[i].name, "maxpool k3", 10) == 0)
            run_case(&t, &cases[i], &rng, TOL_TF32);
    gpu_free(&t);

    /* bf16 and fp16 (--math bf16 | fp16): every layer kind, tolerance tol_low(t, stages) (the derivation is at
     * TOL_BF16's definition); fp16's loss also with a loss scale. */
    const math_t lows[2] = {MATH_BF16, MATH_FP16};
    for (int mi = 0; mi < 2; mi++) {
        const dtype_t lt = math_act_dtype(lows[mi]);
        test_low_tolerance_rejects_low_accumulation(&rng, lt);
        gpu_t b;
        gpu_init(&b, 0, lows[mi]);
        gpu_workspace_reserve(&b, (size_t)256 << 20);
        printf("# math %s: %s activations and conv/dense operands, fp32 accumulation and parameters\n",
               gpu_math_name(lows[mi]), dtype_name(lt));
        for (size_t i = 0; i < n_cases; i++) run_case(&b, &cases[i], &rng, tol_low(lt, cases[i].lp_stages));
        b.bn = b.bn == GPU_BN_OWN ? GPU_BN_CUDNN : GPU_BN_OWN;
        for (size_t i = 0; i < n_cases; i++)
            if (cases[i].ops == &layer_bn_ops) run_case(&b, &cases[i], &rng, tol_low(lt, cases[i].lp_stages));
        test_softmax_xent(&b, &rng, 37, 33, 10, 0);
        test_softmax_xent(&b, &rng, 16, 16, 100, 0);
        if (math_loss_scaled(lows[mi])) {   /* GradScaler's first scale, and one a few halvings later */
            test_softmax_xent(&b, &rng, 37, 33, 10, 65536.0f);
            test_softmax_xent(&b, &rng, 16, 16, 100, 1024.0f);
        }
        gpu_free(&b);
    }

    /* bf16, fp16 and tf32 convolutions on the backend API's engine configs (conv_be.c), forced wherever one runs
     * (SCALING_CONV=backend), on the cases cuDNN runs: the same references and tolerances. Each searched direction of
     * the 32-channel shapes must have run one, so these checks cannot pass on the legacy path alone. Few cases:
     * compute-sanitizer runs this test (gpu_memcheck). */
    const math_t be_maths[3] = {MATH_BF16, MATH_FP16, MATH_TF32};
    for (int mi = 0; mi < 3; mi++) {
        gpu_t e;
        gpu_init(&e, 0, be_maths[mi]);
        e.conv = GPU_CONV_BACKEND;
        gpu_workspace_reserve(&e, (size_t)256 << 20);
        printf("# math %s, convolutions on backend engine configs\n", gpu_math_name(e.math));
        for (size_t i = 0; i < n_cases; i++)
            if (strcmp(cases[i].name, "conv k3 s1 p1 c32") == 0 || strcmp(cases[i].name, "conv k3 s2 p1 bias") == 0 ||
                strncmp(cases[i].name, "conv k1", 7) == 0)
                run_case(&e, &cases[i], &rng, e.math == MATH_TF32 ? TOL_TF32
                                                                  : tol_low(math_act_dtype(e.math), cases[i].lp_stages));
        int on_be = 0;
        for (int i = 0; i < e.n_conv_algos; i++) {
            const conv_algo_t *a = &e.conv_algos[i];
            if (a->key[4] == CONV_KEY_BN) continue;   /* a batch norm's measured way, not a convolution */
            const int searched[3] = {a->fwd >= 0, a->bwd_data >= 0, a->bwd_filter >= 0};
            for (int d = 0; d < 3; d++) {
                on_be += a->be[d].engine >= 0;
                EXPECT(a->key[3] != 32 || !searched[d] || a->be[d].engine >= 0,
                       "%s: shape with c=32, k=%d: direction %d searched without a backend config",
                       gpu_math_name(e.math), a->key[4], d);
            }
        }
        printf("# %s: %d directions on backend engine configs\n", gpu_math_name(e.math), on_be);
        EXPECT(on_be > 0, "%s: no convolution ran on a backend engine config", gpu_math_name(e.math));
        gpu_free(&e);
    }

    printf("# seed %llu\n", seed);
    return test_summary();
}
