/* dev_io.h — the layer tests' host arrays and their moves: float host arrays, rounded to what a bf16 or fp16 tensor
 * holds, to and from a device tensor of the layer's dtype (widened exactly on the way out), and poisoning with NaN.
 * upload and poison return with the device synchronised: they run on the legacy stream (a pageable cudaMemcpy may
 * return before it lands, a cudaMemset is asynchronous), and the engine's non-blocking streams do not wait for it. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>
#include "bf16_ref.h"
#include "fp16_ref.h"
#include "engine/check.h"
#include "engine/dtype.h"

static inline float *falloc(size_t n) {
    float *p = (float *)calloc(n ? n : 1, sizeof(float));
    if (!p) { fprintf(stderr, "out of host memory\n"); exit(1); }
    return p;
}
/* n zeroed doubles on the host (at least one): a CPU reference's arrays. */
static inline double *dalloc(size_t n) {
    double *p = (double *)calloc(n ? n : 1, sizeof(double));
    if (!p) { fprintf(stderr, "out of host memory\n"); exit(1); }
    return p;
}
/* A float as a 2-byte type's bits (round to nearest even), and back. */
static inline unsigned short half_bits(float f, dtype_t t) { return t == DTYPE_FP16 ? fp16_ref_rne(f) : bf16_ref_rne(f); }
static inline float half_widen(unsigned short h, dtype_t t) { return t == DTYPE_FP16 ? fp16_ref_widen(h) : bf16_ref_widen(h); }
/* What a buffer of type t holds after f is stored in it. */
static inline float round_as(float f, dtype_t t) { return t == DTYPE_FP32 ? f : half_widen(half_bits(f, t), t); }
/* What a bf16 or fp16 buffer will hold: the reference is computed from exactly these values. */
static inline void round_to(float *h, size_t n, dtype_t t) {
    for (size_t i = 0; t != DTYPE_FP32 && i < n; i++) h[i] = round_as(h[i], t);
}

static inline void upload(void *d, const float *h, size_t n, dtype_t t) {
    if (!n) return;
    if (t == DTYPE_FP32) {
        CHECK_CUDA(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaDeviceSynchronize());
        return;
    }
    unsigned short *b = (unsigned short *)malloc(n * sizeof *b);
    if (!b) { fprintf(stderr, "out of host memory\n"); exit(1); }
    for (size_t i = 0; i < n; i++) b[i] = half_bits(h[i], t);
    CHECK_CUDA(cudaMemcpy(d, b, n * sizeof *b, cudaMemcpyHostToDevice));
    free(b);
    CHECK_CUDA(cudaDeviceSynchronize());
}
static inline void download(float *h, const void *d, size_t n, dtype_t t) {
    if (!n) return;
    CHECK_CUDA(cudaMemcpy(h, d, n * dtype_size(t), cudaMemcpyDeviceToHost));
    if (t != DTYPE_FP32)   /* widen in place from the end: element i's bits sit in the buffer's first half */
        for (size_t i = n; i-- > 0;) h[i] = half_widen(((const unsigned short *)h)[i], t);
}
/* All-ones bytes are NaN in fp32, bf16 and fp16: an element left unwritten fails its comparison. */
static inline void poison(void *d, size_t n, dtype_t t) {
    if (!n) return;
    CHECK_CUDA(cudaMemset(d, 0xFF, n * dtype_size(t)));
    CHECK_CUDA(cudaDeviceSynchronize());
}
