/* test_lars.c — LARS and the squared gradient norm (engine/optim.cu) against a CPU double-precision reference on fresh
 * random buffers: three segments (an adapted one spanning several chunks, a bias, an adapted one), two steps with
 * momentum, fp32 and bf16 gradients; the negative control is the same update with every trust ratio 1, which the GPU's
 * must not match. */
#include "gpu_test.h"
#include "dev_io.h"
#include "../../engine/optim.h"
#include "../../engine/model.h"
#include "../../engine/rng.h"
#include <string.h>

#define N 40000
#define MU 0.9
#define WD 1e-4
#define LR 0.5

static const optim_seg_t segs[3] = {{0, 37000, 1}, {37000, 61, 0}, {37064, 2936, 1}};   /* 3 elements of padding */

/* One reference step over the segments (trust 1 everywhere where !lars); g as the GPU reads it. */
static void ref_step(double *p, double *v, const float *g, int lars) {
    for (int s = 0; s < 3; s++) {
        double wn = 0, gn = 0, trust = 1;
        for (size_t i = segs[s].at; i < segs[s].at + segs[s].len; i++) wn += p[i] * p[i], gn += (double)g[i] * g[i];
        wn = sqrt(wn), gn = sqrt(gn);
        if (lars && segs[s].adapt && wn > 0 && gn > 0) trust = OPTIM_LARS_ETA * wn / (gn + WD * wn);
        for (size_t i = segs[s].at; i < segs[s].at + segs[s].len; i++) {
            v[i] = MU * v[i] + LR * trust * (g[i] + WD * p[i]);
            p[i] -= v[i];
        }
    }
}

static void lars_case(rng_t *rng, dtype_t gt) {
    float *hp = falloc(N), *hg = falloc(N), *out = falloc(N);
    double *rp = calloc(N, sizeof *rp), *rv = calloc(N, sizeof *rv), *cp = calloc(N, sizeof *cp),
           *cv = calloc(N, sizeof *cv);
    for (int i = 0; i < N; i++) hp[i] = (float)(0.05 * rng_normal(rng)), rp[i] = cp[i] = hp[i];
    model_t *m = calloc(1, sizeof *m);
    m->n_params = N;
    m->act_dtype = DTYPE_FP32;
    void *dg;
    CHECK_CUDA(cudaMalloc((void **)&m->params, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&m->momentum, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dg, N * sizeof(float)));
    upload(m->params, hp, N, DTYPE_FP32);
    CHECK_CUDA(cudaMemset(m->momentum, 0, N * sizeof(float)));
    optim_t o;
    char err[256];
    lr_schedule_t sched = {.kind = LR_CONSTANT, .peak = LR, .epochs = 1};
    EXPECT(optim_init(&o, OPTIM_LARS, (float)MU, (float)WD, &sched, 4, NULL, err, sizeof err) == 0 &&
           optim_set_segments(&o, segs, 3, err, sizeof err) == 0, "optim: %s", err);
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int step = 0; step < 2; step++) {
        for (int i = 0; i < N; i++) hg[i] = (float)(1e-3 * rng_normal(rng));
        round_to(hg, N, gt);    /* what the GPU reads */
        for (int k = 0; k < 3; k++)   /* padding elements hold no gradient */
            for (size_t i = segs[k].at + segs[k].len; k < 2 && i < segs[k + 1].at; i++) hg[i] = 0;
        upload(dg, hg, N, gt);
        optim_begin_step(&o, s);
        optim_update(&o, m, 0, N, dg, gt, NULL, NULL, s);
        ref_step(rp, rv, hg, 1);
        ref_step(cp, cv, hg, 0);
    }
    CHECK_CUDA(cudaStreamSynchronize(s));
    download(out, m->params, N, DTYPE_FP32);
    double e = rel_err_scaled(out, rp, NULL, N), ctl = rel_err_scaled(out, cp, NULL, N);
    /* fp32 arithmetic of a few operations per element: well under 1e-5 of the parameters' norm */
    EXPECT(e < 1e-6, "LARS (%s gradients): relative error %.3g against the double reference", dtype_name(gt), e);
    EXPECT(ctl > 100 * e && ctl > 1e-3, "negative control (%s): trust ratios of 1 are %.3g away, the reference %.3g",
           dtype_name(gt), ctl, e);
    printf("LARS, %s gradients, 2 steps: relative error %.3g (control without trust ratios: %.3g)\n", dtype_name(gt),
           e, ctl);
    optim_free(&o);
    CHECK_CUDA(cudaStreamDestroy(s));
    CHECK_CUDA(cudaFree(m->params));
    CHECK_CUDA(cudaFree(m->momentum));
    CHECK_CUDA(cudaFree(dg));
    free(m), free(hp), free(hg), free(out), free(rp), free(rv), free(cp), free(cv);
}

/* sum (g + g2)^2 over a split buffer (fp32 beside bf16), as the noise scale reads a bf16 step's gradients. */
static void sumsq_case(rng_t *rng) {
    float *g = falloc(N), *g2 = falloc(N);
    for (int i = 0; i < N; i++) {
        float x = (float)rng_normal(rng);
        if (i % 3) g[i] = x; else g2[i] = round_as(x, DTYPE_BF16);
    }
    double want = 0, half = 0, *acc;
    for (int i = 0; i < N; i++) want += ((double)g[i] + g2[i]) * ((double)g[i] + g2[i]), half += (double)g[i] * g[i];
    void *dg, *dg2;
    CHECK_CUDA(cudaMalloc(&dg, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dg2, N * 2));
    CHECK_CUDA(cudaMalloc((void **)&acc, sizeof(double)));
    upload(dg, g, N, DTYPE_FP32);
    upload(dg2, g2, N, DTYPE_BF16);
    CHECK_CUDA(cudaMemset(acc, 0, sizeof(double)));
    optim_sumsq(dg, DTYPE_FP32, dg2, DTYPE_BF16, N, NULL, acc, 0);
    double got;
    CHECK_CUDA(cudaMemcpy(&got, acc, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(fabs(got - want) < 1e-9 * want, "sum of squares %.17g, want %.17g", got, want);
    EXPECT(fabs(half - want) > 0.1 * want, "negative control: without the bf16 half %.6g (want %.6g)", half, want);
    printf("sum of squares over fp32 + bf16 halves: %.10g (reference %.10g)\n", got, want);
    CHECK_CUDA(cudaFree(dg));
    CHECK_CUDA(cudaFree(dg2));
    CHECK_CUDA(cudaFree(acc));
    free(g), free(g2);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    gpu_test_require(1);
    rng_t rng;
    rng_seed(&rng, gpu_test_seed(argc, argv, "test_lars"));
    lars_case(&rng, DTYPE_FP32);
    lars_case(&rng, DTYPE_BF16);
    sumsq_case(&rng);
    return test_summary();
}
