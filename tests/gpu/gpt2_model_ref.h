/* gpt2_model_ref.h — the whole GPT-2 on the CPU in double: forward to the mean loss, backward to every parameter's
 * gradient in gpt2_shape's flat layout, AdamW; and the variants a negative control compares the GPU's results with. */
#pragma once
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpt2_ref.h"
#include "engine/gpt2/gpt2_shape.h"

/* Variants, each a wiring mistake the GPU's results must not match, and bf16's rounding. */
enum {
    REF_DROP_RESIDUAL = 1,   /* each block's attention replaces the residual stream instead of adding to it */
    REF_UNTIED_GRAD = 2,     /* the token embedding's gradient from the head alone (the scatter-add lost) */
    REF_GRAD_OVERWRITE = 4,  /* the LayerNorms' backward overwrites the residual stream's gradient (dx_beta 0) */
    REF_NO_CAUSAL = 8,       /* attention sees later positions too */
    REF_ROUND_BF16 = 16,     /* every activation and activation gradient the GPU stores in bf16 is rounded so */
    REF_ADAMW_DECAY_ALL = 32,     /* gpt2_mref_adamw: weight decay on every slice, biases and gains too */
    REF_ADAMW_NO_BIAS_CORR = 64,  /* gpt2_mref_adamw: the moments used without their bias correction */
};

typedef struct {
    const gpt2_shape_t *s;
    const gpt2_slice_t *sl;  /* gpt2_layout's, n_sl of them */
    int n_sl;
    int B, T;
    int flags;
} gpt2_mref_t;

static inline size_t mref_at(const gpt2_mref_t *r, gpt2_tensor_t k, int layer) {
    const gpt2_slice_t *s = gpt2_layout_find(r->sl, r->n_sl, k, layer);
    if (!s) { fprintf(stderr, "gpt2_model_ref: %s of layer %d missing\n", gpt2_tensor_name(k), layer); exit(1); }
    return s->at;
}
/* What the GPU holds of a value it stores as an activation. */
static inline void mref_store(const gpt2_mref_t *r, double *x, size_t n) {
    if (r->flags & REF_ROUND_BF16)
        for (size_t i = 0; i < n; i++) x[i] = bf16_ref_round((float)x[i]);
}

// --- layers

static inline void mref_ln(const double *x, const double *w, const double *b, double *y, double *mean, double *rstd,
                           int rows, int C) {
    for (int r = 0; r < rows; r++) {
        const double *xr = x + (size_t)r * C;
        double m = 0, v = 0;
        for (int c = 0; c < C; c++) m += xr[c];
        m /= C;
        for (int c = 0; c < C; c++) v += (xr[c] - m) * (xr[c] - m);
        mean[r] = m;
        rstd[r] = 1.0 / sqrt(v / C + 1e-5);
        for (int c = 0; c < C; c++) y[(size_t)r * C + c] = (xr[c] - m) * rstd[r] * w[c] + b[c];
    }
}
/* dx (overwritten, or added to with acc), dw and db added to. */
static inline void mref_ln_back(const double *x, const double *w, const double *mean, const double *rstd,
                                const double *dy, double *dx, int acc, double *dw, double *db, int rows, int C) {
    for (int r = 0; r < rows; r++) {
        const double *xr = x + (size_t)r * C, *dyr = dy + (size_t)r * C;
        double mg = 0, mgx = 0;
        for (int c = 0; c < C; c++) {
            double xh = (xr[c] - mean[r]) * rstd[r];
            mg += dyr[c] * w[c];
            mgx += dyr[c] * w[c] * xh;
            dw[c] += dyr[c] * xh;
            db[c] += dyr[c];
        }
        mg /= C;
        mgx /= C;
        for (int c = 0; c < C; c++) {
            double xh = (xr[c] - mean[r]) * rstd[r];
            double d = rstd[r] * (dyr[c] * w[c] - mg - xh * mgx);
            dx[(size_t)r * C + c] = acc ? dx[(size_t)r * C + c] + d : d;
        }
    }
}
/* y (rows, out) = x (rows, in) W^T + b (b NULL: none), W (out, in). */
static inline void mref_linear(const double *x, const double *W, const double *b, double *y, int rows, int in,
                               int out) {
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            double a = b ? b[o] : 0.0;
            for (int i = 0; i < in; i++) a += x[(size_t)r * in + i] * W[(size_t)o * in + i];
            y[(size_t)r * out + o] = a;
        }
}
/* dx = dy W (overwritten; NULL: not computed), dW += dy^T x, db += sum of dy's rows (NULL: no bias). */
static inline void mref_linear_back(const double *x, const double *W, const double *dy, double *dx, double *dW,
                                    double *db, int rows, int in, int out) {
    for (int r = 0; r < rows; r++) {
        const double *dyr = dy + (size_t)r * out, *xr = x + (size_t)r * in;
        if (dx)
            for (int i = 0; i < in; i++) {
                double a = 0;
                for (int o = 0; o < out; o++) a += dyr[o] * W[(size_t)o * in + i];
                dx[(size_t)r * in + i] = a;
            }
        for (int o = 0; o < out; o++) {
            if (db) db[o] += dyr[o];
            for (int i = 0; i < in; i++) dW[(size_t)o * in + i] += dyr[o] * xr[i];
        }
    }
}

/* Causal attention of qkv (B, T, 3C) into out (B, T, C), keeping P (B, NH, T, T) in att. The GPU stores the raw
 * scores q . k in the attention buffer first, then P over them. */
static inline void mref_attn(const gpt2_mref_t *r, const double *qkv, double *att, double *out) {
    int B = r->B, T = r->T, C = r->s->width, NH = r->s->heads, hd = C / NH;
    double scale = 1.0 / sqrt((double)hd);
    double *srow = dalloc((size_t)T);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                const double *q = qkv + ((size_t)b * T + i) * 3 * C + h * hd;
                int last = r->flags & REF_NO_CAUSAL ? T - 1 : i;
                double *p = att + (((size_t)b * NH + h) * T + i) * T, m = -INFINITY, sum = 0;
                for (int j = 0; j <= last; j++) {
                    const double *k = qkv + ((size_t)b * T + j) * 3 * C + C + h * hd;
                    double d = 0;
                    for (int e = 0; e < hd; e++) d += q[e] * k[e];
                    srow[j] = d;
                }
                mref_store(r, srow, (size_t)last + 1);
                for (int j = 0; j <= last; j++) m = fmax(m, scale * srow[j]);
                for (int j = 0; j < T; j++) {
                    p[j] = j <= last ? exp(scale * srow[j] - m) : 0.0;
                    sum += p[j];
                }
                for (int j = 0; j < T; j++) p[j] /= sum;
                mref_store(r, p, (size_t)T);
                for (int e = 0; e < hd; e++) {
                    double o = 0;
                    for (int j = 0; j < T; j++) o += p[j] * qkv[((size_t)b * T + j) * 3 * C + 2 * C + h * hd + e];
                    out[((size_t)b * T + i) * C + h * hd + e] = o;
                }
            }
    mref_store(r, out, (size_t)B * T * C);
    free(srow);
}

/* dqkv (overwritten) from dout, as the GPU: dP = dO V^T stored, then dS = scale P (dP - sum P dP) stored. */
static inline void mref_attn_back(const gpt2_mref_t *r, const double *qkv, const double *att, const double *dout,
                                  double *dqkv) {
    int B = r->B, T = r->T, C = r->s->width, NH = r->s->heads, hd = C / NH;
    double scale = 1.0 / sqrt((double)hd);
    double *dp = dalloc((size_t)T);
    memset(dqkv, 0, sizeof(double) * (size_t)B * T * 3 * C);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                const double *p = att + (((size_t)b * NH + h) * T + i) * T;
                const double *dO = dout + ((size_t)b * T + i) * C + h * hd;
                const double *q = qkv + ((size_t)b * T + i) * 3 * C + h * hd;
                double sd = 0;
                for (int j = 0; j < T; j++) {
                    const double *v = qkv + ((size_t)b * T + j) * 3 * C + 2 * C + h * hd;
                    dp[j] = 0;
                    for (int e = 0; e < hd; e++) dp[j] += dO[e] * v[e];
                }
                mref_store(r, dp, (size_t)T);
                for (int j = 0; j < T; j++) sd += p[j] * dp[j];
                for (int j = 0; j < T; j++) dp[j] = scale * p[j] * (dp[j] - sd);   /* dS */
                mref_store(r, dp, (size_t)T);
                double *dq = dqkv + ((size_t)b * T + i) * 3 * C + h * hd;
                for (int j = 0; j < T; j++) {
                    const double *k = qkv + ((size_t)b * T + j) * 3 * C + C + h * hd;
                    double *dk = dqkv + ((size_t)b * T + j) * 3 * C + C + h * hd, *dv = dk + C;
                    for (int e = 0; e < hd; e++) {
                        dq[e] += dp[j] * k[e];
                        dk[e] += dp[j] * q[e];
                        dv[e] += p[j] * dO[e];
                    }
                }
            }
    mref_store(r, dqkv, (size_t)B * T * 3 * C);
    free(dp);
}

// --- the model

/* The mean loss of parameters p (flat, double) on tokens tok and targets tgt (all in [0, vocab)); with grad (flat,
 * zeroed here) non-NULL, every parameter's gradient too. */
static inline double gpt2_mref_run(const gpt2_mref_t *r, const double *p, const int *tok, const int *tgt,
                                   double *grad) {
    const gpt2_shape_t *s = r->s;
    int L = s->layers, C = s->width, V = s->vocab, rows = r->B * r->T, T = r->T;
    size_t rc = (size_t)rows * C, natt = (size_t)r->B * s->heads * T * T;
#define P_(k, l) (p + mref_at(r, k, l))
#define G_(k, l) (grad + mref_at(r, k, l))
    double *res = dalloc((2 * (size_t)L + 1) * rc), *ln1 = dalloc(L * rc), *ln2 = dalloc(L * rc);
    double *mean = dalloc((2 * (size_t)L + 1) * rows), *rstd = dalloc((2 * (size_t)L + 1) * rows);
    double *qkv = dalloc(L * 3 * rc), *att = dalloc(L * natt), *atty = dalloc(L * rc);
    double *fcp = dalloc(L * 4 * rc), *fc = dalloc(L * 4 * rc), *lnf = dalloc(rc);
    double *logits = dalloc((size_t)rows * V);
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < C; c++)
            res[(size_t)i * C + c] =
                P_(GPT2_WTE, -1)[(size_t)tok[i] * C + c] + P_(GPT2_WPE, -1)[(size_t)(i % T) * C + c];
    mref_store(r, res, rc);
    for (int l = 0; l < L; l++) {
        double *x0 = res + 2 * l * rc, *x1 = x0 + rc, *x2 = x1 + rc;
        mref_ln(x0, P_(GPT2_LN1_W, l), P_(GPT2_LN1_B, l), ln1 + l * rc, mean + 2 * l * rows, rstd + 2 * l * rows, rows,
                C);
        mref_store(r, ln1 + l * rc, rc);
        mref_linear(ln1 + l * rc, P_(GPT2_QKV_W, l), P_(GPT2_QKV_B, l), qkv + l * 3 * rc, rows, C, 3 * C);
        mref_store(r, qkv + l * 3 * rc, 3 * rc);
        mref_attn(r, qkv + l * 3 * rc, att + l * natt, atty + l * rc);
        mref_linear(atty + l * rc, P_(GPT2_ATTN_PROJ_W, l), P_(GPT2_ATTN_PROJ_B, l), x1, rows, C, C);
        if (!(r->flags & REF_DROP_RESIDUAL))
            for (size_t i = 0; i < rc; i++) x1[i] += x0[i];
        mref_store(r, x1, rc);
        mref_ln(x1, P_(GPT2_LN2_W, l), P_(GPT2_LN2_B, l), ln2 + l * rc, mean + (2 * l + 1) * rows,
                rstd + (2 * l + 1) * rows, rows, C);
        mref_store(r, ln2 + l * rc, rc);
        mref_linear(ln2 + l * rc, P_(GPT2_FC_W, l), P_(GPT2_FC_B, l), fcp + l * 4 * rc, rows, C, 4 * C);
        mref_store(r, fcp + l * 4 * rc, 4 * rc);
        for (size_t i = 0; i < 4 * rc; i++) fc[l * 4 * rc + i] = gelu_ref(fcp[l * 4 * rc + i]);
        mref_store(r, fc + l * 4 * rc, 4 * rc);
        mref_linear(fc + l * 4 * rc, P_(GPT2_MLP_PROJ_W, l), P_(GPT2_MLP_PROJ_B, l), x2, rows, 4 * C, C);
        for (size_t i = 0; i < rc; i++) x2[i] += x1[i];
        mref_store(r, x2, rc);
    }
    mref_ln(res + 2 * L * rc, P_(GPT2_LNF_W, -1), P_(GPT2_LNF_B, -1), lnf, mean + 2 * L * rows, rstd + 2 * L * rows,
            rows, C);
    mref_store(r, lnf, rc);
    mref_linear(lnf, P_(GPT2_WTE, -1), NULL, logits, rows, C, V);   /* the head: wte's first V rows */
    mref_store(r, logits, (size_t)rows * V);
    double loss = 0;
    for (int i = 0; i < rows; i++) {   /* logits become dloss/dlogits = (softmax - onehot) / rows */
        double *z = logits + (size_t)i * V, m = -INFINITY, se = 0;
        for (int v = 0; v < V; v++) m = fmax(m, z[v]);
        for (int v = 0; v < V; v++) se += exp(z[v] - m);
        loss += m + log(se) - z[tgt[i]];
        for (int v = 0; v < V; v++) z[v] = (exp(z[v] - m) / se - (v == tgt[i])) / rows;
    }
    loss /= rows;
    if (grad) {
        int ow = r->flags & REF_GRAD_OVERWRITE ? 0 : 1;
        size_t n = (r->sl[r->n_sl - 1].at + r->sl[r->n_sl - 1].len + GPT2_ALIGN - 1) / GPT2_ALIGN * GPT2_ALIGN;
        memset(grad, 0, n * sizeof *grad);
        mref_store(r, logits, (size_t)rows * V);
        double *dres = dalloc(rc), *dc = dalloc(rc), *d4 = dalloc(4 * rc);
        mref_linear_back(lnf, P_(GPT2_WTE, -1), logits, dc, G_(GPT2_WTE, -1), NULL, rows, C, V);
        mref_store(r, dc, rc);
        mref_ln_back(res + 2 * L * rc, P_(GPT2_LNF_W, -1), mean + 2 * L * rows, rstd + 2 * L * rows, dc, dres, 0,
                     G_(GPT2_LNF_W, -1), G_(GPT2_LNF_B, -1), rows, C);
        mref_store(r, dres, rc);
        for (int l = L - 1; l >= 0; l--) {
            double *x0 = res + 2 * l * rc, *x1 = x0 + rc;
            mref_linear_back(fc + l * 4 * rc, P_(GPT2_MLP_PROJ_W, l), dres, d4, G_(GPT2_MLP_PROJ_W, l),
                             G_(GPT2_MLP_PROJ_B, l), rows, 4 * C, C);
            for (size_t i = 0; i < 4 * rc; i++) d4[i] *= gelu_grad_ref(fcp[l * 4 * rc + i]);
            mref_store(r, d4, 4 * rc);
            mref_linear_back(ln2 + l * rc, P_(GPT2_FC_W, l), d4, dc, G_(GPT2_FC_W, l), G_(GPT2_FC_B, l), rows, C,
                             4 * C);
            mref_store(r, dc, rc);
            mref_ln_back(x1, P_(GPT2_LN2_W, l), mean + (2 * l + 1) * rows, rstd + (2 * l + 1) * rows, dc, dres, ow,
                         G_(GPT2_LN2_W, l), G_(GPT2_LN2_B, l), rows, C);
            mref_store(r, dres, rc);
            mref_linear_back(atty + l * rc, P_(GPT2_ATTN_PROJ_W, l), dres, dc, G_(GPT2_ATTN_PROJ_W, l),
                             G_(GPT2_ATTN_PROJ_B, l), rows, C, C);
            mref_store(r, dc, rc);
            mref_attn_back(r, qkv + l * 3 * rc, att + l * natt, dc, d4);
            mref_linear_back(ln1 + l * rc, P_(GPT2_QKV_W, l), d4, dc, G_(GPT2_QKV_W, l), G_(GPT2_QKV_B, l), rows, C,
                             3 * C);
            mref_store(r, dc, rc);
            if (r->flags & REF_DROP_RESIDUAL) memset(dres, 0, rc * sizeof *dres);   /* x1 did not depend on x0 */
            mref_ln_back(x0, P_(GPT2_LN1_W, l), mean + 2 * l * rows, rstd + 2 * l * rows, dc, dres,
                         ow && !(r->flags & REF_DROP_RESIDUAL), G_(GPT2_LN1_W, l), G_(GPT2_LN1_B, l), rows, C);
            mref_store(r, dres, rc);
        }
        for (int i = 0; i < rows; i++)
            for (int c = 0; c < C; c++) {
                if (!(r->flags & REF_UNTIED_GRAD)) G_(GPT2_WTE, -1)[(size_t)tok[i] * C + c] += dres[(size_t)i * C + c];
                G_(GPT2_WPE, -1)[(size_t)(i % T) * C + c] += dres[(size_t)i * C + c];
            }
        free(dres), free(dc), free(d4);
    }
#undef P_
#undef G_
    free(res), free(ln1), free(ln2), free(mean), free(rstd), free(qkv), free(att), free(atty), free(fcp), free(fc);
    free(lnf), free(logits);
    return loss;
}

/* One AdamW step of the slices as gpt2_adamw_step: g clipped to max_norm by its global norm (max_norm 0: not
 * clipped), decoupled weight decay on the slices that decay; t counts from 1. r's REF_ADAMW_ flags: a control's
 * variant. test_gpt2_adamw and test_gpt2_model both step by it. */
static inline void gpt2_mref_adamw(const gpt2_mref_t *r, double *p, double *m, double *v, const double *g, double lr,
                                   long t, double beta1, double beta2, double eps, double wd, double max_norm) {
    double ss = 0;
    for (int k = 0; k < r->n_sl; k++)
        for (size_t i = r->sl[k].at; i < r->sl[k].at + r->sl[k].len; i++) ss += g[i] * g[i];
    double clip = max_norm > 0 ? fmin(1.0, max_norm / (sqrt(ss) + 1e-6)) : 1.0;
    double bc1 = 1.0 - pow(beta1, (double)t), bc2 = 1.0 - pow(beta2, (double)t);
    if (r->flags & REF_ADAMW_NO_BIAS_CORR) bc1 = bc2 = 1.0;
    for (int k = 0; k < r->n_sl; k++) {
        double decay = r->sl[k].decay || (r->flags & REF_ADAMW_DECAY_ALL) ? wd : 0.0;
        for (size_t i = r->sl[k].at; i < r->sl[k].at + r->sl[k].len; i++) {
            double gi = clip * g[i];
            m[i] = beta1 * m[i] + (1.0 - beta1) * gi;
            v[i] = beta2 * v[i] + (1.0 - beta2) * gi * gi;
            p[i] -= lr * (m[i] / bc1 / (sqrt(v[i] / bc2) + eps) + decay * p[i]);
        }
    }
}

/* Parameters for the comparisons, far from GPT-2's initialisation so that every term counts: matrices normal(0, 0.1)
 * (attention then weighs positions unevenly and GELU is curved where the MLP's inputs fall), biases and LayerNorm
 * shifts uniform in [-0.1, 0.1], gains in [0.8, 1.2]; the token embedding's padding rows and the padding between
 * slices 0. Rounded to what a tensor of type t holds: under bf16 the GPU reads the bf16 copy, equal to these. */
static inline void gpt2_mref_random_params(const gpt2_mref_t *r, rng_t *rng, float *flat, size_t n_flat,
                                           dtype_t t) {
    memset(flat, 0, n_flat * sizeof *flat);
    for (int k = 0; k < r->n_sl; k++) {
        const gpt2_slice_t *sl = &r->sl[k];
        float *p = flat + sl->at;
        size_t len = sl->kind == GPT2_WTE ? (size_t)r->s->vocab * r->s->width : sl->len;
        for (size_t i = 0; i < len; i++) {
            double u = 2.0 * rng_uniform(rng) - 1.0;
            switch (sl->kind) {
            case GPT2_LN1_W: case GPT2_LN2_W: case GPT2_LNF_W: p[i] = (float)(1.0 + 0.2 * u); break;
            default: p[i] = (float)(sl->rows > 1 ? 0.1 * rng_normal(rng) : 0.1 * u); break;
            }
        }
    }
    round_to(flat, n_flat, t);
}
