/* gpu_test.h — what every GPU test shares: skip (exit 77, which ctest reports as skipped) with a message where
 * fewer CUDA devices are present than the test needs, and the relative-error measure of the comparisons. */
#pragma once
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

