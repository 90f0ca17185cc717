/* test_loss_scale_gpu.cu — fp16's loss scale on the device (engine/loss_scale.cu, sgd_step): a clean step with
 * gradients scaled by S updates as the unscaled step would (CPU double reference, fp32 rounding); an injected inf or
 * NaN skips the step (parameters, momentum and the fp16 copy bit for bit unchanged), halves the scale and counts a
 * skip; clean steps grow it after the interval; a CUDA-graph replay of check + update + advance equals the eager
 * sequence; negative control: the same update without the scale's check moves the parameters. The split update (fp32
 * gradients beside fp16 ones, as single reads the convolutions') equals the update of the same gradients all in
 * fp32 (the widening path) bit for bit, and an inf in the fp16 buffer alone skips it when both buffers are checked
 * (not when only the fp32 one is: the control).
 * Run: ./test_loss_scale_gpu [seed]. Exits 77 without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "gpu_test.h"
#include "dev_io.h"
#include "engine/check.h"
#include "engine/rng.h"
#include "engine/sgd.h"
#include "engine/loss_scale_gpu.h"

#define N 4099   /* odd: no launch fits it exactly */

typedef struct {
    float *p, *v;       /* fp32 parameters, momentum */
    void *g, *lp;       /* gradients in fp16 (what an fp16 wire leaves); the fp16 copy of the parameters */
    loss_scale_t *ls;
    float *lr;          /* the step's rate on the device, as the schedule leaves it (engine/optim.h) */
} bufs_t;

static void step(bufs_t *b, loss_scale_cfg_t c, cudaStream_t s) {
    loss_scale_check(b->ls, b->g, DTYPE_FP16, N, s);
    sgd_step(b->p, b->lp, DTYPE_FP16, b->g, DTYPE_FP16, NULL, b->v, N, b->lr, 0.9f, 1e-4f, b->ls, s);
    loss_scale_advance(b->ls, c, s);
}

/* Host copies of p, v and the fp16 copy's bits. */
static void snapshot(const bufs_t *b, float *p, float *v, unsigned short *lp) {
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(p, b->p, N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(v, b->v, N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(lp, b->lp, N * 2, cudaMemcpyDeviceToHost));
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    gpu_test_require(1);
    unsigned long long seed = gpu_test_seed(argc, argv, "test_loss_scale_gpu");
    rng_t rng;
    rng_seed(&rng, seed);
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    bufs_t b;
    CHECK_CUDA(cudaMalloc((void **)&b.p, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&b.v, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&b.g, N * 2));
    CHECK_CUDA(cudaMalloc(&b.lp, N * 2));
    const float lr = 0.1f;
    CHECK_CUDA(cudaMalloc((void **)&b.lr, sizeof lr));
    CHECK_CUDA(cudaMemcpy(b.lr, &lr, sizeof lr, cudaMemcpyHostToDevice));
    const loss_scale_cfg_t c = {65536.0f, 2.0f, 0.5f, 3};   /* GradScaler's, growing after 3 clean steps */
    b.ls = loss_scale_alloc(c, s);
    float *hp = falloc(N), *hv = falloc(N), *hg = falloc(N), *p0 = falloc(N), *v0 = falloc(N);
    unsigned short *lp0 = (unsigned short *)malloc(N * 2), *lp1 = (unsigned short *)malloc(N * 2);
    for (int i = 0; i < N; i++) {
        hp[i] = (float)(rng_uniform(&rng) - 0.5);
        hv[i] = (float)(0.1 * (rng_uniform(&rng) - 0.5));
        hg[i] = round_as((float)(65536.0 * 1e-3 * (rng_uniform(&rng) - 0.5)), DTYPE_FP16);   /* scaled gradients */
    }
    upload(b.p, hp, N, DTYPE_FP32);
    upload(b.v, hv, N, DTYPE_FP32);
    upload(b.g, hg, N, DTYPE_FP16);
    upload(b.lp, hp, N, DTYPE_FP16);

    /* 1. a clean step: the unscaled update, as torch.optim.SGD computes it from grad / scale */
    step(&b, c, s);
    snapshot(&b, p0, v0, lp0);
    double err = 0.0, den = 0.0;
    for (int i = 0; i < N; i++) {
        double g = hg[i] / 65536.0 + 1e-4 * hp[i], v = 0.9 * hv[i] + g, p = hp[i] - 0.1 * v;
        err += (p0[i] - p) * (p0[i] - p);
        den += (p - hp[i]) * (p - hp[i]);
    }
    err = sqrt(err / den);   /* relative to the update's size */
    loss_scale_t h = loss_scale_read(b.ls, s);
    printf("clean step: update rel_err %.2e, scale %g, clean %d, skipped %d\n", err, h.scale, h.clean, h.skipped);
    EXPECT(err < 1e-4, "clean step: the update differs from the unscaled one by %.2e", err);   /* fp32 rounding of p */
    EXPECT(h.scale == 65536.0f && h.clean == 1 && h.skipped == 0 && !h.found_inf, "clean step: state %g %d %d %d",
           h.scale, h.clean, h.skipped, h.found_inf);
    int same_lp = 1;
    for (int i = 0; i < N; i++) same_lp &= lp0[i] == half_bits(p0[i], DTYPE_FP16);
    EXPECT(same_lp, "the fp16 copy is not the rounding of the updated parameters");

    /* 2. an inf, then a NaN, injected: nothing written, scale halved each time, two skips */
    for (int k = 0; k < 2; k++) {
        unsigned short bits = k ? 0x7e00 : 0x7c00;   /* fp16 NaN, +inf: one element of the middle */
        CHECK_CUDA(cudaMemcpy((char *)b.g + 2 * (N / 2), &bits, 2, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaDeviceSynchronize());
        step(&b, c, s);
        snapshot(&b, hp, hv, lp1);
        h = loss_scale_read(b.ls, s);
        int same = !memcmp(hp, p0, N * 4) && !memcmp(hv, v0, N * 4) && !memcmp(lp1, lp0, N * 2);
        printf("%s injected: parameters %s, scale %g, skipped %d\n", k ? "NaN" : "inf", same ? "unchanged" : "CHANGED",
               h.scale, h.skipped);
        EXPECT(same, "a step with a non-finite gradient wrote parameters, momentum or the fp16 copy");
        EXPECT(h.scale == (k ? 16384.0f : 32768.0f) && h.skipped == k + 1 && h.clean == 0 && !h.found_inf,
               "after the %s: scale %g skipped %d clean %d", k ? "NaN" : "inf", h.scale, h.skipped, h.clean);
    }
    /* negative control: the same step without the scale's check moves the parameters (NaN spreads into them) */
    sgd_step(b.p, b.lp, DTYPE_FP16, b.g, DTYPE_FP16, NULL, b.v, N, b.lr, 0.9f, 1e-4f, NULL, s);
    snapshot(&b, hp, hv, lp1);
    EXPECT(memcmp(hp, p0, N * 4) != 0, "control: an update without the check left the parameters as they were");
    upload(b.p, p0, N, DTYPE_FP32);
    upload(b.v, v0, N, DTYPE_FP32);

    /* 3. clean again: three clean steps double the scale (GradScaler's growth), eagerly ... */
    upload(b.g, hg, N, DTYPE_FP16);
    for (int k = 0; k < 3; k++) step(&b, c, s);
    h = loss_scale_read(b.ls, s);
    printf("3 clean steps: scale %g, clean %d\n", h.scale, h.clean);
    EXPECT(h.scale == 32768.0f && h.clean == 0, "growth after 3 clean steps: scale %g clean %d", h.scale, h.clean);
    float *pe = falloc(N), *ve = falloc(N);
    snapshot(&b, pe, ve, lp1);

    /* 4. ... and the same three steps from the same start replayed from a CUDA graph: bit for bit the same */
    upload(b.p, p0, N, DTYPE_FP32);
    upload(b.v, v0, N, DTYPE_FP32);
    loss_scale_t back = {16384.0f, 0, 2, 0};
    CHECK_CUDA(cudaMemcpy(b.ls, &back, sizeof back, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    step(&b, c, s);
    CHECK_CUDA(cudaStreamEndCapture(s, &graph));
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int k = 0; k < 3; k++) CHECK_CUDA(cudaGraphLaunch(exec, s));
    snapshot(&b, hp, hv, lp0);
    loss_scale_t hg3 = loss_scale_read(b.ls, s);
    int same = !memcmp(hp, pe, N * 4) && !memcmp(hv, ve, N * 4) && !memcmp(lp0, lp1, N * 2) &&
               hg3.scale == h.scale && hg3.clean == h.clean && hg3.skipped == h.skipped;
    printf("graph replay = eager: %s\n", same ? "yes" : "NO");
    EXPECT(same, "three steps replayed from a CUDA graph differ from eager ones");
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));

    /* 5. the split form (single's update under fp16: the convolutions' gradients in a 2-byte buffer beside the fp32
     * ones, each gradient in one of them): the same bits as the whole gradient in one buffer; an inf in the 2-byte
     * buffer alone skips the step where both are checked (replica_seg_update), and reaches the parameters where only
     * the fp32 buffer is (the control) */
    float *g32 = falloc(N), *g16 = falloc(N), *ps = falloc(N), *vs = falloc(N);
    for (int i = 0; i < N; i++) {
        g32[i] = i < N / 3 ? hg[i] : 0.0f;
        g16[i] = i < N / 3 ? 0.0f : hg[i];
    }
    float *d32, *dall;   /* dall: every gradient in fp32, as backward's widening leaves them */
    void *d16;
    CHECK_CUDA(cudaMalloc((void **)&d32, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&dall, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&d16, N * 2));
    upload(d32, g32, N, DTYPE_FP32);
    upload(dall, hg, N, DTYPE_FP32);
    upload(d16, g16, N, DTYPE_FP16);
    loss_scale_t *ls2 = loss_scale_alloc(c, s);
    for (int k = 0; k < 2; k++) {   /* 0: one fp32 buffer (the widening path); 1: split */
        upload(b.p, p0, N, DTYPE_FP32);
        upload(b.v, v0, N, DTYPE_FP32);
        loss_scale_t *ls = k ? ls2 : b.ls;
        CHECK_CUDA(cudaMemcpy(ls, &back, sizeof back, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaDeviceSynchronize());
        if (k) {
            loss_scale_check(ls, d32, DTYPE_FP32, N, s);
            loss_scale_check(ls, d16, DTYPE_FP16, N, s);
            sgd_step(b.p, b.lp, DTYPE_FP16, d32, DTYPE_FP32, d16, b.v, N, b.lr, 0.9f, 1e-4f, ls, s);
        } else {
            loss_scale_check(ls, dall, DTYPE_FP32, N, s);
            sgd_step(b.p, b.lp, DTYPE_FP16, dall, DTYPE_FP32, NULL, b.v, N, b.lr, 0.9f, 1e-4f, ls, s);
        }
        snapshot(&b, k ? hp : ps, k ? hv : vs, k ? lp1 : lp0);
    }
    same = !memcmp(hp, ps, N * 4) && !memcmp(hv, vs, N * 4) && !memcmp(lp0, lp1, N * 2) && memcmp(ps, p0, N * 4);
    printf("split gradients (fp32 + fp16) = one fp32 buffer: %s\n", same ? "bit-identical" : "DIFFER");
    EXPECT(same, "the split update differs from the one-buffer update (or moved nothing)");
    unsigned short inf = 0x7c00;
    CHECK_CUDA(cudaMemcpy((char *)d16 + 2 * (N - 1), &inf, 2, cudaMemcpyHostToDevice));
    for (int k = 0; k < 2; k++) {   /* 0: both buffers checked; 1: the fp32 one only (the control) */
        upload(b.p, p0, N, DTYPE_FP32);
        upload(b.v, v0, N, DTYPE_FP32);
        CHECK_CUDA(cudaMemcpy(ls2, &back, sizeof back, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaDeviceSynchronize());
        loss_scale_check(ls2, d32, DTYPE_FP32, N, s);
        if (!k) loss_scale_check(ls2, d16, DTYPE_FP16, N, s);
        sgd_step(b.p, b.lp, DTYPE_FP16, d32, DTYPE_FP32, d16, b.v, N, b.lr, 0.9f, 1e-4f, ls2, s);
        snapshot(&b, hp, hv, lp1);
        int kept = !memcmp(hp, p0, N * 4);
        printf("an inf in the fp16 buffer, %s checked: parameters %s\n", k ? "the fp32 buffer only" : "both",
               kept ? "unchanged" : "changed");
        EXPECT(kept == !k, "an inf in the 2-byte buffer with %s checked: parameters %s", k ? "fp32 only" : "both",
               kept ? "unchanged" : "changed");
    }
    loss_scale_free(ls2);
    CHECK_CUDA(cudaFree(d32));
    CHECK_CUDA(cudaFree(dall));
    CHECK_CUDA(cudaFree(d16));
    free(g32); free(g16); free(ps); free(vs);

    loss_scale_free(b.ls);
    CHECK_CUDA(cudaFree(b.p));
    CHECK_CUDA(cudaFree(b.v));
    CHECK_CUDA(cudaFree(b.g));
    CHECK_CUDA(cudaFree(b.lp));
    free(hp); free(hv); free(hg); free(p0); free(v0); free(lp0); free(lp1); free(pe); free(ve);
    CHECK_CUDA(cudaStreamDestroy(s));
    return test_summary();
}
