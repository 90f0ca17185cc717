/* gpu_test.h — what every GPU test shares: skip (exit 77, which ctest reports as skipped) with a message where
 * fewer CUDA devices are present than the test needs, the run's seed, and the relative-error measure. */
#pragma once
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "test.h"

/* A host-side check that failed before this still fails the test: the skip never hides it. */
static inline void gpu_test_require(int n_gpus) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < n_gpus) {
        printf("SKIP: needs %d CUDA device(s), found %d (%s)\n", n_gpus, e == cudaSuccess ? n : 0,
               e == cudaSuccess ? "ok" : cudaGetErrorString(e));
        exit(test_failed_ ? test_summary() : TEST_SKIP_CODE);
    }
}

/* The seed of this run: argv[1] if given, else fresh from the clock and the pid; printed with the command that
 * reruns it. */
static inline unsigned long long gpu_test_seed(int argc, char **argv, const char *name) {
    unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0)
                                       : ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid();
    printf("# %s: seed %llu (rerun: %s %llu)\n", name, seed, name, seed);
    return seed;
}

/* ||a - b|| / ||scale||, in double; scale NULL: ||a - b|| / ||b||. */
static inline double rel_err_scaled(const float *a, const double *b, const double *scale, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - b[i], s = scale ? scale[i] : b[i];
        num += d * d;
        den += s * s;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* ||a - b|| / ||b||, in double. */
static inline double rel_err_f(const float *a, const double *b, size_t n) { return rel_err_scaled(a, b, NULL, n); }

