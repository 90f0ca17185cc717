/* trace.c — records CUDA-event pairs around the ranges a strategy marks during traced steps, and resolves them to
 * per-GPU microseconds at the end; nothing is recorded (and nothing synchronises) outside traced steps. */
#include "trace.h"
#include "check.h"
#include <stdlib.h>
#include <string.h>

void trace_init(trace_t *t, int cap) {
    memset(t, 0, sizeof *t);
    t->cap = cap;
    t->r = calloc((size_t)cap, sizeof *t->r);
    if (!t->r) check_fail(__FILE__, __LINE__, "calloc", "out of host memory");
}

void trace_origin(trace_t *t, int device, cudaStream_t stream) {
    if (!t || !t->active) return;
    for (int i = 0; i < t->n_origins; i++)
        if (t->origin_dev[i] == device) return;
    if (t->n_origins == TRACE_MAX_DEVICES) return;
    int k = t->n_origins++;
    t->origin_dev[k] = device;
    CHECK_CUDA(cudaSetDevice(device));
    CHECK_CUDA(cudaEventCreate(&t->origin[k]));
    CHECK_CUDA(cudaEventRecord(t->origin[k], stream));
}

int trace_begin(trace_t *t, int device, int lane, cudaStream_t stream, const char *name) {
    if (!t || !t->active) return -1;
    if (t->n == t->cap) {
        t->dropped++;
        return -1;
    }
    trace_range_t *r = &t->r[t->n];
    r->gpu = device;
    r->lane = lane;
    snprintf(r->name, sizeof r->name, "%s", name);
    CHECK_CUDA(cudaSetDevice(device));
    /* Created here, on the range's device, only during the few traced steps. */
    CHECK_CUDA(cudaEventCreate(&r->start));
    CHECK_CUDA(cudaEventCreate(&r->stop));
    CHECK_CUDA(cudaEventRecord(r->start, stream));
    return t->n++;
}

void trace_end(trace_t *t, int idx, cudaStream_t stream) {
    if (!t || idx < 0) return;
    CHECK_CUDA(cudaSetDevice(t->r[idx].gpu));
    CHECK_CUDA(cudaEventRecord(t->r[idx].stop, stream));
}

int trace_resolve(trace_t *t, trace_event_t *out) {
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        const trace_range_t *r = &t->r[i];
        int k = 0;
        while (k < t->n_origins && t->origin_dev[k] != r->gpu) k++;
        if (k == t->n_origins) continue;   /* a range before its GPU's origin: a strategy bug, left out */
        CHECK_CUDA(cudaSetDevice(r->gpu));
        CHECK_CUDA(cudaEventSynchronize(r->stop));
        float a = 0, b = 0;
        CHECK_CUDA(cudaEventElapsedTime(&a, t->origin[k], r->start));
        CHECK_CUDA(cudaEventElapsedTime(&b, r->start, r->stop));
        out[n].gpu = r->gpu;
        out[n].lane = r->lane;
        memcpy(out[n].name, r->name, sizeof out[n].name);
        out[n].ts_us = 1000.0 * a;
        out[n].dur_us = 1000.0 * b;
        n++;
    }
    return n;
}

void trace_reset(trace_t *t) {
    for (int i = 0; i < t->n; i++) {
        CHECK_CUDA(cudaSetDevice(t->r[i].gpu));
        CHECK_CUDA(cudaEventDestroy(t->r[i].start));
        CHECK_CUDA(cudaEventDestroy(t->r[i].stop));
    }
    for (int k = 0; k < t->n_origins; k++) {
        CHECK_CUDA(cudaSetDevice(t->origin_dev[k]));
        CHECK_CUDA(cudaEventDestroy(t->origin[k]));
    }
    t->n = 0;
    t->n_origins = 0;
    t->dropped = 0;
}

void trace_free(trace_t *t) {
    if (!t->r) return;
    trace_reset(t);
    free(t->r);
    memset(t, 0, sizeof *t);
}
