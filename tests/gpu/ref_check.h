/* ref_check.h — what the kernel tests (test_bn_nhwc, test_maxpool) judge a result by: relative L2 error against
 * a CPU double reference with the first mismatch printed, a negative control that must fail; and their --bench
 * timer. */
#pragma once
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>
#include "gpu_test.h"
#include "engine/check.h"

/* A result summed from terms that cancel (batch norm's dx, which is ~0 at two samples a channel) carries rounding of
 * the size of the terms, not of the result: check_scaled and control_scaled judge its error against the norm of
 * scale, the terms' magnitude (rel_err_scaled), where given, else against the result's own. */
static inline double check_scaled(const char *name, const char *tensor, const float *got, const double *ref,
                                  const double *scale, size_t n, double tol) {
    double err = rel_err_scaled(got, ref, scale, n);
    int ok = err <= tol;   // false for NaN
    printf("%-4s %-40s %-22s %s %.3e  (n=%zu, tol %.1e)\n", ok ? "ok" : "FAIL", name, tensor,
           scale ? "err/terms" : "rel_err", err, n, tol);
    if (!ok)
        for (size_t i = 0; i < n; i++)
            if (!(fabs(got[i] - ref[i]) <= tol * ((scale ? scale[i] : fabs(ref[i])) + 1e-3))) {
                printf("       first mismatch at %zu (channel-fastest): got %.9g ref %.9g\n", i, got[i], ref[i]);
                break;
            }
    EXPECT(ok, "%s %s: %s %.3e > %.1e", name, tensor, scale ? "error against the terms" : "rel_err", err, tol);
    return err;
}

static inline double check(const char *name, const char *tensor, const float *got, const double *ref, size_t n,
                           double tol) {
    return check_scaled(name, tensor, got, ref, NULL, n, tol);
}

/* A negative control: what the wrong variant would give must fail the tolerance the right one passes, by the same
 * measure (against scale where given, else against the wrong values). Asserted only where the two variants are apart
 * by more than twice the tolerance (else printed, as it could not fail). */
static inline void control_scaled(const char *name, const char *what, const float *got, const double *right,
                                  const double *wrong, const double *scale, size_t n, double tol) {
    double apart = 0.0, num = 0.0;
    for (size_t i = 0; i < n; i++) {
        apart += (right[i] - wrong[i]) * (right[i] - wrong[i]);
        num += scale ? scale[i] * scale[i] : wrong[i] * wrong[i];
    }
    apart = num > 0 ? sqrt(apart / num) : sqrt(apart);
    double err = rel_err_scaled(got, wrong, scale, n);
    if (apart <= 2 * tol) {
        printf("n/a  %-40s [control] %-30s variants only %.1e apart\n", name, what, apart);
        return;
    }
    printf("%-4s %-40s [control] %-30s %s %.3e (must exceed %.1e)\n", err > tol ? "ok" : "FAIL", name, what,
           scale ? "err/terms" : "rel_err", err, tol);
    EXPECT(err > tol, "%s: the wrong variant (%s) passes: %.3e <= %.1e", name, what, err, tol);
}

static inline void control(const char *name, const char *what, const float *got, const double *right,
                           const double *wrong, size_t n, double tol) {
    control_scaled(name, what, got, right, wrong, NULL, n, tol);
}

static inline int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

enum { TIME_MAX_REPS = 64 };

/* Microseconds per call of call(ctx) on stream s: a rep is `burst` calls back to back between two events (the host
 * queues them faster than they run, so launch gaps do not count, as in the training step's CUDA graph); the median
 * rep of `reps` (at most TIME_MAX_REPS) after `warm`. */
static inline float time_burst_us(cudaStream_t s, int warm, int reps, int burst, void (*call)(void *), void *ctx) {
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    float ms[TIME_MAX_REPS];
    if (reps > TIME_MAX_REPS) reps = TIME_MAX_REPS;
    for (int i = 0; i < warm + reps; i++) {
        CHECK_CUDA(cudaEventRecord(e0, s));
        for (int k = 0; k < burst; k++) call(ctx);
        CHECK_CUDA(cudaEventRecord(e1, s));
        CHECK_CUDA(cudaEventSynchronize(e1));
        if (i >= warm) CHECK_CUDA(cudaEventElapsedTime(&ms[i - warm], e0, e1));
    }
    CHECK_CUDA(cudaEventDestroy(e0));
    CHECK_CUDA(cudaEventDestroy(e1));
    qsort(ms, (size_t)reps, sizeof ms[0], cmp_float);
    return 1000.0f * ms[reps / 2] / (float)burst;
}
