/* gpt2_ref.h — what the GPT-2 kernel tests share: device buffers and random host arrays rounded to what a tensor of
 * the case's type holds, GELU (tanh) in double, and the tolerances' common terms. */
#pragma once
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>
#include "ref_check.h"
#include "dev_io.h"
#include "engine/rng.h"

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
static inline double *gpt2_dalloc(size_t n) {
    double *d = (double *)calloc(n ? n : 1, sizeof *d);
    if (!d) { fprintf(stderr, "out of host memory\n"); exit(1); }
    return d;
}
static inline double *gpt2_widen(const float *h, size_t n) {
    double *d = gpt2_dalloc(n);
    for (size_t i = 0; i < n; i++) d[i] = h[i];
    return d;
}

#define GPT2_GELU_K 0.7978845608028654   /* sqrt(2 / pi) */
static inline double gelu_ref(double x) { return 0.5 * x * (1.0 + tanh(GPT2_GELU_K * (x + 0.044715 * x * x * x))); }
static inline double gelu_grad_ref(double x) {
    double th = tanh(GPT2_GELU_K * (x + 0.044715 * x * x * x));
    return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * GPT2_GELU_K * (1.0 + 3.0 * 0.044715 * x * x);
}
