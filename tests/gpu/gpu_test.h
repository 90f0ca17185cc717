/* gpu_test.h — what every GPU test shares: skip (exit 77, which ctest reports as skipped) with a message where
 * fewer CUDA devices are present than the test needs, the relative-error measure, and bf16 on the host. */
#pragma once
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test.h"

static inline void gpu_test_require(int n_gpus) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < n_gpus) {
        printf("SKIP: needs %d CUDA device(s), found %d (%s)\n", n_gpus, e == cudaSuccess ? n : 0,
               e == cudaSuccess ? "ok" : cudaGetErrorString(e));
        exit(TEST_SKIP_CODE);
    }
}

/* ||a - b|| / ||b||, in double. */
static inline double rel_err_f(const float *a, const double *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - b[i];
        num += d * d;
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* bf16 on the host, for references: the bits of f rounded to nearest even (as __float2bfloat16_rn; NaN stays a
 * quiet NaN), and a bf16's value. */
static inline unsigned short bf16_bits(float f) {
    unsigned u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
static inline float bf16_value(unsigned short b) {
    unsigned u = (unsigned)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline float bf16_round(float f) { return bf16_value(bf16_bits(f)); }
