/* restart.h — puts a single-strategy replica back where it started, so that two ways of training it (eager and
 * graphed, host- and device-stepped schedules) are compared from one setup, with the same cuDNN algorithms. */
#pragma once
#include "../../engine/replica.h"
#include "../../engine/reduce.h"
#include "../../engine/check.h"
#include "../../engine/loss_scale_gpu.h"
#include <string.h>

/* Puts the replica back to the starting point: parameters, momentum, BN running statistics, the 2-byte copy, the
 * loss scale, the schedule's step. */
static inline void restart(replica_t *r, const float *p0, const float *v0, const float *s0) {
    model_t *m = &r->model;
    size_t pb = m->n_params * sizeof(float), sb = m->n_state * sizeof(float);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(m->params, p0, pb, cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaMemcpy(m->momentum, v0, pb, cudaMemcpyDeviceToDevice));
    if (sb) CHECK_CUDA(cudaMemcpy(m->state, s0, sb, cudaMemcpyDeviceToDevice));
    /* A device-to-device cudaMemcpy returns before it is done, and the replica's non-blocking stream does not wait
     * for the legacy stream: without this the cast below could read parameters still being restored (it did, for
     * ResNet-50's 100 MB in bf16, in some runs). */
    CHECK_CUDA(cudaDeviceSynchronize());
    if (m->params_lp)   /* the 2-byte copy the layers read is part of the starting point */
        reduce_cast(m->params_lp, m->act_dtype, m->params, m->n_params, r->gpu.stream);
    if (r->ls) {
        loss_scale_t h = loss_scale_start(r->ls_cfg);
        CHECK_CUDA(cudaMemcpy(r->ls, &h, sizeof h, cudaMemcpyHostToDevice));
        r->ls_skipped = 0;
    }
    CHECK_CUDA(cudaMemset(r->opt.step, 0, sizeof *r->opt.step));   /* the schedule from its first step */
    r->steps = 0;
    CHECK_CUDA(cudaDeviceSynchronize());
}
