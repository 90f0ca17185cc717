/* layer_ref.h — the CPU double-precision references test_layers checks every layer against: the forward, and the
 * gradients of the inputs and parameters accumulated into zeroed arrays (the runner adds beta x prior). */
#pragma once
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "engine/layer.h"
#include "dev_io.h"

static inline size_t at(shape_t s, int n, int h, int w, int c) { return (((size_t)n * s.h + h) * s.w + w) * s.c + c; }

typedef struct {
    const float *x[2], *w, *state, *dy;     // inputs, host
    double *y, *dx[2], *dw, *state_out;     // dx[i] NULL when not wanted
    double *state_alt;                      // an alternative convention, printed when state_out fails
    const char *state_alt_name;
    const float *relu_y;    // fused batch norm: the ReLU mask from this output (the GPU's y > 0), else its own
} ref_t;

typedef void (*ref_fn)(const layer_t *l, int training, ref_t *r);

static void ref_conv(const layer_t *l, int training, ref_t *r) {
    (void)training;
    shape_t in = l->in_shape[0], out = l->out_shape;
    int K = out.c, k = l->cfg.k, st = l->cfg.stride, pad = l->cfg.pad, C = in.c;
    size_t nw = (size_t)K * k * k * C;
    const float *b = l->cfg.bias ? r->w + nw : NULL;
    for (int n = 0; n < out.n; n++)
        for (int oh = 0; oh < out.h; oh++)
            for (int ow = 0; ow < out.w; ow++)
                for (int kk = 0; kk < K; kk++) {
                    size_t o = at(out, n, oh, ow, kk);
                    double acc = b ? b[kk] : 0.0, g = r->dy[o];
                    if (b) r->dw[nw + kk] += g;
                    for (int rr = 0; rr < k; rr++)
                        for (int ss = 0; ss < k; ss++) {
                            int ih = oh * st - pad + rr, iw = ow * st - pad + ss;
                            if (ih < 0 || ih >= in.h || iw < 0 || iw >= in.w) continue;
                            for (int c = 0; c < C; c++) {
                                size_t xi = at(in, n, ih, iw, c), wi = (((size_t)kk * k + rr) * k + ss) * C + c;
                                acc += (double)r->x[0][xi] * r->w[wi];
                                r->dw[wi] += g * r->x[0][xi];
                                if (r->dx[0]) r->dx[0][xi] += g * r->w[wi];
                            }
                        }
                    r->y[o] = acc;
                }
}

/* Training normalises with the biased batch variance; the running var is expected to receive the unbiased one
 * (x M/(M-1), M = N*H*W), which is PyTorch's convention and what cuDNN is relied on for by PyTorch. x spans [-3, 5]
 * so the two conventions differ by ~10x the tolerance; on failure the error against the biased one is printed. */
static void ref_bn(const layer_t *l, int training, ref_t *r) {
    shape_t s = l->in_shape[0];
    int C = s.c;
    size_t M = (size_t)s.n * s.h * s.w;
    const float *x = r->x[0], *gam = r->w, *bet = r->w + C, *rm = r->state, *rv = r->state + C;
    for (int c = 0; c < C; c++) {
        double mean = 0.0, var = 0.0;
        for (size_t i = 0; i < M; i++) mean += x[i * C + c];
        mean /= M;
        for (size_t i = 0; i < M; i++) var += (x[i * C + c] - mean) * (x[i * C + c] - mean);
        var /= M;
        if (!training) {
            double inv = 1.0 / sqrt((double)rv[c] + 1e-5);
            for (size_t i = 0; i < M; i++) r->y[i * C + c] = gam[c] * (x[i * C + c] - rm[c]) * inv + bet[c];
            r->state_out[c] = r->state_alt[c] = rm[c];
            r->state_out[C + c] = r->state_alt[C + c] = rv[c];
            continue;
        }
        double inv = 1.0 / sqrt(var + 1e-5), dbeta = 0.0, dgamma = 0.0;
        for (size_t i = 0; i < M; i++) {
            double xh = (x[i * C + c] - mean) * inv;
            r->y[i * C + c] = gam[c] * xh + bet[c];
            dbeta += r->dy[i * C + c];
            dgamma += r->dy[i * C + c] * xh;
        }
        r->dw[c] += dgamma;
        r->dw[C + c] += dbeta;
        if (r->dx[0])
            for (size_t i = 0; i < M; i++) {
                double xh = (x[i * C + c] - mean) * inv;
                r->dx[0][i * C + c] += gam[c] * inv / M * (M * r->dy[i * C + c] - dbeta - xh * dgamma);
            }
        r->state_out[c] = r->state_alt[c] = 0.9 * rm[c] + 0.1 * mean;
        r->state_out[C + c] = 0.9 * rv[c] + 0.1 * var * M / (M - 1);
        r->state_alt[C + c] = 0.9 * rv[c] + 0.1 * var;
    }
    r->state_alt_name = "biased running var";
}

/* y = relu(bn(x0) [+ x1]): BN's reference on the forward, then ReLU's mask on the way back. */
static void ref_bn_fused(const layer_t *l, int training, ref_t *r) {
    shape_t s = l->in_shape[0];
    size_t n = shape_numel(s);
    float *zero = (float *)calloc(n, sizeof(float)), *dpre = (float *)calloc(n, sizeof(float));
    double *pre = dalloc(n), *junk = dalloc(n > 64 ? n : 64), *dwj = dalloc(2 * (size_t)s.c);
    ref_t f = *r;                       // forward only: BN output, nothing accumulated into r
    f.dy = zero; f.y = pre; f.dx[0] = f.dx[1] = NULL; f.dw = dwj;
    ref_bn(l, training, &f);
    for (size_t i = 0; i < n; i++) {
        if (l->cfg.fuse == BN_FUSE_ADD_RELU) pre[i] += r->x[1][i];
        r->y[i] = pre[i] > 0 ? pre[i] : 0.0;
        /* An element within rounding of the kink goes the way the GPU's forward sent it, when that is given. */
        int on = r->relu_y ? r->relu_y[i] > 0 : pre[i] > 0;
        dpre[i] = on ? r->dy[i] : 0.0f;
        if (l->cfg.fuse == BN_FUSE_ADD_RELU && r->dx[1]) r->dx[1][i] += dpre[i];
    }
    ref_t b = *r;                       // backward of BN with d(pre-activation)
    b.dy = dpre; b.y = junk; b.dx[1] = NULL;
    ref_bn(l, training, &b);
    free(zero); free(dpre); free(pre); free(junk); free(dwj);
}

static void ref_relu(const layer_t *l, int training, ref_t *r) {
    (void)training;
    size_t n = shape_numel(l->in_shape[0]);
    for (size_t i = 0; i < n; i++) {
        r->y[i] = r->x[0][i] > 0 ? r->x[0][i] : 0.0;
        if (r->dx[0]) r->dx[0][i] += r->x[0][i] > 0 ? r->dy[i] : 0.0;
    }
}

/* Max ignores padding; average divides by k*k (padding counts as zeros). gap is the window h x w. */
static void ref_pool_impl(const layer_t *l, ref_t *r, int is_max, int k_h, int k_w, int st_h, int st_w, int pad) {
    shape_t in = l->in_shape[0], out = l->out_shape;
    for (int n = 0; n < out.n; n++)
        for (int oh = 0; oh < out.h; oh++)
            for (int ow = 0; ow < out.w; ow++)
                for (int c = 0; c < out.c; c++) {
                    size_t o = at(out, n, oh, ow, c), best = 0;
                    double acc = is_max ? -INFINITY : 0.0;
                    for (int rr = 0; rr < k_h; rr++)
                        for (int ss = 0; ss < k_w; ss++) {
                            int ih = oh * st_h - pad + rr, iw = ow * st_w - pad + ss;
                            if (ih < 0 || ih >= in.h || iw < 0 || iw >= in.w) continue;
                            size_t xi = at(in, n, ih, iw, c);
                            if (!is_max) {
                                acc += r->x[0][xi];
                                if (r->dx[0]) r->dx[0][xi] += r->dy[o] / (k_h * k_w);
                            } else if (r->x[0][xi] > acc) {
                                acc = r->x[0][xi];
                                best = xi;
                            }
                        }
                    r->y[o] = is_max ? acc : acc / (k_h * k_w);
                    if (is_max && r->dx[0]) r->dx[0][best] += r->dy[o];
                }
}
static void ref_maxpool(const layer_t *l, int training, ref_t *r) {
    (void)training;
    ref_pool_impl(l, r, 1, l->cfg.k, l->cfg.k, l->cfg.stride, l->cfg.stride, l->cfg.pad);
}
static void ref_avgpool(const layer_t *l, int training, ref_t *r) {
    (void)training;
    ref_pool_impl(l, r, 0, l->cfg.k, l->cfg.k, l->cfg.stride, l->cfg.stride, l->cfg.pad);
}
static void ref_gap(const layer_t *l, int training, ref_t *r) {
    (void)training;
    shape_t in = l->in_shape[0];
    ref_pool_impl(l, r, 0, in.h, in.w, in.h, in.w, 0);
}

static void ref_dense(const layer_t *l, int training, ref_t *r) {
    (void)training;
    int N = l->in_shape[0].n, in = (int)shape_per_sample(l->in_shape[0]), out = l->cfg.cout;
    const float *b = r->w + (size_t)in * out;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < out; o++) {
            double acc = b[o], g = r->dy[(size_t)n * out + o];
            for (int i = 0; i < in; i++) {
                acc += (double)r->w[(size_t)o * in + i] * r->x[0][(size_t)n * in + i];
                r->dw[(size_t)o * in + i] += g * r->x[0][(size_t)n * in + i];
                if (r->dx[0]) r->dx[0][(size_t)n * in + i] += g * r->w[(size_t)o * in + i];
            }
            r->dw[(size_t)in * out + o] += g;
            r->y[(size_t)n * out + o] = acc;
        }
}

static void ref_add(const layer_t *l, int training, ref_t *r) {
    (void)training;
    size_t n = shape_numel(l->in_shape[0]);
    for (size_t i = 0; i < n; i++) {
        r->y[i] = (double)r->x[0][i] + r->x[1][i];
        for (int k = 0; k < 2; k++) if (r->dx[k]) r->dx[k][i] += r->dy[i];
    }
}

static void ref_flatten(const layer_t *l, int training, ref_t *r) {
    (void)training;
    size_t n = shape_numel(l->in_shape[0]);
    for (size_t i = 0; i < n; i++) {
        r->y[i] = r->x[0][i];
        if (r->dx[0]) r->dx[0][i] += r->dy[i];
    }
}
