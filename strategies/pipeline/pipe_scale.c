/* pipe_scale.c — fp16's dynamic loss scale in the pipeline: each stage holds a copy of the scale and checks the
 * gradients it owns; a step is skipped where any stage found an inf or a NaN, so the stages exchange their flags
 * (4 bytes each, on the device, no host synchronisation) before any of them updates. */
#include "pipeline.h"
#include "../../engine/check.h"
#include "../../engine/loss_scale_gpu.h"

void pipe_scale_init(pipe_t *pp, int s, math_t math) {
    pipe_stage_t *S = &pp->st[s];
    if (!math_loss_scaled(math)) return;
    pp->ls_cfg = loss_scale_torch();
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    S->ls = loss_scale_alloc(pp->ls_cfg, S->gpu.stream);
    CHECK_ALLOC(cudaMalloc((void **)&S->ls_flags, (size_t)pp->p * sizeof(int)));
    CHECK_CUDA(cudaMemsetAsync(S->ls_flags, 0, (size_t)pp->p * sizeof(int), S->gpu.stream));
    CHECK_CUDA(cudaEventCreateWithFlags(&S->checked, cudaEventDisableTiming));
    for (int k = 0; k < S->n_slots; k++) S->slot[k].loss_scale = &S->ls->scale;
}

void pipe_scale_free(pipe_t *pp, int s) {
    pipe_stage_t *S = &pp->st[s];
    if (!S->ls) return;
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    loss_scale_free(S->ls);
    CHECK_CUDA(cudaFree(S->ls_flags));
    CHECK_CUDA(cudaEventDestroy(S->checked));
    S->ls = NULL;
    S->ls_flags = NULL;
}

void pipe_scale_check(pipe_t *pp) {
    if (!pp->st[0].ls) return;
    for (int s = 0; s < pp->p; s++) {
        pipe_stage_t *S = &pp->st[s];
        const model_t *m = &S->slot[0];
        CHECK_CUDA(cudaSetDevice(S->gpu.device));
        loss_scale_check(S->ls, m->grads, DTYPE_FP32, m->n_params, S->gpu.stream);
        CHECK_CUDA(cudaEventRecord(S->checked, S->gpu.stream));
    }
    /* Stage q's flag is read here before q's own update and cleared only by q's schedule step, which waits for every
     * stage's update (pipe_step): the copies always see this step's flag. */
    for (int s = 0; s < pp->p; s++) {
        pipe_stage_t *S = &pp->st[s];
        CHECK_CUDA(cudaSetDevice(S->gpu.device));
        for (int q = 0; q < pp->p; q++) {
            if (q == s) continue;
            const pipe_stage_t *Q = &pp->st[q];
            CHECK_CUDA(cudaStreamWaitEvent(S->gpu.stream, Q->checked, 0));
            CHECK_CUDA(cudaMemcpyPeerAsync(&S->ls_flags[q], S->gpu.device, &Q->ls->found_inf, Q->gpu.device,
                                           sizeof(int), S->gpu.stream));
        }
        loss_scale_combine(S->ls, S->ls_flags, pp->p, S->gpu.stream);
    }
}

void pipe_scale_advance(pipe_t *pp, int s) {
    pipe_stage_t *S = &pp->st[s];
    if (!S->ls) return;
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    loss_scale_advance(S->ls, pp->ls_cfg, S->gpu.stream);
}

void pipe_scale_epoch(pipe_t *pp, epoch_stats_t *out) {
    pipe_stage_t *S = &pp->st[0];
    if (!S->ls) return;
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    loss_scale_t h = loss_scale_read(S->ls, S->gpu.stream);
    out->loss_scale = h.scale;
    out->skipped_steps = h.skipped - pp->ls_skipped;
    pp->ls_skipped = h.skipped;
}
