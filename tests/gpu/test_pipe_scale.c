/* test_pipe_scale.c — the pipeline's loss scale across stages (strategies/pipeline/pipe_scale.c) on 2 GPUs: an inf or
 * a NaN in one stage's gradients only (stage 0, stage 1, both, none) sets every stage's found_inf after
 * pipe_scale_check, and the schedule's step then halves every stage's scale alike (or, clean, counts the same clean
 * step); the stages' states stay equal through the sequence. Negative control: stage 0's own check of its clean
 * gradients finds nothing, so its flag came from stage 1 through the exchange. Exits 77 with fewer than 2 GPUs. */
#include "gpu_test.h"
#include "../../engine/check.h"
#include "../../engine/loss_scale_gpu.h"
#include "../../strategies/pipeline/pipeline.h"
#include <stdlib.h>
#include <string.h>

#define N 1037   /* gradients per stage */

static loss_scale_t state_of(pipe_t *pp, int s) {
    pipe_stage_t *S = &pp->st[s];
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    return loss_scale_read(S->ls, S->gpu.stream);
}

/* Stage s's gradients: all finite, or with `bad` (inf or NaN) at one element. */
static void set_grads(pipe_t *pp, int s, float bad, int poisoned) {
    pipe_stage_t *S = &pp->st[s];
    float *h = calloc(N, sizeof *h);
    for (int i = 0; i < N; i++) h[i] = (float)(i % 7) - 3.0f;
    if (poisoned) h[N / 3] = bad;
    CHECK_CUDA(cudaSetDevice(S->gpu.device));
    CHECK_CUDA(cudaMemcpy(S->slot[0].grads, h, N * sizeof *h, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());
    free(h);
}

int main(void) {
    gpu_test_require(2);
    pipe_t *pp = calloc(1, sizeof *pp);
    if (!pp) return 1;
    pp->p = 2;
    for (int s = 0; s < 2; s++) {
        pipe_stage_t *S = &pp->st[s];
        gpu_init(&S->gpu, s, MATH_FP16);
        S->n_slots = 1;
        S->slot = calloc(1, sizeof *S->slot);
        if (!S->slot) return 1;
        S->slot[0].n_params = N;
        CHECK_CUDA(cudaMalloc((void **)&S->slot[0].grads, N * sizeof(float)));
        pipe_scale_init(pp, s, MATH_FP16);
        EXPECT(S->ls && S->slot[0].loss_scale == &S->ls->scale, "stage %d: no loss scale bound to its loss", s);
    }
    /* Which stages hold a bad gradient, and the bad value: every stage must decide as if it held it. */
    static const struct { int bad0, bad1; float v; const char *what; } cases[] = {
        {0, 0, 0.0f, "clean"},
        {0, 1, 1.0f / 0.0f, "inf in stage 1 only"},
        {1, 0, 0.0f / 0.0f, "NaN in stage 0 only"},
        {0, 0, 0.0f, "clean again"},
        {1, 1, -1.0f / 0.0f, "-inf in both"},
    };
    float want_scale = 65536.0f;
    int want_skipped = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        set_grads(pp, 0, cases[c].v, cases[c].bad0);
        set_grads(pp, 1, cases[c].v, cases[c].bad1);
        int any = cases[c].bad0 || cases[c].bad1;
        pipe_scale_check(pp);
        loss_scale_t f0 = state_of(pp, 0), f1 = state_of(pp, 1);
        for (int s = 0; s < 2; s++) pipe_scale_advance(pp, s);
        loss_scale_t a0 = state_of(pp, 0), a1 = state_of(pp, 1);
        if (any) { want_scale /= 2; want_skipped++; }
        printf("%-22s found_inf %d %d; then scale %g %g, skipped %d %d, clean %d %d\n", cases[c].what, f0.found_inf,
               f1.found_inf, a0.scale, a1.scale, a0.skipped, a1.skipped, a0.clean, a1.clean);
        EXPECT(f0.found_inf == any && f1.found_inf == any, "%s: found_inf %d on stage 0, %d on stage 1 (want %d)",
               cases[c].what, f0.found_inf, f1.found_inf, any);
        EXPECT(memcmp(&a0, &a1, sizeof a0) == 0 && a0.scale == want_scale && a0.skipped == want_skipped &&
               !a0.found_inf, "%s: stage states (%g %d %d) and (%g %d %d), want scale %g skipped %d", cases[c].what,
               a0.scale, a0.skipped, a0.clean, a1.scale, a1.skipped, a1.clean, want_scale, want_skipped);
        if (cases[c].bad1 && !cases[c].bad0) {   /* control: stage 0 alone finds nothing in its own gradients */
            pipe_stage_t *S = &pp->st[0];
            CHECK_CUDA(cudaSetDevice(S->gpu.device));
            loss_scale_check(S->ls, S->slot[0].grads, DTYPE_FP32, N, S->gpu.stream);
            loss_scale_t own = state_of(pp, 0);
            EXPECT(!own.found_inf, "control: stage 0's own clean gradients set its flag");
            printf("%-22s control: stage 0's own check finds %d\n", "", own.found_inf);
        }
    }
    for (int s = 0; s < 2; s++) {
        pipe_stage_t *S = &pp->st[s];
        pipe_scale_free(pp, s);
        CHECK_CUDA(cudaSetDevice(S->gpu.device));
        CHECK_CUDA(cudaFree(S->slot[0].grads));
        free(S->slot);
        gpu_free(&S->gpu);
    }
    free(pp);
    return test_summary();
}
