/* gpt2_ref.h — what the GPT-2 kernel tests share: device buffers and random host arrays rounded to what a tensor of
 * the case's type holds, GELU (tanh) in double, and the tolerances' common terms. */
#pragma once
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include "ref_check.h"
#include "dev_io.h"
#include "engine/rng.h"
#include "engine/optim.h"

/* Strict fp32 results of sums over at most a few thousand O(1) terms: fp32 rounding (2^-24 per operation) grows with
 * the sum's length, about sqrt(K) 2^-24 in the relative L2 norm, under 1e-6 at K = 4096; 1e-5 leaves a 10x margin
 * for libm's expf/tanhf (a few ulp) while any wrong term of an O(1) sum is far above it. */
#define GPT2_TOL 1e-5
/* One rounding of a result to bf16: relative error at most 2^-8 per element, so at most 2^-8 in the relative L2 norm;
 * a result rounded `stages` times on its way out (an intermediate stored in bf16, then the result) at most that many
 * times it, plus the fp32 arithmetic's share. */
#define GPT2_TOL_BF16(stages) ((stages) * BF16_U + GPT2_TOL)

static inline double gpt2_tol(dtype_t t, int stages) { return t == DTYPE_BF16 ? GPT2_TOL_BF16(stages) : GPT2_TOL; }

static inline void *gpt2_dev(size_t n, size_t elem) {
    void *p = NULL;
    CHECK_CUDA(cudaMalloc(&p, (n ? n : 1) * elem));
    return p;
}
/* n values uniform in [lo, hi), rounded to what a tensor of type t holds. */
static inline float *gpt2_rand(rng_t *r, size_t n, double lo, double hi, dtype_t t) {
    float *h = falloc(n);
    for (size_t i = 0; i < n; i++) h[i] = (float)(lo + (hi - lo) * rng_uniform(r));
    round_to(h, n, t);
    return h;
}
/* gpt2_rand's array, also uploaded to a fresh device buffer of type t (*dev); the caller frees both. */
static inline float *gpt2_rand_dev(rng_t *r, size_t n, double lo, double hi, dtype_t t, void **dev) {
    float *h = gpt2_rand(r, n, lo, hi, t);
    *dev = gpt2_dev(n, dtype_size(t));
    upload(*dev, h, n, t);
    return h;
}
static inline double *gpt2_widen(const float *h, size_t n) {
    double *d = dalloc(n);
    for (size_t i = 0; i < n; i++) d[i] = h[i];
    return d;
}

/* Downloads the device's n values of type t at dev into got (widened) and checks them against ref; then, where wrong
 * is not NULL, the negative control `what` against it at the same tolerance. */
static inline void gpt2_check_dev(const char *name, const char *tensor, float *got, const void *dev, dtype_t t,
                                  const double *ref, size_t n, double tol, const char *what, const double *wrong) {
    download(got, dev, n, t);
    check(name, tensor, got, ref, n, tol);
    if (wrong) control(name, what, got, ref, wrong, n, tol);
}

#define GPT2_GELU_K 0.7978845608028654   /* sqrt(2 / pi) */
static inline double gelu_ref(double x) { return 0.5 * x * (1.0 + tanh(GPT2_GELU_K * (x + 0.044715 * x * x * x))); }
static inline double gelu_grad_ref(double x) {
    double th = tanh(GPT2_GELU_K * (x + 0.044715 * x * x * x));
    return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * GPT2_GELU_K * (1.0 + 3.0 * 0.044715 * x * x);
}

/* Causal (or full) attention of heads NH over the (B, T, 3C) activation qkv (q, k, v of each position side by side,
 * each head's hd = C / NH channels), in double: out (B, T, C), and, where not NULL, the probabilities att (B, NH, T,
 * T; 0 past the query's position when causal), the rows' max + log-sum-exp lse (B, NH, T), and dqkv (B, T, 3C) for
 * the output's gradient dout. Scores are scaled by scale_fwd, backward's dS by scale_bwd (the same in a true
 * gradient; apart only for a control). The plain and the fused attention's tests share it. */
static inline void gpt2_ref_attention(int B, int T, int C, int NH, const float *qkv, const float *dout,
                                      double scale_fwd, double scale_bwd, int causal, double *out, double *att,
                                      double *lse, double *dqkv) {
    int hd = C / NH;
    if (dqkv) memset(dqkv, 0, sizeof(double) * (size_t)B * T * 3 * C);
    double *p = dalloc(T), *dp = dalloc(T);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                const float *q = qkv + ((size_t)b * T + i) * 3 * C + h * hd;
                const float *dO = dout + ((size_t)b * T + i) * C + h * hd;
                int last = causal ? i : T - 1;
                double m = -INFINITY, s = 0, sd = 0;
                for (int j = 0; j <= last; j++) {
                    const float *k = qkv + ((size_t)b * T + j) * 3 * C + C + h * hd;
                    double d = 0;
                    for (int e = 0; e < hd; e++) d += (double)q[e] * k[e];
                    p[j] = scale_fwd * d;
                    m = fmax(m, p[j]);
                }
                for (int j = 0; j <= last; j++) s += (p[j] = exp(p[j] - m));
                if (lse) lse[((size_t)b * NH + h) * T + i] = m + log(s);
                for (int j = 0; j < T; j++) {
                    p[j] = j <= last ? p[j] / s : 0.0;
                    if (att) att[(((size_t)b * NH + h) * T + i) * T + j] = p[j];
                }
                for (int j = 0; j <= last; j++) {
                    const float *v = qkv + ((size_t)b * T + j) * 3 * C + 2 * C + h * hd;
                    dp[j] = 0;
                    for (int e = 0; e < hd; e++) dp[j] += (double)dO[e] * v[e];
                    sd += p[j] * dp[j];
                }
                for (int e = 0; e < hd; e++) {
                    double o = 0;
                    for (int j = 0; j <= last; j++) o += p[j] * qkv[((size_t)b * T + j) * 3 * C + 2 * C + h * hd + e];
                    out[((size_t)b * T + i) * C + h * hd + e] = o;
                }
                if (!dqkv) continue;
                double *dq = dqkv + ((size_t)b * T + i) * 3 * C + h * hd;
                for (int j = 0; j <= last; j++) {
                    double ds = scale_bwd * p[j] * (dp[j] - sd);
                    double *dk = dqkv + ((size_t)b * T + j) * 3 * C + C + h * hd, *dv = dk + C;
                    const float *k = qkv + ((size_t)b * T + j) * 3 * C + C + h * hd;
                    for (int e = 0; e < hd; e++) {
                        dq[e] += ds * k[e];
                        dk[e] += ds * q[e];
                        dv[e] += p[j] * dO[e];
                    }
                }
            }
    free(p), free(dp);
}

/* The optimizer state GPT-2's update reads (its rate and step count; the model's AdamW is its own) at a constant
 * rate lr over n_steps steps; exits on failure. */
static inline void gpt2_test_optim(optim_t *o, double lr, long n_steps) {
    char err[256] = "";
    lr_schedule_t sched = {LR_CONSTANT, lr, 0, 0};
    if (optim_init(o, OPTIM_ADAMW, 0.0f, 0.0f, &sched, n_steps, NULL, err, sizeof err)) {
        fprintf(stderr, "optim_init: %s\n", err);
        exit(1);
    }
    CHECK_CUDA(cudaDeviceSynchronize());   /* its table went in on the legacy stream */
}
